"""Content-addressed artifact store.

An artifact is the output of one stage: one or more named Parquet tables plus `manifest.json`.
Its id hashes the stage name, the stage code version, the canonical parameters the stage reads
and the ids of its input artifacts, so an identical rerun finds it and recomputes nothing, and a
changed parameter lands beside the old artifact instead of over it.

Layout: <root>/<stage>/<artifact_id>/{<table>.parquet, manifest.json}. A write goes to a
temporary folder that is renamed into place in one step, so an interrupted write never leaves a
half artifact behind (a leftover temporary folder is ignored and swept on the next write).

Testing hook (inert unless set): with QSPACE_CRASH_AT="<stage>/<point>[:<n>]" in the
environment, the process SIGKILLs itself the n-th time (default 1) `put` reaches that point of
that stage's write. Points, in order: tmp_created, table_written (once per table), manifest_written,
synced (bytes fsynced, not yet published), renamed (published, before the run log records it).
tests/test_crash_safety.py kills runs there and checks no half artifact is ever visible.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .ids import canonical_json, content_id

MANIFEST = "manifest.json"
CRASH_ENV = "QSPACE_CRASH_AT"
_crash_counts: dict[str, int] = {}


def _crash_point(stage: str, point: str) -> None:
    """SIGKILL this process here if QSPACE_CRASH_AT names this point (see the module docstring)."""
    spec = os.environ.get(CRASH_ENV)
    if not spec:
        return
    key = f"{stage}/{point}"
    _crash_counts[key] = _crash_counts.get(key, 0) + 1
    want, _, n = spec.partition(":")
    if want == key and _crash_counts[key] == int(n or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def artifact_id(stage: str, version: str, params_hash: str, inputs: list[str]) -> str:
    return content_id("art", {"stage": stage, "version": version, "params": params_hash, "inputs": list(inputs)})


HASH_ROWS = 65536  # rows serialised per step ...
HASH_BYTES = 32_000_000  # ... and about this many bytes: bounded memory whatever the frame's size


def frame_hash(df: pl.DataFrame) -> str:
    """Content hash of a frame that does not depend on Parquet encoding details: SHA-256 over the
    schema and the rows as JSON lines, serialised by Polars in slices (a Python loop per row cost
    more than the stage that made the frame)."""
    h = hashlib.sha256(canonical_json({"schema": {k: str(v) for k, v in df.schema.items()}}).encode("utf-8"))
    step = max(1, min(HASH_ROWS, int(df.height * HASH_BYTES / max(1, df.estimated_size()))))
    for off in range(0, df.height, step):
        h.update(df.slice(off, step).write_ndjson().encode("utf-8"))
    return h.hexdigest()


@dataclass(frozen=True)
class Artifact:
    stage: str
    artifact_id: str
    path: Path

    @property
    def manifest(self) -> dict:
        return json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))

    def scan(self, table: str | None = None) -> pl.LazyFrame:
        return pl.scan_parquet(self.path / f"{table or self.stage}.parquet")

    def read(self, table: str | None = None) -> pl.DataFrame:
        return pl.read_parquet(self.path / f"{table or self.stage}.parquet")

    @property
    def tables(self) -> list[str]:
        return list(self.manifest["tables"])


class Store:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _dir(self, stage: str, aid: str) -> Path:
        return self.root / stage / aid

    def get(self, stage: str, aid: str) -> Artifact | None:
        d = self._dir(stage, aid)
        return Artifact(stage, aid, d) if (d / MANIFEST).is_file() else None

    def put(self, stage: str, aid: str, tables: dict[str, pl.DataFrame], manifest: dict) -> Artifact:
        final = self._dir(stage, aid)
        if (final / MANIFEST).is_file():
            return Artifact(stage, aid, final)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".tmp-{aid}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        _crash_point(stage, "tmp_created")
        info = {}
        for name, df in sorted(tables.items()):
            df.write_parquet(tmp / f"{name}.parquet", compression="zstd", statistics=False)
            info[name] = {"rows": df.height, "content_hash": frame_hash(df),
                          "columns": {k: str(v) for k, v in df.schema.items()}}
            _crash_point(stage, "table_written")
        full = {"artifact_id": aid, "stage": stage, **manifest, "tables": info}
        (tmp / MANIFEST).write_text(json.dumps(full, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
        _crash_point(stage, "manifest_written")
        for f in tmp.iterdir():  # make the bytes durable before the rename publishes them
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        _fsync_dir(tmp)
        _crash_point(stage, "synced")
        try:
            os.rename(tmp, final)
        except OSError:  # another process published the same artifact first (same content) ...
            if not (final / MANIFEST).is_file():  # ... or a stray folder without a manifest sits there
                shutil.rmtree(final, ignore_errors=True)
                with contextlib.suppress(OSError):
                    os.rename(tmp, final)
            shutil.rmtree(tmp, ignore_errors=True)
        _fsync_dir(final.parent)  # the rename itself survives a power cut
        _crash_point(stage, "renamed")
        self._sweep(final.parent)
        return Artifact(stage, aid, final)

    def _sweep(self, stage_dir: Path) -> None:
        """Remove temporary folders of writers that died (their pid is gone)."""
        for d in stage_dir.glob(".tmp-*"):
            pid = d.name.rsplit("-", 1)[-1]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(d, ignore_errors=True)

    def artifacts(self, stage: str | None = None) -> list[Artifact]:
        stages = [stage] if stage else sorted(p.name for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []
        out = []
        for s in stages:
            for d in sorted((self.root / s).glob("art_*")):
                if (d / MANIFEST).is_file():
                    out.append(Artifact(s, d.name, d))
        return out


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

"""Garbage collection of a store: the artifacts and per-document parts no kept run refers to.

A kept run is a folder of reports/ with a run record (artifacts.json: the artifact of every stage it
read). What a kept run needs is its artifacts, the artifacts they were computed from (each
manifest names its inputs), and the parts the per-document stages among them were assembled from
(each such manifest lists them). Everything else in the store can go: artifacts of runs since
removed or recomputed, parts of documents no longer in any kept corpus, and the temporary files of
writers that died. Anything written in the last `keep_recent` seconds stays, whatever refers to it:
a run still going has not recorded what it uses yet.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from .parts import PARTS, part_path
from .store import MANIFEST, pid_alive

KEEP_RECENT = 3600.0  # seconds: what was written this recently is never removed (a run may be writing it)


@dataclass
class Garbage:
    """What a collection removes (or would remove): folders and files, with their bytes."""

    artifacts: list[Path] = field(default_factory=list)
    parts: list[Path] = field(default_factory=list)
    leftovers: list[Path] = field(default_factory=list)  # temporary files and folders of dead writers
    bytes: int = 0

    def paths(self) -> list[Path]:
        return [*self.artifacts, *self.parts, *self.leftovers]


def _size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size


def kept_artifacts(store: Path, records: list[dict]) -> set[tuple[str, str]]:
    """(stage, artifact id) of every artifact the run records name, and of everything they were
    computed from (the manifests' inputs), that the store holds."""
    todo = [(stage, aid) for rec in records for stage, aid in rec.get("artifacts", {}).items()]
    kept: set[tuple[str, str]] = set()
    while todo:
        stage, aid = todo.pop()
        manifest = store / stage / aid / MANIFEST
        if (stage, aid) in kept or not manifest.is_file():
            continue
        kept.add((stage, aid))
        inputs = json.loads(manifest.read_text(encoding="utf-8")).get("inputs", {})
        todo += [(ref.split("/")[0], iid) for ref, iid in inputs.items() if "/" in ref]
    return kept


def garbage(store: Path, records: list[dict], now: float | None = None, keep_recent: float = KEEP_RECENT) -> Garbage:
    """What `collect` removes from the store at `store` given the kept runs' records."""
    now = time.time() if now is None else now

    def old(p: Path) -> bool:
        return now - p.stat().st_mtime > keep_recent

    kept = kept_artifacts(store, records)
    parts: set[Path] = set()
    for stage, aid in kept:
        manifest = json.loads((store / stage / aid / MANIFEST).read_text(encoding="utf-8"))
        keys = manifest.get("parts") or {}  # doc_id -> key (a bare list of keys from an early store is read too)
        parts |= {part_path(store / PARTS / stage, key) for key in (keys.values() if isinstance(keys, dict) else keys)}
    g = Garbage()
    for d in sorted(store.glob("*/art_*")) if store.is_dir() else []:
        if d.parent.name != PARTS and (d.parent.name, d.name) not in kept and old(d):
            g.artifacts.append(d)
    for f in sorted((store / PARTS).rglob("*.parquet")) if (store / PARTS).is_dir() else []:
        if f not in parts and old(f):
            g.parts.append(f)
    # temporary artifact folders (.tmp-<id>-<pid>) and parts (.<key>-<pid>.tmp) of processes that are gone
    for t in sorted([*store.glob("*/.tmp-*"), *store.glob(f"{PARTS}/*/*/.*.tmp")]) if store.is_dir() else []:
        pid = t.name.removesuffix(".tmp").rsplit("-", 1)[-1]
        if pid.isdigit() and not pid_alive(int(pid)):
            g.leftovers.append(t)
    g.bytes = sum(_size(p) for p in g.paths())
    return g


def collect(g: Garbage) -> int:
    """Remove what `garbage` found; the bytes freed."""
    for p in g.paths():
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    return g.bytes

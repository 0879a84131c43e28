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
import io
import json
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Union

import polars as pl

from ..ids import canonical_json, content_id

MANIFEST = "manifest.json"
Tables = Union[dict[str, pl.DataFrame], Iterable[tuple[str, pl.DataFrame]]]
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
GROUP_ROWS = 65536  # a Parquet row group holds at most this many rows ...
GROUP_BYTES = 16_000_000  # ... and about this many bytes of values, so a reader streams the file in small steps


class FrameHasher:
    """Content hash of a table that does not depend on Parquet encoding details, nor on how the
    table was cut into batches or row groups: SHA-256 over the schema and one byte stream per
    column, each fed with the Arrow arrays the Parquet writer is given anyway. A flat column's
    stream holds a validity byte per value, then its values: numbers and dates as little-endian
    bytes (nulls as zero, every NaN the same NaN), text and bytes as their byte lengths (8 bytes
    each) followed by the bytes themselves. Nested columns (lists, structs) are JSON lines
    written by Polars. A stream is the concatenation of its parts, so only the rows count.
    (Serialising every row as CSV first cost three times as much: a tenth of a whole run.)"""

    def __init__(self, schema: dict):
        self._schema = canonical_json({"schema": {k: str(v) for k, v in schema.items()}})
        self._nested = [k for k, v in schema.items() if v.is_nested()]
        self._streams = {(k, part): hashlib.sha256() for k, v in schema.items() for part in _parts(v)}

    def update(self, df: pl.DataFrame, table=None) -> None:
        """Add rows: a Polars frame, with `table` its Arrow form when the caller already has it."""
        step = max(1, min(HASH_ROWS, int(df.height * HASH_BYTES / max(1, df.estimated_size()))))
        if table is None or df.height > step:  # converted a slice at a time: bounded memory
            for off in range(0, df.height, step):
                part = df.slice(off, step)
                self._add(part, part.select([c for c in part.columns if c not in self._nested]).to_arrow())
            return
        self._add(df, table)

    def _add(self, df: pl.DataFrame, table) -> None:
        if self._nested and df.height:  # written to bytes, never to a Python str
            for k in self._nested:
                self._streams[k, "json"].update(_bytes(df.select(k).write_ndjson))
        for k in df.columns:
            if k in self._nested:
                continue
            for chunk in table.column(k).chunks:
                for part, data in _value_bytes(chunk):
                    self._streams[k, part].update(data)

    def hexdigest(self) -> str:
        digests = b"".join(h.digest() for _, h in sorted(self._streams.items()))
        return hashlib.sha256(self._schema.encode("utf-8") + digests).hexdigest()


def _parts(dtype: pl.DataType) -> tuple[str, ...]:
    """The streams a column of `dtype` feeds (see `_value_bytes`)."""
    if dtype.is_nested():
        return ("json",)
    if dtype == pl.Null:
        return ("valid",)
    if dtype.is_integer() or dtype.is_float() or dtype.is_temporal() or dtype == pl.Boolean:
        return ("valid", "value")
    return ("valid", "length", "value")  # text, bytes, and whatever is hashed as its text


def _bits(buf, offset: int, n: int):
    """n bits of an Arrow bitmap from bit `offset`, one byte (0 or 1) each."""
    import numpy as np

    return np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little", count=offset + n)[offset:]


def _value_bytes(arr) -> Iterator[tuple[str, memoryview | bytes]]:
    """The parts of a flat Arrow array's stream (see FrameHasher), read from its buffers: no
    pyarrow.compute (importing it imports pandas)."""
    import numpy as np
    import pyarrow as pa

    n, t = len(arr), arr.type
    if pa.types.is_null(t):
        yield "valid", bytes(n)
        return
    if not (
        pa.types.is_large_string(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_boolean(t)
        or pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_temporal(t)
    ):
        # anything else (decimals, categoricals, ...) as the text Polars writes for it
        yield from _value_bytes(pl.from_arrow(arr).cast(pl.String).to_arrow().cast(pa.large_string()))
        return
    bufs = arr.buffers()
    valid = _bits(bufs[0], arr.offset, n) if arr.null_count else None
    yield "valid", valid if valid is not None else b"\x01" * n
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        offsets = np.frombuffer(bufs[1], dtype="<i8", count=n + 1, offset=arr.offset * 8)
        lengths = np.diff(offsets)
        data = memoryview(bufs[2])[offsets[0] : offsets[-1]] if bufs[2] is not None else b""
        if valid is not None and lengths[valid == 0].any():  # a null's slot holds bytes (Polars leaves some): drop them
            data = np.frombuffer(data, dtype=np.uint8)[np.repeat(valid.astype(bool), lengths)]
            lengths = np.where(valid == 1, lengths, 0)
        yield "length", lengths.astype("<i8", copy=False)
        yield "value", data
        return
    if pa.types.is_boolean(t):
        values = _bits(bufs[1], arr.offset, n)
    else:  # numbers, and dates and times as the integers they are stored as
        width = t.bit_width // 8
        kind = "f" if pa.types.is_floating(t) else "u" if pa.types.is_unsigned_integer(t) else "i"
        values = np.frombuffer(bufs[1], dtype=f"<{kind}{width}", count=n, offset=arr.offset * width)
    if valid is not None or (values.dtype.kind == "f" and np.isnan(values).any()):
        values = values.copy()
        if valid is not None:
            values[valid == 0] = 0
        if values.dtype.kind == "f":
            values[np.isnan(values)] = np.nan  # one NaN, whatever its payload
    yield "value", np.ascontiguousarray(values).view(np.uint8)


def _bytes(write, **options) -> memoryview:
    buf = io.BytesIO()
    write(buf, **options)
    return buf.getbuffer()


def frame_hash(df: pl.DataFrame) -> str:
    h = FrameHasher(df.schema)
    h.update(df)
    return h.hexdigest()


def _row_bytes(df: pl.DataFrame) -> pl.Series:
    """About how many bytes each row holds (strings by length, anything else 8 per value): a
    function of the row alone, so row-group cuts never depend on how the rows were batched."""
    text = [pl.col(c).str.len_bytes().fill_null(0).cast(pl.Int64) for c, t in df.schema.items() if t == pl.String]
    other = 8 * sum(t != pl.String for t in df.schema.values())
    return df.select(pl.sum_horizontal(pl.repeat(other, pl.len(), dtype=pl.Int64), *text)).to_series()


class TableWriter:
    """One Parquet table written batch by batch: rows are buffered and cut into row groups of at
    most GROUP_ROWS rows and about GROUP_BYTES bytes, decided by the rows alone. The same rows give
    the same file however the producer batched them (one frame, shards, Ray batches), and memory
    holds about one row group, not the table."""

    def __init__(self, path: Path):
        self.path, self.rows, self._writer, self._hasher, self._schema = path, 0, None, None, None
        self._buf: list[pl.DataFrame] = []
        self._buf_rows = self._buf_bytes = 0

    def write(self, df: pl.DataFrame) -> None:
        if self._schema is None:
            self._schema, self._hasher = df.schema, FrameHasher(df.schema)
        elif df.schema != self._schema:
            raise ValueError(f"{self.path.name}: a batch's schema {dict(df.schema)} differs from the first batch's {dict(self._schema)}")
        self.rows += df.height
        sizes = _row_bytes(df).cum_sum() + self._buf_bytes
        start = 0
        while start < df.height:
            rows_left = GROUP_ROWS - self._buf_rows
            # the first row at which the open group reaches its size; the group ends with that row
            full = int(sizes.slice(start).search_sorted(GROUP_BYTES, side="left")) + start
            end = min(df.height, start + rows_left, full + 1)
            self._buf.append(df.slice(start, end - start))
            self._buf_rows += end - start
            self._buf_bytes = int(sizes[end - 1])
            if self._buf_rows >= GROUP_ROWS or self._buf_bytes >= GROUP_BYTES:
                self._flush()
                sizes = sizes - sizes[end - 1]
            start = end

    def _flush(self) -> None:
        import pyarrow.parquet as pq

        group = pl.concat(self._buf, rechunk=True) if len(self._buf) > 1 else self._buf[0].rechunk()
        table = group.to_arrow()
        self._hasher.update(group, table)
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, table.schema, compression="zstd", write_statistics=False)
        self._writer.write_table(table, row_group_size=max(1, group.height))
        self._buf, self._buf_rows, self._buf_bytes = [], 0, 0

    def close(self, schema: dict | None = None) -> dict:
        """Finish the file; `schema` names the columns of a table that got no batch at all."""
        if self._schema is None:
            self.write(pl.DataFrame(schema=schema or {}))
        if self._buf_rows or self._writer is None:
            self._buf = self._buf or [pl.DataFrame(schema=self._schema)]
            self._flush()
        self._writer.close()
        return {"rows": self.rows, "content_hash": self._hasher.hexdigest(), "columns": {k: str(v) for k, v in self._schema.items()}}


@dataclass(frozen=True)
class Table:
    """One stored table: what a stage is given to read (a path, so it crosses to a pool task as is)."""

    path: Path

    def scan(self) -> pl.LazyFrame:
        return pl.scan_parquet(self.path)

    def read(self) -> pl.DataFrame:
        return pl.read_parquet(self.path)

    @property
    def parts(self) -> dict[str, str]:
        """doc_id -> the per-document part its rows were assembled from (`runtime.parts`), as the
        artifact's manifest records them; empty when it was not assembled from parts."""
        manifest = self.path.parent / MANIFEST
        return json.loads(manifest.read_text(encoding="utf-8")).get("parts", {}) if manifest.is_file() else {}

    def batches(self, columns: list[str] | None = None) -> Iterator[pl.DataFrame]:
        """The rows in order, one Parquet row group (about GROUP_BYTES) at a time, so a stage can
        stream a table of any size. Read by Polars with a slice per group: pyarrow's own reader
        held twice as much memory."""
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(self.path).metadata
        start = 0
        for i in range(meta.num_row_groups):
            n = meta.row_group(i).num_rows
            scan = pl.scan_parquet(self.path)
            yield (scan.select(columns) if columns else scan).slice(start, n).collect()
            start += n


@dataclass(frozen=True)
class Artifact:
    stage: str
    artifact_id: str
    path: Path

    @property
    def manifest(self) -> dict:
        return json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))

    def table(self, name: str | None = None) -> Table:
        return Table(self.path / f"{name or self.stage}.parquet")

    def scan(self, table: str | None = None) -> pl.LazyFrame:
        return self.table(table).scan()

    def read(self, table: str | None = None) -> pl.DataFrame:
        return self.table(table).read()

    def batches(self, table: str | None = None, columns: list[str] | None = None) -> Iterator[pl.DataFrame]:
        return self.table(table).batches(columns)

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

    def put(
        self,
        stage: str,
        aid: str,
        tables: Tables,
        manifest: dict,
        schemas: dict[str, dict] | None = None,
        after: Callable[[], dict] | None = None,
    ) -> Artifact:
        """Publish an artifact. `tables` is {name: frame}, or an iterable of (name, frame) pairs
        that arrive batch by batch (a stage streaming its shards, each table its own stream):
        each table is written as its batches come, never held whole. `schemas` names every table
        the artifact holds: one that got no batch is written empty with its schema. `after` gives
        what the manifest also records once the tables are written (the parts a stage used)."""
        final = self._dir(stage, aid)
        if (final / MANIFEST).is_file():
            return Artifact(stage, aid, final)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".tmp-{aid}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        _crash_point(stage, "tmp_created")
        info = _write_tables(tmp, tables, stage, schemas or {})
        full = {"artifact_id": aid, "stage": stage, **manifest, **(after() if after else {}), "tables": info}
        (tmp / MANIFEST).write_text(json.dumps(full, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
        _crash_point(stage, "manifest_written")
        for f in tmp.iterdir():  # make the bytes durable before the rename publishes them
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        _fsync_dir(tmp)
        _crash_point(stage, "synced")
        publish_folder(tmp, final)
        _crash_point(stage, "renamed")
        return Artifact(stage, aid, final)

    def artifacts(self, stage: str | None = None) -> list[Artifact]:
        stages = [stage] if stage else sorted(p.name for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []
        out = []
        for s in stages:
            for d in sorted((self.root / s).glob("art_*")):
                if (d / MANIFEST).is_file():
                    out.append(Artifact(s, d.name, d))
        return out


def _write_tables(folder: Path, tables: Tables, stage: str, schemas: dict[str, dict]) -> dict:
    """Write every table to folder/<name>.parquet, batch by batch; returns the manifest's
    per-table info."""
    writers: dict[str, TableWriter] = {}
    for name, df in tables.items() if isinstance(tables, dict) else tables:
        if name not in writers:
            writers[name] = TableWriter(folder / f"{name}.parquet")
        writers[name].write(df)
    info = {}
    for name in sorted(set(writers) | set(schemas)):
        info[name] = writers.get(name, TableWriter(folder / f"{name}.parquet")).close(schemas.get(name))
        _crash_point(stage, "table_written")
    return info


def publish_folder(tmp: Path, final: Path) -> None:
    """Publish the finished folder `tmp` (named `.tmp-<name>-<pid>` beside `final`, holding a
    MANIFEST) as `final` in one rename. When another process published `final` first (the same
    content), `tmp` is dropped; a stray `final` without a manifest is replaced. The rename is made
    durable, and temporary folders of writers that died beside it are removed."""
    try:
        os.rename(tmp, final)
    except OSError:
        if not (final / MANIFEST).is_file():
            shutil.rmtree(final, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rename(tmp, final)
        shutil.rmtree(tmp, ignore_errors=True)
    _fsync_dir(final.parent)  # the rename itself survives a power cut
    remove_dead(final.parent.glob(".tmp-*"), lambda name: name.rsplit("-", 1)[-1])


def remove_dead(folders: Iterable[Path], pid_of: Callable[[str], str]) -> None:
    """Remove the temporary folders whose process is gone (`pid_of` reads the pid in a folder's name)."""
    for d in folders:
        pid = pid_of(d.name)
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` still runs: the temporary folders named after it are still in use."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

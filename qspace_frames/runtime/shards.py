"""Shards, bounded memory and the order of rows: the runtime's tools for streaming a stage.

A shard is a run of whole documents (or of whole key groups) in key order. Stage code cuts its
input into shards (`doc_shards`, `key_shards`, `DocCursor`), runs them in the pool
(`run_tasks`), and orders what does not arrive in order through an external sort
(`SortSpill`). Nothing here knows what a document holds.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Callable, Iterable, Iterator

import polars as pl

from . import workers as workers_mod

ENGINES = ("local", "ray")
SHARD_DOCS = 256  # at most this many documents in a shard ...
SHARD_CHARS = 4_000_000  # ... and about this many characters of text (a longer document is a shard alone)


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
    return engine


def doc_ranges(pages: pl.DataFrame, max_docs: int | None = None, max_chars: int | None = None) -> list[tuple[str, str]]:
    """Consecutive (first doc_id, last doc_id) ranges over the documents of a pages frame sorted by
    doc_id, each holding at most max_docs documents and about max_chars characters (default:
    SHARD_DOCS and SHARD_CHARS)."""
    max_docs, max_chars = max_docs or SHARD_DOCS, max_chars or SHARD_CHARS
    sizes = pages.group_by("doc_id", maintain_order=True).agg(pl.col("text").str.len_chars().sum().alias("n"))
    out, first, n_docs, n_chars = [], None, 0, 0
    prev = None
    for did, n in sizes.iter_rows():
        if first is not None and (n_docs >= max_docs or n_chars + n > max_chars):
            out.append((first, prev))
            first, n_docs, n_chars = None, 0, 0
        if first is None:
            first = did
        n_docs, n_chars, prev = n_docs + 1, n_chars + n, did
    if first is not None:
        out.append((first, prev))
    return out


def doc_shards(batches: Iterable[pl.DataFrame], max_docs: int | None = None, max_chars: int | None = None) -> Iterator[pl.DataFrame]:
    """Whole-document shards (frames of at most max_docs documents and about max_chars characters
    of `text`) from frames sorted by doc_id that arrive in batches, a document possibly split
    across two batches. Only the rows of the shard being filled are held."""
    pending: pl.DataFrame | None = None
    for b in as_batches(batches):
        pending = b if pending is None else pl.concat([pending, b], rechunk=False)
        if pending.height == 0:
            continue
        last = pending["doc_id"][-1]  # may continue in the next batch: never cut before it is whole
        whole = pending.filter(pl.col("doc_id") != last)
        ranges = doc_ranges(whole, max_docs, max_chars) if whole.height else []
        for lo, hi in ranges[:-1]:  # the last range may still grow: it waits with the open document
            yield _slice(pending, lo, hi)
        if len(ranges) > 1:
            pending = pending.slice(pending["doc_id"].search_sorted(ranges[-1][0], side="left"))
    if pending is not None and pending.height:
        for lo, hi in doc_ranges(pending, max_docs, max_chars):
            yield _slice(pending, lo, hi)


class DocCursor:
    """Rows of frames sorted by doc_id, arriving in batches, handed out a doc_id range at a time."""

    def __init__(self, batches: Iterable[pl.DataFrame], schema: dict):
        self._it, self._buf, self._schema = iter(as_batches(batches)), None, schema

    def through(self, hi: str) -> pl.DataFrame:
        """Every row not yet handed out whose doc_id is <= hi."""
        parts = []
        while True:
            if self._buf is None:
                self._buf = next(self._it, None)
                if self._buf is None:
                    break
            cut = self._buf["doc_id"].search_sorted(hi, side="right")
            parts.append(self._buf.slice(0, cut))
            if cut < self._buf.height:
                self._buf = self._buf.slice(cut)
                break
            self._buf = None
        return pl.concat(parts, rechunk=False) if parts else pl.DataFrame(schema=self._schema)


def key_shards(batches: Iterable[pl.DataFrame], key: str, rows: int) -> Iterator[pl.DataFrame]:
    """Frames sorted by `key`, arriving in batches, re-cut into shards of about `rows` rows that
    never split the rows of one key value."""
    pending: pl.DataFrame | None = None
    for b in as_batches(batches):
        pending = b if pending is None else pl.concat([pending, b], rechunk=False)
        while pending.height > rows:
            col = pending[key]
            cut = col.search_sorted(col[rows], side="left") or col.search_sorted(col[rows], side="right")
            if cut >= pending.height:  # one key value fills the rest: it may continue in the next batch
                break
            yield pending.slice(0, cut)
            pending = pending.slice(cut)
    if pending is not None and pending.height:
        yield pending


SPILL_READ_ROWS = 100_000  # about this many rows (whole buckets) are sorted at once when a spill is read back
SPILL_HOLD_BYTES = 64_000_000  # added frames are held in memory up to about this size, spilled beyond it


class SortSpill:
    """An external sort for a frame too big to hold. Added frames are held until they pass
    SPILL_HOLD_BYTES, then spilled to one Parquet file, its rows grouped by bucket: the first
    `width` characters of `key` after `skip` (a hex content id, so the buckets are even). They are
    read back a run of buckets at a time (about SPILL_READ_ROWS rows, a slice of each file),
    sorted by `by`. Buckets in key order, each run sorted: the rows come back in the order one
    sort of the whole frame gives (`by` must start with `key` and order the rows completely).
    What never passed the limit is sorted in memory: a small corpus writes no file."""

    def __init__(self, key: str, by: list[str], skip: int, width: int = 2):
        import tempfile

        self._dir = tempfile.TemporaryDirectory(prefix="qspace-spill-")
        self.key, self.by, self._slice = key, by, (skip, width)
        self._files: list[tuple[Path, dict[str, tuple[int, int]]]] = []  # per file: bucket -> (first row, rows)
        self._held: list[pl.DataFrame] = []
        self._held_bytes = 0
        self.schema: dict | None = None

    def add(self, df: pl.DataFrame) -> None:
        self.schema = self.schema or df.schema
        self._held.append(df)
        self._held_bytes += df.estimated_size()
        if self._held_bytes > SPILL_HOLD_BYTES:
            self._spill()

    def _spill(self) -> None:
        df = pl.concat(self._held) if len(self._held) > 1 else self._held[0]
        self._held, self._held_bytes = [], 0
        df = df.with_columns(pl.col(self.key).str.slice(*self._slice).alias("_bucket")).sort("_bucket", maintain_order=True)
        counts = df.group_by("_bucket", maintain_order=True).len()
        ends = counts["len"].cum_sum().to_list()
        where = {b: (e - n, n) for b, n, e in zip(counts["_bucket"].to_list(), counts["len"].to_list(), ends)}
        path = Path(self._dir.name) / f"{len(self._files):06d}.parquet"
        # a run reads a few rows of each file: small row groups, so little is decoded beyond them
        df.drop("_bucket").write_parquet(path, compression="lz4", statistics=False, row_group_size=4096)
        self._files.append((path, where))

    def sorted(self) -> Iterator[pl.DataFrame]:
        """The rows, a run of buckets at a time; the spill files are removed at the end."""
        try:
            if not self._files:
                if self._held:
                    yield pl.concat(self._held).sort(self.by)
                    self._held = []
                return
            if self._held:
                self._spill()
            rows: dict[str, int] = {}
            for _, where in self._files:
                for b, (_, n) in where.items():
                    rows[b] = rows.get(b, 0) + n
            run, n, buckets = [], 0, sorted(rows)
            for b in buckets:
                run, n = run + [b], n + rows[b]
                if n >= SPILL_READ_ROWS or b == buckets[-1]:
                    yield pl.concat([self._read(path, where, run) for path, where in self._files]).sort(self.by)
                    run, n = [], 0
        finally:
            self._dir.cleanup()

    def _read(self, path: Path, where: dict[str, tuple[int, int]], run: list[str]) -> pl.DataFrame:
        """The rows of a run of buckets in one file: one contiguous slice (its buckets are in order)."""
        spans = [where[b] for b in run if b in where]
        if not spans:
            return pl.DataFrame(schema=self.schema)
        first = spans[0][0]
        return pl.scan_parquet(path).slice(first, spans[-1][0] + spans[-1][1] - first).collect()


def _slice(df: pl.DataFrame, lo: str, hi: str) -> pl.DataFrame:
    """The rows of a frame sorted by doc_id whose doc_id lies in [lo, hi] (a zero-copy slice)."""
    col = df["doc_id"]
    a, b = col.search_sorted(lo, side="left"), col.search_sorted(hi, side="right")
    return df.slice(a, b - a)


def merge(parts: list[pl.DataFrame], keys: list[str], schema: dict, in_order: bool = False) -> pl.DataFrame:
    """Shard outputs into one frame: concatenated, sorted by the stage's keys, one chunk.
    `in_order`: the parts are sorted and hold ascending, disjoint doc_id ranges (the local
    shards), so their concatenation is already sorted and is not copied by a sort."""
    parts = [d for d in parts if d.height]
    if not parts:
        return pl.DataFrame(schema=schema)
    df = pl.concat(parts, how="vertical_relaxed", rechunk=False) if len(parts) > 1 else parts[0]
    parts.clear()
    df = df.select([pl.col(c).cast(t) for c, t in schema.items()])
    if not in_order:
        df = df.sort(keys, maintain_order=True)
    return df.rechunk()


def in_key_order(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The frame in doc_id order (what shards are cut by); stored artifacts already are, and are
    not copied again."""
    return df if df["doc_id"].is_sorted() else df.sort(keys, maintain_order=True)


def run_tasks(fn: Callable, tasks: Iterable[tuple], workers: int) -> Iterator:
    """`fn(*task)` for each task, results in order: in the process pool of `workers` (a few tasks
    in flight at a time), or in this process when there is one worker or a single task."""
    tasks = iter(tasks)
    head = list(itertools.islice(tasks, 2))
    if workers <= 1 or len(head) < 2:
        yield from (fn(*t) for t in itertools.chain(head, tasks))
    else:
        yield from workers_mod.imap(fn, itertools.chain(head, tasks), workers)


def as_batches(frames: pl.DataFrame | Iterable[pl.DataFrame]) -> Iterable[pl.DataFrame]:
    """One frame or an iterable of frames, as an iterable of frames."""
    return [frames] if isinstance(frames, pl.DataFrame) else frames


def whole(batches: pl.DataFrame | Iterable[pl.DataFrame], schema: dict) -> pl.DataFrame:
    parts = list(as_batches(batches))
    return pl.concat(parts) if parts else pl.DataFrame(schema=schema)

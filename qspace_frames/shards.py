"""The per-document stages (load, fragment, detect) run shard by shard, locally or on Ray.

A shard is a run of whole documents in doc_id order. Each per-document stage is a pure function
of its documents (DESIGN.md sections 3 and 11), so a shard's rows do not depend on what else is
in the shard, and the stage output is the shards' outputs concatenated and sorted by the stage's
keys. That bounds the memory of the intermediate frames (lines, blocks, sentences, detector
columns) by the shard, not the corpus, and lets the shards run in parallel:

- engine "local": one process, or a process pool of `workers` processes (shards are shipped to
  the pool as Arrow; PDFs and other files are loaded one file per task);
- engine "ray": Ray Data `map_batches` over Arrow batches of documents, one row per document with
  its pages (and fragments) nested, so however Ray cuts the batches a document is never split.

Both engines run the same shard functions and merge with the same sort, so the artifacts are
byte-identical; the engine is not a parameter of any artifact id.
"""
from __future__ import annotations

import itertools
import os
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator

import polars as pl

from . import affordances as affordances_mod
from . import fragments as fragments_mod
from . import workers as workers_mod
from .pages import LOADED_DOC, docs_pages, document_text, load_batches, load_shard, loaded_status, plan_loads, status_frame
from .params import AffordanceParams, CorpusParams, FragmentParams
from .schemas import FRAGMENTS, PAGES

ENGINES = ("local", "ray")
SHARD_DOCS = 256  # at most this many documents in a shard ...
SHARD_CHARS = 4_000_000  # ... and about this many characters of text (a longer document is a shard alone)
FRAGMENT_KEYS = ["doc_id", "char_start", "char_end", "kind"]
AFFORDANCE_KEYS = ["doc_id", "span_start", "intent", "support"]
PAGE_STRUCT = LOADED_DOC["pages"].inner
FRAGMENT_STRUCT = pl.Struct({c: t for c, t in FRAGMENTS.items() if c != "doc_id"})


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
    return engine


# ---- shards ------------------------------------------------------------------------------------

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


def detached(df: pl.DataFrame) -> pl.DataFrame:
    """A copy of a few rows kept from a large batch that owns its strings: a filtered Polars frame
    still points into its parent's string buffers, so keeping it would keep the whole batch."""
    return pl.from_arrow(df.to_arrow()) if df.height else df


def _slice(df: pl.DataFrame, lo: str, hi: str) -> pl.DataFrame:
    """The rows of a frame sorted by doc_id whose doc_id lies in [lo, hi] (a zero-copy slice)."""
    col = df["doc_id"]
    a, b = col.search_sorted(lo, side="left"), col.search_sorted(hi, side="right")
    return df.slice(a, b - a)


def _merge(parts: list[pl.DataFrame], keys: list[str], schema: dict, in_order: bool = False) -> pl.DataFrame:
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


def _sorted(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
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


def at_least_one(batches: Iterable[pl.DataFrame], schema: dict) -> Iterator[pl.DataFrame]:
    """The batches, or one empty frame of `schema` when there are none (no document, no text), so
    a table streamed from them still exists with its schema."""
    n = 0
    for n, b in enumerate(batches, 1):
        yield b
    if not n:
        yield pl.DataFrame(schema=schema)


def _conform(df: pl.DataFrame, schema: dict) -> pl.DataFrame:
    return df.select([pl.col(c).cast(t) for c, t in schema.items()])


# ---- the shard functions: pure, whole documents in, rows out -------------------------------------

def fragment_shard(pages: pl.DataFrame, p: FragmentParams) -> pl.DataFrame:
    return fragments_mod.fragments(pages.lazy(), p).collect()


def detect_shard(fragments: pl.DataFrame, pages: pl.DataFrame, p: AffordanceParams) -> pl.DataFrame:
    """Verified and rejected affordances of a shard in one frame (reject_reason null when kept)."""
    kept, rejected = affordances_mod.affordances(fragments.lazy(), document_text(pages.lazy()), p)
    kept, rejected = pl.collect_all([kept, rejected])
    return pl.concat([kept.with_columns(pl.lit(None, pl.String).alias("reject_reason")), rejected], how="diagonal")


def _split_affordances(checked: pl.DataFrame, in_order: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    kept = checked.filter(pl.col("reject_reason").is_null())
    rejected = checked.filter(pl.col("reject_reason").is_not_null())
    return (_merge([kept], AFFORDANCE_KEYS, affordances_mod.AFFORDANCES, in_order),
            _merge([rejected], AFFORDANCE_KEYS, affordances_mod.REJECTED, in_order))


# ---- the stages --------------------------------------------------------------------------------

def load_stage(files: pl.DataFrame, root: str | Path, p: CorpusParams, workers: int = 1,
               engine: str = "local") -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(per-file status rows, pages) of every discovered file, in batches: the loaded documents'
    in doc_id order (pages sorted as they are stored), then the other files' statuses (errors,
    unsupported types, duplicates) with no pages."""
    jobs, status_rows = plan_loads(files, p)
    if check_engine(engine) == "local":
        batches = load_batches(jobs, root, p, workers=workers)
    else:
        docs = _ray_map(jobs.sort("doc_id"), partial(_ray_load, root=str(root), p=p), rows_per_batch=8, workers=workers)
        batches = [docs.select([pl.col(c).cast(t) for c, t in LOADED_DOC.items()]) if docs.height else pl.DataFrame(schema=LOADED_DOC)]
    for docs in batches:
        yield loaded_status(docs), docs_pages(docs)
    yield status_frame(status_rows), pl.DataFrame(schema=PAGES)


def fragment_stage(pages: Iterable[pl.DataFrame], p: FragmentParams, workers: int = 1,
                   engine: str = "local") -> Iterator[pl.DataFrame]:
    """The fragments of every document (schema FRAGMENTS), in batches sorted by document and
    offset. `pages` arrive in batches sorted by doc_id (a stored artifact read batch by batch, or
    one frame); locally only a few shards are held at a time."""
    if check_engine(engine) == "ray":
        pages = _sorted(_whole(pages, PAGES), ["doc_id", "char_start"])
        nested = _nest(pages, "pages", ["page", "char_start", "text"])
        out = _ray_map(nested, partial(_ray_fragments, p=p), rows_per_batch=SHARD_DOCS, workers=workers)
        yield _merge([out], FRAGMENT_KEYS, FRAGMENTS)
        return
    # shards hold ascending doc ranges, each sorted: the batches are in order
    parts = run_tasks(partial(fragment_shard, p=p), ((sh,) for sh in doc_shards(pages)), workers)
    yield from at_least_one((_conform(part, FRAGMENTS) for part in parts), FRAGMENTS)


def affordance_stage(fragments: Iterable[pl.DataFrame], pages: Iterable[pl.DataFrame], p: AffordanceParams,
                     workers: int = 1, engine: str = "local") -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(verified affordances, rejected ones) of every document, in batches sorted by the keys;
    both inputs arrive in batches sorted by doc_id and are read alongside, a shard at a time."""
    if check_engine(engine) == "ray":
        pages = _sorted(_whole(pages, PAGES), ["doc_id", "char_start"])
        fragments = _sorted(_whole(fragments, FRAGMENTS), FRAGMENT_KEYS)
        nested = _nest(pages, "pages", ["page", "char_start", "text"]).join(
            _nest(fragments, "fragments", [c for c in FRAGMENTS if c != "doc_id"]), on="doc_id", how="left", maintain_order="left")
        out = _ray_map(nested, partial(_ray_detect, p=p), rows_per_batch=SHARD_DOCS, workers=workers)
        yield _split_affordances(out if out.height else detect_shard(fragments.clear(), pages.clear(), p))
        return
    cursor = DocCursor(fragments, FRAGMENTS)
    tasks = ((cursor.through(sh["doc_id"][-1]), sh) for sh in doc_shards(pages))
    n = 0
    for n, part in enumerate(run_tasks(partial(detect_shard, p=p), tasks, workers), 1):
        yield _split_affordances(part, in_order=True)  # a shard's rows are sorted by the keys
    if not n:
        yield pl.DataFrame(schema=affordances_mod.AFFORDANCES), pl.DataFrame(schema=affordances_mod.REJECTED)


def as_batches(frames: pl.DataFrame | Iterable[pl.DataFrame]) -> Iterable[pl.DataFrame]:
    """One frame or an iterable of frames, as an iterable of frames."""
    return [frames] if isinstance(frames, pl.DataFrame) else frames


def _whole(batches: pl.DataFrame | Iterable[pl.DataFrame], schema: dict) -> pl.DataFrame:
    parts = list(as_batches(batches))
    return pl.concat(parts) if parts else pl.DataFrame(schema=schema)


# ---- Ray ----------------------------------------------------------------------------------------

def _nest(df: pl.DataFrame, name: str, cols: list[str]) -> pl.DataFrame:
    """One row per document with its rows nested as a list of structs (in their current order)."""
    return df.group_by("doc_id", maintain_order=True).agg(pl.struct(cols).alias(name))


def _unnest(docs: pl.DataFrame, name: str) -> pl.DataFrame:
    return docs.select("doc_id", name).explode(name).filter(pl.col(name).is_not_null()).unnest(name)


def _ray_load(batch, root: str, p: CorpusParams):
    return load_shard(pl.from_arrow(batch), root, p).to_arrow()


def _ray_fragments(batch, p: FragmentParams):
    pages = _unnest(pl.from_arrow(batch), "pages").select([pl.col(c).cast(t) for c, t in PAGES.items()])
    return fragment_shard(pages, p).to_arrow()


def _ray_detect(batch, p: AffordanceParams):
    docs = pl.from_arrow(batch)
    pages = _unnest(docs, "pages").select([pl.col(c).cast(t) for c, t in PAGES.items()])
    fr = _unnest(docs, "fragments").select([pl.col(c).cast(t) for c, t in FRAGMENTS.items()])
    return detect_shard(fr, pages, p).to_arrow()


def ray_init(workers: int = 2) -> None:
    """A local Ray instance for this process (offline: no dashboard, no usage stats)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    import ray

    for attempt in range(3):  # Ray gives its raylet 30 s to register: a loaded machine can miss that
        if ray.is_initialized():
            return
        try:
            ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                     configure_logging=False)
        except Exception:
            ray.shutdown()
            if attempt == 2:
                raise


def _ray_map(docs: pl.DataFrame, fn: Callable, rows_per_batch: int, workers: int) -> pl.DataFrame:
    """`fn` over Arrow batches of whole-document rows with Ray Data; the outputs concatenated."""
    import pyarrow as pa
    import ray
    import ray.data

    if docs.height == 0:
        return pl.DataFrame()
    ray_init(workers)
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    ds = ray.data.from_arrow(docs.to_arrow()).map_batches(fn, batch_size=rows_per_batch, batch_format="pyarrow")
    tables = [t for t in ray.get(ds.to_arrow_refs()) if t.num_rows]
    return pl.from_arrow(pa.concat_tables(tables, promote_options="permissive")) if tables else pl.DataFrame()

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

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Callable

import polars as pl

from . import affordances as affordances_mod
from . import fragments as fragments_mod
from .pages import LOADED_DOC, document_text, load_documents, load_shard, plan_loads, split_loaded
from .params import AffordanceParams, CorpusParams, FragmentParams
from .schemas import FRAGMENTS, PAGES

ENGINES = ("local", "ray")
SHARD_DOCS = 256  # at most this many documents in a shard ...
SHARD_CHARS = 8_000_000  # ... and about this many characters of text (a longer document is a shard alone)
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


def _map_local(fn: Callable[..., pl.DataFrame], shards: list[tuple], workers: int) -> list[pl.DataFrame]:
    """fn over the shards, in order: in this process, or a pool of `workers` processes. The pool
    is spawned, not forked: forking a process whose Polars thread pool is running can deadlock."""
    if workers > 1 and len(shards) > 1:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(shards)), mp_context=ctx) as ex:
            return list(ex.map(fn, *zip(*shards)))
    return [fn(*s) for s in shards]


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

def load_stage(files: pl.DataFrame, root: str | Path, p: CorpusParams, workers: int = 1, engine: str = "local"):
    """(per-file status frame, pages frame) of every discovered file."""
    if check_engine(engine) == "local":
        return load_documents(files, root, p, workers=workers)
    jobs, status_rows = plan_loads(files, p)
    docs = _ray_map(jobs.sort("doc_id"), partial(_ray_load, root=str(root), p=p), rows_per_batch=8, workers=workers)
    docs = docs.select([pl.col(c).cast(t) for c, t in LOADED_DOC.items()]) if docs.height else pl.DataFrame(schema=LOADED_DOC)
    return split_loaded(docs, status_rows)


def fragment_stage(pages: pl.DataFrame, p: FragmentParams, workers: int = 1, engine: str = "local") -> pl.DataFrame:
    """The fragments of every document (schema FRAGMENTS), sorted by document and offset."""
    pages = _sorted(pages, ["doc_id", "char_start"])
    if check_engine(engine) == "ray":
        nested = _nest(pages, "pages", ["page", "char_start", "text"])
        out = _ray_map(nested, partial(_ray_fragments, p=p), rows_per_batch=SHARD_DOCS, workers=workers)
        return _merge([out], FRAGMENT_KEYS, FRAGMENTS)
    shards = [(_slice(pages, lo, hi),) for lo, hi in doc_ranges(pages)]
    del pages  # the input is freed once the shards are done, before the outputs are merged
    parts = _map_local(partial(fragment_shard, p=p), shards, workers)
    del shards
    return _merge(parts, FRAGMENT_KEYS, FRAGMENTS, in_order=True)


def affordance_stage(fragments: pl.DataFrame, pages: pl.DataFrame, p: AffordanceParams, workers: int = 1,
                     engine: str = "local") -> tuple[pl.DataFrame, pl.DataFrame]:
    """(verified affordances, rejected ones) of every document."""
    pages = _sorted(pages, ["doc_id", "char_start"])
    fragments = _sorted(fragments, FRAGMENT_KEYS)
    if check_engine(engine) == "ray":
        nested = _nest(pages, "pages", ["page", "char_start", "text"]).join(
            _nest(fragments, "fragments", [c for c in FRAGMENTS if c != "doc_id"]), on="doc_id", how="left", maintain_order="left")
        out = _ray_map(nested, partial(_ray_detect, p=p), rows_per_batch=SHARD_DOCS, workers=workers)
        return _split_affordances(out if out.height else detect_shard(fragments.clear(), pages.clear(), p))
    shards = [(_slice(fragments, lo, hi), _slice(pages, lo, hi)) for lo, hi in doc_ranges(pages)]
    del fragments, pages  # the inputs are freed once the shards are done, before the outputs are merged
    parts = _map_local(partial(detect_shard, p=p), shards, workers)
    del shards
    kept, rejected = [], []
    while parts:
        k, r = _split_affordances(parts.pop(0), in_order=True)  # a shard's rows are sorted by the keys
        kept.append(k)
        rejected.append(r)
    return (_merge(kept, AFFORDANCE_KEYS, affordances_mod.AFFORDANCES, in_order=True),
            _merge(rejected, AFFORDANCE_KEYS, affordances_mod.REJECTED, in_order=True))


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

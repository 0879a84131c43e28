"""The per-document stages (load, fragment, detect) run shard by shard, locally or on Ray.

Each per-document stage is a pure function of its documents (DESIGN.md sections 3 and 11), so a
shard's rows do not depend on what else is in the shard, and the stage output is the shards'
outputs concatenated and sorted by the stage's keys. That bounds the memory of the intermediate
frames (lines, blocks, sentences, detector columns) by the shard, not the corpus, and lets the
shards run in parallel:

- engine "local": one process, or a process pool of `workers` processes (shards are shipped to
  the pool as Arrow; PDFs and other files are loaded one file per task);
- engine "ray": Ray Data `map_batches` over Arrow batches of documents, one row per document with
  its pages (and fragments) nested, so however Ray cuts the batches a document is never split.

Both engines run the same shard functions and merge with the same sort, so the artifacts are
byte-identical; the engine is not a parameter of any artifact id.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Iterable, Iterator

import polars as pl

from .. import fragments as fragments_mod
from ..affordances import detect as affordances_mod
from ..corpus.loaders import FORMATS
from ..corpus.pages import (
    LOADED_DOC,
    docs_pages,
    document_text,
    load_one,
    load_shard,
    loaded_docs,
    loaded_status,
    plan_loads,
    split_loaded,
    status_frame,
)
from ..frames import at_least_one
from ..params import AffordanceParams, CorpusParams, FragmentParams, StructureParams
from ..runtime import shards
from ..runtime import workers as workers_mod
from ..runtime.parts import Parts
from ..runtime.parts import per_document as reuse_parts
from ..runtime.ray_engine import nest, ray_map, unnest
from ..runtime.shards import (
    DocCursor,
    check_engine,
    doc_shards,
    in_key_order,
    merge,
    whole,
)
from ..schemas import FRAGMENTS, PAGES, conform

FRAGMENT_KEYS = ["doc_id", "char_start", "char_end", "kind"]
AFFORDANCE_KEYS = ["doc_id", "span_start", "intent", "support"]


ASSEMBLE_FILES = 256  # results turned into a frame every this many files: bounded Python objects
PART_WRITERS = 2  # threads writing the loaded documents' parts


def load_batches(jobs: pl.DataFrame, root: str | Path, p: CorpusParams, workers: int = 1):
    """Loaded documents (schema LOADED_DOC) in doc_id order, ASSEMBLE_FILES files a batch. With
    workers > 1 the formats that cost real parsing (PDF, office, HTML) are loaded by the process
    pool, one file per task (PDFs vary a lot in cost), a few tasks ahead of the batch being
    assembled; plain-text files are read in this process meanwhile, and the pool is started
    either way, so the stages after this one find it ready."""
    keys = list(jobs.iter_rows())
    args = [(str(root), path, ext, p) for _, path, ext in keys]
    here = [workers <= 1 or FORMATS[a[2]].in_process for a in args]
    pooled = [a for a, h in zip(args, here) if not h]
    if workers > 1:
        workers_mod.warm(workers)
    if len(pooled) > 1:
        remote = workers_mod.imap(load_one, ((a,) for a in pooled), workers, ahead=4 * workers)
    else:
        remote = map(load_one, pooled)
    results = (load_one(a) if h else next(remote) for a, h in zip(args, here))
    for i in range(0, len(args), ASSEMBLE_FILES):
        yield loaded_docs(keys[i : i + ASSEMBLE_FILES], [next(results) for _ in keys[i : i + ASSEMBLE_FILES]])


def load_documents(files: pl.DataFrame, root: str | Path, p: CorpusParams, workers: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Load every discovered file. Returns (per-file status frame, pages frame).

    Files with identical bytes share a doc_id: the first path (in sorted order) is loaded and
    the others are recorded as duplicates of it, so every file stays accounted for."""
    jobs, status_rows = plan_loads(files, p)
    parts = list(load_batches(jobs, root, p, workers))
    docs = pl.concat(parts) if parts else pl.DataFrame(schema=LOADED_DOC)
    del parts
    return split_loaded(docs, status_rows)


# ---- the shard functions: pure, whole documents in, rows out -------------------------------------


def fragment_shard(pages: pl.DataFrame, p: FragmentParams, structure: StructureParams = StructureParams()) -> pl.DataFrame:
    return fragments_mod.fragments(pages.lazy(), p, structure).collect()


def detect_shard(fragments: pl.DataFrame, pages: pl.DataFrame, p: AffordanceParams) -> pl.DataFrame:
    """Verified and rejected affordances of a shard in one frame (reject_reason null when kept)."""
    kept, rejected = affordances_mod.affordances(fragments.lazy(), document_text(pages.lazy()), p)
    kept, rejected = pl.collect_all([kept, rejected])
    return pl.concat([kept.with_columns(pl.lit(None, pl.String).alias("reject_reason")), rejected], how="diagonal")


def detect_pages_shard(pages: pl.DataFrame, fragments: pl.DataFrame, p: AffordanceParams) -> pl.DataFrame:
    """`detect_shard` with the pages first (`runtime.parts` reads a shard's documents off its first frame)."""
    return detect_shard(fragments, pages, p)


def _split_affordances(checked: pl.DataFrame, in_order: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    kept = checked.filter(pl.col("reject_reason").is_null())
    rejected = checked.filter(pl.col("reject_reason").is_not_null())
    return (
        merge([kept], AFFORDANCE_KEYS, affordances_mod.AFFORDANCES, in_order),
        merge([rejected], AFFORDANCE_KEYS, affordances_mod.REJECTED, in_order),
    )


# ---- the stages --------------------------------------------------------------------------------


def load_reusing(jobs: pl.DataFrame, root: str | Path, p: CorpusParams, workers: int, parts: Parts) -> Iterator[pl.DataFrame]:
    """`load_batches`, a document loaded before with the same bytes and format read from its part
    (`runtime.parts`): a file renamed or moved is not loaded again. Only loaded documents are kept
    as parts (a failure's message may name the file)."""
    keys = [parts.key(f"{did}\n{ext}") for did, _, ext in jobs.iter_rows()]
    have = {i: row for i, row in enumerate(parts.get_many(keys)) if row is not None}
    todo = jobs.with_row_index("_i").filter(~pl.col("_i").is_in(list(have)))
    computed = (row for batch in load_batches(todo.drop("_i"), root, p, workers) for row in batch.iter_slices(1))
    out = []
    with ThreadPoolExecutor(PART_WRITERS) as writers:  # the parts are written beside the loading (Polars writes without the GIL)
        written = []
        for i, (did, path, _) in enumerate(jobs.iter_rows()):
            row = have.get(i)
            if row is None:
                row = next(computed)
                if row["load_status"][0] == "loaded":
                    written.append(writers.submit(parts.put, keys[i], row.drop("path")))
            else:
                row = row.with_columns(pl.lit(path, pl.String).alias("path")).select(list(LOADED_DOC))
            parts.record(did, keys[i], reused=i in have)
            out.append(row)
            if len(out) == ASSEMBLE_FILES:
                yield pl.concat(out)
                out = []
        if out:
            yield pl.concat(out)
        for w in written:
            w.result()  # a part that could not be written fails the stage, as any write would


def load_stage(
    files: pl.DataFrame, root: str | Path, p: CorpusParams, workers: int = 1, engine: str = "local", parts: Parts | None = None
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(per-file status rows, pages) of every discovered file, in batches: the loaded documents'
    in doc_id order (pages sorted as they are stored), then the other files' statuses (errors,
    unsupported types, duplicates) with no pages. With `parts`, a document loaded before is read
    from its part."""
    jobs, status_rows = plan_loads(files, p)
    if check_engine(engine) == "local":
        batches = load_batches(jobs, root, p, workers=workers) if parts is None else load_reusing(jobs, root, p, workers, parts)
    else:
        docs = ray_map(jobs.sort("doc_id"), partial(_ray_load, root=str(root), p=p), rows_per_batch=8, workers=workers)
        batches = [docs.select([pl.col(c).cast(t) for c, t in LOADED_DOC.items()]) if docs.height else pl.DataFrame(schema=LOADED_DOC)]
    for docs in batches:
        yield loaded_status(docs), docs_pages(docs)
    yield status_frame(status_rows), pl.DataFrame(schema=PAGES)


def fragment_stage(
    pages: Iterable[pl.DataFrame],
    p: FragmentParams,
    workers: int = 1,
    engine: str = "local",
    parts: Parts | None = None,
    upstream: dict[str, str] | None = None,
    structure: StructureParams = StructureParams(),
) -> Iterator[pl.DataFrame]:
    """The fragments of every document (schema FRAGMENTS), in batches sorted by document and
    offset. `pages` arrive in batches sorted by doc_id (a stored artifact read batch by batch, or
    one frame); locally only a few shards are held at a time. With `parts`, a document whose
    pages a part was made from is read from it (`runtime.parts`)."""
    if check_engine(engine) == "ray":
        pages = in_key_order(whole(pages, PAGES), ["doc_id", "char_start"])
        nested = nest(pages, "pages", ["page", "char_start", "text", "headings"])
        out = ray_map(nested, partial(_ray_fragments, p=p, structure=structure), rows_per_batch=shards.SHARD_DOCS, workers=workers)
        yield merge([out], FRAGMENT_KEYS, FRAGMENTS)
        return
    # shards hold ascending doc ranges, each sorted: the batches are in order
    computed = reuse_parts(((sh,) for sh in doc_shards(pages)), partial(fragment_shard, p=p, structure=structure), workers, parts, upstream)
    yield from at_least_one((conform(part, FRAGMENTS) for part in computed), FRAGMENTS)


def affordance_stage(
    fragments: Iterable[pl.DataFrame],
    pages: Iterable[pl.DataFrame],
    p: AffordanceParams,
    workers: int = 1,
    engine: str = "local",
    parts: Parts | None = None,
    upstream: dict[str, str] | None = None,
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(verified affordances, rejected ones) of every document, in batches sorted by the keys;
    both inputs arrive in batches sorted by doc_id and are read alongside, a shard at a time. With
    `parts`, a document whose pages and fragments a part was made from is read from it."""
    if check_engine(engine) == "ray":
        pages = in_key_order(whole(pages, PAGES), ["doc_id", "char_start"])
        fragments = in_key_order(whole(fragments, FRAGMENTS), FRAGMENT_KEYS)
        nested = nest(pages, "pages", ["page", "char_start", "text", "headings"]).join(
            nest(fragments, "fragments", [c for c in FRAGMENTS if c != "doc_id"]), on="doc_id", how="left", maintain_order="left"
        )
        out = ray_map(nested, partial(_ray_detect, p=p), rows_per_batch=shards.SHARD_DOCS, workers=workers)
        yield _split_affordances(out if out.height else detect_shard(fragments.clear(), pages.clear(), p))
        return
    cursor = DocCursor(fragments, FRAGMENTS)
    tasks = ((sh, cursor.through(sh["doc_id"][-1])) for sh in doc_shards(pages))
    n = 0
    for n, part in enumerate(reuse_parts(tasks, partial(detect_pages_shard, p=p), workers, parts, upstream), 1):
        yield _split_affordances(part, in_order=True)  # a shard's rows are sorted by the keys
    if not n:
        yield pl.DataFrame(schema=affordances_mod.AFFORDANCES), pl.DataFrame(schema=affordances_mod.REJECTED)


# ---- Ray ----------------------------------------------------------------------------------------


def _ray_load(batch, root: str, p: CorpusParams):
    return load_shard(pl.from_arrow(batch), root, p).to_arrow()


def _ray_fragments(batch, p: FragmentParams, structure: StructureParams):
    pages = unnest(pl.from_arrow(batch), "pages").select([pl.col(c).cast(t) for c, t in PAGES.items()])
    return fragment_shard(pages, p, structure).to_arrow()


def _ray_detect(batch, p: AffordanceParams):
    docs = pl.from_arrow(batch)
    pages = unnest(docs, "pages").select([pl.col(c).cast(t) for c, t in PAGES.items()])
    fr = unnest(docs, "fragments").select([pl.col(c).cast(t) for c, t in FRAGMENTS.items()])
    return detect_shard(fr, pages, p).to_arrow()

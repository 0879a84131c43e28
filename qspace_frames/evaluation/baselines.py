"""Baseline retrieval strategies, run for real (DESIGN.md section 9).

Each strategy takes resolved gold questions (see `evaluation.resolve_gold`; only status "ok"
rows are served), searches only the question's own document (document-scoped retrieval, as
ContractNLI defines the task) and returns a `retrievals` frame (schema
`evaluation.RETRIEVALS`): one row per unit it loaded, in its own order, stopping after the
unit whose exact token count crosses `max_tokens`. Nothing is handed the gold span.

- `bm25_chunks`: fixed token-window chunks ranked by BM25 of the question's terms.
- `source_order`: the document's fragments read from the top.
- `heading_tree`: sections visited best-first by keyword overlap with their heading path,
  each section's own fragments read in order, unsectioned fragments last."""

from __future__ import annotations

from typing import Iterable

import polars as pl

from ..frames import as_lazy, at_least_one
from ..params import EvalParams
from .bm25 import bm25_batched, terms_expr
from .chunks import CHUNK, chunk_batches
from .loading import gold_queries, load_in_order


def bm25_chunks(
    gold: pl.DataFrame | pl.LazyFrame,
    docs: pl.DataFrame | pl.LazyFrame | None,
    p: EvalParams = EvalParams(),
    chunked: Iterable[pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """Fixed `chunk_tokens` chunks of the question's document, best BM25 first (ties: chunk order).

    IDF is computed over all chunks of all documents in `docs`. Each chunk is one node examined:
    nodes_visited = rank, path_length = 1 (a flat list). The corpus is chunked a batch of
    documents at a time; only the questions' own documents' chunks are kept whole. `docs` is a
    frame, or batches of (doc_id, doc_text) frames read once; or `chunked` gives the corpus's
    chunks already cut (CHUNK frames, as `chunk_batches` makes them, e.g. in a process pool).
    """
    q = gold_queries(gold).collect()
    if chunked is None:
        batches = (
            [as_lazy(docs).select("doc_id", "doc_text").sort("doc_id").collect()]
            if isinstance(docs, (pl.DataFrame, pl.LazyFrame))
            else docs
        )
        chunked = (c for d in batches for c in chunk_batches(d, p))
    scores, ch = bm25_batched(q, at_least_one(chunked, CHUNK), p)
    ordered = (
        scores.join(ch.lazy(), on=["doc_id", "chunk"])
        .with_columns(pl.lit(None, dtype=pl.String).alias("fragment_id"), pl.lit(1, dtype=pl.Int64).alias("path_length"))
        .sort(["query_id", "score", "chunk"], descending=[False, True, False])
    )
    return load_in_order(ordered, "bm25_chunks", pl.col("rank"), p)


# ---- fragment strategies ------------------------------------------------------------------------


def _content(fragments: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Loadable fragments: everything but section headings."""
    return (
        as_lazy(fragments)
        .filter(pl.col("kind") != "section")
        .select("doc_id", "fragment_id", "parent_id", "heading_path", "char_start", "char_end", "text", "n_tokens")
    )


def source_order(gold: pl.DataFrame | pl.LazyFrame, fragments: pl.DataFrame | pl.LazyFrame, p: EvalParams = EvalParams()) -> pl.DataFrame:
    """The document's non-section fragments from the top: nodes_visited = rank, path_length = 1."""
    ordered = (
        gold_queries(gold)
        .select("query_id", "doc_id")
        .join(_content(fragments), on="doc_id")
        .with_columns(pl.lit(1, dtype=pl.Int64).alias("path_length"))
        .sort(["query_id", "char_start", "char_end", "fragment_id"])
    )
    return load_in_order(ordered, "source_order", pl.col("rank"), p)


def section_visits(gold: pl.DataFrame | pl.LazyFrame, fragments: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """The order in which `heading_tree` visits each document's sections, per query.

    A section's score is the number of distinct question terms found in its heading path
    (which ends with its own title). Best first; ties in source order.
    Columns: query_id, section_id, score, sec_start, sec_rank (1..), n_sections.
    """
    title = pl.col("text").str.replace(r"^#{1,6}\s+", "")
    secs = (
        as_lazy(fragments)
        .filter(pl.col("kind") == "section")
        .with_columns(pl.concat_list([pl.col("heading_path"), title]).list.join(" ").alias("_heading"))
        .select(
            "doc_id",
            pl.col("fragment_id").alias("section_id"),
            pl.col("char_start").alias("sec_start"),
            terms_expr("_heading").list.unique().alias("_sterms"),
        )
    )
    return (
        gold_queries(gold)
        .with_columns(terms_expr("question").list.unique().alias("_qterms"))
        .join(secs, on="doc_id")
        .with_columns(pl.col("_qterms").list.set_intersection(pl.col("_sterms")).list.len().cast(pl.Int64).alias("score"))
        .sort(["query_id", "score", "sec_start", "section_id"], descending=[False, True, False, False])
        .with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query_id").alias("sec_rank"),
            pl.len().cast(pl.Int64).over("query_id").alias("n_sections"),
        )
        .select("query_id", "section_id", "score", "sec_start", "sec_rank", "n_sections")
    )


def heading_tree(gold: pl.DataFrame | pl.LazyFrame, fragments: pl.DataFrame | pl.LazyFrame, p: EvalParams = EvalParams()) -> pl.DataFrame:
    """Navigate the heading hierarchy: best-matching section first, its own fragments in order.

    Sections are visited in `section_visits` order; visiting one examines its heading (one
    node, even when it has no fragments of its own) and loads the fragments whose parent is
    that section, in source order. Fragments under no section come last, in source order, after
    every heading was examined. nodes_visited = headings examined + fragments loaded so far;
    path_length = depth of the unit's section in the tree (length of its heading path) + 1.
    """
    visits = section_visits(gold, fragments)
    n_sections = visits.group_by("query_id").agg(pl.col("n_sections").first())
    q = gold_queries(gold).select("query_id", "doc_id")
    ordered = (
        q.join(_content(fragments), on="doc_id")
        .join(visits.select("query_id", pl.col("section_id").alias("parent_id"), "sec_rank"), on=["query_id", "parent_id"], how="left")
        .join(n_sections, on="query_id", how="left")
        .with_columns(
            pl.col("n_sections").fill_null(0),
            (pl.col("heading_path").list.len().cast(pl.Int64) + 1).alias("path_length"),
        )
        .sort(["query_id", "sec_rank", "char_start", "char_end", "fragment_id"], nulls_last=True)
    )
    headings_seen = pl.coalesce(pl.col("sec_rank"), pl.col("n_sections"))
    return load_in_order(ordered, "heading_tree", headings_seen + pl.col("rank"), p)


def run_baselines(
    gold: pl.DataFrame | pl.LazyFrame,
    docs: pl.DataFrame | pl.LazyFrame | None,
    fragments: pl.DataFrame | pl.LazyFrame,
    p: EvalParams = EvalParams(),
    chunked: Iterable[pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """All three baselines on the same questions, one retrievals frame (strategy, query, rank order).
    `docs` or `chunked` as `bm25_chunks` takes them."""
    # only the questions' documents are navigated: a filter the scan of a stored table applies as it reads
    mine = gold_queries(gold).select("doc_id").unique().collect()["doc_id"]
    fragments = as_lazy(fragments).filter(pl.col("doc_id").is_in(mine.implode()))
    parts = [bm25_chunks(gold, docs, p, chunked), source_order(gold, fragments, p), heading_tree(gold, fragments, p)]
    return pl.concat(parts).sort(["strategy", "query_id", "rank"])

"""The structure tree of each document: its sections with their level, title, how the heading was
found, inclusive page range and character range, under a root that covers every page.

A section runs from its heading to the next heading of the same or a higher rank (or the end of
the document). Section ids are the ids of the section fragments cut from the same headings, so a
fragment's `parent_id` names its node (null: the root); the tree depends on the loaded pages and
the structure parameters alone, and re-fragmenting with other sizes does not rebuild it.
"""

from __future__ import annotations

import polars as pl

from .. import fragments as fragments_mod
from ..ids import id_expr
from ..params import StructureParams
from .headings import MAX_LEVEL

DOC = "doc_id"
ROOT_SOURCE = "document"

SECTIONS = {
    "doc_id": pl.String,
    "node_id": pl.String,
    "parent_id": pl.String,
    "level": pl.Int64,  # 0 for the root
    "title": pl.String,
    "source": pl.String,  # outline, font, markup, underline, numbering, pattern; "document" for the root
    "page_start": pl.Int64,  # inclusive; null for pageless formats
    "page_end": pl.Int64,
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "heading_path": pl.List(pl.String),
}


def root_id() -> pl.Expr:
    return id_expr("sec", DOC)


def sections(pages: pl.LazyFrame, sp: StructureParams) -> pl.LazyFrame:
    """The structure tree (schema SECTIONS) of every document in `pages`, sorted by document and offset."""
    docs = pages.group_by(DOC).agg(
        pl.col("page").min().alias("page_start"),
        pl.col("page").max().alias("page_end"),
        (pl.col("char_start") + pl.col("text").str.len_chars()).max().alias("char_end"),
    )
    is_sec = pl.col("kind") == "section"
    # collected once: the nodes are read twice below, and each read would find the headings again
    bounds = fragments_mod.section_blocks(pages, sp).filter(is_sec | pl.col("resume_level").is_not_null()).collect().lazy()
    # a section ends where the next heading of its rank or a higher one starts, or where the box it heads ends
    bound = pl.when(is_sec).then(pl.col("level")).otherwise(pl.col("resume_level"))
    ends = []
    for lvl in range(1, MAX_LEVEL + 1):
        nxt = pl.when(bound <= lvl).then(pl.col("char_start")).shift(-1).backward_fill().over(DOC)
        ends.append(pl.when(is_sec & (pl.col("level") == lvl)).then(nxt))
    nodes = (
        bounds.sort(DOC, "char_start")
        .with_columns(pl.coalesce(ends).alias("_next"))
        .filter(is_sec)
        .join(docs.select(DOC, pl.col("char_end").alias("_doc_end")), on=DOC, how="left")
        .select(
            DOC,
            pl.col("fragment_id").alias("node_id"),
            pl.col("parent_id"),
            "level",
            pl.col("heading_path").list.last().alias("title"),  # the heading's own title, as its fragments' paths name it
            "source",
            pl.col("page").alias("page_start"),
            "char_start",
            pl.coalesce(pl.col("_next"), pl.col("_doc_end")).alias("char_end"),
            "heading_path",
        )
    )
    page_of_end = (
        nodes.select(DOC, "node_id", (pl.col("char_end") - 1).alias("_last"))
        .sort("_last")
        .join_asof(
            pages.select(DOC, "page", pl.col("char_start").alias("_last")).sort("_last"),
            on="_last",
            by=DOC,
            strategy="backward",
            check_sortedness=False,  # both sides are sorted on "_last" (Polars cannot check it within groups)
        )
        .select("node_id", pl.col("page").alias("page_end"))
    )
    nodes = nodes.join(page_of_end, on="node_id", how="left").with_columns(pl.col("parent_id").fill_null(root_id()))
    roots = docs.select(
        DOC,
        root_id().alias("node_id"),
        pl.lit(None, pl.String).alias("parent_id"),
        pl.lit(0, pl.Int64).alias("level"),
        pl.lit("", pl.String).alias("title"),
        pl.lit(ROOT_SOURCE).alias("source"),
        "page_start",
        "page_end",
        pl.lit(0, pl.Int64).alias("char_start"),
        "char_end",
        pl.lit([], pl.List(pl.String)).alias("heading_path"),
    )
    cols = list(SECTIONS)
    return (
        pl.concat([roots.select(cols), nodes.select(cols)])
        .select([pl.col(c).cast(t) for c, t in SECTIONS.items()])
        .sort(DOC, "char_start", "level")
    )


def node_of() -> pl.Expr:
    """The structure node a fragment belongs to: its own for a section, else its parent section, else the root."""
    return pl.when(pl.col("kind") == "section").then(pl.col("fragment_id")).otherwise(pl.coalesce(pl.col("parent_id"), root_id()))

"""Answers read from document order: the step that comes after a named one, and the Nth or last
item of a list or procedure.

A question's parsed `sequence_after` (the step it names) or `sequence_position` (1.., -1 for the
last) sends it here. Its anchor is found as any question's answer is ranked (`rank_candidates`,
most of its keyword groups held); the answer is then read from the anchor's document in order,
item by item. Lists reach `ask` in many shapes (an HTML item per fragment, "2." on a line of its
own before its text, JSON records whose keys are units of their own), so an item is told by what
any of them shows: a new fragment, a list marker or a "Step N" label, and at least MIN_WORDS
words (a bare marker or a record's keys is no item).
"""

from __future__ import annotations

import polars as pl

MIN_WORDS = 4  # letter-words a unit needs to be an item ("2." or "[8].id = VON-009" are not)
MARKER = r"(?i)^\s*(?:\(?\d{1,3}[.)]|\(?[a-z][.)]\s|\((?:[ivxl]+|[a-z]|\d+)\)|[-•*▪◦‣]\s|step\s+\d+\b)"
STEP_LABEL = r"(?i)\bstep\s+(\d{1,3})\b"


def items(units: pl.DataFrame) -> pl.DataFrame:
    """The units in document order with `_item`: the number of the item each belongs to in its
    document (from 1; 0 before the first), `_starts`: whether it opens that item, and `_step`: the
    N of its "Step N" label."""
    words = pl.col("text").str.count_matches(r"\p{L}{2,}")
    u = units.sort("doc_id", "char_start").with_columns(
        (words >= MIN_WORDS).alias("_substantive"),
        pl.col("text").str.contains(MARKER).alias("_marker"),
        pl.col("text").str.extract(STEP_LABEL, 1).cast(pl.Int64).alias("_step"),
    )
    u = u.with_columns(
        # the fragment of the previous substantive unit of the same document
        pl.when(pl.col("_substantive")).then(pl.col("fragment_id")).forward_fill().shift(1).over("doc_id").alias("_prev_fragment"),
        (~pl.col("_substantive") & pl.col("_marker")).shift(1).over("doc_id").fill_null(False).alias("_after_marker"),
    )
    starts = pl.col("_substantive") & (
        (pl.col("fragment_id") != pl.col("_prev_fragment")).fill_null(True)
        | pl.col("_marker")
        | pl.col("_after_marker")
        | pl.col("_step").is_not_null()
    )
    return u.with_columns(starts.alias("_starts")).with_columns(pl.col("_starts").cast(pl.Int64).cum_sum().over("doc_id").alias("_item"))


LISTED = (pl.col("kind") == "list_item") | pl.col("_marker") | pl.col("_step").is_not_null()  # an item that shows it is one
LEAD_IN = pl.col("text").str.strip_chars().str.ends_with(":")  # "... all of the following:"


def read_in_order(anchors: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """(query_id, unit columns of the answer) for each anchor (query_id, doc_id, char_start,
    sequence_position, sequence_after).

    For a question naming a step: the item after the anchor's. For a position (1.., -1 the last):
    only when the anchor leads a list in or is an item of one (prose is answered as prose), the
    Nth item of that list: of the run of items showing they are items (a list marker, a list
    item, a "Step N" label), else of the anchor's section (its heading path). When the anchor is
    labelled "Step M", the unit labelled "Step M+1" or "Step N" comes first."""
    it = items(units.join(anchors.select("doc_id").unique(), on="doc_id", how="semi"))
    # runs of consecutive items that show they are items, numbered per document
    firsts = (
        it.filter(pl.col("_starts"))
        .with_columns(LISTED.alias("_listed"))
        .with_columns((~pl.col("_listed")).cast(pl.Int64).cum_sum().over("doc_id").alias("_run"))
    )
    a = anchors.join(
        it.select("doc_id", "char_start", "_item", "heading_path", "text", "kind", "_marker", "_step"), on=["doc_id", "char_start"]
    )
    a = a.filter(pl.col("sequence_after").is_not_null() | LEAD_IN | LISTED).with_columns(
        # the list a lead-in opens is the run of the item after it
        (pl.col("_item") + LEAD_IN.cast(pl.Int64)).alias("_list_item"),
    )
    a = (
        a.join(firsts.select("doc_id", pl.col("_item").alias("_list_item"), "_run", "_listed"), on=["doc_id", "_list_item"], how="left")
        .join(_span(firsts.filter(pl.col("_listed")), ["doc_id", "_run"], "_run"), on=["doc_id", "_run"], how="left")
        .join(_span(firsts, ["doc_id", "heading_path"], "_section"), on=["doc_id", "heading_path"], how="left")
        .with_columns(
            pl.when(pl.col("_listed")).then(pl.col("_run_first")).otherwise(pl.col("_section_first")).alias("_first"),
            pl.when(pl.col("_listed")).then(pl.col("_run_last")).otherwise(pl.col("_section_last")).alias("_last"),
        )
    )
    want = (
        pl.when(pl.col("sequence_after").is_not_null())
        .then(pl.col("_item") + 1)
        .when(pl.col("sequence_position") == -1)
        .then(pl.col("_last"))
        .when(LEAD_IN)
        .then(pl.col("_item") + pl.col("sequence_position"))
        .otherwise(pl.col("_first") + pl.col("sequence_position") - 1)
    )
    by_item = a.select("query_id", "doc_id", want.alias("_item")).join(firsts, on=["doc_id", "_item"])
    labelled = (
        a.filter(pl.col("_step").is_not_null())
        .select(
            "query_id",
            "doc_id",
            pl.when(pl.col("sequence_after").is_not_null()).then(pl.col("_step") + 1).otherwise(pl.col("sequence_position")).alias("_step"),
        )
        .join(firsts, on=["doc_id", "_step"])
    )
    cols = ["query_id", *units.columns]
    found = pl.concat(
        [labelled.select(cols).with_columns(pl.lit(0).alias("_by")), by_item.select(cols).with_columns(pl.lit(1).alias("_by"))]
    )
    return found.sort("query_id", "_by", "char_start").group_by("query_id", maintain_order=True).first().drop("_by")


def _span(firsts: pl.DataFrame, keys: list[str], name: str) -> pl.DataFrame:
    """The first and last item (`{name}_first`, `{name}_last`) of each group of item starts."""
    return firsts.group_by(keys).agg(pl.col("_item").min().alias(f"{name}_first"), pl.col("_item").max().alias(f"{name}_last"))


__all__ = ["items", "read_in_order"]

"""Sentences of the fragments: the unit a detector reads, with its code-point offsets in the document."""

from __future__ import annotations

import polars as pl

from ..fragments import SENTENCE
from ..params import AffordanceParams


def sentences(fragments: pl.LazyFrame, p: AffordanceParams) -> pl.LazyFrame:
    """One row per sentence of every non-heading fragment, trimmed, with document offsets."""
    n = pl.col("sentence").str.len_chars()
    lead = n - pl.col("sentence").str.strip_chars_start().str.len_chars()
    return (
        fragments.filter(pl.col("kind") != "section")
        .select(
            "fragment_id", "doc_id", "heading_path", "char_start", "char_end", pl.col("text").str.extract_all(SENTENCE).alias("sentence")
        )
        .explode("sentence")
        .filter(pl.col("sentence").is_not_null())
        .with_columns((pl.col("char_start") + n.cum_sum().over("fragment_id") - n).alias("raw_start"))
        .with_columns((pl.col("raw_start") + lead).alias("sent_start"), pl.col("sentence").str.strip_chars())
        .filter(pl.col("sentence").str.len_chars().is_between(p.min_sentence_chars, p.max_sentence_chars))
        .with_columns((pl.col("sent_start") + pl.col("sentence").str.len_chars()).alias("sent_end"))
        .drop("raw_start")
    )


def all_sentences(fragments: pl.LazyFrame, p: AffordanceParams) -> pl.LazyFrame:
    """Every sentence, whatever its length: the units a reader can load (retrieval, ask)."""
    return sentences(fragments, AffordanceParams(**{**p.model_dump(), "min_sentence_chars": 1, "max_sentence_chars": 10**9}))

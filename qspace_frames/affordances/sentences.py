"""Sentences of the fragments: the unit a detector reads, with its code-point offsets in the document."""

from __future__ import annotations

import polars as pl

from ..fragments import FIELD_BLOCK, SENTENCE
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
        .with_columns(_field_lines(pl.col("sentence")))
        .explode("sentence")
        .with_columns((pl.col("char_start") + n.cum_sum().over("fragment_id") - n).alias("raw_start"))
        .with_columns((pl.col("raw_start") + lead).alias("sent_start"), pl.col("sentence").str.strip_chars())
        .filter(pl.col("sentence").str.len_chars().is_between(p.min_sentence_chars, p.max_sentence_chars))
        .with_columns((pl.col("sent_start") + pl.col("sentence").str.len_chars()).alias("sent_end"))
        .drop("raw_start")
    )


def _field_lines(sentence: pl.Expr) -> pl.Expr:
    """A sentence as a list of sentences: its lines when it is a block of header fields
    (FIELD_BLOCK), each with its line break so that they still tile the fragment's text, else itself."""
    return pl.when(sentence.str.contains(FIELD_BLOCK)).then(sentence.str.split("\n", inclusive=True)).otherwise(pl.concat_list(sentence))


def all_sentences(fragments: pl.LazyFrame, p: AffordanceParams) -> pl.LazyFrame:
    """Every sentence, whatever its length: the units a reader can load (retrieval, ask)."""
    return sentences(fragments, AffordanceParams(**{**p.model_dump(), "min_sentence_chars": 1, "max_sentence_chars": 10**9}))

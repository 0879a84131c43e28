"""Sentences of the fragments: the unit a detector reads, with its code-point offsets in the document."""

from __future__ import annotations

import polars as pl

from ..corpus.loaders.records import ELEMENT, ELEMENT_LINES
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
        .with_columns(_array_elements(pl.col("sentence")))
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


# a run of a JSON or YAML document's leaf lines with an array index ("4217[8].name = Australian
# Dollar", corpus.loaders.records.ELEMENT_LINES): its lines of one element belong together, those of
# the next do not (a window of them may start or end inside a line)
def _elements(text: str) -> list[str]:
    """The lines of `text` grouped by the array element their path ends in (ELEMENT), each group
    with its line breaks (the groups tile the text)."""
    lines = text.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + [lines[-1]]
    groups: list[list[str]] = []
    last = None
    for line in lines:
        m = ELEMENT.match(line)
        key = m.group(1) if m else last  # an unindexed or empty last line stays with its element
        if not groups or key != last:
            groups.append([])
        groups[-1].append(line)
        last = key
    return ["".join(g) for g in groups]


def _array_elements(sentence: pl.Expr) -> pl.Expr:
    """A sentence as a list of sentences: one per array element when it is a run of indexed leaf
    lines (ELEMENT_LINES: the currencies of an ISO 4217 list, cut into windows of several each), so
    that a question about one ("the numeric code of the Australian Dollar") reads that element's
    lines, not a window's of the next currencies; else itself."""

    def split(s: pl.Series) -> pl.Series:
        rows = s.struct.unnest().with_row_index("_i")
        runs = rows.filter("r")
        split = runs.select("_i", pl.Series("_parts", [_elements(t) for t in runs["s"].to_list()], dtype=pl.List(pl.String)))
        return (
            rows.join(split, on="_i", how="left", maintain_order="left")
            .select(pl.when(pl.col("r")).then("_parts").otherwise(pl.concat_list("s")))
            .to_series()
        )

    runs = sentence.str.contains(ELEMENT_LINES)
    return pl.struct(sentence.alias("s"), runs.alias("r")).map_batches(split, return_dtype=pl.List(pl.String)).alias("sentence")


def all_sentences(fragments: pl.LazyFrame, p: AffordanceParams) -> pl.LazyFrame:
    """Every sentence, whatever its length: the units a reader can load (retrieval, ask)."""
    return sentences(fragments, AffordanceParams(**{**p.model_dump(), "min_sentence_chars": 1, "max_sentence_chars": 10**9}))

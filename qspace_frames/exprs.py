"""Named expressions shared by several stages."""

from __future__ import annotations

import math

import polars as pl

# an inventory row of a loaded document: a duplicate file's row holds the same doc_id under another
# path, so the inventory is joined on doc_id through these rows only (a quote is cited from the file
# that was read, each sentence once)
LOADED_ROW = pl.col("load_status") == "loaded"


def exact_sum(col: str) -> pl.Expr:
    """Correctly rounded float sum (math.fsum): the same bits whatever the row order or the
    way Polars chunked the rows across threads, which a plain `.sum()` does not promise."""
    return pl.col(col).implode().map_elements(lambda xs: math.fsum(xs), return_dtype=pl.Float64).first()


def exact_mean(col: str) -> pl.Expr:
    """Mean with an exact (fsum) numerator, for the same reason as `exact_sum`."""
    return pl.col(col).implode().map_elements(lambda xs: math.fsum(xs) / len(xs) if len(xs) else None, return_dtype=pl.Float64).first()


def jaccard(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """|a ∩ b| / |a ∪ b| of two list columns as sets; two empty sets score 0 (nothing shared)."""
    union = a.list.set_union(b).list.len()
    return pl.when(union == 0).then(0.0).otherwise(a.list.set_intersection(b).list.len() / union)


def exact_sums(frame: pl.DataFrame | pl.LazyFrame, keys: list[str], sums: dict[str, str]) -> pl.DataFrame:
    """Per group of `keys`, `math.fsum` of each column in `sums` (output name -> input column):
    the same bits as `exact_sum`, without a Python call per group. A group of one or two values
    is summed by Polars (one IEEE addition is already correctly rounded, which is all fsum
    promises; `+ 0.0` turns fsum's -0.0 into its 0.0); only larger groups go through fsum."""
    cols = list(dict.fromkeys(sums.values()))
    g = (
        frame.lazy()
        .group_by(keys)
        .agg(
            pl.len().alias("_n"),
            *[(pl.col(c).sum() + 0.0).alias(f"_s_{c}") for c in cols],
            *[pl.col(c).filter(pl.len() > 2).alias(f"_l_{c}") for c in cols],
        )
        .collect()
    )
    big = g.filter(pl.col("_n") > 2)
    small = g.filter(pl.col("_n") <= 2).select(*keys, *[pl.col(f"_s_{c}").alias(o) for o, c in sums.items()])
    exact = {c: pl.Series([math.fsum(v) for v in big[f"_l_{c}"].to_list()], dtype=pl.Float64) for c in cols}
    big = big.select(*keys).with_columns([exact[c].alias(o) for o, c in sums.items()])
    return pl.concat([small, big.cast(small.schema)])


# ---- interval arithmetic as frames --------------------------------------------------------------


def merge_intervals(df: pl.LazyFrame, keys: list[str], start: str = "start", end: str = "end") -> pl.LazyFrame:
    """Union of half-open intervals per key: overlapping or touching intervals become one.

    After sorting by start, an interval opens a new block when it starts past the furthest end
    seen so far in its group; each block is one merged interval. Empty intervals are dropped.
    """
    prev_end = pl.col(end).cum_max().shift(1).over(keys)
    return (
        df.filter(pl.col(end) > pl.col(start))
        .sort([*keys, start, end])
        .with_columns(prev_end.alias("_prev_end"))
        .with_columns((pl.col("_prev_end").is_null() | (pl.col(start) > pl.col("_prev_end"))).alias("_new"))
        .with_columns(pl.col("_new").cum_sum().over(keys).alias("_block"))
        .group_by([*keys, "_block"])
        .agg(pl.col(start).min(), pl.col(end).max())
        .drop("_block")
        .sort([*keys, start])
    )


def overlap_chars(a_start: pl.Expr, a_end: pl.Expr, b_start: pl.Expr, b_end: pl.Expr) -> pl.Expr:
    """Characters shared by [a_start, a_end) and [b_start, b_end); 0 when disjoint."""
    return (pl.min_horizontal(a_end, b_end) - pl.max_horizontal(a_start, b_start)).clip(lower_bound=0)

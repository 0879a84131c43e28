"""Named expressions shared by several stages."""
from __future__ import annotations

import math

import polars as pl


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

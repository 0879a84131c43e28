"""Small frame utilities shared by the stages and the runtime."""

from __future__ import annotations

from typing import Iterable, Iterator

import polars as pl


def detached(df: pl.DataFrame) -> pl.DataFrame:
    """A copy of a few rows kept from a large batch that owns its strings: a filtered Polars frame
    still points into its parent's string buffers, so keeping it would keep the whole batch."""
    return pl.from_arrow(df.to_arrow()) if df.height else df


def at_least_one(batches: Iterable[pl.DataFrame], schema: dict) -> Iterator[pl.DataFrame]:
    """The batches, or one empty frame of `schema` when there are none (no document, no text), so
    a table streamed from them still exists with its schema."""
    n = 0
    for n, b in enumerate(batches, 1):
        yield b
    if not n:
        yield pl.DataFrame(schema=schema)


def as_lazy(df: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    return df.lazy() if isinstance(df, pl.DataFrame) else df

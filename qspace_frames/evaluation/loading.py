"""What a strategy loads: its units of each question in its own rank order, charged their exact
token counts, up to the unit that crosses the token budget (schema `metrics.RETRIEVALS`).
"""

from __future__ import annotations

import polars as pl

from ..frames import as_lazy
from ..params import EvalParams
from ..schemas import conform
from ..tokens import count_tokens
from .metrics import RETRIEVALS


def gold_queries(gold: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """The questions to serve: resolved gold with status "ok"."""
    g = as_lazy(gold)
    names = g.collect_schema().names()
    if "doc_id" not in names:
        raise ValueError("strategies need resolved gold (evaluation.resolve_gold adds doc_id and status)")
    if "status" in names:
        g = g.filter(pl.col("status") == "ok")
    return g.select(pl.col("id").alias("query_id"), "doc_id", "question")


def load_in_order(ordered: pl.LazyFrame, strategy: str, nodes: pl.Expr, p: EvalParams) -> pl.DataFrame:
    """Rank the units of each query in frame order and stop after the unit crossing max_tokens.

    `ordered` must be sorted by query_id and then the strategy's own order; `nodes` computes
    nodes_visited and may use the column `rank`.
    """
    before = (pl.col("n_tokens").cum_sum() - pl.col("n_tokens")).over("query_id")
    out = (
        ordered.with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query_id").alias("rank"),
            before.alias("_before"),
            pl.lit(strategy).alias("strategy"),
        )
        .filter(pl.col("_before") < p.max_tokens)
        .with_columns(nodes.alias("nodes_visited"))
        .sort(["query_id", "rank"])
    )
    return conform(out, RETRIEVALS).collect()


def count_ranked(
    ranked: pl.DataFrame, text: str, p: EvalParams, chars_per_token: float = 6.0, known: pl.DataFrame | None = None
) -> pl.DataFrame:
    """`ranked` (sorted by query_id, then load order) with the exact token count `n_tokens` of
    `text`, kept only as far as `load_in_order` can load: each query's units up to the one whose
    cumulative count reaches max_tokens. Units are counted in windows of their cumulative length
    in characters (first `chars_per_token` characters per token of max_tokens, then each window
    twice the last), so a query seldom pays for many units past its budget. Texts in `known`
    (`text`, n_tokens: counted before, by the same encoding) are not encoded again."""
    n_chars = pl.col(text).str.len_chars().fill_null(0)
    r = ranked.with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).over("query_id").alias("_r"),
        (n_chars.cum_sum() - n_chars).over("query_id").alias("_chars_before"),
    )
    counted = r.clear().with_columns(pl.lit(None, dtype=pl.Int64).alias("n_tokens"))
    units = r.group_by("query_id").agg(pl.len().alias("_units"))
    todo, lo, hi = units.select("query_id"), 0, int(chars_per_token * p.max_tokens)
    while todo.height:
        part = r.join(todo, on="query_id", how="semi").filter(pl.col("_chars_before").is_between(lo, hi, closed="left"))
        part = _counted(part, text, p.encoding, known)
        counted = pl.concat([counted, part])
        # a query is done once its counted units reach max_tokens or it has none left
        full = counted.group_by("query_id").agg(pl.col("n_tokens").sum().alias("_sum"), pl.len().alias("_n"))
        todo = (
            todo.join(units, on="query_id")
            .join(full, on="query_id", how="left")
            .filter((pl.col("_sum").fill_null(0) < p.max_tokens) & (pl.col("_n").fill_null(0) < pl.col("_units")))
            .select("query_id")
        )
        lo, hi = hi, hi * 2
    return counted.sort("query_id", "_r").drop("_r", "_chars_before")


def _counted(part: pl.DataFrame, text: str, encoding: str, known: pl.DataFrame | None) -> pl.DataFrame:
    """`part` with the token count `n_tokens` of its `text`, read from `known` where it is there."""
    if known is None:
        return part.with_columns(pl.Series("n_tokens", count_tokens(part[text].to_list(), encoding), dtype=pl.Int64))
    part = part.join(known.select(text, pl.col("n_tokens").cast(pl.Int64)), on=text, how="left", maintain_order="left")
    new = part["n_tokens"].is_null().arg_true()
    counts = pl.Series(count_tokens(part[text].gather(new).to_list(), encoding), dtype=pl.Int64)
    return part.with_columns(part["n_tokens"].scatter(new, counts))

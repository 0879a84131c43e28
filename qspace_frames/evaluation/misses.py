"""Why a strategy loads no gold within a budget: each missed question filed under one reason.

A question is missed at budget B when none of its gold characters are among what the strategy
loaded before its cumulative token count reached B (`metrics.per_query`, recall 0). Its reason is
the first of REASONS that holds, read from the fragments its gold lies in (the non-section
fragments overlapping a gold span) and the fragments of the units loaded within B:

- gold in a table: a gold span lies in a table row;
- right fragment, wrong sentence: a fragment holding gold was entered, but the sentences loaded
  from it were others;
- gold split across fragments: the gold lies in several fragments and none was entered;
- other part ranked first: the gold lies in one fragment, never entered.

`first_gold_rank` and `tokens_to_first_gold` say how far past the budget the gold was reached.
"""

from __future__ import annotations

import polars as pl

from ..exprs import overlap_chars
from ..frames import as_lazy
from .gold import _gold_intervals

REASONS: tuple[tuple[str, pl.Expr], ...] = (
    ("gold in a table", pl.col("in_table")),
    ("right fragment, wrong sentence", pl.col("entered")),
    ("gold split across fragments", pl.col("gold_fragments") > 1),
    ("other part ranked first", pl.lit(True)),
)
MISSES = {
    "strategy": pl.String,
    "budget": pl.Int64,
    "query_id": pl.String,
    "doc_id": pl.String,
    "reason": pl.String,
    "gold_fragments": pl.Int64,  # non-section fragments overlapping the gold
    "first_gold_rank": pl.Int64,  # rank of the first loaded unit overlapping gold (null: never, within max_tokens)
    "tokens_to_first_gold": pl.Int64,
}


def misses(
    retrievals: pl.DataFrame | pl.LazyFrame,
    per_query: pl.DataFrame | pl.LazyFrame,
    gold_resolved: pl.DataFrame | pl.LazyFrame,
    fragments: pl.DataFrame | pl.LazyFrame,
    budgets: list[int],
) -> pl.DataFrame:
    """One row per (strategy, budget, question) the strategy misses at that budget (schema MISSES)."""
    out = [pl.DataFrame(schema=MISSES)]
    pq = as_lazy(per_query)
    gold = as_lazy(gold_resolved).select(pl.col("id").alias("query_id"), "doc_id", "gold_spans")
    frags = as_lazy(fragments).filter(pl.col("kind") != "section").select("fragment_id", "doc_id", "kind", "char_start", "char_end")
    before = (pl.col("n_tokens").cum_sum() - pl.col("n_tokens")).over("strategy", "query_id")
    runs = as_lazy(retrievals).sort("strategy", "query_id", "rank").with_columns(before.alias("_before"))
    for budget in budgets:
        missed = pq.filter(pl.col(f"recall_at_{budget}") == 0).select(
            "strategy", "query_id", "doc_id", "first_gold_rank", "tokens_to_first_gold"
        )
        spans = _gold_intervals(gold.join(missed.select("query_id").unique(), on="query_id"), ["query_id", "doc_id"])
        holding = (
            spans.join(frags, on="doc_id")
            .filter(overlap_chars(pl.col("start"), pl.col("end"), pl.col("char_start"), pl.col("char_end")) > 0)
            .select("query_id", "fragment_id", "kind")
            .unique()
        )
        loaded = runs.filter(pl.col("_before") < budget).join(missed, on=["strategy", "query_id"], how="semi")
        entered = (
            holding.join(loaded.select("strategy", "query_id", "fragment_id"), on=["query_id", "fragment_id"])
            .select("strategy", "query_id")
            .unique()
            .with_columns(pl.lit(True).alias("entered"))
        )
        facts = holding.group_by("query_id").agg(
            pl.col("fragment_id").n_unique().cast(pl.Int64).alias("gold_fragments"),
            (pl.col("kind") == "table_row").any().alias("in_table"),
        )
        reason = pl.coalesce([pl.when(rule).then(pl.lit(name)) for name, rule in REASONS])
        out.append(
            missed.join(facts, on="query_id", how="left")
            .join(entered, on=["strategy", "query_id"], how="left")
            .with_columns(
                pl.col("gold_fragments").fill_null(0),
                pl.col("in_table").fill_null(False),
                pl.col("entered").fill_null(False),
                pl.lit(budget, dtype=pl.Int64).alias("budget"),
            )
            .with_columns(reason.alias("reason"))
            .select([pl.col(c).cast(t) for c, t in MISSES.items()])
            .collect()
        )
    return pl.concat(out).sort("strategy", "budget", "query_id")


def reason_order() -> pl.DataFrame:
    """(_o, reason): REASONS numbered in their order."""
    return pl.DataFrame({"reason": [r for r, _ in REASONS]}).with_row_index("_o")


def reasons(m: pl.DataFrame, n_questions: int) -> pl.DataFrame:
    """(reason, questions, share of all questions): misses (of one strategy at one budget) counted
    by reason, in REASONS order, every reason shown."""
    order = reason_order()
    total = max(n_questions, 1)
    return (
        order.join(m.group_by("reason").agg(pl.len().cast(pl.Int64).alias("questions")), on="reason", how="left")
        .with_columns(pl.col("questions").fill_null(0))
        .with_columns((pl.col("questions") / total).round(3).alias("share"))
        .sort("_o")
        .drop("_o")
    )

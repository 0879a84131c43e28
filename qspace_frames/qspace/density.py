"""Stage 7: question density.

How much demand a prototype carries, from how widely the corpus supports it (fragments, documents)
and how costly a wrong answer to its intent would be (a prior per intent). `p_q` normalises density
into a probability over prototypes: the query distribution the tree stages minimise cost under.

    support_norm  = n_fragments / max(n_fragments)
    document_norm = n_docs / max(n_docs)
    importance    = w_risk * risk_prior + w_support * support_norm + w_doc * document_norm
    density       = d_support * support_norm + d_importance * importance + d_doc * document_norm
    p_q           = density / sum(density)
"""

from __future__ import annotations

import polars as pl

from ..exprs import exact_sum
from ..params import DensityParams
from ..schemas import conform

DENSITY = {
    "prototype_id": pl.String,
    "intent": pl.String,
    "canonical_name": pl.String,
    "n_fragments": pl.Int64,
    "n_docs": pl.Int64,
    "support_norm": pl.Float64,
    "document_norm": pl.Float64,
    "risk_prior": pl.Float64,
    "importance": pl.Float64,
    "density": pl.Float64,
    "p_q": pl.Float64,
    "rank": pl.Int64,  # 1 = densest; ties broken by prototype_id
}


def _norm(col: str) -> pl.Expr:
    # a corpus where every count is 0 has no support to spread: 0, not NaN
    top = pl.col(col).max()
    return pl.when(top > 0).then(pl.col(col) / top).otherwise(0.0)


def density(prototypes: pl.LazyFrame, p: DensityParams) -> pl.LazyFrame:
    """One row per prototype (schema DENSITY), sorted by density desc, then prototype_id."""
    risk = pl.col("intent").replace_strict(p.intent_risk_prior, default=p.default_risk, return_dtype=pl.Float64)
    importance = p.w_risk * pl.col("risk_prior") + p.w_support * pl.col("support_norm") + p.w_doc * pl.col("document_norm")
    dens = p.d_support * pl.col("support_norm") + p.d_importance * pl.col("importance") + p.d_doc * pl.col("document_norm")
    # summing values in sorted order makes the total independent of row order (float addition is not associative)
    total = exact_sum("density")
    p_q = pl.when(total > 0).then(pl.col("density") / total).otherwise(1.0 / pl.len())
    out = (
        prototypes.select("prototype_id", "intent", "canonical_name", "n_fragments", "n_docs")
        .with_columns(
            _norm("n_fragments").alias("support_norm"),
            _norm("n_docs").alias("document_norm"),
            risk.alias("risk_prior"),
        )
        .with_columns(importance.alias("importance"))
        .with_columns(dens.alias("density"))
        .with_columns(p_q.alias("p_q"))
        .sort(["density", "prototype_id"], descending=[True, False])
        .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("rank"))
    )
    return conform(out, DENSITY)

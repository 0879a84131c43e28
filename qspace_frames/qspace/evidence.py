"""Stages 9 and 10: evidence units and evidence co-demand.

An evidence unit is one role value found in a fragment ("$25,000" as amount_threshold at
offsets 812-819), taken from the roles of *direct* affordances (partial ones carry no values).
Several questions often rest on the same value; they share one unit that lists them all.

Co-demand says which roles questions need together:
    S(e_a, e_b) = sum over prototypes q of p(q) * I(e_a in q) * I(e_b in q)
with p(q) the density's p_q and "e in q" meaning role e is in q's role signature. The diagonal
S(e, e) is the total demand for role e.
"""

from __future__ import annotations

import polars as pl

from ..exprs import exact_sum
from ..ids import id_expr
from ..params import EvidenceParams
from ..schemas import conform

EVIDENCE = {
    "evidence_id": pl.String,  # content id of (fragment_id, role, value_start, value_end)
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "role": pl.String,
    "value": pl.String,
    "value_start": pl.Int64,  # code-point offsets of the value in the document text
    "value_end": pl.Int64,
    "span": pl.String,  # span of the best parent affordance (highest confidence, then smallest id)
    "span_start": pl.Int64,
    "span_end": pl.Int64,
    "confidence": pl.Float64,  # max parent confidence x confidence_factor
    "prototype_ids": pl.List(pl.String),
    "n_affordances": pl.Int64,
}

CODEMAND = {
    "role_a": pl.String,  # role_a <= role_b; role_a == role_b is the role's total demand
    "role_b": pl.String,
    "S": pl.Float64,
    "n_prototypes": pl.Int64,  # prototypes demanding both roles
}


KEY = ["fragment_id", "role", "value", "value_start", "value_end"]


def evidence(affordances: pl.LazyFrame, p: EvidenceParams = EvidenceParams()) -> pl.LazyFrame:
    """Direct affordances in; evidence units out (schema EVIDENCE), sorted by fragment, offset, role."""
    best = lambda c: pl.col(c).sort_by(["confidence", "affordance_id"], descending=[True, False]).first()  # noqa: E731
    out = (
        affordances.filter(pl.col("support") == "direct")
        .select("affordance_id", "fragment_id", "doc_id", "prototype_id", "confidence", "span", "span_start", "span_end", "roles")
        .explode("roles")
        .filter(pl.col("roles").is_not_null())
        .with_columns(
            pl.col("roles").struct.field("role"),
            pl.col("roles").struct.field("value"),
            pl.col("roles").struct.field("start").alias("value_start"),
            pl.col("roles").struct.field("end").alias("value_end"),
        )
        .group_by(KEY)
        .agg(
            best("doc_id"),
            best("span"),
            best("span_start"),
            best("span_end"),
            (pl.col("confidence").max() * p.confidence_factor).alias("confidence"),
            pl.col("prototype_id").drop_nulls().unique().sort().alias("prototype_ids"),
            # an affordance naming one value twice still counts once
            pl.col("affordance_id").n_unique().cast(pl.Int64).alias("n_affordances"),
        )
        # value is doc_text[value_start:value_end] (checked upstream), so the offsets identify it
        .with_columns(id_expr("ev", "fragment_id", "role", "value_start", "value_end").alias("evidence_id"))
        .sort(["fragment_id", "value_start", "role", "value_end", "value"])
    )
    return conform(out, EVIDENCE)


def codemand(prototypes: pl.LazyFrame, density: pl.LazyFrame) -> pl.LazyFrame:
    """Role pairs with S > 0 (schema CODEMAND), sorted by S desc, role_a, role_b."""
    demand = (
        prototypes.select("prototype_id", pl.col("role_signature").list.unique().alias("role"))
        .explode("role")
        .filter(pl.col("role").is_not_null())
        .join(density.select("prototype_id", "p_q"), on="prototype_id", how="inner")
    )
    out = (
        demand.join(demand.select("prototype_id", pl.col("role").alias("role_b")), on="prototype_id")
        .filter(pl.col("role") <= pl.col("role_b"))
        .group_by(pl.col("role").alias("role_a"), "role_b")
        .agg(
            # sum in sorted order so the total does not depend on row order
            exact_sum("p_q").alias("S"),
            pl.col("prototype_id").n_unique().cast(pl.Int64).alias("n_prototypes"),
        )
        .filter(pl.col("S") > 0)
        .sort(["S", "role_a", "role_b"], descending=[True, False, False])
    )
    return conform(out, CODEMAND)

"""Stage 5: question prototypes and fragment-question edges.

Affordances that share an intent, a slot signature and an evidence-role signature are one
question prototype: "who approves, given an amount threshold and a region" is one prototype
however many fragments answer it. Each prototype gets a readable canonical name and question,
unique across the corpus (two prototypes never share a name), and the list of fragments and
documents that support it.
"""

from __future__ import annotations

import math

import polars as pl

from ..affordances.rules import DETECTORS

# The evidence role that *is* the answer of each intent; the other roles are the question's givens.
ANSWER_ROLE = {
    "approval_lookup": "approver_role",
    "threshold_lookup": "amount_threshold",
    "owner_lookup": "owner_team",
    "effective_date_lookup": "effective_date",
    "applicability_check": "applicability_scope",
    "exception_lookup": "exception_condition",
    "rule_lookup": "obligation",
    "metric_lookup": "metric_value",
    "variance_explanation": "variance_driver",
    "sla_lookup": "sla_duration",
    "next_step_lookup": "step",
    "escalation_lookup": "escalation_target",
}
BASE_QUESTION = {
    "approval_lookup": "Who must approve it",
    "threshold_lookup": "What amount threshold applies",
    "owner_lookup": "Who owns or is responsible for it",
    "effective_date_lookup": "When does it take effect",
    "applicability_check": "Who or what does it apply to",
    "exception_lookup": "What exceptions or prohibitions apply",
    "rule_lookup": "What is required",
    "metric_lookup": "What was the value of the metric",
    "variance_explanation": "What explains the variance",
    "sla_lookup": "What is the time limit",
    "next_step_lookup": "What is the next step",
    "escalation_lookup": "Who is it escalated to",
}
_SHAPE = {d.intent: d.answer_shape for d in DETECTORS}
_TYPE = {d.intent: d.answer_type for d in DETECTORS}

PROTOTYPES = {
    "prototype_id": pl.String,
    "intent": pl.String,
    "support": pl.String,
    "slot_signature": pl.List(pl.String),
    "role_signature": pl.List(pl.String),
    "canonical_name": pl.String,
    "canonical_question": pl.String,
    "answer_shape": pl.String,
    "answer_type": pl.String,
    "example_questions": pl.List(pl.String),
    "fragment_ids": pl.List(pl.String),
    "doc_ids": pl.List(pl.String),
    "n_fragments": pl.Int64,
    "n_docs": pl.Int64,
    "n_affordances": pl.Int64,
    "n_direct": pl.Int64,
    "n_partial": pl.Int64,
    "mean_confidence": pl.Float64,
}
EDGES = {
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "prototype_id": pl.String,
    "support": pl.String,
    "confidence": pl.Float64,
    "span": pl.String,
    "span_start": pl.Int64,
    "span_end": pl.Int64,
    "n_affordances": pl.Int64,
}
N_EXAMPLES = 3


def _givens(intent: pl.Expr, roles: pl.Expr) -> pl.Expr:
    """The roles a question is conditioned on: every role but the answer's own."""
    answer = intent.replace_strict(ANSWER_ROLE, default=None, return_dtype=pl.String)
    return pl.struct(roles.alias("r"), answer.alias("a")).map_batches(
        lambda s: pl.Series([[x for x in (row["r"] or []) if x != row["a"]] for row in s.to_list()], dtype=pl.List(pl.String)),
        return_dtype=pl.List(pl.String),
    )


def _names(protos: pl.LazyFrame) -> pl.LazyFrame:
    readable = pl.col("role_signature").list.eval(pl.element().str.replace_all("_", " ")).list.join(", ")
    base = (
        pl.when(pl.col("support") == "partial")
        .then(pl.col("intent") + pl.lit("(process)"))
        .otherwise(pl.col("intent") + pl.lit("(") + pl.col("role_signature").list.join(", ") + pl.lit(")"))
    )
    givens = _givens(pl.col("intent"), pl.col("role_signature")).list.eval(pl.element().str.replace_all("_", " ")).list.join(" and ")
    question = pl.col("intent").replace_strict(BASE_QUESTION, default="What does it say", return_dtype=pl.String)
    question = (
        pl.when(pl.col("support") == "partial")
        .then(question + pl.lit(", as a process described in the text?"))
        .when(givens != "")
        .then(question + pl.lit(", given its ") + givens + pl.lit("?"))
        .otherwise(question + pl.lit("?"))
    )
    extra = pl.col("slot_signature").list.set_difference(pl.col("role_signature")).list.sort().list.join(", ")
    return (
        protos.with_columns(base.alias("canonical_name"), question.alias("canonical_question"), readable.alias("_readable"))
        # a name shared by prototypes that differ in their typed slots names those slots too
        .with_columns(
            pl.when(pl.len().over("canonical_name") > 1)
            .then(pl.col("canonical_name") + pl.lit(" [typed: ") + pl.when(extra == "").then(pl.lit("none")).otherwise(extra) + pl.lit("]"))
            .otherwise(pl.col("canonical_name"))
            .alias("canonical_name")
        )
        .drop("_readable")
    )


RANK = {"by": ["confidence", "question", "affordance_id"], "descending": [True, False, False]}  # a prototype's affordances, best first


def prototype_parts(aff: pl.LazyFrame) -> pl.LazyFrame:
    """What a shard of affordances says about each prototype, in a form `combine_parts` merges
    exactly: the best-ranked affordance, the first N_EXAMPLES distinct questions with their rank
    keys, the fragment and document ids, the counts and every confidence (an exact mean needs
    them all). Shards of any size give the same prototypes as one pass over the corpus."""
    key = pl.struct("confidence", "question", "affordance_id")
    return (
        aff.sort(**RANK)
        .group_by("prototype_id")
        .agg(
            pl.col("intent", "support", "slot_signature", "role_signature").first(),
            key.first().alias("_best"),
            key.filter(pl.col("question").is_first_distinct()).head(N_EXAMPLES).alias("_examples"),
            pl.col("fragment_id").unique().alias("fragment_ids"),
            pl.col("doc_id").unique().alias("doc_ids"),
            pl.len().cast(pl.Int64).alias("n_affordances"),
            (pl.col("support") == "direct").sum().cast(pl.Int64).alias("n_direct"),
            (pl.col("support") == "partial").sum().cast(pl.Int64).alias("n_partial"),
            pl.col("confidence").alias("_confidences"),
        )
    )


def combine_parts(parts: pl.LazyFrame) -> pl.LazyFrame:
    """The prototypes (schema PROTOTYPES) from the `prototype_parts` of every shard. The first
    affordance overall is the best of the shards' firsts, and a question among the first N distinct
    overall is among the first N of the shard holding its best-ranked affordance."""
    best = (
        parts.unnest("_best")
        .sort(**RANK)
        .group_by("prototype_id")
        .agg(pl.col("intent", "support", "slot_signature", "role_signature").first())
    )
    examples = (
        parts.select("prototype_id", "_examples")
        .explode("_examples")
        .drop_nulls("_examples")
        .unnest("_examples")
        .sort(**RANK)
        .group_by("prototype_id")
        .agg(pl.col("question").unique(maintain_order=True).head(N_EXAMPLES).alias("example_questions"))
    )
    totals = (
        parts.group_by("prototype_id")
        .agg(
            pl.col("fragment_ids").list.explode(keep_nulls=False, empty_as_null=False).unique().sort(),
            pl.col("doc_ids").list.explode(keep_nulls=False, empty_as_null=False).unique().sort(),
            pl.col("n_affordances", "n_direct", "n_partial").sum(),
            pl.col("_confidences").list.explode(keep_nulls=False, empty_as_null=False).alias("confidence"),
        )
        .with_columns(
            pl.col("confidence").map_elements(lambda xs: math.fsum(xs) / len(xs), return_dtype=pl.Float64).alias("mean_confidence")
        )
    )
    protos = (
        best.join(examples, on="prototype_id", how="left")
        .join(totals, on="prototype_id")
        .with_columns(
            pl.col("fragment_ids").list.len().cast(pl.Int64).alias("n_fragments"),
            pl.col("doc_ids").list.len().cast(pl.Int64).alias("n_docs"),
            pl.col("intent").replace_strict(_SHAPE, default="single", return_dtype=pl.String).alias("answer_shape"),
            pl.col("intent").replace_strict(_TYPE, default="text", return_dtype=pl.String).alias("answer_type"),
        )
    )
    return _names(protos).select([pl.col(c).cast(t) for c, t in PROTOTYPES.items()]).sort("prototype_id")


def edges(aff: pl.LazyFrame) -> pl.LazyFrame:
    """Fragment-question edges (schema EDGES), sorted by fragment and prototype. An edge is made
    from one fragment's affordances only, so shards of whole documents give the same edges."""
    return (
        aff.sort(["confidence", "span_start", "affordance_id"], descending=[True, False, False])
        .group_by(["fragment_id", "prototype_id"])
        .agg(
            pl.col("doc_id").first(),
            pl.when((pl.col("support") == "direct").any()).then(pl.lit("direct")).otherwise(pl.lit("partial")).first().alias("support"),
            pl.col("confidence", "span", "span_start", "span_end").first(),
            pl.len().cast(pl.Int64).alias("n_affordances"),
        )
        .select([pl.col(c).cast(t) for c, t in EDGES.items()])
        .sort(["fragment_id", "prototype_id"])
    )


def prototypes(aff: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Affordances in; (prototypes, fragment_question_edges) out, in one pass (the pipeline
    streams shards through `prototype_parts` and `edges` instead)."""
    return combine_parts(prototype_parts(aff)), edges(aff)

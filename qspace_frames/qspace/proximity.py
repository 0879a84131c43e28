"""Stage 8: prototype proximity.

Every unordered pair of prototypes, scored by six components in [0, 1] and their weighted sum.
Pairs at or above `network_threshold` form the proximity network drawn in the Qspace graph.
Sets are compared with Polars list set operations on a cross join, never a Python loop.
"""

from __future__ import annotations

import polars as pl

from ..exprs import jaccard
from ..params import ProximityParams
from ..schemas import conform

PROXIMITY = {
    "prototype_a": pl.String,  # prototype_a < prototype_b
    "prototype_b": pl.String,
    "intent_match": pl.Float64,  # 1.0 when both have the same intent
    "role_jaccard": pl.Float64,  # role signatures
    "slot_jaccard": pl.Float64,  # slot signatures
    "shape_jaccard": pl.Float64,  # {answer_shape, answer_type}
    "fragment_overlap": pl.Float64,  # Jaccard of supporting fragment ids
    "class_overlap": pl.Float64,  # 1.0 when both sit in a common class
    "similarity": pl.Float64,
    "in_network": pl.Boolean,
}


def _side(prototypes: pl.LazyFrame, memberships: pl.LazyFrame) -> pl.LazyFrame:
    """One row per prototype with the sets the components compare."""
    classes_of = memberships.group_by("prototype_id").agg(pl.col("class_id").unique().sort().alias("classes"))
    empty = pl.lit([], dtype=pl.List(pl.String))
    return (
        prototypes.select(
            "prototype_id",
            "intent",
            pl.col("role_signature").fill_null(empty).alias("roles"),
            pl.col("slot_signature").fill_null(empty).alias("slots"),
            pl.concat_list(pl.col("answer_shape"), pl.col("answer_type")).list.drop_nulls().alias("shape"),
            pl.col("fragment_ids").fill_null(empty).alias("frags"),
        )
        .join(classes_of, on="prototype_id", how="left")
        .with_columns(pl.col("classes").fill_null(empty))
    )


def proximity(prototypes: pl.LazyFrame, memberships: pl.LazyFrame | pl.DataFrame, p: ProximityParams) -> pl.LazyFrame:
    """All pairs a < b (schema PROXIMITY), sorted by (prototype_a, prototype_b); empty for < 2 prototypes."""
    side = _side(prototypes, memberships.lazy())
    a = side.select(pl.all().name.suffix("_a"))
    b = side.select(pl.all().name.suffix("_b"))
    col = lambda name, s: pl.col(f"{name}_{s}")  # noqa: E731
    similarity = (
        p.w_intent * pl.col("intent_match")
        + p.w_roles * pl.col("role_jaccard")
        + p.w_slots * pl.col("slot_jaccard")
        + p.w_shape * pl.col("shape_jaccard")
        + p.w_fragments * pl.col("fragment_overlap")
        + p.w_class * pl.col("class_overlap")
    )
    # supporting-fragment Jaccard from shared-fragment counts: one row per (fragment, prototype) and a
    # self-join on the fragment, not a set operation on every pair's (corpus-sized) fragment lists
    each = side.select("prototype_id", "frags").explode("frags").unique()
    each = each.join(side.filter(pl.col("frags").list.len() == 0).select("prototype_id"), on="prototype_id", how="anti")
    shared = (
        each.join(each, on="frags", suffix="_b", nulls_equal=True)
        .filter(pl.col("prototype_id") < pl.col("prototype_id_b"))
        .group_by(pl.col("prototype_id").alias("prototype_id_a"), "prototype_id_b")
        .agg(pl.len().cast(pl.Int64).alias("_shared"))
    )
    n_frags = side.select("prototype_id", pl.col("frags").list.n_unique().cast(pl.Int64).alias("_n"))
    out = (
        a.drop("frags_a")
        .join(b.drop("frags_b"), how="cross")
        .filter(pl.col("prototype_id_a") < pl.col("prototype_id_b"))
        .join(shared, on=["prototype_id_a", "prototype_id_b"], how="left")
        .join(n_frags.select(pl.col("prototype_id").alias("prototype_id_a"), pl.col("_n").alias("_na")), on="prototype_id_a")
        .join(n_frags.select(pl.col("prototype_id").alias("prototype_id_b"), pl.col("_n").alias("_nb")), on="prototype_id_b")
        .with_columns(pl.col("_shared").fill_null(0))
        .with_columns((pl.col("_na") + pl.col("_nb") - pl.col("_shared")).alias("_union"))
        .select(
            pl.col("prototype_id_a").alias("prototype_a"),
            pl.col("prototype_id_b").alias("prototype_b"),
            (col("intent", "a") == col("intent", "b")).fill_null(False).cast(pl.Float64).alias("intent_match"),
            jaccard(col("roles", "a"), col("roles", "b")).alias("role_jaccard"),
            jaccard(col("slots", "a"), col("slots", "b")).alias("slot_jaccard"),
            jaccard(col("shape", "a"), col("shape", "b")).alias("shape_jaccard"),
            pl.when(pl.col("_union") == 0).then(0.0).otherwise(pl.col("_shared") / pl.col("_union")).alias("fragment_overlap"),
            (col("classes", "a").list.set_intersection(col("classes", "b")).list.len() > 0).cast(pl.Float64).alias("class_overlap"),
        )
        .with_columns(similarity.alias("similarity"))
        # a pair sitting exactly on the threshold must not drop out by a last-bit rounding of the sum
        .with_columns((pl.col("similarity") >= p.network_threshold - 1e-12).alias("in_network"))
        .sort(["prototype_a", "prototype_b"])
    )
    return conform(out, PROXIMITY)

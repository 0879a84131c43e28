"""Stage 12: retrieval trees, five candidates per fragment, scored by J(T).

For every fragment that holds evidence, five candidate trees arrange the same evidence leaves
(one leaf per evidence unit: a role value with its exact span) under different groupings:

    source_order_tree       root -> leaves in document order
    evidence_role_tree      root -> one group per evidence role -> leaves
    question_intent_tree    root -> one group per prototype (densest first) -> leaves
    class_objective_tree    root -> class -> role -> leaves
    hybrid_optimized_tree   root -> the densest leaves first, then co-demanded role groups

Trees are frames (one row per node, with parent ids), so building and scoring thousands of them is
a handful of joins and group-bys. Scoring replays, for every prototype q the fragment answers,
the walk a reader makes to reach q's evidence: at each level it reads the children in order
until the one it needs, so what it visits and loads is counted, not assumed. With p(q|f) the
fragment's prototype densities normalised,

    J(T) = Total_Cost(T) + lambda * tree_complexity(T) - mu * trace_clarity(T) - nu * citation_locality(T)
    Total_Cost = sum_k w_k * E_q[component_k]

and the candidate with the lowest J (ties: the fixed candidate order) is selected.
"""

from __future__ import annotations

import polars as pl

from ..exprs import exact_sums
from ..ids import id_expr
from ..params import TreeParams
from ..tokens import count_tokens

CANDIDATES = ("source_order_tree", "evidence_role_tree", "question_intent_tree", "class_objective_tree", "hybrid_optimized_tree")

# Normalisers that put each component on a comparable 0..1-ish scale (documented, not tuned).
NORM = {"path_length": 6.0, "nodes_visited": 20.0, "reasoning_steps": 6.0, "cross_branch_jumps": 6.0, "max_depth": 6.0, "tree_size": 20.0}
COMPONENTS = (
    "path_length",
    "nodes_visited",
    "context_tokens",
    "reasoning_steps",
    "ambiguity",
    "missing_evidence",
    "cross_branch_jumps",
    "trace_complexity",
    "citation_distance",
    "tree_complexity",
)

TREE_NODES = {
    "tree_id": pl.String,
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "candidate": pl.String,
    "node_id": pl.String,
    "parent_id": pl.String,
    "depth": pl.Int64,
    "order": pl.Int64,
    "preorder": pl.Int64,
    "kind": pl.String,
    "role": pl.String,
    "label": pl.String,
    "evidence_id": pl.String,
    "value": pl.String,
    "value_start": pl.Int64,
    "value_end": pl.Int64,
    "span_start": pl.Int64,
    "span_end": pl.Int64,
    "tokens": pl.Int64,
}
# Nodes are stored fragment by fragment (the order evidence is stored and sharded in), each tree
# in preorder: shards of whole fragments then give their rows in the final order, with no sort
# across shards.
NODE_ORDER = ["fragment_id", "tree_id", "preorder"]
TREE_SCORES = {
    "tree_id": pl.String,
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "candidate": pl.String,
    "n_nodes": pl.Int64,
    "max_depth": pl.Int64,
    "n_queries": pl.Int64,
    **{c: pl.Float64 for c in COMPONENTS},
    "total_cost": pl.Float64,
    "trace_clarity": pl.Float64,
    "citation_locality": pl.Float64,
    "J": pl.Float64,
    "selected": pl.Boolean,
}


# ---- leaves and their context ----------------------------------------------------------------------


def _leaves(
    fragments: pl.LazyFrame,
    evidence: pl.LazyFrame,
    edges: pl.LazyFrame,
    prototypes: pl.LazyFrame,
    density: pl.LazyFrame,
    memberships: pl.LazyFrame,
    classes: pl.LazyFrame,
) -> pl.DataFrame:
    """One row per evidence unit with what the groupings need: its densest prototype, that
    prototype's name and class, and the unit's total density."""
    pq = density.select("prototype_id", "p_q")
    linked = edges.filter(pl.col("support") == "direct").select("fragment_id", "prototype_id").join(pq, on="prototype_id")
    links = (
        evidence.select("evidence_id", "fragment_id", pl.col("prototype_ids").alias("prototype_id"))
        .explode("prototype_id")
        .join(linked, on=["fragment_id", "prototype_id"])
        .select("evidence_id", "prototype_id", "p_q")
        .collect()
    )
    primary = (
        links.lazy()
        .join(prototypes.select("prototype_id", "canonical_name"), on="prototype_id")
        .join(memberships.select("prototype_id", "class_id"), on="prototype_id", how="left")
        .join(classes.select("class_id", pl.col("name").alias("class_name")), on="class_id", how="left")
        .sort(["evidence_id", "p_q", "prototype_id"], descending=[False, True, False])
        .group_by("evidence_id", maintain_order=True)
        .agg(
            pl.col("prototype_id").first().alias("primary_prototype"),
            pl.col("canonical_name").first().alias("primary_name"),
            pl.col("p_q").first().alias("primary_pq"),
            pl.col("class_name").first().fill_null("unclassified").alias("class_name"),
        )
    )
    unit_protos = primary.join(exact_sums(links, ["evidence_id"], {"unit_density": "p_q"}).lazy(), on="evidence_id")
    return (
        evidence.select(
            "evidence_id", "fragment_id", "doc_id", "role", "value", "value_start", "value_end", "span", "span_start", "span_end"
        )
        .join(unit_protos, on="evidence_id")
        .join(
            fragments.select(
                "fragment_id",
                "heading_path",
                "kind",
                pl.col("n_tokens").alias("frag_tokens"),
                pl.col("char_start").alias("frag_start"),
                pl.col("char_end").alias("frag_end"),
            ),
            on="fragment_id",
        )
        .collect()
    )


def _grouping(leaves: pl.LazyFrame, codemand: pl.LazyFrame, p: TreeParams) -> pl.LazyFrame:
    """For each candidate, each leaf's group path: up to two (key, label, sort) levels, and its own sort.
    A level's label and sort are functions of its key (every leaf of a group carries the same ones)."""
    role_demand = codemand.filter(pl.col("role_a") == pl.col("role_b")).select(
        pl.col("role_a").alias("role"), pl.col("S").alias("role_demand")
    )
    lv = leaves.join(role_demand, on="role", how="left").with_columns(pl.col("role_demand").fill_null(0.0))
    none_s, none_f = pl.lit(None, dtype=pl.String), pl.lit(None, dtype=pl.Float64)
    by_pos = pl.col("value_start").cast(pl.Float64)
    # ties broken by position and id, never by row order
    dense_rank = pl.struct(-pl.col("unit_density"), "value_start", "evidence_id").rank("ordinal").over("fragment_id")
    top = dense_rank <= p.hybrid_top_leaves

    def cand(name, g1k, g1l, g1s, g2k, g2l, g2s, leaf_sort):
        return lv.with_columns(
            pl.lit(name).alias("candidate"),
            g1k.alias("g1_key"),
            g1l.alias("g1_label"),
            g1s.cast(pl.Float64).alias("g1_sort"),
            g2k.alias("g2_key"),
            g2l.alias("g2_label"),
            g2s.cast(pl.Float64).alias("g2_sort"),
            leaf_sort.cast(pl.Float64).alias("leaf_sort"),
        )

    role_label = pl.lit("evidence role: ") + pl.col("role")
    parts = [
        cand("source_order_tree", none_s, none_s, none_f, none_s, none_s, none_f, by_pos),
        # groups in alphabetical role order: a fixed, explainable layout
        cand("evidence_role_tree", pl.col("role"), role_label, pl.lit(0.0), none_s, none_s, none_f, by_pos),
        # densest prototype first
        cand(
            "question_intent_tree",
            pl.col("primary_prototype"),
            pl.lit("question: ") + pl.col("primary_name"),
            -pl.col("primary_pq"),
            none_s,
            none_s,
            none_f,
            by_pos,
        ),
        cand(
            "class_objective_tree",
            pl.col("class_name"),
            pl.lit("class: ") + pl.col("class_name"),
            pl.lit(0.0),
            pl.col("role"),
            role_label,
            pl.lit(0.0),
            by_pos,
        ),
        # the densest leaves straight under the root, then role groups by co-demand (most demanded first)
        cand(
            "hybrid_optimized_tree",
            pl.when(top).then(none_s).otherwise(pl.col("role")),
            pl.when(top).then(none_s).otherwise(role_label),
            pl.when(top).then(none_f).otherwise(-pl.col("role_demand")),
            none_s,
            none_s,
            none_f,
            pl.when(top).then(-pl.col("unit_density")).otherwise(by_pos),
        ),
    ]
    return pl.concat([x for x in parts if x is not None]).filter(pl.col("candidate").is_in(p.candidates))


def tree_nodes(
    fragments, evidence, edges, prototypes, density, memberships, classes, codemand, p: TreeParams, fragment_encoding: str | None = None
) -> pl.LazyFrame:
    """Every candidate tree of every fragment with evidence, as one node frame (schema TREE_NODES).

    Built eagerly, once: the evidence units (with the token count of their supporting span,
    counted once per distinct span, or taken from the fragment's `n_tokens` when the span is its
    whole fragment and `fragment_encoding`, the one that count used, is `p.encoding`), their
    groupings, then the roots, groups and leaves. Siblings are ordered by (sort, key), so a
    node's place is its path of (sort, key) pairs from the root:
    one sort by path gives the depth-first order, and preorder, sibling order and parent id
    follow from it with forward fills, with no self-join and no per-parent group."""
    lv = _leaves(fragments, evidence, edges, prototypes, density, memberships, classes)
    # the tokens a reader loads at a leaf: its supporting span. A span that is its whole fragment
    # (the same code points of the document) was counted with the fragment, a third of them on
    # CUAD; the others are counted here, once per distinct span
    whole = (pl.col("span_start") == pl.col("frag_start")) & (pl.col("span_end") == pl.col("frag_end"))
    known = lv.filter(whole & (fragment_encoding == p.encoding)).select("span", pl.col("frag_tokens").alias("span_tokens")).unique("span")
    spans = lv.select("span").unique().join(known, on="span", how="anti")
    spans = spans.with_columns(pl.Series("span_tokens", count_tokens(spans["span"].to_list(), p.encoding), dtype=pl.Int64))
    lv = lv.join(pl.concat([known, spans]), on="span", how="left").drop("span")
    # every candidate arranges every leaf of its fragment: one tree per (fragment, candidate)
    heading = pl.col("heading_path").list.join(" > ")
    trees = (
        lv.unique("fragment_id")
        .select(
            "fragment_id", "doc_id", (pl.lit("fragment: ") + pl.when(heading != "").then(heading).otherwise(pl.col("kind"))).alias("label")
        )
        .join(pl.DataFrame({"candidate": [c for c in CANDIDATES if c in p.candidates]}), how="cross")
        .with_columns(id_expr("tree", "fragment_id", "candidate").alias("tree_id"))
        # trees are ordered by id; its rank sorts faster than the id's text
        .with_columns(pl.col("tree_id").rank("ordinal").cast(pl.Int64).alias("_tn"))
    )
    g = (
        _grouping(lv.lazy(), codemand, p)
        .collect()
        .join(trees.select("fragment_id", "candidate", "tree_id", "_tn"), on=["fragment_id", "candidate"])
    )
    common = ["tree_id", "_tn", "fragment_id", "doc_id", "candidate"]
    null_s = pl.lit(None, dtype=pl.String)
    k1 = pl.lit("g1:") + pl.col("g1_key")
    k2 = k1 + pl.lit("/g2:") + pl.col("g2_key")
    leaf = [pl.col("leaf_sort"), pl.lit("leaf:") + pl.col("evidence_id")]
    # path of (sort, key) pairs below the root, null where the node stops: a parent sorts before its children
    path = ["_s1", "_k1", "_s2", "_k2", "_s3", "_k3"]
    root = trees.select(
        *common,
        pl.lit("root").alias("key"),
        pl.lit(0, dtype=pl.Int64).alias("depth"),
        pl.lit("root").alias("kind"),
        null_s.alias("role"),
        "label",
    )
    g1 = (
        g.filter(pl.col("g1_key").is_not_null())
        .group_by([*common, "g1_key"])
        .agg(
            pl.col("g1_label").min(),
            pl.col("g1_sort").min(),
            # a group has a role only when every leaf under it has that one role
            pl.when(pl.col("role").n_unique() == 1).then(pl.col("role").min()).alias("role"),
        )
        .select(
            *common,
            k1.alias("key"),
            pl.lit(1, dtype=pl.Int64).alias("depth"),
            pl.lit("group").alias("kind"),
            "role",
            pl.col("g1_label").alias("label"),
            pl.col("g1_sort").alias("_s1"),
            k1.alias("_k1"),
        )
    )
    g2 = (
        g.filter(pl.col("g2_key").is_not_null())
        .group_by([*common, "g1_key", "g2_key"])
        .agg(
            pl.col("g2_label").min(),
            pl.col("g1_sort").min(),
            pl.col("g2_sort").min(),
            pl.when(pl.col("role").n_unique() == 1).then(pl.col("role").min()).alias("role"),
        )
        .select(
            *common,
            k2.alias("key"),
            pl.lit(2, dtype=pl.Int64).alias("depth"),
            pl.lit("group").alias("kind"),
            "role",
            pl.col("g2_label").alias("label"),
            pl.col("g1_sort").alias("_s1"),
            k1.alias("_k1"),
            pl.col("g2_sort").alias("_s2"),
            k2.alias("_k2"),
        )
    )
    # a group's sort is a function of its key (see _grouping), so a leaf carries its groups' sorts itself
    has1, has2 = pl.col("g1_key").is_not_null(), pl.col("g2_key").is_not_null()
    leaves = g.select(
        *common,
        leaf[1].alias("key"),
        (1 + has1.cast(pl.Int64) + has2.cast(pl.Int64)).alias("depth"),
        pl.lit("leaf").alias("kind"),
        "role",
        (pl.col("role") + pl.lit(" = ") + pl.col("value")).alias("label"),
        "evidence_id",
        "value",
        "value_start",
        "value_end",
        "span_start",
        "span_end",
        pl.col("span_tokens").alias("tokens"),
        pl.when(has1).then(pl.col("g1_sort")).otherwise(leaf[0]).alias("_s1"),
        pl.when(has1).then(k1).otherwise(leaf[1]).alias("_k1"),
        pl.when(has2).then(pl.col("g2_sort")).when(has1).then(leaf[0]).alias("_s2"),
        pl.when(has2).then(k2).when(has1).then(leaf[1]).alias("_k2"),
        pl.when(has2).then(leaf[0]).alias("_s3"),
        pl.when(has2).then(leaf[1]).alias("_k3"),
    )
    del g
    # tokens a reader loads at a root or group: its label
    groups = pl.concat([root, g1, g2], how="diagonal_relaxed")
    labels = groups.select("label").unique()
    labels = labels.with_columns(pl.Series("tokens", count_tokens(labels["label"].to_list(), p.encoding), dtype=pl.Int64))
    groups = groups.join(labels, on="label", how="left")
    nodes = pl.concat([groups, leaves], how="diagonal_relaxed").sort(["_tn", *path], nulls_last=False).drop(path)
    d, row = pl.col("depth"), pl.int_range(pl.len(), dtype=pl.Int64)
    # in depth-first order a node's ancestor at depth k is the last node of depth k before it
    at = lambda k, e: pl.when(d == k).then(e).forward_fill()  # noqa: E731
    seen = [(d == k).cum_sum().cast(pl.Int64) for k in range(4)]  # nodes of each depth so far
    nodes = nodes.with_columns(
        id_expr("node", "tree_id", "key").alias("node_id"), at(0, row).alias("_root"), *[s.alias(f"_c{k}") for k, s in enumerate(seen)]
    )
    return (
        nodes.with_columns(
            (row - pl.col("_root")).alias("preorder"),
            # siblings read before a node: nodes of its depth since its parent
            pl.coalesce(
                [pl.when(d == k).then(pl.col(f"_c{k}") - at(k - 1, pl.col(f"_c{k}")) - 1) for k in (1, 2, 3)] + [pl.lit(0, dtype=pl.Int64)]
            ).alias("order"),
            pl.coalesce([pl.when(d == k).then(at(k - 1, pl.col("node_id"))) for k in (1, 2, 3)]).alias("parent_id"),
        )
        .select([pl.col(c).cast(t) for c, t in TREE_NODES.items()])
        .lazy()
    )


# ---- scoring ---------------------------------------------------------------------------------


def node_frame(nodes: pl.LazyFrame | pl.DataFrame, *extra: str) -> pl.DataFrame:
    """Tree nodes with integer keys for walking: `_r` (the node's row here), `_t` (tree number),
    `preorder`, `_p` (the parent's preorder) and, for each depth k = 1..3, `_ak`/`_ok`: preorder
    and sibling order of the node's ancestor at depth k (the node itself at its own depth;
    meaningless below it).

    `nodes` come tree by tree, each in preorder, as `tree_nodes` and the stored table hold them
    (NODE_ORDER), so each tree starts at its root and counting roots numbers the trees with no sort. In
    preorder, a node's ancestor at depth k is the last node of depth k before it, so a forward
    fill finds every ancestor with no join."""
    n = (
        nodes.lazy()
        .select("tree_id", "preorder", "depth", "order", *extra)
        .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("_r"), (pl.col("preorder") == 0).cum_sum().cast(pl.Int64).alias("_t"))
        .with_columns(
            [pl.when(pl.col("depth") == k).then(pl.col("preorder")).forward_fill().alias(f"_a{k}") for k in (1, 2, 3)]
            + [pl.when(pl.col("depth") == k).then(pl.col("order")).forward_fill().alias(f"_o{k}") for k in (1, 2, 3)]
        )
        .with_columns(
            pl.when(pl.col("depth") == 1)
            .then(pl.lit(0, dtype=pl.Int64))
            .when(pl.col("depth") == 2)
            .then(pl.col("_a1"))
            .when(pl.col("depth") == 3)
            .then(pl.col("_a2"))
            .alias("_p")
        )
    )
    return n.collect()


def at_rows(n: pl.DataFrame, frame: pl.DataFrame, *cols: str) -> pl.DataFrame:
    """`frame` with the named columns of the node frame `n` at its rows `_r`: a gather, not a join."""
    return pl.concat([frame, n.select(pl.col(*cols).gather(frame["_r"]))], how="horizontal")


def walk(n: pl.DataFrame, targets: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The nodes a reader visits to reach the target leaves of each (tree, *by) group: the root,
    and at each level the siblings read in order up to the one on the path to a target.

    `targets` holds `by` and the target's row `_r` in `n`; the result holds `_t`, `by` and the
    visited rows `_r`, each visited node once. Siblings under one parent are read as a prefix,
    so the union over several targets is the prefix up to the furthest of them."""
    t = at_rows(n, targets.select(*by, "_r"), "_t", "preorder", "depth", "_a1", "_a2", "_o1", "_o2", "_o3")
    steps = (
        pl.concat(
            [
                t.select("_t", *by, pl.lit(0, dtype=pl.Int64).alias("_p"), pl.col("_o1").alias("_m")),
                t.filter(pl.col("depth") >= 2).select("_t", *by, pl.col("_a1").alias("_p"), pl.col("_o2").alias("_m")),
                t.filter(pl.col("depth") >= 3).select("_t", *by, pl.col("_a2").alias("_p"), pl.col("_o3").alias("_m")),
            ]
        )
        .group_by("_t", *by, "_p")
        .agg(pl.col("_m").max())
    )
    children = steps.join(n.select("_t", "_p", "order", "_r"), on=["_t", "_p"]).filter(pl.col("order") <= pl.col("_m"))
    # a tree's root is the row its preorder counts from
    roots = t.select("_t", *by, (pl.col("_r") - pl.col("preorder")).alias("_r")).unique()
    return pl.concat([roots, children.select("_t", *by, "_r")])


def tree_scores(
    nodes: pl.LazyFrame,
    evidence: pl.LazyFrame,
    edges: pl.LazyFrame,
    prototypes: pl.LazyFrame,
    density: pl.LazyFrame,
    fragments: pl.LazyFrame,
    p: TreeParams,
) -> pl.LazyFrame:
    """J(T) and every component for every candidate tree (schema TREE_SCORES), the minimum selected."""
    n = node_frame(nodes, "fragment_id", "doc_id", "candidate", "kind", "role", "tokens", "span_start", "evidence_id")
    shape = (
        n.filter(pl.col("preorder") == 0)
        .select("_t", "tree_id", "fragment_id", "doc_id", "candidate")
        .join(n.group_by("_t").agg(pl.len().cast(pl.Int64).alias("n_nodes"), pl.col("depth").max().alias("max_depth")), on="_t")
    )
    frags = shape.lazy().select("fragment_id").unique()
    # p(q|f): the fragment's direct prototypes, densities normalised within the fragment; `_q` numbers the (fragment, prototype) pairs
    q = (
        edges.filter(pl.col("support") == "direct")
        .select("fragment_id", "prototype_id")
        .join(density.select("prototype_id", "p_q"), on="prototype_id")
        .join(prototypes.select("prototype_id", "role_signature"), on="prototype_id")
        .with_columns((pl.col("p_q") / pl.col("p_q").implode().list.eval(pl.element().sort()).list.sum().over("fragment_id")).alias("p_qf"))
        .join(frags, on="fragment_id", how="semi")
        .collect()
        .with_row_index("_q")
    )
    leaves = n.filter(pl.col("kind") == "leaf").select("_t", "_r", "fragment_id", "preorder", "evidence_id", "role", "_a1")
    needed = leaves.join(
        evidence.select("evidence_id", pl.col("prototype_ids").alias("prototype_id")).explode("prototype_id").collect(), on="evidence_id"
    ).join(q.select("fragment_id", "prototype_id", "_q"), on=["fragment_id", "prototype_id"])
    by = ["_q"]
    seen = at_rows(n, walk(n, needed, by), "preorder", "depth", "kind", "role", "tokens", "span_start")
    seen_leaves = (
        seen.filter(pl.col("kind") == "leaf")
        .join(needed.select(*by, "_r", pl.lit(True).alias("_is_needed")), on=[*by, "_r"], how="left")
        .join(
            needed.select("_t", *by, "role").unique().with_columns(pl.lit(True).alias("_needed_role")), on=["_t", *by, "role"], how="left"
        )
    )
    keys = ["_t", *by]
    visited = seen.group_by(keys).agg(
        pl.len().alias("_visited"),
        pl.col("depth").filter(pl.col("kind") == "leaf").max().alias("_path"),
        (pl.col("kind") == "group").sum().alias("_groups"),
        # tokens: labels of visited roots and groups ...
        pl.col("tokens").filter(pl.col("kind") != "leaf").sum().alias("_label_tokens"),
    )
    leaf_stats = seen_leaves.group_by(keys).agg(
        # ambiguity: visited leaves carrying a needed role that are not themselves needed (to be told apart by value and span)
        (pl.col("_needed_role").fill_null(False) & pl.col("_is_needed").is_null()).sum().alias("_confusable"),
        pl.len().alias("_visited_leaves"),
    )
    # ... plus each distinct span of the visited leaves once
    span_tokens = (
        seen_leaves.sort([*keys, "preorder"])
        .unique([*keys, "span_start"], keep="first")
        .group_by(keys)
        .agg(pl.col("tokens").sum().alias("_span_tokens"))
    )
    per_q = (
        needed.group_by(keys)
        .agg(
            pl.col("preorder").n_unique().alias("_n_needed"),
            pl.col("role").unique().alias("_found_roles"),
            pl.col("preorder").min().alias("_first"),
            pl.col("preorder").max().alias("_last"),
            # top-level branches holding the query's evidence (jumps = branches - 1)
            pl.col("_a1").n_unique().alias("_branches"),
        )
        .join(q.select("_q", "fragment_id", "p_qf", "role_signature"), on="_q")
        .join(visited, on=keys)
        .join(span_tokens, on=keys, how="left")
        .join(leaf_stats, on=keys, how="left")
        .join(shape.select("_t", "n_nodes"), on="_t")
        .join(
            fragments.select("fragment_id", pl.col("n_tokens").alias("_frag_tokens")).join(frags, on="fragment_id", how="semi").collect(),
            on="fragment_id",
        )
    )
    comp = per_q.with_columns(
        (pl.col("_path") / NORM["path_length"]).alias("path_length"),
        (pl.col("_visited") / NORM["nodes_visited"]).alias("nodes_visited"),
        ((pl.col("_label_tokens").fill_null(0) + pl.col("_span_tokens").fill_null(0)) / pl.max_horizontal(pl.col("_frag_tokens"), 1)).alias(
            "context_tokens"
        ),
        (pl.col("_groups") / NORM["reasoning_steps"]).alias("reasoning_steps"),
        (pl.col("_confusable").fill_null(0) / pl.max_horizontal(pl.col("_visited_leaves").fill_null(1), 1)).alias("ambiguity"),
        (
            1
            - pl.col("_found_roles").list.set_intersection(pl.col("role_signature")).list.len()
            / pl.max_horizontal(pl.col("role_signature").list.len(), 1)
        ).alias("missing_evidence"),
        ((pl.col("_branches").fill_null(1) - 1) / NORM["cross_branch_jumps"]).alias("cross_branch_jumps"),
        ((pl.col("_last") - pl.col("_first")) / pl.max_horizontal(pl.col("n_nodes") - 1, 1)).alias("citation_distance"),
    )
    per_query_cols = [
        "path_length",
        "nodes_visited",
        "context_tokens",
        "reasoning_steps",
        "ambiguity",
        "missing_evidence",
        "cross_branch_jumps",
        "citation_distance",
    ]
    # exact (fsum) expectations: the same bits whatever order the rows arrive in
    weighted = comp.select("_t", "p_qf", *[(pl.col(c) * pl.col("p_qf")).alias(f"_w_{c}") for c in per_query_cols])
    sums = exact_sums(weighted, ["_t"], {"_p": "p_qf", **{f"_w_{c}": f"_w_{c}" for c in per_query_cols}})
    expected = sums.select("_t", *[(pl.col(f"_w_{c}") / pl.col("_p")).alias(c) for c in per_query_cols]).join(
        comp.group_by("_t").agg(pl.len().cast(pl.Int64).alias("n_queries")), on="_t"
    )
    w = p.weights()
    scored = (  # lazy: the optimiser's sum_horizontal adds in its own order, and J's bits follow it
        shape.lazy()
        .join(expected.lazy(), on="_t")
        .with_columns(
            (pl.col("max_depth") / NORM["max_depth"]).alias("trace_complexity"),
            ((pl.col("n_nodes") + pl.col("max_depth")) / NORM["tree_size"]).alias("tree_complexity"),
        )
        .with_columns(
            pl.sum_horizontal([pl.col(c) * w[c] for c in COMPONENTS]).alias("total_cost"),
            (1 / (1 + pl.col("trace_complexity"))).alias("trace_clarity"),
            (1 - pl.col("citation_distance")).alias("citation_locality"),
        )
        .with_columns(j_expr(p).alias("J"))
    )
    return select_min(scored).select([pl.col(c).cast(t) for c, t in TREE_SCORES.items()]).sort(["fragment_id", "candidate"])


BATCH_UNITS = 25_000  # evidence units compiled per step: intermediate frames stay bounded whatever the corpus size


def compile_trees(
    fragments: pl.LazyFrame,
    evidence: pl.LazyFrame,
    edges: pl.LazyFrame,
    prototypes: pl.LazyFrame,
    density: pl.LazyFrame,
    memberships: pl.LazyFrame,
    classes: pl.LazyFrame,
    codemand: pl.LazyFrame,
    p: TreeParams,
    batch_units: int = BATCH_UNITS,
    fragment_encoding: str | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(tree_nodes, tree_scores) of every fragment with evidence: `tree_nodes` then `tree_scores`,
    over consecutive ranges of fragment ids holding about `batch_units` evidence units each.
    `fragment_encoding` is the encoding of the fragments' `n_tokens` (see `tree_nodes`).

    A tree depends only on its own fragment (and the corpus-wide prototypes, densities and
    co-demand), so the batches give exactly the rows one pass would, in the same order."""
    ev = evidence.select(
        "evidence_id",
        "fragment_id",
        "doc_id",
        "role",
        "value",
        "value_start",
        "value_end",
        "span",
        "span_start",
        "span_end",
        "prototype_ids",
    ).collect()
    per_fragment = ev.group_by("fragment_id").agg(pl.len().alias("_n")).sort("fragment_id")
    batch = per_fragment.select("fragment_id", ((pl.col("_n").cum_sum() - pl.col("_n")) // max(batch_units, 1)).alias("_b"))
    frags = (
        fragments.select("fragment_id", "heading_path", "kind", "n_tokens", "char_start", "char_end")
        .join(per_fragment.lazy().select("fragment_id"), on="fragment_id", how="semi")
        .collect()
    )
    direct = (
        edges.filter(pl.col("support") == "direct")
        .select("fragment_id", "prototype_id", "support")
        .join(per_fragment.lazy().select("fragment_id"), on="fragment_id", how="semi")
        .collect()
    )
    small = [
        prototypes.select("prototype_id", "canonical_name", "role_signature").collect().lazy(),
        density.select("prototype_id", "p_q").collect().lazy(),
        memberships.collect().lazy(),
        classes.collect().lazy(),
        codemand.collect().lazy(),
    ]
    empty = [x.clear() for x in (frags, ev, direct)]
    parts = [x.join(batch, on="fragment_id").partition_by("_b", as_dict=True, include_key=False) for x in (frags, ev, direct)]
    del frags, ev, direct
    nodes, scores = [], []
    for key in batch["_b"].unique().sort().to_list():
        f, e, d = (part.pop((key,), none).lazy() for part, none in zip(parts, empty))
        n = tree_nodes(f, e, d, *small, p, fragment_encoding).collect()
        scores.append(tree_scores(n.lazy(), e, d, small[0], small[1], f, p).collect())
        nodes.append(n)
    if not nodes:  # no evidence anywhere: empty frames of the declared schemas
        return pl.DataFrame(schema=TREE_NODES), pl.DataFrame(schema=TREE_SCORES)
    return pl.concat(nodes).sort(NODE_ORDER), pl.concat(scores).sort(["fragment_id", "candidate"])


def j_expr(p: TreeParams) -> pl.Expr:
    """J(T) from its exported components: what a test or a reader recomputes."""
    return pl.col("total_cost") + p.lam * pl.col("tree_complexity") - p.mu * pl.col("trace_clarity") - p.nu * pl.col("citation_locality")


def select_min(scored: pl.LazyFrame) -> pl.LazyFrame:
    """The lowest J per fragment; ties go to the earlier candidate in CANDIDATES."""
    rank = pl.col("candidate").replace_strict({c: i for i, c in enumerate(CANDIDATES)}, return_dtype=pl.Int64)
    best = pl.struct(pl.col("J").round(12), rank).rank("ordinal").over("fragment_id") == 1
    return scored.with_columns(best.alias("selected"))


def representative(scores: pl.DataFrame, n: int = 12) -> pl.DataFrame:
    """Up to n selected trees to draw: round-robin over the selected shapes, largest trees first."""
    sel = scores.filter(pl.col("selected")).sort(["candidate", "n_nodes", "tree_id"], descending=[False, True, False])
    return sel.with_columns(pl.int_range(pl.len()).over("candidate").alias("_i")).sort(["_i", "candidate"]).head(n).drop("_i")

"""Stage 11: the Qspace graph, as two frames (nodes, edges) plus a networkx view for analysis.

Node types and weights (weights are in units of query probability p_q, so they compare):
    prototype      "prototype:<id>"  label canonical_name   weight p_q
    fragment       "fragment:<id>"   label fragment_id      weight 1.0   (only fragments that answer something)
    evidence_role  "role:<role>"     label role             weight sum of p_q of the prototypes requiring it
    class          "class:<id>"      label class name       weight sum of p_q of its members
    document       "document:<id>"   label doc_id           weight 1.0   (only documents of those fragments)
`coverage_gap` marks a prototype answered by exactly one fragment: one edit away from unanswerable.

Edge types (src -> dst, weight):
    answers        fragment -> prototype   confidence (support: direct / partial)
    member_of      prototype -> class      1.0
    requires_role  prototype -> role       p_q of the prototype
    in_document    fragment -> document    1.0
    near           prototype_a -> prototype_b (a < b)  proximity similarity, in-network pairs only;
                   the relation is symmetric, stored once.
Every edge endpoint is a node: edges naming an unknown prototype or class are dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ..exprs import exact_sum
from ..schemas import conform

if TYPE_CHECKING:
    import networkx as nx

GRAPH_NODES = {
    "node_id": pl.String,
    "node_type": pl.String,
    "label": pl.String,
    "weight": pl.Float64,
    "coverage_gap": pl.Boolean,
}

GRAPH_EDGES = {
    "src": pl.String,
    "dst": pl.String,
    "edge_type": pl.String,
    "weight": pl.Float64,
    "support": pl.String,  # answers edges only (direct / partial); null otherwise
}

NODE_TYPES = ("prototype", "fragment", "evidence_role", "class", "document")
EDGE_TYPES = ("answers", "member_of", "requires_role", "in_document", "near")
PREFIX = {"prototype": "prototype:", "fragment": "fragment:", "evidence_role": "role:", "class": "class:", "document": "document:"}


def node_id(node_type: str, col: str | pl.Expr) -> pl.Expr:
    c = pl.col(col) if isinstance(col, str) else col
    return pl.concat_str(pl.lit(PREFIX[node_type]), c)


def _nodes(df: pl.LazyFrame, node_type: str, key: str, label: pl.Expr, weight: pl.Expr, gap: pl.Expr = pl.lit(False)) -> pl.LazyFrame:
    return df.select(
        node_id(node_type, key).alias("node_id"),
        pl.lit(node_type).alias("node_type"),
        label.alias("label"),
        weight.cast(pl.Float64).alias("weight"),
        gap.alias("coverage_gap"),
    )


def _edges(
    df: pl.LazyFrame, edge_type: str, src: pl.Expr, dst: pl.Expr, weight: pl.Expr, support: pl.Expr = pl.lit(None, dtype=pl.String)
) -> pl.LazyFrame:
    return df.select(
        src.alias("src"),
        dst.alias("dst"),
        pl.lit(edge_type).alias("edge_type"),
        weight.cast(pl.Float64).alias("weight"),
        support.alias("support"),
    )


def graph(
    prototypes: pl.LazyFrame | pl.DataFrame,
    memberships: pl.LazyFrame | pl.DataFrame,
    classes: pl.LazyFrame | pl.DataFrame,
    fragments_edges: pl.LazyFrame | pl.DataFrame,
    proximity: pl.LazyFrame | pl.DataFrame,
    density: pl.LazyFrame | pl.DataFrame,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(nodes, edges), schemas GRAPH_NODES and GRAPH_EDGES, sorted by (node_type, node_id) and (edge_type, src, dst)."""
    protos = (
        prototypes.lazy()
        .select("prototype_id", "canonical_name", "role_signature")
        .join(density.lazy().select("prototype_id", "p_q"), on="prototype_id", how="left")
        .with_columns(pl.col("p_q").fill_null(0.0))
    )
    known = protos.select("prototype_id")
    # one answers edge per (fragment, prototype): the most confident, direct if any row is direct
    answers = (
        fragments_edges.lazy()
        .join(known, on="prototype_id", how="semi")
        .group_by("fragment_id", "prototype_id")
        .agg(
            pl.col("doc_id").min(),
            pl.col("confidence").max(),
            pl.when((pl.col("support") == "direct").any()).then(pl.lit("direct")).otherwise(pl.col("support").min()).alias("support"),
        )
    )
    n_support = answers.group_by("prototype_id").agg(pl.col("fragment_id").n_unique().alias("_n"))
    protos = protos.join(n_support, on="prototype_id", how="left").with_columns(pl.col("_n").fill_null(0))
    frags = answers.group_by("fragment_id").agg(pl.col("doc_id").min())
    roles = (
        protos.select("prototype_id", "p_q", pl.col("role_signature").list.unique().alias("role"))
        .explode("role")
        .filter(pl.col("role").is_not_null())
    )
    member = (
        memberships.lazy()
        .select("prototype_id", "class_id")
        .join(known, on="prototype_id", how="semi")
        .join(classes.lazy().select("class_id"), on="class_id", how="semi")
        .unique()
        .join(protos.select("prototype_id", "p_q"), on="prototype_id")
    )
    cls = (
        classes.lazy()
        .select("class_id", "name")
        .join(member.group_by("class_id").agg(exact_sum("p_q").alias("_w")), on="class_id", how="left")
    )
    near = (
        proximity.lazy()
        .filter(pl.col("in_network"))
        .join(known, left_on="prototype_a", right_on="prototype_id", how="semi")
        .join(known, left_on="prototype_b", right_on="prototype_id", how="semi")
    )

    nodes = pl.concat(
        [
            _nodes(protos, "prototype", "prototype_id", pl.col("canonical_name"), pl.col("p_q"), pl.col("_n") == 1),
            _nodes(frags, "fragment", "fragment_id", pl.col("fragment_id"), pl.lit(1.0)),
            _nodes(roles.group_by("role").agg(exact_sum("p_q")), "evidence_role", "role", pl.col("role"), pl.col("p_q")),
            _nodes(cls, "class", "class_id", pl.col("name"), pl.col("_w").fill_null(0.0)),
            _nodes(frags.select("doc_id").unique(), "document", "doc_id", pl.col("doc_id"), pl.lit(1.0)),
        ]
    ).sort(["node_type", "node_id"])

    edges = pl.concat(
        [
            _edges(
                answers,
                "answers",
                node_id("fragment", "fragment_id"),
                node_id("prototype", "prototype_id"),
                pl.col("confidence"),
                pl.col("support"),
            ),
            _edges(member, "member_of", node_id("prototype", "prototype_id"), node_id("class", "class_id"), pl.lit(1.0)),
            _edges(roles, "requires_role", node_id("prototype", "prototype_id"), node_id("evidence_role", "role"), pl.col("p_q")),
            _edges(frags, "in_document", node_id("fragment", "fragment_id"), node_id("document", "doc_id"), pl.lit(1.0)),
            _edges(near, "near", node_id("prototype", "prototype_a"), node_id("prototype", "prototype_b"), pl.col("similarity")),
        ]
    ).sort(["edge_type", "src", "dst"])

    return conform(nodes, GRAPH_NODES).collect(), conform(edges, GRAPH_EDGES).collect()


def to_networkx(nodes: pl.DataFrame, edges: pl.DataFrame) -> nx.DiGraph:
    """A DiGraph with every node and edge column copied as attributes, built in the frames' sorted order."""
    import networkx as nx  # here, not at the top: every pool worker imports this module and never needs it

    g = nx.DiGraph()
    for r in nodes.sort(["node_type", "node_id"]).iter_rows(named=True):
        g.add_node(r.pop("node_id"), **r)
    for r in edges.sort(["edge_type", "src", "dst"]).iter_rows(named=True):
        g.add_edge(r.pop("src"), r.pop("dst"), **r)
    return g

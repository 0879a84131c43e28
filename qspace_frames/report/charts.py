"""Altair charts for the notebooks and reports.

Every chart aggregates or caps (top-N) before drawing, so its cost and size do not grow with
the corpus (the original implementation spent 90% of a large run drawing per-fragment figures).
"""

from __future__ import annotations

import altair as alt
import polars as pl

from ..exprs import LOADED_ROW

TOP_N = 20
WIDTH = 420
PATH_CHARS = 32  # about what an axis shows of a label (Vega-Lite's labelLimit, 180 px)


def _bar(df: pl.DataFrame, x: str, y: str, title: str, color: str | None = None) -> alt.Chart:
    enc = {"x": alt.X(f"{x}:Q", title=x.replace("_", " ")), "y": alt.Y(f"{y}:N", sort="-x", title=y.replace("_", " ")), "tooltip": [y, x]}
    if color:
        enc["color"] = alt.Color(f"{color}:N")
    return alt.Chart(df).mark_bar().encode(**enc).properties(title=title, width=WIDTH)


def file_types(inv: pl.DataFrame) -> alt.Chart:
    df = inv.group_by("ext", "load_status").len("files").sort("ext", "load_status")
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("files:Q"),
            y=alt.Y("ext:N", sort="-x", title="extension"),
            color=alt.Color("load_status:N", title="status"),
            tooltip=["ext", "load_status", "files"],
        )
        .properties(title="Files by type and load status", width=WIDTH)
    )


def load_statuses(inv: pl.DataFrame) -> alt.Chart:
    df = inv.group_by("load_status").len("files").sort("load_status")
    return _bar(df, "files", "load_status", "Load status of every discovered file")


def fragment_kinds(fr: pl.DataFrame) -> alt.Chart:
    df = fr.group_by("kind").agg(pl.len().alias("fragments"), pl.col("n_tokens").sum().alias("tokens")).sort("kind")
    return _bar(df, "fragments", "kind", "Fragments by kind")


def heading_sources(by_source: pl.DataFrame) -> alt.Chart:
    """Headings by format, coloured by the evidence that found them (`summaries.heading_sources`)."""
    return _bar(by_source, "headings", "format", "Headings by format and evidence", color="source")


def token_distribution(fr: pl.DataFrame, bins: int = 30) -> alt.Chart:
    """Histogram computed in Polars (fixed number of bins), not one mark per fragment."""
    hi = max(int(fr["n_tokens"].max() or 1), 1)
    width = max(1, -(-hi // bins))
    df = (
        fr.select((pl.col("n_tokens") // width * width).alias("bin_start"), "kind")
        .group_by("bin_start", "kind")
        .len("fragments")
        .sort("bin_start", "kind")
        .with_columns((pl.col("bin_start") + width).alias("bin_end"))
    )
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("bin_start:Q", bin="binned", title="tokens per fragment (cl100k_base)"),
            x2="bin_end:Q",
            y=alt.Y("fragments:Q", stack=True),
            color=alt.Color("kind:N"),
            tooltip=["bin_start", "kind", "fragments"],
        )
        .properties(title="Token distribution of fragments", width=WIDTH)
    )


def fragments_per_document(fr: pl.DataFrame, inv: pl.DataFrame, top: int = TOP_N) -> alt.Chart:
    df = (
        fr.group_by("doc_id")
        .len("fragments")
        .join(inv.filter(LOADED_ROW).select("doc_id", "path"), on="doc_id", how="left")
        .sort(["fragments", "path"], descending=[True, False])
        .head(top)
    )
    return _bar(_short_paths(df, "path"), "fragments", "path", f"Fragments per document (top {top})")


def _short_paths(df: pl.DataFrame, col: str, chars: int = PATH_CHARS) -> pl.DataFrame:
    """Paths longer than `chars` shown as "…" and their end (the file name and the folders nearest
    it): an axis cuts a label longer than its limit by measuring it a character at a time, 0.6 s
    for 20 CUAD paths in vl-convert. Left whole if two paths would look the same."""
    long = pl.col(col).str.len_chars() > chars
    short = df.with_columns(pl.when(long).then("…" + pl.col(col).str.tail(chars - 1)).otherwise(pl.col(col)).alias(col))
    return short if short[col].n_unique() == df[col].n_unique() else df


# ---- question space ---------------------------------------------------------------------------


def intent_frequencies(aff: pl.DataFrame) -> alt.Chart:
    df = aff.group_by("intent", "support").len("questions").sort("intent", "support")
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("questions:Q"),
            y=alt.Y("intent:N", sort="-x"),
            color=alt.Color("support:N", title="support"),
            tooltip=["intent", "support", "questions"],
        )
        .properties(title="Questions by intent: direct (value extracted) vs partial (process cue)", width=WIDTH)
    )


def prototype_support(protos: pl.DataFrame, top: int = TOP_N) -> alt.Chart:
    df = (
        protos.sort(["n_fragments", "prototype_id"], descending=[True, False])
        .head(top)
        .select("canonical_name", "n_fragments", "n_docs", "support")
    )
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("n_fragments:Q", title="supporting fragments"),
            y=alt.Y("canonical_name:N", sort="-x", title=None),
            color=alt.Color("support:N"),
            tooltip=["canonical_name", "n_fragments", "n_docs"],
        )
        .properties(title=f"Prototype support (top {top})", width=WIDTH)
    )


def _heat(df: pl.DataFrame, x: str, y: str, value: str, title: str) -> alt.Chart:
    base = alt.Chart(df).encode(x=alt.X(f"{x}:N", title=x.replace("_", " ")), y=alt.Y(f"{y}:N", title=y.replace("_", " ")))
    return (
        base.mark_rect().encode(color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme="blues")), tooltip=[x, y, value])
        + base.mark_text(fontSize=9).encode(text=alt.Text(f"{value}:Q", format=".2~f"))
    ).properties(title=title)


def class_by_intent(classes: pl.DataFrame, memberships: pl.DataFrame) -> alt.Chart:
    df = (
        memberships.join(classes.select("class_id", "name"), on="class_id")
        .group_by("name", "intent")
        .len("prototypes")
        .sort("name", "intent")
    )
    return _heat(df, "intent", "name", "prototypes", "Classes x intents (prototypes)")


def class_by_role(classes: pl.DataFrame, memberships: pl.DataFrame, protos: pl.DataFrame) -> alt.Chart:
    df = (
        memberships.join(classes.select("class_id", "name"), on="class_id")
        .join(protos.select("prototype_id", "role_signature"), on="prototype_id")
        .explode("role_signature")
        .drop_nulls("role_signature")
        .group_by("name", pl.col("role_signature").alias("role"))
        .len("prototypes")
        .sort("name", "role")
    )
    return _heat(df, "role", "name", "prototypes", "Classes x evidence roles (prototypes)")


def density_ranking(dens: pl.DataFrame, top: int = TOP_N) -> alt.Chart:
    df = dens.sort("rank").head(top).select("canonical_name", "density", "importance", "support_norm", "risk_prior")
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("density:Q"),
            y=alt.Y("canonical_name:N", sort="-x", title=None),
            tooltip=[
                "canonical_name",
                alt.Tooltip("density:Q", format=".3f"),
                alt.Tooltip("importance:Q", format=".3f"),
                alt.Tooltip("support_norm:Q", format=".3f"),
                "risk_prior",
            ],
        )
        .properties(title=f"Question density (top {top})", width=WIDTH)
    )


def _top_names(dens: pl.DataFrame, top: int) -> pl.DataFrame:
    return dens.sort("rank").head(top).select("prototype_id", "canonical_name")


def proximity_heatmap(prox: pl.DataFrame, dens: pl.DataFrame, top: int = 15) -> alt.Chart:
    names = _top_names(dens, top)
    both = (
        prox.join(names.rename({"prototype_id": "prototype_a", "canonical_name": "a"}), on="prototype_a")
        .join(names.rename({"prototype_id": "prototype_b", "canonical_name": "b"}), on="prototype_b")
        .select("a", "b", "similarity")
    )
    df = pl.concat([both, both.select(pl.col("b").alias("a"), pl.col("a").alias("b"), "similarity")]).sort("a", "b")
    return _heat(df, "a", "b", "similarity", f"Prototype proximity (top {top} by density)")


def proximity_network(prox: pl.DataFrame, dens: pl.DataFrame, top: int = 25) -> alt.Chart:
    """The proximity network among the densest prototypes, laid out by networkx (fixed seed)."""
    import networkx as nx

    names = _top_names(dens, top)
    keep = set(names["prototype_id"])
    edges = prox.filter(pl.col("in_network") & pl.col("prototype_a").is_in(keep) & pl.col("prototype_b").is_in(keep)).sort(
        "prototype_a", "prototype_b"
    )
    g = nx.Graph()
    g.add_nodes_from(sorted(keep))
    g.add_weighted_edges_from(edges.select("prototype_a", "prototype_b", "similarity").rows())
    pos = nx.spring_layout(g, seed=7, weight="weight")
    nodes = (
        names.with_columns(
            pl.col("prototype_id").map_elements(lambda i: round(float(pos[i][0]), 4), return_dtype=pl.Float64).alias("x"),
            pl.col("prototype_id").map_elements(lambda i: round(float(pos[i][1]), 4), return_dtype=pl.Float64).alias("y"),
        )
        .join(dens.select("prototype_id", "density", "intent"), on="prototype_id")
        .sort("prototype_id")
    )  # joins do not keep order
    xy = nodes.select("prototype_id", "x", "y")
    segs = (
        edges.join(xy.rename({"prototype_id": "prototype_a", "x": "x1", "y": "y1"}), on="prototype_a")
        .join(xy.rename({"prototype_id": "prototype_b", "x": "x2", "y": "y2"}), on="prototype_b")
        .select("x1", "y1", "x2", "y2", "similarity")
        .sort("x1", "y1", "x2", "y2")
    )
    axis = dict(axis=None)
    lines = (
        alt.Chart(segs)
        .mark_rule(opacity=0.4)
        .encode(
            x=alt.X("x1:Q", **axis), y=alt.Y("y1:Q", **axis), x2="x2:Q", y2="y2:Q", strokeWidth=alt.StrokeWidth("similarity:Q", legend=None)
        )
    )
    points = (
        alt.Chart(nodes)
        .mark_circle()
        .encode(
            x=alt.X("x:Q", **axis),
            y=alt.Y("y:Q", **axis),
            size=alt.Size("density:Q"),
            color=alt.Color("intent:N"),
            tooltip=["canonical_name", alt.Tooltip("density:Q", format=".3f")],
        )
    )
    return (lines + points).properties(
        title=f"Proximity network (similarity >= threshold, top {top} prototypes)", width=WIDTH, height=WIDTH
    )


def codemand_heatmap(cd: pl.DataFrame) -> alt.Chart:
    df = pl.concat(
        [
            cd.select("role_a", "role_b", "S"),
            cd.filter(pl.col("role_a") != pl.col("role_b")).select(pl.col("role_b").alias("role_a"), pl.col("role_a").alias("role_b"), "S"),
        ]
    ).sort("role_a", "role_b")
    return _heat(df, "role_a", "role_b", "S", "Evidence co-demand S(a, b)")


def detector_quality(scores: pl.DataFrame) -> alt.Chart:
    df = scores.unpivot(index=["intent", "set"], on=["precision", "recall"], variable_name="metric", value_name="value").sort(
        "intent", "set", "metric"
    )
    return (
        alt.Chart(df)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("value:Q", scale=alt.Scale(domain=[0.5, 1.0])),
            y=alt.Y("intent:N"),
            color="metric:N",
            shape="set:N",
            tooltip=["intent", "set", "metric", alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(title="Detector precision and recall on the labelled sets", width=WIDTH)
    )


# ---- trees and evaluation ---------------------------------------------------------------------


def candidate_scores(scores: pl.DataFrame) -> alt.Chart:
    df = scores.group_by("candidate").agg(pl.col("J").mean().alias("mean_J"), pl.col("selected").sum().alias("selected")).sort("candidate")
    base = alt.Chart(df).encode(y=alt.Y("candidate:N", title=None))
    return (
        base.mark_bar().encode(
            x=alt.X("mean_J:Q", title="mean J(T) (lower is better)"),
            tooltip=["candidate", alt.Tooltip("mean_J:Q", format=".3f"), "selected"],
        )
        | base.mark_bar(color="#4c78a8").encode(
            x=alt.X("selected:Q", title="fragments where it has the lowest J"), tooltip=["candidate", "selected"]
        )
    ).properties(title="Candidate trees: mean J and how often each is selected")


def component_profile(scores: pl.DataFrame, components: tuple[str, ...]) -> alt.Chart:
    df = (
        scores.group_by("candidate")
        .agg([pl.col(c).mean() for c in components])
        .unpivot(index="candidate", variable_name="component", value_name="mean")
        .sort("candidate", "component")
    )
    return _heat(df, "component", "candidate", "mean", "Mean J components per candidate (normalised)")


def _tree_layout(nodes: pl.DataFrame, title: str) -> pl.DataFrame:
    """One tree's nodes and edges as rows of one frame (`part` node or edge), laid out by networkx
    in layers by depth: depth runs left to right and siblings stack top to bottom, so leaf labels
    never overlap."""
    import networkx as nx

    g = nx.DiGraph()
    for r in nodes.sort("preorder").iter_rows(named=True):
        g.add_node(r["node_id"], layer=r["depth"])
    g.add_edges_from(nodes.filter(pl.col("parent_id").is_not_null()).sort("preorder").select("parent_id", "node_id").rows())
    # layers given as ordered lists: networkx would otherwise group them in sets (hash order)
    layers: dict[int, list[str]] = {}
    for n, d in nodes.sort("preorder").select("node_id", "depth").rows():
        layers.setdefault(d, []).append(n)
    pos = nx.multipartite_layout(g, subset_key=layers, align="vertical")
    xy = pl.DataFrame(
        {"node_id": list(pos), "x": [round(float(p[0]), 4) for p in pos.values()], "y": [round(-float(p[1]), 4) for p in pos.values()]}
    )
    points = (
        nodes.select("node_id", "kind", "label", "tokens", "depth", "preorder")
        .join(xy, on="node_id")
        .sort("preorder")
        .select(pl.lit("node").alias("part"), "x", "y", "kind", pl.col("label").str.slice(0, 34).alias("short"), "label", "tokens", "depth")
    )
    edges = (
        nodes.filter(pl.col("parent_id").is_not_null())
        .select("parent_id", "node_id")
        .join(xy.rename({"node_id": "parent_id", "x": "x1", "y": "y1"}), on="parent_id")
        .join(xy.rename({"x": "x2", "y": "y2"}), on="node_id")
        .sort("x1", "y1", "x2", "y2")  # joins do not keep row order; the chart's data must
        .select(pl.lit("edge").alias("part"), pl.col("x1").alias("x"), pl.col("y1").alias("y"), "x2", "y2")
    )
    return pl.concat([edges, points], how="diagonal_relaxed").with_columns(pl.lit(title).alias("tree"))


def tree_grid(nodes: pl.DataFrame, trees: list[tuple[str, str]]) -> alt.FacetChart | None:
    """The trees (tree_id, title) drawn side by side, three to a row: one faceted chart over one
    frame (15 separate Altair charts cost seconds to build and validate), None when there is none."""
    if not trees:
        return None
    order = [title for _, title in trees]
    df = pl.concat([_tree_layout(nodes.filter(pl.col("tree_id") == t), title) for t, title in trees], how="diagonal_relaxed")
    no_axis = dict(axis=None)
    x, y = alt.X("x:Q", **no_axis), alt.Y("y:Q", **no_axis)
    edge, node = alt.datum.part == "edge", alt.datum.part == "node"
    lines = alt.Chart().mark_rule(color="#999").encode(x=x, y=y, x2=alt.X2("x2:Q"), y2=alt.Y2("y2:Q")).transform_filter(edge)
    dots = (
        alt.Chart()
        .mark_circle(size=90)
        .encode(
            x=x,
            y=y,
            color=alt.Color("kind:N"),
            tooltip=[alt.Tooltip("label:N"), alt.Tooltip("tokens:Q"), alt.Tooltip("depth:Q")],
        )
        .transform_filter(node)
    )
    text = alt.Chart().mark_text(align="left", dx=6, fontSize=8).encode(x=x, y=y, text=alt.Text("short:N")).transform_filter(node)
    return (
        alt.layer(lines, dots, text, data=df)
        .properties(width=170, height=170)
        .facet(facet=alt.Facet("tree:N", sort=order, title=None), columns=3)
        .resolve_scale(x="independent", y="independent")
    )


def ask_accuracy(scored: pl.DataFrame) -> alt.Chart:
    """A question set's outcomes by kind (`ask.accuracy.score`): right answers and each way of missing."""
    df = scored.group_by("kind", "outcome").len("questions").sort("kind", "outcome")
    return _bar(df, "questions", "kind", "Development questions by kind: right answers and misses", color="outcome")


def recall_curves(metrics: pl.DataFrame, title: str) -> alt.Chart:
    df = (
        metrics.filter((pl.col("metric") == "evidence_recall") & pl.col("budget").is_not_null())
        .select("strategy", "budget", pl.col("value").alias("recall"))
        .sort("strategy", "budget")
    )
    return (
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=alt.X("budget:Q", scale=alt.Scale(type="log", base=2), title="context budget (tokens, exact cl100k)"),
            y=alt.Y("recall:Q", scale=alt.Scale(domain=[0, 1]), title="evidence recall"),
            color="strategy:N",
            tooltip=["strategy", "budget", alt.Tooltip("recall:Q", format=".3f")],
        )
        .properties(title=title, width=WIDTH)
    )


def tree_ablation(table: pl.DataFrame) -> alt.Chart:
    """Per tree choice (summaries.tree_ablation): the nodes walked to the first gold beside the
    recall at 512 tokens (or the table's first recall column), so a choice that costs more
    nodes for the same recall stands out."""
    recall = "recall@512" if "recall@512" in table.columns else next((c for c in table.columns if c.startswith("recall@")), None)
    if recall is None or table.is_empty():  # no question was evaluated with each tree: nothing to draw
        table, recall = pl.DataFrame(schema={"tree": pl.String, "nodes_visited": pl.Float64, "recall@512": pl.Float64}), "recall@512"
    df = table.select("tree", "nodes_visited", pl.col(recall).alias("recall"))
    base = alt.Chart(df).encode(y=alt.Y("tree:N", sort=None, title=None), tooltip=["tree", "nodes_visited", "recall"])
    nodes = base.mark_bar().encode(x=alt.X("nodes_visited:Q", title="nodes visited (mean)")).properties(width=WIDTH // 2)
    rec = (
        base.mark_bar(color="#59a14f")
        .encode(x=alt.X("recall:Q", scale=alt.Scale(domain=[0, 1]), title=recall))
        .properties(width=WIDTH // 2)
    )
    return alt.hconcat(nodes, rec).properties(title="Qspace with each tree: nodes walked and evidence recall")


def sweep_selection(sel: pl.DataFrame) -> alt.Chart:
    return (
        alt.Chart(sel)
        .mark_bar()
        .encode(
            x=alt.X("fragments:Q", stack="normalize", title="share of fragments"),
            y=alt.Y("weights:N", title=None),
            color="candidate:N",
            tooltip=["weights", "candidate", "fragments"],
        )
        .properties(title="Selected tree shape per weight set", width=WIDTH)
    )


# ---- a run's charts, by the name they are saved under (charts/<name>.svg) -------------------------
# name -> (the stages it reads, the chart of a run: a Workbench or a finished `dashboard.Run`). The
# notebooks draw these same charts from the same tables; `exports.write_charts` draws them for a
# run that has no notebooks (a library run, `qspace report`).


def _tree_components(run) -> alt.Chart:
    from ..trees.compile import COMPONENTS

    return component_profile(run.read("trees", "tree_scores"), COMPONENTS)


def _tree_ablation(r) -> alt.Chart:
    from .summaries import tree_ablation as table  # where it is drawn: the kernels' charts import stays light

    return tree_ablation(table(r.read("evaluation", "tree_ablation"), r.read("trees", "tree_scores")))


def _heading_sources(run) -> alt.Chart:
    from . import summaries

    return heading_sources(summaries.heading_sources(run.read("structure", "sections"), run.read("corpus", "inventory")))


RUN_CHARTS = {
    "file_types": (("corpus",), lambda r: file_types(r.read("corpus", "inventory"))),
    "load_statuses": (("corpus",), lambda r: load_statuses(r.read("corpus", "inventory"))),
    "heading_sources": (("corpus", "structure"), _heading_sources),
    "fragment_kinds": (("fragments",), lambda r: fragment_kinds(r.read("fragments"))),
    "token_distribution": (("fragments",), lambda r: token_distribution(r.read("fragments"))),
    "fragments_per_document": (
        ("corpus", "fragments"),
        lambda r: fragments_per_document(r.read("fragments"), r.read("corpus", "inventory")),
    ),
    "intent_frequencies": (("affordances",), lambda r: intent_frequencies(r.read("affordances"))),
    "prototype_support": (("prototypes",), lambda r: prototype_support(r.read("prototypes"))),
    "class_by_intent": (("classes",), lambda r: class_by_intent(r.read("classes"), r.read("classes", "memberships"))),
    "class_by_role": (
        ("classes", "prototypes"),
        lambda r: class_by_role(r.read("classes"), r.read("classes", "memberships"), r.read("prototypes")),
    ),
    "density_ranking": (("density",), lambda r: density_ranking(r.read("density"))),
    "proximity_heatmap": (("proximity", "density"), lambda r: proximity_heatmap(r.read("proximity"), r.read("density"))),
    "proximity_network": (("proximity", "density"), lambda r: proximity_network(r.read("proximity"), r.read("density"))),
    "codemand_heatmap": (("evidence",), lambda r: codemand_heatmap(r.read("evidence", "codemand"))),
    "candidate_scores": (("trees",), lambda r: candidate_scores(r.read("trees", "tree_scores"))),
    "component_profile": (("trees",), _tree_components),
    "recall_curves": (
        ("evaluation",),
        lambda r: recall_curves(r.read("evaluation", "metrics"), "Evidence recall vs tokens loaded (this run)"),
    ),
    "ablation_nodes_recall": (("evaluation", "trees"), _tree_ablation),
}

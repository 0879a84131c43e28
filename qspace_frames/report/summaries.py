"""The per-step summary tables: what each notebook shows and what the final report quotes.

Each is a function of a step's frames, so the notebook and `report.final_report_md` print the
same numbers from the same code.
"""

from __future__ import annotations

import re

import polars as pl

from ..corpus.pages import document_text
from ..evaluation.misses import reason_order
from ..evaluation.qspace import NO_TREE, SELECTED, TREE_CHOICES


def files_by_status(inv: pl.DataFrame) -> pl.DataFrame:
    """Files and bytes by extension and load status."""
    return (
        inv.group_by("ext", "load_status")
        .agg(pl.len().alias("files"), pl.col("bytes").sum().alias("bytes"))
        .sort("ext", "load_status", nulls_last=True)
    )


def fragment_kinds(fr: pl.DataFrame) -> pl.DataFrame:
    """Fragments and tokens by kind."""
    return (
        fr.group_by("kind")
        .agg(
            pl.len().alias("fragments"),
            pl.col("n_tokens").sum().alias("tokens"),
            pl.col("n_tokens").median().alias("median_tokens"),
            pl.col("n_tokens").max().alias("max_tokens"),
        )
        .sort("kind")
    )


def questions_by_intent(aff: pl.DataFrame) -> pl.DataFrame:
    """Direct and partial questions by intent, with their mean confidence."""
    return (
        aff.group_by("intent")
        .agg(
            (pl.col("support") == "direct").sum().alias("direct"),
            (pl.col("support") == "partial").sum().alias("partial"),
            pl.col("confidence").mean().round(3).alias("mean_confidence"),
        )
        .sort("intent")
    )


def top_prototypes(protos: pl.DataFrame) -> pl.DataFrame:
    """Prototypes, the most supported first."""
    return protos.sort(["n_fragments", "prototype_id"], descending=[True, False]).select(
        "canonical_name", "canonical_question", "answer_shape", "answer_type", "n_fragments", "n_docs"
    )


def class_table(cls: pl.DataFrame) -> pl.DataFrame:
    return cls.select("name", "archetype", pl.col("archetype_overlap").round(3), "n_prototypes", "intents", "method", "status")


def density_table(dens: pl.DataFrame) -> pl.DataFrame:
    return dens.sort("rank").select(
        "rank", "canonical_name", pl.col("support_norm", "document_norm", "risk_prior", "importance", "density", "p_q").round(3)
    )


def evidence_roles(ev: pl.DataFrame) -> pl.DataFrame:
    """Evidence units by role."""
    return (
        ev.group_by("role")
        .agg(
            pl.len().alias("units"),
            pl.col("value").n_unique().alias("distinct_values"),
            pl.col("confidence").mean().round(3).alias("mean_confidence"),
        )
        .sort("role")
    )


def codemand_pairs(cd: pl.DataFrame) -> pl.DataFrame:
    """Pairs of distinct roles, the most often needed together first."""
    return (
        cd.filter(pl.col("role_a") != pl.col("role_b"))
        .sort("S", "role_a", "role_b", descending=[True, False, False])
        .select("role_a", "role_b", pl.col("S").round(4), "n_prototypes")
    )


def graph_nodes_by_type(nodes: pl.DataFrame) -> pl.DataFrame:
    return nodes.group_by("node_type").agg(pl.len().alias("nodes"), pl.col("coverage_gap").sum().alias("coverage_gaps")).sort("node_type")


def graph_edges_by_type(edges: pl.DataFrame) -> pl.DataFrame:
    return edges.group_by("edge_type").agg(pl.len().alias("edges"), pl.col("weight").mean().round(3).alias("mean_weight")).sort("edge_type")


def tree_candidates(scores: pl.DataFrame) -> pl.DataFrame:
    """Per candidate shape: how often J(T) selected it, its mean J, size and depth."""
    return (
        scores.group_by("candidate")
        .agg(
            pl.col("selected").sum().alias("selected"),
            pl.col("J").mean().round(4).alias("mean_J"),
            pl.col("n_nodes").mean().round(2).alias("mean_nodes"),
            pl.col("max_depth").mean().round(2).alias("mean_depth"),
        )
        .sort("candidate")
    )


def simulations_by_candidate(sims: pl.DataFrame) -> pl.DataFrame:
    """Replayed questions by the shape of their fragment's selected tree."""
    return (
        sims.group_by("candidate")
        .agg(
            pl.len().alias("questions"),
            pl.col("correct").mean().alias("correct"),
            pl.col("nodes_visited").mean().round(2),
            pl.col("context_tokens").mean().round(1),
            pl.col("path_length").mean().round(2),
        )
        .sort("candidate")
    )


def metrics_wide(metrics: pl.DataFrame) -> pl.DataFrame:
    """The evaluation's long metrics (METRICS) one row per strategy: a `recall@<budget>` column per
    budget and a column per other metric."""
    column = pl.when(pl.col("budget").is_null()).then(pl.col("metric")).otherwise(pl.lit("recall@") + pl.col("budget").cast(pl.String))
    return metrics.with_columns(column.alias("column")).pivot(on="column", index="strategy", values="value", sort_columns=True)


def recall_columns(wide: pl.DataFrame) -> list[str]:
    """The `recall@<budget>` columns of `metrics_wide`, by increasing budget."""
    return sorted((c for c in wide.columns if c.startswith("recall@")), key=lambda c: int(c.split("@")[1]))


def tree_ablation(ablation: pl.DataFrame, scores: pl.DataFrame | None = None) -> pl.DataFrame:
    """Qspace with each tree choice (the evaluation's tree_ablation table), one row each: recall at
    every budget, nodes visited, path length and tokens to the first gold, and with `scores`
    (the trees' tree_scores) how many fragments selected that candidate."""
    wide = metrics_wide(ablation).rename({"strategy": "tree"})
    costs = [c for c in ("nodes_visited", "path_length", "tokens_to_first_gold") if c in wide.columns]
    wide = wide.select("tree", *recall_columns(wide), *costs).with_columns(pl.exclude("tree").round(4))
    if scores is not None:
        chosen = scores.filter(pl.col("selected")).group_by("candidate").len("fragments").rename({"candidate": "tree"})
        total = pl.lit(chosen["fragments"].sum(), pl.UInt32)
        wide = (
            wide.join(chosen, on="tree", how="left")
            .with_columns(
                pl.when(pl.col("tree") == SELECTED)
                .then(total)
                .when(pl.col("tree") == NO_TREE)
                .then(None)
                .otherwise(pl.col("fragments").fill_null(0))
                .alias("fragments where selected")
            )
            .drop("fragments")
        )
    order = {t: i for i, t in enumerate(TREE_CHOICES)}
    return wide.sort(pl.col("tree").replace_strict(order, default=len(order)))


def tree_verdict(ablation: pl.DataFrame) -> str:
    """In words: how far recall moves between the candidate trees and without any tree."""
    r = ablation.filter(pl.col("metric") == "evidence_recall")
    if r.is_empty() or r["value"].is_null().all():
        return "No question was evaluated with each tree (evaluation.tree_ablation_questions is 0, or there is no question)."
    trees = r.filter(pl.col("strategy") != NO_TREE).group_by("budget").agg((pl.col("value").max() - pl.col("value").min()).alias("spread"))
    spread = trees["spread"].max()
    at = r.filter(pl.col("budget") == 512) if 512 in r["budget"].to_list() else r.filter(pl.col("budget") == r["budget"].min())
    b = at["budget"][0]
    by = dict(at.select("strategy", "value").rows())
    nodes = dict(ablation.filter(pl.col("metric") == "nodes_visited").select("strategy", "value").rows())
    lo, hi = min(v for k, v in nodes.items() if k != NO_TREE), max(v for k, v in nodes.items() if k != NO_TREE)
    same = "the same" if spread < 5e-4 else f"within {spread:.3f}"
    n = at.filter(pl.col("strategy") == SELECTED)["n_queries"][0]
    return (
        f"On {n} questions, recall is {same} at every budget whichever tree is used: every candidate arranges the same "
        f"evidence leaves, and Qspace loads sentences in its own ranking order, so a tree only changes the path walked "
        f"(nodes visited {lo:.2f} to {hi:.2f}). "
        f"Without any tree (no prototype boost from the leaves) recall@{b} is {by[NO_TREE]:.3f} against {by[SELECTED]:.3f} "
        f"with the selected trees."
    )


def miss_examples(
    misses: pl.DataFrame, gold: pl.DataFrame, retrievals: pl.LazyFrame, pages: pl.LazyFrame, strategy: str, budget: int, n: int = 2
) -> str:
    """Markdown: the first `n` questions (in id order) of each miss reason of `strategy` at
    `budget`, with what the strategy loaded first and the gold it missed; only the picked
    questions' first units and documents are read (`retrievals`, `pages`: the stored tables)."""
    m = misses.filter((pl.col("strategy") == strategy) & (pl.col("budget") == budget))
    picked = m.join(reason_order(), on="reason").sort("_o", "query_id").group_by("_o", maintain_order=True).head(n)
    first = (
        retrievals.filter((pl.col("strategy") == strategy) & (pl.col("rank") == 1) & pl.col("query_id").is_in(picked["query_id"].implode()))
        .select("query_id", pl.col("text").alias("_first"))
        .collect()
    )
    docs = document_text(pages.filter(pl.col("doc_id").is_in(picked["doc_id"].unique().implode()))).collect()
    span = pl.col("gold_spans").list.first()
    missed_gold = (
        gold.select(
            pl.col("id").alias("query_id"),
            "question",
            "doc_id",
            span.struct.field("start").alias("_s"),
            span.struct.field("end").alias("_e"),
        )
        .join(docs.select("doc_id", "doc_text"), on="doc_id")
        .select("query_id", "question", pl.col("doc_text").str.slice(pl.col("_s"), pl.col("_e") - pl.col("_s")).alias("_gold"))
    )
    rows = picked.join(missed_gold, on="query_id", how="left").join(first, on="query_id", how="left")
    clip = lambda t: re.sub(r"\s+", " ", t or "")[:200]  # noqa: E731
    lines = [
        f"- **{r['reason']}**: *{clip(r['question'])}*  \n  loaded first: {clip(r['_first'])}  \n  missed: {clip(r['_gold'])}"
        + (
            f" (first reached at rank {r['first_gold_rank']}, {r['tokens_to_first_gold']} tokens)"
            if r["first_gold_rank"]
            else " (never reached)"
        )
        for r in rows.iter_rows(named=True)
    ]
    return "\n".join(lines) or "Nothing missed."

"""The per-step summary tables: what each notebook shows and what the final report quotes.

Each is a function of a step's frames, so the notebook and `report.final_report_md` print the
same numbers from the same code.
"""

from __future__ import annotations

import re

import polars as pl

from ..corpus.pages import document_text
from ..evaluation.misses import reason_order
from ..evaluation.qspace import NO_TREE, SELECTED, TREE_CHOICES, all_leaves
from ..exprs import LOADED_ROW


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


def heading_sources(sections: pl.DataFrame, inv: pl.DataFrame) -> pl.DataFrame:
    """Headings found, by the document's format and the evidence that found them (`structure.headings`)."""
    fmt = inv.filter(LOADED_ROW).select("doc_id", pl.col("loader").alias("format"))  # not a duplicate's row
    return (
        sections.filter(pl.col("level") > 0)
        .join(fmt, on="doc_id", how="left")
        .group_by("format", "source")
        .agg(pl.len().alias("headings"), pl.col("doc_id").n_unique().alias("documents"))
        .sort("format", "source")
    )


def structure_outline(sections: pl.DataFrame, doc_id: str) -> pl.DataFrame:
    """One document's structure tree, top to bottom: titles indented by level, pages and characters."""
    return sections.filter(pl.col("doc_id") == doc_id).select(
        "level",
        (
            pl.lit("  ").repeat_by(pl.col("level")).list.join("")
            + pl.when(pl.col("level") == 0).then(pl.lit("(document)")).otherwise(pl.col("title"))
        ).alias("section"),
        "source",
        "page_start",
        "page_end",
        "char_start",
        "char_end",
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


def tree_reach(nodes: pl.LazyFrame, scores: pl.LazyFrame) -> tuple[int, int]:
    """(fragments with a selected tree, those of them whose tree holds two evidence sentences or
    more): where a tree's walk can order what Qspace reads (`qspace.walked`)."""
    leaves = all_leaves(nodes, scores, every=False)
    per = leaves.group_by("fragment_id").agg(pl.col("span_start").n_unique().alias("_n"))
    return per.height, per.filter(pl.col("_n") >= 2).height


def tree_verdict(ablation: pl.DataFrame, reach: tuple[int, int] | None = None) -> str:
    """In words: how far recall moves between the candidate trees and without any tree, and with
    `reach` (`tree_reach`) where a tree can act at all."""
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
    where = (
        f" Only {reach[1]} of the {reach[0]} fragments with a tree hold two evidence sentences or more: only there can a "
        f"tree's walk change the order in which they are read."
        if reach is not None
        else ""
    )
    return (
        f"On {n} questions, recall is {same} at every budget whichever tree is used: every candidate arranges the same "
        f"evidence leaves, so the trees differ only in the order a fragment's leaves are read (the question's leaf first, "
        f"then its siblings) and in the path walked (nodes visited {lo:.2f} to {hi:.2f}).{where} "
        f"Without any tree (no prototype boost from the leaves) recall@{b} is {by[NO_TREE]:.3f} against {by[SELECTED]:.3f} "
        f"with the selected trees."
    )


FLAT = "source_order_tree"  # the tree that keeps the fragment's evidence in document order, one level deep


def sweep_table(selected: dict[str, pl.DataFrame], metrics: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """One row per weight set, the first the reference: fragments with a tree, how many select
    another tree than with the reference weights, how many the flat one, and Qspace's recall at
    every budget, tokens loaded and nodes visited (`selected`: each set's selected tree_scores
    rows, fragment_id and candidate; `metrics`: its evaluation metrics)."""
    ref = next(iter(selected.values())).select("fragment_id", pl.col("candidate").alias("_ref"))
    rows = []
    for name, sel in selected.items():
        moved = sel.join(ref, on="fragment_id", how="left").filter(pl.col("candidate") != pl.col("_ref").fill_null(""))
        q = metrics_wide(metrics[name].filter(pl.col("strategy") == "qspace"))
        costs = [c for c in ("tokens_loaded", "nodes_visited") if c in q.columns]
        rows.append(
            q.select(*recall_columns(q), *costs).with_columns(
                pl.lit(name).alias("weights"),
                pl.lit(sel.height).alias("fragments"),
                pl.lit(moved.height).alias("changed tree"),
                pl.lit((sel["candidate"] == FLAT).sum()).alias("flat tree"),
            )
        )
    if not rows:
        return pl.DataFrame()
    t = pl.concat(rows, how="diagonal_relaxed")
    first = ["weights", "fragments", "changed tree", "flat tree"]
    return t.select(*first, pl.exclude(first).round(4))


def sweep_verdict(table: pl.DataFrame) -> str:
    """`sweep_table` in words: how many fragments the weights move, and how far recall moves."""
    if table.is_empty() or not table["fragments"].max():
        return "No fragment has a tree (no evidence was found): the weights have nothing to choose between."
    recall = recall_columns(table)
    spread = max((table[c].max() - table[c].min()) for c in recall) if recall and table[recall[0]].null_count() < table.height else None
    moved = table["changed tree"] / table["fragments"]
    most = table.row(int(moved.arg_max()), named=True)
    words = (
        f"The weight sets move from 0 to {most['changed tree']} of {most['fragments']} fragments ({moved.max():.0%}, with "
        f"{most['weights']}) to another tree than the reference weights choose; "
    )
    if spread is None:
        return words + "recall was not measured (no question)."
    recall_words = "is the same at every budget" if spread < 5e-4 else f"moves by at most {spread:.3f} at any budget"
    nodes = ""
    if "nodes_visited" in table.columns:
        nodes = f", nodes visited {table['nodes_visited'].min():.2f} to {table['nodes_visited'].max():.2f}"
    return words + f"Qspace's recall {recall_words}{nodes}."


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
        # the picked questions only: each row is given its whole document before the slice
        gold.filter(pl.col("id").is_in(picked["query_id"].implode()))
        .select(
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

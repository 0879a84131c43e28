"""Stage 13: traversal simulation.

Every direct question is replayed against the selected tree of its fragment. The reader walks
from the root, reading children in order until the one on the way to each evidence leaf the
question needs; a leaf is chosen by its value *and* its span (a tree may hold several leaves with
one role, and the original implementation's "last node per role" returned values from the wrong
sentence). What it visits and loads is counted, and the values it returns are checked against the
question's own values and offsets.
"""

from __future__ import annotations

import polars as pl

from ..exprs import LOADED_ROW
from .compile import at_rows, node_frame, walk

SIMULATIONS = {
    "affordance_id": pl.String,
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "tree_id": pl.String,
    "candidate": pl.String,
    "intent": pl.String,
    "question": pl.String,
    "path": pl.List(pl.String),
    "nodes_visited": pl.Int64,
    "context_tokens": pl.Int64,
    "path_length": pl.Int64,
    "n_needed": pl.Int64,
    "n_found": pl.Int64,
    "answer": pl.List(pl.String),
    "expected": pl.List(pl.String),
    "span_start": pl.Int64,
    "span_end": pl.Int64,
    "found_all": pl.Boolean,
    "correct": pl.Boolean,
}


def simulate(affordances: pl.LazyFrame, nodes: pl.LazyFrame, scores: pl.LazyFrame) -> pl.LazyFrame:
    """One trace per direct question whose fragment has a selected tree (schema SIMULATIONS)."""
    selected = scores.filter(pl.col("selected")).select("tree_id", "fragment_id", "candidate").collect()
    # a filter keeps the nodes tree by tree in preorder, as node_frame needs them
    n = node_frame(
        nodes.filter(pl.col("tree_id").is_in(selected["tree_id"].implode())),
        "kind",
        "label",
        "tokens",
        "role",
        "value",
        "value_start",
        "span_start",
    )
    leaves = n.filter(pl.col("kind") == "leaf").select(
        "_r", "tree_id", pl.col("preorder").alias("_leaf"), "role", "value", "value_start", "span_start", "depth"
    )
    asks = (
        # a question with no extracted value has no leaf to walk to: it is not replayed
        # (the fragment filter is applied as the table is read: a shard of trees holds few of its rows)
        affordances.filter(
            (pl.col("support") == "direct")
            & (pl.col("roles").list.len() > 0)
            & pl.col("fragment_id").is_in(selected["fragment_id"].implode())
        )
        .select("affordance_id", "fragment_id", "doc_id", "intent", "question", "span_start", "span_end", "roles")
        .join(selected.lazy(), on="fragment_id")
        .collect()
    )
    wanted = (
        asks.select("affordance_id", "tree_id", "roles")
        .explode("roles")
        .filter(pl.col("roles").is_not_null())
        .select(
            "affordance_id",
            "tree_id",
            pl.col("roles").struct.field("role"),
            pl.col("roles").struct.field("value"),
            pl.col("roles").struct.field("start").alias("value_start"),
        )
    )
    # choose each leaf by role, value and exact offset: never by role alone
    hits = wanted.join(leaves, on=["tree_id", "role", "value", "value_start"], how="left")
    seen = at_rows(
        n,
        walk(n, hits.filter(pl.col("_leaf").is_not_null()).select("affordance_id", "_r"), ["affordance_id"]),
        "preorder",
        "kind",
        "label",
        "tokens",
        "span_start",
    ).rename({"span_start": "v_span"})
    # labels read at roots and groups, and each distinct leaf span loaded once (per question: its id is in the key)
    loads = (pl.col("kind") != "leaf") | pl.struct("affordance_id", "kind", "v_span").is_first_distinct()
    walked = (
        seen.sort(["affordance_id", "preorder"])
        .with_columns(loads.alias("loads"))
        .group_by("affordance_id", maintain_order=True)
        .agg(
            pl.col("label").alias("path"),
            pl.len().cast(pl.Int64).alias("nodes_visited"),
            pl.col("tokens").filter(pl.col("loads")).sum().cast(pl.Int64).alias("context_tokens"),
        )
    )
    found = hits.group_by("affordance_id").agg(
        pl.len().cast(pl.Int64).alias("n_needed"),
        pl.col("_leaf").is_not_null().sum().cast(pl.Int64).alias("n_found"),
        # in text order; two values starting at one offset in the order of the values themselves
        pl.col("value").sort_by("value_start", "value").alias("expected"),
        pl.col("value")
        .filter(pl.col("_leaf").is_not_null())
        .sort_by(pl.col("value_start").filter(pl.col("_leaf").is_not_null()), pl.col("value").filter(pl.col("_leaf").is_not_null()))
        .alias("answer"),
        pl.col("depth").max().cast(pl.Int64).alias("path_length"),
        pl.col("span_start").drop_nulls().unique().alias("_leaf_spans"),
    )
    out = (
        asks.join(found, on="affordance_id", how="left")
        .join(walked, on="affordance_id", how="left")
        .with_columns(
            (pl.col("n_found") == pl.col("n_needed")).alias("found_all"),
            # right values, and every one read from the question's own sentence
            (
                (pl.col("answer") == pl.col("expected"))
                & (pl.col("_leaf_spans").list.len() == 1)
                & (pl.col("_leaf_spans").list.first() == pl.col("span_start"))
            ).alias("_same"),
        )
        .with_columns(pl.col("_same").fill_null(False).alias("correct"))
    )
    return out.lazy().select([pl.col(c).cast(t) for c, t in SIMULATIONS.items()]).sort("affordance_id")


def traces_markdown(sims: pl.DataFrame, nodes: pl.DataFrame, inventory: pl.DataFrame, docs: pl.DataFrame, n: int = 12) -> str:
    """Readable walkthroughs of a few simulated questions (one per intent first, then the rest)."""
    pick = sims.filter(pl.col("correct")).sort(["intent", "affordance_id"]).group_by("intent", maintain_order=True).head(2).head(n)
    pick = pick.join(inventory.filter(LOADED_ROW).select("doc_id", pl.col("path").alias("doc_path")), on="doc_id", how="left").join(
        docs, on="doc_id", how="left"
    )
    ok = sims["correct"].sum()
    lines = [
        "# Sample retrieval traces",
        "",
        f"{sims.height} direct questions replayed against the selected tree of their fragment; "
        f"{ok} returned the right values from the right sentence ({ok / max(sims.height, 1):.1%})."
        if sims.height
        else "No direct question to replay: no fragment of this corpus has a retrieval tree.",
        "",
    ]
    for r in pick.iter_rows(named=True):
        quote = r["doc_text"][r["span_start"] : r["span_end"]] if r["doc_text"] else ""
        lines += [
            f"## {r['intent']}: {r['question']}",
            "",
            f"- document: `{r['doc_path']}`, characters {r['span_start']}-{r['span_end']}",
            f"- tree: `{r['candidate']}` ({r['nodes_visited']} nodes visited, "
            f"{r['context_tokens']} tokens loaded, depth {r['path_length']})",
            "- walk: " + " -> ".join(f"`{p}`" for p in (r["path"] or [])),
            f"- answer: {', '.join(r['answer'] or [])}",
            f'- cited span: "{quote}"',
            "",
        ]
    return "\n".join(lines)

"""The stages of the pipeline, declared once: inputs, parameters, output schemas and the adapter.

The adapters are the thin layer between the domain modules, which compute on frames, and the
runtime, which cuts the work into shards and runs it in the pool (`runtime.stage` states the
contract). Batching is decided here, in one layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Iterator

import polars as pl

from .. import affordances, ask, corpus, evaluation, structure
from .. import exprs as exprs_mod
from .. import fragments as fragments_mod
from .. import frames as frames_mod
from .. import ids as ids_mod
from .. import schemas as schemas_mod
from .. import tokens as tokens_mod
from ..affordances import detect as affordances_mod
from ..ask import answer as ask_mod
from ..ask import dictionary as dictionary_mod
from ..corpus import inventory as inventory_mod
from ..corpus import pages as pages_mod
from ..corpus.pages import document_text
from ..evaluation import baselines as baselines_mod
from ..evaluation import chunks as chunks_mod
from ..evaluation import gold as gold_mod
from ..evaluation import metrics as metrics_mod
from ..evaluation import misses as misses_mod
from ..evaluation import qspace as retrieval_mod
from ..qspace import classes as classes_mod
from ..qspace import density as density_mod
from ..qspace import evidence as evidence_mod
from ..qspace import graph as graph_mod
from ..qspace import prototypes as prototypes_mod
from ..qspace import proximity as proximity_mod
from ..runtime import workers as workers_mod
from ..runtime.parts import per_document as reuse_parts
from ..runtime.shards import SortSpill, doc_shards, key_shards, run_tasks
from ..runtime.stage import Runtime, Stage
from ..structure import tree as tree_mod
from ..trees import compile as trees_mod
from ..trees import simulate as simulation_mod
from . import per_document

# what every pool worker imports on start, while this process prepares the work
workers_mod.PRELOAD[:] = ["qspace_frames.affordances.detect", "qspace_frames.fragments", "qspace_frames.corpus.loaders"]


# the per-document stages whose documents' rows are kept as parts (`runtime.parts`) for the next run
PER_DOCUMENT = ("corpus", "structure", "fragments", "affordances", "chunks")

# ---- batching: how much each streaming stage holds at once -------------------------------------
AFFORDANCE_SHARD_ROWS = 200_000  # affordances read per shard (whole documents) by the stages that stream them
TREE_SHARD_UNITS = 10_000  # evidence units compiled per shard: memory bounded whatever the corpus size
SIMULATION_SHARD_NODES = 500_000  # tree nodes read per shard
UNIT_SHARD_ROWS = 25_000  # fragments turned into the ask path's sentence units per step


@dataclass(frozen=True)
class CorpusFiles:
    """The run's source: the corpus folder and its discovered files."""

    root: Path
    files: pl.DataFrame


def _corpus(t, p, rt: Runtime):
    src: CorpusFiles = t["files"]
    loaded, hints = [], []  # per file and per document: small, kept for the inventory at the end
    for status, pages in per_document.load_stage(src.files, src.root, p.corpus, workers=rt.workers, engine=rt.engine, parts=rt.parts):
        loaded.append(status)
        hints.append(inventory_mod.domain_hints(pages.lazy(), p.corpus).collect())
        yield "pages", pages
    yield "inventory", inventory_mod.inventory(src.files.lazy(), pl.concat(loaded).lazy(), pl.concat(hints).lazy(), p.corpus).collect()


# The per-document stages stream: inputs read a row group at a time, outputs written a shard at a time.
def _structure_shard(pages: pl.DataFrame, sp) -> pl.DataFrame:
    """The structure trees of a shard of documents (a pool task)."""
    return tree_mod.sections(pages.lazy(), sp).collect()


def _structure(t, p, rt: Runtime):
    """Each document's structure tree, from its pages alone: fragment sizes do not rebuild it."""
    tasks = ((pages,) for pages in doc_shards(t["corpus/pages"].batches()))
    for part in reuse_parts(tasks, partial(_structure_shard, sp=p.structure), rt.workers, rt.parts, t["corpus/pages"].parts):
        yield "sections", part


def _pooled(rt: Runtime, upstream: dict[str, str]) -> dict:
    """What a per-document driver is given of the runtime: the pool, the engine, and the parts
    with the part keys of the documents' inputs (`runtime.parts`)."""
    return {"workers": rt.workers, "engine": rt.engine, "parts": rt.parts, "upstream": upstream}


def _fragments(t, p, rt: Runtime):
    pages = t["corpus/pages"]
    for part in per_document.fragment_stage(pages.batches(), p.fragments, structure=p.structure, **_pooled(rt, pages.parts)):
        yield "fragments", part


def _affordances(t, p, rt: Runtime):
    fragments = t["fragments/fragments"]
    stream = per_document.affordance_stage(fragments.batches(), t["corpus/pages"].batches(), p.affordances, **_pooled(rt, fragments.parts))
    for kept, rejected in stream:
        yield "affordances", kept
        yield "rejected", rejected


def _affordance_shards(affordances, columns: list[str]) -> Iterator[pl.DataFrame]:
    """The stored affordances (in document order) in shards of whole documents: a fragment's
    rows, and so every per-fragment group, are never split."""
    return key_shards(affordances.batches(columns=columns), "doc_id", AFFORDANCE_SHARD_ROWS)


def _prototypes(t, p, rt: Runtime):
    """Prototypes and edges, streamed over shards of whole documents: each shard's prototype
    parts are kept (a few rows per prototype) and combined at the end; its edges, which belong to
    one fragment each, go through an external sort by fragment id."""
    cols = [
        "affordance_id",
        "fragment_id",
        "doc_id",
        "prototype_id",
        "intent",
        "support",
        "slot_signature",
        "role_signature",
        "question",
        "confidence",
        "span",
        "span_start",
        "span_end",
    ]
    spill = SortSpill("fragment_id", ["fragment_id", "prototype_id"], skip=len("frag_"))
    parts = []
    for aff in _affordance_shards(t["affordances/affordances"], cols):
        parts.append(frames_mod.detached(prototypes_mod.prototype_parts(aff.lazy()).collect()))
        spill.add(prototypes_mod.edges(aff.lazy()).collect())
    if not parts:  # no affordance: the parts of none, with their columns
        parts = [prototypes_mod.prototype_parts(t["affordances/affordances"].scan().select(cols).clear()).collect()]
    yield "prototypes", prototypes_mod.combine_parts(pl.concat(parts).lazy()).collect()
    for edges in spill.sorted():
        yield "fragment_question_edges", edges


def _classes(t, p, rt: Runtime):
    cls, members = classes_mod.classes(t["prototypes/prototypes"].scan(), p.classes)
    return {"classes": cls, "memberships": members}


def _density(t, p, rt: Runtime):
    return {"density": density_mod.density(t["prototypes/prototypes"].scan(), p.density).collect()}


def _proximity(t, p, rt: Runtime):
    return {"proximity": proximity_mod.proximity(t["prototypes/prototypes"].scan(), t["classes/memberships"].scan(), p.proximity).collect()}


def _evidence(t, p, rt: Runtime):
    """Evidence units, streamed: a unit belongs to one fragment, so shards of whole documents give
    every unit; they are ordered by fragment id (a hash) through an external sort."""
    spill = SortSpill("fragment_id", ["fragment_id", "value_start", "role", "value_end", "value"], skip=len("frag_"))
    cols = ["affordance_id", "fragment_id", "doc_id", "prototype_id", "confidence", "span", "span_start", "span_end", "roles", "support"]
    for aff in _affordance_shards(t["affordances/affordances"], cols):
        spill.add(evidence_mod.evidence(aff.lazy(), p.evidence).collect())
    yield "codemand", evidence_mod.codemand(t["prototypes/prototypes"].scan(), t["density/density"].scan()).collect()
    for ev in spill.sorted():
        yield "evidence", ev


def _graph(t, p, rt: Runtime):
    nodes, edges = graph_mod.graph(
        t["prototypes/prototypes"].scan(),
        t["classes/memberships"].scan(),
        t["classes/classes"].scan(),
        t["prototypes/fragment_question_edges"].scan(),
        t["proximity/proximity"].scan(),
        t["density/density"].scan(),
    )
    return {"graph_nodes": nodes, "graph_edges": edges}


def _trees_shard(t, p, ev: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(nodes, scores) of the fragments of one evidence shard (a pool task: the fragments and
    edges are scanned from their stored tables, only those used)."""
    direct = (
        t["prototypes/fragment_question_edges"]
        .scan()
        .filter(pl.col("support") == "direct")
        .select("fragment_id", "prototype_id", "support")
    )
    small = [
        t[k].scan() for k in ("prototypes/prototypes", "density/density", "classes/memberships", "classes/classes", "evidence/codemand")
    ]
    return trees_mod.compile_trees(
        t["fragments/fragments"].scan(), ev.lazy(), direct, *small, p.trees, fragment_encoding=p.fragments.encoding
    )


def _trees(t, p, rt: Runtime):
    """Trees, streamed. Evidence (stored in fragment order) is read in shards of whole fragments;
    a tree depends only on its own fragment and the corpus-wide tables, so each shard gives the
    rows one pass would, and the shards run side by side in the pool. Nodes and scores are
    ordered by fragment first, so the shards' rows arrive in their final order."""
    tasks = ((t, p, ev) for ev in key_shards(t["evidence/evidence"].batches(), "fragment_id", TREE_SHARD_UNITS))
    for nodes, scores in run_tasks(_trees_shard, tasks, rt.workers):
        yield "tree_nodes", nodes
        yield "tree_scores", scores


def _simulation(t, p, rt: Runtime):
    """Simulations, streamed: tree nodes (stored fragment by fragment) are read in shards of whole fragments,
    each shard replays the questions whose fragment selected one of its trees, and the traces,
    ordered by affordance id (a hash), go through an external sort."""
    selected = t["trees/tree_scores"].scan().filter(pl.col("selected")).collect()
    spill = SortSpill("affordance_id", ["affordance_id"], skip=len("aff_"))
    for nodes in key_shards(t["trees/tree_nodes"].batches(), "fragment_id", SIMULATION_SHARD_NODES):
        trees = selected.join(nodes.select(pl.col("tree_id").unique()), on="tree_id", how="semi")
        spill.add(simulation_mod.simulate(t["affordances/affordances"].scan(), nodes.lazy(), trees.lazy()).collect())
    for sims in spill.sorted():
        yield "simulations", sims


def _chunk_shard(pages: pl.DataFrame, p) -> pl.DataFrame:
    """The BM25 baseline's chunks of a shard of pages (a pool task)."""
    return pl.concat(chunks_mod.chunk_batches(document_text(pages.lazy()).collect(), p))


def _chunks(t, p, rt: Runtime):
    """The BM25 baseline's fixed-token chunks of the whole corpus, cut shard by shard in the pool.
    Tokenizing the corpus is the evaluation's largest cost, and the chunks read only the chunk
    size and the encoding: as their own stage, a sweep of any other parameter reuses them."""
    tasks = ((pages,) for pages in doc_shards(t["corpus/pages"].batches()))
    for part in reuse_parts(tasks, partial(_chunk_shard, p=p.evaluation), rt.workers, rt.parts, t["corpus/pages"].parts):
        yield "chunks", part


def ask_units(t, ap) -> Iterator[pl.DataFrame]:
    """The ask path's sentence units of a run, batch by batch (`ask.unit_batches`)."""
    shards = key_shards(t["fragments/fragments"].batches(columns=ask_mod.UNIT_COLUMNS), "doc_id", UNIT_SHARD_ROWS)
    return ask_mod.unit_batches(t["corpus/inventory"].scan(), shards, ap)


def ask_leaves(t) -> pl.DataFrame:
    return ask_mod.leaf_intents(
        t["trees/tree_nodes"].scan(), t["trees/tree_scores"].scan(), t["evidence/evidence"].scan(), t["prototypes/prototypes"].scan()
    )


def _strategy_task(kind: str, t, p, resolved: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame | None]:
    """The Qspace or ask strategy's retrievals on the resolved questions, their per-query values
    and, for Qspace, the per-query values of every tree choice (retrieval_mod.TREE_CHOICES, as
    their `strategy`) on a sample of the questions: the tree ablation (a pool task)."""
    e = p.evaluation
    if kind == "ask":
        dictionary = dictionary_mod.load_dictionary(t["dictionary"])
        runs = ask_mod.ask_strategy(resolved, ask_units(t, p.affordances), ask_leaves(t), dictionary, e)
        return runs, metrics_mod.per_query(runs, resolved, e), None
    sample = retrieval_mod.ablation_questions(resolved, e.tree_ablation_questions, e.tree_ablation_max_chars)
    runs, by_tree = retrieval_mod.by_tree(
        resolved,
        t["fragments/fragments"].batches(),
        t["prototypes/prototypes"].scan(),
        t["evidence/evidence"].scan(),
        t["density/density"].scan(),
        t["trees/tree_nodes"].scan(),
        t["trees/tree_scores"].scan(),
        e,
        p.affordances,
        ablation=sample,
    )
    per_tree = [metrics_mod.per_query(r, sample, e).with_columns(pl.lit(choice).alias("strategy")) for choice, r in by_tree.items()]
    ablation = pl.concat(per_tree) if per_tree else pl.DataFrame(schema=metrics_mod.per_query_schema(e))
    return runs, metrics_mod.per_query(runs, resolved, e), ablation


def _evaluation(t, p, rt: Runtime):
    """Every strategy on the gold questions. The corpus is read in batches (its stored chunks for
    BM25, its fragments and sentences for the Qspace and ask rankings): corpus-wide statistics
    are counted batch by batch, and only the questions' own documents are kept whole."""
    e = p.evaluation
    inv = t["corpus/inventory"].read()
    gold = t["gold"]
    if gold is None:  # silver questions from validated affordances
        gold = gold_mod.silver_gold(t["affordances/affordances"].scan(), inv, max_per_intent=e.silver_max_per_intent)
    gold_docs = inv.join(gold.select(pl.col("document").alias("path")).unique(), on="path", how="semi")["doc_id"]
    # a filter the page scan applies as it reads (a join would read every page first: 0.35 GB at x16)
    docs = document_text(t["corpus/pages"].scan().filter(pl.col("doc_id").is_in(gold_docs.implode()))).collect()
    resolved = gold_mod.resolve_gold(gold, inv, docs)
    # The strategies are independent, and so are a strategy's per-query values: Qspace and ask
    # start in the pool, one per worker, and measure their own runs there, while this process runs
    # and measures the baselines over the stored chunks (the corpus's BM25 counts) and the fragments.
    strategies = workers_mod.started(_strategy_task, [("qspace", t, p, resolved), ("ask", t, p, resolved)], rt.workers)
    baselines = baselines_mod.run_baselines(resolved, None, t["fragments/fragments"].scan(), e, chunked=t["chunks/chunks"].batches())
    baselines = (baselines, metrics_mod.per_query(baselines, resolved, e))
    (q_runs, q_pq, per_tree), (a_runs, a_pq, _) = (result() for result in strategies)
    retrievals = pl.concat([q_runs, a_runs, baselines[0]]).sort(["strategy", "query_id", "rank"])
    pq = pl.concat([q_pq, a_pq, baselines[1]]).sort(["strategy", "query_id"])
    return {
        "gold": resolved,
        "retrievals": retrievals,
        "per_query": pq,
        "metrics": metrics_mod.metrics(retrievals, resolved, e, per_query_frame=pq),
        "misses": misses_mod.misses(retrievals, pq, resolved, t["fragments/fragments"].scan(), e.budgets),
        # Qspace with each tree choice: the selected trees, one candidate forced everywhere, or none
        "tree_ablation": metrics_mod.metrics(None, resolved, e, per_query_frame=per_tree),
    }


STAGES: dict[str, Stage] = {
    s.name: s
    for s in [
        Stage(
            "corpus",
            "discovery, loading, inventory and pages",
            ("files",),
            ("corpus",),
            {"inventory": schemas_mod.INVENTORY, "pages": schemas_mod.PAGES},
            _corpus,
            (corpus, ids_mod, schemas_mod, per_document),
        ),
        Stage(
            "structure",
            "document structure trees",
            ("corpus/pages",),
            ("structure",),
            {"sections": tree_mod.SECTIONS},
            _structure,
            (structure, fragments_mod, ids_mod),
        ),
        Stage(
            "fragments",
            "hierarchical fragments",
            ("corpus/pages",),
            ("structure", "fragments"),
            {"fragments": schemas_mod.FRAGMENTS},
            _fragments,
            (fragments_mod, structure, tokens_mod, per_document),
        ),
        Stage(
            "affordances",
            "answer affordances with verified spans",
            ("corpus/pages", "fragments/fragments"),
            ("affordances",),
            {"affordances": affordances_mod.AFFORDANCES, "rejected": affordances_mod.REJECTED},
            _affordances,
            (affordances, fragments_mod, per_document),
        ),
        Stage(
            "prototypes",
            "question prototypes and fragment-question edges",
            ("affordances/affordances",),
            (),
            {"prototypes": prototypes_mod.PROTOTYPES, "fragment_question_edges": prototypes_mod.EDGES},
            _prototypes,
            (prototypes_mod, affordances, exprs_mod, frames_mod, _affordance_shards),
        ),
        Stage(
            "classes",
            "proposed question classes",
            ("prototypes/prototypes",),
            ("classes",),
            {"classes": classes_mod.CLASSES, "memberships": classes_mod.MEMBERSHIPS},
            _classes,
            (classes_mod, exprs_mod, ids_mod),
        ),
        Stage(
            "density",
            "question density",
            ("prototypes/prototypes",),
            ("density",),
            {"density": density_mod.DENSITY},
            _density,
            (density_mod, exprs_mod),
        ),
        Stage(
            "proximity",
            "prototype proximity",
            ("prototypes/prototypes", "classes/memberships"),
            ("proximity",),
            {"proximity": proximity_mod.PROXIMITY},
            _proximity,
            (proximity_mod, exprs_mod),
        ),
        Stage(
            "evidence",
            "evidence units and co-demand",
            ("affordances/affordances", "prototypes/prototypes", "density/density"),
            ("evidence",),
            {"evidence": evidence_mod.EVIDENCE, "codemand": evidence_mod.CODEMAND},
            _evidence,
            (evidence_mod, exprs_mod, ids_mod, _affordance_shards),
        ),
        Stage(
            "graph",
            "the Qspace graph",
            (
                "prototypes/prototypes",
                "classes/memberships",
                "classes/classes",
                "prototypes/fragment_question_edges",
                "proximity/proximity",
                "density/density",
            ),
            (),
            {"graph_nodes": graph_mod.GRAPH_NODES, "graph_edges": graph_mod.GRAPH_EDGES},
            _graph,
            (graph_mod, exprs_mod),
        ),
        Stage(
            "trees",
            "candidate retrieval trees and J(T)",
            (
                "fragments/fragments",
                "evidence/evidence",
                "evidence/codemand",
                "prototypes/prototypes",
                "prototypes/fragment_question_edges",
                "density/density",
                "classes/memberships",
                "classes/classes",
            ),
            ("trees", "fragments.encoding"),
            {"tree_nodes": trees_mod.TREE_NODES, "tree_scores": trees_mod.TREE_SCORES},
            _trees,
            (trees_mod, tokens_mod, exprs_mod, ids_mod, _trees_shard),
        ),
        Stage(
            "simulation",
            "traversal simulation",
            ("affordances/affordances", "trees/tree_nodes", "trees/tree_scores"),
            (),
            {"simulations": simulation_mod.SIMULATIONS},
            _simulation,
            (simulation_mod, trees_mod, exprs_mod),
        ),
        Stage(
            "chunks",
            "fixed-token chunks of the BM25 baseline",
            ("corpus/pages",),
            ("evaluation.chunk_tokens", "evaluation.encoding"),
            {"chunks": chunks_mod.CHUNK},
            _chunks,
            (chunks_mod, tokens_mod, pages_mod, _chunk_shard),
        ),
        Stage(
            "evaluation",
            "measured evaluation of every strategy",
            (
                "corpus/inventory",
                "corpus/pages",
                "fragments/fragments",
                "affordances/affordances",
                "prototypes/prototypes",
                "evidence/evidence",
                "density/density",
                "trees/tree_nodes",
                "trees/tree_scores",
                "chunks/chunks",
                "gold",
                "dictionary",
            ),
            ("evaluation", "affordances"),
            {
                "gold": gold_mod.RESOLVED_GOLD,
                "retrievals": metrics_mod.RETRIEVALS,
                "per_query": lambda p: metrics_mod.per_query_schema(p.evaluation),
                "metrics": metrics_mod.METRICS,
                "misses": misses_mod.MISSES,
                "tree_ablation": metrics_mod.METRICS,
            },
            _evaluation,
            (evaluation, ask, affordances, frames_mod, tokens_mod, exprs_mod, pages_mod, _strategy_task, ask_units, ask_leaves),
        ),
    ]
}

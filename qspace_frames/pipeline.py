"""The pipeline: every stage declared once, and the `Workbench` that runs them through the store.

A stage is declared with its input tables, the parameter keys it reads, its output tables and
their schemas, and a function over frames (`runtime.stage`): the functions below are the thin
adapters between the domain modules, which compute on frames, and the runtime, which cuts the
work into shards and runs it in the pool. Batching is decided here, in one layer.
`Workbench.artifact(stage)` returns the stored artifact when its id is already in the store
(identical inputs, parameters and code) and computes and stores it otherwise. Every call is
logged to `reports/<run>/stage_log.jsonl` so the runner can say what was reused.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import polars as pl

from . import affordances as affordances_mod
from . import ask as ask_mod
from . import baselines as baselines_mod
from . import classes as classes_mod
from . import density as density_mod
from . import evaluation as evaluation_mod
from . import evidence as evidence_mod
from . import exprs as exprs_mod
from . import fragments as fragments_mod
from . import frames as frames_mod
from . import graph as graph_mod
from . import ids as ids_mod
from . import inventory as inventory_mod
from . import loaders as loaders_mod
from . import pages as pages_mod
from . import per_document
from . import prototypes as prototypes_mod
from . import proximity as proximity_mod
from . import questions as questions_mod
from . import retrieval as retrieval_mod
from . import schemas as schemas_mod
from . import simulation as simulation_mod
from . import tokens as tokens_mod
from . import trees as trees_mod
from .ids import canonical_json, sha256_hex
from .pages import document_text
from .params import Params, load_params
from .runtime import stage as stage_mod
from .runtime import workers as workers_mod
from .runtime.shards import SortSpill, check_engine, doc_shards, key_shards, run_tasks
from .runtime.stage import Runtime, Stage
from .runtime.store import Artifact, Store, Table, artifact_id

# what every pool worker imports on start, while this process prepares the work
workers_mod.PRELOAD[:] = ["qspace_frames.affordances", "qspace_frames.fragments", "qspace_frames.loaders"]


def find_project_root(start: Path | None = None) -> Path:
    """The folder holding pyproject.toml and params/, searched upwards (notebooks run in notebooks/)."""
    here = (start or Path.cwd()).resolve()
    for d in [here, *here.parents]:
        if (d / "pyproject.toml").is_file() and (d / "params").is_dir():
            return d
    return here


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
    for status, pages in per_document.load_stage(src.files, src.root, p.corpus, workers=rt.workers, engine=rt.engine):
        loaded.append(status)
        hints.append(inventory_mod.domain_hints(pages.lazy(), p.corpus).collect())
        yield "pages", pages
    yield "inventory", inventory_mod.inventory(src.files.lazy(), pl.concat(loaded).lazy(), pl.concat(hints).lazy(), p.corpus).collect()


# The per-document stages stream: inputs read a row group at a time, outputs written a shard at a time.
def _fragments(t, p, rt: Runtime):
    for part in per_document.fragment_stage(t["corpus/pages"].batches(), p.fragments, workers=rt.workers, engine=rt.engine):
        yield "fragments", part


def _affordances(t, p, rt: Runtime):
    for kept, rejected in per_document.affordance_stage(t["fragments/fragments"].batches(), t["corpus/pages"].batches(),
                                                        p.affordances, workers=rt.workers, engine=rt.engine):
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
    cols = ["affordance_id", "fragment_id", "doc_id", "prototype_id", "intent", "support", "slot_signature",
            "role_signature", "question", "confidence", "span", "span_start", "span_end"]
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
        t["prototypes/prototypes"].scan(), t["classes/memberships"].scan(), t["classes/classes"].scan(),
        t["prototypes/fragment_question_edges"].scan(), t["proximity/proximity"].scan(), t["density/density"].scan(),
    )
    return {"graph_nodes": nodes, "graph_edges": edges}


def _trees_shard(t, p, ev: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(nodes, scores) of the fragments of one evidence shard (a pool task: the fragments and
    edges are scanned from their stored tables, only those used)."""
    direct = (t["prototypes/fragment_question_edges"].scan().filter(pl.col("support") == "direct")
              .select("fragment_id", "prototype_id", "support"))
    small = [t[k].scan() for k in ("prototypes/prototypes", "density/density", "classes/memberships", "classes/classes", "evidence/codemand")]
    return trees_mod.compile_trees(t["fragments/fragments"].scan(), ev.lazy(), direct, *small, p.trees, fragment_encoding=p.fragments.encoding)


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


def _chunk_shard(p, pages: pl.DataFrame) -> pl.DataFrame:
    """The BM25 baseline's chunks of a shard of pages (a pool task)."""
    return pl.concat(baselines_mod.chunk_batches(document_text(pages.lazy()).collect(), p))


def _chunks(t, p, rt: Runtime):
    """The BM25 baseline's fixed-token chunks of the whole corpus, cut shard by shard in the pool.
    Tokenizing the corpus is the evaluation's largest cost, and the chunks read only the chunk
    size and the encoding: as their own stage, a sweep of any other parameter reuses them."""
    tasks = ((p.evaluation, pages) for pages in doc_shards(t["corpus/pages"].batches()))
    for part in run_tasks(_chunk_shard, tasks, rt.workers):
        yield "chunks", part


def ask_units(t, ap) -> Iterator[pl.DataFrame]:
    """The ask path's sentence units of a run, batch by batch (`ask.unit_batches`)."""
    shards = key_shards(t["fragments/fragments"].batches(columns=ask_mod.UNIT_COLUMNS), "doc_id", UNIT_SHARD_ROWS)
    return ask_mod.unit_batches(t["corpus/inventory"].scan(), shards, ap)


def ask_leaves(t) -> pl.DataFrame:
    return ask_mod.leaf_intents(t["trees/tree_nodes"].scan(), t["trees/tree_scores"].scan(), t["evidence/evidence"].scan(),
                                t["prototypes/prototypes"].scan())


def _strategy_task(kind: str, t, p, resolved: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The Qspace or ask strategy's retrievals on the resolved questions and their per-query values
    (a pool task)."""
    e = p.evaluation
    if kind == "qspace":
        runs = retrieval_mod.qspace(resolved, t["fragments/fragments"].batches(), t["prototypes/prototypes"].scan(), t["evidence/evidence"].scan(),
                                    t["density/density"].scan(), t["trees/tree_nodes"].scan(), t["trees/tree_scores"].scan(), e, p.affordances)
    else:
        dictionary = questions_mod.load_dictionary(t["dictionary"])
        runs = ask_mod.ask_strategy(resolved, ask_units(t, p.affordances), ask_leaves(t), dictionary, e)
    return runs, evaluation_mod.per_query(runs, resolved, e)


def _evaluation(t, p, rt: Runtime):
    """Every strategy on the gold questions. The corpus is read in batches (its stored chunks for
    BM25, its fragments and sentences for the Qspace and ask rankings): corpus-wide statistics
    are counted batch by batch, and only the questions' own documents are kept whole."""
    e = p.evaluation
    inv = t["corpus/inventory"].read()
    gold = t["gold"]
    if gold is None:  # silver questions from validated affordances
        gold = evaluation_mod.silver_gold(t["affordances/affordances"].scan(), inv, max_per_intent=e.silver_max_per_intent)
    gold_docs = inv.join(gold.select(pl.col("document").alias("path")).unique(), on="path", how="semi")["doc_id"]
    # a filter the page scan applies as it reads (a join would read every page first: 0.35 GB at x16)
    docs = document_text(t["corpus/pages"].scan().filter(pl.col("doc_id").is_in(gold_docs.implode()))).collect()
    resolved = evaluation_mod.resolve_gold(gold, inv, docs)
    # The strategies are independent, and so are a strategy's per-query values: Qspace and ask
    # start in the pool, one per worker, and measure their own runs there, while this process runs
    # and measures the baselines over the stored chunks (the corpus's BM25 counts) and the fragments.
    strategies = workers_mod.started(_strategy_task, [("qspace", t, p, resolved), ("ask", t, p, resolved)], rt.workers)
    baselines = baselines_mod.run_baselines(resolved, None, t["fragments/fragments"].scan(), e, chunked=t["chunks/chunks"].batches())
    baselines = (baselines, evaluation_mod.per_query(baselines, resolved, e))
    runs = [result() for result in strategies] + [baselines]
    retrievals = pl.concat([r for r, _ in runs]).sort(["strategy", "query_id", "rank"])
    pq = pl.concat([q for _, q in runs]).sort(["strategy", "query_id"])
    return {"gold": resolved, "retrievals": retrievals, "per_query": pq,
            "metrics": evaluation_mod.metrics(retrievals, resolved, e, per_query_frame=pq)}


STAGES: dict[str, Stage] = {
    s.name: s
    for s in [
        Stage("corpus", "discovery, loading, inventory and pages", ("files",), ("corpus",),
              {"inventory": schemas_mod.INVENTORY, "pages": schemas_mod.PAGES}, _corpus,
              (inventory_mod, pages_mod, loaders_mod, ids_mod, schemas_mod, per_document)),
        Stage("fragments", "hierarchical fragments", ("corpus/pages",), ("fragments",), {"fragments": schemas_mod.FRAGMENTS}, _fragments,
              (fragments_mod, tokens_mod, per_document)),
        Stage("affordances", "answer affordances with verified spans", ("corpus/pages", "fragments/fragments"), ("affordances",),
              {"affordances": affordances_mod.AFFORDANCES, "rejected": affordances_mod.REJECTED}, _affordances,
              (affordances_mod, fragments_mod, per_document)),
        Stage("prototypes", "question prototypes and fragment-question edges", ("affordances/affordances",), (),
              {"prototypes": prototypes_mod.PROTOTYPES, "fragment_question_edges": prototypes_mod.EDGES}, _prototypes,
              (prototypes_mod, affordances_mod, exprs_mod, _affordance_shards)),
        Stage("classes", "proposed question classes", ("prototypes/prototypes",), ("classes",),
              {"classes": classes_mod.CLASSES, "memberships": classes_mod.MEMBERSHIPS}, _classes, (classes_mod, exprs_mod, ids_mod)),
        Stage("density", "question density", ("prototypes/prototypes",), ("density",), {"density": density_mod.DENSITY}, _density,
              (density_mod, exprs_mod)),
        Stage("proximity", "prototype proximity", ("prototypes/prototypes", "classes/memberships"), ("proximity",),
              {"proximity": proximity_mod.PROXIMITY}, _proximity, (proximity_mod, exprs_mod)),
        Stage("evidence", "evidence units and co-demand", ("affordances/affordances", "prototypes/prototypes", "density/density"), ("evidence",),
              {"evidence": evidence_mod.EVIDENCE, "codemand": evidence_mod.CODEMAND}, _evidence, (evidence_mod, exprs_mod, ids_mod, _affordance_shards)),
        Stage("graph", "the Qspace graph", ("prototypes/prototypes", "classes/memberships", "classes/classes", "prototypes/fragment_question_edges",
                                           "proximity/proximity", "density/density"), (),
              {"graph_nodes": graph_mod.GRAPH_NODES, "graph_edges": graph_mod.GRAPH_EDGES}, _graph, (graph_mod, exprs_mod)),
        Stage("trees", "candidate retrieval trees and J(T)",
              ("fragments/fragments", "evidence/evidence", "evidence/codemand", "prototypes/prototypes", "prototypes/fragment_question_edges",
               "density/density", "classes/memberships", "classes/classes"), ("trees", "fragments.encoding"),
              {"tree_nodes": trees_mod.TREE_NODES, "tree_scores": trees_mod.TREE_SCORES}, _trees,
              (trees_mod, tokens_mod, exprs_mod, ids_mod, _trees_shard)),
        Stage("simulation", "traversal simulation", ("affordances/affordances", "trees/tree_nodes", "trees/tree_scores"), (),
              {"simulations": simulation_mod.SIMULATIONS}, _simulation, (simulation_mod, trees_mod, exprs_mod)),
        Stage("chunks", "fixed-token chunks of the BM25 baseline", ("corpus/pages",), ("evaluation.chunk_tokens", "evaluation.encoding"),
              {"chunks": baselines_mod.CHUNK}, _chunks, (baselines_mod, tokens_mod, pages_mod, _chunk_shard)),
        Stage("evaluation", "measured evaluation of every strategy",
              ("corpus/inventory", "corpus/pages", "fragments/fragments", "affordances/affordances", "prototypes/prototypes", "evidence/evidence",
               "density/density", "trees/tree_nodes", "trees/tree_scores", "chunks/chunks", "gold", "dictionary"), ("evaluation", "affordances"),
              {"gold": evaluation_mod.RESOLVED_GOLD, "retrievals": evaluation_mod.RETRIEVALS,
               "per_query": lambda p: evaluation_mod.per_query_schema(p.evaluation), "metrics": evaluation_mod.METRICS}, _evaluation,
              (evaluation_mod, baselines_mod, retrieval_mod, ask_mod, questions_mod, tokens_mod, exprs_mod, affordances_mod, pages_mod,
               _strategy_task, ask_units, ask_leaves)),
    ]
}


@dataclass
class Workbench:
    """One run's view of the pipeline: parameters, corpus, store and run folder."""

    params_file: str | None = "params/default.yaml"
    corpus_arg: str | None = None
    run_name: str = "default"
    project_root: Path | None = None
    workers: int = 1
    # per-document stages: "local" (a process pool of `workers`) or "ray"; no artifact id or byte depends on it
    engine: str = field(default_factory=lambda: os.environ.get("QSPACE_ENGINE", "local"))
    notebook: str = ""
    reports_dir: Path | None = None  # default: <project>/reports
    gold: str | None = None  # a gold-question JSONL file; default: silver questions from the affordances
    params: Params = field(init=False)
    _arts: dict[str, Artifact] = field(default_factory=dict, init=False)
    _actions: dict[str, str] = field(default_factory=dict, init=False)  # stage -> "computed" or "reused" by this Workbench
    _files: pl.DataFrame | None = field(default=None, init=False)
    _sources: dict[str, tuple[str, object]] = field(default_factory=dict, init=False)

    def __post_init__(self):
        self.root = Path(self.project_root) if self.project_root else find_project_root()
        check_engine(self.engine)
        pf = None
        if self.params_file:
            pf = Path(self.params_file)
            pf = pf if pf.is_absolute() else self.root / pf
        self.params = load_params(pf)
        store_root = Path(self.params.store.root)
        self.store = Store(store_root if store_root.is_absolute() else self.root / store_root)
        self.run_dir = Path(self.reports_dir or self.root / "reports") / self.run_name
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if self.corpus_arg:
            c = Path(self.corpus_arg)
            self.corpus = c if c.is_absolute() else (self.root / c)
            if not self.corpus.is_dir():
                raise FileNotFoundError(f"corpus folder not found: {self.corpus_arg}")
            self.choice = inventory_mod.CorpusChoice(self.corpus, "named by the run (--corpus or the corpus parameter)")
        else:
            self.choice = inventory_mod.choose_corpus(self.root, self.params.corpus)
            self.corpus = self.choice.corpus

    # -- display helpers: paths shown relative to the project, never absolute ------------------
    def rel(self, path: Path) -> str:
        import os
        return Path(os.path.relpath(path.resolve(), self.root)).as_posix()

    # -- stages -----------------------------------------------------------------------------
    def files(self) -> pl.DataFrame:
        if self._files is None:
            self._files = inventory_mod.discover(self.corpus, self.params.corpus)
        return self._files

    @property
    def gold_file(self) -> Path | None:
        if not self.gold:
            return None
        g = Path(self.gold)
        return g if g.is_absolute() else self.root / g

    def source(self, name: str) -> tuple[str, object]:
        """(fingerprint, value) of a source of the run that stages declare as an input: the corpus
        files, the gold file (None: silver questions) and the expert dictionary's folder."""
        if name not in self._sources:
            if name == "files":
                files = self.files()
                fp = sha256_hex(canonical_json(files.select("path", "bytes", "sha256", "discover_error").rows()))
                self._sources[name] = fp, CorpusFiles(self.corpus, files)
            elif name == "gold":
                g = self.gold_file
                self._sources[name] = (sha256_hex(g.read_bytes()), evaluation_mod.read_gold(g)) if g else ("silver", None)
            elif name == "dictionary":
                folder = self.root / "params" / "dictionary"
                self._sources[name] = questions_mod.dictionary_fingerprint(folder), folder
            else:
                raise KeyError(f"no source named {name!r} (files, gold, dictionary)")
        return self._sources[name]

    def _input_id(self, ref: str) -> str:
        return self.artifact(ref.split("/")[0]).artifact_id if "/" in ref else self.source(ref)[0]

    def artifact_id(self, stage: str) -> str:
        st = STAGES[stage]
        inputs = [f"{ref}:{self._input_id(ref)}" for ref in st.inputs]
        return artifact_id(stage, st.code_version, self.params.section_hash(*st.params), inputs)

    def inputs(self, stage: str) -> dict:
        """What the stage's function is given: each declared table as stored, each source's value."""
        return {ref: self.table(ref) if "/" in ref else self.source(ref)[1] for ref in STAGES[stage].inputs}

    def table(self, ref: str) -> Table:
        """A stored table named "stage/table", computed first when it is not in the store."""
        stage, _, name = ref.partition("/")
        return self.artifact(stage).table(name or stage)

    def compute(self, stage: str) -> dict[str, pl.DataFrame]:
        """The stage's tables computed from its stored inputs, not stored (for tests and debugging)."""
        st = STAGES[stage]
        p = self.params.only(st.params, f"stage {stage!r}")
        parts: dict[str, list[pl.DataFrame]] = {name: [pl.DataFrame(schema=schema)] for name, schema in st.schemas(p).items()}
        for name, df in stage_mod.run(st, self.inputs(stage), p, Runtime(self.workers, self.engine)):
            parts[name].append(df)
        return {name: pl.concat(dfs) for name, dfs in parts.items()}

    def artifact(self, stage: str) -> Artifact:
        if stage in self._arts:
            return self._arts[stage]
        st = STAGES[stage]
        aid = self.artifact_id(stage)
        t0 = time.perf_counter()
        art = self.store.get(stage, aid)
        action = "reused"
        if art is None:
            p = self.params.only(st.params, f"stage {stage!r}")
            tables = stage_mod.run(st, self.inputs(stage), p, Runtime(self.workers, self.engine))
            manifest = {"version": st.code_version, "params": self.params.read(*st.params),
                        "inputs": {ref: self._input_id(ref) for ref in st.inputs}}
            art = self.store.put(stage, aid, tables, manifest, schemas=st.schemas(p))
            action = "computed"
        self._arts[stage] = art
        self._actions[stage] = action
        self._log({"notebook": self.notebook, "stage": stage, "artifact_id": aid, "action": action,
                   "rows": {k: v["rows"] for k, v in art.manifest["tables"].items()},
                   "seconds": round(time.perf_counter() - t0, 3)})
        self._record(stage, aid)
        return art

    def ask(self, questions: list[str]) -> pl.DataFrame:
        """`qspace ask`: the questions answered from this run's stored artifacts (schema ask.ANSWERS)."""
        t = {ref: self.table(ref) for ref in ("corpus/inventory", "fragments/fragments", "trees/tree_nodes", "trees/tree_scores",
                                              "evidence/evidence", "prototypes/prototypes")}
        units = pl.concat(list(ask_units(t, self.params.affordances)))
        dictionary = questions_mod.load_dictionary(self.source("dictionary")[1])
        return ask_mod.answer(questions, units, ask_leaves(t), dictionary, self.params.evaluation)

    def discovery(self) -> tuple[str, str, list]:
        """(corpus folder, why this folder, the candidate folders and their document counts)."""
        return self.rel(self.corpus), self.choice.reason, self.choice.candidates

    def last_action(self, stage: str) -> str:
        """"computed" or "reused": what this Workbench did for the stage."""
        return self._actions.get(stage, "not run")

    def scan(self, stage: str, table: str | None = None) -> pl.LazyFrame:
        return self.artifact(stage).scan(table)

    def read(self, stage: str, table: str | None = None) -> pl.DataFrame:
        return self.artifact(stage).read(table)

    # -- run records --------------------------------------------------------------------------
    def _log(self, entry: dict) -> None:
        with open(self.run_dir / "stage_log.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, sort_keys=True) + "\n")

    def _record(self, stage: str, aid: str) -> None:
        """reports/<run>/artifacts.json: which artifact ids this run used. The notebooks of a run
        record from several kernels at once: the file is updated under a lock, and only when it
        changes."""
        import fcntl

        path = self.run_dir / "artifacts.json"
        with open(self.run_dir / "artifacts.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
            data = {**old, "artifacts": {**old.get("artifacts", {}), stage: aid}, "params_hash": self.params.hash(),
                    "params_file": self.rel(self.root / self.params_file) if self.params_file else None,
                    "gold": self.rel(self.gold_file) if self.gold_file else None, "corpus": self.rel(self.corpus),
                    "corpus_reason": self.choice.reason, "corpus_candidates": self.choice.candidates}
            if data != old:
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
                tmp.replace(path)


CONTRACTNLI = "../shared/corpora/qa-contractnli-dev/dev.json"  # the split the stored notebooks evaluate (notebook 07)


def contractnli_workbench(root: Path, contractnli: str, params_file: str | None, run_name: str, notebook: str = "",
                          workers: int = 1) -> "Workbench | None":
    """The Workbench of the ContractNLI benchmark beside a run (`<run>-contractnli`): the split
    converted into reports/contractnli-dev/ (documents and gold file) and evaluated with the run's
    parameters. None when the file is absent (no ../shared/corpora)."""
    path = Path(contractnli) if contractnli else None
    path = path if path is None or path.is_absolute() else root / path
    if path is None or not path.is_file():
        return None
    out = root / "reports" / "contractnli-dev"
    gold = evaluation_mod.contractnli_to_gold(path, out)
    return Workbench(params_file=params_file, corpus_arg=str(out / "docs"), run_name=f"{run_name}-contractnli", gold=str(gold),
                     notebook=notebook, project_root=root, workers=workers)

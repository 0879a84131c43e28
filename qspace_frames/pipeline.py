"""The stage registry and the `Workbench` that runs stages through the artifact store.

A stage is declared once: its name, code version (bump it when its output changes), the
parameter sections it reads, the stages it consumes and the pure function that computes it.
`Workbench.artifact(stage)` returns the stored artifact when its id is already in the store
(identical inputs and parameters) and computes and stores it otherwise. Every call is logged
to `reports/<run>/stage_log.jsonl` so the runner can say what was reused.
"""
from __future__ import annotations

import inspect
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import polars as pl

from . import affordances as affordances_mod
from . import ask as ask_mod
from . import questions as questions_mod
from . import baselines as baselines_mod
from . import evaluation as evaluation_mod
from . import retrieval as retrieval_mod
from . import simulation as simulation_mod
from . import trees as trees_mod
from . import workers as workers_mod
from . import classes as classes_mod
from . import density as density_mod
from . import evidence as evidence_mod
from . import exprs as exprs_mod
from . import fragments as fragments_mod
from . import graph as graph_mod
from . import inventory as inventory_mod
from . import prototypes as prototypes_mod
from . import proximity as proximity_mod
from .ids import canonical_json, sha256_hex
from . import loaders as loaders_mod
from . import pages as pages_mod
from . import ids as ids_mod
from . import schemas as schemas_mod
from . import shards as shards_mod
from . import tokens as tokens_mod
from .pages import document_text, load_documents
from .params import EvalParams, Params, load_params
from .store import Artifact, Store, artifact_id


def find_project_root(start: Path | None = None) -> Path:
    """The folder holding pyproject.toml and params/, searched upwards (notebooks run in notebooks/)."""
    here = (start or Path.cwd()).resolve()
    for d in [here, *here.parents]:
        if (d / "pyproject.toml").is_file() and (d / "params").is_dir():
            return d
    return here


@dataclass(frozen=True)
class Stage:
    name: str
    version: str
    sections: tuple[str, ...]
    inputs: tuple[str, ...]
    fn: Callable[..., dict[str, pl.DataFrame]]
    doc: str = ""
    modules: tuple = ()  # the code the stage runs: its source is part of the artifact id

    @property
    def code_version(self) -> str:
        """The declared version plus a hash of the stage's source, so an edited rule can never
        be served a stale artifact computed by the old code."""
        src = "".join(inspect.getsource(m) for m in self.modules)
        return f"{self.version}:{sha256_hex(src)[:12]}"


def _corpus_stage(wb: "Workbench"):
    files, p = wb.files(), wb.params.corpus
    loaded, hints = [], []  # per file and per document: small, kept for the inventory at the end
    for status, pages in shards_mod.load_stage(files, wb.corpus, p, workers=wb.workers, engine=wb.engine):
        loaded.append(status)
        hints.append(inventory_mod.domain_hints(pages.lazy(), p).collect())
        yield {"inventory": pl.DataFrame(schema=schemas_mod.INVENTORY), "pages": pages}
    inv = inventory_mod.inventory(files.lazy(), pl.concat(loaded).lazy(), pl.concat(hints).lazy(), p).collect()
    yield {"inventory": inv, "pages": pl.DataFrame(schema=schemas_mod.PAGES)}


# The per-document stages stream: inputs read a row group at a time, outputs written a shard at a time.
def _fragments_stage(wb: "Workbench"):
    pages = wb.artifact("corpus").batches("pages")
    for part in shards_mod.fragment_stage(pages, wb.params.fragments, workers=wb.workers, engine=wb.engine):
        yield {"fragments": part}


def _affordances_stage(wb: "Workbench"):
    batches = shards_mod.affordance_stage(wb.artifact("fragments").batches(), wb.artifact("corpus").batches("pages"),
                                          wb.params.affordances, workers=wb.workers, engine=wb.engine)
    for kept, rejected in batches:
        yield {"affordances": kept, "rejected": rejected}


def _prototypes_stage(wb: "Workbench"):
    """Prototypes and edges, streamed over shards of whole documents: each shard's prototype
    parts are kept (a few rows per prototype) and combined at the end; its edges, which belong to
    one fragment each, go through an external sort by fragment id."""
    cols = ["affordance_id", "fragment_id", "doc_id", "prototype_id", "intent", "support", "slot_signature",
            "role_signature", "question", "confidence", "span", "span_start", "span_end"]
    spill = shards_mod.SortSpill("fragment_id", ["fragment_id", "prototype_id"], skip=len("frag_"))
    parts = []
    for aff in _affordance_shards(wb, cols):
        parts.append(shards_mod.detached(prototypes_mod.prototype_parts(aff.lazy()).collect()))
        spill.add(prototypes_mod.edges(aff.lazy()).collect())
    aff = wb.scan("affordances").select(cols).clear()
    protos = prototypes_mod.combine_parts(pl.concat(parts).lazy() if parts else prototypes_mod.prototype_parts(aff)).collect()
    yield {"prototypes": protos, "fragment_question_edges": prototypes_mod.edges(aff).collect()}
    for edges in spill.sorted():
        yield {"prototypes": protos.clear(), "fragment_question_edges": edges}


def _classes_stage(wb: "Workbench") -> dict[str, pl.DataFrame]:
    cls, members = classes_mod.classes(wb.scan("prototypes"), wb.params.classes)
    return {"classes": cls, "memberships": members}


def _density_stage(wb: "Workbench") -> dict[str, pl.DataFrame]:
    return {"density": density_mod.density(wb.scan("prototypes"), wb.params.density).collect()}


def _proximity_stage(wb: "Workbench") -> dict[str, pl.DataFrame]:
    prox = proximity_mod.proximity(wb.scan("prototypes"), wb.scan("classes", "memberships"), wb.params.proximity)
    return {"proximity": prox.collect()}


AFFORDANCE_SHARD_ROWS = 200_000  # affordances read per shard by the stages that stream them


def _affordance_shards(wb: "Workbench", columns: list[str]) -> Iterator[pl.DataFrame]:
    """The stored affordances (in document order) in shards of whole documents: a fragment's
    rows, and so every per-fragment group, are never split."""
    return shards_mod.key_shards(wb.artifact("affordances").batches(columns=columns), "doc_id", AFFORDANCE_SHARD_ROWS)


def _evidence_stage(wb: "Workbench"):
    """Evidence units, streamed: a unit belongs to one fragment, so shards of whole documents give
    every unit; they are ordered by fragment id (a hash) through an external sort."""
    spill = shards_mod.SortSpill("fragment_id", ["fragment_id", "value_start", "role", "value_end", "value"], skip=len("frag_"))
    cols = ["affordance_id", "fragment_id", "doc_id", "prototype_id", "confidence", "span", "span_start", "span_end", "roles", "support"]
    for aff in _affordance_shards(wb, cols):
        spill.add(evidence_mod.evidence(aff.lazy(), wb.params.evidence).collect())
    codemand = evidence_mod.codemand(wb.scan("prototypes"), wb.scan("density")).collect()
    empty = evidence_mod.evidence(wb.scan("affordances").clear(), wb.params.evidence).collect()
    yield {"evidence": empty, "codemand": codemand}
    for ev in spill.sorted():
        yield {"evidence": ev, "codemand": codemand.clear()}


def _graph_stage(wb: "Workbench") -> dict[str, pl.DataFrame]:
    nodes, edges = graph_mod.graph(
        wb.scan("prototypes"), wb.scan("classes", "memberships"), wb.scan("classes"),
        wb.scan("prototypes", "fragment_question_edges"), wb.scan("proximity"), wb.scan("density"),
    )
    return {"graph_nodes": nodes, "graph_edges": edges}


TREE_SHARD_UNITS = 10_000  # evidence units compiled per shard: memory bounded whatever the corpus size


def _trees_shard(wb: "Workbench", ev: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(nodes, scores) of the fragments of one evidence shard (a pool task: `wb` arrives with its
    input artifacts resolved; the fragments and edges are read from the store, only those used)."""
    direct = wb.scan("prototypes", "fragment_question_edges").filter(pl.col("support") == "direct").select("fragment_id", "prototype_id", "support")
    small = [wb.scan(*k.split("/")) for k in ("prototypes", "density", "classes/memberships", "classes", "evidence/codemand")]
    return trees_mod.compile_trees(wb.scan("fragments"), ev.lazy(), direct, *small, wb.params.trees,
                                   fragment_encoding=wb.params.fragments.encoding)


def _trees_stage(wb: "Workbench"):
    """Trees, streamed. Evidence (stored in fragment order) is read in shards of whole fragments;
    a tree depends only on its own fragment and the corpus-wide tables, so each shard gives the
    rows one pass would, and the shards run side by side in the pool. Nodes and scores are
    ordered by fragment first, so the shards' rows arrive in their final order."""
    tasks = ((wb, ev) for ev in shards_mod.key_shards(wb.artifact("evidence").batches(), "fragment_id", TREE_SHARD_UNITS))
    n = 0
    for n, (nodes, scores) in enumerate(shards_mod.run_tasks(_trees_shard, tasks, wb.workers), 1):
        yield {"tree_nodes": nodes, "tree_scores": scores}
    if not n:  # no evidence anywhere: the empty tables
        nodes, scores = _trees_shard(wb, wb.read("evidence"))
        yield {"tree_nodes": nodes, "tree_scores": scores}


SIMULATION_SHARD_NODES = 500_000  # tree nodes read per shard


def _simulation_stage(wb: "Workbench"):
    """Simulations, streamed: tree nodes (stored fragment by fragment) are read in shards of whole fragments,
    each shard replays the questions whose fragment selected one of its trees, and the traces,
    ordered by affordance id (a hash), go through an external sort."""
    selected = wb.scan("trees", "tree_scores").filter(pl.col("selected")).collect()
    spill = shards_mod.SortSpill("affordance_id", ["affordance_id"], skip=len("aff_"))
    for nodes in shards_mod.key_shards(wb.artifact("trees").batches("tree_nodes"), "fragment_id", SIMULATION_SHARD_NODES):
        trees = selected.join(nodes.select(pl.col("tree_id").unique()), on="tree_id", how="semi")
        spill.add(simulation_mod.simulate(wb.scan("affordances"), nodes.lazy(), trees.lazy()).collect())
    if spill.schema is None:  # no tree anywhere: the empty table
        yield {"simulations": simulation_mod.simulate(wb.scan("affordances"), wb.scan("trees", "tree_nodes"), selected.lazy()).collect()}
    for sims in spill.sorted():
        yield {"simulations": sims}


def _chunk_shard(p, pages: pl.DataFrame) -> pl.DataFrame:
    """The BM25 baseline's chunks of a shard of pages (a pool task)."""
    return pl.concat(baselines_mod.chunk_batches(document_text(pages.lazy()).collect(), p))


def _chunks_stage(wb: "Workbench"):
    """The BM25 baseline's fixed-token chunks of the whole corpus, cut shard by shard in the pool.
    Tokenizing the corpus is the evaluation's largest cost, and the chunks read only the chunk
    size and the encoding: as their own stage, a sweep of any other parameter reuses them."""
    # only the keys the artifact id covers reach the chunker; every other setting is its default
    e = wb.params.evaluation
    p = EvalParams(chunk_tokens=e.chunk_tokens, encoding=e.encoding)
    parts = shards_mod.run_tasks(_chunk_shard, ((p, pages) for pages in shards_mod.doc_shards(wb.artifact("corpus").batches("pages"))), wb.workers)
    for part in shards_mod.at_least_one(parts, baselines_mod.CHUNK):
        yield {"chunks": part}


def _strategy_task(kind: str, wb: "Workbench", resolved: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The Qspace or ask strategy's retrievals on the resolved questions and their per-query values
    (a pool task: `wb` arrives with its input artifacts resolved)."""
    p = wb.params.evaluation
    if kind == "qspace":
        runs = retrieval_mod.qspace(resolved, wb.artifact("fragments").batches(), wb.scan("prototypes"), wb.scan("evidence"), wb.scan("density"),
                                    wb.scan("trees", "tree_nodes"), wb.scan("trees", "tree_scores"), p, wb.params.affordances)
    else:
        runs = ask_mod.ask_strategy(resolved, wb, p)
    return runs, evaluation_mod.per_query(runs, resolved, p)


def _evaluation_stage(wb: "Workbench") -> dict[str, pl.DataFrame]:
    """Every strategy on the gold questions. The corpus is read in batches (its stored chunks for
    BM25, its fragments and sentences for the Qspace and ask rankings): corpus-wide statistics
    are counted batch by batch, and only the questions' own documents are kept whole."""
    p = wb.params.evaluation
    inv = wb.read("corpus", "inventory")
    if wb.gold_file:
        gold = evaluation_mod.read_gold(wb.gold_file)
    else:  # silver questions from validated affordances
        gold = evaluation_mod.silver_gold(wb.scan("affordances"), inv, max_per_intent=p.silver_max_per_intent)
    gold_docs = inv.join(gold.select(pl.col("document").alias("path")).unique(), on="path", how="semi")["doc_id"]
    # a filter the page scan applies as it reads (a join would read every page first: 0.35 GB at x16)
    docs = document_text(wb.scan("corpus", "pages").filter(pl.col("doc_id").is_in(gold_docs.implode()))).collect()
    resolved = evaluation_mod.resolve_gold(gold, inv, docs)
    # The strategies are independent, and so are a strategy's per-query values: Qspace and ask
    # start in the pool, one per worker, and measure their own runs there, while this process runs
    # and measures the baselines over the stored chunks (the corpus's BM25 counts) and the fragments.
    strategies = workers_mod.started(_strategy_task, [("qspace", wb, resolved), ("ask", wb, resolved)], wb.workers)
    baselines = baselines_mod.run_baselines(resolved, None, wb.scan("fragments"), p, chunked=wb.artifact("chunks").batches())
    baselines = (baselines, evaluation_mod.per_query(baselines, resolved, p))
    runs = [result() for result in strategies] + [baselines]
    retrievals = pl.concat([r for r, _ in runs]).sort(["strategy", "query_id", "rank"])
    pq = pl.concat([q for _, q in runs]).sort(["strategy", "query_id"])
    return {"gold": resolved, "retrievals": retrievals, "per_query": pq,
            "metrics": evaluation_mod.metrics(retrievals, resolved, p, per_query_frame=pq)}


STAGES: dict[str, Stage] = {
    s.name: s
    for s in [
        Stage("corpus", "1", ("corpus",), (), _corpus_stage, "discovery, loading, inventory and pages", (inventory_mod, pages_mod, loaders_mod, ids_mod, schemas_mod, shards_mod)),
        Stage("fragments", "1", ("fragments",), ("corpus",), _fragments_stage, "hierarchical fragments", (fragments_mod, tokens_mod, shards_mod)),
        Stage("affordances", "1", ("affordances",), ("corpus", "fragments"), _affordances_stage, "answer affordances with verified spans", (affordances_mod, fragments_mod, shards_mod)),
        Stage("prototypes", "1", (), ("affordances",), _prototypes_stage, "question prototypes and fragment-question edges", (prototypes_mod, affordances_mod, exprs_mod)),
        Stage("classes", "1", ("classes",), ("prototypes",), _classes_stage, "proposed question classes", (classes_mod, exprs_mod, ids_mod)),
        Stage("density", "1", ("density",), ("prototypes",), _density_stage, "question density", (density_mod, exprs_mod)),
        Stage("proximity", "1", ("proximity",), ("prototypes", "classes"), _proximity_stage, "prototype proximity", (proximity_mod, exprs_mod)),
        Stage("evidence", "1", ("evidence",), ("affordances", "prototypes", "density"), _evidence_stage, "evidence units and co-demand", (evidence_mod, exprs_mod, ids_mod)),
        Stage("graph", "1", (), ("prototypes", "classes", "proximity", "density"), _graph_stage, "the Qspace graph", (graph_mod, exprs_mod)),
        Stage("trees", "1", ("trees",), ("fragments", "evidence", "prototypes", "density", "classes"), _trees_stage,
              "candidate retrieval trees and J(T)", (trees_mod, tokens_mod, exprs_mod, ids_mod)),
        Stage("simulation", "1", (), ("affordances", "trees"), _simulation_stage, "traversal simulation", (simulation_mod, trees_mod, exprs_mod)),
        Stage("chunks", "1", ("evaluation.chunk_tokens", "evaluation.encoding"), ("corpus",), _chunks_stage,
              "fixed-token chunks of the BM25 baseline", (baselines_mod, tokens_mod, shards_mod)),
        Stage("evaluation", "1", ("evaluation",), ("corpus", "fragments", "affordances", "prototypes", "evidence", "density", "trees", "chunks"),
              _evaluation_stage, "measured evaluation of every strategy", (evaluation_mod, baselines_mod, retrieval_mod, ask_mod, questions_mod, tokens_mod,
                                                                            exprs_mod, affordances_mod)),
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

    def __post_init__(self):
        self.root = Path(self.project_root) if self.project_root else find_project_root()
        shards_mod.check_engine(self.engine)
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

    def artifact_id(self, stage: str) -> str:
        st = STAGES[stage]
        if stage == "evaluation":  # the gold questions and the expert dictionary (the ask strategy's) are inputs too
            gold = sha256_hex(self.gold_file.read_bytes()) if self.gold_file else "silver"
            dictionary = questions_mod.dictionary_fingerprint(self.root / "params" / "dictionary")
            inputs = [self.artifact(i).artifact_id for i in st.inputs] + [f"gold:{gold}", f"dictionary:{dictionary}"]
            return artifact_id(stage, st.code_version, self.params.section_hash(*st.sections), inputs)
        if stage == "corpus":  # the source stage: its input is the fingerprint of the files
            fp = sha256_hex(canonical_json(self.files().select("path", "bytes", "sha256", "discover_error").rows()))
            inputs = [f"files:{fp}"]
        else:
            inputs = [self.artifact(i).artifact_id for i in st.inputs]
        return artifact_id(stage, st.code_version, self.params.section_hash(*st.sections), inputs)

    def artifact(self, stage: str) -> Artifact:
        if stage in self._arts:
            return self._arts[stage]
        st = STAGES[stage]
        aid = self.artifact_id(stage)
        t0 = time.perf_counter()
        art = self.store.get(stage, aid)
        action = "reused"
        if art is None:
            tables = st.fn(self)
            manifest = {
                "version": st.code_version,
                "params": self.params.read(*st.sections),
                "inputs": {i: self.artifact(i).artifact_id for i in st.inputs},
            }
            art = self.store.put(stage, aid, tables, manifest)
            action = "computed"
        self._arts[stage] = art
        self._actions[stage] = action
        self._log({"notebook": self.notebook, "stage": stage, "artifact_id": aid, "action": action,
                   "rows": {k: v["rows"] for k, v in art.manifest["tables"].items()},
                   "seconds": round(time.perf_counter() - t0, 3)})
        self._record(stage, aid)
        return art

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
                    "gold": self.rel(self.gold_file) if self.gold_file else None, "corpus": self.rel(self.corpus)}
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

"""The `Workbench`: one run's view of the pipeline, running stages through the artifact store.

`Workbench.artifact(stage)` returns the stored artifact when its id is already in the store
(identical inputs, parameters and code) and computes and stores it otherwise. Every call is
logged to `reports/<run>/stage_log.jsonl` so the runner can say what was reused.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..ask import answer as ask_mod
from ..ask import dictionary as dictionary_mod
from ..corpus import inventory as inventory_mod
from ..evaluation.gold import read_gold
from ..evaluation.gold_sets import contractnli_to_gold
from ..ids import canonical_json, sha256_hex
from ..params import Params, load_params
from ..runtime import stage as stage_mod
from ..runtime.parts import PARTS, Parts
from ..runtime.paths import RUN_RECORD, RunRecordError, read_run_record, reports_root, store_root
from ..runtime.shards import check_engine
from ..runtime.stage import Runtime
from ..runtime.store import Artifact, Store, Table, artifact_id
from .stages import PER_DOCUMENT, STAGES, CorpusFiles, ask_leaves, ask_units

# The stored tables `ask` reads (its sentence units and the selected trees' evidence leaves).
ASK_TABLES = (
    "corpus/inventory",
    "fragments/fragments",
    "trees/tree_nodes",
    "trees/tree_scores",
    "evidence/evidence",
    "prototypes/prototypes",
)


def is_project_root(d: Path) -> bool:
    """Whether the folder is a project's: it holds pyproject.toml and params/."""
    return (d / "pyproject.toml").is_file() and (d / "params").is_dir()


def find_project_root(start: Path | None = None) -> Path:
    """The folder holding pyproject.toml and params/, searched upwards (notebooks run in notebooks/);
    the start folder itself when none does (`is_project_root` tells)."""
    here = (start or Path.cwd()).resolve()
    return next((d for d in [here, *here.parents] if is_project_root(d)), here)


def not_a_folder(path: Path, given: str) -> str:
    """Why a corpus argument names no folder: a file ("give the folder that holds it") or nothing."""
    if path.exists():
        return f"corpus {given} is a file, not a folder: give the folder that holds it, {Path(given).parent}"
    return f"corpus folder not found: {given}"


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
    reports_dir: Path | None = None  # default: <project>/reports (runtime.paths.reports_root)
    gold: str | None = None  # a gold-question JSONL file; default: silver questions from the affordances
    params: Params = field(init=False)
    _arts: dict[str, Artifact] = field(default_factory=dict, init=False)
    _actions: dict[str, str] = field(default_factory=dict, init=False)  # stage -> "computed" or "reused" by this Workbench
    _files: pl.DataFrame | None = field(default=None, init=False)
    _sources: dict[str, tuple[str, object]] = field(default_factory=dict, init=False)
    _parts: dict[str, Parts] = field(default_factory=dict, init=False)  # per-document stage -> the parts it read and kept
    changes: dict[str, int] = field(default_factory=dict, init=False)  # the corpus's files against the run's last corpus

    def __post_init__(self):
        self.root = Path(self.project_root) if self.project_root else find_project_root()
        check_engine(self.engine)
        pf = None
        if self.params_file:
            pf = Path(self.params_file)
            pf = pf if pf.is_absolute() else self.root / pf
        self.params = load_params(pf)
        self.store = Store(store_root(self.root, self.params))
        self.run_dir = Path(self.reports_dir or reports_root(self.root)) / self.run_name
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if self.corpus_arg:
            c = Path(self.corpus_arg)
            self.corpus = c if c.is_absolute() else (self.root / c)
            if not self.corpus.is_dir():
                raise FileNotFoundError(not_a_folder(self.corpus, self.corpus_arg))
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
                self._sources[name] = (sha256_hex(g.read_bytes()), read_gold(g)) if g else ("silver", None)
            elif name == "dictionary":
                folder = self.root / "params" / "dictionary"
                self._sources[name] = dictionary_mod.dictionary_fingerprint(folder), folder
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

    def _outputs(self, stage: str):
        """(the stage's checked output stream, its schemas), computed from its stored inputs; a
        per-document stage reads and keeps its documents' parts (`runtime.parts`, local engine)."""
        st = STAGES[stage]
        p = self.params.only(st.params, f"stage {stage!r}")
        parts = None
        if stage in PER_DOCUMENT and self.engine == "local":
            tag = f"{stage}:{st.code_version}:{self.params.section_hash(*st.params)}"
            parts = self._parts[stage] = Parts(self.store.root / PARTS / stage, tag)
        return stage_mod.run(st, self.inputs(stage), p, Runtime(self.workers, self.engine, parts)), st.schemas(p)

    def _previous_inventory(self) -> pl.DataFrame | None:
        """The inventory (path, sha256) of the corpus this run read last time, when the store holds it."""
        aid = self._run_record().get("artifacts", {}).get("corpus")
        art = self.store.get("corpus", aid) if aid else None
        return art.read("inventory").select("path", "sha256") if art is not None else None

    def changes_line(self) -> str:
        """What this Workbench did to the corpus, in words ("" when its corpus stage was reused):
        files added, changed and removed since the run's last corpus, and documents read from their
        parts or from their files, and how the files fared (loaded, unsupported ...)."""
        if not self.changes:
            return ""
        outcome = inventory_mod.load_outcome(self.read("corpus", "inventory"))
        return inventory_mod.changes_sentence(self.changes, self.documents().get("corpus"), outcome)

    def documents(self) -> dict[str, dict[str, int]]:
        """stage -> {"reused", "computed"}: the documents each per-document stage this Workbench
        computed read from their parts or computed (`runtime.parts`)."""
        return {s: {"reused": p.reused, "computed": p.computed} for s, p in self._parts.items()}

    def _parts_used(self, stage: str) -> dict:
        """What a stage's manifest records of its parts: every part it was assembled from (`qspace gc` keeps them)."""
        parts = self._parts.get(stage)
        return {"parts": dict(sorted(parts.keys.items()))} if parts is not None else {}

    def compute(self, stage: str) -> dict[str, pl.DataFrame]:
        """The stage's tables computed from its stored inputs, not stored (for tests and debugging)."""
        pairs, schemas = self._outputs(stage)
        parts: dict[str, list[pl.DataFrame]] = {name: [pl.DataFrame(schema=schema)] for name, schema in schemas.items()}
        for name, df in pairs:
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
            before = self._previous_inventory() if stage == "corpus" else None
            tables, schemas = self._outputs(stage)
            manifest = {
                "version": st.code_version,
                "params": self.params.read(*st.params),
                "inputs": {ref: self._input_id(ref) for ref in st.inputs},
            }
            art = self.store.put(stage, aid, tables, manifest, schemas=schemas, after=lambda: self._parts_used(stage))
            action = "computed"
            if stage == "corpus":
                self.changes = inventory_mod.corpus_changes(before, self.files())
        self._arts[stage] = art
        self._actions[stage] = action
        documents = self.documents().get(stage) if action == "computed" else None
        self._log(
            {
                "notebook": self.notebook,
                "stage": stage,
                "artifact_id": aid,
                "action": action,
                "rows": {k: v["rows"] for k, v in art.manifest["tables"].items()},
                "seconds": round(time.perf_counter() - t0, 3),
                **({"documents": documents} if documents is not None else {}),
                **({"files": self.changes} if stage == "corpus" and action == "computed" and self.changes else {}),
            }
        )
        self._record(stage, aid)
        return art

    def ask_corpus(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The corpus as `ask` reads it from the stored artifacts: its sentences and table rows
        (units) and its selected trees' evidence leaves."""
        t = {ref: self.table(ref) for ref in ASK_TABLES}
        return pl.concat(list(ask_units(t, self.params.affordances))), ask_leaves(t)

    def ask(self, questions: list[str], within: str | list[str] | None = None) -> pl.DataFrame:
        """`qspace ask`: the questions answered from this run's stored artifacts (schema ask.ANSWERS),
        from the documents `within` names when given (`ask.answer.within`: globs over their paths)."""
        return self.asker()(questions, within)

    def asker(self) -> Callable[[list[str], str | list[str] | None], pl.DataFrame]:
        """`ask` with the corpus and the dictionary read once, for asking many times (a question
        set, each question within its own scope: `ask.accuracy.ask_set`)."""
        units, leaves = self.ask_corpus()
        dictionary = dictionary_mod.load_dictionary(self.source("dictionary")[1])

        def ask(questions: list[str], within: str | list[str] | None = None) -> pl.DataFrame:
            u, lv = ask_mod.within(units, leaves, within) if within else (units, leaves)
            return ask_mod.answer(questions, u, lv, dictionary, self.params.evaluation)

        return ask

    def discovery(self) -> tuple[str, str, list]:
        """(corpus folder, why this folder, the candidate folders and their document counts)."""
        return self.rel(self.corpus), self.choice.reason, self.choice.candidates

    def last_action(self, stage: str) -> str:
        """ "computed" or "reused": what this Workbench did for the stage."""
        return self._actions.get(stage, "not run")

    def scan(self, stage: str, table: str | None = None) -> pl.LazyFrame:
        return self.artifact(stage).scan(table)

    def read(self, stage: str, table: str | None = None) -> pl.DataFrame:
        return self.artifact(stage).read(table)

    # -- run records --------------------------------------------------------------------------
    def _log(self, entry: dict) -> None:
        with open(self.run_dir / "stage_log.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, sort_keys=True) + "\n")

    def _run_record(self) -> dict:
        """This run's record so far: {} before its first stage, or when it cannot be read (this run
        writes it anew)."""
        try:
            return read_run_record(self.run_dir) if (self.run_dir / RUN_RECORD).is_file() else {}
        except RunRecordError:
            return {}

    def _record(self, stage: str, aid: str) -> None:
        """reports/<run>/artifacts.json: which artifact ids this run used. The notebooks of a run
        record from several kernels at once: the file is updated under a lock, and only when it
        changes."""
        import fcntl

        path = self.run_dir / RUN_RECORD
        with open(self.run_dir / "artifacts.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            old = self._run_record()
            data = {
                **old,
                "artifacts": {**old.get("artifacts", {}), stage: aid},
                "params_hash": self.params.hash(),
                "params_file": self.rel(self.root / self.params_file) if self.params_file else None,
                "gold": self.rel(self.gold_file) if self.gold_file else None,
                "corpus": self.rel(self.corpus),
                "corpus_reason": self.choice.reason,
                "corpus_candidates": self.choice.candidates,
            }
            if data != old:
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
                tmp.replace(path)


CONTRACTNLI = "../shared/corpora/qa-contractnli-dev/dev.json"  # the split the stored notebooks evaluate (notebook 07)


def contractnli_workbench(
    root: Path, contractnli: str, params_file: str | None, run_name: str, notebook: str = "", workers: int = 1
) -> "Workbench | None":
    """The Workbench of the ContractNLI benchmark beside a run (`<run>-contractnli`): the split
    converted into reports/contractnli-dev/ (documents and gold file) and evaluated with the run's
    parameters. None when the file is absent (no ../shared/corpora)."""
    path = Path(contractnli) if contractnli else None
    path = path if path is None or path.is_absolute() else root / path
    if path is None or not path.is_file():
        return None
    out = reports_root(root) / "contractnli-dev"
    gold = contractnli_to_gold(path, out)
    return Workbench(
        params_file=params_file,
        corpus_arg=str(out / "docs"),
        run_name=f"{run_name}-contractnli",
        gold=str(gold),
        notebook=notebook,
        project_root=root,
        workers=workers,
    )

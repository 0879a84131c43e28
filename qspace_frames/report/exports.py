"""Inspectable exports of a run (CSV / JSONL) and the corpus discovery note.

Exports are derived from stored artifacts, sorted, and free of absolute paths and timestamps,
so two runs on the same input give byte-identical files.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl


def _flat(df: pl.DataFrame) -> pl.DataFrame:
    """CSV cannot hold lists or structs: lists become '; '-joined text, structs JSON."""
    out = []
    for name, dtype in df.schema.items():
        if isinstance(dtype, pl.List) and not isinstance(dtype.inner, (pl.Struct, pl.List)):
            out.append(pl.col(name).cast(pl.List(pl.String)).list.join("; ").alias(name))
        elif isinstance(dtype, (pl.Struct, pl.List)):
            out.append(pl.col(name).map_elements(lambda v: json.dumps(v, sort_keys=True, default=str), return_dtype=pl.String).alias(name))
        else:
            out.append(pl.col(name))
    return df.select(out)


def write_csv(df: pl.DataFrame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    _flat(df).write_csv(tmp)
    tmp.replace(path)
    return path


def write_jsonl(df: pl.DataFrame, path: Path) -> Path:
    """One JSON object per row, keys in name order (Polars' writer: 14x faster than json.dumps per
    row on CUAD's 90,000 fragments)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    df.select(sorted(df.columns)).write_ndjson(tmp)
    tmp.replace(path)
    return path


def corpus_discovery_md(corpus: str, reason: str, candidates: list[tuple[str, int]], inv: pl.DataFrame, p) -> str:
    """What the run read and every assumption it made, for reports/<run>/corpus_discovery.md."""
    lines = [
        "# Corpus discovery",
        "",
        f"- Corpus folder: `{corpus}`",
        f"- Why this folder: {reason}",
    ]
    if candidates:
        lines.append("- Candidate folders (documents found): " + ", ".join(f"`{n}` ({c})" for n, c in candidates))
    lines += [
        f"- Files discovered: {inv.height}",
        "",
        "## Assumptions",
        "",
        f"- Loaded extensions: {', '.join(p.extensions)}; any other file is listed as `unsupported`.",
        f"- Skipped folders: {', '.join(p.skip_dirs)}"
        + (", and every hidden folder or file (name starting with '.')" if p.skip_hidden else ""),
        "- Symbolic links to files are followed; links to folders are not (no loops).",
        f"- Files over {p.max_file_bytes:,} bytes, or whose text exceeds {p.max_doc_chars:,} characters, are `too_large`.",
        f"- Office archives whose parts inflate past {p.max_zip_bytes:,} bytes or a ratio of {p.max_zip_ratio:g} are `too_large`; "
        "XML with entity declarations is refused.",
        "- Files with identical bytes share one doc_id: the first path is loaded, the others are listed as `duplicate`.",
        "- Text files are decoded as UTF-8 (UTF-16/32 with a byte-order mark are honoured); "
        "binary content in a text file is `unsupported`.",
        f"- Domain hints: a domain is hinted when its keywords occur at least {p.domain_hint_min_hits} times in a document.",
        "",
        "## Files by extension and status",
        "",
        "| ext | status | files |",
        "|---|---|---|",
    ]
    counts = inv.group_by("ext", "load_status").len().sort("ext", "load_status")
    lines += [f"| {r['ext'] or '(none)'} | {r['load_status']} | {r['len']} |" for r in counts.iter_rows(named=True)]
    bad = inv.filter(pl.col("load_status") != "loaded").sort("path")
    if bad.height:
        lines += ["", "## Files not loaded", "", "| file | status | reason |", "|---|---|---|"]
        esc = lambda s: (s or "").replace("|", "\\|").replace("\n", " ")  # noqa: E731
        lines += [f"| `{esc(r['path'])}` | {r['load_status']} | {esc(r['error'])} |" for r in bad.iter_rows(named=True)]
    return "\n".join(lines) + "\n"


def tree_dot(nodes: pl.DataFrame, name: str) -> str:
    """A tree as Graphviz DOT text (labels escaped)."""
    esc = lambda s: (s or "").replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")  # noqa: E731
    shape = {"root": "box", "group": "ellipse", "leaf": "note"}
    lines = [f'digraph "{esc(name)}" {{', "  rankdir=TB;", '  node [fontsize=10, fontname="Helvetica"];']
    for r in nodes.sort("preorder").iter_rows(named=True):
        lines.append(
            f'  "{r["node_id"]}" [label="{esc(r["label"][:80])}\\n({r["tokens"]} tokens)", shape={shape.get(r["kind"], "ellipse")}];'
        )
    for r in nodes.filter(pl.col("parent_id").is_not_null()).sort("preorder").iter_rows(named=True):
        lines.append(f'  "{r["parent_id"]}" -> "{r["node_id"]}";')
    return "\n".join(lines + ["}"]) + "\n"


def metrics_json(metrics: pl.DataFrame) -> dict:
    """strategy -> {"recall@B": value, metric: value, "n_queries": n}: the shape a script reads."""
    out: dict = {}
    for r in metrics.sort("strategy", "metric", "budget", nulls_last=True).iter_rows(named=True):
        key = f"{r['metric']}@{r['budget']}" if r["budget"] is not None else r["metric"]
        out.setdefault(r["strategy"], {})[key] = r["value"]
        out[r["strategy"]]["n_queries"] = r["n_queries"]
    return out


def write_json(data, path: Path) -> Path:
    return write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", path)


# ---- a run's files, step by step ------------------------------------------------------------------
# Each step writes its files from the stored artifacts of `wb`: a Workbench, or a finished run
# (`report.Run`): anything with read, scan, run_dir, params and discovery(). A notebook, `qspace
# report` and a library run write the same bytes.


def _corpus(wb) -> list[Path]:
    inv = wb.read("corpus", "inventory")
    corpus, reason, candidates = wb.discovery()
    note = corpus_discovery_md(corpus, reason, candidates, inv, wb.params.corpus)
    return [write_csv(inv, wb.run_dir / "inventory.csv"), write_text(note, wb.run_dir / "corpus_discovery.md")]


def _fragments(wb) -> list[Path]:
    fr = wb.read("fragments")
    return [
        write_csv(wb.read("structure", "sections"), wb.run_dir / "structure.csv"),
        write_jsonl(fr, wb.run_dir / "fragments.jsonl"),
        write_csv(fr.drop("text"), wb.run_dir / "fragments.csv"),
    ]


def _affordances(wb) -> list[Path]:
    return [
        write_jsonl(wb.read("affordances"), wb.run_dir / "answer_affordances.jsonl"),
        write_csv(wb.read("affordances", "rejected"), wb.run_dir / "rejected_affordances.csv"),
    ]


def _question_space(wb) -> list[Path]:
    protos, d = wb.read("prototypes"), wb.run_dir
    return [
        write_csv(protos, d / "question_prototypes.csv"),
        write_jsonl(protos, d / "question_prototypes.jsonl"),
        write_csv(wb.read("prototypes", "fragment_question_edges"), d / "fragment_question_edges.csv"),
        write_csv(wb.read("classes"), d / "classes.csv"),
        write_csv(wb.read("classes", "memberships"), d / "class_memberships.csv"),
        write_csv(wb.read("density"), d / "question_density.csv"),
        write_csv(wb.read("proximity"), d / "question_proximity.csv"),
    ]


def _evidence_graph(wb) -> list[Path]:
    d = wb.run_dir
    return [
        write_csv(wb.read("evidence"), d / "evidence_roles.csv"),
        write_csv(wb.read("evidence", "codemand"), d / "evidence_codemand.csv"),
        write_csv(wb.read("graph", "graph_nodes"), d / "qspace_graph_nodes.csv"),
        write_csv(wb.read("graph", "graph_edges"), d / "qspace_graph_edges.csv"),
    ]


def _trees(wb) -> list[Path]:
    """The selected trees (JSONL, one per fragment with its nodes), their scores, and DOT files of
    the representative trees the notebook draws (trees/ holds no stale drawing)."""
    from ..trees.compile import representative

    nodes, scores, d = wb.read("trees", "tree_nodes"), wb.read("trees", "tree_scores"), wb.run_dir
    dots = []
    for old in sorted((d / "trees").glob("tree_*.dot")):
        old.unlink()
    for i, (t, c) in enumerate(representative(scores).select("tree_id", "candidate").rows(), 1):
        dots.append(write_text(tree_dot(nodes.filter(pl.col("tree_id") == t), t), d / "trees" / f"tree_{i:02d}_{c}.dot"))
    trees = (
        nodes.join(scores.filter(pl.col("selected")).select("tree_id", "J"), on="tree_id")
        .group_by("tree_id", maintain_order=True)
        .agg(
            pl.col("fragment_id", "doc_id", "candidate", "J").first(),
            pl.struct("node_id", "parent_id", "depth", "order", "kind", "role", "label", "value", "span_start", "span_end", "tokens").alias(
                "nodes"
            ),
        )
        .sort("tree_id")
    )
    return dots + [
        write_jsonl(trees, d / "retrieval_trees.jsonl"),
        write_csv(scores, d / "candidate_tree_scores.csv"),
        write_csv(scores.filter(pl.col("selected")), d / "selected_tree_scores.csv"),
    ]


def _evaluation(wb) -> list[Path]:
    from ..corpus.pages import document_text
    from ..trees.simulate import traces_markdown

    sims, d = wb.read("simulation", "simulations"), wb.run_dir
    traces = traces_markdown(
        sims, wb.read("trees", "tree_nodes"), wb.read("corpus", "inventory"), document_text(wb.scan("corpus", "pages")).collect()
    )
    return [
        write_text(traces, d / "sample_retrieval_traces.md"),
        write_json(metrics_json(wb.read("evaluation", "metrics")), d / "evaluation" / "metrics.json"),
        write_csv(wb.read("evaluation", "per_query"), d / "evaluation" / "per_query.csv"),
        write_csv(wb.read("evaluation", "tree_ablation"), d / "evaluation" / "tree_ablation.csv"),
        write_jsonl(sims, d / "simulations.jsonl"),
    ]


# step (the notebook's name) -> (the stages it reads, the function writing its files)
STEPS = {
    "corpus": (("corpus",), _corpus),
    "fragments": (("structure", "fragments"), _fragments),
    "affordances": (("affordances",), _affordances),
    "question_space": (("prototypes", "classes", "density", "proximity"), _question_space),
    "evidence_graph": (("evidence", "graph"), _evidence_graph),
    "trees": (("trees",), _trees),
    "evaluation": (("corpus", "trees", "simulation", "evaluation"), _evaluation),
}


def write(wb, *steps: str) -> list[str]:
    """Write the files of the given steps (default: every step) from the run's stored artifacts;
    returns their paths relative to the run folder."""
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise KeyError(f"no export step {unknown[0]!r} (steps: {', '.join(STEPS)})")
    return [p.relative_to(wb.run_dir).as_posix() for s in steps or STEPS for p in STEPS[s][1](wb)]


def write_charts(run) -> list[str]:
    """Every chart of `charts.RUN_CHARTS` the run has the stages for, as charts/<name>.svg (the
    bytes the notebooks save); a chart with no data leaves no file. Paths relative to the run folder."""
    from .charts import RUN_CHARTS
    from .notebook import save_svg

    has = getattr(run, "has", lambda stage: True)
    out = []
    for name, (stages, chart) in RUN_CHARTS.items():
        path = run.run_dir / "charts" / f"{name}.svg"
        if all(has(s) for s in stages) and save_svg(chart(run), path) is not None:
            out.append(path.relative_to(run.run_dir).as_posix())
    return out


def steps_of(run) -> list[str]:
    """The steps whose stages a finished run (`report.Run`) holds: a partial run exports what it has."""
    return [s for s, (stages, _) in STEPS.items() if all(run.has(st) for st in stages)]


def write_text(text: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path

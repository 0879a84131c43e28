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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in df.iter_rows(named=True):
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True, default=str) + "\n")
    tmp.replace(path)
    return path


def corpus_discovery_md(corpus: str, reason: str, candidates: list[tuple[str, int]], inv: pl.DataFrame, p) -> str:
    """What the run read and every assumption it made, for reports/<run>/corpus_discovery.md."""
    lines = [
        "# Corpus discovery", "",
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
        f"- Skipped folders: {', '.join(p.skip_dirs)}" + (", and every hidden folder or file (name starting with '.')" if p.skip_hidden else ""),
        "- Symbolic links to files are followed; links to folders are not (no loops).",
        f"- Files over {p.max_file_bytes:,} bytes, or whose text exceeds {p.max_doc_chars:,} characters, are `too_large`.",
        f"- Office archives whose parts inflate past {p.max_zip_bytes:,} bytes or a ratio of {p.max_zip_ratio:g} are `too_large`; XML with entity declarations is refused.",
        "- Files with identical bytes share one doc_id: the first path is loaded, the others are listed as `duplicate`.",
        "- Text files are decoded as UTF-8 (UTF-16/32 with a byte-order mark are honoured); binary content in a text file is `unsupported`.",
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
        lines.append(f'  "{r["node_id"]}" [label="{esc(r["label"][:80])}\\n({r["tokens"]} tokens)", shape={shape.get(r["kind"], "ellipse")}];')
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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path

"""Altair charts for the notebooks and reports.

Every chart aggregates or caps (top-N) before drawing, so its cost and size do not grow with
the corpus (the original implementation spent 90% of a large run drawing per-fragment figures).
"""
from __future__ import annotations

import altair as alt
import polars as pl

TOP_N = 20
WIDTH = 420


def _bar(df: pl.DataFrame, x: str, y: str, title: str, color: str | None = None) -> alt.Chart:
    enc = {"x": alt.X(f"{x}:Q", title=x.replace("_", " ")), "y": alt.Y(f"{y}:N", sort="-x", title=y.replace("_", " ")),
           "tooltip": [y, x]}
    if color:
        enc["color"] = alt.Color(f"{color}:N")
    return alt.Chart(df).mark_bar().encode(**enc).properties(title=title, width=WIDTH)


def file_types(inv: pl.DataFrame) -> alt.Chart:
    df = inv.group_by("ext", "load_status").len("files").sort("ext", "load_status")
    return (
        alt.Chart(df).mark_bar()
        .encode(x=alt.X("files:Q"), y=alt.Y("ext:N", sort="-x", title="extension"),
                color=alt.Color("load_status:N", title="status"), tooltip=["ext", "load_status", "files"])
        .properties(title="Files by type and load status", width=WIDTH)
    )


def load_statuses(inv: pl.DataFrame) -> alt.Chart:
    df = inv.group_by("load_status").len("files").sort("load_status")
    return _bar(df, "files", "load_status", "Load status of every discovered file")


def fragment_kinds(fr: pl.DataFrame) -> alt.Chart:
    df = fr.group_by("kind").agg(pl.len().alias("fragments"), pl.col("n_tokens").sum().alias("tokens")).sort("kind")
    return _bar(df, "fragments", "kind", "Fragments by kind")


def token_distribution(fr: pl.DataFrame, bins: int = 30) -> alt.Chart:
    """Histogram computed in Polars (fixed number of bins), not one mark per fragment."""
    hi = max(int(fr["n_tokens"].max() or 1), 1)
    width = max(1, -(-hi // bins))
    df = (
        fr.select((pl.col("n_tokens") // width * width).alias("bin_start"), "kind")
        .group_by("bin_start", "kind").len("fragments").sort("bin_start", "kind")
        .with_columns((pl.col("bin_start") + width).alias("bin_end"))
    )
    return (
        alt.Chart(df).mark_bar()
        .encode(x=alt.X("bin_start:Q", bin="binned", title="tokens per fragment (cl100k_base)"), x2="bin_end:Q",
                y=alt.Y("fragments:Q", stack=True), color=alt.Color("kind:N"), tooltip=["bin_start", "kind", "fragments"])
        .properties(title="Token distribution of fragments", width=WIDTH)
    )


def fragments_per_document(fr: pl.DataFrame, inv: pl.DataFrame, top: int = TOP_N) -> alt.Chart:
    df = (
        fr.group_by("doc_id").len("fragments")
        .join(inv.select("doc_id", "path"), on="doc_id", how="left")
        .sort(["fragments", "path"], descending=[True, False]).head(top)
    )
    return _bar(df, "fragments", "path", f"Fragments per document (top {top})")

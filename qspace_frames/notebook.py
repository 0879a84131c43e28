"""Helpers the notebooks call: open a run, show a chart, show a table.

Charts are rendered to SVG with vl-convert (offline, deterministic, readable in the exported
HTML without any script) and also saved under reports/<run>/charts/.
"""
from __future__ import annotations

import altair as alt
import polars as pl

from .pipeline import Workbench


def open_run(params_file: str, corpus: str, run_name: str, notebook: str = "", gold: str = "") -> Workbench:
    return Workbench(params_file=params_file, corpus_arg=corpus or None, run_name=run_name, notebook=notebook, gold=gold or None)


def show(chart: alt.Chart, wb: Workbench | None = None, name: str | None = None):
    import vl_convert as vlc
    from IPython.display import SVG

    svg = vlc.vegalite_to_svg(chart.to_dict())
    if wb is not None and name:
        out = wb.run_dir / "charts"
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.svg").write_text(svg, encoding="utf-8")
    return SVG(data=svg)


def table(df: pl.DataFrame, n: int = 10, width: int = 60) -> pl.DataFrame:
    """The first n rows with long text cut, for display."""
    cut = [pl.col(c).str.slice(0, width).alias(c) for c, t in df.schema.items() if t == pl.String]
    return df.head(n).with_columns(cut)

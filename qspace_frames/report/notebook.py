"""Helpers the notebooks call: open a run, show a chart, show a table, the top row of a frame.

Charts are rendered to SVG with vl-convert (offline, deterministic, readable in the exported
HTML without any script) and also saved under reports/<run>/charts/. A notebook holds on any
corpus: a chart with no data is replaced by a sentence, and `top_row` gives None for an empty
frame instead of an IndexError.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import altair as alt
import polars as pl

from ..pipeline import Workbench
from .exports import write_text


def open_run(params_file: str, corpus: str, run_name: str, notebook: str = "", gold: str = "") -> Workbench:
    """The run's Workbench, with the display settings every notebook uses (tables without their
    shape line, every column, up to 40 rows, 180 characters wide)."""
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_cols(-1)
    pl.Config.set_tbl_rows(40)
    pl.Config.set_tbl_width_chars(180)
    return Workbench(params_file=params_file, corpus_arg=corpus or None, run_name=run_name, notebook=notebook, gold=gold or None)


class Sentence(str):
    """What a notebook shows in place of an empty table or chart: the sentence itself, shown
    as plain text whether it is a cell's last expression or passed to display()."""

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


def has_data(spec: dict) -> bool:
    """Whether a chart's spec draws any row: False when every dataset it names is empty."""
    datasets = spec.get("datasets")
    return not datasets or any(len(rows) for rows in datasets.values())


def show(chart: alt.Chart, wb: Workbench | None = None, name: str | None = None, empty: str = ""):
    """The chart as SVG (saved as charts/<name>.svg); a chart with no data is replaced by the
    sentence `empty` (or one naming the chart), and no stale file of that name is left behind."""
    from IPython.display import SVG

    out = wb.run_dir / "charts" / f"{name}.svg" if wb is not None and name else None
    svg = save_svg(chart, out)
    if svg is None:
        title = chart.to_dict().get("title") or name or "this chart"
        title = title.get("text", name) if isinstance(title, dict) else title
        return Sentence(empty or f"Nothing to draw for {title!r}: its table is empty in this corpus.")
    return SVG(data=svg)


def save_svg(chart: alt.Chart, out: Path | None) -> str | None:
    """The chart as SVG, written to `out` when given; None (and no stale file at `out`) when the
    chart has no data. The notebooks (`show`) and `exports.write_charts` draw through here."""
    import vl_convert as vlc

    spec = chart.to_dict()
    if not has_data(spec):
        if out is not None:
            out.unlink(missing_ok=True)
        return None
    svg = stable_ids(vlc.vegalite_to_svg(spec))
    if out is not None:
        write_text(svg, out)  # replaced, never rewritten in place: a kept rendering may share the file (renders)
    return svg


def warm_up() -> None:
    """Draw one tiny chart: vl-convert starts its JavaScript engine on a process's first chart
    (~0.7 s), which a warm kernel pays while the library computes instead of in a notebook."""
    import vl_convert as vlc

    vlc.vegalite_to_svg({"mark": "point", "data": {"values": [{"x": 0}]}, "encoding": {"x": {"field": "x", "type": "quantitative"}}})


_GRADIENT = re.compile(r"gradient_\d+")


def stable_ids(svg: str) -> str:
    """vl-convert numbers gradient ids with a counter over every chart the process has drawn, so
    the same chart drew differently after other notebooks in the same kernel. Renamed after the
    chart itself (a hash of it with the numbers taken out, then their order): the same in any
    process, and still distinct between charts inlined in one HTML page."""
    tag = hashlib.sha256(_GRADIENT.sub("gradient", svg).encode("utf-8")).hexdigest()[:8]
    order: dict[str, str] = {}
    return _GRADIENT.sub(lambda m: order.setdefault(m.group(0), f"gradient_{tag}_{len(order)}"), svg)


def table(df: pl.DataFrame, n: int = 10, width: int = 60, empty: str = "") -> pl.DataFrame | Sentence:
    """The first n rows with long text cut, for display; an empty frame gives the sentence
    `empty` (or a plain one) instead of a header with no rows."""
    if df.is_empty():
        return Sentence(empty or "No rows: nothing of this kind in this corpus.")
    cut = [pl.col(c).str.slice(0, width).alias(c) for c, t in df.schema.items() if t == pl.String]
    return df.head(n).with_columns(cut)


def top_row(df: pl.DataFrame) -> dict | None:
    """The first row as a dict, or None when the frame is empty (never index [0] into a frame
    that may be empty)."""
    return df.row(0, named=True) if df.height else None


def misses_tables(w: Workbench, strategy: str = "qspace", budget: int = 512) -> tuple[pl.DataFrame, str, int]:
    """A run's evaluated questions that `strategy` loads no gold for within `budget` tokens:
    (counted by reason, the first two of each reason as Markdown, questions evaluated)."""
    from ..evaluation.misses import reasons
    from .summaries import miss_examples

    gold = w.read("evaluation", "gold").filter(pl.col("status") == "ok")
    m = w.read("evaluation", "misses").filter((pl.col("strategy") == strategy) & (pl.col("budget") == budget))
    examples = miss_examples(m, gold, w.scan("evaluation", "retrievals"), w.scan("corpus", "pages"), strategy, budget)
    return reasons(m, gold.height), examples, gold.height

"""Workbooks (.xlsx and its macro and template variants) through openpyxl: one page per sheet, rows
as table rows, bounded by the text budget.
"""

from __future__ import annotations

import datetime as dt
import io

from ...params import CorpusParams
from .base import Page, Stop, Text, one_line, row_line
from .office import check_package


def load_xlsx(data: bytes, p: CorpusParams) -> Text:
    check_package(data, p)
    import openpyxl
    from openpyxl.chartsheet import Chartsheet

    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    try:
        pages: list[Page] = []
        budget = p.max_doc_chars
        for i, name in enumerate(wb.sheetnames, 1):
            sheet = wb[name]
            text = "" if isinstance(sheet, Chartsheet) else _sheet_text(sheet, budget, p)
            budget -= len(text)
            pages.append((i, text))
    finally:
        wb.close()
    n = len(pages)
    return Text(pages, n, empty=f"no cell values in any of {n} sheets")


def _sheet_text(ws, budget: int, p: CorpusParams) -> str:
    # Read-only mode trusts the stored sheet dimension, which some writers get wrong: without
    # the reset, rows and columns past it would be silently dropped.
    ws.reset_dimensions()
    header: list[str] | None = None
    header_row = 0
    lines = [f"# {one_line(ws.title)}"]
    size = 0
    for r, values in enumerate(ws.iter_rows(values_only=True), 1):  # r is the Excel row number
        cells = [_cell_text(v) for v in values]
        if not any(cells):
            continue
        if header is None:
            header, header_row = cells, r
            continue
        line = row_line(f"Row {r}", cells, header) or ""
        lines.append(line)
        size += len(line) + 2
        if size > budget:
            raise Stop("too_large", f"text is over max_doc_chars={p.max_doc_chars:,} (sheet {ws.title!r}, row {r:,})")
    if header is None:
        return ""  # a sheet without values is a blank page, not a page holding only its title
    if len(lines) == 1:  # a single row: nothing to name its columns by
        lines.append(row_line(f"Row {header_row}", header) or "")
    return "\n\n".join(lines)


def _cell_text(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, dt.datetime):
        return v.date().isoformat() if v.time() == dt.time() and v.tzinfo is None else v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else f"{v:.15g}"  # Excel shows 15 significant digits
    return one_line(str(v))

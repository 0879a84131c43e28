"""Word documents (.docx) through python-docx: paragraphs in body order, heading styles as
heading levels, tables as table rows.
"""

from __future__ import annotations

import io
import re

from ...params import CorpusParams
from .base import Text, block_text, one_line, table_lines
from .office import check_package

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.I)


def load_docx(data: bytes, p: CorpusParams) -> Text:
    check_package(data, p)
    import docx

    document = docx.Document(io.BytesIO(data))
    blocks: list[str] = []
    _docx_blocks(document.element.body, document, blocks)
    return Text([(None, "\n\n".join(blocks))], empty="no text in the document body")


def _docx_blocks(container, document, out: list[str]) -> None:
    """Paragraphs and tables in document order, from the body XML children."""
    from docx.text.paragraph import Paragraph

    for child in container.iterchildren():
        if child.tag == _W + "p":
            block = _docx_paragraph(Paragraph(child, document))
            if block:
                out.append(block)
        elif child.tag == _W + "tbl":
            out.extend(_docx_table(child))
        elif child.tag in (_W + "sdt", _W + "customXml"):  # content controls wrap ordinary blocks
            content = child.find(_W + "sdtContent")
            _docx_blocks(content if content is not None else child, document, out)


def _docx_paragraph(paragraph) -> str:
    text = paragraph.text
    if not text.strip():
        return ""
    level = _docx_heading_level(paragraph)
    if level:
        return "#" * level + " " + one_line(text)
    style_name = (paragraph.style.name or "") if paragraph.style is not None else ""
    ppr = paragraph._p.pPr
    if "list" in style_name.lower() or (ppr is not None and ppr.numPr is not None):
        return "- " + one_line(text)
    return block_text(text)


def _docx_heading_level(paragraph) -> int:
    """Title = 1, `Heading N` = N (any case: Word stores built-in names in English whatever the
    UI language), through the style's base styles; else an explicit outline level."""
    style, hops = paragraph.style, 0
    while style is not None and hops < 10:
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 1
        if m := _HEADING_STYLE.fullmatch(name):
            return int(m.group(1))
        style, hops = style.base_style, hops + 1
    outline = paragraph._p.find(f"{_W}pPr/{_W}outlineLvl")
    if outline is not None:
        value = outline.get(_W + "val", "")
        if value.isdigit() and int(value) < 9:  # 9 means body text
            return min(int(value) + 1, 6)
    return 0


def _docx_table(tbl) -> list[str]:
    rows: list[list[str]] = []
    for tr in tbl.iterchildren(_W + "tr"):
        row: list[str] = [""] * tr.grid_before  # cells placed by grid column
        for tc in tr.iterchildren(_W + "tc"):
            text = " ".join(p.text for p in tc.iter(_W + "p"))  # nested tables included
            row.append(one_line(text))
            row.extend([""] * (tc.grid_span - 1))  # a merged cell counted once
        rows.append(row)
    return table_lines(rows, header=_docx_has_header(tbl))


def _docx_has_header(tbl) -> bool:
    """Word marks a header row as repeating (tblHeader) or via the table look's firstRow flag."""
    first = tbl.find(_W + "tr")
    if first is not None and first.find(f"{_W}trPr/{_W}tblHeader") is not None:
        return first.find(f"{_W}trPr/{_W}tblHeader").get(_W + "val", "true") not in ("0", "false", "off")
    look = tbl.find(f"{_W}tblPr/{_W}tblLook")
    if look is None:
        return False
    flag = look.get(_W + "firstRow")
    if flag is not None:
        return flag in ("1", "true", "on")
    try:  # older files pack the flags into a hex bitmask; 0x0020 is the first row
        return bool(int(look.get(_W + "val", "0"), 16) & 0x0020)
    except ValueError:
        return False

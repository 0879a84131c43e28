"""Presentations (.pptx) through python-pptx: one page per slide, its title as a heading, text
frames and tables in reading order.
"""

from __future__ import annotations

import io

from ...params import CorpusParams
from .base import Text, block_text, one_line, table_lines
from .office import check_package


def load_pptx(data: bytes, p: CorpusParams) -> Text:
    check_package(data, p)
    from pptx import Presentation

    deck = Presentation(io.BytesIO(data))
    pages = [(i, "\n\n".join(_slide_blocks(slide))) for i, slide in enumerate(deck.slides, 1)]
    empty = f"no text on any of {len(pages)} slides" if pages else "presentation has 0 slides"
    return Text(pages, len(pages), empty=empty)


def _slide_blocks(slide) -> list[str]:
    title = slide.shapes.title
    blocks: list[str] = []
    title_id = None
    if title is not None:
        title_id = title.shape_id
        text = one_line(title.text_frame.text) if title.has_text_frame else ""
        if text:
            blocks.append("# " + text)
    for shape in slide.shapes:
        _shape_blocks(shape, title_id, blocks)
    return blocks


def _shape_blocks(shape, title_id: int | None, out: list[str]) -> None:
    from pptx.shapes.group import GroupShape

    if shape.shape_id == title_id:
        return
    if isinstance(shape, GroupShape):
        for inner in shape.shapes:
            _shape_blocks(inner, title_id, out)
    elif getattr(shape, "has_table", False):
        out.extend(_pptx_table(shape.table))
    elif shape.has_text_frame:
        for para in shape.text_frame.paragraphs:
            text = block_text(para.text.replace("\v", "\n"))  # python-pptx renders <a:br/> as "\v"
            if text:
                out.append(text)


def _pptx_table(table) -> list[str]:
    rows = [
        ["" if cell.is_spanned else one_line(cell.text) for cell in row.cells]  # merged cell once
        for row in table.rows
    ]
    return table_lines(rows, header=table.first_row)

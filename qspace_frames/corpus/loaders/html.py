"""HTML: headings, blocks, list items and tables as canonical text; scripts, styles and the head skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

from ...params import CorpusParams
from .base import Text, block_text, decode_text, one_line, table_lines

_HTML_SKIP = {"script", "style", "noscript", "template", "head"}
# title-page lines DocBook sets as headings: names and a subtitle, not sections
_NOT_SECTION_CLASSES = {"author", "corpauthor", "editor", "othercredit", "subtitle"}
# boxes set beside the text (DocBook's note and tip, Sphinx's admonitions): a heading inside one
# ("Note", "Rationale") heads the box alone, and the text after the box is its section's again
_ASIDE_CLASSES = {"note", "tip", "warning", "caution", "important", "admonition", "sidebar", "attention", "hint", "danger"}
_HTML_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_HTML_BLOCKS = {
    "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "html",
    "legend", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "ul", *_HTML_HEADINGS,
}  # fmt: skip


@dataclass
class _HtmlTable:
    rows: list[list[str]] = field(default_factory=list)
    all_th: list[bool] = field(default_factory=list)  # per row: every cell was a <th>
    in_head: bool = False
    head_rows: int = 0  # rows inside <thead>
    row: list[str] | None = None
    row_th: bool = True
    cell: list[str] | None = None
    span: int = 1  # colspan of the open cell: later cells keep their column

    def close_cell(self) -> None:
        if self.cell is not None and self.row is not None:
            self.row.append(one_line("".join(self.cell)))
            self.row.extend([""] * (self.span - 1))
        self.cell = None

    def close_row(self) -> None:
        self.close_cell()
        if self.row is not None:
            self.rows.append(self.row)
            self.all_th.append(self.row_th and bool(self.row))
            self.head_rows += self.in_head
        self.row = None

    def lines(self) -> list[str]:
        self.close_row()
        header = bool(self.rows) and (self.head_rows > 0 or self.all_th[0])
        return table_lines(self.rows, header)


class _TagStack(list):
    """A stack of open tag names with O(1) membership: a test per tag against a plain list made
    100,000 nested <div>s take minutes (quadratic)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}

    def append(self, tag: str) -> None:
        super().append(tag)
        self.counts[tag] = self.counts.get(tag, 0) + 1

    def pop(self) -> str:
        tag = super().pop()
        self.counts[tag] -= 1
        return tag

    def __contains__(self, tag: object) -> bool:
        return self.counts.get(tag, 0) > 0  # type: ignore[arg-type]

    def discard_all(self, tag: str) -> None:
        self[:] = [t for t in self if t != tag]
        self.counts[tag] = 0


class _HtmlText(HTMLParser):
    """Collects canonical blocks from HTML with the standard library parser (no lxml needed).

    Tolerates the usual tag soup: unclosed <p>/<li>, an implicit </head>, stray end tags.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)  # entities arrive unescaped in handle_data
        self.blocks: list[str] = []
        self.buf: list[str] = []  # text of the block being read
        self.stack = _TagStack()  # open block tags, innermost last
        self.skip = _TagStack()  # open tags whose content is dropped
        self.tables: list[_HtmlTable] = []
        self.title_buf: list[str] | None = None
        self.title = ""
        self.has_h1 = False
        # Footnotes are moved to follow the block that refers to them: gathered at the end of a
        # chapter, they would sit under its last heading, a section that never mentions them.
        self.note_refs: dict[str, int] = {}  # footnote id -> index of the block referring to it
        self.open_notes: list[tuple[int, str, int]] = []  # (stack depth, id, first block) of open footnotes
        self.notes: dict[str, list[str]] = {}  # footnote id -> its blocks
        self.open_asides: list[tuple[int, int]] = []  # (stack depth, first block) of open boxes
        self.plain_headings: set[int] = set()  # stack depths of open headings read as plain text
        self.box_titles: set[int] = set()  # stack depths of open box titles (DocBook's <p class="title">)
        self.fresh_items: set[int] = set()  # stack depths of open <li> none of whose text is written yet
        self.level = 0  # the level of the last heading
        self.resume: dict[int, int] = {}  # block index -> heading level whose section it returns to
        self.code: set[int] = set()  # block indexes of <pre> blocks: code, whose "# ..." lines are comments

    # -- blocks
    def _flush(self) -> None:
        raw, self.buf = "".join(self.buf), []
        kind = self.stack[-1] if self.stack else ""
        if "pre" in self.stack:
            text = block_text(raw.strip("\n"))  # keep the layout, but no blank line inside
        else:
            text = one_line(raw)
        if not text:
            return
        if kind in _HTML_HEADINGS and len(self.stack) - 1 not in self.plain_headings:
            self.has_h1 |= kind == "h1"
            self.level = _HTML_HEADINGS[kind]
            text = "#" * self.level + " " + one_line(text)
        elif len(self.stack) - 1 in self.box_titles:  # a box's title heads the box, below the section it sits in
            text = "#" * min(self.level + 1, 6) + " " + one_line(text)
        elif "pre" not in self.stack and (item := self._fresh_item()) is not None:  # its text, or a <p> in it (Sphinx)
            self.fresh_items.discard(item)
            text = "- " + text
        if "pre" in self.stack:
            self.code.add(len(self.blocks))
        self.blocks.append(text)

    def _place_notes(self) -> None:
        """Each footnote after the block that refers to it; one nobody refers to where it was."""
        after: dict[int, list[str]] = {}
        for note_id, blocks in self.notes.items():
            at = self.note_refs.get(note_id)
            after.setdefault(len(self.blocks) - 1 if at is None else min(at, len(self.blocks) - 1), []).extend(blocks)
        if after:
            placed, moved = [], {}
            for i, block in enumerate(self.blocks):
                moved[i] = len(placed)
                placed.extend((block, *after.pop(i, [])))
            self.resume = {moved[i]: level for i, level in self.resume.items() if i in moved}
            self.code = {moved[i] for i in self.code if i in moved}
            self.blocks = [b for rest in after.values() for b in rest] + placed  # notes with no block to follow: first

    def _cell(self) -> list[str] | None:
        return self.tables[-1].cell if self.tables else None

    # -- parser callbacks
    def _fresh_item(self) -> int | None:
        """The stack depth of the innermost open <li> when none of its text is written yet."""
        depth = max((i for i, t in enumerate(self.stack) if t == "li"), default=None)
        return depth if depth in self.fresh_items else None

    def _forget(self, depth: int) -> None:
        """Forget what was noted of the block closed at this stack depth."""
        for noted in (self.plain_headings, self.box_titles, self.fresh_items):
            noted.discard(depth)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.title_buf = []
            return
        if tag == "body":  # <body> closes an unclosed <head>
            self.skip.discard_all("head")
        if self.skip or tag in _HTML_SKIP:
            if tag in _HTML_SKIP:
                self.skip.append(tag)
            return
        attr = dict(attrs)
        if tag == "a" and "headerlink" in (attr.get("class") or ""):
            self.skip.append("a")  # Sphinx's "¶" permalink inside every heading
            return
        if tag == "a" and (attr.get("href") or "").startswith("#"):
            self.note_refs.setdefault(attr["href"][1:], len(self.blocks))
        if tag == "table":
            self._flush()
            self.tables.append(_HtmlTable())
            return
        if self.tables:
            table = self.tables[-1]
            if tag == "thead":
                table.in_head = True
                return
            if tag in ("tbody", "tfoot"):
                table.in_head = False
                return
            if tag == "tr":
                table.close_row()
                table.row, table.row_th = [], True
                return
            if tag in ("td", "th"):
                table.close_cell()
                if table.row is None:
                    table.row, table.row_th = [], True
                table.cell = []
                table.row_th &= tag == "th"
                colspan = (dict(attrs).get("colspan") or "").strip()
                ok = colspan.isascii() and colspan.isdigit() and 0 < int(colspan) <= 1000
                table.span = int(colspan) if ok else 1
                return
            if table.cell is not None:  # block structure inside a cell flattens into the cell
                if tag in _HTML_BLOCKS or tag == "br":
                    table.cell.append(" ")
                return
        if tag == "br":
            self.buf.append("\n" if "pre" in self.stack else " ")
        elif tag == "hr":
            self._flush()
        elif tag in _HTML_BLOCKS:
            self._flush()
            self.stack.append(tag)
            if tag == "li":
                self.fresh_items.add(len(self.stack) - 1)
            classes = set((attr.get("class") or "").split())
            if tag in _HTML_HEADINGS and classes & _NOT_SECTION_CLASSES:
                self.plain_headings.add(len(self.stack) - 1)
            if "footnote" in classes and attr.get("id") and not self.tables:
                self.open_notes.append((len(self.stack), attr["id"], len(self.blocks)))
            if classes & _ASIDE_CLASSES and not self.tables:
                self.open_asides.append((len(self.stack), len(self.blocks)))
            elif "title" in classes and tag not in _HTML_HEADINGS and self.open_asides and self.open_asides[-1][1] == len(self.blocks):
                self.box_titles.add(len(self.stack) - 1)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title_buf is not None:  # the first wins (SVGs have titles too)
            self.title = self.title or one_line("".join(self.title_buf))
            self.title_buf = None
            return
        if self.skip:
            if tag in self.skip:
                while self.skip.pop() != tag:
                    pass
            return
        if tag == "table" and self.tables:
            self.blocks.extend(self.tables.pop().lines())
            return
        if self.tables:
            table = self.tables[-1]
            if tag == "thead":
                table.in_head = False
            elif tag in ("td", "th"):
                table.close_cell()
            elif tag == "tr":
                table.close_row()
            if tag in ("thead", "td", "th", "tr") or table.cell is not None:
                return
        if tag in self.stack:
            self._flush()
            while self.stack.pop() != tag:
                self._forget(len(self.stack))
            self._forget(len(self.stack))
            while self.open_notes and self.open_notes[-1][0] > len(self.stack):
                _, note_id, first = self.open_notes.pop()
                self.notes[note_id], self.blocks[first:] = self.blocks[first:], []
            while self.open_asides and self.open_asides[-1][0] > len(self.stack):
                _, first = self.open_asides.pop()
                levels = [len(b) - len(b.lstrip("#")) for b in self.blocks[first:] if b.startswith("#")]
                if levels:  # the next block returns to the section the box's heading interrupted
                    self.resume[len(self.blocks)] = min(levels)

    def handle_data(self, data: str) -> None:
        if self.title_buf is not None:
            self.title_buf.append(data)
        elif self.skip:
            return
        elif (cell := self._cell()) is not None:
            cell.append(data)
        else:
            self.buf.append(data)

    def result(self) -> list[str]:
        self.close()
        self._flush()
        while self.tables:  # unclosed tables at the end of the file
            self.blocks.extend(self.tables.pop().lines())
        self._place_notes()
        if self.title and not self.has_h1:
            self.resume = {i + 1: level for i, level in self.resume.items()}
            self.code = {i + 1 for i in self.code}
            return ["# " + self.title, *self.blocks]
        return self.blocks


def load_html(data: bytes, p: CorpusParams) -> Text:
    text, note = decode_text(data, p)
    parser = _HtmlText()
    parser.feed(text)
    blocks = parser.result()
    starts, pos = [], 0
    for block in blocks:
        starts.append(pos)
        pos += len(block) + 2
    # "resume" marks the block after a box that held a heading: the box's section ends there
    marks = [(0, starts[i], starts[i], level, "resume") for i, level in sorted(parser.resume.items()) if i < len(blocks)]
    # "code" marks a <pre> block: its lines are no headings ("# /etc/fstab: static file system information.")
    marks += [(0, starts[i], starts[i] + len(blocks[i]), 0, "code") for i in sorted(parser.code) if i < len(blocks)]
    marks.sort(key=lambda m: (m[1], m[4]))
    return Text([(None, "\n\n".join(blocks))], note=note, empty="no visible text in the HTML", headings=marks)

"""The headings a PDF's layout shows, beyond its text: its outline (bookmarks) first, else the fonts
its lines are set in.

pypdf hands every piece of text it extracts to a visitor with its font and matrices; the pieces
concatenate to exactly the extracted text, so each character of a page's text gets a size and a
weight, and each line the style most of its characters have. A document's body size is the size
most of its characters are set in; lines set larger (and bold body-size lines that are numbered
or in capitals) are heading candidates, clustered into levels by size. An outline entry is placed
on the line of its page that carries its title, the largest such line when several do (a running
header repeats the title in small type).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from .base import Heading

MAX_LEVEL = 6
HEADING_MAX_CHARS = 120  # a longer line is body text whatever its font
SIZE_STEP = 0.5  # sizes closer than this are one size (points)
MAX_CLASS_SHARE = 0.25
WRAP_LINES = (
    3  # an outline title is looked for over this many lines  # a size that sets more of the text than this is body text, not headings
)
_NUMBERED = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){0,4}\.?|[A-Z]\.|[IVXLC]{1,6}\.|(?i:chapter|appendix|section|part)\s+\S+)\s")
_DEPTH = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,4})\.?\s")
_NUMBERED_OR_CAPS = re.compile(r"^(?:(?:\d{1,3}(?:\.\d{1,3}){0,4}\.?|[A-Z]\.|[IVXLC]{1,6}\.)\s+\S|[^a-z]*[A-Z]{3}[^a-z]*$)")


@dataclass
class Line:
    page: int  # index of the page in the document's pages
    start: int  # offsets into the page's (stripped) text
    end: int
    text: str
    size: float
    bold: bool


class PageStyles:
    """A pypdf `visitor_text`: the size and weight of every character the page's text will hold."""

    def __init__(self) -> None:
        self.runs: list[tuple[int, float, bool]] = []  # (n characters, size, bold)

    def __call__(self, text, cm, tm, font, size) -> None:
        if not text:
            return
        # the text's height on the page: the font size through the text and current matrices
        c, d = tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3]
        scale = math.hypot(c, d) or 1.0
        eff = round(float(size or 0) * scale / SIZE_STEP) * SIZE_STEP
        self.runs.append((len(text), eff, _is_bold(font)))

    def lines(self, page: int, text: str, lead: int) -> list[Line]:
        """The page's lines with their dominant style; `lead` characters were stripped off the text's start."""
        styles: list[tuple[float, bool]] = []
        for n, size, bold in self.runs:
            styles.extend([(size, bold)] * n)
        out, pos = [], 0
        for raw in text.split("\n"):
            end = pos + len(raw)
            counts = Counter(st for ch, st in zip(raw, styles[pos:end]) if not ch.isspace())
            if counts and end > lead:
                (size, bold), _ = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
                start = max(pos, lead)
                stripped = text[start:end].strip()
                if stripped:
                    first = start + (len(text[start:end]) - len(text[start:end].lstrip()))
                    out.append(Line(page, first - lead, first - lead + len(stripped), stripped, size, bold))
            pos = end + 1
        return out


def _is_bold(font) -> bool:
    try:
        name = str(font.get("/BaseFont", "")) if font else ""
        desc = font.get("/FontDescriptor") if font else None
        weight = float(desc.get("/FontWeight", 0)) if desc is not None else 0.0
    except Exception:  # a damaged font dictionary is a regular font
        return False
    return weight >= 600 or bool(re.search(r"Bold|Black|Heavy|Semibold|Demi", name))


def _norm(s: str) -> str:
    return re.sub(r"[^0-9a-z]", "", s.lower())


def outline_entries(reader) -> list[tuple[int, int, str]]:
    """(page index, level, title) of every outline entry whose destination resolves, in outline order."""
    out: list[tuple[int, int, str]] = []

    def walk(items, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = str(item.title or "")
            except Exception:  # a broken destination: that entry is not evidence
                continue
            if page is not None and page >= 0 and _norm(title):
                out.append((page, min(depth + 1, MAX_LEVEL), title))

    try:
        walk(reader.outline, 0)
    except Exception:  # an unreadable outline is no outline
        return []
    return out


def _title_match(line: str, title: str) -> bool:
    """The line is the title, perhaps after its number ("1.1 Scope" for "Scope")."""
    n, t = _norm(line), _norm(title)
    if not t or not n.endswith(t):
        return False
    return bool(re.fullmatch(r"(?:chapter|section|appendix|part)?[a-z]?\d{0,8}", n[: len(n) - len(t)]))


def outline_headings(entries: list[tuple[int, int, str]], lines: list[Line]) -> list[Heading]:
    """Outline entries placed on their lines (a long title wraps over up to three), on the
    destination page or the page after it."""
    by_page: dict[int, list[Line]] = {}
    for ln in lines:
        by_page.setdefault(ln.page, []).append(ln)
    out, used = [], set()
    for page, level, title in entries:
        for p in (page, page + 1):
            on_page = by_page.get(p, [])
            found = []
            for i, ln in enumerate(on_page):
                if (p, ln.start) in used:
                    continue
                for k in range(1, WRAP_LINES + 1):
                    run = on_page[i : i + k]
                    if len(run) == k and _title_match(" ".join(x.text for x in run), title):
                        found.append((ln.size, -ln.start, ln.start, run[-1].end))
                        break
            if found:
                _, _, start, end = max(found)
                used.add((p, start))
                out.append((p, start, end, level, "outline"))
                break
    return sorted(out)


def font_headings(lines: list[Line]) -> list[Heading]:
    """Lines set larger than the body (or bold at body size and numbered or in capitals), ranked into
    levels by size, then by the depth of their numbering."""
    weight = Counter()
    for ln in lines:
        weight[ln.size] += len(ln.text)
    total = sum(weight.values())
    if not total:
        return []
    body = max(weight.items(), key=lambda kv: (kv[1], -kv[0]))[0]

    def candidate(ln: Line) -> bool:
        return len(ln.text) <= HEADING_MAX_CHARS and sum(ch.isalpha() for ch in ln.text) >= 2 and not ln.text.endswith((",", ";"))

    big = {ln.size for ln in lines if ln.size > body and candidate(ln)}
    big = {s for s in big if weight[s] <= MAX_CLASS_SHARE * total}

    def rank(ln: Line) -> tuple | None:
        """Where the line's style ranks among heading styles: larger type first, then bold body
        type; within one, shallower numbering first ("2." over "2.1" over an unnumbered title)."""
        if not candidate(ln):
            return None
        depth = _DEPTH.match(ln.text)
        within = depth.group(1).count(".") if depth else MAX_LEVEL
        if ln.size in big:
            return (0, -ln.size, within)
        if ln.size == body and ln.bold and _NUMBERED_OR_CAPS.match(ln.text) and not ln.text.endswith("."):
            return (1, 0.0, within)
        return None

    ranks = [rank(ln) for ln in lines]
    # a title set over two lines (the second unnumbered, in the same type) is one heading
    wraps = [
        i > 0
        and r is not None
        and ranks[i - 1] is not None
        and lines[i - 1].page == ln.page
        and lines[i - 1].size == ln.size
        and not _NUMBERED.match(ln.text)
        for i, (ln, r) in enumerate(zip(lines, ranks))
    ]
    levels = {r: min(i + 1, MAX_LEVEL) for i, r in enumerate(sorted({r for r, w in zip(ranks, wraps) if r is not None and not w}))}
    out: list[Heading] = []
    for ln, r, w in zip(lines, ranks, wraps):
        if r is None:
            continue
        if w:
            out[-1] = (*out[-1][:2], ln.end, *out[-1][3:])
        else:
            out.append((ln.page, ln.start, ln.end, levels[r], "font"))
    return out


def layout_headings(reader, lines: list[Line]) -> list[Heading]:
    """The outline's headings when it places any, else the fonts'."""
    placed = outline_headings(outline_entries(reader), lines)
    return placed if placed else font_headings(lines)

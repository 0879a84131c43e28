"""Loaders: one raw file in, canonical text pages out, never an exception.

Loaders are the one place that reads raw files (DESIGN.md section 3). Documents are untrusted
(section 10): every file ends with a status from STATUSES and a one-line reason that says what
actually happened, so a corrupt PDF is reported as a corrupt PDF and binary junk is not loaded
as text (section 13).

Canonical text, relied on by the fragment and detector stages:

- headings are markdown lines: ``"#" * level + " " + text``;
- blocks (paragraphs, headings, ``- item`` list items, table rows) are separated by one blank
  line, except txt/md (returned exactly as decoded, but for md's YAML front matter, blanked in
  place) and csv/json/jsonl (one record per line);
- table rows are ``Row <n>: <col> = <val>; <col> = <val>``: empty cells are skipped, columns are
  named by the header row when there is one, else ``col<k>`` (k counts from 1).
"""
from __future__ import annotations

import codecs
import contextlib
import csv
import datetime as dt
import io
import json
import logging
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable, Iterator

import yaml

from ..params import CorpusParams

STATUSES = ("loaded", "empty", "encrypted", "too_large", "unsupported", "error")

Page = tuple[int | None, str]


@dataclass(frozen=True)
class Loaded:
    status: str  # one of STATUSES
    reason: str  # one line; "" only when status is "loaded" and nothing is worth saying
    pages: list[Page]  # (page number, text); page is None for pageless formats
    n_pages: int | None  # pdf pages, pptx slides, xlsx sheets; None for pageless formats


def load_file(path: Path, ext: str, p: CorpusParams) -> Loaded:
    """Load one file into canonical text pages. Never raises, never prints."""
    ext = ext.lower().lstrip(".")
    try:
        with _quiet():
            return _load(Path(path), ext, p)
    except Exception as e:  # a bug in this module must still not stop a run
        return _loaded("error", f"{ext} loader failed: {_why(e)}")


# --------------------------------------------------------------------------- plumbing


@dataclass
class _Text:
    """What a format loader extracted, before the checks every format shares."""

    pages: list[Page]
    n_pages: int | None = None
    note: str = ""  # reason to report when the document loads
    empty: str = "no text"  # reason to report when every page is blank


class _Stop(Exception):
    """Ends a load early with a definite status and reason (raised from any depth)."""

    def __init__(self, status: str, reason: str, n_pages: int | None = None):
        super().__init__(reason)
        self.status, self.reason, self.n_pages = status, reason, n_pages


def _loaded(status: str, reason: str, pages: list[Page] | None = None, n_pages: int | None = None) -> Loaded:
    assert status in STATUSES
    # Reasons land in one inventory cell: one line, bounded length.
    return Loaded(status, " ".join(reason.split())[:500], pages or [], n_pages)


def _notes(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _why(e: BaseException) -> str:
    """`ExceptionType: first line of its message`."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:300]}" if lines else type(e).__name__


# Library loggers that report recoverable damage as warnings; with no handler configured Python
# prints those to stderr, which a loader must not do. Raising the parent logger's level silences
# its children too (they inherit the effective level).
_NOISY_LOGGERS = ("pypdf", "openpyxl", "docx", "pptx", "PIL")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in _NOISY_LOGGERS]
    levels = [lg.level for lg in loggers]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lg in loggers:
            lg.setLevel(logging.CRITICAL + 1)
        try:
            yield
        finally:
            for lg, level in zip(loggers, levels):
                lg.setLevel(level)


def _load(path: Path, ext: str, p: CorpusParams) -> Loaded:
    loader = _LOADERS.get(ext)
    if loader is None:
        return _loaded("unsupported", f"no loader for .{ext}" if ext else "no loader for files without an extension")
    try:
        size = path.stat().st_size
    except OSError as e:
        return _loaded("error", f"cannot stat: {_why(e)}")
    if size > p.max_file_bytes:  # checked before reading a byte of it
        return _loaded("too_large", f"file is {size:,} bytes, over max_file_bytes={p.max_file_bytes:,}")
    try:
        data = path.read_bytes()
    except OSError as e:
        return _loaded("error", f"cannot read: {_why(e)}")
    if not data and ext in _TEXT_FORMATS:  # an empty text file is empty; an empty PDF is broken
        return _loaded("empty", "file is 0 bytes")
    try:
        doc = loader(data, p)
    except _Stop as s:
        return _loaded(s.status, s.reason, n_pages=s.n_pages)
    except Exception as e:
        return _loaded("error", f"{ext} parse failed: {_why(e)}")
    return _finish(doc, p)


_SURROGATE = re.compile(r"[\ud800-\udfff]")  # not encodable as UTF-8 (Parquet, CSV, the terminal)


def _finish(doc: _Text, p: CorpusParams) -> Loaded:
    n_lone = sum(len(_SURROGATE.findall(text)) for _, text in doc.pages)
    if n_lone:  # e.g. a JSON "\ud800" escape: one character each, so offsets are unchanged
        doc.pages = [(page, _SURROGATE.sub("\ufffd", text)) for page, text in doc.pages]
        doc.note = _notes(doc.note, f"{n_lone:,} lone surrogate code points replaced with U+FFFD")
    if not any(text.strip() for _, text in doc.pages):
        return _loaded("empty", doc.empty, n_pages=doc.n_pages)
    total = sum(len(text) for _, text in doc.pages)
    if total > p.max_doc_chars:
        return _loaded(
            "too_large", f"text is {total:,} characters, over max_doc_chars={p.max_doc_chars:,}", n_pages=doc.n_pages
        )
    return _loaded("loaded", doc.note, doc.pages, doc.n_pages)


# --------------------------------------------------------------------------- shared text helpers


def _one_line(s: str) -> str:
    """Collapse all whitespace (newlines, tabs, NBSP) to single spaces: headings, cells, leaves."""
    return " ".join(s.split())


def _block(s: str) -> str:
    """A paragraph keeps its soft line breaks but may not contain a blank line (a block break)."""
    lines = [line.rstrip() for line in s.strip().splitlines()]
    return "\n".join(line for line in lines if line.strip())


def _row_line(label: str, values: list[str], names: list[str] | None = None) -> str | None:
    """`<label>: name = value; ...` over the non-empty values, or None if the row is empty."""
    names = names or []
    parts = [
        f"{names[k] if k < len(names) and names[k] else f'col{k + 1}'} = {v}"
        for k, v in enumerate(values)
        if v
    ]
    return f"{label}: " + "; ".join(parts) if parts else None


def _table_lines(rows: list[list[str]], header: bool) -> list[str]:
    """Row lines for a table given as rows of one-line cell texts; empty rows are not numbered.

    A header row names the columns only if some row below it has content: otherwise (a one-row
    table, or an empty grid under a caption) its text would vanish, so it is read as data.
    """
    rows = [row for row in rows if any(row)]
    names = rows[0] if header and len(rows) > 1 else None
    lines = []
    for row in rows[1:] if names else rows:
        line = _row_line(f"Row {len(lines) + 1}", row, names)
        if line:
            lines.append(line)
    return lines


# --------------------------------------------------------------------------- text sniffing

_BOMS = (  # UTF-32 first: its little-endian BOM starts with the UTF-16 one
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
)
# Control characters that do not occur in text (tab, newlines, vertical tab and form feed do).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_ESCAPED_BYTE = re.compile(r"[\udc80-\udcff]")  # what surrogateescape makes of an undecodable byte


def _decode(data: bytes, p: CorpusParams, keep_bom: bool = False) -> tuple[str, str]:
    """Decode a text file; return (text, note) or stop with `unsupported` if it is binary.

    Without a BOM the bytes must be UTF-8; a few undecodable bytes (a Latin-1 word in a UTF-8
    file) are replaced and reported, many of them or any NUL byte mean the file is not text.
    """
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            try:
                text, note = data.decode(codec), f"decoded as {label} (BOM)"
            except UnicodeDecodeError as e:
                text = data.decode(codec, errors="replace")
                note = f"decoded as {label} (BOM) with invalid sequences replaced ({e.reason})"
            _check_controls(text, 0, p)
            return text, note
    if b"\x00" in data:
        raise _Stop("unsupported", f"binary content in a text file ({data.count(0):,} NUL bytes)")
    try:
        text, n_bad = data.decode("utf-8"), 0
    except UnicodeDecodeError:
        escaped = data.decode("utf-8", errors="surrogateescape")
        n_bad = len(_ESCAPED_BYTE.findall(escaped))
        _check_controls(escaped, n_bad, p)
        text = data.decode("utf-8", errors="replace")
    else:
        _check_controls(text, 0, p)
    if not keep_bom:
        text = text.removeprefix("\ufeff")  # a UTF-8 BOM would break json and csv headers
    note = f"not valid UTF-8: {n_bad:,} undecodable bytes replaced with U+FFFD" if n_bad else ""
    return text, note


def _check_controls(text: str, n_bad: int, p: CorpusParams) -> None:
    n_control = len(_CONTROL.findall(text))
    share = (n_bad + n_control) / max(1, len(text))
    if share > p.binary_ratio:
        raise _Stop(
            "unsupported",
            f"binary content in a text file ({n_bad:,} undecodable bytes and {n_control:,} control "
            f"characters in {len(text):,} characters: {share:.0%}, over binary_ratio={p.binary_ratio:g})",
        )


# --------------------------------------------------------------------------- txt, md


def _load_plain(data: bytes, p: CorpusParams) -> _Text:
    # Unchanged: offsets computed by others against the decoded file must agree with ours.
    text, note = _decode(data, p, keep_bom=True)
    return _Text([(None, text)], note=note, empty=f"only whitespace ({len(text):,} characters)")


# Front matter is metadata, bounded so that a file opening with "---" costs little to vet.
_FM_MAX_CHARS = 64 * 1024
_FM_MAX_LINES = 1000
_FM_KEPT = "front matter not parsed ({}): kept as text"


def _load_markdown(data: bytes, p: CorpusParams) -> _Text:
    doc = _load_plain(data, p)
    [(page, text)] = doc.pages
    new, note = _front_matter(text)
    if new != text:
        doc.pages = [(page, new)]
        doc.empty = "only YAML front matter without a title, and whitespace"  # (with a title, never empty)
    doc.note = _notes(doc.note, note)
    return doc


def _delimiter(line: str) -> str:
    return line.rstrip(" \t\r\n")


def _front_matter(text: str) -> tuple[str, str]:
    """(text, note): a leading YAML front matter block (Jekyll, Hugo) replaced in place.

    Offsets into the decoded file must still hold after the block, so the replacement has its
    exact length: `# <title>` then blank lines, or only blank lines when there is no title.
    Anything doubtful (YAML error, not a mapping, no closing line, too long) stays as text.
    """
    start = 1 if text.startswith("\ufeff") else 0
    if not text.startswith("---", start):
        return text, ""
    limit = min(len(text), start + _FM_MAX_CHARS)
    first = text.find("\n", start, limit)
    if first < 0 or _delimiter(text[start:first]) != "---":
        return text, ""
    pos = body = first + 1
    for _ in range(_FM_MAX_LINES):
        if pos >= len(text):
            return text, _FM_KEPT.format("no closing '---' or '...' line")
        nl = text.find("\n", pos, limit)
        if nl < 0 and limit < len(text):
            break  # the line runs past the bound
        end = nl + 1 if nl >= 0 else limit
        if _delimiter(text[pos:end]) in ("---", "..."):
            return _replace_front_matter(text, text[body:pos], end)
        pos = end
    return text, _FM_KEPT.format(f"no closing line within {_FM_MAX_LINES:,} lines or {_FM_MAX_CHARS // 1024} KiB")


def _replace_front_matter(text: str, source: str, end: int) -> tuple[str, str]:
    """Parse the YAML `source` of the block text[:end] and blank the block if it is a mapping."""
    try:
        meta = yaml.safe_load(source)  # never constructs Python objects: tags like !!python/object fail
    except Exception as e:  # a YAMLError, or e.g. a RecursionError from deep nesting
        mark = getattr(e, "problem_mark", None)
        if isinstance(e, yaml.MarkedYAMLError) and e.problem and mark is not None:
            why = f"{type(e).__name__}: {e.problem} at line {mark.line + 2}"  # a file line: 1-based, after "---"
        else:
            why = _why(e)
        return text, _FM_KEPT.format(f"YAML error: {why}")
    if meta is None:  # an empty block ("---\n---"): front matter with nothing in it
        meta = {}
    if not isinstance(meta, dict):
        return text, _FM_KEPT.format(f"YAML {type(meta).__name__}, not a mapping")
    title = meta.get("title")
    ok = isinstance(title, (str, int, float, dt.date)) and not isinstance(title, bool)
    title = _one_line(str(title)) if ok else ""
    block = text[:end]
    blank = re.sub(r"[^\r\n]", " ", block)  # keeps every line break: whitespace-only lines
    if not title:
        return blank + text[end:], "front matter without a title: excluded"
    # A BOM before "#" would hide the heading from the fragmenter: it becomes a space (its width).
    lead = " " if block.startswith("\ufeff") else ""
    title = title[: len(block) - len(lead) - 3]  # room for "# " and "\n": a pathological title is cut
    heading = f"{lead}# {title}\n"
    return heading + blank[len(heading) :] + text[end:], "front matter: title taken as the document title"


# --------------------------------------------------------------------------- html

_HTML_SKIP = {"script", "style", "noscript", "template", "head"}
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
            self.row.append(_one_line("".join(self.cell)))
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
        return _table_lines(self.rows, header)


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

    # -- blocks
    def _flush(self) -> None:
        raw, self.buf = "".join(self.buf), []
        kind = self.stack[-1] if self.stack else ""
        if "pre" in self.stack:
            text = _block(raw.strip("\n"))  # keep the layout, but no blank line inside
        else:
            text = _one_line(raw)
        if not text:
            return
        if kind in _HTML_HEADINGS:
            self.has_h1 |= kind == "h1"
            text = "#" * _HTML_HEADINGS[kind] + " " + _one_line(text)
        elif kind == "li":
            text = "- " + text
        self.blocks.append(text)

    def _cell(self) -> list[str] | None:
        return self.tables[-1].cell if self.tables else None

    # -- parser callbacks
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
        if tag == "a" and "headerlink" in (dict(attrs).get("class") or ""):
            self.skip.append("a")  # Sphinx's "¶" permalink inside every heading
            return
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

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title_buf is not None:  # the first wins (SVGs have titles too)
            self.title = self.title or _one_line("".join(self.title_buf))
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
                pass

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
        if self.title and not self.has_h1:
            return ["# " + self.title, *self.blocks]
        return self.blocks


def _load_html(data: bytes, p: CorpusParams) -> _Text:
    text, note = _decode(data, p)
    parser = _HtmlText()
    parser.feed(text)
    return _Text([(None, "\n\n".join(parser.result()))], note=note, empty="no visible text in the HTML")


# --------------------------------------------------------------------------- csv


@contextlib.contextmanager
def _csv_field_limit(n: int) -> Iterator[None]:
    old = csv.field_size_limit(n)
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _load_csv(data: bytes, p: CorpusParams) -> _Text:
    text, note = _decode(data, p)
    try:
        dialect = csv.Sniffer().sniff(text[:16384], delimiters=",;\t|")
    except csv.Error:  # one column, or nothing to go on: plain comma-separated
        dialect = csv.excel
    header: list[str] | None = None
    lines: list[str] = []
    size = 0
    # a cell may be as long as the text bound allows (the csv module's default stops at 128 KiB)
    with _csv_field_limit(max(p.max_doc_chars, csv.field_size_limit())):
        for row in csv.reader(io.StringIO(text, newline=""), dialect):
            cells = [_one_line(c) for c in row]
            if not any(cells):  # a blank line is not a record
                continue
            if header is None:
                header = cells
                continue
            line = _row_line(f"Row {len(lines) + 1}", cells, header)
            lines.append(line or "")
            size += len(lines[-1]) + 1
            if size > p.max_doc_chars:
                raise _Stop("too_large", f"text is over max_doc_chars={p.max_doc_chars:,} after {len(lines):,} rows")
    if header is not None and not lines:  # a single record: nothing to name its columns by
        lines = [_row_line("Row 1", header) or ""]
        note = _notes(note, "one row only, read as data without a header")
    return _Text([(None, "\n".join(lines))], note=note, empty="no non-empty rows")


# --------------------------------------------------------------------------- json, jsonl

# Keys printed bare in a path; anything else (dots, brackets, "=", edge spaces) is JSON-quoted.
_BARE_KEY = re.compile(r'[^\s.\[\]="](?:[^\r\n.\[\]="]*[^\s.\[\]="])?')


class _TooDeep(Exception):
    pass


def _key_path(path: str, key: str) -> str:
    if _BARE_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _leaf(v: object) -> str:
    return _one_line(v) if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _flatten_json(value: object, prefix: str, p: CorpusParams, out: list[str], size: int = 0) -> int:
    """One `path = value` line per leaf, iteratively (no recursion limit); returns the text size.

    Nesting is bounded by json_max_depth; the text by max_doc_chars, checked as it grows because
    every leaf repeats its whole path and so the text can far outgrow the file.
    """
    stack: list[tuple[str, object, int]] = [(prefix, value, 0)]
    while stack:
        path, v, depth = stack.pop()
        if isinstance(v, (dict, list)) and depth >= p.json_max_depth:
            raise _TooDeep(f"JSON nested deeper than {p.json_max_depth}")
        if isinstance(v, dict) and v:
            stack.extend(reversed([(_key_path(path, str(k)), x, depth + 1) for k, x in v.items()]))
        elif isinstance(v, list) and v:
            stack.extend(reversed([(f"{path}[{i}]", x, depth + 1) for i, x in enumerate(v)]))
        else:
            out.append(f"{path} = {_leaf(v)}".rstrip() if path else _leaf(v))
            size += len(out[-1]) + 1
            if size > p.max_doc_chars:
                limit = f"max_doc_chars={p.max_doc_chars:,}"
                raise _Stop("too_large", f"text is over {limit} after {len(out):,} JSON values")
    return size


def _parse_json(text: str, max_depth: int) -> object:
    try:
        return json.loads(text)
    except RecursionError:  # the C parser recurses once per level: ~100,000 "[" exhaust it
        raise _TooDeep(f"JSON nested deeper than {max_depth} (the parser hit Python's recursion limit)") from None


def _load_json(data: bytes, p: CorpusParams) -> _Text:
    text, note = _decode(data, p)
    out: list[str] = []
    try:
        _flatten_json(_parse_json(text, p.json_max_depth), "", p, out)
    except _TooDeep as e:
        raise _Stop("error", str(e)) from None
    except ValueError as e:
        raise _Stop("error", f"json parse failed: {_why(e)}") from None
    return _Text([(None, "\n".join(out))], note=note, empty="JSON holds no values")


def _load_jsonl(data: bytes, p: CorpusParams) -> _Text:
    text, note = _decode(data, p)
    out: list[str] = []
    n_lines, bad, size = 0, [], 0
    for i, raw in enumerate(text.split("\n")):  # not splitlines: U+2028 is legal inside JSON strings
        if not raw.strip():
            continue
        n_lines += 1
        try:
            lines: list[str] = []
            size = _flatten_json(_parse_json(raw, p.json_max_depth), f"[{i}]", p, lines, size)
            out.extend(lines)
        except (ValueError, _TooDeep) as e:
            bad.append(f"line {i + 1}: {e if isinstance(e, _TooDeep) else _why(e)}")
    if bad and len(bad) == n_lines:
        raise _Stop("error", f"none of {n_lines:,} lines is valid JSON (first: {bad[0]})")
    if bad:
        note = _notes(note, f"{len(bad):,} of {n_lines:,} lines are not valid JSON, skipped (first: {bad[0]})")
    return _Text([(None, "\n".join(out))], note=note, empty="no JSON lines")


# --------------------------------------------------------------------------- pdf


def _load_pdf(data: bytes, p: CorpusParams) -> _Text:
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import DependencyError

    if not data:
        raise _Stop("error", "not a PDF: file is 0 bytes")
    if b"%PDF-" not in data[:1024]:  # readers accept junk before the header, but not 1 KiB of it
        raise _Stop("error", f"not a PDF: no %PDF- header in the first 1 KiB (starts with {data[:12]!r})")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)  # tries the empty password itself
        encrypted = reader.is_encrypted
    except DependencyError as e:
        raise _Stop("error", f"pdf decryption needs a missing package: {_why(e)}") from None
    except Exception as e:
        raise _Stop("error", f"pdf parse failed: {_why(e)}") from None
    note = ""
    if encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError as e:
            raise _Stop("error", f"pdf decryption needs a missing package: {_why(e)}") from None
        except NotImplementedError as e:
            raise _Stop("error", f"pdf encryption algorithm not supported: {_why(e)}") from None
        except Exception as e:
            raise _Stop("error", f"pdf decryption failed: {_why(e)}") from None
        if opened == PasswordType.NOT_DECRYPTED:
            raise _Stop("encrypted", "password required (the empty password does not open it)")
        note = "encrypted; opened with the empty password"
        if opened == PasswordType.OWNER_PASSWORD:  # pypdf tries the owner password first
            user_empty = _empty_is_user_password(reader)
            if user_empty is False:
                # Only the owner (permissions) password is empty; the author set a user password
                # to keep readers out, and reading through that gap would ignore it.
                raise _Stop("encrypted", "user password required (only the owner password is empty)")
            if user_empty is None:
                note = "encrypted; opened with the empty owner password (user password not checked)"
    try:
        n = len(reader.pages)
    except Exception as e:
        raise _Stop("error", f"pdf page tree unreadable: {_why(e)}") from None
    if n > p.max_pages:
        raise _Stop("too_large", f"{n:,} pages, over max_pages={p.max_pages:,}", n_pages=n)
    pages: list[Page] = []
    failed: list[str] = []
    size = 0
    for i in range(n):
        try:
            text = reader.pages[i].extract_text() or ""
        except DependencyError as e:  # AES streams are decrypted lazily, page by page
            raise _Stop("error", f"pdf decryption needs a missing package: {_why(e)}", n_pages=n) from None
        except Exception as e:  # one damaged page should not cost the others
            failed.append(f"page {i + 1}: {_why(e)}")
            text = ""
        pages.append((i + 1, text.strip()))
        size += len(pages[-1][1])
        if size > p.max_doc_chars:
            limit = f"max_doc_chars={p.max_doc_chars:,}"
            raise _Stop("too_large", f"text is over {limit} by page {i + 1} of {n}", n_pages=n)
    if failed and len(failed) == n:
        raise _Stop("error", f"pdf text extraction failed on all {n} pages (first: {failed[0]})", n_pages=n)
    if failed:
        note = _notes(note, f"text extraction failed on {len(failed)} of {n} pages (first: {failed[0]})")
    empty = "" if any(text for _, text in pages) else _pdf_empty_reason(reader, n)
    return _Text(pages, n, note, empty)


def _empty_is_user_password(reader) -> bool | None:
    """Whether "" is the user password (None if this pypdf's internals cannot tell us).

    pypdf's public decrypt() accepts the owner password too and tries it first, so an empty
    owner password hides whether a user password is set; this asks the user-password check alone.
    """
    try:
        from pypdf._encryption import AlgV4, AlgV5

        e = reader._encryption
        if e.V <= 4:
            key = AlgV4.verify_user_password(
                b"", e.R, e.Length, e.values.O, e.values.U, e.P, e.id1_entry, e.EncryptMetadata
            )
        else:
            key = AlgV5.verify_user_password(e.R, b"", e.values.U, e.values.UE)
        return bool(key)
    except Exception:
        return None


def _pdf_empty_reason(reader, n: int) -> str:
    if n == 0:
        return "PDF has 0 pages"
    try:
        with_images = sum(1 for page in reader.pages if len(page.images) > 0)
    except Exception:
        with_images = -1
    if with_images == 0:
        return f"no text on any of {n} pages, and no images either (blank or vector-drawn pages)"
    return f"no text layer on any of {n} pages (image-only PDF?)"


# --------------------------------------------------------------------------- office packages

_XML_PROLOG_MAX = 64 * 1024
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def _check_package(data: bytes, p: CorpusParams) -> None:
    """Vet an Office zip package before any parser inflates or parses it.

    The declared uncompressed sizes bound what Python's zipfile will inflate (it stops reading a
    member at its declared size), so checking them bounds the parsers' memory.
    """
    if not data:
        raise _Stop("error", "not a zip archive (file is 0 bytes)")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as e:
        if data.startswith(_OLE_MAGIC):
            # Password-protected OOXML is an OLE compound file holding an "EncryptionInfo" stream.
            if "EncryptionInfo".encode("utf-16-le") in data:
                raise _Stop("encrypted", "password-protected Office file (OLE container with EncryptionInfo)") from None
            raise _Stop("error", "not a zip archive (an OLE compound file: legacy binary Office format?)") from None
        raise _Stop("error", f"not a zip archive ({_why(e)}; starts with {data[:8]!r})") from None
    with zf:
        infos = zf.infolist()
        total = sum(i.file_size for i in infos)
        if total > p.max_zip_bytes:
            raise _Stop("too_large", f"zip expands to {total:,} bytes, over max_zip_bytes={p.max_zip_bytes:,}")
        ratio = total / len(data)
        if ratio > p.max_zip_ratio:
            raise _Stop(
                "too_large",
                f"zip compression ratio {ratio:,.0f}:1 ({total:,} bytes from {len(data):,}), "
                f"over max_zip_ratio={p.max_zip_ratio:g}",
            )
        names = {i.filename for i in infos}
        if "[Content_Types].xml" not in names:
            raise _Stop(
                "error", f"not an Office package: [Content_Types].xml missing from the zip ({len(names)} members)"
            )
        for info in infos:
            if info.filename.lower().endswith((".xml", ".rels")):
                _check_xml_prolog(zf, info)


def _check_xml_prolog(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Refuse DTDs: entity declarations are how "billion laughs" and external-entity attacks start.

    A DTD can only sit in the prolog, before the root element, so only the prolog is read: 2 KiB
    covers every real part; a prolog padded with comments past that is read on up to 64 KiB.
    """
    try:
        with zf.open(info) as fh:
            raw = fh.read(2048)
            while True:
                state = _prolog_state(_xml_head_text(raw))
                if state == "dtd" or re.search(rb"<!(DOCTYPE|ENTITY)", raw, re.I):
                    raise _Stop("error", f"XML entity declarations are not allowed ({info.filename})")
                more = fh.read(8192) if state == "more" and len(raw) < _XML_PROLOG_MAX else b""
                if not more:
                    break
                raw += more
    except _Stop:
        raise
    except Exception as e:
        raise _Stop("error", f"zip member {info.filename} unreadable: {_why(e)}") from None
    if state == "more" and len(raw) >= _XML_PROLOG_MAX:
        raise _Stop("error", f"XML prolog longer than {_XML_PROLOG_MAX // 1024} KiB ({info.filename})")


def _xml_head_text(raw: bytes) -> str:
    """Decode the start of an XML part well enough to read its markup (UTF-8/16/32)."""
    if raw[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff", b"<\x00\x00\x00", b"\x00\x00\x00<"):
        return raw.decode("utf-32-be" if raw[:1] == b"\x00" else "utf-32-le", errors="ignore")
    if raw[:2] in (codecs.BOM_UTF16_LE, b"<\x00"):
        return raw.decode("utf-16-le", errors="ignore")
    if raw[:2] in (codecs.BOM_UTF16_BE, b"\x00<"):
        return raw.decode("utf-16-be", errors="ignore")
    # UTF-8 (or an ASCII-compatible legacy encoding): markup is ASCII, other bytes do not matter
    return raw.removeprefix(codecs.BOM_UTF8).decode("latin-1")


def _prolog_state(text: str) -> str:
    """'dtd' if a declaration precedes the root element, 'ok' if none does, 'more' if undecided."""
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n\ufeff\ufffe":
            i += 1
        if n - i < 4:
            return "more"
        if text.startswith("<?", i):
            end = text.find("?>", i + 2)
            if end < 0:
                return "more"
            i = end + 2
        elif text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            if end < 0:
                return "more"
            i = end + 3
        elif text.startswith("<!", i):
            return "dtd"
        else:
            return "ok"  # the root element (or junk the XML parser will reject)


# --------------------------------------------------------------------------- docx

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.I)


def _load_docx(data: bytes, p: CorpusParams) -> _Text:
    _check_package(data, p)
    import docx

    document = docx.Document(io.BytesIO(data))
    blocks: list[str] = []
    _docx_blocks(document.element.body, document, blocks)
    return _Text([(None, "\n\n".join(blocks))], empty="no text in the document body")


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
        return "#" * level + " " + _one_line(text)
    style_name = (paragraph.style.name or "") if paragraph.style is not None else ""
    ppr = paragraph._p.pPr
    if "list" in style_name.lower() or (ppr is not None and ppr.numPr is not None):
        return "- " + _one_line(text)
    return _block(text)


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
            row.append(_one_line(text))
            row.extend([""] * (tc.grid_span - 1))  # a merged cell counted once
        rows.append(row)
    return _table_lines(rows, header=_docx_has_header(tbl))


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


# --------------------------------------------------------------------------- xlsx


def _load_xlsx(data: bytes, p: CorpusParams) -> _Text:
    _check_package(data, p)
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
    return _Text(pages, n, empty=f"no cell values in any of {n} sheets")


def _sheet_text(ws, budget: int, p: CorpusParams) -> str:
    # Read-only mode trusts the stored sheet dimension, which some writers get wrong: without
    # the reset, rows and columns past it would be silently dropped.
    ws.reset_dimensions()
    header: list[str] | None = None
    header_row = 0
    lines = [f"# {_one_line(ws.title)}"]
    size = 0
    for r, values in enumerate(ws.iter_rows(values_only=True), 1):  # r is the Excel row number
        cells = [_cell_text(v) for v in values]
        if not any(cells):
            continue
        if header is None:
            header, header_row = cells, r
            continue
        line = _row_line(f"Row {r}", cells, header) or ""
        lines.append(line)
        size += len(line) + 2
        if size > budget:
            raise _Stop("too_large", f"text is over max_doc_chars={p.max_doc_chars:,} (sheet {ws.title!r}, row {r:,})")
    if header is None:
        return ""  # a sheet without values is a blank page, not a page holding only its title
    if len(lines) == 1:  # a single row: nothing to name its columns by
        lines.append(_row_line(f"Row {header_row}", header) or "")
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
    return _one_line(str(v))


# --------------------------------------------------------------------------- pptx


def _load_pptx(data: bytes, p: CorpusParams) -> _Text:
    _check_package(data, p)
    from pptx import Presentation

    deck = Presentation(io.BytesIO(data))
    pages = [(i, "\n\n".join(_slide_blocks(slide))) for i, slide in enumerate(deck.slides, 1)]
    empty = f"no text on any of {len(pages)} slides" if pages else "presentation has 0 slides"
    return _Text(pages, len(pages), empty=empty)


def _slide_blocks(slide) -> list[str]:
    title = slide.shapes.title
    blocks: list[str] = []
    title_id = None
    if title is not None:
        title_id = title.shape_id
        text = _one_line(title.text_frame.text) if title.has_text_frame else ""
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
            text = _block(para.text.replace("\v", "\n"))  # python-pptx renders <a:br/> as "\v"
            if text:
                out.append(text)


def _pptx_table(table) -> list[str]:
    rows = [
        ["" if cell.is_spanned else _one_line(cell.text) for cell in row.cells]  # merged cell once
        for row in table.rows
    ]
    return _table_lines(rows, header=table.first_row)


# --------------------------------------------------------------------------- registry

_TEXT_FORMATS = {"txt", "md", "markdown", "html", "htm", "csv", "json", "jsonl"}
_LOADERS: dict[str, Callable[[bytes, CorpusParams], _Text]] = {
    "txt": _load_plain,
    "md": _load_markdown,
    "markdown": _load_markdown,
    "html": _load_html,
    "htm": _load_html,
    "csv": _load_csv,
    "json": _load_json,
    "jsonl": _load_jsonl,
    "pdf": _load_pdf,
    "docx": _load_docx,
    "xlsx": _load_xlsx,
    "xlsm": _load_xlsx,
    "xltx": _load_xlsx,
    "xltm": _load_xlsx,
    "pptx": _load_pptx,
}

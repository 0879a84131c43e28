"""What every loader shares: the `Loaded` result and its statuses, the `Text` a format extracts,
`Stop` to end a load with a definite status, one-line reasons, quiet libraries, the canonical
table-row and block text, and sniffing text bytes (byte-order marks, encodings, control characters).
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import re
import warnings
from dataclasses import dataclass, field
from typing import Iterator

from ...params import CorpusParams

STATUSES = ("loaded", "empty", "encrypted", "too_large", "unsupported", "error")

Page = tuple[int | None, str]
# A heading the file's layout shows (a PDF's outline or fonts): (index of its page in `pages`,
# start and end offsets in that page's text, level 1-6, source: "outline" or "font").
Heading = tuple[int, int, int, int, str]


@dataclass(frozen=True)
class Loaded:
    status: str  # one of STATUSES
    reason: str  # one line; "" only when status is "loaded" and nothing is worth saying
    pages: list[Page]  # (page number, text); page is None for pageless formats
    n_pages: int | None  # pdf pages, pptx slides, xlsx sheets; None for pageless formats
    headings: list[Heading] = field(default_factory=list)


@dataclass
class Text:
    """What a format loader extracted, before the checks every format shares."""

    pages: list[Page]
    n_pages: int | None = None
    note: str = ""  # reason to report when the document loads
    empty: str = "no text"  # reason to report when every page is blank
    headings: list[Heading] = field(default_factory=list)


class Stop(Exception):
    """Ends a load early with a definite status and reason (raised from any depth)."""

    def __init__(self, status: str, reason: str, n_pages: int | None = None):
        super().__init__(reason)
        self.status, self.reason, self.n_pages = status, reason, n_pages


def as_loaded(
    status: str, reason: str, pages: list[Page] | None = None, n_pages: int | None = None, headings: list[Heading] | None = None
) -> Loaded:
    assert status in STATUSES
    # Reasons land in one inventory cell: one line, bounded length.
    return Loaded(status, " ".join(reason.split())[:500], pages or [], n_pages, headings or [])


def join_notes(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


# an object's repr in a library's message ("file '<_io.BytesIO object at 0x7fba842edad0>' is not a
# Word file"): its address differs from run to run, and a reason is part of the inventory's bytes
_OBJECT_REPR = re.compile(r"<([\w.]+) object at 0x[0-9a-fA-F]+>")


def error_reason(e: BaseException) -> str:
    """`ExceptionType: first line of its message`, an object's address left out."""
    lines = _OBJECT_REPR.sub(r"<\1>", str(e)).strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:300]}" if lines else type(e).__name__


# Library loggers that report recoverable damage as warnings; with no handler configured Python
# prints those to stderr, which a loader must not do. Raising the parent logger's level silences
# its children too (they inherit the effective level).
_NOISY_LOGGERS = ("pypdf", "openpyxl", "docx", "pptx", "PIL")


@contextlib.contextmanager
def quiet_libraries() -> Iterator[None]:
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


def one_line(s: str) -> str:
    """Collapse all whitespace (newlines, tabs, NBSP) to single spaces: headings, cells, leaves."""
    return " ".join(s.split())


def block_text(s: str) -> str:
    """A paragraph keeps its soft line breaks but may not contain a blank line (a block break)."""
    lines = [line.rstrip() for line in s.strip().splitlines()]
    return "\n".join(line for line in lines if line.strip())


def row_line(label: str, values: list[str], names: list[str] | None = None) -> str | None:
    """`<label>: name = value; ...` over the non-empty values, or None if the row is empty."""
    names = names or []
    parts = [f"{names[k] if k < len(names) and names[k] else f'col{k + 1}'} = {v}" for k, v in enumerate(values) if v]
    return f"{label}: " + "; ".join(parts) if parts else None


# what `row_line` writes for a table's row, read back (ask answers a row by the column a question names)
ROW_LABEL = r"(?m)^\s*Row \d+:"
_ROW = re.compile(r"^\s*Row \d+: (.*)$", re.S)


def row_fields(line: str) -> list[tuple[str, str]] | None:
    """The (name, value) fields of a line `row_line` wrote ("Row 17: version = 12; codename =
    Bookworm"), or None for any other line."""
    row = _ROW.match(line)
    fields = [f.partition(" = ") for f in row.group(1).split("; ")] if row else []
    if not fields or any(not eq for _, eq, _ in fields):
        return None
    return [(name, value.strip()) for name, _, value in fields]


def table_lines(rows: list[list[str]], header: bool) -> list[str]:
    """Row lines for a table given as rows of one-line cell texts; empty rows are not numbered.

    A header row names the columns only if some row below it has content: otherwise (a one-row
    table, or an empty grid under a caption) its text would vanish, so it is read as data.
    """
    rows = [row for row in rows if any(row)]
    names = rows[0] if header and len(rows) > 1 else None
    lines = []
    for row in rows[1:] if names else rows:
        line = row_line(f"Row {len(lines) + 1}", row, names)
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


def decode_text(data: bytes, p: CorpusParams, keep_bom: bool = False) -> tuple[str, str]:
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
            check_controls(text, 0, p)
            return text, note
    if b"\x00" in data:
        raise Stop("unsupported", f"binary content in a text file ({data.count(0):,} NUL bytes)")
    try:
        text, n_bad = data.decode("utf-8"), 0
    except UnicodeDecodeError:
        escaped = data.decode("utf-8", errors="surrogateescape")
        n_bad = len(_ESCAPED_BYTE.findall(escaped))
        check_controls(escaped, n_bad, p)
        text = data.decode("utf-8", errors="replace")
    else:
        check_controls(text, 0, p)
    if not keep_bom:
        text = text.removeprefix("\ufeff")  # a UTF-8 BOM would break json and csv headers
    note = f"not valid UTF-8: {n_bad:,} undecodable bytes replaced with U+FFFD" if n_bad else ""
    return text, note


def check_controls(text: str, n_bad: int, p: CorpusParams) -> None:
    n_control = len(_CONTROL.findall(text))
    share = (n_bad + n_control) / max(1, len(text))
    if share > p.binary_ratio:
        raise Stop(
            "unsupported",
            f"binary content in a text file ({n_bad:,} undecodable bytes and {n_control:,} control "
            f"characters in {len(text):,} characters: {share:.0%}, over binary_ratio={p.binary_ratio:g})",
        )

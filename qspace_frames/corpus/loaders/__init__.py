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
  named by the header row when there is one, else ``col<k>`` (k counts from 1)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...params import CorpusParams
from .base import (
    STATUSES,
    Loaded,
    Stop,
    Text,
    as_loaded,
    error_reason,
    join_notes,
    quiet_libraries,
)
from .html import load_html
from .pdf import load_pdf
from .plain import load_markdown, load_plain
from .records import load_csv, load_json, load_jsonl
from .slides import load_pptx
from .spreadsheet import load_xlsx
from .word import load_docx

__all__ = ["FORMATS", "STATUSES", "Format", "Loaded", "load_file"]


@dataclass(frozen=True)
class Format:
    """One row of the format registry: everything the project knows about a file extension."""

    loader: str  # the loader's name in the inventory
    read: Callable[[bytes, CorpusParams], Text]
    text: bool  # a text format: a 0-byte file is "empty" (a 0-byte PDF is broken)
    in_process: bool  # cheaper to read in the run's own process than to ship to a pool worker


FORMATS: dict[str, Format] = {
    "txt": Format("text", load_plain, text=True, in_process=True),
    "md": Format("markdown", load_markdown, text=True, in_process=True),
    "markdown": Format("markdown", load_markdown, text=True, in_process=True),
    "html": Format("html", load_html, text=True, in_process=False),
    "htm": Format("html", load_html, text=True, in_process=False),
    "csv": Format("csv", load_csv, text=True, in_process=True),
    "json": Format("json", load_json, text=True, in_process=True),
    "jsonl": Format("jsonl", load_jsonl, text=True, in_process=True),
    "pdf": Format("pdf", load_pdf, text=False, in_process=False),
    "docx": Format("docx", load_docx, text=False, in_process=False),
    "xlsx": Format("xlsx", load_xlsx, text=False, in_process=False),
    "xlsm": Format("xlsx", load_xlsx, text=False, in_process=False),
    "xltx": Format("xlsx", load_xlsx, text=False, in_process=False),
    "xltm": Format("xlsx", load_xlsx, text=False, in_process=False),
    "pptx": Format("pptx", load_pptx, text=False, in_process=False),
}


def load_file(path: Path, ext: str, p: CorpusParams) -> Loaded:
    """Load one file into canonical text pages. Never raises, never prints."""
    ext = ext.lower().lstrip(".")
    try:
        with quiet_libraries():
            return _load(Path(path), ext, p)
    except Exception as e:  # a bug in this module must still not stop a run
        return as_loaded("error", f"{ext} loader failed: {error_reason(e)}")


def _load(path: Path, ext: str, p: CorpusParams) -> Loaded:
    fmt = FORMATS.get(ext)
    if fmt is None:
        return as_loaded("unsupported", f"no loader for .{ext}" if ext else "no loader for files without an extension")
    try:
        size = path.stat().st_size
    except OSError as e:
        return as_loaded("error", f"cannot stat: {error_reason(e)}")
    if size > p.max_file_bytes:  # checked before reading a byte of it
        return as_loaded("too_large", f"file is {size:,} bytes, over max_file_bytes={p.max_file_bytes:,}")
    try:
        data = path.read_bytes()
    except OSError as e:
        return as_loaded("error", f"cannot read: {error_reason(e)}")
    if not data and fmt.text:  # an empty text file is empty; an empty PDF is broken
        return as_loaded("empty", "file is 0 bytes")
    try:
        doc = fmt.read(data, p)
    except Stop as s:
        return as_loaded(s.status, s.reason, n_pages=s.n_pages)
    except Exception as e:
        return as_loaded("error", f"{ext} parse failed: {error_reason(e)}")
    return _finish(doc, p)


_SURROGATE = re.compile(r"[\ud800-\udfff]")  # not encodable as UTF-8 (Parquet, CSV, the terminal)


def _finish(doc: Text, p: CorpusParams) -> Loaded:
    n_lone = sum(len(_SURROGATE.findall(text)) for _, text in doc.pages)
    if n_lone:  # e.g. a JSON "\ud800" escape: one character each, so offsets are unchanged
        doc.pages = [(page, _SURROGATE.sub("\ufffd", text)) for page, text in doc.pages]
        doc.note = join_notes(doc.note, f"{n_lone:,} lone surrogate code points replaced with U+FFFD")
    if not any(text.strip() for _, text in doc.pages):
        return as_loaded("empty", doc.empty, n_pages=doc.n_pages)
    total = sum(len(text) for _, text in doc.pages)
    if total > p.max_doc_chars:
        return as_loaded("too_large", f"text is {total:,} characters, over max_doc_chars={p.max_doc_chars:,}", n_pages=doc.n_pages)
    return as_loaded("loaded", doc.note, doc.pages, doc.n_pages, doc.headings)

"""Stage 2: document loading, the one place that reads raw files.

Each discovered file goes through its format's loader (see `loaders.py`) and comes out as pages
of canonical text plus a status and a one-line reason. The canonical document text is the
pages joined by PAGE_SEP; every later offset is a code-point offset into it.
"""
from __future__ import annotations

import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import polars as pl

from .loaders import Loaded, load_file
from .params import CorpusParams
from .schemas import PAGES

PAGE_SEP = "\n\n"

LOADERS = {
    "txt": "text", "md": "markdown", "markdown": "markdown", "html": "html", "htm": "html",
    "csv": "csv", "json": "json", "jsonl": "jsonl", "pdf": "pdf", "docx": "docx",
    "xlsx": "xlsx", "xlsm": "xlsx", "xltx": "xlsx", "xltm": "xlsx", "pptx": "pptx",
}

LOADED = {
    "path": pl.String, "loader": pl.String, "load_status": pl.String, "error": pl.String,
    "n_pages": pl.Int64, "n_chars": pl.Int64, "duplicate_of": pl.String,
}


def _escape(path: str) -> str:
    """A path inside a one-line reason: control characters (a newline in a file name) escaped."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], path)


def _load_one(args: tuple[str, str, str, CorpusParams]) -> Loaded:
    root, rel, ext, p = args
    return load_file(Path(root) / rel, ext, p)


def load_documents(files: pl.DataFrame, root: str | Path, p: CorpusParams, workers: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Load every discovered file. Returns (per-file status frame, pages frame).

    Files with identical bytes share a doc_id: the first path (in sorted order) is loaded and
    the others are recorded as duplicates of it, so every file stays accounted for. Empty files
    are the exception: each is judged by its own format (an empty .txt is `empty`, an empty .pdf
    an `error`), never reported as a duplicate of an unrelated empty file.
    """
    files = files.sort("path")
    first_path: dict[str, str] = {}
    jobs, status_rows = [], []
    for r in files.iter_rows(named=True):
        loader = LOADERS.get(r["ext"]) if r["ext"] in p.extensions else None
        base = {"path": r["path"], "loader": loader, "n_pages": None, "n_chars": None, "duplicate_of": None}
        if r["discover_error"]:
            status_rows.append({**base, "load_status": "error", "error": r["discover_error"]})
        elif loader is None:
            status_rows.append({**base, "load_status": "unsupported", "error": f"no loader for .{r['ext'] or '(no extension)'}"})
        elif r["sha256"] in first_path:
            dup = first_path[r["sha256"]]
            status_rows.append({**base, "load_status": "duplicate", "error": f"same bytes as {_escape(dup)}", "duplicate_of": dup})
        else:
            if r["bytes"]:  # 0-byte files share no content: each gets its own format's verdict
                first_path[r["sha256"]] = r["path"]
            jobs.append(r)
    args = [(str(root), r["path"], r["ext"], p) for r in jobs]
    if workers > 1 and len(args) > 1:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            results = list(ex.map(_load_one, args, chunksize=1))
    else:
        results = [_load_one(a) for a in args]
    page_rows = []
    for r, res in zip(jobs, results):
        n_chars = None
        if res.status == "loaded":
            pos = 0
            for i, (page, text) in enumerate(res.pages):
                if i:
                    pos += len(PAGE_SEP)
                page_rows.append({"doc_id": r["doc_id"], "page": page, "char_start": pos, "text": text})
                pos += len(text)
            n_chars = pos
        status_rows.append({"path": r["path"], "loader": LOADERS[r["ext"]], "load_status": res.status,
                            "error": res.reason or None, "n_pages": res.n_pages, "n_chars": n_chars, "duplicate_of": None})
    loaded = pl.DataFrame(status_rows, schema=LOADED).sort("path")
    pages = (pl.DataFrame(page_rows, schema=PAGES) if page_rows else pl.DataFrame(schema=PAGES)).sort(["doc_id", "char_start"])
    return loaded, pages


def document_text(pages: pl.LazyFrame) -> pl.LazyFrame:
    """The canonical text of each document: its pages joined by PAGE_SEP."""
    return pages.sort(["doc_id", "char_start"]).group_by("doc_id", maintain_order=True).agg(
        pl.col("text").str.join(PAGE_SEP).alias("doc_text")
    )

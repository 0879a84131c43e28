"""Stage 2: document loading, the one place that reads raw files.

Each discovered file goes through its format's loader (see `loaders.py`) and comes out as pages
of canonical text plus a status and a one-line reason. The canonical document text is the
pages joined by PAGE_SEP; every later offset is a code-point offset into it.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from ..params import CorpusParams
from ..schemas import LAYOUT_HEADING, PAGES
from .loaders import FORMATS, Loaded, load_file

PAGE_SEP = "\n\n"

LOADED = {
    "path": pl.String,
    "loader": pl.String,
    "load_status": pl.String,
    "error": pl.String,
    "n_pages": pl.Int64,
    "n_chars": pl.Int64,
    "duplicate_of": pl.String,
}


def _escape(path: str) -> str:
    """A path inside a one-line reason: control characters (a newline in a file name) escaped."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], path)


def load_one(args: tuple[str, str, str, CorpusParams]) -> Loaded:
    root, rel, ext, p = args
    return load_file(Path(root) / rel, ext, p)


_EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # sha256(b"")


def plan_loads(files: pl.DataFrame, p: CorpusParams) -> tuple[pl.DataFrame, list[dict]]:
    """Which files to load (one per distinct content, the first path in sorted order) and the
    status rows of the others: discovery errors, unsupported types and duplicates. Empty files
    are the exception: each is judged by its own format (an empty .txt is `empty`, an empty .pdf
    an `error`), never reported as a duplicate of an unrelated empty file."""
    files = files.sort("path")
    first_path: dict[str, str] = {}
    keep, status_rows = [], []
    for i, r in enumerate(files.select("path", "ext", "sha256", "discover_error").iter_rows()):
        path, ext, sha, err = r
        loader = FORMATS[ext].loader if ext in FORMATS and ext in p.extensions else None
        base = {"path": path, "loader": loader, "n_pages": None, "n_chars": None, "duplicate_of": None}
        if err:
            status_rows.append({**base, "load_status": "error", "error": err})
        elif loader is None:
            status_rows.append({**base, "load_status": "unsupported", "error": f"no loader for .{ext or '(no extension)'}"})
        elif sha in first_path:
            dup = first_path[sha]
            status_rows.append({**base, "load_status": "duplicate", "error": f"same bytes as {_escape(dup)}", "duplicate_of": dup})
        else:
            if sha != _EMPTY_SHA256:  # 0-byte files share no content: each gets its own format's verdict
                first_path[sha] = path
            keep.append(i)
    # loaded in doc_id order, so the pages come out sorted as they are stored (no sort of the whole text)
    return files[keep].select("doc_id", "path", "ext").sort("doc_id", "path"), status_rows


LOADED_DOC = {
    "doc_id": pl.String,
    "path": pl.String,
    "loader": pl.String,
    "load_status": pl.String,
    "error": pl.String,
    "n_pages": pl.Int64,
    "n_chars": pl.Int64,
    "pages": pl.List(pl.Struct({"page": pl.Int64, "char_start": pl.Int64, "text": pl.String, "headings": pl.List(LAYOUT_HEADING)})),
}


def loaded_docs(jobs: list[tuple[str, str, str]], results: list[Loaded]) -> pl.DataFrame:
    """One row per loaded file (schema LOADED_DOC), its pages nested with their offsets into the
    canonical text. `jobs` are (doc_id, path, ext)."""
    rows = []
    for (did, path, ext), res in zip(jobs, results):
        n_chars, pages = None, []
        if res.status == "loaded":
            pos = 0
            marks: dict[int, list[dict]] = {}
            for i, start, end, level, source in res.headings:
                marks.setdefault(i, []).append({"start": start, "end": end, "level": level, "source": source})
            for i, (page, text) in enumerate(res.pages):
                if i:
                    pos += len(PAGE_SEP)
                pages.append({"page": page, "char_start": pos, "text": text, "headings": marks.get(i, [])})
                pos += len(text)
            n_chars = pos
        rows.append(
            {
                "doc_id": did,
                "path": path,
                "loader": FORMATS[ext].loader,
                "load_status": res.status,
                "error": res.reason or None,
                "n_pages": res.n_pages,
                "n_chars": n_chars,
                "pages": pages,
            }
        )
    return pl.DataFrame(rows, schema=LOADED_DOC) if rows else pl.DataFrame(schema=LOADED_DOC)


def load_shard(jobs: pl.DataFrame, root: str, p: CorpusParams) -> pl.DataFrame:
    """Load a shard of files (doc_id, path, ext): the per-document unit of the corpus stage."""
    keys = list(jobs.select("doc_id", "path", "ext").iter_rows())
    return loaded_docs(keys, [load_one((root, path, ext, p)) for _, path, ext in keys])


def loaded_status(docs: pl.DataFrame) -> pl.DataFrame:
    """The per-file status rows (schema LOADED) of loaded documents."""
    return docs.select(pl.col(c).cast(t) if c != "duplicate_of" else pl.lit(None, pl.String).alias(c) for c, t in LOADED.items())


def docs_pages(docs: pl.DataFrame) -> pl.DataFrame:
    """The pages (schema PAGES) of loaded documents, sorted by document and offset."""
    pages = docs.select("doc_id", "pages").explode("pages").filter(pl.col("pages").is_not_null()).unnest("pages")
    pages = pages.select([pl.col(c).cast(t) for c, t in PAGES.items()])
    if not (pages["doc_id"].is_sorted() and pages.select((pl.col("char_start").diff().over("doc_id").fill_null(1) > 0).all()).item()):
        pages = pages.sort(["doc_id", "char_start"])
    return pages


def status_frame(status_rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(status_rows, schema=LOADED) if status_rows else pl.DataFrame(schema=LOADED)


def split_loaded(docs: pl.DataFrame, status_rows: list[dict]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per-file status frame, pages frame) from the loaded documents and the other files' statuses."""
    loaded = pl.concat([status_frame(status_rows), loaded_status(docs)]).sort("path")
    return loaded, docs_pages(docs).rechunk()


def document_text(pages: pl.LazyFrame) -> pl.LazyFrame:
    """The canonical text of each document: its pages joined by PAGE_SEP."""
    return (
        pages.sort(["doc_id", "char_start"])
        .group_by("doc_id", maintain_order=True)
        .agg(pl.col("text").str.join(PAGE_SEP).alias("doc_text"))
    )

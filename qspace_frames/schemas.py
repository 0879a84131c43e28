"""Declared schemas of every frame, in one place. Tests check stage outputs against them."""

from __future__ import annotations

import polars as pl

FILES = {
    "path": pl.String,  # relative to the corpus root, '/'-separated
    "ext": pl.String,
    "bytes": pl.Int64,
    "sha256": pl.String,
    "doc_id": pl.String,
    "discover_error": pl.String,  # why the file could not be read at discovery (null when fine)
}

INVENTORY = {
    "doc_id": pl.String,
    "path": pl.String,
    "ext": pl.String,
    "bytes": pl.Int64,
    "sha256": pl.String,
    "loader": pl.String,
    "load_status": pl.String,
    "error": pl.String,
    "n_pages": pl.Int64,
    "n_chars": pl.Int64,
    "duplicate_of": pl.String,
    "domain_hints": pl.List(pl.String),
}

# a heading the file's layout shows on the page (`structure.headings`): offsets into the page's text
LAYOUT_HEADING = pl.Struct({"start": pl.Int64, "end": pl.Int64, "level": pl.Int64, "source": pl.String})

PAGES = {
    "doc_id": pl.String,
    "page": pl.Int64,
    "char_start": pl.Int64,
    "text": pl.String,
    "headings": pl.List(LAYOUT_HEADING),
}

FRAGMENT_KINDS = ("section", "paragraph", "list_item", "table_row", "sentence_window")

FRAGMENTS = {
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "parent_id": pl.String,
    "kind": pl.String,
    "level": pl.Int64,
    "heading_path": pl.List(pl.String),
    "page": pl.Int64,
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "text": pl.String,
    "n_tokens": pl.Int64,
}


def conform(df: pl.DataFrame | pl.LazyFrame, schema: dict) -> pl.DataFrame | pl.LazyFrame:
    """Select exactly the declared columns, in order, cast to their declared types."""
    return df.select([pl.col(c).cast(t) for c, t in schema.items()])


def check(df: pl.DataFrame, schema: dict) -> None:
    got = dict(df.schema)
    if list(got) != list(schema) or any(got[k] != v for k, v in schema.items()):
        raise AssertionError(f"schema mismatch: expected {schema}, got {got}")

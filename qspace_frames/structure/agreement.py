"""How far two versions of one document (a PDF and its HTML, a .txt and its PDF) agree on where each
sentence sits: the measure behind the structure targets.

Versions are found by name: files with the same stem in different formats ("policy.pdf",
"policy.txt"), the chapters of a folder named like a file ("policy.html/ch-*.html") counting as one
version. The reference is the version whose format carries its headings as markup (HTML, then
Markdown, DOCX, plain text, PDF). A sentence is compared when it occurs exactly once in each
version (matched on its letters and digits alone, so line breaks and hyphenation aside); it
agrees when both file it under the same innermost section title, compared without numbering
("3.2.1.", "Chapter 4", "Appendix B") and case.
"""

from __future__ import annotations

import polars as pl

from ..exprs import LOADED_ROW
from ..fragments import SENTENCE

MIN_SENTENCE_CHARS = 25  # letters and digits: shorter sentences ("See below.") recur and say little
REFERENCE_ORDER = {"html": 0, "markdown": 1, "docx": 2, "text": 3, "pdf": 4}

_key = lambda e: e.str.to_lowercase().str.replace_all(r"[^0-9a-z]", "")  # noqa: E731
_NUMBERING = r"(?i)^\s*(?:(?:chapter|appendix|section|article|part)\s+)?(?:[0-9A-Z]{1,3}(?:\.\d+)*\.?|[IVXLC]+\.)\s+"
title_key = lambda e: _key(e.str.replace(_NUMBERING, ""))  # noqa: E731


def versions(inventory: pl.DataFrame) -> pl.DataFrame:
    """(document, version, doc_id, loader) of every loaded document that exists in two formats or more."""
    path = pl.col("path")
    # "a/policy.html/ch-1.html" -> "a/policy"; "a/fhs-3.0.pdf" -> "a/fhs-3.0"; "pdf/x.pdf" and "txt/x.txt" -> "x"
    folder_version = path.str.extract(r"^(.*?)\.[A-Za-z]{2,5}/[^/]+$", 1)
    stem = pl.coalesce(folder_version, path.str.replace(r"\.[^./]+$", "")).str.replace(r"^.*/", "")
    loaded = inventory.filter(LOADED_ROW).select(stem.alias("document"), pl.col("loader").alias("version"), "doc_id", "loader")
    many = loaded.group_by("document").agg(pl.col("version").n_unique().alias("_n")).filter(pl.col("_n") >= 2)
    return loaded.join(many.select("document"), on="document").sort("document", "version", "doc_id")


def sentence_sections(fragments: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """(doc_id, key, title, path) of every sentence of the non-section fragments: its matching key,
    its innermost section title and its heading path, both as compared."""
    return (
        fragments.lazy()
        .filter(pl.col("kind") != "section")
        .select("doc_id", "heading_path", pl.col("text").str.extract_all(SENTENCE).alias("sentence"))
        .explode("sentence")
        .select(
            "doc_id",
            _key(pl.col("sentence")).alias("key"),
            title_key(pl.col("heading_path").list.last().fill_null("")).alias("title"),
            pl.col("heading_path").list.eval(title_key(pl.element())).list.join("/").alias("path"),
        )
        .filter(pl.col("key").str.len_chars() >= MIN_SENTENCE_CHARS)
    )


def agreement(fragments: pl.DataFrame | pl.LazyFrame, inventory: pl.DataFrame) -> pl.DataFrame:
    """Per document and version compared with its reference: sentences found in both, the share
    filed under the same innermost section, and the share with the same whole heading path."""
    ver = versions(inventory)
    schema = {
        "document": pl.String,
        "version": pl.String,
        "reference": pl.String,
        "sentences": pl.UInt32,
        "same_section": pl.Float64,
        "same_path": pl.Float64,
    }
    if ver.is_empty():
        return pl.DataFrame(schema=schema)
    ranked = ver.with_columns(pl.col("version").replace_strict(REFERENCE_ORDER, default=9, return_dtype=pl.Int64).alias("_rank"))
    reference = (
        ranked.filter(pl.col("_rank") == pl.col("_rank").min().over("document"))
        .select("document", pl.col("version").alias("reference"))
        .unique(maintain_order=True)
    )
    sents = sentence_sections(fragments).join(ver.lazy().select("doc_id", "document", "version"), on="doc_id")
    once = sents.filter(pl.len().over("document", "version", "key") == 1)
    ref = once.join(reference.lazy(), left_on=["document", "version"], right_on=["document", "reference"])
    other = once.join(reference.lazy(), on="document").filter(pl.col("version") != pl.col("reference"))
    both = other.join(
        ref.select("document", "key", pl.col("title").alias("ref_title"), pl.col("path").alias("ref_path")), on=["document", "key"]
    )
    return (
        both.group_by("document", "version", "reference")
        .agg(
            pl.len().alias("sentences"),
            (pl.col("title") == pl.col("ref_title")).mean().alias("same_section"),
            (pl.col("path") == pl.col("ref_path")).mean().alias("same_path"),
        )
        .sort("document", "version")
        .collect()
        .select([pl.col(c).cast(t) for c, t in schema.items()])
    )

"""Checks the notebooks show: each a function of stored frames, so a library run can call it too."""
from __future__ import annotations

import polars as pl

DOCS_PER_STEP = 8  # documents checked at once (CUAD x1: 0.35 GB and 1.6 s; all at once: 10 GB)


def ungrounded(fragments: pl.DataFrame, docs: pl.DataFrame) -> pl.DataFrame:
    """The fragments whose text is not their document's text at their code-point offsets.

    `docs` holds (doc_id, doc_text). Joining every fragment with its whole document gives each
    fragment a copy of it (10 GB for the 510 CUAD contracts), so documents go a few at a time."""
    ids = docs["doc_id"].to_list()
    bad = []
    for i in range(0, len(ids), DOCS_PER_STEP):
        step = docs.filter(pl.col("doc_id").is_in(ids[i:i + DOCS_PER_STEP]))
        bad.append(
            fragments.join(step, on="doc_id")
            .filter(pl.col("doc_text").str.slice(pl.col("char_start"), pl.col("char_end") - pl.col("char_start")) != pl.col("text"))
            .select("fragment_id", "doc_id", "char_start", "char_end")
        )
    orphans = fragments.join(docs, on="doc_id", how="anti").select("fragment_id", "doc_id", "char_start", "char_end")
    return pl.concat([*bad, orphans]) if bad else orphans

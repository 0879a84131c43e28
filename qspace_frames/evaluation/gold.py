"""Gold questions: read strictly from JSONL, resolved against the corpus, or made (silver) from the
workbench's own validated affordances.

Gold JSONL, one object per line (extra keys are ignored, blank lines skipped):

    {"id": "q1", "question": "...", "document": "policy/x.md", "gold_spans": [[start, end], ...]}

`document` is the path relative to the corpus folder, '/'-separated, exactly as the inventory
records it; offsets are code-point offsets into that document's canonical (loaded) text, end
exclusive. `resolve_gold` ties each question to a loaded document and checks its spans against
that document's text; `read_gold` reads files on purpose (the reader of this stage, like the
loaders of stage 2), everything else takes frames and returns frames.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from ..exprs import LOADED_ROW, merge_intervals
from ..frames import as_lazy

SPAN = pl.Struct({"start": pl.Int64, "end": pl.Int64})

GOLD = {
    "id": pl.String,
    "question": pl.String,
    "document": pl.String,  # path relative to the corpus folder, as in inventory.path
    "gold_spans": pl.List(SPAN),  # code-point offsets into the document text, end exclusive
}

GOLD_STATUSES = ("ok", "unknown_document", "not_loaded", "span_out_of_range")

RESOLVED_GOLD = {
    **GOLD,
    "doc_id": pl.String,  # null when the document is not in the inventory
    "n_chars": pl.Int64,  # length of the document text; null when it has none
    "gold_chars": pl.Int64,  # characters covered by the gold spans, overlaps counted once
    "status": pl.String,  # one of GOLD_STATUSES; only "ok" rows are evaluated
    "reason": pl.String,  # why the status is not "ok" (null when it is)
}


def _empty_gold() -> pl.DataFrame:
    return pl.DataFrame(schema=GOLD)


# ---- reading gold -------------------------------------------------------------------------------

_I64_MAX = 2**63 - 1


class _Bad(Exception):
    def __init__(self, key: str, rule: str):
        super().__init__(rule)
        self.key, self.rule = key, rule


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)  # JSON true is not an offset


def _text_field(obj: dict, key: str) -> str:
    if key not in obj:
        raise _Bad(key, "missing required key")
    v = obj[key]
    if not isinstance(v, str) or not v.strip():
        raise _Bad(key, f"must be a non-empty string, got {json.dumps(v)[:60]}")
    return v


def _spans_field(obj: dict) -> list[dict]:
    if "gold_spans" not in obj:
        raise _Bad("gold_spans", "missing required key")
    v = obj["gold_spans"]
    if not isinstance(v, list) or not v:
        raise _Bad("gold_spans", "must be a non-empty list of [start, end] pairs")
    out = []
    for i, s in enumerate(v):
        key = f"gold_spans[{i}]"
        if not isinstance(s, list) or len(s) != 2 or not all(is_int(x) for x in s):
            raise _Bad(key, f"must be a [start, end] pair of integers, got {json.dumps(s)[:60]}")
        start, end = s
        if start < 0:
            raise _Bad(key, f"start must be >= 0, got {start}")
        if start >= end:
            raise _Bad(key, f"start must be < end, got [{start}, {end}]")
        if end > _I64_MAX:
            raise _Bad(key, f"end must fit in 64 bits, got {end}")
        out.append({"start": start, "end": end})
    return out


def _gold_record(line: str) -> dict:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise _Bad("<json>", f"invalid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(obj, dict):
        raise _Bad("<line>", f"must be a JSON object, got {type(obj).__name__}")
    rec = {k: _text_field(obj, k) for k in ("id", "question", "document")}
    doc = rec["document"]
    if doc.startswith("/") or "\\" in doc or any(part in ("", ".", "..") for part in doc.split("/")):
        # the inventory records clean relative '/'-separated paths; anything else can never match
        raise _Bad("document", f"must be a relative '/'-separated path without '.', '..' or empty parts, got {doc!r}")
    rec["gold_spans"] = _spans_field(obj)
    return rec


def read_gold(path: str | Path) -> pl.DataFrame:
    """Read a gold JSONL file strictly (schema GOLD, file order).

    The first bad line fails with `ValueError("<file>:<line>: <key>: <rule>")`.
    """
    path = Path(path)
    rows: list[dict] = []
    first_line: dict[str, int] = {}
    for n, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        try:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _Bad("<line>", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
            if not line.strip():
                continue
            rec = _gold_record(line)
            if rec["id"] in first_line:
                raise _Bad("id", f"duplicate id {rec['id']!r} (first on line {first_line[rec['id']]})")
        except _Bad as b:
            raise ValueError(f"{path}:{n}: {b.key}: {b.rule}") from None
        first_line[rec["id"]] = n
        rows.append(rec)
    return pl.DataFrame(rows, schema=GOLD) if rows else _empty_gold()


def _gold_intervals(gold: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """The merged gold character intervals of each question (columns: keys, start, end)."""
    spans = gold.select(*keys, "gold_spans").explode("gold_spans").drop_nulls("gold_spans").unnest("gold_spans")
    return merge_intervals(spans, keys)


# ---- resolving gold against the corpus ----------------------------------------------------------


def resolve_gold(
    gold: pl.DataFrame | pl.LazyFrame, inventory: pl.DataFrame | pl.LazyFrame, docs: pl.DataFrame | pl.LazyFrame
) -> pl.DataFrame:
    """Tie each gold question to its document (schema RESOLVED_GOLD, gold order).

    `docs` is `pages.document_text(pages)` (doc_id, doc_text). A question whose document is not
    in the inventory, has no loaded text, or has a span past the end of the text is kept with a
    status and reason saying which; only status "ok" rows are evaluated. A duplicate file
    resolves to the doc_id of the copy that was loaded (same bytes, same doc_id, same text).
    """
    g = as_lazy(gold).with_row_index("_order")
    inv = as_lazy(inventory).select(pl.col("path").alias("document"), "doc_id", "load_status", "error")
    lens = as_lazy(docs).select("doc_id", pl.col("doc_text").str.len_chars().cast(pl.Int64).alias("n_chars"))
    base = g.join(inv, on="document", how="left").join(lens, on="doc_id", how="left")
    spans = base.select("_order", "n_chars", "gold_spans").explode("gold_spans").unnest("gold_spans")
    first_bad = (
        spans.filter(pl.col("end") > pl.col("n_chars"))
        .group_by("_order")
        .agg(pl.col("start").first().alias("_bs"), pl.col("end").first().alias("_be"))
    )
    covered = _gold_intervals(g, ["_order"]).group_by("_order").agg((pl.col("end") - pl.col("start")).sum().alias("gold_chars"))
    status = (
        pl.when(pl.col("doc_id").is_null())
        .then(pl.lit("unknown_document"))
        .when(pl.col("n_chars").is_null())
        .then(pl.lit("not_loaded"))
        .when(pl.col("_be").is_not_null())
        .then(pl.lit("span_out_of_range"))
        .otherwise(pl.lit("ok"))
    )
    reason = (
        pl.when(pl.col("status") == "unknown_document")
        .then(pl.format("no inventory path equals '{}'", pl.col("document")))
        .when(pl.col("status") == "not_loaded")
        .then(pl.format("document has no loaded text (load_status={}: {})", pl.col("load_status"), pl.col("error").fill_null("")))
        .when(pl.col("status") == "span_out_of_range")
        .then(pl.format("span [{}, {}] ends past the document's {} characters", pl.col("_bs"), pl.col("_be"), pl.col("n_chars")))
    )
    out = (
        base.join(first_bad, on="_order", how="left")
        .join(covered, on="_order", how="left")
        .with_columns(status.alias("status"))
        .with_columns(reason.alias("reason"))
        .sort("_order")
    )
    return out.select([pl.col(c).cast(t) for c, t in RESOLVED_GOLD.items()]).collect()


# ---- silver gold from the workbench's own affordances -------------------------------------------


def silver_gold(
    affordances: pl.DataFrame | pl.LazyFrame, inventory: pl.DataFrame | pl.LazyFrame, max_per_intent: int | None = None
) -> pl.DataFrame:
    """One silver question per direct affordance: its question, its verified span as the gold.

    Silver gold is produced by the same detectors the Qspace trees are built from, so scores on
    it are not independent evidence (the circularity DESIGN.md section 13 warns about); use it
    for smoke tests and small corpora without real gold. With `max_per_intent`, each intent
    keeps its highest-confidence affordances (ties by affordance_id) so no intent dominates.
    Rows are sorted by document, span start and id.
    """
    paths = as_lazy(inventory).filter(LOADED_ROW).group_by("doc_id").agg(pl.col("path").min().alias("document"))
    direct = as_lazy(affordances).filter(pl.col("support") == "direct")
    if max_per_intent is not None:
        # each intent's best, chosen on three narrow columns; only those rows are then read whole
        # (sorting every affordance with its question text held 0.5 GB at CUAD x16)
        best = (
            direct.select("affordance_id", "intent", "confidence")
            .sort(["intent", "confidence", "affordance_id"], descending=[False, True, False])
            .filter(pl.int_range(1, pl.len() + 1).over("intent") <= max_per_intent)
            .select("affordance_id")
            .collect()
        )
        direct = direct.filter(pl.col("affordance_id").is_in(best["affordance_id"].implode()))
    span = pl.struct(pl.col("span_start").cast(pl.Int64).alias("start"), pl.col("span_end").cast(pl.Int64).alias("end"))
    out = (
        direct.join(paths, on="doc_id", how="inner")
        .sort(["document", "span_start", "affordance_id"])
        .select(
            pl.col("affordance_id").alias("id"),
            "question",
            "document",
            pl.concat_list(span).alias("gold_spans"),
        )
    )
    return out.select([pl.col(c).cast(t) for c, t in GOLD.items()]).collect()

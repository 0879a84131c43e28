"""Stage 14: measured evaluation against gold evidence spans.

Gold questions come from a JSONL file (`read_gold`), from a converted public set
(`contractnli_to_gold`) or, as a weaker "silver" set, from the workbench's own validated
affordances (`silver_gold`). `resolve_gold` ties each question to a loaded document and checks
its spans against that document's text. Retrieval strategies (`baselines.py`) return what they
loaded, unit by unit, and `per_query` / `metrics` score exactly that: exact tiktoken counts,
character intervals of loaded text intersected with gold character intervals, nodes visited.
Nothing here is modelled with constants (DESIGN.md sections 9 and 13).

Gold JSONL, one object per line (extra keys are ignored, blank lines skipped):

    {"id": "q1", "question": "...", "document": "policy/x.md", "gold_spans": [[start, end], ...]}

`document` is the path relative to the corpus folder, '/'-separated, exactly as the inventory
records it; offsets are code-point offsets into that document's canonical (loaded) text, end
exclusive.

`read_gold` and `contractnli_to_gold` read and write files on purpose: they are the readers of
this stage, like the loaders of stage 2. Everything else takes frames and returns frames.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from ..exprs import exact_mean
from ..params import EvalParams
from ..tokens import encoding


# ---- schemas ------------------------------------------------------------------------------------

SPAN = pl.Struct({"start": pl.Int64, "end": pl.Int64})

GOLD = {
    "id": pl.String,
    "question": pl.String,
    "document": pl.String,          # path relative to the corpus folder, as in inventory.path
    "gold_spans": pl.List(SPAN),    # code-point offsets into the document text, end exclusive
}

GOLD_STATUSES = ("ok", "unknown_document", "not_loaded", "span_out_of_range")

RESOLVED_GOLD = {
    **GOLD,
    "doc_id": pl.String,      # null when the document is not in the inventory
    "n_chars": pl.Int64,      # length of the document text; null when it has none
    "gold_chars": pl.Int64,   # characters covered by the gold spans, overlaps counted once
    "status": pl.String,      # one of GOLD_STATUSES; only "ok" rows are evaluated
    "reason": pl.String,      # why the status is not "ok" (null when it is)
}

RETRIEVALS = {
    "query_id": pl.String,
    "strategy": pl.String,
    "rank": pl.Int64,           # 1.. in the order the strategy loaded its units
    "doc_id": pl.String,
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "text": pl.String,          # == doc_text[char_start:char_end]
    "n_tokens": pl.Int64,       # exact token count of text
    "nodes_visited": pl.Int64,  # structure nodes examined up to and including this unit
    "path_length": pl.Int64,    # depth of this unit in the strategy's structure
    "fragment_id": pl.String,   # null for units that are not fragments (chunks)
}

METRICS = {
    "strategy": pl.String,
    "budget": pl.Int64,         # null for metrics that do not depend on a token budget
    "metric": pl.String,
    "value": pl.Float64,        # mean over the queries that have a value
    "n_queries": pl.Int64,
}



def per_query_schema(p: EvalParams) -> dict:
    """The columns of `per_query`: a recall column per token budget of the parameters."""
    return {"strategy": pl.String, "query_id": pl.String, "doc_id": pl.String, "gold_chars": pl.Int64,
            **{f"recall_at_{b}": pl.Float64 for b in p.budgets},
            "first_gold_rank": pl.Int64, "correct_fragment": pl.Boolean, "missed": pl.Boolean, "tokens_to_first_gold": pl.Int64,
            "nodes_visited": pl.Int64, "path_length": pl.Int64, "citation_locality": pl.Float64, "tokens_loaded": pl.Int64,
            "n_units": pl.Int64, "total_cost": pl.Float64}


# ---- the total cost of reaching the first gold evidence -----------------------------------------
# Units are "thousands of tokens read". Examining a node (a heading, a chunk, a fragment) costs
# about as much attention as reading 100 tokens; each level of descent 200 more (context to keep
# in mind); a miss costs 5,000 tokens, the price of falling back to reading the document.
COST_PER_1K_TOKENS = 1.0
COST_PER_NODE = 0.1
COST_PER_DEPTH = 0.2
COST_PER_MISS = 5.0

_RECALL = "evidence_recall"


def as_lazy(df: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    return df.lazy() if isinstance(df, pl.DataFrame) else df


def _empty_gold() -> pl.DataFrame:
    return pl.DataFrame(schema=GOLD)


# ---- reading gold -------------------------------------------------------------------------------

_I64_MAX = 2**63 - 1


class _Bad(Exception):
    def __init__(self, key: str, rule: str):
        super().__init__(rule)
        self.key, self.rule = key, rule


def _is_int(v) -> bool:
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
        if not isinstance(s, list) or len(s) != 2 or not all(_is_int(x) for x in s):
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


# ---- interval arithmetic as frames --------------------------------------------------------------


def merge_intervals(df: pl.LazyFrame, keys: list[str], start: str = "start", end: str = "end") -> pl.LazyFrame:
    """Union of half-open intervals per key: overlapping or touching intervals become one.

    After sorting by start, an interval opens a new block when it starts past the furthest end
    seen so far in its group; each block is one merged interval. Empty intervals are dropped.
    """
    prev_end = pl.col(end).cum_max().shift(1).over(keys)
    return (
        df.filter(pl.col(end) > pl.col(start))
        .sort([*keys, start, end])
        .with_columns(prev_end.alias("_prev_end"))
        .with_columns((pl.col("_prev_end").is_null() | (pl.col(start) > pl.col("_prev_end"))).alias("_new"))
        .with_columns(pl.col("_new").cum_sum().over(keys).alias("_block"))
        .group_by([*keys, "_block"])
        .agg(pl.col(start).min(), pl.col(end).max())
        .drop("_block")
        .sort([*keys, start])
    )


def overlap_chars(a_start: pl.Expr, a_end: pl.Expr, b_start: pl.Expr, b_end: pl.Expr) -> pl.Expr:
    """Characters shared by [a_start, a_end) and [b_start, b_end); 0 when disjoint."""
    return (pl.min_horizontal(a_end, b_end) - pl.max_horizontal(a_start, b_start)).clip(lower_bound=0)


def _gold_intervals(gold: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """The merged gold character intervals of each question (columns: keys, start, end)."""
    spans = gold.select(*keys, "gold_spans").explode("gold_spans").drop_nulls("gold_spans").unnest("gold_spans")
    return merge_intervals(spans, keys)


# ---- resolving gold against the corpus ----------------------------------------------------------


def resolve_gold(gold: pl.DataFrame | pl.LazyFrame, inventory: pl.DataFrame | pl.LazyFrame,
                 docs: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
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
        pl.when(pl.col("doc_id").is_null()).then(pl.lit("unknown_document"))
        .when(pl.col("n_chars").is_null()).then(pl.lit("not_loaded"))
        .when(pl.col("_be").is_not_null()).then(pl.lit("span_out_of_range"))
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


def silver_gold(affordances: pl.DataFrame | pl.LazyFrame, inventory: pl.DataFrame | pl.LazyFrame,
                max_per_intent: int | None = None) -> pl.DataFrame:
    """One silver question per direct affordance: its question, its verified span as the gold.

    Silver gold is produced by the same detectors the Qspace trees are built from, so scores on
    it are not independent evidence (the circularity DESIGN.md section 13 warns about); use it
    for smoke tests and small corpora without real gold. With `max_per_intent`, each intent
    keeps its highest-confidence affordances (ties by affordance_id) so no intent dominates.
    Rows are sorted by document, span start and id.
    """
    paths = (
        as_lazy(inventory).filter(pl.col("load_status") == "loaded")
        .group_by("doc_id").agg(pl.col("path").min().alias("document"))
    )
    direct = as_lazy(affordances).filter(pl.col("support") == "direct")
    if max_per_intent is not None:
        # each intent's best, chosen on three narrow columns; only those rows are then read whole
        # (sorting every affordance with its question text held 0.5 GB at CUAD x16)
        best = (
            direct.select("affordance_id", "intent", "confidence")
            .sort(["intent", "confidence", "affordance_id"], descending=[False, True, False])
            .filter(pl.int_range(1, pl.len() + 1).over("intent") <= max_per_intent)
            .select("affordance_id").collect()
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


# ---- ContractNLI ----------------------------------------------------------------------------------

CONTRACTNLI_EVIDENCE = ("Entailment", "Contradiction")  # NotMentioned has no evidence spans


def _safe_name(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._") or "doc"


def _natural_key(s: str) -> tuple:
    """'nda-2' before 'nda-10'."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", s) if p)


def _doc_name(doc: dict) -> str:
    if _is_int(doc.get("id")):
        return f"{doc['id']:05d}"  # zero-padded so that path order is id order
    if doc.get("id") is not None:
        return _safe_name(str(doc["id"]))
    return _safe_name(Path(str(doc["file_name"])).stem)


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span without leading and trailing whitespace; None when it is only whitespace.

    ContractNLI spans often end with the space or newline before the next sentence. Whitespace
    is not evidence, and fragments never include it at their edges, so leaving it in would cap
    every fragment strategy's recall below 1 for no reason a reader could act on.
    """
    piece = text[start:end]
    start += len(piece) - len(piece.lstrip())
    end -= len(piece) - len(piece.rstrip())
    return (start, end) if start < end else None


def _merged(spans: list[tuple[int, int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:  # overlapping or adjacent: one piece of evidence
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def contractnli_to_gold(json_path: str | Path, out_dir: str | Path) -> Path:
    """Convert a ContractNLI split into a corpus folder plus a gold file. Returns the gold path.

    Writes `<out_dir>/docs/<name>.txt` (each document's text exactly, UTF-8 bytes, no newline
    translation, so the txt loader returns it unchanged and offsets agree) and
    `<out_dir>/gold.jsonl`. The corpus folder to discover is `<out_dir>/docs` (kept apart from
    gold.jsonl so discovery does not ingest the gold file); `document` paths are relative to it.
    One question per (document, hypothesis) labelled Entailment or Contradiction: id
    "<document id>:<label id>", question = the hypothesis, gold_spans = the referenced spans
    trimmed of edge whitespace (whitespace-only spans dropped; 0.2% of the dev set's evidence
    characters), sorted, with overlapping or adjacent ones merged, plus the extra key `label`. Documents in id
    order, hypotheses in natural label order (nda-2 before nda-10).
    """
    data = json.loads(Path(json_path).read_text(encoding="utf-8"))
    labels = data["labels"]
    out_dir = Path(out_dir)
    docs_dir = out_dir / "docs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    docs = sorted(data["documents"], key=lambda d: (0, d["id"], "") if _is_int(d.get("id")) else (1, 0, str(d.get("id", d.get("file_name")))))
    names: dict[str, str] = {}
    lines: list[str] = []
    for doc in docs:
        name = _doc_name(doc)
        did = str(doc.get("id", name))
        if name in names:
            raise ValueError(f"{json_path}: documents {names[name]} and {did} both map to docs/{name}.txt")
        names[name] = did
        text: str = doc["text"]
        (docs_dir / f"{name}.txt").write_bytes(text.encode("utf-8"))
        spans = doc["spans"]
        annotations = doc["annotation_sets"][0]["annotations"]
        for label_id in sorted(annotations, key=_natural_key):
            ann = annotations[label_id]
            if ann["choice"] not in CONTRACTNLI_EVIDENCE:
                continue
            picked = []
            for i in ann["spans"]:
                if not (_is_int(i) and 0 <= i < len(spans)):
                    raise ValueError(f"{json_path}: document {did}: {label_id}: span index {i!r} out of range (0..{len(spans) - 1})")
                s, e = spans[i]
                if not (0 <= s < e <= len(text)):
                    raise ValueError(f"{json_path}: document {did}: span {i} [{s}, {e}] outside the text ({len(text)} characters)")
                trimmed = _trim(text, s, e)
                if trimmed:
                    picked.append(trimmed)
            if not picked:
                raise ValueError(f"{json_path}: document {did}: {label_id}: {ann['choice']} without evidence spans")
            rec = {"id": f"{did}:{label_id}", "question": labels[label_id]["hypothesis"], "document": f"{name}.txt",
                   "gold_spans": _merged(picked), "label": ann["choice"]}
            lines.append(json.dumps(rec, ensure_ascii=False))
    return _write_gold(out_dir / "gold.jsonl", lines)


def _write_gold(gold_path: Path, lines: list[str]) -> Path:
    tmp = gold_path.with_suffix(".jsonl.tmp")
    tmp.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    tmp.replace(gold_path)  # never leave a half-written gold file
    return gold_path


POLICYQA_SEPARATOR = "\n\n"  # between a policy's paragraphs: plain text with blank lines, no headings


def policyqa_to_gold(json_path: str | Path, out_dir: str | Path) -> Path:
    """Convert a PolicyQA split (SQuAD v1 format) into a corpus folder plus a gold file. Returns
    the gold path.

    Each policy (`data[i]`, named by its title) becomes `<out_dir>/docs/<title>.txt`: its
    paragraphs in order, joined by a blank line, written as UTF-8 bytes unchanged. Each question
    becomes one gold line (id, question, document, gold_spans, plus the extra key `type`) whose
    span is its answer shifted by the paragraph's start; an answer whose text is not at its offset
    is an error naming it. Policies in title order, questions in file order.
    """
    data = json.loads(Path(json_path).read_text(encoding="utf-8"))
    out_dir = Path(out_dir)
    docs_dir = out_dir / "docs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    names: set[str] = set()
    for policy in sorted(data["data"], key=lambda d: str(d["title"])):
        name = _safe_name(str(policy["title"]))
        if name in names:
            raise ValueError(f"{json_path}: two policies map to docs/{name}.txt")
        names.add(name)
        parts, start = [], 0
        for para in policy["paragraphs"]:
            context = para["context"]
            for qa in para["qas"]:
                for ans in qa["answers"][:1]:
                    s = start + ans["answer_start"]
                    if context[ans["answer_start"]:ans["answer_start"] + len(ans["text"])] != ans["text"]:
                        raise ValueError(f"{json_path}: {name}: question {qa['id']}: answer text not at its offset")
                    rec = {"id": qa["id"], "question": qa["question"], "document": f"{name}.txt",
                           "gold_spans": [[s, s + len(ans["text"])]], "type": qa.get("type", "")}
                    lines.append(json.dumps(rec, ensure_ascii=False))
            parts.append(context)
            start += len(context) + len(POLICYQA_SEPARATOR)
        (docs_dir / f"{name}.txt").write_bytes(POLICYQA_SEPARATOR.join(parts).encode("utf-8"))
    return _write_gold(out_dir / "gold.jsonl", lines)


# ---- exact token prefixes -----------------------------------------------------------------------


def _token_prefix_chars(text: str, k: int, enc) -> int:
    """Characters covered by the first k tokens of text, ending on a character boundary."""
    ids = enc.encode_ordinary(text)
    if k >= len(ids):
        return len(text)
    if k <= 0:
        return 0
    nbytes = len(enc.decode_bytes(ids[:k]))
    # a token may end inside a multi-byte character: keep only whole characters
    return len(text.encode("utf-8")[:nbytes].decode("utf-8", errors="ignore"))


def prefix_chars(texts: list[str], ks: list[int], name: str) -> list[int]:
    """For each text, the length in characters of the prefix made of its first k tokens.

    The prefix is re-encoded on its own and must fit in k tokens (tokenisation at a cut can
    differ from tokenisation inside the longer text); when it does not, the prefix is cut again
    from its own encoding, which strictly shortens it, until it fits.
    """
    enc = encoding(name)
    done: dict[tuple[str, int], int] = {}  # questions on one document often cut the same unit at the same budget
    for text, k in zip(texts, ks):
        if (text, k) not in done:
            c = _token_prefix_chars(text, k, enc)
            while c > 0 and len(enc.encode_ordinary(text[:c])) > k:
                c = _token_prefix_chars(text[:c], k, enc)
            done[text, k] = c
    return [done[text, k] for text, k in zip(texts, ks)]


def _prefix_expr(name: str) -> pl.Expr:
    """Batched `prefix_chars` over struct(text, k)."""
    def run(s: pl.Series) -> pl.Series:
        return pl.Series(prefix_chars(s.struct.field("text").to_list(), s.struct.field("k").to_list(), name), dtype=pl.Int64)

    return pl.struct("text", "k").map_batches(run, return_dtype=pl.Int64)


# ---- metrics --------------------------------------------------------------------------------------

PER_QUERY_COLUMNS = (
    "first_gold_rank", "correct_fragment", "missed", "tokens_to_first_gold", "nodes_visited",
    "path_length", "citation_locality", "tokens_loaded", "n_units", "total_cost",
)

# budget-free per-query columns reported by `metrics`, and the name each mean is reported under
_MEANS = {
    "correct_fragment": "correct_fragment_rate",
    "missed": "miss_rate",
    "tokens_to_first_gold": "tokens_to_first_gold",
    "nodes_visited": "nodes_visited",
    "path_length": "path_length",
    "citation_locality": "citation_locality",
    "tokens_loaded": "tokens_loaded",
    "total_cost": "total_cost",
}


def recall_column(budget: int) -> str:
    return f"recall_at_{budget}"


def _ok_gold(gold_resolved: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    g = as_lazy(gold_resolved)
    if "status" in g.collect_schema().names():
        g = g.filter(pl.col("status") == "ok")
    return g.select(pl.col("id").alias("query_id"), "doc_id", "gold_chars", "gold_spans")


def _loaded_within_budgets(r: pl.LazyFrame, p: EvalParams) -> pl.LazyFrame:
    """The character interval of each unit loaded before the cumulative token count reached B.

    A unit that fits entirely counts whole; the unit that crosses B counts only its first
    (B - tokens before it) tokens, measured by encoding it (`prefix_chars`).
    """
    budgets = pl.LazyFrame({"budget": p.budgets}, schema={"budget": pl.Int64})
    rb = r.filter(pl.col("_before") < p.budgets[-1]).join(budgets, how="cross").filter(pl.col("_before") < pl.col("budget"))
    keys = ["strategy", "query_id", "budget", "doc_id"]
    whole = rb.filter(pl.col("_cum") <= pl.col("budget")).select(*keys, pl.col("char_start").alias("start"), pl.col("char_end").alias("end"))
    cut = (
        rb.filter(pl.col("_cum") > pl.col("budget"))
        .with_columns((pl.col("budget") - pl.col("_before")).alias("k"))
        .with_columns(_prefix_expr(p.encoding).alias("_chars"))
        .select(*keys, pl.col("char_start").alias("start"), (pl.col("char_start") + pl.col("_chars")).alias("end"))
    )
    return pl.concat([whole, cut])


def per_query(retrievals: pl.DataFrame | pl.LazyFrame, gold_resolved: pl.DataFrame | pl.LazyFrame,
              p: EvalParams = EvalParams()) -> pl.DataFrame:
    """One row per (strategy, query) with every per-query value, from what was actually loaded.

    - recall_at_<B>: share of the query's gold characters inside the union of the character
      intervals loaded before the cumulative exact token count reached B (crossing unit cut).
    - first_gold_rank: rank of the first loaded unit overlapping a gold span (null: a miss).
    - correct_fragment: the first loaded unit overlaps gold.
    - tokens_to_first_gold: tokens loaded up to and including that unit. A miss counts
      everything the strategy loaded and at least max_tokens, so a miss never costs less than
      a hit (a hit on the unit that crosses max_tokens can exceed max_tokens by that unit).
    - nodes_visited, path_length: at the first gold unit; for a miss, at the last unit loaded.
    - citation_locality: gold characters / characters of the first gold unit (null for a miss).
    - tokens_loaded, n_units: everything the strategy loaded for the query.
    - total_cost: COST_PER_1K_TOKENS * tokens_to_first_gold / 1000 + COST_PER_NODE *
      nodes_visited + COST_PER_DEPTH * path_length + COST_PER_MISS * missed.

    Every evaluated (status "ok") query gets a row for every strategy present in `retrievals`,
    with recall 0 and a miss when the strategy loaded nothing for it.
    """
    g = _ok_gold(gold_resolved)
    gold_iv = _gold_intervals(g, ["query_id", "doc_id"])
    run = ["strategy", "query_id"]
    r = (
        as_lazy(retrievals).join(g.select("query_id"), on="query_id", how="semi")
        .sort(["strategy", "query_id", "rank"])
        .with_columns(pl.col("n_tokens").cum_sum().over(run).alias("_cum"))
        .with_columns((pl.col("_cum") - pl.col("n_tokens")).alias("_before"))
    )
    # gold characters inside each loaded unit (gold intervals are disjoint, so a sum is exact)
    unit_gold = (
        r.select(*run, "rank", "doc_id", "char_start", "char_end")
        .join(gold_iv, on=["query_id", "doc_id"])
        .with_columns(overlap_chars(pl.col("char_start"), pl.col("char_end"), pl.col("start"), pl.col("end")).alias("_ov"))
        .group_by([*run, "rank"]).agg(pl.col("_ov").sum())
    )
    r = r.join(unit_gold, on=[*run, "rank"], how="left").with_columns(pl.col("_ov").fill_null(0))
    first = (
        r.filter(pl.col("_ov") > 0).sort([*run, "rank"])
        .group_by(run).agg(
            pl.col("rank").first().alias("first_gold_rank"),
            pl.col("_cum").first().alias("_f_tokens"),
            pl.col("nodes_visited").first().alias("_f_nodes"),
            pl.col("path_length").first().alias("_f_path"),
            (pl.col("_ov").first() / (pl.col("char_end") - pl.col("char_start")).first()).alias("citation_locality"),
        )
    )
    last = (
        r.sort([*run, "rank"]).group_by(run).agg(
            pl.col("nodes_visited").last().alias("_l_nodes"),
            pl.col("path_length").last().alias("_l_path"),
            pl.col("n_tokens").sum().alias("tokens_loaded"),
            pl.len().cast(pl.Int64).alias("n_units"),
        )
    )
    intervals = merge_intervals(_loaded_within_budgets(r, p), ["strategy", "query_id", "budget", "doc_id"])
    covered = (
        intervals.join(gold_iv, on=["query_id", "doc_id"], suffix="_g")
        .with_columns(overlap_chars(pl.col("start"), pl.col("end"), pl.col("start_g"), pl.col("end_g")).alias("_ov"))
        .group_by(run).agg([pl.col("_ov").filter(pl.col("budget") == b).sum().alias(f"_cov_{b}") for b in p.budgets])
    )
    strategies = as_lazy(retrievals).select("strategy").unique()
    missed = pl.col("first_gold_rank").is_null()
    tokens_loaded = pl.col("tokens_loaded").fill_null(0)
    out = (
        g.select("query_id", "doc_id", "gold_chars").join(strategies, how="cross")
        .join(first, on=run, how="left").join(last, on=run, how="left").join(covered, on=run, how="left")
        .with_columns(
            [(pl.col(f"_cov_{b}").fill_null(0) / pl.col("gold_chars")).alias(recall_column(b)) for b in p.budgets]
        )
        .with_columns(
            (pl.col("first_gold_rank") == 1).fill_null(False).alias("correct_fragment"),
            missed.alias("missed"),
            pl.when(missed).then(pl.max_horizontal(tokens_loaded, pl.lit(p.max_tokens))).otherwise(pl.col("_f_tokens")).alias("tokens_to_first_gold"),
            pl.when(missed).then(pl.col("_l_nodes").fill_null(0)).otherwise(pl.col("_f_nodes")).alias("nodes_visited"),
            pl.when(missed).then(pl.col("_l_path").fill_null(0)).otherwise(pl.col("_f_path")).alias("path_length"),
            tokens_loaded.alias("tokens_loaded"),
            pl.col("n_units").fill_null(0),
        )
        .with_columns(
            (
                COST_PER_1K_TOKENS * pl.col("tokens_to_first_gold") / 1000
                + COST_PER_NODE * pl.col("nodes_visited")
                + COST_PER_DEPTH * pl.col("path_length")
                + COST_PER_MISS * pl.col("missed").cast(pl.Float64)
            ).alias("total_cost")
        )
        .sort(["strategy", "query_id"])
    )
    schema = {
        "strategy": pl.String, "query_id": pl.String, "doc_id": pl.String, "gold_chars": pl.Int64,
        **{recall_column(b): pl.Float64 for b in p.budgets},
        "first_gold_rank": pl.Int64, "correct_fragment": pl.Boolean, "missed": pl.Boolean,
        "tokens_to_first_gold": pl.Int64, "nodes_visited": pl.Int64, "path_length": pl.Int64,
        "citation_locality": pl.Float64, "tokens_loaded": pl.Int64, "n_units": pl.Int64, "total_cost": pl.Float64,
    }
    return out.select([pl.col(c).cast(t) for c, t in schema.items()]).collect()


def metrics(retrievals: pl.DataFrame | pl.LazyFrame, gold_resolved: pl.DataFrame | pl.LazyFrame,
            p: EvalParams = EvalParams(), per_query_frame: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per strategy, the mean of every per-query value (schema METRICS, long format).

    `evidence_recall` has one row per budget; every other metric has budget null. n_queries is
    the number of queries with a value (citation_locality has none for misses). Means use exact
    float sums so the result does not depend on row order. Pass `per_query_frame` to reuse an
    already computed `per_query` result.
    """
    pq = per_query(retrievals, gold_resolved, p) if per_query_frame is None else per_query_frame
    columns = {recall_column(b): (_RECALL, b) for b in p.budgets} | {c: (m, None) for c, m in _MEANS.items()}
    names = pl.LazyFrame(
        {"column": list(columns), "metric": [m for m, _ in columns.values()], "budget": [b for _, b in columns.values()]},
        schema={"column": pl.String, "metric": pl.String, "budget": pl.Int64},
    )
    long = (
        pq.lazy().select("strategy", "query_id", *[pl.col(c).cast(pl.Float64) for c in columns])
        .unpivot(index=["strategy", "query_id"], on=list(columns), variable_name="column", value_name="value")
        .join(names, on="column")
        .drop_nulls("value")
    )
    keys = ["strategy", "metric", "budget"]
    means = long.group_by(keys).agg(exact_mean("value").alias("value"), pl.len().cast(pl.Int64).alias("n_queries"))
    # every strategy reports every metric, even one no query has a value for (value null, n 0)
    out = (
        pq.lazy().select("strategy").unique().join(names.drop("column"), how="cross")
        .join(means, on=keys, how="left", nulls_equal=True)
        .with_columns(pl.col("n_queries").fill_null(0))
        .sort(keys, nulls_last=False)
    )
    return out.select([pl.col(c).cast(t) for c, t in METRICS.items()]).collect()

"""Stage 14: measured evaluation against gold evidence spans.

Retrieval strategies (`baselines`, `qspace`, the ask path) return what they loaded, unit by unit,
and `per_query` / `metrics` score exactly that: exact tiktoken counts, character intervals of
loaded text intersected with gold character intervals (`gold`), nodes visited. Nothing here is
modelled with constants (DESIGN.md sections 9 and 13).
"""

from __future__ import annotations

import polars as pl

from ..exprs import exact_mean, merge_intervals, overlap_chars
from ..frames import as_lazy
from ..params import EvalParams
from ..tokens import encoding
from .gold import _gold_intervals

RETRIEVALS = {
    "query_id": pl.String,
    "strategy": pl.String,
    "rank": pl.Int64,  # 1.. in the order the strategy loaded its units
    "doc_id": pl.String,
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "text": pl.String,  # == doc_text[char_start:char_end]
    "n_tokens": pl.Int64,  # exact token count of text
    "nodes_visited": pl.Int64,  # structure nodes examined up to and including this unit
    "path_length": pl.Int64,  # depth of this unit in the strategy's structure
    "fragment_id": pl.String,  # null for units that are not fragments (chunks)
}

METRICS = {
    "strategy": pl.String,
    "budget": pl.Int64,  # null for metrics that do not depend on a token budget
    "metric": pl.String,
    "value": pl.Float64,  # mean over the queries that have a value
    "n_queries": pl.Int64,
}


def per_query_schema(p: EvalParams) -> dict:
    """The columns of `per_query`: a recall column per token budget of the parameters."""
    return {
        "strategy": pl.String,
        "query_id": pl.String,
        "doc_id": pl.String,
        "gold_chars": pl.Int64,
        **{recall_column(b): pl.Float64 for b in p.budgets},
        "first_gold_rank": pl.Int64,
        "correct_fragment": pl.Boolean,
        "missed": pl.Boolean,
        "tokens_to_first_gold": pl.Int64,
        "nodes_visited": pl.Int64,
        "path_length": pl.Int64,
        "citation_locality": pl.Float64,
        "tokens_loaded": pl.Int64,
        "n_units": pl.Int64,
        "total_cost": pl.Float64,
    }


# ---- the total cost of reaching the first gold evidence -----------------------------------------
# Units are "thousands of tokens read". Examining a node (a heading, a chunk, a fragment) costs
# about as much attention as reading 100 tokens; each level of descent 200 more (context to keep
# in mind); a miss costs 5,000 tokens, the price of falling back to reading the document.
COST_PER_1K_TOKENS = 1.0
COST_PER_NODE = 0.1
COST_PER_DEPTH = 0.2
COST_PER_MISS = 5.0

_RECALL = "evidence_recall"


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
    "first_gold_rank",
    "correct_fragment",
    "missed",
    "tokens_to_first_gold",
    "nodes_visited",
    "path_length",
    "citation_locality",
    "tokens_loaded",
    "n_units",
    "total_cost",
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
    whole = rb.filter(pl.col("_cum") <= pl.col("budget")).select(
        *keys, pl.col("char_start").alias("start"), pl.col("char_end").alias("end")
    )
    cut = (
        rb.filter(pl.col("_cum") > pl.col("budget"))
        .with_columns((pl.col("budget") - pl.col("_before")).alias("k"))
        .with_columns(_prefix_expr(p.encoding).alias("_chars"))
        .select(*keys, pl.col("char_start").alias("start"), (pl.col("char_start") + pl.col("_chars")).alias("end"))
    )
    return pl.concat([whole, cut])


def per_query(
    retrievals: pl.DataFrame | pl.LazyFrame, gold_resolved: pl.DataFrame | pl.LazyFrame, p: EvalParams = EvalParams()
) -> pl.DataFrame:
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
        as_lazy(retrievals)
        .join(g.select("query_id"), on="query_id", how="semi")
        .sort(["strategy", "query_id", "rank"])
        .with_columns(pl.col("n_tokens").cum_sum().over(run).alias("_cum"))
        .with_columns((pl.col("_cum") - pl.col("n_tokens")).alias("_before"))
    )
    # gold characters inside each loaded unit (gold intervals are disjoint, so a sum is exact)
    unit_gold = (
        r.select(*run, "rank", "doc_id", "char_start", "char_end")
        .join(gold_iv, on=["query_id", "doc_id"])
        .with_columns(overlap_chars(pl.col("char_start"), pl.col("char_end"), pl.col("start"), pl.col("end")).alias("_ov"))
        .group_by([*run, "rank"])
        .agg(pl.col("_ov").sum())
    )
    r = r.join(unit_gold, on=[*run, "rank"], how="left").with_columns(pl.col("_ov").fill_null(0))
    first = (
        r.filter(pl.col("_ov") > 0)
        .sort([*run, "rank"])
        .group_by(run)
        .agg(
            pl.col("rank").first().alias("first_gold_rank"),
            pl.col("_cum").first().alias("_f_tokens"),
            pl.col("nodes_visited").first().alias("_f_nodes"),
            pl.col("path_length").first().alias("_f_path"),
            (pl.col("_ov").first() / (pl.col("char_end") - pl.col("char_start")).first()).alias("citation_locality"),
        )
    )
    last = (
        r.sort([*run, "rank"])
        .group_by(run)
        .agg(
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
        .group_by(run)
        .agg([pl.col("_ov").filter(pl.col("budget") == b).sum().alias(f"_cov_{b}") for b in p.budgets])
    )
    strategies = as_lazy(retrievals).select("strategy").unique()
    missed = pl.col("first_gold_rank").is_null()
    tokens_loaded = pl.col("tokens_loaded").fill_null(0)
    out = (
        g.select("query_id", "doc_id", "gold_chars")
        .join(strategies, how="cross")
        .join(first, on=run, how="left")
        .join(last, on=run, how="left")
        .join(covered, on=run, how="left")
        .with_columns([(pl.col(f"_cov_{b}").fill_null(0) / pl.col("gold_chars")).alias(recall_column(b)) for b in p.budgets])
        .with_columns(
            (pl.col("first_gold_rank") == 1).fill_null(False).alias("correct_fragment"),
            missed.alias("missed"),
            pl.when(missed)
            .then(pl.max_horizontal(tokens_loaded, pl.lit(p.max_tokens)))
            .otherwise(pl.col("_f_tokens"))
            .alias("tokens_to_first_gold"),
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
    return out.select([pl.col(c).cast(t) for c, t in per_query_schema(p).items()]).collect()


def metrics(
    retrievals: pl.DataFrame | pl.LazyFrame,
    gold_resolved: pl.DataFrame | pl.LazyFrame,
    p: EvalParams = EvalParams(),
    per_query_frame: pl.DataFrame | None = None,
) -> pl.DataFrame:
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
        pq.lazy()
        .select("strategy", "query_id", *[pl.col(c).cast(pl.Float64) for c in columns])
        .unpivot(index=["strategy", "query_id"], on=list(columns), variable_name="column", value_name="value")
        .join(names, on="column")
        .drop_nulls("value")
    )
    keys = ["strategy", "metric", "budget"]
    means = long.group_by(keys).agg(exact_mean("value").alias("value"), pl.len().cast(pl.Int64).alias("n_queries"))
    # every strategy reports every metric, even one no query has a value for (value null, n 0)
    out = (
        pq.lazy()
        .select("strategy")
        .unique()
        .join(names.drop("column"), how="cross")
        .join(means, on=keys, how="left", nulls_equal=True)
        .with_columns(pl.col("n_queries").fill_null(0))
        .sort(keys, nulls_last=False)
    )
    return out.select([pl.col(c).cast(t) for c, t in METRICS.items()]).collect()

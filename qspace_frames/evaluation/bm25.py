"""BM25 over any units of text (chunks, fragments, sentences), counted as frames.

Terms are lower-cased words without stop words, lightly stemmed (`terms_expr`). Scoring is
Okapi BM25 with the corpus's own statistics; `Bm25Counts` gathers them batch by batch, so a
strategy can score a corpus of any size while keeping only the questions' own documents whole.
Written here rather than taken from a package: the strategies score question terms against
Polars frames of units, and the counts must be exact across batches.
"""

from __future__ import annotations

import polars as pl

from ..exprs import exact_sums
from ..frames import as_lazy, detached
from ..params import EvalParams

# Function words that carry no topic; kept small on purpose (no domain words: "shall",
# "party" and "agreement" are down-weighted by IDF, not removed by fiat).
STOP_WORDS = (
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "been",
    "but",
    "by",
    "can",
    "do",
    "does",
    "for",
    "from",
    "had",
    "has",
    "have",
    "he",
    "her",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "me",
    "my",
    "no",
    "not",
    "of",
    "on",
    "or",
    "our",
    "she",
    "so",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
)

BM25_SLICE = 100_000  # units read per step when counting terms: bounded memory whatever the corpus size


# A light suffix stripper, the same for every strategy: "discloses", "disclosed", "disclosing" and
# "disclosure" all become "disclos", so a question and its evidence meet on the word, not the form.
# Written here, not taken from a library: English Snowball (PyStemmer) measured no better (ask's
# development questions 41 of 161 either way, held out 12 of 65 against 13; Qspace's evidence recall
# within +0.6 points on ContractNLI and PolicyQA dev) and keeps the plural of acronyms ("SLAs",
# "NDAs", "KPIs" are not "SLA", "NDA", "KPI"), which policies and contracts are full of.
STEM = r"^(\p{L}{3,}?)(?:ies|ings?|ed|es|s|ures?|ions?|ments?|ly|e)$"


def stem_expr(e: pl.Expr) -> pl.Expr:
    return e.str.replace(r"ies$", "y").str.replace(STEM, "$1")


def terms_expr(col: str) -> pl.Expr:
    """Lower-case runs of letters and digits, minus STOP_WORDS, stemmed (a list column, in text order)."""
    return (
        pl.col(col)
        .fill_null("")
        .str.to_lowercase()
        .str.extract_all(r"[\p{L}\p{N}]+")
        .list.eval(stem_expr(pl.element().filter(~pl.element().is_in(list(STOP_WORDS)))))
    )


WORDS = r"[\p{L}\p{N}]+"


def words_of(units: pl.DataFrame) -> pl.DataFrame:
    """(_u, w): the words of each unit's `text` (`_u`: its row number), in text order, lower case,
    STOP_WORDS out; a unit with none has no row."""
    return (
        units.select("_u", pl.col("text").fill_null("").str.to_lowercase().str.extract_all(WORDS).alias("w"))
        .explode("w")
        .drop_nulls("w")
        .filter(~pl.col("w").is_in(list(STOP_WORDS)))
    )


def stems_of(words: pl.DataFrame) -> pl.DataFrame:
    """(w, term): each distinct word of `words_of` stemmed once, not once per occurrence."""
    return words.select("w").unique().with_columns(stem_expr(pl.col("w")).alias("term"))


def term_counts(units: pl.DataFrame, wanted: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(dl, tf) of `units` (with a row number `_u`): every unit's length in terms, and the term
    frequencies of the `wanted` terms only. The same terms as `terms_expr`, but each distinct
    word of a slice is stemmed once (not once per occurrence), and words no query asks for are
    dropped before any counting."""
    dls = [pl.DataFrame(schema={"_u": units.schema["_u"], "dl": pl.Int64})]
    tfs = [pl.DataFrame(schema={"_u": units.schema["_u"], "term": pl.String, "tf": pl.Int64})]
    for off in range(0, units.height, BM25_SLICE):
        words = words_of(units.slice(off, BM25_SLICE))
        dls.append(words.group_by("_u").agg(pl.len().cast(pl.Int64).alias("dl")))
        stems = stems_of(words).join(wanted, on="term", how="semi")
        tfs.append(words.join(stems, on="w").group_by("_u", "term").agg(pl.len().cast(pl.Int64).alias("tf")))
    dl = units.select("_u").join(pl.concat(dls), on="_u", how="left").with_columns(pl.col("dl").fill_null(0))
    return dl, pl.concat(tfs)


def query_terms(queries: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """(query_id, doc_id, term): each query's distinct terms."""
    return (
        as_lazy(queries)
        .select("query_id", "doc_id", terms_expr("question").list.unique().alias("term"))
        .explode("term")
        .drop_nulls("term")
        .collect()
    )


def bm25_scores(queries: pl.LazyFrame, units: pl.LazyFrame, p: EvalParams = EvalParams()) -> pl.LazyFrame:
    """BM25 score of every unit of each query's document (query_id, doc_id, chunk, score).

    `units` (doc_id, chunk, text) are all the chunks of the corpus: document frequencies,
    the unit count N and the mean unit length come from all of them, so IDF reflects the corpus,
    while a query is scored only against its own document's units. Query terms count once each.
    IDF = ln(1 + (N - df + 0.5) / (df + 0.5)) (never negative). Unmatched units score 0.
    Terms are `terms_expr`'s; only the query terms' frequencies are ever counted.
    """
    scores, _ = bm25_batched(as_lazy(queries).collect(), [as_lazy(units).select("doc_id", "chunk", "text").collect()], p)
    return scores


def bm25_batched(queries: pl.DataFrame, batches, p: EvalParams) -> tuple[pl.LazyFrame, pl.DataFrame]:
    """`bm25_scores` over units that arrive in batches (frames with doc_id, chunk, text and any
    other columns), each batch reduced to its term counts as soon as it arrives: only the units
    of the queries' own documents are kept whole. Returns (scores, those units)."""
    q_terms = query_terms(queries)
    wanted = q_terms.select("term").unique()
    counts, offset = Bm25Counts(queries), 0
    for b in batches:
        b = b.with_row_index("_u", offset=offset).with_columns(pl.col("_u").cast(pl.Int64))
        offset += b.height
        counts.add(b.select("_u", "doc_id", "chunk"), *term_counts(b.select("_u", "text"), wanted), b.drop("_u"))
        del b
    return counts.scores(q_terms, p)


class Bm25Counts:
    """BM25's corpus-wide statistics, counted a batch of units at a time: the number of units, their
    total length and each query term's document frequency. Only the units of the queries' own
    documents (the only ones a query is scored against) keep their lengths and term counts, so
    memory follows the questions' documents, not the corpus."""

    def __init__(self, queries: pl.DataFrame):
        self.queries, self.docs = queries, queries.select("doc_id").unique()
        self.n = self.total = 0
        self.df, self.keys, self.dl, self.tf, self.kept = [], [], [], [], []

    def add(self, keys: pl.DataFrame, dl: pl.DataFrame, tf: pl.DataFrame, units: pl.DataFrame) -> None:
        """One batch: keys (_u, doc_id, chunk), dl and tf as `term_counts` gives them, and its units
        (with doc_id), of which those of the queries' documents are kept."""
        lengths = keys.select("_u").join(dl, on="_u")
        self.n += lengths.height
        self.total += int(lengths["dl"].sum())
        self.df.append(tf.group_by("term").agg(pl.len().cast(pl.Int64).alias("df")))
        mine = keys.join(self.docs, on="doc_id", how="semi")
        self.keys.append(mine)
        self.dl.append(dl.join(mine, on="_u", how="semi"))
        self.tf.append(tf.join(mine, on="_u", how="semi"))
        self.kept.append(detached(units.join(self.docs, on="doc_id", how="semi")))

    def scores(
        self, q_terms: pl.DataFrame, p: EvalParams, matched_only: bool = False, top: int | None = None, bound: pl.DataFrame | None = None
    ) -> tuple[pl.LazyFrame, pl.DataFrame]:
        """(scores: query_id, doc_id, chunk, score for every unit of a query's document, or with
        `matched_only` for those that share a term with it, the only ones scoring above 0; the
        kept units). With `top` and `bound` (query_id, _bound), `matched_only` leaves out the units
        whose score, multiplied by the query's _bound, could not reach its top-th best score."""
        keys, dl, tf = pl.concat(self.keys), pl.concat(self.dl), pl.concat(self.tf)
        # the lengths are integers, so this is the mean of all of them, whatever the batching
        stats = pl.DataFrame(
            {"_n": [float(self.n)], "_avgdl": [self.total / self.n if self.n else None]}, schema={"_n": pl.Float64, "_avgdl": pl.Float64}
        )
        idf = (
            pl.concat(self.df)
            .lazy()
            .group_by("term")
            .agg(pl.col("df").sum().cast(pl.Float64))
            .join(stats.lazy(), how="cross")
            .select("term", (1 + (pl.col("_n") - pl.col("df") + 0.5) / (pl.col("df") + 0.5)).log().alias("idf"))
        )
        k1, b = p.bm25_k1, p.bm25_b
        norm = k1 * (1 - b + b * pl.col("dl") / pl.max_horizontal(pl.col("_avgdl"), pl.lit(1e-9)))
        part = pl.col("idf") * pl.col("tf") * (k1 + 1) / (pl.col("tf") + norm)
        if "weight" in q_terms.columns:  # a query term weighed less than 1 (a null weight is 1)
            part = part * pl.col("weight").fill_null(1.0)
        # queries numbered: grouping millions of parts by an integer pair is several times faster
        numbers = q_terms.select("query_id").unique().sort("query_id").with_row_index("_q")
        parts = (
            q_terms.lazy()
            .join(numbers.lazy(), on="query_id")
            .join(tf.lazy().join(keys.lazy(), on="_u"), on=["doc_id", "term"])
            .join(idf, on="term")
            .join(dl.lazy(), on="_u")
            .join(stats.lazy(), how="cross")
            .with_columns(part.alias("_part"))
            .select("_q", "chunk", "_part")
            .collect()
        )
        if top is not None:
            parts = parts.join(_reaching(parts, top, bound.join(numbers, on="query_id")), on=["_q", "chunk"], how="semi")
        matched = exact_sums(parts, ["_q", "chunk"], {"score": "_part"}).join(numbers, on="_q").drop("_q")
        if matched_only:  # a question over a whole corpus: not every unit of every document, with zeros
            return matched.lazy().join(keys.lazy().select("doc_id", "chunk"), on="chunk").select(
                "query_id", "doc_id", "chunk", "score"
            ), pl.concat(self.kept)
        scores = (
            self.queries.lazy()
            .select("query_id", "doc_id")
            .join(keys.lazy().select("doc_id", "chunk"), on="doc_id")
            .join(matched.lazy(), on=["query_id", "chunk"], how="left")
            .with_columns(pl.col("score").fill_null(0.0))
        )
        return scores, pl.concat(self.kept)


def _reaching(parts: pl.DataFrame, top: int, bound: pl.DataFrame) -> pl.DataFrame:
    """(_q, chunk) of the units whose score could reach the query's top-th once multiplied
    by its _bound, told from Polars' plain sums of the parts: a sum of a few dozen positive terms
    is off the exact one (`exact_sums`) by far less than the margin, and the exact sum costs a
    Python call per unit, which on a corpus of contracts is most of a question's time."""
    plain = parts.group_by("_q", "chunk").agg(pl.col("_part").sum().alias("_s"))
    kth = plain.group_by("_q").agg(pl.col("_s").top_k(top).min().alias("_kth")).join(bound, on="_q")
    return plain.join(kth, on="_q").filter(pl.col("_s") * pl.col("_bound") >= pl.col("_kth") * (1 - 1e-9)).select("_q", "chunk")

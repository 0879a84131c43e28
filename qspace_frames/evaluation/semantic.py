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
    """Units placed in the latent space of their own texts (`of`): a vector per unit, in which a
    question, or a group of units read as one text (a fragment), is compared with them."""

    def __init__(self, vectorizer, svd, chunks: pl.DataFrame, vectors: np.ndarray):
        self.vectorizer, self.svd = vectorizer, svd
        self.chunks, self.vectors = chunks, vectors  # chunk -> row of `vectors` (_v) and its terms

    @classmethod
    def of(cls, units: pl.DataFrame, dims: int) -> "LatentSpace | None":
        """The space of the units' texts (`units`: chunk, text), `dims` dimensions at most; None
        when there is too little text to fit one (fewer distinct terms or units than two)."""
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.preprocessing import normalize
        from threadpoolctl import threadpool_limits

        u = units.select("chunk", "text").unique("chunk").sort("chunk")
        texts = _terms(u, "text")
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
            svd = TruncatedSVD(n_components=k, algorithm="arpack", random_state=0).fit(fitted)
            every = fitted if stride == 1 else vec.transform(texts.to_list())
            vectors = normalize(svd.transform(every))
        return cls(vec, svd, u.select("chunk", texts.alias("_terms")).with_row_index("_v"), vectors)

    def _project(self, terms: pl.Series) -> np.ndarray:
        """Unit vectors of texts given as their terms (`_terms`)."""
        from sklearn.preprocessing import normalize
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            return normalize(self.svd.transform(self.vectorizer.transform(terms.to_list())))

    def _questions(self, queries: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
        q = queries.select("query_id", "question").unique("query_id").sort("query_id")
        return q.select("query_id").with_row_index("_q"), self._project(_terms(q, "question"))

    def similarity(self, queries: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
        """(query_id, chunk, similarity) for each of `pairs` (query_id, chunk): the cosine of the
        question (`queries`: query_id, question) and the unit."""
        rows, z = self._questions(queries)
        at = pairs.select("query_id", "chunk").join(self.chunks.select("chunk", "_v"), on="chunk").join(rows, on="query_id")
        return at.select("query_id", "chunk", _cosine(z, at["_q"], self.vectors, at["_v"]))

    def group_similarity(self, queries: pl.DataFrame, groups: pl.DataFrame, pairs: pl.DataFrame, key: str) -> pl.DataFrame:
        """(query_id, key, similarity) for each of `pairs` (query_id, key): the cosine of the
        question and the group of units (`groups`: chunk, key, char_start; a fragment), read as
        one text: its units' terms in order."""
        texts = (
            groups.select("chunk", key, "char_start")
            .unique()
            .join(self.chunks, on="chunk")
            .sort(key, "char_start", "_v")
            .group_by(key, maintain_order=True)
            .agg(pl.col("_terms").str.join(" "))
        )
        z_groups = self._project(texts["_terms"])
        rows, z = self._questions(queries)
        at = pairs.select("query_id", key).join(texts.select(key).with_row_index("_g"), on=key).join(rows, on="query_id")
        return at.select("query_id", key, _cosine(z, at["_q"], z_groups, at["_g"]))


def _cosine(a: np.ndarray, ai: pl.Series, b: np.ndarray, bi: pl.Series) -> pl.Series:
    """Row-wise dot products of unit vectors a[ai] and b[bi], rounded (last bits are BLAS's)."""
    return pl.Series("similarity", np.round(np.einsum("ij,ij->i", a[ai.to_numpy()], b[bi.to_numpy()]), 12))


def _terms(frame: pl.DataFrame, col: str) -> pl.Series:
    """The texts as BM25 reads them (`terms_expr`: stemmed, stop words out), one string each."""
    return frame.select(terms_expr(col).list.join(" "))[col]

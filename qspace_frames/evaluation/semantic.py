"""Latent semantic similarity of questions and sentences: a corpus's own vocabulary, compressed.

BM25 only meets a question and its evidence on shared words; a contract that says "analysis to
determine structure" where the question says "reverse engineer" scores nothing. Latent semantic
analysis (TF-IDF of the same stemmed terms as BM25, then a truncated SVD of the sentence-term
matrix, scikit-learn) places words that occur in the same sentences near each other, so a
sentence can be close to a question it shares few words with. The space is fitted on the
sentences given (the corpus's, or a regular sample of them past MAX_FIT_SENTENCES), with no
outside data. Measured on the ContractNLI and PolicyQA development splits, 50 dimensions mixed
at equal weight with the lexical score (each standardised per question) raised Qspace's recall at
every budget on both (EvalParams.qspace_semantic_dims, qspace_semantic_weight).

Deterministic: a fixed vocabulary order, ARPACK with a fixed start vector, and one BLAS thread
while fitting and projecting (threaded sums could round differently from run to run).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .bm25 import terms_expr

MAX_FIT_SENTENCES = 100_000  # sentences the space is fitted on; a larger corpus is sampled at a regular stride
MIN_DOCUMENT_FREQUENCY = 2  # a term in one sentence only says nothing about which words go together


def similarity(queries: pl.DataFrame, units: pl.DataFrame, pairs: pl.DataFrame, dims: int) -> pl.DataFrame:
    """(query_id, chunk, similarity) for each of `pairs`: the cosine of the question (`queries`:
    query_id, question) and the unit (`units`: chunk, text) in the `dims`-dimensional latent space
    of the units. 0.0 when there is too little text to fit a space (fewer distinct terms or units
    than two)."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize
    from threadpoolctl import threadpool_limits

    out = pairs.select("query_id", "chunk")
    u = units.select("chunk", "text").unique("chunk").sort("chunk").with_columns(terms_expr("text").list.join(" ").alias("_t"))
    q = (
        queries.select("query_id", "question")
        .unique("query_id")
        .sort("query_id")
        .with_columns(terms_expr("question").list.join(" ").alias("_t"))
    )
    stride = -(-u.height // MAX_FIT_SENTENCES)
    vec = TfidfVectorizer(token_pattern=r"\S+", lowercase=False, sublinear_tf=True, min_df=MIN_DOCUMENT_FREQUENCY)
    try:
        fitted = vec.fit_transform(u["_t"].gather_every(max(stride, 1)).to_list())
    except ValueError:  # no term in two units: nothing to learn from
        return out.with_columns(pl.lit(0.0).alias("similarity"))
    k = min(dims, fitted.shape[0] - 1, fitted.shape[1] - 1)
    if k < 1:
        return out.with_columns(pl.lit(0.0).alias("similarity"))
    with threadpool_limits(limits=1):
        svd = TruncatedSVD(n_components=k, algorithm="arpack", random_state=0).fit(fitted)
        z_units = normalize(svd.transform(vec.transform(u["_t"].to_list())))
        z_questions = normalize(svd.transform(vec.transform(q["_t"].to_list())))
    at = out.join(u.select("chunk").with_row_index("_ui"), on="chunk").join(q.select("query_id").with_row_index("_qi"), on="query_id")
    cos = np.einsum("ij,ij->i", z_questions[at["_qi"].to_numpy()], z_units[at["_ui"].to_numpy()])
    return at.select("query_id", "chunk", pl.Series("similarity", np.round(cos, 12)))

"""The evaluation's shortcuts give exactly what the plain computation gives."""

from __future__ import annotations

import random

import polars as pl
import pytest

from qspace_frames.evaluation.chunks import _bounds_batch, chunk_bounds
from qspace_frames.evaluation.loading import count_ranked
from qspace_frames.evaluation.metrics import EvalParams, prefix_chars
from qspace_frames.tokens import count_tokens, encoding

ENC = EvalParams().encoding
# letters, spaces and the characters the tokenizer treats apart: contractions, digits, line
# breaks, punctuation, multi-byte letters and emoji
ALPHABET = list("abZ  'sdmtlve\n\r\t 12.,-éß中😀")


def plain_bounds(text: str, size: int) -> list[int]:
    """The chunker without shortcuts: cut every `size` tokens, count every chunk by encoding it,
    cut again a chunk over size at its own `size`-token prefix, until none is over."""
    bounds = chunk_bounds([text], size, ENC)[0]  # only the first cuts are taken from it
    while True:
        pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])]
        over = [j for j, n in enumerate(count_tokens(pieces, ENC)) if n > size]
        extra = {
            bounds[j] + c for j, c in zip(over, prefix_chars([pieces[j] for j in over], [size] * len(over), ENC)) if 0 < c < len(pieces[j])
        }
        if not extra:
            return bounds
        bounds = sorted(set(bounds) | extra)


@pytest.mark.parametrize("seed", range(4))
def test_chunk_counts_from_the_edges_are_the_chunks_own_counts(seed):
    rng = random.Random(seed)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 400))) for _ in range(150)]
    texts += ["The party shall disclose it.  Section 2.1: fees — 1,000 USD; isn't it?\n\n" * 9]
    enc = encoding(ENC)
    for size in (1, 2, 3, 5, 8, 13, 64):
        for text, (bounds, counts) in zip(texts, _bounds_batch(texts, size, ENC)):
            assert bounds[0] == 0 and bounds[-1] == len(text)
            assert counts == [len(enc.encode_ordinary(text[a:b])) for a, b in zip(bounds, bounds[1:])]
            assert bounds == plain_bounds(text, size) or len(text) == 0


def test_count_ranked_counts_the_same_prefix_as_counting_everything():
    rng = random.Random(7)
    rows = []
    for q in range(12):
        n = rng.choice([0, 1, 5, 40, 300])
        for i in range(n):
            length = rng.choice([1, 30, 200, 2000])
            rows.append({"query_id": f"q{q:02d}", "text": " ".join(rng.choice(["tok", "en", "1", "é"]) for _ in range(length // 3 + 1))})
    # a unit of many characters and few tokens: the next windows hold none of the query's units
    rows += [{"query_id": "q99", "text": " " * 20_000 + "x"}] + [{"query_id": "q99", "text": "a b c " * 20}] * 50
    ranked = pl.DataFrame(rows, schema={"query_id": pl.String, "text": pl.String}).with_columns(pl.int_range(pl.len()).alias("order"))
    p = EvalParams(budgets=[256], max_tokens=600)
    got = count_ranked(ranked, "text", p)
    every = ranked.with_columns(pl.Series("n_tokens", count_tokens(ranked["text"].to_list(), ENC), dtype=pl.Int64))
    before = (pl.col("n_tokens").cum_sum() - pl.col("n_tokens")).over("query_id")
    loadable = lambda df: df.filter(before < p.max_tokens)  # noqa: E731 - what load_in_order keeps
    assert loadable(got).equals(loadable(every))
    # a query's counted units are a prefix of its ranking that reaches max_tokens or holds all of them
    done = got.group_by("query_id").agg(pl.col("n_tokens").sum(), pl.len())
    total = ranked.group_by("query_id").agg(pl.len().alias("all"))
    assert done.join(total, on="query_id").filter((pl.col("n_tokens") < p.max_tokens) & (pl.col("len") < pl.col("all"))).height == 0


def test_fragment_terms_from_sentences_equal_the_joined_texts_counts():
    from qspace_frames.affordances.sentences import all_sentences
    from qspace_frames.evaluation.bm25 import term_counts
    from qspace_frames.evaluation.qspace import fragment_terms
    from qspace_frames.params import AffordanceParams

    rng = random.Random(3)
    words = [
        "Party",
        "parties",
        "disclose",
        "disclosures",
        "the",
        "of",
        "ΣΟΦΟΣ",
        "ΟΔΟΣ.",
        "İstanbul",
        "3.5",
        "fees",
        "e.g.",
        "(a)",
        "Term.",
        "end!",
        "why?",
        "x_y",
        "naïve",
        "\n",
        "\n\n",
        "  ",
        "\t",
        ".",
    ]
    texts = ["".join(rng.choice(words) + rng.choice([" ", "", "\n", ". "]) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    heads = [rng.choice([None, [], ["Fees"], ["Term", "Parties' Σ"], ["A", "B", "C"]]) for _ in texts]
    units = pl.DataFrame(
        {
            "doc_id": "d",
            "fragment_id": [f"f{i:03d}" for i in range(len(texts))],
            "kind": "paragraph",
            "heading_path": heads,
            "char_start": 0,
            "char_end": [len(t) for t in texts],
            "text": [None if i % 50 == 7 else t for i, t in enumerate(texts)],
        },
        schema_overrides={"heading_path": pl.List(pl.String)},
    ).with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("chunk"))
    s = all_sentences(units.lazy(), AffordanceParams()).select("fragment_id", pl.col("sentence").alias("text")).collect()
    s = s.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("chunk"))
    wanted = pl.DataFrame({"term": ["party", "disclos", "σοφος", "οδος", "fee", "3", "5", "term", "istanbul", "x", "y", "naïv", "b"]})
    s_dl, s_tf = term_counts(s.select(pl.col("chunk").alias("_u"), "text"), wanted)
    dl, tf = fragment_terms(units, s, s_dl, s_tf, wanted)
    joined = units.select(pl.col("chunk").alias("_u"), (pl.col("heading_path").list.join(" ") + pl.lit(" ") + pl.col("text")).alias("text"))
    want_dl, want_tf = term_counts(joined, wanted)
    assert dl.sort("_u").equals(want_dl.sort("_u"))
    assert tf.sort("_u", "term").equals(want_tf.sort("_u", "term"))
    assert want_tf.height > 100 and want_dl["dl"].sum() > 1000


def test_ask_search_terms_counted_in_parts_equal_the_search_texts_counts():
    from qspace_frames.ask.answer import SEARCH, _search_terms
    from qspace_frames.evaluation.bm25 import term_counts

    rng = random.Random(5)
    words = ["Party", "parties", "the", "ΣΟΦΟΣ", "fees.", "3.5", "x_y", "İx", "-", "\n"]
    n = 400
    units = pl.DataFrame(
        {
            "text": [None if i % 97 == 5 else " ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for i in range(n)],
            "heading_path": [rng.choice([None, [], ["Fees"], ["Term", "Parties"]]) for _ in range(n)],
            "document": [rng.choice(["a/party_fees.txt", "b-3.5.md", "ΣΟΦΟΣ.txt"]) for _ in range(n)],
        },
        schema_overrides={"heading_path": pl.List(pl.String)},
    )
    wanted = pl.DataFrame({"term": ["party", "fee", "σοφος", "3", "5", "x", "y", "txt", "md", "a", "b", "term"]})
    dl, tf = _search_terms(units, wanted)
    search = units.with_row_index("_u").select(pl.col("_u").cast(pl.Int64), SEARCH.alias("text"))
    want_dl, want_tf = term_counts(search, wanted)
    assert dl.sort("_u").equals(want_dl.sort("_u"))
    assert tf.sort("_u", "term").equals(want_tf.sort("_u", "term"))
    assert want_tf.height > 100

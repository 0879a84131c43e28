"""Property tests (hypothesis) that the example-based suites do not already cover.

Already elsewhere, not repeated here: single-page fragment offsets and no lost text
(test_fragments.py), vectorised ids equal content ids (test_store.py), the question parser's
schema and row count on short text (test_questions.py). Added here:

- fragments of multi-page documents: grounded offsets into the canonical text and no lost text;
- fragment ids and rows independent of the order documents arrive in and of their batch;
- the question parser on hostile text (control characters, every unicode category, lone
  surrogates, huge questions, given ids): one valid row per question, every value in its
  domain, each row the same whatever batch it is parsed in;
- every loader, fed arbitrary or mutated bytes, returns a status and a one-line reason.
"""

from __future__ import annotations

import random

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qspace_frames.affordances.rules import INTENTS
from qspace_frames.ask.dictionary import load_dictionary
from qspace_frames.ask.parse import (
    LAYOUTS,
    PATTERNS,
    QUESTIONS,
    SHAPES,
    SOURCES,
    parse_questions,
)
from qspace_frames.corpus.loaders import STATUSES, load_file
from qspace_frames.corpus.pages import PAGE_SEP
from qspace_frames.fragments import fragments, lines_of
from qspace_frames.params import CorpusParams, FragmentParams, StructureParams
from qspace_frames.schemas import FRAGMENTS, PAGES, check
from qspace_frames.structure.headings import EDGE_LINES, classify

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# --------------------------------------------------------------------------- fragments

line = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80),
    st.sampled_from(
        [
            "# Heading",
            "## 2.1 Sub",
            "- item",
            "Row 3: a = b",
            "ALL CAPS TITLE",
            "",
            "  ",
            "1. First.",
            "Purchases over $25,000 must be approved by the CFO.",
            "\t",
            "\r",
            "\x0c",
        ]
    ),
    st.builds(lambda n: "A sentence. " * n, st.integers(0, 80)),
)
page_text = st.lists(line, max_size=12).map("\n".join)
document = st.lists(page_text, min_size=1, max_size=4)  # pages of one document
P = FragmentParams(max_chars=200, min_chars=0, hard_wrap_chars=200)


def pages_frame(docs: dict[str, list[str]]) -> pl.DataFrame:
    rows = []
    for did, pages in docs.items():
        pos = 0
        for i, text in enumerate(pages):
            pos += len(PAGE_SEP) if i else 0
            rows.append({"doc_id": did, "page": i + 1, "char_start": pos, "text": text})
            pos += len(text)
    return pl.DataFrame(rows, schema=PAGES)


@settings(max_examples=80, **SETTINGS)
@given(document)
def test_multi_page_offsets_are_grounded_and_no_text_is_lost(pages):
    canonical = PAGE_SEP.join(pages)
    fr = fragments(pages_frame({"d": pages}).lazy(), P).collect()
    check(fr, FRAGMENTS)
    covered = [False] * len(canonical)
    starts = [0]
    for text in pages[:-1]:
        starts.append(starts[-1] + len(text) + len(PAGE_SEP))
    for r in fr.iter_rows(named=True):
        assert canonical[r["char_start"] : r["char_end"]] == r["text"], r
        for i in range(r["char_start"], r["char_end"]):
            covered[i] = True
        if r["kind"] != "section":  # a leaf lies on the page it names (a section may span pages)
            assert r["page"] is not None and 1 <= r["page"] <= len(pages)
            page_start = starts[r["page"] - 1]
            assert page_start <= r["char_start"] and r["char_end"] <= page_start + len(pages[r["page"] - 1]), r
    # Only what the structure sets aside on purpose goes unsearched: a heading's underline, or a
    # line repeated at the top or bottom of the pages (running headers, page numbers)
    lines = classify(lines_of(pages_frame({"d": pages}).lazy()), pages_frame({"d": pages}).lazy(), StructureParams()).collect()
    for r in lines.filter(pl.col("set_aside")).iter_rows(named=True):
        on_page = [x.strip() for x in pages[r["page"] - 1].split("\n") if x.strip()]
        edge = r["line"].strip() in on_page[:EDGE_LINES] + on_page[-EDGE_LINES:]
        assert edge or set(r["line"].strip()) <= set("=-~^*+"), r
        for i in range(r["line_start"], r["line_start"] + len(r["line"])):
            covered[i] = True
    lost = "".join(c for c, cov in zip(canonical, covered) if not cov and not c.isspace())
    assert lost == "", repr(lost[:80])


@settings(max_examples=40, **SETTINGS)
@given(st.lists(document, min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_fragment_ids_do_not_depend_on_document_order_or_batch(docs, rnd):
    named = {f"doc_{i:03d}": pages for i, pages in enumerate(docs)}
    frame = pages_frame(named)
    base = fragments(frame.lazy(), P).collect()
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=rnd.randrange(2**32))
    assert fragments(shuffled.lazy(), P).collect().equals(base)
    did = rnd.choice(sorted(named))  # one document alone gives exactly its rows of the batch
    alone = fragments(pages_frame({did: named[did]}).lazy(), P).collect()
    assert alone.equals(base.filter(pl.col("doc_id") == did))
    assert base["fragment_id"].n_unique() == base.height


# --------------------------------------------------------------------------- the question parser

hostile_text = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=st.characters(blacklist_categories=()), max_size=100),  # surrogates and controls too
    st.text(alphabet=st.characters(max_codepoint=0x9F), max_size=200),  # ASCII and C0/C1 controls
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "\u2028",
            "\ufeff",
            "?" * 1000,
            "Who approves purchases over $25,000?",
            "pages 1-99999999999999999999",
            "between 2025-13-45 and 0000-00-00",
            "if if then then",
            "Q0 0000",
        ]
    ),
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=20), st.integers(600, 1200)),  # huge: past MAX_CHARS
)


@pytest.fixture(scope="module")
def dictionary():
    return load_dictionary()


def assert_valid_rows(out: pl.DataFrame, types: set[str]) -> None:
    check(out, QUESTIONS)
    for row in out.iter_rows(named=True):
        assert row["id"] and isinstance(row["question"], str)
        assert row["answer_shape"] in SHAPES and row["answer_type"] in types
        assert row["decomposition_pattern"] in PATTERNS and row["layout_hint"] in (None, *LAYOUTS)
        assert [i for i in INTENTS if i in row["intents"]] == row["intents"]
        assert (row["condition"] is not None) == (row["decomposition_pattern"] == "conditional")
        for k in row["keywords"]:
            assert k["source"] in SOURCES and 0.0 <= k["weight"] <= 1.0 and k["text"]
        for col in ("pages_hint", "slides_hint"):
            assert all(isinstance(v, int) for v in row[col])
        if not row["question"].strip():
            assert row["ambiguity_reason"] == "empty question"


@settings(max_examples=15, **SETTINGS)
@given(st.lists(hostile_text, min_size=1, max_size=8))
def test_parser_gives_one_valid_row_per_question_whatever_its_batch(dictionary, questions):
    types = set(dictionary.answer_types["answer_type"])
    out = parse_questions(questions, dictionary)
    assert out.height == len(questions)
    assert out["id"].to_list() == [f"q{i + 1}" for i in range(len(questions))]
    assert_valid_rows(out, types)
    # the text is kept, except that lone surrogates (not UTF-8) become U+FFFD
    clean = [q.encode("utf-8", "replace").decode("utf-8") for q in questions]
    assert out["question"].to_list() == clean
    # given ids are kept, and a row does not depend on its batch: the same questions again, in
    # reverse order after themselves, parse to the same rows
    n = len(clean)
    frame = pl.DataFrame({"id": [f"a{i}" for i in range(n)] + [f"b{i}" for i in reversed(range(n))], "question": clean + clean[::-1]})
    again = parse_questions(frame, dictionary)
    assert again["id"].to_list() == frame["id"].to_list()
    assert_valid_rows(again, types)
    first, second = again.head(n).drop("id"), again.tail(n).reverse().drop("id")
    assert first.equals(out.drop("id")) and second.equals(out.drop("id"))


# --------------------------------------------------------------------------- loaders never raise

EXTS = ["txt", "md", "html", "csv", "json", "jsonl", "pdf", "docx", "xlsx", "pptx"]


@pytest.fixture(scope="module")
def seeds() -> dict[str, bytes]:
    """One small valid file per format, to mutate."""
    from test_hostile import _docx_bytes, _pptx_bytes, _text_pdf, _xlsx_bytes

    return {
        "txt": b"Purchases over $25,000 need CFO approval.\n",
        "md": b"# Title\n\nSome *text*.\n",
        "html": b"<html><body><h1>T</h1><p>Para<table><tr><td>a</td></tr></table></body></html>",
        "csv": b"a,b\n1,2\n",
        "json": b'{"a": [1, {"b": "c"}]}',
        "jsonl": b'{"a": 1}\n{"b": 2}\n',
        "pdf": _text_pdf(),
        "docx": _docx_bytes(),
        "xlsx": _xlsx_bytes(),
        "pptx": _pptx_bytes(),
    }


def _mutate(data: bytes, rnd: random.Random, how: str) -> bytes:
    if how == "truncate":
        return data[: rnd.randrange(len(data) + 1)]
    buf = bytearray(data)
    for _ in range(rnd.randint(1, 8)):
        i = rnd.randrange(len(buf) or 1)
        if how == "flip" and buf:
            buf[i] ^= 1 << rnd.randrange(8)
        else:
            buf[i:i] = rnd.randbytes(rnd.randint(1, 16))
    return bytes(buf)


@settings(max_examples=200, **SETTINGS)
@given(
    st.sampled_from(EXTS),
    st.sampled_from(["random", "truncate", "flip", "insert"]),
    st.binary(max_size=2000),
    st.randoms(use_true_random=False),
)
def test_loaders_never_raise_and_always_explain(tmp_path_factory, seeds, ext, how, junk, rnd):
    data = junk if how == "random" else _mutate(seeds[ext], rnd, how)
    path = tmp_path_factory.mktemp("prop") / f"x.{ext}"
    path.write_bytes(data)
    r = load_file(path, ext, CorpusParams())
    assert r.status in STATUSES
    assert "\n" not in r.reason and "\r" not in r.reason and r.reason == r.reason.strip()
    assert r.reason or r.status == "loaded"
    if r.status == "loaded":
        assert r.pages and any(t.strip() for _, t in r.pages)
        assert all(isinstance(t, str) and not any("\ud800" <= c <= "\udfff" for c in t) for _, t in r.pages)
    else:
        assert r.pages == []

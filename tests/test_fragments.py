"""Fragmentation: offsets, hierarchy, limits, exact token counts."""

from __future__ import annotations

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qspace_frames.fragments import fragments
from qspace_frames.params import FragmentParams
from qspace_frames.schemas import FRAGMENTS, PAGES, check
from qspace_frames.tokens import encoding

P = FragmentParams()


def frag(text: str, p: FragmentParams = P, doc: str = "d") -> pl.DataFrame:
    pages = pl.DataFrame([{"doc_id": doc, "page": None, "char_start": 0, "text": text}], schema=PAGES)
    return fragments(pages.lazy(), p).collect()


def assert_grounded(text: str, fr: pl.DataFrame) -> None:
    for r in fr.iter_rows(named=True):
        assert text[r["char_start"] : r["char_end"]] == r["text"], r


DOC = """# Procurement Policy

This policy applies to all employees.

## 3.2 Approvals

Purchases over $25,000 must be approved by the Chief Financial Officer.
- Step one of the list
  wraps onto a second line.
- Second item

3.3 Exceptions

EMERGENCY PURCHASES

Row 1: Item = Laptop; Cost = 1200
Row 2: Item = Desk; Cost = 300
"""


def test_kinds_paths_and_parents():
    fr = frag(DOC)
    check(fr, FRAGMENTS)
    assert_grounded(DOC, fr)
    by_text = {r["text"]: r for r in fr.iter_rows(named=True)}
    sec = by_text["## 3.2 Approvals"]
    assert sec["kind"] == "section" and sec["level"] == 2
    assert sec["heading_path"] == ["Procurement Policy", "3.2 Approvals"]
    assert sec["parent_id"] == by_text["# Procurement Policy"]["fragment_id"]
    rule = by_text["Purchases over $25,000 must be approved by the Chief Financial Officer."]
    assert rule["kind"] == "paragraph" and rule["parent_id"] == sec["fragment_id"]
    item = by_text["- Step one of the list\n  wraps onto a second line."]
    assert item["kind"] == "list_item"
    # '3.3 Exceptions' is a numbered level-2 heading: it closes 3.2 and sits under the level-1 title
    assert by_text["3.3 Exceptions"]["heading_path"] == ["Procurement Policy", "3.3 Exceptions"]
    assert by_text["EMERGENCY PURCHASES"]["kind"] == "section" and by_text["EMERGENCY PURCHASES"]["level"] == 1
    assert by_text["Row 1: Item = Laptop; Cost = 1200"]["kind"] == "table_row"
    assert by_text["Row 2: Item = Desk; Cost = 300"]["heading_path"] == ["EMERGENCY PURCHASES"]


def test_long_paragraph_becomes_sentence_windows_without_cutting_sentences():
    sents = [f"Sentence number {i} says that the amount is $1{i}.5 million for e.g. region {i}." for i in range(40)]
    text = "# T\n\n" + " ".join(sents) + "\n"
    fr = frag(text)
    assert_grounded(text, fr)
    win = fr.filter(pl.col("kind") == "sentence_window")
    assert win.height > 3
    assert (win["text"].str.len_chars() <= P.max_chars).all()
    joined = " ".join(win["text"].to_list())
    for s in sents:  # every sentence lies whole inside one window
        assert any(s in w for w in win["text"].to_list()), s
    assert joined == " ".join(sents)


def test_sentences_end_at_a_terminator_not_at_an_abbreviation():
    """A period ends a sentence when whitespace and a new sentence follow, not after an abbreviation
    a lower-case word follows on the same line, nor after a numbering abbreviation before its number;
    a new line starting lower-case (a record's next key) still starts a new sentence, and the
    pieces tile the text."""
    from qspace_frames.fragments import SENTENCE

    cases = {
        "Oaktree Capital Management, L.P. may be reached by fax. Notices go by mail.": [
            "Oaktree Capital Management, L.P. may be reached by fax. ",
            "Notices go by mail.",
        ],
        "We collect data (e.g. your name) at 10 a.m. on Mondays. See No. 5 and Sec. 4. 2. Term.": [
            "We collect data (e.g. your name) at 10 a.m. on Mondays. ",
            "See No. 5 and Sec. 4. ",
            "2. ",
            "Term.",
        ],
        "Acme Solutions, Inc. 1303 Algonquin Road. Email: a@b.com": ["Acme Solutions, Inc. 1303 Algonquin Road. ", "Email: a@b.com"],
        "text = Step 5: ship the laptop.\nsteps[5].step = 6": ["text = Step 5: ship the laptop.\n", "steps[5].step = 6"],
        "It grew 12.4 percent. He left! Why?": ["It grew 12.4 percent. ", "He left! ", "Why?"],
    }
    for text, want in cases.items():
        got = pl.Series([text]).str.extract_all(SENTENCE).to_list()[0]
        assert got == want and "".join(got) == text


def test_short_fragments_dropped_except_sections():
    text = "# A\n\nok.\n\nThis paragraph is long enough to keep.\n"
    fr = frag(text)
    assert fr["text"].to_list() == ["# A", "This paragraph is long enough to keep."]


def test_giant_line_is_wrapped_not_one_fragment():
    text = "word " * 20000  # 100k characters, no sentence end
    fr = frag(text)
    assert_grounded(text, fr)
    assert fr["text"].str.len_chars().max() <= P.hard_wrap_chars
    assert sum(fr["text"].str.len_chars()) + fr.height >= len(text.strip()) - fr.height


def test_token_counts_are_exact():
    fr = frag(DOC)
    enc = encoding(P.encoding)
    assert fr["n_tokens"].to_list() == [len(enc.encode_ordinary(t)) for t in fr["text"].to_list()]


def test_same_rows_for_a_document_whatever_the_batch():
    a = frag(DOC, doc="d1")
    other = pl.DataFrame(
        [
            {"doc_id": "d0", "page": None, "char_start": 0, "text": "# Other\n\nSome other document text here."},
            {"doc_id": "d1", "page": None, "char_start": 0, "text": DOC},
        ],
        schema=PAGES,
    )
    b = fragments(other.lazy(), P).collect().filter(pl.col("doc_id") == "d1")
    assert a.equals(b)


def test_pages_keep_page_numbers_and_offsets():
    pages = pl.DataFrame(
        [
            {"doc_id": "p", "page": 1, "char_start": 0, "text": "# Title\n\nFirst page paragraph here."},
            {"doc_id": "p", "page": 2, "char_start": 37, "text": "Second page paragraph here."},
        ],
        schema=PAGES,
    )
    text = "# Title\n\nFirst page paragraph here." + "\n\n" + "Second page paragraph here."
    fr = fragments(pages.lazy(), P).collect()
    assert_grounded(text, fr)
    assert fr.filter(pl.col("text").str.starts_with("Second"))["page"].to_list() == [2]
    assert fr.filter(pl.col("text").str.starts_with("Second"))["heading_path"].to_list() == [["Title"]]


line = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=120),
    st.sampled_from(["# Heading", "## 2.1 Sub", "- item", "Row 3: a = b", "ALL CAPS TITLE", "", "   ", "\r", "1. First."]),
    st.builds(lambda n: "A sentence. " * n, st.integers(0, 120)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line, max_size=30), st.integers(50, 400), st.integers(0, 30))
def test_property_offsets_and_no_lost_text(lines, max_chars, min_chars):
    text = "\n".join(lines)
    p = FragmentParams(max_chars=max_chars, min_chars=min_chars, hard_wrap_chars=max(max_chars, 100))
    fr = frag(text, p)
    assert_grounded(text, fr)
    # no lost text: every non-blank character lies in a fragment, unless it belongs to a dropped short one
    covered = [False] * len(text)
    for r in fr.iter_rows(named=True):
        for i in range(r["char_start"], r["char_end"]):
            covered[i] = True
    missing = "".join(c for c, cov in zip(text, covered) if not cov and not c.isspace())
    dropped_budget = sum(1 for _ in missing)
    if min_chars == 0:
        assert missing == "", repr(missing[:80])
    else:
        assert dropped_budget <= len(text)  # only short fragments may be dropped ...
        kept = frag(text, FragmentParams(max_chars=max_chars, min_chars=0, hard_wrap_chars=max(max_chars, 100)))
        short = kept.filter((pl.col("text").str.len_chars() < min_chars) & (pl.col("kind") != "section"))
        assert sum(len("".join(ch for ch in t if not ch.isspace())) for t in short["text"]) == len(missing)


def test_ungrounded_names_the_fragments_not_at_their_offsets():
    """The notebooks' grounding check, a document at a time: a wrong text, an offset past a
    multi-byte character and a fragment of a missing document are found, in any document."""
    from qspace_frames.fragments import ungrounded

    n = 25
    docs = pl.DataFrame({"doc_id": [f"d{i}" for i in range(n)], "doc_text": [f"héllo wörld {i}" for i in range(n)]})
    fr = pl.DataFrame(
        {
            "fragment_id": [f"f{i}" for i in range(n)],
            "doc_id": [f"d{i}" for i in range(n)],
            "char_start": [6] * n,
            "char_end": [11] * n,
            "text": ["wörld"] * n,
        }
    )
    assert ungrounded(fr, docs).is_empty()
    wrong = fr.with_columns(
        pl.when(pl.col("fragment_id").is_in(["f3", f"f{n - 1}"])).then(pl.lit("world")).otherwise(pl.col("text")).alias("text")
    )
    orphan = pl.DataFrame({"fragment_id": ["fx"], "doc_id": ["gone"], "char_start": [0], "char_end": [1], "text": ["h"]})
    got = ungrounded(pl.concat([wrong, orphan]), docs)
    assert sorted(got["fragment_id"]) == sorted(["f3", f"f{n - 1}", "fx"])


def test_ungrounded_reads_a_long_document_once_not_once_per_fragment(tmp_path, root):
    """Notebook 02's check on two long documents of a run (1.9 and 0.9 MB, 9,000 fragments read
    from the store): a join gave each fragment a copy of its document (13.6 GB measured)."""
    import random
    import resource

    from qspace_frames.corpus.pages import document_text
    from qspace_frames.fragments import ungrounded
    from qspace_frames.pipeline import Workbench

    rnd = random.Random(0)
    text = "".join(
        f"The {rnd.choice(['CEO', 'Board', 'Auditor'])} must approve requests over ${rnd.randint(1, 99)},000 "
        f"within {rnd.randint(1, 30)} days. " + ("\n\n" if i % 5 == 4 else "")
        for i in range(30_000)
    )
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text(text, encoding="utf-8")
    (tmp_path / "c" / "b.txt").write_text(text[: len(text) // 2], encoding="utf-8")
    (tmp_path / "p.yaml").write_text(f"store:\n  root: {tmp_path / 'store'}\n", encoding="utf-8")
    wb = Workbench(
        params_file=str(tmp_path / "p.yaml"), corpus_arg=str(tmp_path / "c"), run_name="long", project_root=root, reports_dir=tmp_path / "r"
    )
    fr, docs = wb.read("fragments"), document_text(wb.scan("corpus", "pages")).collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert fr.height == 9_000 and ungrounded(fr, docs).is_empty()
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024 < 1e9  # ru_maxrss: KiB on Linux

"""The question parser: the parser table, the expert dictionary, robustness and the answer-type registry."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qspace_frames.affordances.rules import INTENTS
from qspace_frames.ask.dictionary import (
    REQUIRED_ANSWER_TYPES,
    DictionaryError,
    answer_pattern,
    answer_types,
    load_dictionary,
)
from qspace_frames.ask.parse import (
    LAYOUTS,
    PATTERNS,
    QUESTIONS,
    SHAPES,
    SOURCES,
    parse_questions,
)
from qspace_frames.schemas import check

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "data" / "questions.jsonl"
DICTIONARY = ROOT / "params" / "dictionary"


def _lines() -> list[tuple[int, dict]]:
    out = []
    for n, line in enumerate(TABLE.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            out.append((n, json.loads(line)))
    return out


LINES = _lines()
CASES = [(n, field) for n, row in LINES for field in row["expect"]]

# expectation keys that are not columns: how each is checked
DERIVED = {"vague", "ambiguity_reason_contains", "keywords_include", "keywords_exclude", "anchors", "expands_concept"}


@pytest.fixture(scope="module")
def dictionary():
    return load_dictionary(DICTIONARY)


@pytest.fixture(scope="module")
def parsed(dictionary) -> dict[int, dict]:
    """The whole table through ONE call: many questions in, one frame out."""
    frame = pl.DataFrame({"id": [f"line{n}" for n, _ in LINES], "question": [r["question"] for _, r in LINES]})
    out = parse_questions(frame, dictionary)
    check(out, QUESTIONS)
    assert out.height == len(LINES) and out["id"].to_list() == frame["id"].to_list()
    return {n: row for (n, _), row in zip(LINES, out.iter_rows(named=True))}


def _jsonable(v):
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


# ---- the parser table ------------------------------------------------------------------------


def test_table_is_large_and_covers_every_field_and_pattern():
    assert len(LINES) >= 80
    fields = {f for _, r in LINES for f in r["expect"]}
    columns = set(QUESTIONS) - {"id", "question"}
    assert columns - {"keywords"} <= fields | {"keywords"}, columns - fields
    for pattern in PATTERNS:
        n = sum(1 for _, r in LINES if r["expect"].get("decomposition_pattern") == pattern)
        assert n >= 6, (pattern, n)
    assert sum(1 for _, r in LINES if r["expect"].get("vague") is True) >= 8
    assert sum(1 for _, r in LINES if r["expect"].get("dictionary_ambiguities")) >= 3


@pytest.mark.parametrize("n,field", CASES, ids=[f"line{n}-{f}" for n, f in CASES])
def test_parser_table(parsed, dictionary, n, field):
    row = parsed[n]
    want = dict(LINES[[m for m, _ in LINES].index(n)][1]["expect"])[field]
    where = f"line {n}: {row['question']!r}"
    kws = row["keywords"]
    if field == "vague":
        assert (row["ambiguity_reason"] is not None) == want, (where, row["ambiguity_reason"])
        assert (row["suggested_clarification"] is not None) == want, (where, row["suggested_clarification"])
    elif field == "ambiguity_reason_contains":
        assert row["ambiguity_reason"] and want in row["ambiguity_reason"], (where, row["ambiguity_reason"])
    elif field == "keywords_include":
        for spec in want:
            found = [k for k in kws if k["text"] == spec["text"]]
            assert found, (where, spec, [k["text"] for k in kws])
            for key, value in spec.items():
                assert found[0][key] == value, (where, spec, found[0])
    elif field == "keywords_exclude":
        texts = {k["text"] for k in kws}
        assert not texts & set(want), (where, texts & set(want))
    elif field == "anchors":
        got = sorted(k["text"] for k in kws if k["source"] == "anchor")
        assert got == sorted(want), (where, got)
    elif field == "expands_concept":
        variants = dictionary.keywords.filter(pl.col("concept") == want)
        texts = {(k["text"], k["semantic_group"], k["is_regex"]) for k in kws}
        for text, is_rx in variants.select("pattern", "is_regex").iter_rows():
            assert (text, want, is_rx) in texts, (where, text)
        assert set(variants["language"]) >= {"en", "fr", "de"}
    else:
        assert field in QUESTIONS, f"line {n}: unknown field {field!r}"
        assert _jsonable(row[field]) == want, (where, field, row[field])


def test_every_row_is_well_formed(parsed, dictionary):
    types = set(dictionary.answer_types["answer_type"])
    for n, row in parsed.items():
        assert row["answer_shape"] in SHAPES and row["answer_type"] in types
        assert row["decomposition_pattern"] in PATTERNS
        assert row["layout_hint"] in (None, *LAYOUTS)
        assert set(row["intents"]) <= set(INTENTS)
        assert [i for i in INTENTS if i in row["intents"]] == row["intents"], "intents follow the detector order"
        assert (row["condition"] is not None) == (row["decomposition_pattern"] == "conditional"), n
        assert row["scope_condition"] == row["condition"]
        if row["decomposition_pattern"] in ("independent", "sequential", "unified"):
            assert len(row["sub_questions"]) >= 2, n
        keys = [(k["text"].lower() if not k["is_regex"] else "re:" + k["text"]) for k in row["keywords"]]
        assert len(keys) == len(set(keys)), f"line {n}: duplicate keywords"
        for k in row["keywords"]:
            assert k["source"] in SOURCES and 0.0 <= k["weight"] <= 1.0
            if k["source"] == "anchor":
                assert k["semantic_group"] == "anchor" and not k["is_regex"]


def test_keywords_are_ordered_and_deterministic(dictionary):
    qs = [r["question"] for _, r in LINES]
    a = parse_questions(qs, dictionary)
    b = parse_questions(list(reversed(qs)), dictionary)
    assert a.drop("id").equals(b.drop("id").reverse())  # a question parses the same whatever the batch
    rank = {s: i for i, s in enumerate(SOURCES)}
    for kws in a["keywords"].to_list():
        assert [rank[k["source"]] for k in kws] == sorted(rank[k["source"]] for k in kws)


def test_hedges_conjunctions_and_light_verbs_are_no_keywords(dictionary):
    """A sentence need not hold "roughly", "once", "through" or "gets" to answer: they say nothing
    of what the question is about, and each one missing cost a right answer its coverage."""
    qs = [
        "Once a collaborator nomination goes through, who handles onboarding?",
        "Roughly how many source packages are in the archive?",
        "Who can I call if my flight gets cancelled while I'm travelling?",
    ]
    words = [{k["text"].lower() for k in kws} for kws in parse_questions(qs, dictionary)["keywords"].to_list()]
    assert all(not w & {"once", "goes", "through", "roughly", "gets", "while"} for w in words), words
    assert {"nomination", "collaborator", "handles"} <= words[0] and {"source", "packages"} <= words[1]
    assert {"call", "cancelled"} <= words[2]


def test_strongest_source_wins_on_duplicates(dictionary):
    row = parse_questions(['Who approves the "SLA" for EBITDA reporting?'], dictionary).row(0, named=True)
    by_text = {k["text"].lower(): k for k in row["keywords"]}
    assert by_text["sla"]["source"] == "direct"  # direct beats dictionary, anchor and question word
    assert by_text["ebitda"]["source"] == "expert_dictionary" and by_text["ebitda"]["semantic_group"] == "ebitda"
    assert by_text["reporting"]["source"] == "question" and by_text["reporting"]["weight"] == 0.5


def test_ids_given_or_generated(dictionary):
    out = parse_questions(["Who owns the travel policy?", "What is the FY2026 budget?"], dictionary)
    assert out["id"].to_list() == ["q1", "q2"]
    out = parse_questions(pl.DataFrame({"id": [7, None], "question": ["a", None]}), dictionary)
    assert out["id"].to_list() == ["7", "q2"] and out["question"].to_list() == ["a", None]
    with pytest.raises(ValueError, match="question"):
        parse_questions(pl.DataFrame({"text": ["a"]}), dictionary)


# ---- the expert dictionary ---------------------------------------------------------------------


def test_starter_dictionary_size_and_languages(dictionary):
    assert dictionary.concepts.height >= 25
    langs = dictionary.keywords.group_by("concept").agg(pl.col("language").unique())
    multilingual = langs.filter(pl.col("language").list.set_intersection(["fr", "de"]).list.len() == 2)
    assert multilingual.height >= 25
    for c in (
        "approval",
        "approver",
        "threshold",
        "purchase order",
        "expense report",
        "reimbursement",
        "travel",
        "hotel",
        "budget",
        "variance",
        "forecast",
        "revenue",
        "gross margin",
        "churn",
        "ebitda",
        "sla",
        "incident",
        "escalation",
        "onboarding",
        "vendor",
        "data classification",
        "confidential",
        "effective date",
        "owner",
        "exception",
    ):
        assert c in set(dictionary.concepts["concept"]), c
    assert {"country", "region", "currency"} <= set(dictionary.value_sets["set"])


def test_a_keyword_pulls_every_variant_in_every_language(dictionary):
    row = parse_questions(["Welche Genehmigung braucht ein Einkauf?"], dictionary).row(0, named=True)
    got = {(k["text"], k["semantic_group"]) for k in row["keywords"] if k["source"] == "expert_dictionary"}
    for concept in ("approval", "purchase"):
        want = dictionary.keywords.filter(pl.col("concept") == concept)
        assert set(want["language"]) == {"en", "fr", "de", "es"}
        for text in want["keyword"]:
            assert (text, concept) in got, (concept, text)
    # weights come from the table
    table = {r["keyword"]: r["weight"] for r in dictionary.keywords.filter(pl.col("concept") == "approval").iter_rows(named=True)}
    for k in row["keywords"]:
        if k["semantic_group"] == "approval":
            assert k["weight"] == table[k["text"]]


def test_shared_keyword_resolved_by_definition_overlap_or_flagged(dictionary):
    shared = (
        dictionary.keywords.filter(~pl.col("is_regex")).group_by("key").agg(pl.col("concept").n_unique().alias("n")).filter(pl.col("n") > 1)
    )
    assert shared.height >= 3  # the starter dictionary ships genuinely ambiguous keywords
    out = parse_questions(
        [
            "What is the hotel cap in Paris?",  # cap: per diem (hotel) vs threshold
            "What is the cap for purchases needing competitive quotes?",
            "What is the cap?",
        ],
        dictionary,
    ).rows(named=True)
    groups = [{k["semantic_group"] for k in r["keywords"] if k["text"] == "cap"} for r in out]
    assert groups[0] == {"per diem"} and groups[1] == {"threshold"} and groups[2] == {None}
    assert [r["dictionary_ambiguities"] for r in out] == [[], [], ["cap"]]
    assert "per diem" not in {k["semantic_group"] for k in out[2]["keywords"]}


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "dictionary"
    shutil.copytree(DICTIONARY, d)
    return d


def _edit(path: Path, old: str, new: str):
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    "file,old,new,message",
    [
        (
            "concept_keywords.csv",
            "approval,en,approval,1,1.0",
            "approval,en,approval,1,high",
            r"concept_keywords\.csv, row 1 .*'weight': must be a number in 0\.\.1; got 'high'",
        ),
        (
            "concept_keywords.csv",
            "approval,en,approval,1,1.0",
            "approval,en,approval,1,1.5",
            r"concept_keywords\.csv, row 1 .*'weight': must be a number in 0\.\.1",
        ),
        (
            "concept_keywords.csv",
            "approval,en,approve,2,0.8",
            "aproval,en,approve,2,0.8",
            r"concept_keywords\.csv, row 2 .*'concept': unknown concept",
        ),
        ("concept_keywords.csv", "approval,en,approve,2,0.8", "approval,english,approve,2,0.8", r"row 2 .*'language'"),
        ("concept_keywords.csv", "approval,en,approve,2,0.8", "approval,en,approve,first,0.8", r"row 2 .*'priority': must be an integer"),
        (
            "concept_keywords.csv",
            "approval,en,approve,2,0.8",
            "approval,en,re:(unclosed,2,0.8",
            r"row 2 .*'keyword': regex does not compile",
        ),
        ("concept_keywords.csv", "approval,en,approve,2,0.8", "approval,en,approval,2,0.8", r"row 2 .*duplicate keyword"),
        ("concepts.csv", "approver,", "approval,", r"concepts\.csv, row 2 .*duplicate concept"),
        ("concepts.csv", ",general\n", ",General Stuff\n", r"concepts\.csv, row 1 .*'document_family'"),
        (
            "answer_types.csv",
            r"\b[A-Za-z0-9._%+-]+@",
            r"\b[A-Za-z0-9._%+-]+@(",
            r"answer_types\.csv, row 1 .*'retrieval_patterns': regex does not compile",
        ),
        (
            "answer_types.csv",
            r"(?i)\be-?mails?\b",
            r"(?i)(?<=x)\be-?mails?\b",
            r"answer_types\.csv, row 1 .*'question_cues': regex does not compile in Polars",
        ),
        ("answer_types.csv", "\nphone,4,", "\nphone,1,", r"answer_types\.csv, row \d .*duplicate priority"),
        ("answer_types.csv", "(?i)\\b(?:mailbox|", "(?i)\\b(?:mailbox(|", r"answer_types\.csv, row \d+ .*'shown_by': regex does not"),
        ("value_sets.csv", "country,DE,Germany,iso2", "country,DE,Germany,postcode", r"value_sets\.csv, row 2 .*'kind'"),
        (
            "value_sets.csv",
            "country,DEU,Germany,iso3",
            "country,DEU,Germany,iso3\ncountry,Royaume Uni,France,native",
            r"value_sets\.csv, row \d+ .*'value': spelling maps to two canonical values in set 'country'; got 'Royaume.Uni'",
        ),
        (
            "concept_keywords.csv",
            "concept,language,keyword,priority,weight",
            "concept,lang,keyword,priority,weight",
            r"concept_keywords\.csv: missing column\(s\) \['language'\]",
        ),
        (
            "concept_keywords.csv",
            "approval,en,approve,2,0.8",
            "approval,en,approve,2,0.8,extra",
            r"concept_keywords\.csv: cannot be read as CSV: row 2 has 6 fields",
        ),
    ],
)
def test_bad_dictionary_fails_with_a_clear_message(tmp_path, file, old, new, message):
    d = _copy(tmp_path)
    _edit(d / file, old, new)
    with pytest.raises(DictionaryError, match=message) as e:
        load_dictionary(d)
    assert file in str(e.value)


def test_missing_answer_type_and_missing_file(tmp_path):
    d = _copy(tmp_path)
    lines = (d / "answer_types.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (d / "answer_types.csv").write_text("".join(line for line in lines if not line.startswith("iban,")), encoding="utf-8")
    with pytest.raises(DictionaryError, match=r"answer_types\.csv: missing required answer type\(s\) \['iban'\]"):
        load_dictionary(d)
    d = _copy(tmp_path / "again")
    (d / "value_sets.csv").unlink()
    with pytest.raises(DictionaryError, match=r"value_sets\.csv: dictionary file missing"):
        load_dictionary(d)


def test_an_edited_dictionary_changes_the_parse(tmp_path):
    d = _copy(tmp_path)
    with (d / "concept_keywords.csv").open("a", encoding="utf-8") as fh:
        fh.write("hotel,es,hostería,3,0.6\n")
    row = parse_questions(["What is the hotel cap in Paris?"], load_dictionary(d)).row(0, named=True)
    assert ("hostería", "hotel") in {(k["text"], k["semantic_group"]) for k in row["keywords"]}


# ---- robustness ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=300),
            st.sampled_from(
                [
                    "",
                    " ",
                    "???",
                    "\x00",
                    "“”",
                    "'",
                    '"',
                    "pages 1-99999999999",
                    "é" * 50,
                    "and and and ; then if",
                    "between and",
                    "Q9 2025",
                    "FY99",
                    "section",
                ]
            ),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_never_raises_one_row_per_input(dictionary, questions):
    out = parse_questions(questions, dictionary)
    check(out, QUESTIONS)
    assert out.height == len(questions)
    assert out["question"].to_list() == questions


def test_edge_inputs(dictionary):
    huge = "Who approves purchases over $25,000 and " * 20_000
    qs = ["", "   ", "?!?…", "🙂🙂🙂", "\x00\x01", huge, "pages 1 to 99999999999999999999", "Q2 2025 " * 500, "\ud800 lone surrogate"]
    out = parse_questions(qs, dictionary)
    check(out, QUESTIONS)
    assert out.height == len(qs)
    assert out["ambiguity_reason"][0] == "empty question"
    assert all(len(p) <= 501 for p in out["pages_hint"].to_list())
    assert out.filter(pl.col("id") == "q6")["intents"][0].to_list() == ["approval_lookup", "threshold_lookup"]
    assert parse_questions([], dictionary).height == 0


# ---- the answer-type registry ----------------------------------------------------------------------

SAMPLES = {
    "amount": ["Purchases over $25,000 need CFO approval.", "above EUR 20,000", "a cap of 250 USD per night", "£1.5 million"],
    "date": ["effective January 1, 2025", "effective 2025-03-01", "published on 3 June 2023", "due 12/31/2025", "since March 2024"],
    "percentage": ["gross margin was 42.5%", "at least 15 percent"],
    "duration": ["within 4 hours", "within 5 business days", "no later than forty-eight (48) hours", "a 30-minute window: 30 min"],
    "email": ["write to procurement@northwind.example", "contact our officer at dpo[at]github[dot]com", "jane (at) example (dot) org"],
    "iban": ["IBAN DE89 3704 0044 0532 0130 00", "GB29NWBK60161331926819"],
    "role": ["approved by the Chief Financial Officer", "the Procurement Team owns it", "escalate to the CISO", "the direct manager"],
    "count": ["at least three written quotes", "requires 3 quotes"],
    "url": ["see https://intranet.example.com/policies", "www.northwind.example/travel"],
    "phone": ["call +1 (555) 010-2233", "hotline +44 20 7946 0958", "(555) 010-2233"],
    "text": ["Any sentence at all."],
}
NEGATIVE = {
    "amount": "The policy applies to all employees.",
    "date": "Purchases over $25,000 need approval.",
    "percentage": "Purchases over $25,000 need approval.",
    "duration": "The Procurement Team owns the policy.",
    "email": "The Procurement Team owns the policy.",
    "iban": "The Procurement Team owns the policy.",
    "url": "The Procurement Team owns the policy.",
    "phone": "The Procurement Team owns the policy.",
}


def test_a_dictionary_written_before_shown_by_still_loads(tmp_path):
    """`shown_by` is optional: an answer_types.csv without the column loads, every type shown by its
    retrieval patterns alone."""
    d = _copy(tmp_path)
    at = pl.read_csv(d / "answer_types.csv", infer_schema=False)
    at.drop("shown_by").write_csv(d / "answer_types.csv")
    reg = answer_types(load_dictionary(d))
    assert reg["shown"].list.len().sum() == 0 and reg["patterns"].list.len().min() >= 1
    assert answer_types(load_dictionary())["shown"].list.len().sum() >= 2  # the project's: a contact's way in, a duration's bound


def test_registry_has_every_required_type(dictionary):
    reg = answer_types(dictionary)
    assert set(REQUIRED_ANSWER_TYPES) <= set(reg["answer_type"])
    assert reg.columns == ["answer_type", "priority", "description", "question_cues", "retrieval_patterns", "patterns", "shown_by", "shown"]
    assert set(SAMPLES) == set(REQUIRED_ANSWER_TYPES)


@pytest.mark.parametrize("answer_type", REQUIRED_ANSWER_TYPES)
def test_retrieval_patterns_compile_and_confirm(dictionary, answer_type):
    reg = answer_types(dictionary).filter(pl.col("answer_type") == answer_type)
    patterns = reg["patterns"][0].to_list()
    assert patterns
    for p in patterns:
        re.compile(p)  # Python
        pl.select(pl.lit("x").str.contains(p))  # Polars (Rust regex)
    combined = answer_pattern(answer_type, dictionary)
    lines = pl.Series(SAMPLES[answer_type])
    assert lines.str.contains(combined).all(), lines.filter(~lines.str.contains(combined)).to_list()
    assert all(re.search(combined, s) for s in SAMPLES[answer_type])
    if answer_type in NEGATIVE:
        assert not re.search(combined, NEGATIVE[answer_type])


def test_answer_pattern_unknown_type(dictionary):
    with pytest.raises(KeyError, match="unknown answer type"):
        answer_pattern("colour", dictionary)


def test_a_vague_question_is_offered_the_concepts_its_ambiguous_keyword_may_mean(dictionary):
    """'cap' is a keyword of two concepts: a vague question naming it is asked which one, a clear
    question or one without an ambiguous keyword is offered nothing."""
    got = parse_questions(["What is the cap?", "Who approves it?", "What is the hotel cap per night in London?"], dictionary)
    assert got["clarification_options"].to_list() == [["per diem", "threshold"], [], []]
    assert got["suggested_clarification"][0].endswith("Do you mean per diem or threshold?")
    assert got["suggested_clarification"][2] is None

"""Scoring `ask` against a question set, and the development question set itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from qspace_frames.ask.accuracy import QuestionSetError, ask_set, by_kind, read_question_set, score
from qspace_frames.ask.answer import ANSWERS, ScopeError
from qspace_frames.corpus.pages import document_text
from qspace_frames.pipeline import Workbench


def answers(*rows: dict) -> pl.DataFrame:
    blank = {k: None for k in ANSWERS}
    return pl.DataFrame([blank | r for r in rows], schema=ANSWERS)


def part(quote: str | None) -> dict:
    """A part of a compound answer: answered with `quote`, or not (None)."""
    return {"question": "q", "status": "answered" if quote else "no_answer", "quote": quote}


def questions(*rows: dict) -> pl.DataFrame:
    return pl.DataFrame([{"document": None, "corpus": None, "split": "dev"} | r for r in rows])


def test_a_question_is_right_when_every_expected_string_is_quoted():
    q = questions(
        {"id": "a", "question": "q", "kind": "role", "answers": ["approved by the\nChief Financial Officer"]},
        {"id": "b", "question": "q", "kind": "compound", "answers": ["five percent", "three percent"]},
        {"id": "c", "question": "q", "kind": "compound", "answers": ["five percent", "ten days"]},
        {"id": "d", "question": "q", "kind": "unanswerable", "answers": []},
        {"id": "e", "question": "q", "kind": "unanswerable", "answers": []},
        {"id": "f", "question": "q", "kind": "date", "answers": ["March 1"]},
        {"id": "g", "question": "q", "kind": "date", "answers": ["March 1"]},
        {"id": "h", "question": "q", "kind": "date", "answers": ["March 1"]},
        {"id": "i", "question": "q", "kind": "unanswerable", "answers": []},
    )
    a = answers(
        {"status": "answered", "quote": "Purchases must be  approved by the Chief\n  Financial Officer."},  # whitespace runs are one space
        {"status": "compound", "sub_answers": [part("Fees are five percent."), part("The fund gets three percent.")]},
        {"status": "compound", "sub_answers": [part("Fees are five percent."), part(None)]},
        {"status": "no_answer"},
        {"status": "answered", "quote": "Something."},
        {"status": "answered", "quote": "It starts on April 2."},
        {"status": "clarification"},
        {"status": "no_answer"},
        {"status": "compound", "sub_answers": [part(None), part(None)]},  # no part answered: declined
    )
    got = score(q, a)
    assert got["outcome"].to_list() == [
        "right",
        "right",
        "part missing",
        "declined rightly",
        "answered the unanswerable",
        "wrong text",
        "clarification asked",
        "no answer",
        "declined rightly",
    ]
    assert got["right"].to_list() == [True, True, False, True, False, False, False, False, True]
    table = {(r["kind"]): (r["right"], r["questions"]) for r in by_kind(got).iter_rows(named=True)}
    assert table["answerable"] == (2, 6) and table["unanswerable"] == (2, 3) and table["compound"] == (1, 2)


MALFORMED = [
    (b'{"id": "a", "question": "Who?", "kind": "role", "answers": ["x y z"]}\n{"id": "b", "question": "", "kind": "role"}\n',
     r"set.jsonl:2: key 'question' must be a non-empty string"),
    (b'{"id": "a", "question": "Who?", "kind": "role", "answers": "x"}\n', r"set.jsonl:1: key 'answers' must be a list"),
    (b'{"id": "a", "question": "Who?", "kind": "role"}\n{"id": "a", "question": "When?", "kind": "date"}\n', "question ids repeated: a"),
    (b'{"id": "a", "question": "Who?", "kind": "role", "scope": ["a.md"]}\n', r"set.jsonl:1: key 'scope' must be a non-empty string"),
    # found by a helper feeding odd files to qspace ask --questions: each was a traceback
    (b'{"id": "a", "question": "Who?", "kind": "role"}\n{"id": "b", "question": "Caf\xe9?", "kind": "role"}\n',
     r"set.jsonl:2: not UTF-8 text \(byte 0xe9\)"),
    (b"5\n", r"set.jsonl:1: a question must be a JSON object, not int"),
    (b'{"id": "a", "question": "Who?", "kind": "role", "corpus": {"x": 1}}\n', r"set.jsonl:1: key 'corpus' must be a string"),
    (None, r"set.jsonl: cannot be read \(No such file or directory\)"),
]  # fmt: skip


@pytest.mark.parametrize("content, message", MALFORMED)
def test_a_malformed_question_set_names_file_line_and_key(tmp_path, content, message):
    f = tmp_path / "set.jsonl"
    if content is not None:
        f.write_bytes(content)
    with pytest.raises(QuestionSetError, match=message):
        read_question_set(f)


def dev_set(root) -> pl.DataFrame:
    return read_question_set(*sorted((root / "tests" / "data" / "ask_dev").glob("*.jsonl")))


def test_the_development_set_has_every_kind_the_issue_asks_for(root):
    qs = dev_set(root)
    kinds = dict(qs.group_by("kind").len().rows())
    assert qs.height >= 250
    for kind in ("casual", "compound", "steps", "yes_no", "contact"):
        assert kinds[kind] >= 20, kind
    assert kinds["unanswerable"] >= 25
    assert set(qs["split"]) == {"dev", "holdout"} and (qs["split"] == "holdout").sum() >= 60  # a part kept aside
    held = {"policy-18f-handbook", "policy-github-site-policy"}  # kept for the independent check
    assert not held & set(qs["corpus"])
    bad = qs.filter((pl.col("kind") == "unanswerable") != (pl.col("answers").list.len() == 0))
    assert bad.is_empty(), bad["id"].to_list()


@pytest.fixture(scope="module")
def wb(tmp_path_factory, root):
    d = tmp_path_factory.mktemp("accuracy")
    (d / "p.yaml").write_text(f"store:\n  root: {d / 'store'}\n")
    return Workbench(params_file=str(d / "p.yaml"), corpus_arg="sample_corpus", run_name="acc", project_root=root, reports_dir=d)


def test_sample_corpus_answers_are_verbatim_in_the_loaded_documents(wb, root):
    """Every expected string of the sample corpus's questions is in its document's loaded text
    (whitespace runs as one space), so a right answer can quote it."""
    qs = dev_set(root).filter(pl.col("corpus") == "sample_corpus")
    text = document_text(wb.scan("corpus", "pages")).join(wb.scan("corpus", "inventory").select("doc_id", "path"), on="doc_id").collect()
    flat = {p: re.sub(r"\s+", " ", t) for p, t in text.select("path", "doc_text").rows()}
    for r in qs.filter(pl.col("document").is_not_null()).iter_rows(named=True):
        for a in r["answers"]:
            assert re.sub(r"\s+", " ", a) in flat[r["document"]], (r["id"], a)


def test_ask_command_scores_a_question_set(root, tmp_path, capsys, monkeypatch):
    from qspace_frames.cli import main

    monkeypatch.setenv("QSPACE_REPORTS", str(tmp_path / "reports"))
    monkeypatch.setenv("QSPACE_STORE", str(tmp_path / "store"))
    f = tmp_path / "set.jsonl"
    lines = [
        {"id": "cfo", "question": "Who must approve purchases over $25,000?", "kind": "role", "answers": ["Chief Financial Officer"]},
        {"id": "mars", "question": "What is the budget for the Mars office?", "kind": "unanswerable", "answers": []},
    ]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["ask", "--questions", str(f), "--json"]) == 0
    got = {r["id"]: r["outcome"] for r in json.loads(capsys.readouterr().out)}
    assert got == {"cfo": "right", "mars": "declined rightly"}
    assert main(["ask", "--questions", str(f), "Who?"]) == 2
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n")
    capsys.readouterr()
    assert main(["ask", "--questions", str(blank)]) == 2
    assert "blank.jsonl: no question" in capsys.readouterr().err
    # a scope naming no document: an error naming it, no answer
    capsys.readouterr()
    assert main(["ask", "--within", "hr/*.md", "Who must approve purchases over $25,000?"]) == 2
    assert "--within: no document of the corpus matches 'hr/*.md'" in capsys.readouterr().err
    assert main(["ask", "--within", "policy/*", "--json", "Who must approve purchases over $25,000?"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["citation"]["document"] == "policy/procurement_policy.md"


def test_ask_command_answers_from_a_folder_named_with_corpus(root, tmp_path, capsys, monkeypatch):
    """`qspace ask --corpus FOLDER` answers from a folder no run has read (a newcomer's first try:
    it was 'unrecognized arguments'), recorded as the run 'ask' (the default run is left alone); a
    folder that is not there, or a file, is an error saying so."""
    from qspace_frames.cli import main

    monkeypatch.setenv("QSPACE_REPORTS", str(tmp_path / "reports"))
    monkeypatch.setenv("QSPACE_STORE", str(tmp_path / "store"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text("# Annual leave\n\nEmployees may carry over at most five days of annual leave into the next year.\n")
    assert main(["ask", "--corpus", str(docs), "--json", "How many days of annual leave can be carried over into the next year?"]) == 0
    got = json.loads(capsys.readouterr().out)[0]
    assert got["status"] == "answered" and "at most five days" in got["quote"] and got["citation"]["document"] == "leave.md"
    assert (tmp_path / "reports" / "ask" / "artifacts.json").is_file() and not (tmp_path / "reports" / "default").exists()
    assert main(["ask", "--corpus", str(tmp_path / "nope"), "Who?"]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["ask", "--corpus", str(docs / "leave.md"), "Who?"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_a_question_is_answered_within_the_documents_its_scope_names(wb):
    """A scope is a glob over the documents' paths or file names: within the procurement policy the
    CFO rule answers; within the SOPs, which do not hold it, it does not; a scope naming no document
    is an error saying so. A question set is answered in its order, each question within its scope."""
    q = "Who must approve purchases over $25,000?"
    whole = wb.ask([q]).row(0, named=True)
    assert whole["status"] == "answered" and whole["document"] == "policy/procurement_policy.md", whole["quote"]
    assert wb.ask([q], "procurement_policy.md").row(0, named=True)["quote"] == whole["quote"]
    elsewhere = wb.ask([q], ["sop/*", "*.jsonl"]).row(0, named=True)
    assert elsewhere["quote"] != whole["quote"] and elsewhere["document"] in (None, "sop/vendor_onboarding.jsonl")
    with pytest.raises(ScopeError, match="no document of the corpus matches 'policies/\\*'"):
        wb.ask([q], "policies/*")

    scopes = [None, "sop/*", None]
    asked = questions(*({"id": str(i), "question": q, "kind": "role", "answers": [], "scope": s} for i, s in enumerate(scopes)))
    got = ask_set(wb.ask, asked)
    assert got["quote"].to_list() == [whole["quote"], elsewhere["quote"] if elsewhere["document"] else None, whole["quote"]]


def test_the_sample_corpus_questions_hold_their_floor(wb, root):
    """The floor reached on the development set's sample-corpus questions (issue 21 raises it):
    37 of 45 right, 33 of the 40 answerable and 4 of the 5 unanswerable declined."""
    qs = dev_set(root).filter(pl.col("corpus") == "sample_corpus")
    _holds_floor(score(qs, wb.ask(qs["question"].to_list())), 33, 4)


def _holds_floor(scored: pl.DataFrame, right: int, declined: int) -> None:
    """At least `right` answerable questions right and `declined` unanswerable ones declined."""
    answerable = scored.filter(pl.col("kind") != "unanswerable")
    assert answerable["right"].sum() >= right, answerable.filter(~pl.col("right"))["id"].to_list()
    assert scored.filter(pl.col("kind") == "unanswerable")["right"].sum() >= declined


# (answerable right, unanswerable declined) reached on the development set's questions (both
# splits) of the two largest real corpora, asked as `qspace ask --questions` asks them
REAL_FLOORS = {"debian-policy": (45, 6), "contracts-cuad": (43, 6)}


@pytest.mark.parametrize("corpus", sorted(REAL_FLOORS))
def test_the_real_corpora_questions_hold_their_floor(corpus, corpus_workbench, root):
    """The Debian manuals' and CUAD contracts' questions of the development set, each within its
    scope: at least the floor reached (issue 21 raises it), every quote cited in its document."""
    qs = dev_set(root).filter(pl.col("corpus") == corpus)
    wb = corpus_workbench(corpus)
    got = ask_set(wb.asker(), qs)
    _holds_floor(score(qs, got), *REAL_FLOORS[corpus])
    text = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    for a in got.filter(pl.col("status") == "answered").iter_rows(named=True):
        assert text[a["doc_id"]][a["char_start"] : a["char_end"]] == a["quote"], a["id"]


@pytest.mark.parametrize("name", ["policy.jsonl", "policy2.jsonl"])
def test_the_independent_check_is_verbatim_and_apart_from_the_development_set(root, corpora, name):
    """tests/data/ask_check/: every expected string is in its document (whitespace runs as one space),
    its corpora are those the development set leaves out, and every question is held out."""
    qs = read_question_set(root / "tests" / "data" / "ask_check" / name)
    assert qs.height >= 50 and set(qs["split"]) == {"holdout"}
    assert set(qs["corpus"]) == {"policy-18f-handbook", "policy-github-site-policy"}
    assert not set(qs["corpus"]) & set(dev_set(root)["corpus"])
    assert (qs["kind"] == "unanswerable").sum() >= 5
    for r in qs.filter(pl.col("document").is_not_null()).iter_rows(named=True):
        text = re.sub(r"\s+", " ", (corpora / r["corpus"] / r["document"]).read_text(encoding="utf-8"))
        for a in r["answers"]:
            assert re.sub(r"\s+", " ", a).strip() in text, (r["id"], a)


UNSEEN_SETS = sorted(p.stem for p in (Path(__file__).parent / "data" / "ask_unseen").glob("*.jsonl"))


@pytest.mark.parametrize("name", UNSEEN_SETS)
def test_each_unseen_set_reads_and_names_a_folder_the_fetch_script_makes(root, name):
    """tests/data/ask_unseen/: each set is a valid question set of 45 answerable and 5 unanswerable
    questions over the one folder `scripts/unseen_corpora.py` fetches for it (its documents among
    the files fetched), with a held-out part."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("unseen_corpora", root / "scripts" / "unseen_corpora.py")
    fetcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetcher)
    qs = read_question_set(root / "tests" / "data" / "ask_unseen" / f"{name}.jsonl")
    assert qs.height == 50 and (qs["answers"].list.len() == 0).sum() == 5
    assert set(qs["corpus"]) == {f"unseen/{name}"} and name in fetcher.SETS
    assert "holdout" in set(qs["split"])
    assert set(qs["document"].drop_nulls()) <= {file for *_, files in fetcher.sources(name) for file in files}


def test_only_the_questions_a_corpus_can_be_asked_are_asked_of_it():
    """A question set written over PolicyQA's policies converted one file each, run on the folder
    as it is (dev.json): notebook 08 stopped on a ScopeError. The questions whose scope names no
    document of the corpus are left out; those without a scope, or naming one, are kept."""
    from qspace_frames.ask.accuracy import askable

    questions = pl.DataFrame(
        {"id": ["a", "b", "c", "d"], "scope": ["ticketmaster.com.txt", None, "pages/tools/*", "dev.json"]},
        schema={"id": pl.String, "scope": pl.String},
    )
    documents = pl.Series(["dev.json", "pages/tools/office.md"])
    assert askable(questions, documents)["id"].to_list() == ["b", "c", "d"]
    assert askable(questions, pl.Series([], dtype=pl.String))["id"].to_list() == ["b"]

"""How well `ask` answers a question set whose expected answers are known.

A question set is JSONL, one question per line: `id`, `question`, `kind` (date, amount, steps,
yes_no, contact, casual, compound, unanswerable, ...), `answers` (expected strings copied
verbatim from the documents: one, one per part for a compound question, none when the corpus
does not answer it), and optionally `corpus`, `document`, `parts`, `yes_no`, `note`, `split`
(`dev` or `holdout`) and `scope`: a glob of the documents the question is asked within, for a
question that presupposes one ("Do they sell my data?" asked of one privacy policy, as PolicyQA
poses its questions; `qspace ask --within`). tests/data/ask_dev/ holds the project's development set.

A question counts as right when every expected string is inside the quoted text (the answer's
quote, or one of a compound answer's parts), compared with whitespace runs as one space, or,
for a question with no expected string, when no answer is given.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import polars as pl

from .answer import named_by

QUESTION_SET = {
    "id": pl.String,
    "question": pl.String,
    "kind": pl.String,
    "answers": pl.List(pl.String),
    "corpus": pl.String,
    "document": pl.String,
    "split": pl.String,
    "yes_no": pl.String,  # a yes/no question's expected verdict: yes | no
    "scope": pl.String,  # the documents the question is asked within (a glob; null: the whole corpus)
}
SPLITS = ("dev", "holdout")
# why a question was judged as it was, in the order a reader checks them
OUTCOMES = ("right", "declined rightly", "no answer", "clarification asked", "wrong text", "part missing", "answered the unanswerable")


class QuestionSetError(ValueError):
    pass


def read_question_set(*paths: str | Path) -> pl.DataFrame:
    """The questions of one or more JSONL files (schema QUESTION_SET); a malformed line is an
    error naming its file, line and key. Ids must be unique across the files."""
    rows: list[dict] = []
    for path in paths:
        for n, line in enumerate(_lines(path), 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise QuestionSetError(f"{where}: not JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise QuestionSetError(f"{where}: a question must be a JSON object, not {type(rec).__name__}")
            for key in ("id", "question", "kind"):
                if not isinstance(rec.get(key), str) or not rec[key].strip():
                    raise QuestionSetError(f"{where}: key {key!r} must be a non-empty string")
            answers = rec.get("answers", [])
            if not isinstance(answers, list) or not all(isinstance(a, str) and a.strip() for a in answers):
                raise QuestionSetError(f"{where}: key 'answers' must be a list of non-empty strings")
            if rec.get("yes_no") not in (None, "yes", "no"):
                raise QuestionSetError(f"{where}: key 'yes_no' must be yes or no")
            if rec.get("scope") is not None and not (isinstance(rec["scope"], str) and rec["scope"].strip()):
                raise QuestionSetError(f"{where}: key 'scope' must be a non-empty string (a glob of documents)")
            for key in ("corpus", "document"):
                if rec.get(key) is not None and not isinstance(rec[key], str):
                    raise QuestionSetError(f"{where}: key {key!r} must be a string")
            if rec.get("split", "dev") not in SPLITS:
                raise QuestionSetError(f"{where}: key 'split' must be one of {', '.join(SPLITS)}")
            rows.append({k: rec.get(k) for k in QUESTION_SET} | {"answers": answers, "split": rec.get("split", "dev")})
    frame = pl.DataFrame(rows, schema=QUESTION_SET)
    dup = frame.filter(pl.col("id").is_duplicated())["id"].unique().sort().to_list()
    if dup:
        raise QuestionSetError(f"question ids repeated: {', '.join(dup[:5])}")
    return frame


def _lines(path: str | Path) -> list[str]:
    """The lines of a question set file, read as UTF-8 (JSON's encoding); an unreadable file is an error naming it."""
    try:
        return Path(path).read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        line = e.object[: e.start].count(b"\n") + 1
        raise QuestionSetError(f"{path}:{line}: not UTF-8 text (byte 0x{e.object[e.start]:02x}); JSON lines are UTF-8") from None
    except OSError as e:
        raise QuestionSetError(f"{path}: cannot be read ({e.strerror})") from None


def askable(questions: pl.DataFrame, documents: pl.Series) -> pl.DataFrame:
    """The questions that can be asked of a corpus whose documents are these paths: those without
    a scope and those whose scope names one of them (`answer.named_by`). A set written over a
    corpus prepared otherwise (PolicyQA's development split converted into one file per policy,
    its folder read as it is: dev.json) keeps the questions it can ask, and the rest are left out
    rather than stopping the notebook with a ScopeError."""
    if "scope" not in questions.columns or questions.is_empty():
        return questions
    scopes = questions["scope"].unique().drop_nulls().to_list()
    named = [s for s in scopes if named_by(documents, [s]).any()]
    return questions.filter(pl.col("scope").is_null() | pl.col("scope").is_in(named))


def ask_set(ask: Callable[[list[str], str | None], pl.DataFrame], questions: pl.DataFrame) -> pl.DataFrame:
    """`ask`'s answers (question texts, scope -> answers) to a question set, in its order, each
    question asked within its `scope` (the whole corpus when null)."""
    if questions.is_empty():
        return ask([], None)
    if "scope" not in questions.columns:
        questions = questions.with_columns(pl.lit(None, pl.String).alias("scope"))
    parts = [
        ask(group["question"].to_list(), scope).with_columns(group["_n"])
        for (scope,), group in questions.with_row_index("_n").group_by("scope", maintain_order=True)
    ]
    return pl.concat(parts).sort("_n").drop("_n")


_SPACE = re.compile(r"\s+")


def _flat(text: str | None) -> str:
    return _SPACE.sub(" ", text or "").strip()


def score(questions: pl.DataFrame, answers: pl.DataFrame) -> pl.DataFrame:
    """One row per question: its id, kind, split, the answer's status and quote, `right`, and the
    `outcome` (one of OUTCOMES). `answers` is `ask`'s frame for the same questions, in order."""
    if questions.height != answers.height:
        raise ValueError(f"{questions.height} questions but {answers.height} answers")
    rows = []
    for q, a in zip(questions.iter_rows(named=True), answers.iter_rows(named=True), strict=True):
        quoted = [_flat(t) for t in [a["quote"], *[s["quote"] for s in a["sub_answers"] or []]] if t]
        found = [any(_flat(e) in t for t in quoted) for e in q["answers"]]
        parts = [s["status"] == "answered" for s in a["sub_answers"] or []]
        answered = a["status"] == "answered" or (a["status"] == "compound" and any(parts))  # a compound with no part answered declined
        if not q["answers"]:
            outcome = "answered the unanswerable" if answered else "declined rightly"
        elif all(found):
            outcome = "right"
        elif a["status"] == "clarification":
            outcome = "clarification asked"
        elif not answered:
            outcome = "no answer"
        elif any(found):
            outcome = "part missing"
        else:
            outcome = "wrong text"
        rows.append(
            {
                "id": q["id"],
                "kind": q["kind"],
                "split": q["split"],
                "status": a["status"],
                "quote": a["quote"],
                "right": outcome in ("right", "declined rightly"),
                "outcome": outcome,
                # the verdict given, and whether it is the expected one (null when either is missing)
                "verdict": a["verdict"],
                "verdict_right": a["verdict"] == q["yes_no"] if a["verdict"] and q["yes_no"] else None,
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "id": pl.String,
            "kind": pl.String,
            "split": pl.String,
            "status": pl.String,
            "quote": pl.String,
            "right": pl.Boolean,
            "outcome": pl.String,
            "verdict": pl.String,
            "verdict_right": pl.Boolean,
        },
    )


ANSWERABLE = "answerable"  # the row over every kind but `unanswerable`


def by_kind(scored: pl.DataFrame) -> pl.DataFrame:
    """Right answers and questions per split and kind, with an `answerable` row per split (every
    question the corpus answers: the accuracy the project's goal is stated in)."""
    answerable = scored.filter(pl.col("kind") != "unanswerable").with_columns(pl.lit(ANSWERABLE).alias("kind"))
    return (
        pl.concat([scored, answerable])
        .group_by("split", "kind")
        .agg(pl.col("right").sum().cast(pl.Int64).alias("right"), pl.len().cast(pl.Int64).alias("questions"))
        .with_columns((pl.col("right") / pl.col("questions")).round(3).alias("accuracy"))
        .sort("split", pl.col("kind") == ANSWERABLE, "kind")
    )


def verdicts(scored: pl.DataFrame) -> pl.DataFrame:
    """Per split, the yes/no questions with an expected verdict: how many got a verdict, how many
    the expected one, and the same among those whose quote was right (the sentence that decides)."""
    yn = scored.filter(pl.col("kind") == "yes_no")
    return (
        yn.group_by("split")
        .agg(
            pl.len().alias("questions"),
            pl.col("verdict").is_not_null().sum().alias("with_verdict"),
            pl.col("verdict_right").fill_null(False).sum().alias("verdict_right"),
            pl.col("right").sum().alias("quote_right"),
            (pl.col("right") & pl.col("verdict_right").fill_null(False)).sum().alias("both_right"),
        )
        .sort("split")
    )

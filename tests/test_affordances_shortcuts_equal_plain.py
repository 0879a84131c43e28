"""The affordance stage's shortcuts give exactly what the plain expressions give."""

from __future__ import annotations

import random

import polars as pl

from qspace_frames.affordances.detect import _doc_at, _find_slot, _matching, _squash
from qspace_frames.affordances.rules import (
    DETECTORS,
    EXTRA_CONDITIONS,
    SUBJECT,
    SUBJECT_ASCII,
)

_WORDS = [
    "Row 3:",
    "Step 2 -",
    "Step 10:",
    "The",
    "All",
    "If",
    "vendor",
    "Finance Team",
    "must",
    "shall",
    "is",
    "owns",
    "applies",
    "=",
    ";",
    ":",
    ".",
    ",",
    "$5,000",
    "10%",
    "30 days",
    "approved by",
    "CFO",
    "who is",
    "responsible",
    "escalate to",
    "effective",
    "January 1, 2024",
    "except",
    "within",
    "SLA",
    "revenue",
    "variance",
    "due to",
    "naïve",
    "Zürich",
    "’s",
    "—",
    "mustn’t",
    "shall’",
    "x" * 130,
]
_SPACES = [" ", " ", " ", "  ", "\n", "\t", "\r\n", "\x0b", "\x0c", "\u00a0", "\u2003 "]


def _texts(n: int, seed: int, ascii_only: bool = False) -> list[str]:
    rng = random.Random(seed)
    words, spaces = ([w for w in ws if w.isascii()] if ascii_only else ws for ws in (_WORDS, _SPACES))
    out = []
    for _ in range(n):
        parts = [rng.choice(words) + rng.choice(spaces) for _ in range(rng.randint(1, 25))]
        out.append("".join(parts).strip() if rng.random() < 0.8 else "".join(parts))
    return out


def test_ascii_subject_rule_matches_the_unicode_one_on_ascii_text():
    texts = pl.DataFrame({"s": _texts(4000, 1, ascii_only=True)})
    got = texts.select(pl.col("s").str.extract(SUBJECT_ASCII, 1))
    assert got.equals(texts.select(pl.col("s").str.extract(SUBJECT, 1)))
    assert got["s"].null_count() < texts.height


def test_squash_is_the_plain_replace():
    texts = pl.DataFrame({"s": _texts(3000, 2) + ["", "a", " a ", "a  b", "a\nb", "a\u00a0b", None]})
    assert texts.select(_squash(pl.col("s"))).equals(texts.select(pl.col("s").str.replace_all(r"\s+", " ").str.strip_chars()))


def test_doc_at_is_the_plain_slice():
    rng = random.Random(3)
    doc = "".join(rng.choice(["a", "é", " ", "€", "\n", "b"]) for _ in range(500))
    rows = []
    for _ in range(3000):
        bs = rng.choice([None, -3, 0, 5, 100, 480, 600])
        be = None if bs is None else bs + rng.choice([0, 10, 200, 700])
        s = rng.choice([None, 0, 4, 5, 50, 120, 300, 499, 550])
        e = None if s is None else s + rng.choice([0, 1, 30, 250])
        rows.append({"doc_text": rng.choice([doc, doc, None]), "s": s, "e": e, "bs": bs, "be": be})
    df = pl.DataFrame(rows, schema={"doc_text": pl.String, "s": pl.Int64, "e": pl.Int64, "bs": pl.Int64, "be": pl.Int64})
    df = df.with_columns(pl.col("doc_text").str.slice(pl.col("bs"), pl.col("be") - pl.col("bs")).alias("base"))
    got = df.select(_doc_at(pl.col("s"), pl.col("e"), pl.col("base"), pl.col("bs"), pl.col("be")).alias("t"))
    assert got.equals(df.select(pl.col("doc_text").str.slice(pl.col("s"), pl.col("e") - pl.col("s")).alias("t")))


def test_cues_and_slots_are_the_plain_regexes():
    sents = pl.LazyFrame({"sentence": _texts(3000, 4)})
    for d in DETECTORS:
        fired = pl.col("sentence").str.contains(d.cue)
        if d.intent in EXTRA_CONDITIONS:
            fired = fired & pl.col("sentence").str.contains(EXTRA_CONDITIONS[d.intent])
        extra = [EXTRA_CONDITIONS[d.intent]] if d.intent in EXTRA_CONDITIONS else []
        assert _matching(sents, d.cue, *extra).collect().equals(sents.filter(fired).collect()), d.intent
        for slot in d.slots:
            got = _find_slot(sents, slot).collect()
            groups = [pl.col("sentence").str.extract_groups(p.regex) for p in slot.patterns]
            value = pl.coalesce([g.struct.field("2") for g in groups]).str.strip_chars_end(" ,:;")
            start = pl.coalesce([pl.when(g.struct.field("2").is_not_null()).then(g.struct.field("1").str.len_chars()) for g in groups])
            want = sents.with_columns(value.alias(f"_{slot.name}"), start.cast(pl.Int64).alias(f"_{slot.name}_at")).collect()
            assert got.equals(want), (d.intent, slot.name)

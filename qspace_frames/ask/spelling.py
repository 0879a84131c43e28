"""Spelling tolerance for questions, and how much a word of a question tells (`weight`), both read
from pyspellchecker's shipped English word frequencies.

A misspelt word is read as the corpus word it was meant to be.

A word of the question (lower case, MIN_LETTERS letters or more) that is neither an English word
(pyspellchecker's shipped frequency list) nor a word of the corpus is replaced, for the search only,
by the corpus word nearest to it: within two edits, the most frequent in the corpus first, then in
alphabetical order (pyspellchecker's own choice breaks ties by set order, which varies from run to
run). "reimbursment" becomes "reimbursement"; "vacation", an English word the corpus may lack,
"Bravatek", a name, and the words the caller knows (`known`: the expert dictionary's and the
function words of every language it reads, "compras", "hasta") stay as they are.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

import polars as pl

MIN_LETTERS = 5  # shorter words have too many neighbours within two edits to guess from
WORD = re.compile(r"\b[a-z]{%d,}\b" % MIN_LETTERS)


@lru_cache(maxsize=1)
def _english():
    from spellchecker import SpellChecker

    return SpellChecker(language="en", distance=2)


def corrections(questions: list[str], texts: pl.Series, known: frozenset[str] = frozenset()) -> dict[str, str]:
    """{misspelt word: corpus word} for the questions' words, the corpus being `texts`."""
    english = _english()
    asked = sorted({w for q in questions for w in WORD.findall(q or "")} - known)
    unknown = sorted(english.unknown(asked))
    if not unknown:
        return {}
    counts = (
        texts.str.to_lowercase().str.extract_all(r"[a-z]+").explode().drop_nulls().value_counts(name="n").rename({texts.name: "w"})
        if texts.len()
        else pl.DataFrame(schema={"w": pl.String, "n": pl.UInt32})
    )
    freq = dict(counts.filter(pl.col("w").str.len_chars() >= MIN_LETTERS - 1).rows())
    missing = [w for w in unknown if w not in freq]
    if not missing:
        return {}
    from spellchecker import SpellChecker

    corpus = SpellChecker(language=None, distance=2)
    corpus.word_frequency.load_json(freq)
    out = {}
    for w in missing:
        near = corpus.candidates(w) or set()
        near = [c for c in near if c != w and c in freq]
        if near:
            out[w] = min(near, key=lambda c: (-freq[c], c))
    return out


def corrected(questions: list[str], texts: pl.Series, known: frozenset[str] = frozenset()) -> list[str]:
    """The questions with their misspelt words replaced (`corrections`)."""
    fix = corrections(questions, texts, known)
    if not fix:
        return list(questions)
    return [WORD.sub(lambda m: fix.get(m.group(0), m.group(0)), q or "") for q in questions]


# how often a word is said, on the Zipf scale (log10 of uses per 10^9 words of pyspellchecker's
# English list, drawn from film subtitles: everyday speech): "got" 6.6, "really" 6.2, "jury" 4.4
EVERYDAY, SPECIFIC = 6.5, 5.0


def weight(word: str) -> float:
    """How much a single word of a question tells what it asks, from 0 (said all the time:
    "got", "going", "take") to 1 (rarer than SPECIFIC on the Zipf scale: "jury", "cost", or not in
    the list: names, numbers, terms)."""
    return _weight(word.lower())


@lru_cache(maxsize=65536)
def _weight(w: str) -> float:
    freq = _english().word_frequency
    n = freq[w] if w.isalpha() else 0
    if not n:
        return 1.0
    zipf = math.log10(n / freq.total_words * 1e9)
    return min(1.0, max(0.0, (EVERYDAY - zipf) / (EVERYDAY - SPECIFIC)))

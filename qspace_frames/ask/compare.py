"""Comparison questions: what they compare, and how the answers of their parts compare.

"Which is longer, the notice period or the cure period?" and "Is the per diem higher in Paris than
in London?" ask for two values and their order. The parser splits them into one part per item
(`parts`: "How long is the notice period?", "How long is the cure period?"), `ask` answers the parts
as it answers any compound question, each with its own quote and citation, and the whole question
is answered by the two values the quotes state, read as magnitudes of one kind (`magnitude`: a
duration in days, an amount in its currency, a percentage, a date) and put in order (`compared`):
"The cure period (30 days) is shorter than the notice period (60 days)." A yes/no comparison also
gets its verdict. Values of different kinds (a date and an amount), or a part not answered, leave
the parts standing alone: nothing is compared that the quotes do not state.
"""

from __future__ import annotations

import re

import polars as pl

from ..affordances import values
from .rules import COMPARATIVE, COMPARISON_PLACES, COMPARISON_THAN, COMPARISON_WHICH, NOT_COMPARED

# which way a comparative points: the item with more of the value is "longer", the one with less "shorter"
SMALLER = frozenset({"shorter", "lower", "smaller", "less", "fewer", "earlier", "sooner", "cheaper", "less expensive"})
# what a comparative compares: the part's question asks for it ("How long is ...?")
ASKS = {"longer": "How long is", "shorter": "How long is", "earlier": "When is", "later": "When is", "sooner": "When is"}
ASKS_AMOUNT = "How much is"
# the verbs (and an article after them) that end the first item of a "than" question ("Does the
# review take longer than ...", "Do meals have a higher limit than ...")
VERB_TAIL = re.compile(r"\s+(?:takes?|lasts?|costs?|needs?|requires?|allows?|gives?|pays?|gets?|have|has)(?:\s+(?:a|an|the))?$", re.I)
# the words around a comparative that are not the attribute compared ("per diem is", "has the ... limit")
ATTRIBUTE_FILLER = r"(?i)is|are|was|were|has|have|had|takes?|gives?|allows?|needs?|requires?|costs?|pays?|lasts?|comes?|falls?|due|the|a|an"
ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
# the kinds of value a comparative compares, in the order they are looked for in a quote
KINDS = {"longer": ("duration",), "shorter": ("duration",), **dict.fromkeys(("earlier", "later", "sooner"), ("date", "duration"))}
AMOUNT_KINDS = ("amount", "percent", "duration")
WORKING_DAY = 7 / 5  # five business days to the calendar week
# how a value of each kind is found in a quote and read (`values`): a duration in calendar days
READ = {
    "duration": (values.DURATION, lambda w: values.duration_hours(w) / 24 * pl.when(values.business(w)).then(WORKING_DAY).otherwise(1.0)),
    "amount": (values.MONEY, values.amount),
    "percent": (values.PERCENT, values.percent),
    "date": (values.DATE, values.date),
}


def _item(noun: str, x: str) -> str:
    """An item of a comparison as its part names it: "the limit for meals", "the notice period"."""
    x = x.strip(" ,")
    return f"the {noun} for {ARTICLE.sub('', x)}" if noun else x


def _question(comp: str, noun: str, x: str) -> str:
    """The part asking for an item's value: "How long is the notice period?", "How many days for annual leave?"."""
    comp = comp.lower()
    if noun and comp in ("more", "fewer", "less") and noun.lower().endswith("s"):
        return f"How many {noun} for {ARTICLE.sub('', x.strip(' ,'))}?"
    return f"{ASKS.get(comp, ASKS_AMOUNT)} {_item(noun, x)}?"


def parts(question: str) -> tuple[str, list[str], list[str], bool] | None:
    """(comparative, the two items, their parts' questions, asks yes or no) of a comparison
    question, or None: "Which is longer, the notice period or the cure period?" -> ("longer", ["the
    notice period", "the cure period"], ["How long is the notice period?", "How long is the cure
    period?"], False). Not a comparison: a "more than" before a number ("Do purchases of more than
    $5,000 need approval?") or a quality ("Which is more important, speed or cost?")."""
    q = question.strip()
    m = re.match(COMPARISON_WHICH, q)
    if m:
        words = f"{m['pre']} {m['noun']}".split()
        noun = " ".join(w for w in words if not re.fullmatch(ATTRIBUTE_FILLER, w))
        if re.search(NOT_COMPARED, noun):
            return None
        xs = [m["a"], m["b"]]
        return m["comp"].lower(), [_item(noun, x) for x in xs], [_question(m["comp"], noun, x) for x in xs], False
    m = re.match(COMPARISON_PLACES, q)
    if m:
        subject = VERB_TAIL.sub("", m["a"].strip())
        items = [f"{subject} {m['prep']} {m['pa'].strip()}", f"{subject} {m['prep']} {m['pb'].strip(' ,')}"]
        return m["comp"].lower(), items, [_question(m["comp"], "", i) for i in items], True
    m = re.match(COMPARISON_THAN, q)
    if m:
        noun = (m["noun"] or "").strip()
        if re.search(NOT_COMPARED, noun):
            return None
        xs = [VERB_TAIL.sub("", m["a"].strip()), m["b"]]
        return m["comp"].lower(), [_item(noun, x) for x in xs], [_question(m["comp"], noun, x) for x in xs], True
    return None


def comparisons(q: pl.DataFrame) -> pl.DataFrame:
    """(_row, sub_questions) of the comparison questions among `q` (_row, _t): one part per item."""
    maybe = q.filter(pl.col("_t").str.contains(rf"(?i)\b{COMPARATIVE}\b.*\b(?:or|than)\b"))
    rows = [(r, found[2]) for r, t in maybe.select("_row", "_t").iter_rows() if (found := parts(t))]
    return pl.DataFrame(rows, schema={"_row": q.schema["_row"], "sub_questions": pl.List(pl.String)}, orient="row")


def magnitude(text: str | None, comp: str) -> tuple[str, float, str] | None:
    """(kind, value, the words stating it) of the first value of the kind `comp` compares in
    `text`: a duration in days for "longer", a date or else a duration for "earlier", an amount
    (kind: its currency), a percentage or else a count for the others; None when it states none."""
    if not text:
        return None
    comp = comp.lower()
    for kind in KINDS.get(comp, AMOUNT_KINDS):
        found = _first(kind, text)
        if found:
            return found
    return None


def _first(kind: str, text: str) -> tuple[str, float, str] | None:
    """(kind, value, words) of the first value of `kind` the text states: an amount's kind is its currency."""
    pattern, read = READ[kind]
    words = values.first(pl.lit(text), pattern)
    found = pl.select(words.alias("words"), read(words).alias("value"), values.currency(words).alias("currency")).row(0, named=True)
    if found["value"] is None:
        return None
    value = float(found["value"].toordinal()) if kind == "date" else float(found["value"])
    return found["currency"] if kind == "amount" else kind, value, found["words"].strip()


def compared(comp: str, items: list[str], texts: list[str | None]) -> tuple[str | None, bool | None]:
    """(the comparison stated, whether the first item is `comp` than the second) from the texts
    answering each item; (None, None) when they do not state values of one kind."""
    values = [magnitude(t, comp) for t in texts]
    if any(v is None for v in values) or values[0][0] != values[1][0]:
        return None, None
    (_, a, a_words), (_, b, b_words) = values
    first, second = items
    if a == b:
        return f"{_capital(first)} and {second} are the same ({a_words}).", False
    first_wins = (a < b) if comp in SMALLER else (a > b)
    (win, win_words), (other, other_words) = ((first, a_words), (second, b_words)) if first_wins else ((second, b_words), (first, a_words))
    return f"{_capital(win)} ({win_words}) is {comp} than {other} ({other_words}).", first_wins


def _capital(s: str) -> str:
    return s[:1].upper() + s[1:]


def answered(compound: pl.DataFrame) -> pl.DataFrame:
    """(id, answer, verdict) of the comparison questions among answered compound ones (id,
    question, sub_answers): the comparison the parts' values state (`compared`), and for a yes/no
    comparison ("Is X longer than Y?") its verdict; both null when the values do not compare."""
    rows = []
    for qid, question, subs in compound.select("id", "question", "sub_answers").iter_rows():
        found = parts(question)
        if not found or len(subs or []) != 2:
            continue
        comp, items, _, yes_no = found
        texts = [" ".join(x for x in (s["answer"], s["quote"]) if x) if s["status"] == "answered" else None for s in subs]
        said, first = compared(comp, items, texts)
        if said is not None:
            rows.append((qid, said, ("yes" if first else "no") if yes_no else None))
    return pl.DataFrame(rows, schema={"id": pl.String, "answer": pl.String, "verdict": pl.String}, orient="row")

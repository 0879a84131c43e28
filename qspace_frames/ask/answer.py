"""Answering a user's question with a verbatim, cited span.

parsed question -> candidate prototypes (its intents) -> candidate sentences (BM25 of the question
and its keywords, within the scope filters and pinned pages, sections, sheets and slides; a boost
for sentences that are evidence leaves of a candidate prototype in their fragment's selected tree)
-> the answer: the best sentence in which the answer type's pattern matches on the same line as a
keyword (two signals). Nothing confirmed means "no answer found", never a guess; a vague question
gets its clarification back; a compound one is answered per sub-question.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Iterable, Iterator

import polars as pl

from ..affordances.sentences import all_sentences
from ..affordances.values import NUMBER_WORDS, WORD_NUMBERS
from ..corpus.loaders.base import ROW_LABEL, row_fields
from ..corpus.loaders.records import JSON_FILE, KEY_PATH, LEAF_LINE, LEAF_LINES, LEAF_PATH
from ..evaluation.bm25 import Bm25Counts, query_terms, stem_expr, term_counts, terms_expr
from ..evaluation.loading import count_ranked, gold_queries, load_in_order
from ..evaluation.metrics import RETRIEVALS
from ..evaluation.qspace import selected_leaves
from ..exprs import LOADED_ROW
from ..params import AffordanceParams, EvalParams
from ..schemas import FRAGMENTS
from . import compare, spelling
from .dictionary import Dictionary, answer_types
from .parse import ORDINAL, STATED_BEFORE, TOO_SHORT, asks_yes_no, dx_bounds, options_said, parse_questions, valid_text
from .rules import (
    ADDRESS_BLOCK,
    ADDRESS_QUESTION,
    ASKS_LEAVE,
    BUT,
    DECIDES,
    DEFINED_BEFORE,
    DEFINED_NAME,
    DENIAL,
    FISCAL_PERIOD,
    HYPOTHETICAL,
    MODAL,
    NAMES,
    NO_TOPIC,
    NOT_DENIAL,
    NOT_REQUIRED,
    OVER,
    PARTIES_QUESTION,
    PARTY_LINE,
    PERMISSION_QUESTION,
    PREAMBLE,
    PREAMBLE_CHARS,
    PRONOUNS,
    QUESTION_STOP_WORDS,
    SIDE_CLAUSE,
    SUB_YEAR,
    TECH_TERM,
    UNDER,
    YES_NO_QUESTION,
)
from .sequence import introduced, read_in_order, read_inline
from .spelling import corrected

# a question, its status, and what answers it, cited: an answer's first columns, and each part of
# a compound question's (`sub_answers`, {question, answer, citation} in `to_json`)
SUB_ANSWER = {
    "question": pl.String,
    "status": pl.String,  # a part: answered | no_answer
    "answer": pl.String,
    "quote": pl.String,
    "document": pl.String,
    "page": pl.Int64,
    "heading_path": pl.List(pl.String),
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "verdict": pl.String,  # a yes/no question's: yes | no, decided by the quote (`verdict`)
}
ANSWERS = {
    "id": pl.String,
    **SUB_ANSWER,
    "doc_id": pl.String,
    "fragment_id": pl.String,
    "answer_type": pl.String,
    "score": pl.Float64,
    "clarification": pl.String,
    "sub_answers": pl.List(pl.Struct(SUB_ANSWER)),
    # no answer sought: the technical names the question asks about that the corpus never writes (`unmentioned`)
    "unmentioned": pl.List(pl.String),
    # no answer found: the best ranked passages, not confirmed, quoted with their citations (`_nearest`)
    "nearest": pl.List(pl.Struct({c: SUB_ANSWER[c] for c in ("quote", "document", "page", "heading_path", "char_start", "char_end")})),
}
STATUSES = ("answered", "no_answer", "clarification", "compound")
TOP_K = 8  # candidate sentences checked for confirmation, best first
MIN_COVERAGE = 0.6  # share of the question's keyword groups a candidate (with its headings and document name) must contain
# Measured and dropped: a group also held by a word whose GloVe 50d vector is near one of its words
# (cosine 0.6-0.9; the gate simulated on the development and first check sets) reaches 1-4 more
# declined answers but lets 2-13 more of the 19 unanswerable questions through; pseudo-relevance
# feedback on the candidates (words of the first 3) loses 2-4 development answers; TOP_K 6 or 12 and
# names weighed 0.25 are no better. Also measured and dropped, on every set: each word weighed by how
# much more often the corpus says it than everyday English ("keeps", "problem" count little in a
# packaging manual): tuning halves +2 to +6, held out +3 to +6, but two or three unanswerable
# questions answered ("What is the maximum size of a .deb file ...?"); by its corpus IDF, or leaving
# out the groups no sentence holds: nothing gained; the sentence before a candidate searched with it
# (all of them: tuning +4, held out -4; after a pronoun: +1 -1); the candidates re-ranked by the
# corpus's latent space (`evaluation.semantic`, weight 0.3-1): held out +3, tuning halves -6
# ... or, for a count, the share of a candidate whose number counts what the question counts
# (`_counting`): "How many runlevels are there in the System V style boot scheme?" is answered by
# "Linux has 7 runlevels:", which holds two of its five words (development 111 -> 112 of 164, an
# unseen Debian FAQ set 8 -> 11 of 45, the other sets unchanged); 0.3, not 0.4: "When probing the
# MTU with ping, how many bytes of header overhead must be added ... for IPv4 and IPv6?" is answered
# by "... plus 28 bytes for the IPv4 and plus 48 bytes for the IPv6", four of its twelve words (an
# unseen set's tuning half +1, no other outcome moved)
COUNTED_COVERAGE = 0.3
# ... or, for the first ranked candidate of a question of LEAD_GROUPS keyword groups or more, leading
# the second by LEAD_RATIO of its score, LEAD_COVERAGE: a casual question says much the answer does
# not ("there's a kernel module that keeps getting pulled in automatically and i don't want it. how
# do I stop it from loading?": "If you want to avoid some kernel modules to be auto-loaded, consider
# to blacklist them"). Development unchanged, an unseen set's tuning half +1, the others +2; without
# the lead, an unanswerable development question was answered
LEAD_COVERAGE, LEAD_GROUPS, LEAD_RATIO = 0.5, 5, 1.2
WHOLE_COVERAGE = 1.0  # ... and, to answer as plain text when no candidate is confirmed by its answer type, all of them


# what a sentence is searched by: itself, then its fragment's context, its section headings and its
# document's name (built only for the few candidates that need it whole; BM25 counts the parts)
CONTEXT = pl.concat_str([pl.col("heading_path").list.join(" "), pl.col("document").str.replace_all(r"[/_.\-]", " ")], separator=" ")
SEARCH = pl.concat_str([pl.col("text"), CONTEXT], separator=" ")


# a Markdown table's separator row ("|------|:---:|"), under its header row
TABLE_SEPARATOR = r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$"


def _under_table_header(fr: pl.LazyFrame) -> pl.LazyFrame:
    """The fragments, each row of a Markdown table with its header's column names last in its
    heading path ("Plan | Monthly price | Storage"): a row ("| Enterprise | $99 | 10 TB |") says
    what its values are only there, and a question names the column ("the monthly price of the
    Enterprise plan"). Other loaders write a row's column names in it ("Row 3: Plan = Team; ...")."""
    rows = fr.filter(pl.col("kind") != "section").sort("doc_id", "char_start", "fragment_id")
    table = (pl.col("kind") != "table_row").cum_sum().over("doc_id").alias("_table")  # a run of rows, one table
    header = pl.when(pl.col("text").shift(-1).over("doc_id").str.contains(TABLE_SEPARATOR) & (pl.col("kind") == "table_row"))
    names = header.then(pl.col("text").str.strip_chars().str.strip_chars("|").str.replace_all(r"\s*\|\s*", " | ").str.strip_chars())
    headed = (
        rows.with_columns(table, names.alias("_header"))
        .with_columns(pl.col("_header").forward_fill().over("doc_id", "_table"), pl.col("_header").is_not_null().alias("_is_header"))
        .filter((pl.col("kind") == "table_row") & pl.col("_header").is_not_null() & ~pl.col("_is_header"))
        .filter(~pl.col("text").str.contains(TABLE_SEPARATOR))
        .select("fragment_id", "_header")
    )
    return (
        fr.join(headed, on="fragment_id", how="left", maintain_order="left")
        .with_columns(
            pl.when(pl.col("_header").is_not_null())
            .then(pl.col("heading_path").list.concat(pl.concat_list(pl.col("_header"))))
            .otherwise(pl.col("heading_path"))
            .alias("heading_path")
        )
        .drop("_header")
    )


# a sentence that says what follows from the one before it ("Otherwise, your upload may be
# rejected", "In those cases, the TSC makes a determination", "If they do not match, it will warn
# you"): it completes what that one says
BACK_REFERENCE = (
    r"^(?:Otherwise|If (?:not|so|it|they|this|that|these|those)|In (?:that|this|such an?|either|which) case"
    r"|In (?:those|these|such|both|either) cases|Failing (?:that|this)|As a result|Consequently)\b"
)


def _sentence_units(fr: pl.LazyFrame, inv: pl.DataFrame, ap) -> pl.DataFrame:
    """The sentences of fragments with their fragment's context (`_under_table_header`) and
    document path, in document order. A sentence that follows from the one before it in its
    fragment (BACK_REFERENCE) has both, verbatim, from that one's start (`before_start`,
    `joined`: that one is quoted on with it, `_with_consequence`)."""
    fr = _under_table_header(fr)
    s = all_sentences(fr, ap).collect()
    # the sentence before in document order, when it is of the same fragment (a window over the
    # fragments cost a third more of the units' time on CUAD)
    prev = pl.when(pl.col("fragment_id") == pl.col("fragment_id").shift(1)).then(pl.col("char_start").shift(1))
    back = pl.col("text").str.contains(BACK_REFERENCE) & prev.is_not_null()
    units = (
        s.join(fr.select("fragment_id", "page", "kind").collect(), on="fragment_id")
        .join(inv, on="doc_id")
        .select(
            "doc_id",
            "document",
            "fragment_id",
            "page",
            "kind",
            "heading_path",
            pl.col("sent_start").alias("char_start"),
            pl.col("sent_end").alias("char_end"),
            pl.col("sentence").alias("text"),
        )
        .sort("doc_id", "char_start")
        .with_columns(pl.when(back).then(prev).alias("before_start"))
    )
    # the two sentences' text, read from their fragment's for the few that follow from another
    backs = units.filter(pl.col("before_start").is_not_null()).select("fragment_id", "char_start", "char_end", "before_start")
    texts = fr.select("fragment_id", pl.col("text").alias("_ft"), pl.col("char_start").alias("_fs")).join(
        backs.lazy().select("fragment_id").unique(), on="fragment_id", how="semi"
    )
    joined = pl.col("_ft").str.slice(pl.col("before_start") - pl.col("_fs"), pl.col("char_end") - pl.col("before_start"))
    joined = backs.join(texts.collect(), on="fragment_id").select("fragment_id", "char_start", joined.alias("joined"))
    return units.join(joined, on=["fragment_id", "char_start"], how="left", maintain_order="left")


UNIT_COLUMNS = ["fragment_id", "doc_id", "heading_path", "page", "kind", "char_start", "char_end", "text"]


def units(inventory: pl.LazyFrame, fragments: Iterable[pl.DataFrame], ap: AffordanceParams) -> pl.DataFrame:
    """Every sentence of the corpus with its fragment's context and its document path."""
    return pl.concat(list(unit_batches(inventory, fragments, ap)))


def unit_batches(inventory: pl.LazyFrame, fragments: Iterable[pl.DataFrame], ap: AffordanceParams) -> Iterator[pl.DataFrame]:
    """`units` batch by batch, numbered (`chunk`) across the batches, from fragments (columns
    UNIT_COLUMNS) that arrive in batches of whole documents: a stage can count the whole corpus's
    terms without holding every sentence."""
    inv = inventory.filter(LOADED_ROW).select("doc_id", pl.col("path").alias("document")).collect()
    off = n = 0
    for n, fr in enumerate(fragments, 1):
        u = _sentence_units(fr.lazy(), inv, ap)
        yield u.with_columns(pl.int_range(off, off + u.height, dtype=pl.Int64).alias("chunk"))
        off += u.height
    if not n:  # no fragment: no unit, same columns
        u = _sentence_units(pl.LazyFrame(schema={c: FRAGMENTS[c] for c in UNIT_COLUMNS}), inv, ap)
        yield u.with_columns(pl.lit(None, pl.Int64).alias("chunk"))


def leaf_intents(tree_nodes: pl.LazyFrame, tree_scores: pl.LazyFrame, evidence: pl.LazyFrame, prototypes: pl.LazyFrame) -> pl.DataFrame:
    """(fragment_id, span_start, intent): sentences that are evidence leaves of a selected tree."""
    leaves = selected_leaves(tree_nodes, tree_scores)
    ev = evidence.select("evidence_id", pl.col("prototype_ids").alias("prototype_id")).explode("prototype_id")
    protos = prototypes.select("prototype_id", "intent")
    return (
        leaves.select("fragment_id", "evidence_id", pl.col("span_start").alias("char_start"))
        .join(ev, on="evidence_id")
        .join(protos, on="prototype_id")
        .select("fragment_id", "char_start", "intent")
        .unique()
        .collect()
        .sort("fragment_id", "char_start", "intent")
    )


def _question_keywords(parsed: pl.DataFrame) -> pl.DataFrame:
    """One row per keyword of each question, flagged when its text occurs in the question itself
    (the variant the question used, as opposed to the ones its concept pulled in)."""
    return (
        parsed.select("id", "question", "keywords")
        .explode("keywords")
        .drop_nulls("keywords")
        .unnest("keywords")
        .with_columns(
            pl.col("question").str.to_lowercase().str.contains(pl.col("text").str.to_lowercase(), literal=True).alias("in_question")
        )
    )


def _keyword_groups(parsed: pl.DataFrame) -> pl.DataFrame:
    """(id, _groups): one list of variants per dictionary concept, one singleton per other keyword.

    A word of the question that is part of a dictionary phrase it contains ("new" and "hire" of
    "new hire"), or one of the concept's words in another form ("fly" of a question whose "trip"
    named travel, of which "flying" is a word), is not a group of its own: the concept stands for it."""
    kw = _question_keywords(parsed)
    concept = pl.col("source") == "expert_dictionary"
    phrases = (
        kw.filter(concept & (pl.col("in_question") | ~pl.col("text").str.contains(r"\s")))
        .select("id", pl.col("text").str.to_lowercase().str.extract_all(r"[\p{L}\p{N}]+").alias("_covered"))
        .explode("_covered")
        .filter(pl.col("_covered").is_not_null())
        .with_columns(stem_expr(pl.col("_covered")))
        .group_by("id")
        .agg(pl.col("_covered"))
    )
    # the words of a quarter, half or month the question names ("in Q1 2025") are its period, which
    # `_off_period` enforces: a sentence does not answer it by naming that period
    period = parsed.select(
        "id",
        pl.col("question").str.extract_all(SUB_YEAR).list.join(" ").str.to_lowercase().str.extract_all(r"[\p{L}\p{N}]+").alias("_period"),
    )
    kw = (
        kw.join(phrases, on="id", how="left")
        .join(period, on="id", how="left")
        .filter((pl.col("source") != "question") | ~stem_expr(pl.col("text").str.to_lowercase()).is_in(pl.col("_covered").fill_null([])))
        .filter(~pl.col("text").str.to_lowercase().is_in(pl.col("_period")))
    )
    grouped = (
        kw.with_columns(
            pl.when(pl.col("source") == "expert_dictionary").then(pl.col("semantic_group")).otherwise(pl.col("text")).alias("_g")
        )
        .group_by("id", "_g", maintain_order=True)
        .agg(pl.col("text"))
        .group_by("id", maintain_order=True)
        .agg(pl.col("text").alias("_groups"))
    )
    grouped = parsed.select("id").join(grouped, on="id", how="left")
    grouped = _compounds_whole(parsed, _stated_as_one(parsed, grouped))
    return _with_antecedent(parsed, grouped) if "antecedent" in parsed.columns else grouped


COMPOUND = r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b"  # "debian-user", "dpkg-scanpackages", "third-party"


def _compounds_whole(parsed: pl.DataFrame, grouped: pl.DataFrame) -> pl.DataFrame:
    """The keyword groups with a hyphenated word of the question (COMPOUND) one group, written with
    the hyphen, a space or nothing ("third-party", "third party", "thirdparty"), in place of the
    groups of its parts: "Do I have to subscribe to debian-user before I can post a question there?"
    is about the debian-user list, not about any sentence naming Debian's users."""

    def whole(s: pl.Series) -> pl.Series:
        out = []
        for r in s.to_list():
            gs = r["_groups"] or []
            for c in r["_compounds"] or []:
                parts = set(c.split("-"))
                kept = [g for g in gs if not (len(g) == 1 and g[0].lower() in parts)]
                if len(kept) < len(gs):
                    gs = kept + [[c, c.replace("-", " "), c.replace("-", "")]]
            out.append(gs or r["_groups"])
        return pl.Series(out, dtype=pl.List(pl.List(pl.String)))

    compounds = parsed.select("id", pl.col("question").str.extract_all(COMPOUND).list.unique(maintain_order=True).alias("_compounds"))
    return grouped.join(compounds, on="id", how="left").select(
        "id", pl.struct("_groups", "_compounds").map_batches(whole, return_dtype=pl.List(pl.List(pl.String))).alias("_groups")
    )


def _stated_as_one(parsed: pl.DataFrame, grouped: pl.DataFrame) -> pl.DataFrame:
    """The keyword groups with those only the sentences before the asking one name (STATED_BEFORE)
    made one group, any of which covers it: "I installed logcheck. How frequently will it go through
    my logs?" asks about logcheck's logs, and "installed" is how the asker got there, not a word the
    answer must hold."""

    def merged(s: pl.Series) -> pl.Series:
        out = []
        for r in s.to_list():
            gs, q, asked = r["_groups"], (r["question"] or "").lower(), (r["_asked"] or "").lower()
            stated = q[: len(q) - len(asked)]
            told = [g for g in gs or [] if not any(w.lower() in asked for w in g) and any(w.lower() in stated for w in g)]
            rest = [g for g in gs or [] if g not in told]
            out.append(rest + [[w for g in told for w in g]] if len(told) > 1 and rest else gs)
        return pl.Series(out, dtype=pl.List(pl.List(pl.String)))

    asked = parsed.select("id", "question", pl.col("question").str.replace(STATED_BEFORE, "$1").alias("_asked"))
    return grouped.join(asked, on="id", how="left").select(
        "id", pl.struct("_groups", "question", "_asked").map_batches(merged, return_dtype=pl.List(pl.List(pl.String))).alias("_groups")
    )


def _with_antecedent(parsed: pl.DataFrame, grouped: pl.DataFrame) -> pl.DataFrame:
    """The keyword groups of compound questions' parts (`_keyword_groups`), each part with a pronoun
    given one more for it (also apart, as `_antecedent`): the words of the part before and of the
    whole question's names (`antecedent`) that the part does not already hold, any one of which
    covers it. "Should I put the package name in it?", after "How long can a package's one-line synopsis
    be?", is about the synopsis: "Do not include the package name in the synopsis line.", not any
    sentence about package names."""
    word = r"[\p{L}\p{N}][\p{L}\p{N}/.'-]*[\p{L}\p{N}]"  # "debian/rules", "one-line"
    words = pl.col("antecedent").str.to_lowercase().str.replace_all(r"['’]s\b", "").str.extract_all(word)
    ante = (
        parsed.filter((pl.col("antecedent").fill_null("") != "") & pl.col("question").str.contains(f"(?i){PRONOUNS}"))
        .select("id", words.alias("_w"))
        .explode("_w")
        .drop_nulls("_w")
        .filter(~pl.col("_w").is_in(list(QUESTION_STOP_WORDS)))
        .join(grouped.explode("_groups").explode("_groups").drop_nulls("_groups"), on="id", how="left")
        .group_by("id", "_w", maintain_order=True)
        .agg((stem_expr(pl.col("_w")) == stem_expr(pl.col("_groups").str.to_lowercase())).any().alias("_held"))
        .filter(~pl.col("_held"))
        .group_by("id", maintain_order=True)
        .agg(pl.col("_w").unique(maintain_order=True))
        .group_by("id", maintain_order=True)
        .agg(pl.col("_w").alias("_antecedent"))  # one group of words
    )
    return grouped.join(ante, on="id", how="left").with_columns(
        pl.when(pl.col("_antecedent").is_null())
        .then("_groups")
        .when(pl.col("_groups").is_null())
        .then("_antecedent")
        .otherwise(pl.col("_groups").list.concat("_antecedent"))
        .alias("_groups")
    )


def _search_text(parsed: pl.DataFrame, dictionary: Dictionary | None = None) -> pl.DataFrame:
    """(id, search): the question plus its direct and anchor keywords, and for each dictionary
    concept it names, the concept's head word in every *other* language (what BM25 scores).

    A French question thus reaches an English corpus ("approuver" brings "approval"), while an
    English question is ranked by its own words only: the variants of its own language would
    outweigh them, and head words absent from the corpus score nothing."""
    kw = _question_keywords(parsed)
    own = kw.filter(pl.col("source").is_in(["direct", "anchor"])).select("id", "text")
    heads = pl.DataFrame(schema={"id": pl.String, "text": pl.String})
    if dictionary is not None:
        lang = dictionary.keywords.select("concept", "language", pl.col("keyword").alias("text"))
        used = (  # the languages of the variants the question itself contains
            kw.filter((pl.col("source") == "expert_dictionary") & pl.col("in_question"))
            .rename({"semantic_group": "concept"})
            .join(lang, on=["concept", "text"])
            .select("id", "concept", "language")
            .unique()
        )
        first = (
            dictionary.keywords.sort("concept", "language", "priority", maintain_order=True)
            .group_by("concept", "language", maintain_order=True)
            .first()
            .select("concept", "language", pl.col("keyword").alias("text"))
        )
        heads = (
            used.select("id", "concept")
            .unique()
            .join(first, on="concept")
            .join(used, on=["id", "concept", "language"], how="anti")
            .sort("id", "concept", "language")
            .select("id", "text")
        )
    bridge = (
        parsed.select("id", pl.col("_bridge").alias("text")).explode("text").drop_nulls("text")
        if "_bridge" in parsed.columns
        else heads.clear()
    )
    extra = pl.concat([own, heads, bridge]).group_by("id", maintain_order=True).agg(pl.col("text").str.join(" "))
    return (
        parsed.select("id", "question")
        .join(extra, on="id", how="left")
        .select("id", pl.concat_str([pl.col("question"), pl.col("text").fill_null("")], separator=" ").alias("search"))
    )


def _ungrouped(text: pl.Expr) -> pl.Expr:
    """The text with the thousands separators of its numbers removed ("$25,000", "25 000 $", "25.000 $": "25000")."""
    sep = r"(\d)[,.\u00a0\u202f ](\d{3})\b"
    return text.str.replace_all(sep, "$1$2").str.replace_all(sep, "$1$2")


def _stated_values(col: str) -> pl.Expr:
    """The amounts and percentages a text states, as plain numbers (`_ungrouped`: "$25,000" ->
    "25000"; "40%" -> "40"). Years and quarters are not values."""
    values = _ungrouped(pl.col(col)).str.extract_all(r"[$€£]\s?\d+(?:\.\d+)?|\d+(?:\.\d+)?\s?(?:%|\$|€|£|USD|EUR|GBP|percent|per cent)")
    return values.list.eval(pl.element().str.extract(r"(\d+(?:\.\d+)?)", 1)).list.unique()


# where a number says where to look, not what about: "slide 4", "page 3", "step 2" (the scope and order hints)
PLACE_NUMBER = (
    r"(?i)\b(?:pages?|p\.|pp\.|slides?|sheets?|sections?|§|chapters?|parts?|steps?|items?|clauses?|articles?|paragraphs?"
    r"|schedules?|exhibits?|appendix|annex|lines?|rows?|columns?)\s*\d+"
)


def _bare_numbers(col: str) -> pl.Expr:
    """The small whole numbers a text names on their own ("Debian 12", "version = 12"), as "#12": not
    a part of a date, a decimal or a section number ("1996-12-12", "1.2", "4.1.4"), nor a table
    row's label ("Row 12:"), nor a place (PLACE_NUMBER)."""
    text = _ungrouped(pl.col(col)).str.replace_all(ROW_LABEL, "").str.replace_all(PLACE_NUMBER, " ")  # "5 000 $" is no 5, nor 000
    bare = text.str.extract_all(r"(?:^|[^\w.,/:$€£-])\d{1,3}(?:$|[^\w.,/:%-]|[.,:](?:$|\D))")  # "Stage 6:", "Debian 12."
    return bare.list.eval(pl.lit("#") + pl.element().str.extract(r"(\d+)", 1)).list.unique()


_NUMBER_WORDS = rf"(?i)\b(?:{NUMBER_WORDS})\b"


def _word_numbers(col: str) -> pl.Expr:
    """The numbers a text writes in words ("three", "forty-five"), as `_bare_numbers` gives its digits ("#3")."""
    named = {w: f"#{n}" for w, n in WORD_NUMBERS.items()}
    return pl.col(col).str.extract_all(_NUMBER_WORDS).list.eval(pl.element().str.to_lowercase().replace_strict(named, default=None))


def _contains_any(text: str | pl.Expr, needles: str | pl.Expr, every: bool = False, word_start: bool = False) -> pl.Expr:
    """Whether the text (a column or an expression) contains any string of the list (`every`: each
    one, so an empty list passes), case-insensitive; with `word_start`, only where a word starts
    ('adm' is not in "sysadmins")."""
    t, n = (pl.col(x) if isinstance(x, str) else x for x in (text, needles))
    held = all if every else any

    def found(x: str, t: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(x)}", t) is not None if word_start else x in t

    return pl.struct(t.alias("t"), n.alias("n")).map_batches(
        lambda s: pl.Series(
            [held(found(x.lower(), (r["t"] or "").lower()) for x in (r["n"] or [])) for r in s.to_list()], dtype=pl.Boolean
        ),
        return_dtype=pl.Boolean,
    )


# a file path a question names ("/usr/local", "/run/reboot-required"; not "and/or", "24/7"): like a
# number, it says what the question is about, and a sentence of another path is about something else
# ("Packages must not ship /usr/X11R6/lib/X11/app-defaults/" is no answer about /usr/local)
PATH = r"\B/[A-Za-z][\w.+-]*(?:/[\w.+-]+)*"


def _paths(text: str) -> pl.Expr:
    """The file paths a text names (PATH), a closing full stop left out."""
    return pl.col(text).str.extract_all(PATH).list.eval(pl.element().str.strip_chars_end("."))


def _found(word: str, t: str) -> bool:
    """Whether a keyword (`word`) is in the lower-case text `t`: a word of the question when its
    stem is (the word less its last two letters, or less its "-ing" or "-ed" and a doubled last
    consonant: "accepting" is found in "accept", "submitted" in "submit"); a phrase or a number whole ("4.1.4" is not found in "4.1.5")."""
    w = word.lower()
    if " " in w or any(c.isdigit() for c in w):
        return w in t
    if len(w) > 6 and w.endswith(("ing", "ed")):
        stem = w[: -3 if w.endswith("ing") else -2]
        if len(stem) > 4 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":  # "submitting": "submit"
            stem = stem[:-1]
        return stem in t
    return w[: max(4, len(w) - 2)] in t


def _group_weight(group: list[str]) -> float:
    """A keyword group's weight in `_shares`: a concept of the dictionary (several variants) or a
    phrase counts whole, a single word by how much it tells (`spelling.weight`)."""
    return spelling.weight(group[0]) if len(group) == 1 and " " not in group[0] else 1.0


def _held(t: str, gs: list[list[str]]) -> list[bool]:
    """Whether each keyword group is found in the lower-case text `t` (`_found`): a dictionary
    concept when any of its variants is."""
    return [any(_found(w, t) for w in g) for g in gs]


def _coverage(text: str, groups: str) -> pl.Expr:
    """Share of the question's keyword groups found in the text (`_shares`)."""
    return _shares(text, groups).struct.field("_coverage").alias(text)  # named after its text, as a map over (text, groups) is


SHARES = pl.Struct({"_coverage": pl.Float64, "_weighted": pl.Float64})


def _shares(text: str, groups: str) -> pl.Expr:
    """(_coverage, _weighted): the share of the question's keyword groups found in the text
    (`_coverage`), and the same with each group weighed (`_group_weight`), from one search."""

    def shares(s: pl.Series) -> pl.Series:
        out = []
        for r in s.to_list():
            gs = [g for g in (r[groups] or []) if g]
            held, ws = _held((r[text] or "").lower(), gs), [_group_weight(g) for g in gs]
            total = sum(ws)
            out.append(
                {
                    "_coverage": sum(held) / len(gs) if gs else 1.0,
                    "_weighted": sum(w for h, w in zip(held, ws) if h) / total if total else 1.0,
                }
            )
        return pl.Series(out, dtype=SHARES)

    return pl.struct(text, groups).map_batches(shares, return_dtype=SHARES)


MIN_TOPIC = 2  # keyword groups a question has besides those naming its document, for one of them to be required


def _topical(text: str, groups: str, scope: str) -> pl.Expr:
    """Whether the text holds one of the question's keyword groups that are not found in `scope`
    (the words that name its document: the question's names, the document's name, its contract's
    head), when there are MIN_TOPIC of them or more. "What penalty does Chang Chen-Bin Architects
    Office pay for late delivery under the Miaoli Royal Resort Hotel outsourcing contract?" is not
    answered by the contract's title, which holds every name and none of "penalty", "pay", "late",
    "delivery"; a single other word may be a filler ("according to Schedule A")."""

    def holds(s: pl.Series) -> pl.Series:
        out = []
        for r in s.to_list():
            t, sc = (r[text] or "").lower(), (r[scope] or "").lower()
            topic = [g for g in (r[groups] or []) if g and not any(_found(w, sc) for w in g)]
            out.append(len(topic) < MIN_TOPIC or any(_found(w, t) for g in topic for w in g))
        return pl.Series(out, dtype=pl.Boolean)

    return pl.struct(text, groups, scope).map_batches(holds, return_dtype=pl.Boolean)


SCOPE_HINTS = ("pages_hint", "slides_hint", "sheets_hint", "toc_section_hint", "layout_hint")  # what `in_scope` reads of a question
PINNED = (
    (pl.col("pages_hint").list.len() > 0)
    | (pl.col("slides_hint").list.len() > 0)
    | (pl.col("sheets_hint").list.len() > 0)
    | pl.col("toc_section_hint").is_not_null()
    | (pl.col("layout_hint") == "table")
)  # a question `in_scope` may reject candidates of


WORKBOOK = r"(?i)\.(?:xlsx|xlsm|xltx|xltm)$"  # documents with sheets (a sheet is a page titled by its name)


def _on_sheet() -> pl.Expr:
    """A workbook's unit on a sheet the question names ("the Thresholds sheet": its title holds the
    name) or numbers ("sheet 2": its page)."""
    named = pl.col("sheets_hint").list.eval(pl.element().filter(~pl.element().str.contains(r"^\d+$")))
    numbered = pl.col("sheets_hint").list.eval(pl.element().cast(pl.Int64, strict=False)).list.drop_nulls()
    by_name = _contains_any(pl.col("heading_path").list.first(), named)
    return pl.col("document").str.contains(WORKBOOK) & (by_name | numbered.list.contains(pl.col("page")))


def in_scope() -> pl.Expr:
    """Pinned pages, slides, sheets, sections and layout: a candidate outside them is not an answer."""
    heading = pl.col("heading_path").list.join(" ").str.to_lowercase()
    return (
        ((pl.col("pages_hint").list.len() == 0) | pl.col("pages_hint").list.contains(pl.col("page")))
        & ((pl.col("sheets_hint").list.len() == 0) | _on_sheet())
        & ((pl.col("slides_hint").list.len() == 0) | pl.col("slides_hint").list.contains(pl.col("page")))
        & (pl.col("toc_section_hint").is_null() | heading.str.contains(pl.col("toc_section_hint").str.to_lowercase(), literal=True))
        & (pl.col("layout_hint").is_null() | (pl.col("layout_hint") != "table") | (pl.col("kind") == "table_row"))
    )


BRIDGE = 2  # corpus variants searched for a concept the question names only by words the corpus lacks


def _bridged(parsed: pl.DataFrame, dictionary: Dictionary, texts: pl.Series) -> pl.DataFrame:
    """The questions with `_bridge`: for each dictionary concept a question names only by words the
    corpus lacks as the search reads them (stemmed terms: "food", of a policy that says "meal"), the
    concept's BRIDGE best variants that the corpus does hold, searched with the question. A concept
    the question names by a word of the corpus adds nothing: its own word ranks better than a variant
    would. A term counts as held where some text contains it, even inside a longer word: one pass over
    the corpus for the few terms at stake (tokenising a corpus of contracts took seconds)."""
    kw = _question_keywords(parsed).filter((pl.col("source") == "expert_dictionary") & pl.col("in_question"))
    if kw.is_empty():
        return parsed
    kw = kw.select("id", "semantic_group", terms_expr("text").alias("_terms"))
    variants = (
        dictionary.keywords.join(kw.select(pl.col("semantic_group").alias("concept")).unique(), on="concept")
        .select(pl.col("concept").alias("semantic_group"), "priority", "keyword", terms_expr("keyword").alias("_terms"))
        .sort("semantic_group", "priority", "keyword")
    )
    stems = pl.concat([kw["_terms"], variants["_terms"]]).explode().drop_nulls().unique().sort().to_list()
    present = (
        texts.str.extract_many(stems, ascii_case_insensitive=True, overlapping=True)
        .explode()
        .drop_nulls()
        .str.to_lowercase()
        .unique()
        .implode()
    )
    held = (pl.col("_terms").list.len() > 0) & pl.col("_terms").list.eval(pl.element().is_in(present)).list.all()
    lacking = kw.group_by("id", "semantic_group").agg(held.any().alias("_held")).filter(~pl.col("_held"))
    bridge = (
        lacking.join(variants.filter(held).group_by("semantic_group", maintain_order=True).head(BRIDGE), on="semantic_group")
        .sort("id", "semantic_group", "priority", "keyword")
        .group_by("id", maintain_order=True)
        .agg(pl.col("keyword").alias("_bridge"))
    )
    return parsed.join(bridge, on="id", how="left")


def _known_words(dictionary: Dictionary) -> frozenset[str]:
    """The words no spelling correction touches: the expert dictionary's, in every language, and
    the questions' function words (rules.QUESTION_STOP_WORDS): "compras" is not a misspelt "compare"."""
    words = dictionary.keywords["keyword"].str.to_lowercase().str.extract_all(r"\w+").explode().drop_nulls().unique()
    return frozenset(words.to_list()) | frozenset(QUESTION_STOP_WORDS)


class ScopeError(ValueError):
    """A scope (`within`) that names no document of the corpus."""


def named_by(documents: pl.Series, patterns: list[str]) -> pl.Series:
    """Whether each document path is named by one of the scope's patterns: a glob (`fnmatch`,
    case-sensitive) over its path in the corpus or its file name."""
    names = documents.str.replace(r"^.*/", "")
    hit = [any(fnmatch.fnmatchcase(d, g) or fnmatch.fnmatchcase(n, g) for g in patterns) for d, n in zip(documents, names)]
    return pl.Series(hit, dtype=pl.Boolean)


def within(units: pl.DataFrame, leaves: pl.DataFrame, scope: str | Iterable[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The `units` and `leaves` of the documents a scope names: each of its patterns a glob
    (`fnmatch`, case-sensitive) over a document's path in the corpus or its file name
    ("ticketmaster.com.txt", "pages/tools/*", "*.pdf"). A question asked within one document is
    answered as that document's reader means it ("Do they collect my location?" of one privacy
    policy among twenty). ScopeError when no document matches."""
    patterns = [scope] if isinstance(scope, str) else list(scope)
    docs = units.select("document").unique()
    kept = docs.filter(named_by(docs["document"], patterns))
    if kept.is_empty():
        raise ScopeError(f"no document of the corpus matches {', '.join(repr(g) for g in patterns)}")
    mine = units.join(kept, on="document", how="semi", maintain_order="left")
    return mine, leaves.join(mine.select("fragment_id").unique(), on="fragment_id", how="semi", maintain_order="left")


def answer(questions: list[str], units: pl.DataFrame, leaves: pl.DataFrame, dictionary: Dictionary, p: EvalParams) -> pl.DataFrame:
    """Parse and answer; one row per question (schema ANSWERS). `units` and `leaves` are the
    corpus's sentences (`units`) and its trees' evidence leaves (`leaf_intents`). A misspelt word is
    searched as the corpus word it was meant to be (`spelling`); the answer shows the question as asked."""
    texts = [valid_text(q) for q in ([questions] if isinstance(questions, str) else questions)]
    parsed = parse_questions(corrected(texts, units["text"], _known_words(dictionary)), dictionary)
    asked = pl.DataFrame({"id": parsed["id"], "question": pl.Series(texts, dtype=pl.String)})
    # a conditional question is searched whole (its condition names what it is about; the condition is
    # also its scope), and so is a unified one (coordinated nouns: "both a Vcs-Git and a Vcs-Svn
    # field", "affiliates or subsidiaries", asked of one sentence) and a compound one whose parts are
    # too short to stand alone ("..., and why?")
    short = pl.col("sub_questions").list.eval(pl.element().str.count_matches(r"\b\w{3,}\b") < 3).list.any()
    in_order = pl.col("sequence_position").is_not_null() | pl.col("sequence_after").is_not_null()
    whole = pl.col("decomposition_pattern").is_in(["conditional", "unified"])
    parsed = parsed.with_columns(
        pl.when(whole | short | in_order).then(pl.lit("single")).otherwise(pl.col("decomposition_pattern")).alias("decomposition_pattern")
    )
    single = pl.col("decomposition_pattern") == "single"
    # A part is searched with the names of the whole question and, in a sequence ("When did the
    # matrix take effect, and how often is it reviewed?"), with the part before it, where its "it"
    # points; a part is never sent back for clarification: the whole question says what it is about.
    subs = (
        parsed.filter(~single)
        .select("id", "decomposition_pattern", pl.col("sub_questions"), _names().alias("_names"))
        .explode("sub_questions")
        .drop_nulls("sub_questions")
        .with_columns(
            (pl.col("id") + pl.lit("/") + pl.int_range(1, pl.len() + 1).over("id").cast(pl.String)).alias("sub_id"),
            pl.when(pl.col("decomposition_pattern") == "sequential").then(pl.col("sub_questions").shift(1).over("id")).alias("_before"),
        )
        .with_columns(
            pl.concat_str("_names", "_before", separator=" ", ignore_nulls=True).alias("context"),
            # what a part's pronoun may stand for (`_with_antecedent`): not the words of a "who" before
            # it, whose "them" is the person answered ("Who approves X, and how can I contact them?")
            pl.concat_str(
                "_names", pl.when(~pl.col("_before").str.contains(r"(?i)^\W*who\b")).then("_before"), separator=" ", ignore_nulls=True
            ).alias("antecedent"),
        )
    )
    sub_parsed = parse_questions(pl.DataFrame({"id": subs["sub_id"], "question": subs["sub_questions"]}), dictionary).join(
        subs.select(pl.col("sub_id").alias("id"), "context", "antecedent"), on="id", how="left"
    )
    simple_q = parsed.filter(single & pl.col("suggested_clarification").is_null())
    # a question too short to say what it is about ("What is the fee?") or naming a thing with no
    # antecedent ("What is the cap?") is searched too: it is answered when the corpus speaks of it
    # in one document only (`_said_once`), sent back otherwise
    reason = pl.col("ambiguity_reason")
    too_short = parsed.filter(single & (reason.str.starts_with(TOO_SHORT) | reason.str.ends_with(NO_TOPIC)).fill_null(False))
    # a question about order is answered from document order when its anchor is found, else as any other
    ordered = simple_q.filter(in_order)
    # the anchor is searched without the ordinal ("the first step"): no sentence of the list says it
    named = parse_questions(
        ordered.select(
            (pl.col("id") + ANCHOR).alias("id"),
            pl.coalesce("sequence_after", pl.col("question").str.replace_all(ORDINAL, " $1$2")).alias("question"),
        ),
        dictionary,
    )
    # every question, sub-question and anchor ranked at once: the corpus is read and counted once
    searched = _bridged(pl.concat([simple_q, sub_parsed, named, too_short], how="diagonal_relaxed"), dictionary, units["text"])
    ranked = _ranked(searched, units, leaves, dictionary, p, SHOWN_DEPTH) if searched.height else None
    unknown = unmentioned(searched, units).filter(pl.col("unmentioned").list.len() > 0)
    if ranked is not None and unknown.height:  # nothing the corpus says answers them
        ranked = ranked.join(unknown.select(pl.col("id").alias("query_id")), on="query_id", how="anti")
    rows = [_answer_in_order(ordered, named, ranked, units)] if ordered.height else []
    simple_q = simple_q.join(rows[0], on="id", how="anti") if rows else simple_q
    rows += [_answer_simple(simple_q, ranked, dictionary, units)] if simple_q.height else []
    if subs.height:
        sub_ans = _answer_simple(sub_parsed, ranked, dictionary, units)
        sub_ans = _substituted(subs, sub_parsed, sub_ans, units, leaves, dictionary, p).rename({"id": "sub_id", "question": "_asked"})
        answered = pl.col("status") == "answered"
        gathered = (
            subs.join(sub_ans, on="sub_id", how="left")
            .select(
                "id",
                pl.struct(
                    pl.col("sub_questions").alias("question"),
                    pl.when(answered).then(pl.col("status")).otherwise(pl.lit("no_answer")).alias("status"),
                    *[pl.when(answered).then(pl.col(c)).cast(t).alias(c) for c, t in SUB_ANSWER.items() if c not in ("question", "status")],
                ).alias("sub_answer"),
            )
            .group_by("id", maintain_order=True)
            .agg(pl.col("sub_answer").alias("sub_answers"))
        )
        compound = (
            parsed.filter(~single)
            .select("id", "question", "answer_type", "decomposition_pattern")
            .join(gathered, on="id", how="left")
            .with_columns(pl.lit("compound").alias("status"))
        )
        # a comparison is answered by its parts' values put in order, when they state values of one kind
        ordered_values = compare.answered(compound.filter(pl.col("decomposition_pattern") == "comparison"))
        rows.append(compound.drop("decomposition_pattern").join(ordered_values, on="id", how="left"))
    vague = parsed.filter(single & pl.col("suggested_clarification").is_not_null())
    if too_short.height and ranked is not None:
        said = _said_once(too_short, _answer_simple(too_short, ranked, dictionary, units), ranked)
        rows.append(said)
        vague = vague.join(said.select("id"), on="id", how="anti")
    if vague.height:
        vague = _options_held(vague, dictionary, units["text"])
        rows.append(
            vague.select(
                "id",
                "question",
                "answer_type",
                pl.lit("clarification").alias("status"),
                pl.col("suggested_clarification").alias("clarification"),
            )
        )
    out = (
        pl.concat([r.select([c for c in r.columns if c in ANSWERS]) for r in rows], how="diagonal_relaxed")
        if rows
        else pl.DataFrame(schema=ANSWERS)
    )
    if ranked is not None:
        out = out.join(_nearest(ranked, out.filter(pl.col("status") == "no_answer")["id"]), on="id", how="left")
    out = out.join(unknown, on="id", how="left")  # each of them has no candidate left, so no answer
    order = parsed.select("id").with_row_index("_o")
    return (
        out.drop("question")
        .join(asked, on="id")
        .join(order, on="id")
        .sort("_o")
        .select([pl.col(c).cast(t) if c in out.columns else pl.lit(None, dtype=t).alias(c) for c, t in ANSWERS.items()])
    )


def _options_held(vague: pl.DataFrame, dictionary: Dictionary, texts: pl.Series) -> pl.DataFrame:
    """The questions sent back with only the competing concepts (`clarification_options`) that some
    text of the corpus names by a word of their own, the clarification saying those: a corpus of
    travel rules with no spending threshold is not asked "Do you mean per diem or threshold?"."""
    opts = vague.select("id", pl.col("clarification_options").alias("concept")).explode("concept").drop_nulls()
    if opts.is_empty():
        return vague
    # a concept is named by a word of its own: "cap", shared by both, tells neither apart
    words = dictionary.keywords.filter(~pl.col("is_regex")).select("concept", pl.col("keyword").str.to_lowercase()).unique()
    own = words.filter(pl.col("concept").n_unique().over("keyword") == 1)
    words = own.join(opts.select("concept").unique(), on="concept").sort("concept", "keyword")
    # ... written as a word ("cap", not the "cap" of "capital"), all of them found in one pass
    said = rf"\b(?:{'|'.join(map(re.escape, words['keyword']))})\b"
    found = texts.drop_nulls().str.to_lowercase().str.extract_all(said).explode().drop_nulls().unique()
    held = words.filter(pl.col("keyword").is_in(found.implode()))["concept"].unique().implode()
    old, kept = pl.col("clarification_options"), pl.col("clarification_options").list.eval(pl.element().filter(pl.element().is_in(held)))
    return vague.with_columns(
        pl.col("suggested_clarification").str.strip_suffix(options_said(old)).add(options_said(kept)).alias("suggested_clarification"),
        kept.alias("clarification_options"),
    )


def _said_once(short: pl.DataFrame, answers: pl.DataFrame, ranked: pl.DataFrame) -> pl.DataFrame:
    """The answers of the too-short questions (`short`) whose candidates holding all their words all
    lie in the answer's document: "What is the fee?" of a corpus with one fee schedule is answered,
    of a corpus of contracts each with its fees it is sent back."""
    mine = ranked.join(short.select(pl.col("id").alias("query_id")), on="query_id", how="semi")
    whole = _covered(short, mine).filter(pl.col("_coverage") >= WHOLE_COVERAGE)
    docs = whole.group_by("query_id").agg(pl.col("doc_id").unique().alias("_docs"))
    return (
        answers.filter(pl.col("status") == "answered")
        .join(docs, left_on="id", right_on="query_id")
        .filter((pl.col("_docs").list.len() == 1) & (pl.col("_docs").list.first() == pl.col("doc_id")))
        .drop("_docs")
    )


def unmentioned(questions: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """(id, unmentioned): the technical names each question asks about (rules.TECH_TERM) that no
    sentence, heading or document name of the corpus writes, in any case, from the start of a word:
    "Does Debian accept uploads signed with an ed25519 GPG key?" over a corpus that never writes
    "ed25519" is not answered by a sentence sharing its other words ("... must be signed using the
    debsign command with your private GPG key")."""
    terms = questions.select("id", pl.col("question").str.extract_all(TECH_TERM).alias("_t")).explode("_t").drop_nulls("_t")
    terms = terms.filter(~pl.col("_t").str.contains(FISCAL_PERIOD))
    terms = terms.with_columns(pl.col("_t").str.replace(r"^([A-Z]{3,})s$", "$1"))  # "NDAs": "NDA"
    if terms.is_empty():
        return questions.select("id", pl.lit([], dtype=pl.List(pl.String)).alias("unmentioned"))
    # the sentences first; the headings and document names (joined only if needed) for the terms they lack
    unwritten = set(terms["_t"].unique().to_list())
    for where in (lambda: units["text"], lambda: units["heading_path"].list.join(" ").unique(), lambda: units["document"].unique()):
        if unwritten:
            w = where()
            unwritten = {t for t in unwritten if not w.str.contains(rf"(?i)\b{re.escape(t)}").any()}
    missing = terms.filter(pl.col("_t").is_in(sorted(unwritten))).unique(maintain_order=True)
    return (
        questions.select("id")
        .join(missing.group_by("id", maintain_order=True).agg(pl.col("_t").alias("unmentioned")), on="id", how="left")
        .with_columns(pl.col("unmentioned").fill_null([]))
    )


NEAREST = 3  # passages shown with "no answer found", for the reader to judge where the question's words are


def _nearest(ranked: pl.DataFrame, ids: pl.Series) -> pl.DataFrame:
    """(id, nearest): for each question of `ids`, its first NEAREST ranked candidates that are not
    labels (`_short`), quoted whole with exact offsets. They are shown, never answered: nothing
    confirmed them."""
    return (
        ranked.filter(pl.col("query_id").is_in(ids.implode()) & ~_short("text"))
        .sort("query_id", "_rank")
        .group_by("query_id", maintain_order=True)
        .head(NEAREST)
        .pipe(_quoted_whole)
        .group_by("query_id", maintain_order=True)
        .agg(pl.struct(pl.col("_quote").alias("quote"), *CITED).alias("nearest"))
        .rename({"query_id": "id"})
    )


MAX_SUBSTITUTE_WORDS = 8  # a part's answer short enough to stand in for a pronoun ("the Chief Financial Officer")


def _substituted(subs, sub_parsed, sub_ans, units, leaves, dictionary, p) -> pl.DataFrame:
    """The parts' answers, those of a sequence's later parts asked again with the part before's
    answer in place of their pronoun ("Who approves purchases over $25,000, and how can I contact
    them?": "How can I contact Chief Financial Officer?"). A part whose part before has no short
    answer, or that has no pronoun, keeps its answer."""
    # only a person's or a body's name stands in for "them" ("When did the matrix take effect, and how
    # often is it reviewed?": "it" is the matrix, not the date)
    before = sub_ans.filter(pl.col("answer_type") == "role").select(pl.col("id").alias("_prev_id"), pl.col("answer").alias("_prev"))
    seq = (
        subs.filter(pl.col("decomposition_pattern") == "sequential")
        .with_columns(
            (pl.col("id") + "/" + (pl.col("sub_id").str.extract(r"/(\d+)$").cast(pl.Int64) - 1).cast(pl.String)).alias("_prev_id")
        )
        .join(before, on="_prev_id")
        .filter(
            pl.col("_prev").is_not_null()
            & (pl.col("_prev").str.count_matches(r"\S+") <= MAX_SUBSTITUTE_WORDS)
            & pl.col("sub_questions").str.contains(f"(?i){PRONOUNS}")
        )
        .select(pl.col("sub_id").alias("id"), pl.col("sub_questions").str.replace(f"(?i){PRONOUNS}", pl.col("_prev")).alias("question"))
    )
    if seq.is_empty():
        return sub_ans
    again = parse_questions(seq, dictionary).join(sub_parsed.select("id", "context"), on="id")
    ranked = _ranked(again, units, leaves, dictionary, p, SHOWN_DEPTH)
    got = _answer_simple(again, ranked, dictionary, units).filter(pl.col("status") == "answered")
    # answered again, in place, under the question as the part asked it
    return sub_ans.update(got.select([c for c in sub_ans.columns if c != "question"]), on="id", include_nulls=True)


def _search_terms(units: pl.DataFrame, wanted: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(dl, tf) as `term_counts` gives them for the units' search text (`_u`: row number), counted
    in its two parts, the sentence and its CONTEXT (spaces between, so no word spans them): each
    distinct context is counted once for all the sentences that share it. A null part makes the
    whole search text null, without words."""
    u = units.with_row_index("_u").select(
        pl.col("_u").cast(pl.Int64), "text", pl.when(pl.col("text").is_not_null()).then(CONTEXT).alias("_context")
    )
    s_dl, s_tf = term_counts(u.select("_u", "text"), wanted)
    ctx = u.select(pl.col("_context").alias("text")).drop_nulls().unique().with_row_index("_c").with_columns(pl.col("_c").cast(pl.Int64))
    c_dl, c_tf = term_counts(ctx.rename({"_c": "_u"}), wanted)
    owner = u.select("_u", "_context").join(ctx, left_on="_context", right_on="text").select("_u", "_c")
    dl = s_dl.join(owner.join(c_dl.rename({"_u": "_c", "dl": "_c_dl"}), on="_c"), on="_u", how="left").select(
        "_u", pl.when(pl.col("_c").is_not_null()).then(pl.col("dl") + pl.col("_c_dl")).otherwise(0).alias("dl")
    )
    tf = (
        pl.concat([s_tf.join(owner, on="_u", how="semi"), owner.join(c_tf.rename({"_u": "_c"}), on="_c").select("_u", "term", "tf")])
        .group_by("_u", "term")
        .agg(pl.col("tf").sum())
    )
    return dl, tf


def _search_scores(
    queries: pl.DataFrame, units, p: EvalParams, top: int | None = None, bound: pl.DataFrame | None = None
) -> tuple[pl.LazyFrame, pl.DataFrame]:
    """`bm25_scores` of the queries (query_id, doc_id, question, names) over the units' search
    text, without building it (`_search_terms`).
    `units` is one frame or batches of them: each batch is reduced to its term counts as it comes,
    and only the units of the queries' documents are returned whole with the scores (with `top`,
    only those that could reach it, `Bm25Counts.scores`)."""
    q_terms = query_terms(queries)
    # the words of the query's `names` count NAME_WEIGHT in a sentence's score
    names = query_terms(queries.select("query_id", "doc_id", pl.col("names").alias("question")))
    q_terms = q_terms.join(names.with_columns(pl.lit(NAME_WEIGHT).alias("weight")), on=["query_id", "doc_id", "term"], how="left")
    wanted = q_terms.select("term").unique()
    counts, off = Bm25Counts(queries), 0
    for u in [units] if isinstance(units, pl.DataFrame) else units:
        dl, tf = _search_terms(u, wanted)
        keys = u.with_row_index("_u").select(pl.col("_u").cast(pl.Int64), "doc_id", "chunk")
        counts.add(*[x.with_columns(pl.col("_u") + off) for x in (keys, dl, tf)], u)
        off += u.height
    return counts.scores(q_terms, p, matched_only=True, top=top, bound=bound)


# the boosts of a candidate's BM25 score (rank_candidates): an evidence leaf of one of the question's
# intents, its jurisdiction named, its amounts stated (up to doubling), its answer type's pattern
# matched ("a fax number": a line with one), a rule stated for a yes/no question ("can I ...":
# "must not")
LEAF_BOOST, JURISDICTION_BOOST, TYPE_BOOST, MODAL_BOOST = 0.5, 0.5, 0.5, 0.25
# ... and one whose text, headings or document name states a year of the question's period ("the
# FY2026 budget", "revenue in Q1 2025")
PERIOD_BOOST = 0.5
# the words of a question's names (rules.NAMES) weigh this much in BM25 ("Buffalo Wild Wings"
# otherwise ranks the contract's preamble first for every question about it). With the type and
# rule boosts: the expected sentence among the first TOP_K for 77 -> 78 of 137 development
# questions and 25 -> 30 of 62 held out; answered right 53 -> 54 and 17 -> 18
NAME_WEIGHT = 0.5


# a sentence's first word, capitalised whatever it is; a sentence ends at "?", "!" or a period
# after a word, not after an initial ("e.l.f. Beauty", "Care G. B. Plus")
SENTENCE_OPENING = r"(^|(?:[?!]|\w\w\.)\s+)\W*\w+"


def _name_list(text: pl.Expr = pl.col("question")) -> pl.Expr:
    """The capitalised words of a question after the first of each of its sentences (rules.NAMES):
    "I'd rather not post my patch to the list. Who can I email it to?" names no one (its "Who"
    chose the documents holding "who"). A possessive's "'s" is left out ("Ticketmaster's mailing
    address": the documents say "Ticketmaster")."""
    return text.str.replace_all(SENTENCE_OPENING, "$1").str.replace_all(r"(\w)['’]s\b", "$1").str.extract_all(NAMES)


def _names() -> pl.Expr:
    """`_name_list` as one string, the names apart ("Universal Access, CityNet": read again by
    `_name_list`, as a part's context is, they are two names, not "Universal Access CityNet")."""
    return _name_list().list.join(", ")


def _denies(text: pl.Expr) -> pl.Expr:
    """Whether a text denies (rules.DENIAL): lower-case words only, a sentence's first letter
    lowered, the phrases of NOT_DENIAL removed."""
    t = text.fill_null("").str.strip_chars_start()
    t = pl.concat_str(t.str.head(1).str.to_lowercase(), t.str.slice(1))
    return t.str.replace_all(NOT_DENIAL, " ").str.contains(DENIAL)


def _main_clause(question: pl.Expr) -> pl.Expr:
    """A question without the clauses whose denial is not its own (rules.SIDE_CLAUSE). Python's
    regular expressions: the rule needs a look-ahead, which Polars' engine has not."""
    side = re.compile(SIDE_CLAUSE)
    return question.map_elements(lambda q: side.sub(" ", q), return_dtype=pl.String)


def verdict(question: str = "question", quote: str = "quote") -> pl.Expr:
    """A yes/no question's verdict from the sentence quoted for it: "yes" when the quote denies
    exactly when the question does, else "no"; a quote saying something is not required permits it
    ("May I skip the form?": "The form is optional." -> yes). Null for other questions and for no quote."""
    main = pl.col(quote).str.replace(BUT, "")  # "X is valid, but Y alone is not": the main clause decides
    not_required = main.str.contains(f"(?i){NOT_REQUIRED}")
    permits = pl.col(question).str.contains(PERMISSION_QUESTION)
    denied = pl.when(not_required).then(~permits).otherwise(_denies(main))
    # a permission is given or refused by a rule: a fact's sentence gives a yes to "does it ...?" only
    decides = ~permits | pl.col(quote).str.contains(DECIDES) | _denies(main)
    return (
        pl.when(asks_yes_no(question) & pl.col(quote).is_not_null() & decides)
        .then(pl.when(denied == _denies(_main_clause(pl.col(question)))).then(pl.lit("yes")).otherwise(pl.lit("no")))
        .alias("verdict")
    )


def _boost_bound() -> pl.Expr:
    """The most a question's boosts can multiply a score by (over `hints` columns): the jurisdiction,
    amount, answer-type and rule boosts only apply to questions that name a jurisdiction, state an
    amount, ask for a typed value or ask yes or no."""
    return (
        (1 + LEAF_BOOST)
        * pl.when(pl.col("scope_jurisdictions").list.len() > 0).then(1 + JURISDICTION_BOOST).otherwise(1.0)
        * pl.when(pl.col("_numbers").list.len() > 0).then(2.0).otherwise(1.0)
        * pl.when(pl.col("_rx").is_not_null()).then(1 + TYPE_BOOST).otherwise(1.0)
        * pl.when(pl.col("_yes_no")).then(1 + MODAL_BOOST).otherwise(1.0)
        * pl.when(pl.col("scope_date_from").is_not_null() | pl.col("scope_date_to").is_not_null()).then(1 + PERIOD_BOOST).otherwise(1.0)
    )


YEAR = r"(?:^|\D)((?:19|20)\d{2})(?:\D|$)"


def _in_period() -> pl.Expr:
    """Whether a unit (with its headings and document name) states a year of the question's period
    (scope_date_from to scope_date_to)."""
    years = pl.concat_str([pl.col("text"), CONTEXT], separator=" ").str.extract_all(YEAR)
    years = years.list.eval(pl.element().str.extract(r"(\d{4})", 1).cast(pl.Int32))
    # an open end ("after 2020", "before 2019") is no bound on that side
    lo, hi = pl.col("scope_date_from").dt.year().fill_null(0), pl.col("scope_date_to").dt.year().fill_null(9999)
    return (
        pl.when(pl.col("scope_date_from").is_null() & pl.col("scope_date_to").is_null())
        .then(False)
        .otherwise(pl.struct(years.alias("y"), lo.alias("lo"), hi.alias("hi")).map_batches(_any_year, return_dtype=pl.Boolean))
    )


def _any_year(s: pl.Series) -> pl.Series:
    return pl.Series([any(r["lo"] <= y <= r["hi"] for y in r["y"] or [] if y is not None) for r in s.to_list()], dtype=pl.Boolean)


def rank_candidates(
    parsed: pl.DataFrame,
    units,
    leaves: pl.DataFrame,
    p: EvalParams,
    docs: pl.DataFrame | None = None,
    dictionary: Dictionary | None = None,
    top: int | None = None,
) -> pl.DataFrame:
    """Every sentence that shares a word with the question, best first, within the scope filters;
    with `top`, only as many as decide the first `top` ranks (the same first `top` rows).

    `docs` (query_id, doc_id) restricts a question to given documents (the evaluation harness
    scopes a gold question to its document); by default a question searches the whole corpus.
    `units` is a frame, or (with `docs`) batches of frames read once (`_unit_batches`).
    """
    # names choose the document; a question scoped to its document has none to choose, and a contact
    # question's names are whose address it asks for, which the address's line names too. A part of a
    # compound question is searched with the names of the whole (`context`): "..., and what Best's
    # rating must the insurer have?" is still about the sponsorship the first part named
    context = pl.col("context").fill_null("") if "context" in parsed.columns else pl.lit("")
    names = pl.when(pl.col("answer_type").is_in(CONTACT_TYPES) | (docs is not None)).then(pl.lit("")).otherwise(_names() + " " + context)
    queries = _search_text(parsed, dictionary).join(parsed.select("id", names.alias("names")), on="id")
    queries = queries.select(pl.col("id").alias("query_id"), (pl.col("search") + " " + pl.col("names")).alias("question"), "names")
    # a question naming a party, product or document is answered from the documents naming it
    queries = queries.join(docs if docs is not None else named_documents(parsed, units), on="query_id")
    hints = parsed.select(
        pl.col("id").alias("query_id"),
        *SCOPE_HINTS,
        "scope_jurisdictions",
        "scope_date_from",
        "scope_date_to",
        "answer_type",
        "keywords",
        _stated_values("question").list.concat(_bare_numbers("question")).alias("_numbers"),
        pl.col("question").str.contains(YES_NO_QUESTION).alias("_yes_no"),  # opening with it: the modal boost's test
    ).join(_type_patterns(dictionary), on="answer_type", how="left")
    bound = hints.select("query_id", _boost_bound().alias("_bound"))
    scored, units = _search_scores(queries, units, p, top, bound)
    scored = scored.filter(pl.col("score") > 0).collect()
    # the scope filters first, for the questions that pin a page, slide, section or layout, on the
    # columns they read (a question over a whole corpus of contracts has millions of candidates: no
    # column is joined to them all); with `top`, a candidate whose score could not reach the top-th
    # score even boosted as much as the question's boosts can (`_boost_bound`) is dropped before the boosts are computed
    pins = parsed.select(pl.col("id").alias("query_id"), *SCOPE_HINTS).filter(PINNED)
    if pins.height:
        scope = ["page", "heading_path", "kind", "document"]
        pinned = scored.join(pins, on="query_id").join(units.select("doc_id", "chunk", *scope), on=["doc_id", "chunk"])
        scored = pl.concat([scored.join(pins, on="query_id", how="anti"), pinned.filter(in_scope()).select(scored.columns)])
    cands = scored
    if top is not None:
        kth = cands.group_by("query_id").agg(pl.col("score").top_k(top).min().alias("_kth"))
        cands = (
            cands.join(kth.join(bound, on="query_id"), on="query_id")
            .filter(pl.col("score") * pl.col("_bound") >= pl.col("_kth"))
            .drop("_kth", "_bound")
        )
    intents = parsed.select(pl.col("id").alias("query_id"), pl.col("intents")).explode("intents").drop_nulls().rename({"intents": "intent"})
    # from the candidates to their leaves, never from every leaf to the question's intents
    boost = (
        cands.select("query_id", "doc_id", "chunk")
        .join(units.select("doc_id", "chunk", "fragment_id", "char_start"), on=["doc_id", "chunk"])
        .join(leaves, on=["fragment_id", "char_start"])
        .join(intents, on=["query_id", "intent"])
        .group_by("query_id", "chunk")
        .agg(pl.len().alias("_leaf"))
    )
    return (
        cands.join(hints, on="query_id")
        .join(units, on=["doc_id", "chunk"])
        .join(boost, on=["query_id", "chunk"], how="left")
        # an evidence leaf of a candidate prototype, a sentence naming the question's jurisdiction, and one
        # stating the question's own amounts and percentages ("below 40%") or small numbers ("Debian 12":
        # the row of version 12, not one whose dates hold "12") rank higher
        .with_columns(
            _stated_values("text").list.concat(_bare_numbers("text")).list.set_intersection("_numbers").list.len().alias("_shared")
        )
        .with_columns(
            (
                pl.col("score")
                * (1 + LEAF_BOOST * pl.col("_leaf").fill_null(0).clip(upper_bound=1))
                * (1 + JURISDICTION_BOOST * _contains_any("text", "scope_jurisdictions").cast(pl.Float64))
                * (1 + pl.col("_shared") / pl.max_horizontal(pl.col("_numbers").list.len(), pl.lit(1)))
                * (1 + TYPE_BOOST * pl.col("text").str.contains(pl.col("_rx")).fill_null(False).cast(pl.Float64))
                * (1 + MODAL_BOOST * (pl.col("_yes_no") & pl.col("text").str.contains(MODAL)).cast(pl.Float64))
                * (1 + PERIOD_BOOST * _in_period().cast(pl.Float64))
            ).alias("score")
        )
        .drop("_shared", "_numbers", "_rx", "_yes_no", "scope_date_from", "scope_date_to")
        .sort(["query_id", "score", "doc_id", "char_start"], descending=[False, True, False, False])
        .with_columns(pl.int_range(pl.len()).over("query_id").alias("_rank"))
    )


MIN_NAME = 3  # letters of a name that scopes a question (not "I", "EU" is)


def named_documents(parsed: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """(query_id, doc_id): the documents each question may be answered from. A question's names
    (rules.NAMES after its first word, and those of the whole question a part belongs to) that some
    documents hold and others do not say which documents it is about: it is answered from those
    holding most of them ("Is the Pittsburgh Post-Gazette certified under Safe Harbor?" not from
    another site's policy). A question with no such name may be answered from any document, and one
    spelling out a document's file name from that document (`_titled`)."""
    context = pl.col("context").fill_null("") if "context" in parsed.columns else pl.lit("")
    text = pl.concat_str(pl.col("question"), context, separator=" ")
    names = (
        parsed.select(pl.col("id").alias("query_id"), _name_list(text).alias("_name"))
        .explode("_name")
        .filter((pl.col("_name").str.len_chars() >= MIN_NAME) & ~pl.col("_name").str.contains(r"^I'"))  # not "I've"
        .with_columns(pl.col("_name").str.to_lowercase())
        .unique()
    )
    all_docs = units.select("doc_id").unique()
    ids = parsed.select(pl.col("id").alias("query_id"))
    if names.is_empty():
        return ids.join(all_docs, how="cross")
    wanted = names["_name"].unique().sort().to_list()
    held = (
        units.group_by("doc_id")
        .agg(pl.col("text").str.join(" ").str.to_lowercase().alias("_text"))
        .select("doc_id", pl.col("_text").str.extract_many(wanted, overlapping=True).list.unique().alias("_name"))
        .explode("_name")
        .drop_nulls()
    )
    # a name every document holds, or none, says nothing about which one; a rare name says more than
    # a common one ("Post-Gazette" more than "Safe Harbor"): a document counts the IDF of the names it holds
    idf = (
        held.group_by("_name")
        .agg(pl.len().alias("_n"))
        .filter(pl.col("_n") < all_docs.height)
        .select("_name", (all_docs.height / pl.col("_n")).log().alias("_idf"))
    )
    counts = (
        names.join(idf, on="_name")
        .join(held, on="_name")
        .group_by("query_id", "doc_id")
        .agg(pl.col("_idf").sum().alias("_held"))
        .filter(pl.col("_held") >= pl.col("_held").max().over("query_id") - 1e-9)
        .select("query_id", "doc_id")
    )
    free = ids.join(counts, on="query_id", how="anti").join(all_docs, how="cross")
    return _titled(parsed, units, pl.concat([counts, free]))


TITLE_WORDS = 3  # words of a document's file name for a question spelling them out to name it (not "policy", "leave")


def _words(text: pl.Expr) -> pl.Expr:
    """The text in lower case, its words separated by single spaces."""
    return text.str.to_lowercase().str.replace_all(r"[^\p{L}\p{N}]+", " ").str.strip_chars()


def _titled(parsed: pl.DataFrame, units: pl.DataFrame, named: pl.DataFrame) -> pl.DataFrame:
    """`named` (query_id, doc_id), but a question spelling out a document's file name of TITLE_WORDS
    words or more is answered from the documents so named: "What is the effective date of the GitHub
    Terms of Service?" from github-terms-of-service.md, not from another of GitHub's agreements
    whose effective date ranks first."""
    stems = (
        units.select("doc_id", "document")
        .unique()
        .select("doc_id", _words(pl.col("document").str.replace(r"^.*/", "").str.replace(r"\.[^.]*$", "")).alias("_stem"))
        .filter(pl.col("_stem").str.count_matches(r"\S+") >= TITLE_WORDS)
    )
    asked = parsed.select(pl.col("id").alias("query_id"), (" " + _words(pl.col("question")) + " ").alias("_q"))
    titled = (
        asked.join(stems, how="cross")
        .filter(pl.col("_q").str.contains(" " + pl.col("_stem") + " ", literal=True))
        .select("query_id", "doc_id")
    )
    return pl.concat([titled, named.join(titled, on="query_id", how="anti")])


def _type_patterns(dictionary: Dictionary | None) -> pl.DataFrame:
    """(answer_type, _rx): one regex of each answer type's retrieval patterns, but free text's
    (which any sentence matches) and the contact types' (`_showing` looks for their values deeper
    in the documents ranked first, where a boost would bring other documents' addresses first)."""
    return _type_regexes(dictionary).filter((pl.col("answer_type") != "text") & ~pl.col("answer_type").is_in(CONTACT_TYPES))


def _type_regexes(dictionary: Dictionary | None) -> pl.DataFrame:
    """(answer_type, _rx): one regex of each answer type's retrieval patterns."""
    if dictionary is None:
        return pl.DataFrame(schema={"answer_type": pl.String, "_rx": pl.String})
    return answer_types(dictionary).select("answer_type", pl.col("retrieval_patterns").str.split(" || ").list.join("|").alias("_rx"))


SAME_TEXT = 4  # candidates ranked per one kept: a corpus may hold a text several times (a manual as HTML, text and PDF)


def distinct_texts(ranked: pl.DataFrame) -> pl.DataFrame:
    """The ranked candidates with each text once per question, in the place of its best ranked
    rendition, ranks renumbered: three renditions of one sentence would otherwise fill three of the
    TOP_K places. Renditions are compared by their letters and digits alone (text extraction drops
    quotes and spaces: 'field set to "Debian QA Group"' in HTML is 'fieldsetto Debian QA Group' in the
    PDF), and the one quoted is the most faithful: the one that kept most characters, whitespace
    runs counted once."""
    same = pl.col("text").str.to_lowercase().str.replace_all(r"[^\p{L}\p{N}]+", "")
    kept = pl.col("text").str.replace_all(r"\s+", " ").str.strip_chars().str.len_chars()
    return (
        ranked.with_columns(same.alias("_same"), kept.alias("_kept"))
        .with_columns(pl.col("_rank").min().over("query_id", "_same").alias("_place"))
        .sort(["query_id", "_place", "_kept", "_rank"], descending=[False, False, True, False])
        .unique(["query_id", "_same"], keep="first", maintain_order=True)
        .drop("_same", "_kept", "_place")
        .with_columns(pl.int_range(pl.len()).over("query_id").alias("_rank"))
    )


def _ranked(parsed: pl.DataFrame, units, leaves: pl.DataFrame, dictionary: Dictionary, p: EvalParams, depth: int) -> pl.DataFrame:
    """The first `depth` distinct candidates of each question, best first (`distinct_texts`), taken
    from its first `depth` x SAME_TEXT (the pruned ranking can hold many more, all below them),
    but those missing the question's quarter, half or month (`_off_period`)."""
    ranked = rank_candidates(parsed, units, leaves, p, dictionary=dictionary, top=depth)
    ranked = distinct_texts(ranked.filter(pl.col("_rank") < depth * SAME_TEXT))
    off = _off_period(ranked, parsed)
    if off.any():
        ranked = ranked.filter(~off).with_columns(pl.int_range(pl.len()).over("query_id").alias("_rank"))
    return ranked.filter(pl.col("_rank") < depth)


def _off_period(ranked: pl.DataFrame, parsed: pl.DataFrame) -> pl.Series:
    """Whether each candidate misses its question's quarter, half or month (rules.SUB_YEAR, "in
    Q1 2025"): it states none that meets it, in its text, headings or document name. "Revenue
    reached $48.6 million in Q2 2025" does not answer "What was revenue in Q1 2025?", nor does a
    sentence of quarterly_performance_q2_2025.pdf or a metric's definition, which state no period
    of it. A question naming no such period keeps every candidate."""
    scoped = parsed.filter(pl.col("question").str.contains(SUB_YEAR))
    if scoped.is_empty():  # the common case: no candidate's text is read
        return pl.Series([False] * ranked.height, dtype=pl.Boolean)
    rows = (
        ranked.select("query_id", "text", "heading_path", "document")
        .with_row_index("_i")
        .join(scoped.select(pl.col("id").alias("query_id"), "scope_date_from", "scope_date_to"), on="query_id")
        .with_columns(SEARCH.alias("text"))
    )
    stated = rows.select("_i", "scope_date_from", "scope_date_to", pl.col("text").str.extract_all(SUB_YEAR).alias("dx")).explode("dx")
    stated = dx_bounds(stated.drop_nulls("dx"))
    meets = (pl.col("start") <= pl.col("scope_date_to").fill_null(pl.col("start"))) & (
        pl.col("end") >= pl.col("scope_date_from").fill_null(pl.col("end"))
    )
    kept = stated.filter(meets)["_i"].unique()
    off = rows.filter(~pl.col("_i").is_in(kept.implode()))["_i"]
    return pl.Series(pl.int_range(ranked.height, eager=True).is_in(off.implode()), dtype=pl.Boolean)


def _name_words(parsed: pl.DataFrame) -> pl.DataFrame:
    """(query_id, _word): the words of each question's names (`_names`), MIN_NAME letters or more."""
    return (
        parsed.select(pl.col("id").alias("query_id"), _names().str.extract_all(r"\w[\w&'-]*").alias("_word"))
        .explode("_word")
        .filter(pl.col("_word").str.len_chars() >= MIN_NAME)
        .unique()
    )


def _heads_of(docs: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """(doc_id, text): the head of each contract of `docs`, where it names its parties: its units
    starting up to PREAMBLE_CHARS after the end of the first one saying "by and between" or
    "entered into", joined by newlines. A document with no preamble has none."""
    u = units.join(docs, on="doc_id", how="semi").select("doc_id", "char_start", "char_end", "text")
    # a contract names its parties in its preamble; the names it defines further on are things ("Common Stock")
    pre = u.filter(pl.col("text").str.contains(PREAMBLE)).group_by("doc_id").agg(pl.col("char_end").min().alias("_pre"))
    return (
        u.join(pre, on="doc_id")
        .filter(pl.col("char_start") <= pl.col("_pre") + PREAMBLE_CHARS)
        .sort("doc_id", "char_start")
        .group_by("doc_id", maintain_order=True)
        .agg(pl.col("text").str.join("\n"))
    )


CONTRACT_CONTEXT = {  # what `contract_context` tells of a question's candidate contract
    "query_id": pl.String,
    "doc_id": pl.String,
    "_aliases": pl.List(pl.Struct({"_word": pl.String, "_alias": pl.String})),
    "_held": pl.String,
    "_head": pl.String,
}


def contract_context(parsed: pl.DataFrame, ranked: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """(query_id, doc_id, _aliases, _held, _head): what the head of each question's candidate
    contracts (`_heads_of`, read once) tells of the parties the question names: the names it defines
    for them (`_aliases`: `_defined_names`), the name words it holds (`_held`, joined by spaces) and
    the head itself, lower case (`_head`)."""
    words = _name_words(parsed)
    if words.is_empty():
        return pl.DataFrame(schema=CONTRACT_CONTEXT)
    pairs = ranked.select("query_id", "doc_id").unique().join(words, on="query_id")
    heads = _heads_of(pairs.select("doc_id").unique(), units)
    aliases = (
        _defined_names(pairs, heads, units)
        .group_by("query_id", "doc_id")
        .agg(pl.struct(pl.col("_word").str.to_lowercase(), "_alias").unique().sort().alias("_aliases"))
    )
    # the question names the contract by its parties; its clauses need not name them again: "Can notices
    # under the PennTex gas transportation agreement with MRD Operating be delivered by email?": "The
    # Parties opt out of electronic delivery of notices ..."
    head = pl.col("_head")
    word = pl.lit(r"\b") + pl.col("_word").str.to_lowercase().str.escape_regex() + pl.lit(r"\b")
    held = (
        pairs.join(heads.select("doc_id", pl.col("text").str.to_lowercase().alias("_head")), on="doc_id")
        .group_by("query_id", "doc_id")
        .agg(pl.col("_word").filter(head.str.contains(word)).str.to_lowercase().sort().str.join(" ").alias("_held"), head.first())
    )
    return aliases.join(held, on=["query_id", "doc_id"], how="full", coalesce=True).sort("query_id", "doc_id")


def _defined_names(pairs: pl.DataFrame, heads: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """(query_id, doc_id, _word, _alias): the names a contract gives the parties a question names
    (`pairs`: query_id, doc_id, _word). A name word of the question within DEFINED_BEFORE characters
    before a name the contract's head (`heads`: doc_id, text) defines ("Bravatek Solutions, Inc., a
    Colorado corporation ("Company")") or on a party's line ("Party B: ShenZhen JingWei
    Communication") is that party: the clauses say "Company" or "Party B"."""
    found = []
    for doc_id, t in heads.iter_rows():
        end = 0  # the party of a defined name stands after the one before it
        for m in re.finditer(DEFINED_NAME, t):
            found.append((doc_id, t[max(end, m.start() - DEFINED_BEFORE) : m.start()], m.group(1)))
            end = m.end()
    party_lines = units.join(pairs.select("doc_id").unique(), on="doc_id", how="semi").filter(pl.col("text").str.contains(PARTY_LINE))
    for doc_id, t in party_lines.select("doc_id", "text").iter_rows():
        found += [(doc_id, m.group(2), m.group(1)) for m in re.finditer(PARTY_LINE, t)]
    defs = pl.DataFrame(found, schema={"doc_id": pl.String, "_before": pl.String, "_alias": pl.String}, orient="row")
    named = pl.col("_before").str.contains(pl.lit(r"\b") + pl.col("_word").str.escape_regex() + pl.lit(r"\b"))
    return pairs.join(defs, on="doc_id").filter(named).select("query_id", "doc_id", "_word", "_alias")


def _aliased(groups: str, aliases: str) -> pl.Expr:
    """The keyword groups with each name word's defined names (`defined_names`) among its variants."""

    def add(s: pl.Series) -> pl.Series:
        out = []
        for r in s.to_list():
            names: dict[str, list[str]] = {}
            for a in r[aliases] or []:
                names.setdefault(a["_word"], []).append(a["_alias"])
            out.append([g + [x for w in g for x in names.get(w.lower(), [])] for g in r[groups] or []] if names else r[groups])
        return pl.Series(out, dtype=pl.List(pl.List(pl.String)))

    return pl.struct(groups, aliases).map_batches(add, return_dtype=pl.List(pl.List(pl.String)))


def _covered(parsed: pl.DataFrame, cands: pl.DataFrame, context: pl.DataFrame | None = None) -> pl.DataFrame:
    """The candidates with their question's keyword groups (`_groups`), the share of them each holds
    in its text, headings or document name (`_coverage`) and whether it holds one of those that do
    not name its document and every small number it names (`_topical`). With the `context` of its contract (`contract_context`), a
    name word of the question is also found as the name the contract defines for it, and in every
    sentence of a contract whose head holds it."""
    groups = _keyword_groups(parsed).rename({"id": "query_id"})
    cands = cands.join(groups, on="query_id", how="left").join(
        parsed.select(
            pl.col("id").alias("query_id"),
            _names().alias("_scope"),
            _bare_numbers("question").alias("_nums"),
            _paths("question").alias("_paths"),
        ),
        on="query_id",
        how="left",
    )
    context = pl.DataFrame(schema=CONTRACT_CONTEXT) if context is None else context
    cands = (
        cands.join(context, on=["query_id", "doc_id"], how="left", maintain_order="left")
        .with_columns(_aliased("_groups", "_aliases").alias("_groups"))
        .drop("_aliases")
    )
    scope = pl.concat_str(
        [pl.col("_scope"), pl.col("document").str.replace_all(r"[/_.\-]", " "), pl.col("_head")], separator=" ", ignore_nulls=True
    )
    return (
        cands.with_columns(
            pl.concat_str([SEARCH, pl.col("_held")], separator=" ", ignore_nulls=True).alias("search"), scope.alias("_scope")
        )
        .with_columns(
            _shares("search", "_groups").alias("_shares"),
            (
                _topical("search", "_groups", "_scope") & _numbers_held("search", "_nums") & _contains_any("search", "_paths", every=True)
            ).alias("_topical"),
        )
        .unnest("_shares")
        .drop("_held", "_head", "_scope", "_nums", "_paths")
        # whether it names what the question's pronoun stands for (`_with_antecedent`)
        .with_columns((_coverage("search", "_antecedent") if "_antecedent" in groups.columns else pl.lit(1.0)).alias("_names_it"))
    )


def _about(parsed: pl.DataFrame, ranked: pl.DataFrame, depth: int = TOP_K, context: pl.DataFrame | None = None) -> pl.DataFrame:
    """(query_id, _rank, _coverage, unit columns): of the questions' `ranked` candidates, the first
    `depth` that hold at least MIN_COVERAGE of its keyword groups and are topical (`_covered`), and
    down to twice `depth` those holding every group (WHOLE_COVERAGE): "Which targets does it
    [debian/rules] have to implement?" is answered by 'The following targets are required and must
    be implemented by "debian/rules": ...', ranked 14th below sentences of its section about targets
    that do not say "implement" (development 101 -> 102 of 164, nothing lost; three times as deep
    gives the same); a count's candidate whose number counts what it counts needs COUNTED_COVERAGE
    only, and the first candidate of a long question leading the second LEAD_COVERAGE. The share
    held counts each word of the question by how much it tells (`_weighted`) when that is more:
    "What should I do if I want to opt out?" is about the sentence holding "opt out" alone
    (development 108 -> 110 of 164, nothing else changed; the weighted share for ordering the
    confirmed candidates too lost five)."""
    covered = _covered(parsed, ranked.filter(pl.col("_rank") < 2 * depth), context)
    covered = covered.with_columns(_counts_it(covered, parsed).fill_null(False).alias("_counts"))
    near = (pl.col("_rank") < depth) | (pl.col("_coverage") >= WHOLE_COVERAGE)
    share = pl.max_horizontal("_coverage", "_weighted")
    second = pl.col("score").filter(pl.col("_rank") == 1).first().over("query_id").fill_null(0.0)
    leading = (pl.col("_rank") == 0) & (pl.col("_groups").list.len() >= LEAD_GROUPS) & (pl.col("score") >= LEAD_RATIO * second)
    leading = leading if "score" in covered.columns else pl.lit(False)  # candidates given without their scores
    held = (share >= MIN_COVERAGE) | (pl.col("_counts") & (pl.col("_coverage") >= COUNTED_COVERAGE)) | (leading & (share >= LEAD_COVERAGE))
    return covered.filter(held & pl.col("_topical") & near)


def _numbers_held(text: str, numbers: str) -> pl.Expr:
    """Whether the text holds every small number its question names (`numbers`: `_bare_numbers`),
    on its own (`_bare_numbers` of the text), in words ("three (3) days") or in an amount ("$16"): a number names what
    the question is about ("the codename of Debian 16"), so a sentence holding its other words and
    not the number (the codename of Sid, created 1993-08-16) is about something else."""
    amounts = _stated_values(text).list.eval(pl.lit("#") + pl.element())  # "$16", "30%": the number is there too
    said = pl.concat_list(_bare_numbers(text), _word_numbers(text), amounts).fill_null(pl.lit([], dtype=pl.List(pl.String)))
    return pl.col(numbers).fill_null(pl.lit([], dtype=pl.List(pl.String))).list.set_difference(said).list.len() == 0


ANCHOR = "/anchor"  # the id suffix of the search for an ordered question's anchor
# candidates an anchor is chosen from, by coverage first: a list's lead-in holding the words the
# question counts with ("The tasks assigned to the Technical Committee are to: a. ...") may rank
# below sentences that merely name the parties (development steps 8 -> 9 of 14, held out unchanged)
ANCHOR_DEPTH = 2 * TOP_K


def _answer_in_order(parsed: pl.DataFrame, named: pl.DataFrame, ranked: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """The answered questions about order (`sequence`): the anchor is the candidate holding most
    of the keyword groups of the step named (`named`, "what comes after X": X, or the question
    without its ordinal) among its first ANCHOR_DEPTH `ranked` candidates (`_about`: twice as deep for
    one holding them all), then the best ranked;
    the answer is the item read from its document, quoted whole, or the item the anchor itself
    enumerates inline, quoted alone (`sequence.read_inline`)."""
    anchors = (
        _about(named, ranked.join(named.select(pl.col("id").alias("query_id")), on="query_id", how="semi"), ANCHOR_DEPTH)
        .sort(["query_id", "_coverage", "_rank"], descending=[False, True, False])
        .group_by("query_id", maintain_order=True)
        .first()
        .select(pl.col("query_id").str.strip_suffix(ANCHOR), "doc_id", "char_start", "score")
        .join(parsed.select(pl.col("id").alias("query_id"), "sequence_position", "sequence_after"), on="query_id")
    )
    anchors = introduced(anchors, units)
    # an anchor enumerating its items inline ("(i) ..., (ii) ...") holds the item asked for itself
    inline = read_inline(anchors, units).with_columns(QUOTE_END, pl.col("_quote").alias("_value"))
    got = read_in_order(anchors.join(inline, on="query_id", how="anti").drop("score"), units)
    score = anchors.select("query_id", "score")
    chosen = pl.concat([_quoted_whole(got).join(score, on="query_id"), inline.join(score, on="query_id")], how="diagonal_relaxed")
    # an item that is a step's title ("**Lock down the CI:**") is answered by the text it introduces
    return _answers(parsed, _past_labels(chosen.select(CHOSEN), parsed, units, STEP_TITLE)).filter(pl.col("status") == "answered")


# what an answer is made of: its candidate's unit and its quote (_qs, _qe: offsets) and value
CHOSEN = ["query_id", "document", "page", "heading_path", "_qs", "_qe", "doc_id", "fragment_id", "_quote", "_value", "score"]
CONTACT_TYPES = ("email", "phone", "url", "address", "contact")  # answer types whose value the text shows unmistakably
# an address, number or IBAN asked for ("What is the fax number of X?", not "Who can I call?") is
# answered only by a line showing one
SHOWN = pl.col("answer_type").is_in(["email", "phone", "iban", "address"]) & ~pl.col("question").str.contains(r"(?i)^\W*who\b")
# the party a contact question is addressed to ("notices to Oaktree Capital Management", "the fax
# number for Chang Chen-Bin Architects", "who do I email at Spok Holdings"): a notices clause gives
# every party's address, and the answer is the one under this party's name (first two words of it)
RECIPIENT = r"\b(?:to|for|at)\s+(?:the\s+)?([A-Z][\w&'.-]*(?:\s+[A-Z][\w&'.-]*)?)"


def _recipient() -> pl.Expr:
    """A contact question's recipient as a case-insensitive whole-word pattern (null: none named)."""
    name = pl.col("question").str.extract(RECIPIENT, 1)
    return pl.when(pl.col("answer_type").is_in(CONTACT_TYPES) & name.is_not_null()).then(
        pl.lit(r"(?i)\b") + name.str.escape_regex() + pl.lit(r"\b")
    )


SHOWN_DEPTH = 100  # candidates ranked per question, deep enough to find a contact value or a definition ...
SHOWN_DOCUMENTS = 3  # ... in the documents of this many best ranked
# the definitions of the term `{t}` (regex-escaped), strongest first: '"Trigger Date" shall mean ...',
# 'high: Items that ...' (not 'Days sales outstanding: 47 days', a value), '... is called type
# design'; then a sentence opening with the term and "is" or "are" ('A native source package is one that ...')
DEFINITIONS = (
    r"(?i)(?:^|[\s\"“'‘(])(?:the |a |an )?{t}[\"”'’)]?\s*(?:\([^)]{{0,60}}\)\s*)?,?\s*"
    r"(?:(?:means|shall mean|shall have the meaning|has the meaning|is defined as|refers to)\s|:\s+[^\d\s$€£])"
    r"|(?i)\b(?:is|are) called (?:the |a |an )?{t}\b",
    r"(?i)^\W*(?:\d+(?:\.\d+)*\s+)?(?:the |a |an )?[\"“'‘]?{t}[\"”'’]?(?:\(\d\w*\))?\s+(?:is|are)\s",  # "sudo(8) is"
    # ... then a sentence opening with the term, written out or not, and saying what it does ("PAM
    # (Pluggable Authentication Modules) allows ...", "NSS offers ..."), before one only writing it out
    r"(?i)^\W*(?:the |a |an )?[\"“'‘]?{t}[\"”'’]?(?:\s*\([^)]{{0,60}}\))?\s+(?:allows|lets|enables|offers|provides|gives|handles|manages|"
    r"controls|implements|performs|makes|keeps|checks|determines|specifies|defines|describes|contains|holds|stores|runs)\s",
    # ... or an abbreviation written out beside it in capitalised words ("FTBFS (Fails To Build From
    # Source)", "Debian Developer (DD)")
    r"(?:^|[^\w-]){t}\s*\((?:[A-Z][\w'-]*[\s/-]+){{1,7}}[A-Z][\w'-]*\)|(?:[A-Z][\w'-]*[\s/-]+){{1,7}}[A-Z][\w'-]*\s*\({t}\)",
    # ... then a table row whose first cell is the term and the next what it means ("| high | Items
    # that don't have a reasonable default.", "Row 3: Priority = high; Description = Items ..."), the
    # term's cell possibly after up to three others ("Row 12: metric_id = MET-012; metric_name = Days
    # sales outstanding; definition = Average trade receivables ...")
    r"(?i)^\s*\|\s*[\"“'‘`]?{t}[\"”'’`]?\s*\|\s*\S"
    r"|(?i)^Row \d+:(?:\s*[^=;\n]{{1,40}}=[^;\n]*;){{0,3}}\s*[^=;\n]{{1,40}}=\s*[\"“'‘`]?{t}[\"”'’`]?\s*;\s*[^=;\n]{{1,40}}=\s*\S",
    # ... then the term with what it is set beside it ("Package names also include the abiname, a
    # small integer, which identifies ...")
    r"(?i)\b{t},\s+(?:a|an)\s+[^,.;:]{{3,80}}[,.;]",
)


def _in_first_documents(ranked: pl.DataFrame) -> pl.DataFrame:
    """The `ranked` candidates in the documents of their question's SHOWN_DOCUMENTS best ranked."""
    docs = ranked.filter(pl.col("_rank") < SHOWN_DOCUMENTS).select("query_id", "doc_id").unique()
    return ranked.join(docs, on=["query_id", "doc_id"], how="semi")


def _showing(
    ranked: pl.DataFrame, patterns: pl.DataFrame, strongest_first: bool = False, units: pl.DataFrame | None = None
) -> pl.DataFrame:
    """For each question of `patterns` (query_id, _pats: regexes), the best ranked of its `ranked`
    candidates, in the documents of its SHOWN_DOCUMENTS best ranked, that has a line
    matching one of them: a contact question's address or number (a notices clause lists them on
    lines of their own, the party's name in the address rather than the question's words), a term's
    definition (with `strongest_first`, a match of an earlier pattern first, whatever its rank).
    Quoted whole for prose, by the matching line otherwise."""
    lines = (
        _lines(_in_first_documents(ranked).join(patterns, on="query_id"), pl.col("text").str.split("\n"))
        .with_columns(pl.int_ranges(pl.col("_pats").list.len()).alias("_pat_i"))
        .explode("_pats", "_pat_i")
        .with_columns(pl.col("_line").str.extract(pl.col("_pats"), 0).alias("_value"))
        .filter(pl.col("_value").is_not_null())
    )
    # a contact question's recipient (`_to`): the lines under its name first
    named = _naming(lines, units, "_line_start") if units is not None and "_to" in lines.columns else pl.lit(True)
    lines = (
        lines.with_columns((~named).alias("_other"))
        .sort(["query_id", "_pat_i", "_rank", "_line_start"] if strongest_first else ["query_id", "_other", "_rank", "_line_start"])
        .group_by("query_id", maintain_order=True)
        .first()
    )
    whole = PROSE
    return lines.with_columns(
        pl.when(whole).then(UNIT_QS).otherwise(LINE_QS), pl.when(whole).then(UNIT_QUOTE).otherwise(LINE_QUOTE)
    ).with_columns(QUOTE_END)


LOOKBACK = 200  # characters of a candidate's fragment before it that may name its recipient


def _naming(rows: pl.DataFrame, units: pl.DataFrame, at: str) -> pl.Series:
    """Whether each of `rows` (query_id, doc_id, fragment_id, text, _to: `_recipient`, `at`: the
    document offset of its value) names its question's recipient, in its text or in its fragment's
    text within LOOKBACK characters before `at` (an address block's name often sits in the
    sentence before the number: "Motorola Solutions, Inc. 1303 E." | "Algonquin Road ... Email: ...")."""
    r = rows.select("doc_id", "fragment_id", "text", pl.col(at).alias("_at"), "_to").with_row_index("_row")
    if r["_to"].is_null().all():  # no contact question names a party: the corpus's units are not read
        return pl.Series("_t", [False] * r.height, dtype=pl.Boolean)
    before = (
        r.filter(pl.col("_to").is_not_null())
        .select("_row", "doc_id", "fragment_id", "_at")
        .join(units.select("doc_id", "fragment_id", "char_start", "char_end", pl.col("text").alias("_t")), on=["doc_id", "fragment_id"])
        .filter((pl.col("char_end") <= pl.col("_at")) & (pl.col("char_end") > pl.col("_at") - LOOKBACK))
        .sort("_row", "char_start")
        .group_by("_row", maintain_order=True)
        .agg(pl.col("_t").str.join(" "))
    )
    near = r.join(before, on="_row", how="left", maintain_order="left").select(
        pl.concat_str(["_t", "text"], separator=" ", ignore_nulls=True), "_to"
    )
    return near.select(pl.col("_t").str.contains(pl.col("_to")).fill_null(False))["_t"]


def _contact_patterns(parsed: pl.DataFrame, dictionary: Dictionary) -> pl.DataFrame:
    types = answer_types(dictionary).select("answer_type", pl.col("patterns").alias("_pats"))
    return (
        parsed.select(pl.col("id").alias("query_id"), "answer_type", _recipient().alias("_to"))
        .join(types, on="answer_type")
        .drop("answer_type")
    )


def _definition_patterns(parsed: pl.DataFrame) -> pl.DataFrame:
    return parsed.select(
        pl.col("id").alias("query_id"),
        pl.col("defined_term")
        .map_elements(lambda t: [d.format(t=pl.escape_regex(t)) for d in DEFINITIONS], return_dtype=pl.List(pl.String))
        .alias("_pats"),
    )


# a footnote ("[14] The default package name field length of aptitude is 30.") is an aside: of
# candidates holding as many of the question's words, one of the main text comes first
MAIN_TEXT = ~pl.col("text").str.contains(r"^\s*\[\d{1,3}\]\s")


def _answer_simple(parsed: pl.DataFrame, ranked: pl.DataFrame, dictionary: Dictionary, units: pl.DataFrame) -> pl.DataFrame:
    """The answers of `parsed` from their `ranked` candidates (`_ranked`, SHOWN_DEPTH deep: deep
    enough for a contact value or a definition further down)."""
    if parsed.height == 0:
        return pl.DataFrame(schema=ANSWERS)
    ranked = _quoting(parsed, ranked.join(parsed.select(pl.col("id").alias("query_id")), on="query_id", how="semi"))
    # the candidate must be about the question: most of its own words are in the sentence, its headings or
    # document name, a party's name also as the name its contract defines for it ("Reseller") or in
    # any clause of the contract naming it in its head
    first = ranked.filter(pl.col("_rank") < TOP_K)
    context = contract_context(parsed, first, units)
    cands = _about(parsed, ranked, context=context)
    # a yes/no question is decided by the sentence stating the rule itself: of the candidates holding
    # as many of its words with their headings, the one holding most in its own text (`_own`) comes
    # first ("Can a shared library package be marked Essential?": "A shared library package must not
    # be tagged "essential"", not a sentence of that section naming "package" alone)
    yes_no = cands.join(parsed.filter(asks_yes_no()).select(pl.col("id").alias("query_id")), on="query_id", how="semi")
    own = yes_no.select("query_id", "_rank", _coverage("text", "_groups").alias("_own"))  # only where it is read
    cands = cands.join(own, on=["query_id", "_rank"], how="left", maintain_order="left").with_columns(pl.col("_own").fill_null(0.0))
    # two signals on the same line: the answer type's pattern and one of the question's keywords
    # (a count by a number of what it counts: `_counting`)
    counting = cands.drop("_groups").join(_counting(parsed), on="query_id", how="left", maintain_order="left")
    confirmed = _confirm(counting, answer_types(dictionary).select("answer_type", "retrieval_patterns"))
    # a contact question's answer names the party it is addressed to (its address is searched below otherwise)
    recipients = parsed.select(pl.col("id").alias("query_id"), _recipient().alias("_to"))
    confirmed = confirmed.join(recipients, on="query_id", how="left", maintain_order="left")
    confirmed = confirmed.filter(pl.col("_to").is_null() | _naming(confirmed, units, "char_start")).drop("_to")
    # of the confirmed candidates, the one with most of the question's words (then, for a count, one
    # whose number counts what it counts; for a yes/no question, most in its own text), then the best ranked
    # (development set: 39 of 161 right instead of 36 for the best ranked alone, declines unchanged)
    questions = parsed.select(
        pl.col("id").alias("query_id"),
        pl.col("question").alias("_question"),
        pl.col("question").str.replace_all(HYPOTHETICAL, " happens ").alias("_main"),
        *_bounded("question"),
    )
    best = (
        confirmed.filter(pl.col("_confirmed"))
        .join(questions, on="query_id", how="left")
        .filter(_not_a_party_listing("_question"))
        .with_columns(_fits().alias("_fits"), MAIN_TEXT.alias("_main_text"))
        .sort(
            ["query_id", "_fits", "_names_it", "_coverage", "_main_text", "_counts", "_own", "_rank"],
            descending=[False, *[True] * 6, False],
        )
        .group_by("query_id", maintain_order=True)
        .first()
    )
    # none confirmed by its answer type's pattern: the best ranked candidate holding every one of the
    # question's keyword groups answers as text (a "when" answered by an event, a "who" by a name no
    # role pattern knows), quoted whole
    plain = (
        _showing_value(confirmed.join(best, on="query_id", how="anti"), dictionary)
        .filter((pl.col("_coverage") >= WHOLE_COVERAGE) & ~pl.col("query_id").is_in(parsed.filter(SHOWN)["id"].implode()))
        .with_columns(MAIN_TEXT.alias("_main_text"))
        .sort(["query_id", "_main_text", "_rank"], descending=[False, True, False])
        .group_by("query_id", maintain_order=True)
        .first()
    )
    best = pl.concat([best.select(CHOSEN), _quoted_whole(plain).select(CHOSEN)])
    # a question asking for a number that none of the first candidates confirms: deeper, the best
    # ranked holding every one of its keyword groups and showing a number ("what is the monthly
    # Continuing Fee?": "... a monthly Continuing Fee equal to five percent (5%) of the Gross Sales")
    valued = parsed.filter(pl.col("answer_type").is_in(VALUE_TYPES)).join(best.select(pl.col("query_id").alias("id")), on="id", how="anti")
    if valued.height:
        best = pl.concat([best, _quoted_whole(_valued(valued, ranked, dictionary)).select(CHOSEN)])
    # a term asked to be defined: its definition among the first candidates comes first
    defined = parsed.filter(pl.col("defined_term").is_not_null())
    if defined.height:
        found = _showing(ranked, _definition_patterns(defined), strongest_first=True).select(CHOSEN)
        best = pl.concat([found, best.join(found, on="query_id", how="anti")])
    typed = parsed.filter(pl.col("answer_type").is_in(CONTACT_TYPES)).join(best.select(pl.col("query_id").alias("id")), on="id", how="anti")
    if typed.height:
        best = pl.concat([best, _showing(ranked, _contact_patterns(typed, dictionary), units=units).select(CHOSEN)])
    # still nothing: the first candidate answers when it stands out from the second
    rest = parsed.join(best.select(pl.col("query_id").alias("id")), on="id", how="anti").filter(~SHOWN)
    if rest.height:
        best = pl.concat([best, _standing_out(rest, ranked, dictionary, context).select(CHOSEN)])
    return _answers(parsed, _with_consequence(_past_labels(best, parsed, units), units))


def _quoting(parsed: pl.DataFrame, cands: pl.DataFrame) -> pl.DataFrame:
    """The candidates whose own text holds every term their question quotes (its "direct"
    keywords), when one of them does (all when none does or it quotes none). A quoted term names
    what is asked about, so a sentence naming it only in its headings is about something else:
    "Who is the 'staff' group typically meant for?" is answered by "The 'staff' group are usually
    help-desk/junior sysadmins ...", not by the sentence before it, about the 'adm' group."""
    quoted = (
        _question_keywords(parsed)
        .filter(pl.col("source") == "direct")
        .group_by("id")
        .agg(pl.col("text").alias("_quoted"))
        .rename({"id": "query_id"})
    )
    if quoted.is_empty():  # most questions quote nothing: no candidate is read
        return cands
    held = _contains_any("text", "_quoted", every=True, word_start=True)  # found as written: 'adm' is not in "sysadmins"
    return (
        cands.join(quoted, on="query_id", how="left", maintain_order="left")
        .with_columns(held.alias("_quotes"))
        .filter(pl.col("_quotes") | ~pl.col("_quotes").any().over("query_id"))
        .drop("_quoted", "_quotes")
    )


LABEL_WORDS = 4  # words of a unit that labels the text after it ("- **rw-build-tree**", "Business Transfers.")


def _short(col: str) -> pl.Expr:
    """A text of LABEL_WORDS words or fewer and no number (a short unit with a number states a value:
    "protocol version 2.1")."""
    return (pl.col(col).str.count_matches(r"\p{L}[\p{L}\p{N}'-]*") <= LABEL_WORDS) & ~pl.col(col).str.contains(r"\d")


# a label: a short quote, or a heading asking a question ("How Do We Secure Your Personal Information?")
# ... or a lead-in cut before what it introduces ("You may obtain a copy of the License at" / the
# address on its own line)
LEAD_IN = r"(?i)\b(?:at|to|from|via)\s*$"
# ... and, for a question asking how to do something or which command to run, a sentence
# introducing what follows with a colon ("... by issuing the dh_make command as follows:")
HOW_TO = (
    r"(?i)\b(?:what|which) commands?\b|\bhow (?:do|can|should|would) (?:i|we|you|one)\b"
    r"|\bwhat (?:do|should) (?:i|we) (?:run|type|execute)\b"
)
LABEL = _short("_quote") | pl.col("_quote").str.contains(r"\?\W*$") | pl.col("_quote").str.contains(LEAD_IN)
# ... and an item of a list that only titles its step ("**Lock down the CI:**": a few words and a colon)
STEP_TITLE = _short("_quote") & pl.col("_quote").str.contains(r":\W*$")


def _past_labels(best: pl.DataFrame, parsed: pl.DataFrame, units: pl.DataFrame, label: pl.Expr = LABEL) -> pl.DataFrame:
    """The chosen answers (CHOSEN), each LABEL chosen for a question of free text replaced by the
    sentence after it in its document, which the label introduces: "What does the rw-build-tree
    restriction mean?" is answered by "The test(s) needs write access to the built source tree",
    not by its label "- **rw-build-tree**" that holds the question's words. So is a sentence ending
    on a colon chosen for a question asking how to do something (HOW_TO): "What command creates the
    initial package?" is answered by the command, not by "... issuing the dh_make command as
    follows:" (a question asking which port keeps "approx runs by default on port 9999 and ...:")."""
    free = parsed.filter(pl.col("answer_type") == "text").select(pl.col("id").alias("query_id"), pl.col("question").alias("_q"))
    how = pl.col("_q").str.contains(HOW_TO) & pl.col("_quote").str.contains(r":\s*$")
    labels = best.join(free, on="query_id").filter(label | how).drop("_q")
    if labels.is_empty():
        return best
    after = (
        labels.select("query_id", "doc_id", "_qe", "score")
        .join(units.join(labels.select("doc_id").unique(), on="doc_id", how="semi"), on="doc_id")
        # past the rules of a table drawn in text ('|', '+----+'): they say nothing
        .filter((pl.col("char_start") >= pl.col("_qe")) & pl.col("text").str.contains(r"[\p{L}\p{N}]"))
        .sort("query_id", "char_start")
        .group_by("query_id", maintain_order=True)
        .first()
    )
    nxt = _quoted_whole(after).select(CHOSEN)
    return pl.concat([best.join(nxt, on="query_id", how="anti"), nxt]).sort("query_id")


def _with_consequence(best: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """The chosen answers (CHOSEN); one quoting a whole sentence runs on into the next when that one
    follows from it (BACK_REFERENCE, `joined`): "Please note that you should transfer the changes
    file last. Otherwise, your upload may be rejected ..." tells what happens if it is not; "In those
    cases, the TSC makes a determination." says who settles the disagreement of the sentence before."""
    follows = units.filter(pl.col("joined").is_not_null()).select(
        "fragment_id",
        (pl.col("before_start") + _indent("joined")).alias("_js"),
        pl.col("joined").str.strip_chars().alias("_joined"),
    )
    if follows.is_empty() or best.is_empty():
        return best
    whole = pl.col("_value") == pl.col("_quote")
    on = best.join(follows, on="fragment_id", how="left", maintain_order="left").filter(
        (pl.col("_js") == pl.col("_qs")) & pl.col("_joined").str.starts_with(pl.col("_quote"))
    )
    extended = on.with_columns(
        pl.when(whole).then(pl.col("_joined")).otherwise(pl.col("_value")).alias("_value"),
        pl.col("_joined").alias("_quote"),
    ).with_columns(QUOTE_END)
    return pl.concat([best.join(extended.select("query_id"), on="query_id", how="anti"), extended.select(CHOSEN)]).sort("query_id")


# A first candidate that holds most of the question's words and scores well above the second is the
# answer even when no answer-type pattern confirms it ("Who can second a wording change?": "Any DD
# can second ..."; "May I fly first class?": "First class air travel is prohibited."):
# coverage + GAP_WEIGHT x ln(first score / second score) >= STANDOUT (a question with one candidate
# counts a ratio of 2). Chosen on the development split among 0-1.5 x 0.5-1.25 (a plateau from
# 0.67/0.8 to 1.0/0.95): single-answer questions right 53 -> 58 of 136, held out 19 -> 22 of 61,
# no unanswerable question answered on either
GAP_WEIGHT, STANDOUT = 0.67, 0.8


# answer types whose value is a number a sentence shows: a question asking for one ("How much does a
# licence cost?") is not answered by a sentence standing out without it (held out: declined 11 -> 12
# of 13; development unchanged). A time may be a condition ("for as long as your account is open")
VALUE_TYPES = ("amount", "percentage", "count")
# ... and, for the first candidate standing out (`_standing_out`), a length of time: "How long does a
# temporary ban last?" is not answered by "Violating these terms may lead to a permanent ban." (held
# out: declined 10 -> 11 of 13, nothing else moved; dates too lost a right answer: not they), or the
# event that bounds it (the duration's `shown_by` in the dictionary: "Bolt Media stores your data for
# as long as your account is open.")
STANDING_TIMED = ("duration",)
# ... and whose value is where or whom to reach: a sentence naming no address, number, link, role
# ("the travel desk") or way in (the contact's `shown_by`: "the FP&A mailbox") is no answer
REACH_TYPES = ("contact", "email", "phone", "url")


# A count is of the things its question names: "How many source packages are in the archive?" is
# confirmed by "30000 source packages", not by the "3.0" of a source format, and "How many people
# are on the TSC?" not by "Started 5 seconds ago". The counted phrase is the question's one to three
# words after "how many" (before a verb, preposition or the end); a number counts it when one of its
# words follows within COUNTED_GAP words ("two types of Debian packages" counts types), or a table's
# header names its number ("Number of Shares"). The confirmation and a first candidate standing out
# ask it; deeper (`_valued`) a contract writes counts in other words ("warrants to purchase 50,000
# shares"): two right answers were lost there
COUNTED_PHRASE = (
    r"(?i)\b(?:how many|number of)\s+(?:of\s+(?:the|these|those|our|your|my|their)\s+)?((?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*?)(?:es|s)?"
    r"(?:\s+(?:are|is|were|was|do|does|did|can|could|should|must|will|would|have|has|had|may|might|need|needed|"
    r"in|on|of|for|to|at|per|from|under|with|that|which|there|exist|remain|left)\b|\s*[?.,;:!)]|\s*$)"
)
COUNTED_GAP = 2


def _counting(parsed: pl.DataFrame) -> pl.DataFrame:
    """(query_id, _counted): for a count question naming what it counts, the pattern of a number
    counting it (COUNTED_PHRASE); null otherwise."""
    # "how many characters long": the characters are counted, "long" says along what
    phrase = pl.col("question").str.extract(COUNTED_PHRASE, 1).str.replace(r"(?i)\s+(?:long|wide|big|old|high|tall|deep|large)$", "")
    words = phrase.str.replace_all(r"\s+", "|")
    counted = pl.concat_str(
        pl.lit(rf"(?i)\b(?:(?:\d[\d,.]*|{NUMBER_WORDS})\s+(?:\S+\s+){{0,{COUNTED_GAP}}}?|number of\s+)(?:"), words, pl.lit(r")\w*")
    )
    return parsed.select(pl.col("id").alias("query_id"), pl.when(pl.col("answer_type") == "count").then(counted).alias("_counted"))


def _counts_it(cands: pl.DataFrame, parsed: pl.DataFrame) -> pl.Series:
    """Per candidate (query_id, text): whether its text shows a number counting what its question
    counts (`_counting`); null when the question names nothing it counts."""
    counted = cands.select("query_id", "text").join(_counting(parsed), on="query_id", how="left", maintain_order="left")
    return counted.select(pl.col("text").str.contains(pl.col("_counted"))).to_series()


def _standing_out(parsed: pl.DataFrame, ranked: pl.DataFrame, dictionary: Dictionary, context: pl.DataFrame | None = None) -> pl.DataFrame:
    """The first candidate of each question of `parsed` when it stands out (GAP_WEIGHT, STANDOUT)
    and, for a question asking for a number (VALUE_TYPES), shows one of its type, quoted whole. A
    label (`_short`: "Table of Contents", "The troublemakers.") neither answers nor is the second:
    its few words score high by its heading's and document name's words, not by what it says. A
    first candidate that is a contract's preamble (`_not_a_party_listing`) does not stand out."""
    first = (
        ranked.join(parsed.select(pl.col("id").alias("query_id"), pl.col("question").alias("_q")), on="query_id", how="inner")
        .filter(~_short("text"))
        .sort("query_id", "_rank")
        .with_columns(pl.int_range(pl.len()).over("query_id").alias("_rank"))
        .filter(pl.col("_rank") < 2)
    )
    second = first.filter(pl.col("_rank") == 1).select("query_id", pl.col("score").alias("_second"))
    top = first.filter((pl.col("_rank") == 0) & _not_a_party_listing("_q")).drop("_q")
    top = _covered(parsed, top.join(second, on="query_id", how="left"), context)
    gap = (pl.col("score") / pl.col("_second").fill_null(pl.col("score") / 2)).log()
    stands = top.filter((pl.col("_coverage") + GAP_WEIGHT * gap >= STANDOUT) & pl.col("_topical"))
    # ... and a count naming what it counts shows a number counting it
    stands = stands.filter(_counts_it(stands, parsed).fill_null(True))
    return _quoted_whole(_showing_value(stands, dictionary, standing=True))


def _valued(parsed: pl.DataFrame, ranked: pl.DataFrame, dictionary: Dictionary) -> pl.DataFrame:
    """For each question of `parsed`, its best ranked candidate in the documents of its
    SHOWN_DOCUMENTS best ranked that holds every one of its keyword groups and shows a number
    (`_showing_value`)."""
    mine = _in_first_documents(ranked.join(parsed.select(pl.col("id").alias("query_id")), on="query_id", how="semi"))
    whole = _covered(parsed, mine).filter(pl.col("_coverage") >= WHOLE_COVERAGE)
    return _showing_value(whole, dictionary).sort("query_id", "_rank").group_by("query_id", maintain_order=True).first()


def _showing_value(cands: pl.DataFrame, dictionary: Dictionary, standing: bool = False) -> pl.DataFrame:
    """The candidates but those of a question asking for a number (VALUE_TYPES) that show none, of
    any of those types ("How much contingency can a division hold?": "up to 2% of its budget"), and
    those of a question asking how to reach someone (REACH_TYPES) that show no address, number,
    link, role or way in ("Who should I contact about pip?" was answered by a sentence naming no one);
    `standing` out (`_standing_out`), also those of a question asking how long (STANDING_TIMED)
    that show no length of time nor the event bounding it."""
    if dictionary is None:
        return cands
    registry = answer_types(dictionary)
    patterns = registry.select("answer_type", pl.concat_list("patterns", "shown").list.join("|").alias("_rx"))
    rules = [(VALUE_TYPES, VALUE_TYPES), (REACH_TYPES, (*REACH_TYPES, "role"))]
    for types, shown in rules + ([(STANDING_TIMED, STANDING_TIMED)] if standing else []):
        rx = "|".join(patterns.filter(pl.col("answer_type").is_in(shown))["_rx"].sort())
        cands = cands.filter(~pl.col("answer_type").is_in(types) | pl.col("text").str.contains(rx))
    return cands


# a question asking under which conditions something holds ("Under what conditions can X ...?",
# "What happens if ...?", "When can ...?") is answered by a sentence stating one
CONDITION_QUESTION = (
    r"(?i)\bunder what (?:conditions?|circumstances?)\b|\bin what (?:cases?|circumstances?)\b|\bwhat happens if\b|\bwhen (?:can|may)\b"
)
CONDITION = r"(?i)\b(?:if|unless|only when|provided that|except|where|in the event)\b"
# ... and one asking why by a sentence giving a cause
WHY_QUESTION = r"(?i)^\W*why\b|\bwhat (?:drove|caused|explains)\b|\bfor what reason\b|\bhow come\b"
CAUSE = r"(?i)\b(?:because|due to|driven by|caused by|as a result of|owing to|reflect(?:s|ed|ing)?|thanks to|led to|result(?:s|ed)? from)\b"


def _bounds(text: pl.Expr, words: str) -> pl.Expr:
    """The amounts a text states right after one of `words` (rules.OVER, UNDER), as plain numbers
    (`_ungrouped`: "over $25,000", "plus de 25 000 $" -> "25000")."""
    bound = rf"(?i)\b(?:{words})\s*(?:[$€£]|USD|EUR|GBP)?\s?\d+(?:\.\d+)?"
    return _ungrouped(text).str.extract_all(bound).list.eval(pl.element().str.extract(r"(\d+(?:\.\d+)?)$", 1))


def _bounded(question: str) -> list[pl.Expr]:
    """The amounts a question (a column) bounds from below (`_q_over`) and from above (`_q_under`),
    read once per question for `_same_bound`."""
    return [_bounds(pl.col(question), OVER).alias("_q_over"), _bounds(pl.col(question), UNDER).alias("_q_under")]


def _same_bound(text: pl.Expr) -> pl.Expr:
    """Whether the text does not bound the other way an amount its question bounds (`_bounded`):
    asked about purchases "over $25,000" (or "de plus de 25 000 $"), "Purchases over $5,000 and up to
    $25,000 ..." does, "Purchases over $25,000 must be ..." does not."""
    over, under = _bounds(text, OVER), _bounds(text, UNDER)

    def crossed(asked: pl.Expr, along: pl.Expr, against: pl.Expr) -> pl.Expr:
        return (asked.list.set_intersection(against).list.len() > 0) & (asked.list.set_intersection(along).list.len() == 0)

    return ~crossed(pl.col("_q_over"), over, under) & ~crossed(pl.col("_q_under"), under, over)


def _fits() -> pl.Expr:
    """Whether a candidate (text) fits its question (_question; _main, without its HYPOTHETICAL; `_bounded`) beyond its words: it
    denies when the question does ("Which files don't need to be copied?": "... need not be
    included", not "... must all be included"), it states a condition when the question asks for
    one, a cause when it asks why, a rule when it asks for a permission (rules.DECIDES: "Can I sell a
    username?" is decided by "... are prohibited", not by a sentence holding more of its words), and
    it bounds the question's amounts the same way (`_same_bound`)."""
    q = pl.col("_question")
    denied = ~_denies(pl.col("_main")) | _denies(pl.col("text"))  # "what happens if I don't ...?" denies nothing
    conditioned = ~q.str.contains(CONDITION_QUESTION) | pl.col("text").str.contains(CONDITION)
    caused = ~q.str.contains(WHY_QUESTION) | pl.col("text").str.contains(CAUSE)
    decided = ~q.str.contains(ASKS_LEAVE) | pl.col("text").str.contains(DECIDES) | _denies(pl.col("text"))
    return denied & conditioned & caused & decided & _same_bound(pl.col("text"))


def _not_a_party_listing(question: str) -> pl.Expr:
    """Whether a candidate (text, answer_type) may answer its question (a column) as far as the texts
    listing a contract's parties go. Its preamble: it is none (rules.PREAMBLE), or the question asks who the parties are or when the
    agreement was made (PARTIES_QUESTION). The preamble names every party and the agreement's title, so
    it holds the words of any question about its contract; it is neither confirmed nor standing out for
    others. A notices clause's address block ("If to AJR: Alex Job Racing, Inc. 551 ...", rules.
    ADDRESS_BLOCK) names its party too: it answers only a contact question or one about where to send
    (ADDRESS_QUESTION)."""
    preamble_ok = ~pl.col("text").str.contains(PREAMBLE) | pl.col(question).str.contains(PARTIES_QUESTION)
    address_ok = (
        ~pl.col("text").str.contains(ADDRESS_BLOCK)
        | pl.col("answer_type").is_in(CONTACT_TYPES)
        | pl.col(question).str.contains(ADDRESS_QUESTION)
    )
    return preamble_ok & address_ok


# a list item's marker ("- ", "* ", "3. ") says where the item sits in its list, not what it says
LIST_MARKER = r"^[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+\S"


def _past_label(chosen: pl.DataFrame) -> pl.DataFrame:
    """The chosen quotes (CHOSEN) without a list item's marker (LIST_MARKER) or, of a JSON
    document's single line, its key path, the citation moved past it (exact still); a quote of
    several lines (a record) keeps its path. A leaf line ("key.path = value",
    corpus.loaders.records) is cited from its value: "[11].text = Bank detail changes ..." quotes
    "Bank detail changes ..."; the path says where the value sits in the file, not what the
    document says."""
    one_line = pl.col("document").str.contains(JSON_FILE) & ~pl.col("_quote").str.contains("\n")
    path = pl.when(one_line).then(pl.col("_quote").str.extract(LEAF_PATH, 1))
    marker = pl.col("_quote").str.extract(f"({LIST_MARKER})", 1).str.len_chars() - 1  # up to the item's first character
    cut = pl.col("_n")
    return (
        chosen.with_columns(pl.coalesce(path.str.len_chars(), marker, 0).alias("_n"))
        .with_columns(
            pl.when(pl.col("_value") == pl.col("_quote")).then(pl.col("_value").str.slice(cut)).otherwise(pl.col("_value")).alias("_value"),
            pl.col("_quote").str.slice(cut),
            pl.col("_qs") + cut,
        )
        .drop("_n")
    )


def _answers(parsed: pl.DataFrame, chosen: pl.DataFrame) -> pl.DataFrame:
    """One row per question (ANSWERS columns but the compound ones): its chosen candidate's quote
    and citation (`_past_label`), "no_answer" when none was chosen."""
    chosen = _past_label(chosen)
    res = parsed.select(pl.col("id"), "question", "answer_type", KEYWORD_TEXTS.alias("_kw")).join(
        chosen.select(
            pl.col("query_id").alias("id"),
            *CITED,
            "doc_id",
            "fragment_id",
            pl.col("_quote").alias("quote"),
            pl.col("_value").alias("answer"),
            "score",
        ),
        on="id",
        how="left",
    )
    return res.with_columns(
        pl.when(pl.col("quote").is_not_null()).then(pl.lit("answered")).otherwise(pl.lit("no_answer")).alias("status"),
        # free text has no value to cut out: the answer is the confirmed line itself, or the cell of a
        # table row in the column the question names ("What support does the Basic plan have?": "Email")
        pl.when(pl.col("answer_type") == "text")
        .then(pl.coalesce(_named_cell("quote", pl.col("heading_path").list.last(), "_kw"), pl.col("quote")))
        .otherwise(pl.col("answer"))
        .alias("answer"),
        verdict(),
    ).drop("_kw")


def _lines(cands: pl.DataFrame, lines: pl.Expr) -> pl.DataFrame:
    """One row per line (`_line`) of each candidate, `lines` giving its list of lines, with
    `_line_start`: the line's offset in the document (the candidate's lines joined by newlines)."""
    return (
        cands.with_columns(lines.alias("_line"))
        .explode("_line")
        .with_columns((pl.col("_line").str.len_chars() + 1).alias("_n"))
        .with_columns((pl.col("char_start") + pl.col("_n").cum_sum().over(["query_id", "_rank"]) - pl.col("_n")).alias("_line_start"))
    )


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row ("| Team | $25 | 1 TB |" -> ["Team", "$25", "1 TB"])."""
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _columns_and_cells(row: str, header: str) -> tuple[list[str], list[str]]:
    """A table row's column names and cells: a Markdown row's under its header's names, a sheet's
    or CSV file's from its own "name = value" fields (`loaders.base.row_fields`); none for any other line."""
    if row.lstrip().startswith("|"):
        return header.split(" | "), _cells(row)
    fields = row_fields(row) or []
    return [name for name, _ in fields], [value for _, value in fields]


def _named_cell(line: str, header: pl.Expr, kws: str) -> pl.Expr:
    """The cell of a table row (`line`: a Markdown row under its `header`'s column names as
    `_under_table_header` gives them, or a sheet's row naming its columns, `_columns_and_cells`) in
    the column the question names ("How much storage does the
    Team plan include?" of "| Team | $25 | 1 TB |" under "Plan | Monthly price | Storage": "1 TB"):
    the column whose name holds most of the question's keywords (`kws`), a cell holding one
    (the row's own name, "Team") aside; null for any other line, or when no column is named. The
    column is the answer's type, whatever the value looks like."""

    def cell(s: pl.Series) -> pl.Series:
        out = []
        for r in s.to_list():
            row, names, words = r["line"] or "", r["header"] or "", [w for w in (r["kws"] or []) if w]
            columns, cells = _columns_and_cells(row, names)
            if len(cells) != len(columns) or len(columns) < 2:
                out.append(None)
                continue
            named = [(_field_named(col, c, words), -i, c) for i, (col, c) in enumerate(zip(columns, cells)) if c]
            best = max(named, default=(0, 0, None))
            out.append(best[2] if best[0] else None)
        return pl.Series(out, dtype=pl.String)

    return pl.struct(pl.col(line).alias("line"), header.alias("header"), pl.col(kws).alias("kws")).map_batches(cell, return_dtype=pl.String)


def _field_named(name: str, value: str, words: list[str] | set[str]) -> int:
    """How many of the question's words a field's name (a table's column, a record's key) holds when
    its value holds none: the field the question asks for by name (`_named_cell`, `_line_hits`)."""
    return 0 if any(w in value.lower() for w in words) else sum(w in name.lower() for w in words)


NAMED_FIELD = 2  # hits a record's field counts for when its key is one of the question's words and its value none


def _line_hits(line: str, kws: str) -> pl.Expr:
    """How many of the question's keywords (`kws`) a line holds, the line ranking the lines of one
    candidate: of a record's leaf line only its key and value count (every line of an element holds
    its path), and a field the question names by its key while its value holds none of them counts
    NAMED_FIELD more: "What is the numeric code of the Australian Dollar?" is answered by
    "numeric = 036", not by "name = Australian Dollar" (the column a table question names is
    `_named_cell`)."""

    def hits(s: pl.Series) -> pl.Series:
        out = []
        for r in s.to_list():
            text, words = (r["t"] or "").lower(), {w.lower() for w in (r["n"] or [])}
            leaf = LEAF_LINE.match(text)
            if leaf is None:
                out.append(sum(w in text for w in words))
                continue
            key, value = leaf.groups()
            out.append(sum(w in f"{key} = {value}" for w in words) + NAMED_FIELD * (_field_named(key, value, words) > 0))
        return pl.Series(out, dtype=pl.UInt32)

    return pl.struct(pl.col(line).alias("t"), pl.col(kws).alias("n")).map_batches(hits, return_dtype=pl.UInt32)


# a question's keywords as lower-case texts, the shortest ("it", "of") left out
KEYWORD_TEXTS = pl.col("keywords").list.eval(
    pl.element().struct.field("text").str.to_lowercase().filter(pl.element().struct.field("text").str.len_chars() >= 3)
)


def _confirm(cands: pl.DataFrame, types: pl.DataFrame) -> pl.DataFrame:
    """Flag candidates where the answer type's pattern (a count question's own, `_counted`, where it
    names what it counts) and a question keyword share a line (a prose unit is one line)."""
    pats = (
        types.with_columns(pl.col("retrieval_patterns").str.split(" || "))
        .explode("retrieval_patterns")
        .rename({"retrieval_patterns": "_pat"})
        .with_columns(pl.int_range(pl.len()).over("answer_type").alias("_pat_i"))
    )  # the registry's order decides between patterns
    # a table row or record is confirmed by one of its lines, and quoted by it with its own offsets;
    # prose by the whole unit: its line breaks are layout (a wrapped sentence has its keyword on one
    # line and its value on the next)
    lines = _lines(
        cands,
        pl.when(PROSE).then(pl.concat_list(pl.col("text").str.replace_all(r"[ \t]*\n\s*", " "))).otherwise(pl.col("text").str.split("\n")),
    )
    has_kw = (
        lines.with_columns(KEYWORD_TEXTS.alias("_kw"))
        .with_columns(_named_cell("_line", pl.col("heading_path").list.last(), "_kw").alias("_cell"))
        .join(pats, on="answer_type", how="left")
        .with_columns(pl.coalesce("_counted", "_pat").alias("_pat"))
        .with_columns(
            pl.coalesce(pl.col("_cell"), pl.col("_line").str.extract(pl.col("_pat"), 0)).alias("_value"),
        )
    )
    # a pinned page or slide is itself a signal: there the keyword may be the section's heading ("Severity levels")
    pinned = (pl.col("pages_hint").list.len() + pl.col("slides_hint").list.len()) > 0
    has_kw = (
        has_kw.with_columns(pl.col("heading_path").list.last().fill_null("").alias("_heading"))
        .with_columns(
            _line_hits("_line", "_kw").alias("_kw_n"),
        )
        .with_columns(((pl.col("_kw_n") > 0) | (pinned & _contains_any("_heading", "_kw"))).alias("_kw_hit"))
    )
    ok = has_kw.with_columns((pl.col("_value").is_not_null() & pl.col("_kw_hit")).alias("_ok"))
    ok = ok.with_columns(
        # trim the line to its text, keeping the offsets exact
        LINE_QS,
        LINE_QUOTE,
    )
    whole = pl.col("_confirmed") & PROSE
    return (
        ok.sort(["query_id", "_rank", "_ok", "_kw_n", "_line_start", "_pat_i"], descending=[False, False, True, True, False, False])
        .group_by(["query_id", "_rank"], maintain_order=True)
        .agg(
            pl.all()
            .exclude("_ok", "_line", "_kw", "_cell", "_pat", "_pat_i", "_kw_hit", "_kw_n", "_heading", "_value", "_quote", "_qs", "_n")
            .exclude("_line_start", "_counted")
            .first(),
            pl.col("_ok").any().alias("_confirmed"),
            pl.col("_value").filter(pl.col("_ok")).first().alias("_value"),
            pl.col("_quote").filter(pl.col("_ok")).first().alias("_quote"),
            pl.col("_qs").filter(pl.col("_ok")).first().alias("_qs"),
        )
        # prose is quoted whole, across its hard line breaks (a wrapped sentence is not cut at a line);
        # a table row or record keeps its confirming line
        .with_columns(
            pl.when(whole).then(UNIT_QS).otherwise(pl.col("_qs")),
            pl.when(whole).then(UNIT_QUOTE).otherwise(pl.col("_quote")),
        )
        .with_columns(QUOTE_END)
    )


PROSE_KINDS = ("paragraph", "list_item")  # units quoted whole; the others (table rows, records) by the line that confirms
# ... and the sentences of a long paragraph cut into windows, unless their lines are a record's
# ("[13].kind = rule", "Row 3: ..."): a wrapped sentence of a contract is quoted whole, not by the line
# holding the value
RECORD_LINE = rf"(?m)^\s*(?:{KEY_PATH}\s=\s|Row \d+:)"
# ... and a record of leaf lines ("4217[1].alpha_3 = AUD" / "4217[1].numeric = 036", LEAF_LINES) is
# quoted by its line whatever its kind
PROSE = (pl.col("kind").is_in(PROSE_KINDS) & ~pl.col("text").str.contains(LEAF_LINES)) | (
    (pl.col("kind") == "sentence_window") & ~pl.col("text").str.contains(RECORD_LINE)
)


def _indent(col: str) -> pl.Expr:
    """Characters of whitespace a text starts with (a quote trimmed of them keeps exact offsets)."""
    return pl.col(col).str.len_chars() - pl.col(col).str.strip_chars_start().str.len_chars()


# a quote (_quote) and its offsets (_qs, _qe): a unit's whole text, or one of its lines, trimmed
UNIT_QS, UNIT_QUOTE = (pl.col("char_start") + _indent("text")).alias("_qs"), pl.col("text").str.strip_chars().alias("_quote")
LINE_QS, LINE_QUOTE = (pl.col("_line_start") + _indent("_line")).alias("_qs"), pl.col("_line").str.strip_chars().alias("_quote")
QUOTE_END = (pl.col("_qs") + pl.col("_quote").str.len_chars()).alias("_qe")


# a chosen quote's citation columns, from its unit and its offsets
CITED = ["document", "page", "heading_path", pl.col("_qs").alias("char_start"), pl.col("_qe").alias("char_end")]


def _quoted_whole(cands: pl.DataFrame) -> pl.DataFrame:
    """The candidates quoted whole, the quote also their value (nothing cut out of it)."""
    return cands.with_columns(UNIT_QS, UNIT_QUOTE).with_columns(QUOTE_END, pl.col("_quote").alias("_value"))


# where a quote is: null when nothing was answered
CITATION_SCHEMA = {
    "type": ["object", "null"],
    "required": ["document", "page", "heading_path", "char_start", "char_end"],
    "properties": {
        "document": {"type": "string"},
        "page": {"type": ["integer", "null"]},
        "heading_path": {"type": "array", "items": {"type": "string"}},
        "char_start": {"type": "integer", "minimum": 0},
        "char_end": {"type": "integer", "minimum": 0},
    },
}
VERDICT_SCHEMA = {"enum": ["yes", "no", None], "description": "a yes/no question's answer, decided by the quote"}
# The --json output of `qspace ask`: a list of answers, each an object with these keys.
ANSWER_JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "array",
    "items": {
        "type": "object",
        "required": [
            "id",
            "question",
            "status",
            "answer",
            "quote",
            "citation",
            "verdict",
            "answer_type",
            "clarification",
            "sub_answers",
            "unmentioned",
            "nearest",
        ],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "string"},
            "question": {"type": "string"},
            "status": {"enum": list(STATUSES)},
            "answer": {
                "type": ["string", "null"],
                "description": "the value the answer type's pattern confirmed; a comparison's: its parts' values in order",
            },
            "quote": {"type": ["string", "null"], "description": "verbatim document text at the citation's offsets"},
            "citation": CITATION_SCHEMA,
            "verdict": VERDICT_SCHEMA,
            "answer_type": {"type": "string"},
            "clarification": {"type": ["string", "null"]},
            "sub_answers": {
                "type": "array",
                "description": "each part of a compound question, answered on its own",
                "items": {
                    "type": "object",
                    "required": ["question", "status", "answer", "quote", "citation", "verdict"],
                    "additionalProperties": False,
                    "properties": {
                        "question": {"type": "string"},
                        "status": {"enum": ["answered", "no_answer"]},
                        "answer": {"type": ["string", "null"]},
                        "quote": {"type": ["string", "null"]},
                        "citation": CITATION_SCHEMA,
                        "verdict": VERDICT_SCHEMA,
                    },
                },
            },
            "unmentioned": {
                "type": "array",
                "description": "no answer sought: the technical names the question asks about that no document writes",
                "items": {"type": "string"},
            },
            "nearest": {
                "type": "array",
                "description": "no answer found: the best ranked passages, not confirmed, for the reader to judge",
                "items": {
                    "type": "object",
                    "required": ["quote", "citation"],
                    "additionalProperties": False,
                    "properties": {"quote": {"type": "string"}, "citation": CITATION_SCHEMA},
                },
            },
        },
    },
}


def _citation(r: dict) -> dict:
    """The citation of a quote: its document, page, section and characters."""
    return {k: r[k] for k in ("document", "page", "char_start", "char_end")} | {"heading_path": r["heading_path"] or []}


def _cited(r: dict) -> dict:
    """question, status, answer, quote and citation of an answer (or of a part of a compound one)."""
    citation = _citation(r) if r["status"] == "answered" else None
    return {
        "question": r["question"],
        "status": r["status"],
        "answer": r["answer"],
        "quote": r["quote"],
        "citation": citation,
        "verdict": r["verdict"] if r["status"] in ("answered", "compound") else None,  # a compound one's: a comparison's
    }


def to_json(answers: pl.DataFrame) -> list[dict]:
    return [
        {
            "id": r["id"],
            **_cited(r),
            "answer_type": r["answer_type"] or "text",
            "clarification": r["clarification"],
            "unmentioned": r["unmentioned"] or [],
            "sub_answers": [_cited(s) for s in r["sub_answers"] or []],
            "nearest": [{"quote": n["quote"], "citation": _citation(n)} for n in r["nearest"] or []],
        }
        for r in answers.iter_rows(named=True)
    ]


def _where(r: dict) -> str:
    """Document, page, section and characters of an answered row."""
    page = f", page {r['page']}" if r["page"] is not None else ""
    section = " > ".join(r["heading_path"] or [])
    return f"[{r['document']}{page}{', ' + section if section else ''}, characters {r['char_start']}-{r['char_end']}]"


# control characters of a document (an ANSI colour code, a terminal title sequence) shown as escapes,
# never sent to the reader's terminal; line breaks and tabs stay
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def to_text(answers: pl.DataFrame) -> str:
    """The answers as a reader sees them in a terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", _as_text(answers))


def _as_text(answers: pl.DataFrame) -> str:
    lines = []
    for r in answers.iter_rows(named=True):
        lines.append(f"Q: {r['question']}")
        if r["status"] == "answered":
            # an answer that is its quote whole is shown once, in quotes; a value, then the quote it is read from
            shown = [f'"{r["quote"]}"'] if r["answer"] == r["quote"] else [r["answer"], f'   "{r["quote"]}"']
            said = f"{r['verdict'].capitalize()}. {shown[0]}" if r["verdict"] else shown[0]
            lines += [f"A: {said}", *shown[1:], f"   {_where(r)}"]
        elif r["status"] == "clarification":
            lines.append(f"Clarification needed: {r['clarification']}")
        elif r["status"] == "compound":
            if r["answer"]:  # a comparison's, from its parts' values
                lines.append(f"A: {r['verdict'].capitalize()}. {r['answer']}" if r["verdict"] else f"A: {r['answer']}")
            for s in r["sub_answers"] or []:
                said = f'"{s["quote"]}" {_where(s)}' if s["status"] == "answered" else "no answer found"
                said = f"{s['verdict'].capitalize()}. {said}" if s["status"] == "answered" and s["verdict"] else said
                lines.append(f"  - {s['question']} -> {said}")
        elif r["unmentioned"]:
            lines.append(f"No answer found: no document of the corpus mentions {', '.join(repr(t) for t in r['unmentioned'])}.")
        else:
            lines.append("No answer found (nothing in the corpus confirms an answer of the expected type).")
            if r["nearest"]:
                lines.append("   Nearest passages, not confirmed:")
                lines += [f'   - "{n["quote"]}" {_where(n)}' for n in r["nearest"]]
        lines.append("")
    return "\n".join(lines)


def ask_strategy(gold, units: Iterable[pl.DataFrame], leaves: pl.DataFrame, dictionary: Dictionary, p: EvalParams) -> pl.DataFrame:
    """The ask path as an evaluation strategy: the sentences it reads for a gold question, in its
    own rank order, scoped to the question's document like every other strategy. `units` arrive
    in batches (`unit_batches`), read once."""
    q = gold_queries(gold).collect()
    if q.height == 0:
        return pl.DataFrame(schema=RETRIEVALS)
    parsed = parse_questions(pl.DataFrame({"id": q["query_id"], "question": q["question"]}), dictionary)
    ranked = rank_candidates(parsed, units, leaves, p, docs=q.select("query_id", "doc_id"), dictionary=dictionary)
    # exact token counts only as far down each ranking as a reader can load
    ranked = count_ranked(ranked.select("query_id", "doc_id", "char_start", "char_end", "text", "fragment_id"), "text", p).with_columns(
        pl.lit(1, dtype=pl.Int64).alias("path_length")
    )
    return load_in_order(ranked.lazy(), STRATEGY, pl.col("rank"), p)


STRATEGY = "ask"

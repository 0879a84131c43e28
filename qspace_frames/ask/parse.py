"""The question parser: many user questions in, one typed frame out.

`parse_questions` turns each question into columns the answering code can act on: weighted
keywords (verbatim phrases, content words, expert-dictionary variants in every language, code
anchors), the detector intents it asks about, the expected answer shape and type, structural
hints (pages, sections, sheets, slides, layout), scope filters (dates, parties, jurisdictions,
currencies, a condition), a decomposition into sub-questions, and a clarification when the
question is too vague to act on.

Everything is a rule, and every rule is data:
- the vocabularies an expert edits live in `params/dictionary/` (concepts, their keywords in
  several languages, the answer-type registry with its cue and retrieval regexes, closed value
  sets such as countries and currencies) and are validated up front by `load_dictionary`;
- the parser's own cues are named regular expressions and rows of pattern tables below
  (`INTENT_CUES`, `SHAPE_RULES`, `LAYOUT_RULES`, `ANCHOR_PATTERNS`, `DANGLING`, ...), written
  for the Rust regex engine Polars uses (no look-around).

The whole batch is parsed with Polars expressions (regex extraction, Aho-Corasick keyword
matching, joins against the dictionary tables, list ops); Python touches only the input
strings (to make them valid UTF-8) and the small dictionary files while validating them.
No LLM, no network: the same questions and dictionary always give the same frame."""

from __future__ import annotations

import polars as pl

from ..affordances.rules import INTENTS
from ..evaluation.bm25 import terms_expr
from .compare import comparisons
from .dictionary import (
    REGEX_PREFIX,
    Dictionary,
    load_dictionary,
    padded_expr,
    stems_expr,
    tokens_expr,
)
from .rules import (
    ACRONYM_IT,
    ANCHOR,
    AND_MARK,
    AUX,
    BACK_REFERENCE,
    CLAUSE_START,
    CODE_ANCHOR,
    COLLECTIVE_PRONOUNS,
    COMPOUND,
    CONDITION_LEADING,
    CONDITION_TRAILING,
    CUT_MARK,
    DANGLING,
    DATE_BARE,
    DATE_OPERATOR,
    DATE_RANGE,
    DX_PARTS,
    EXPLETIVE_IT,
    FIXED_PHRASES,
    FRAMING,
    HOW_MEASURE,
    IDENTIFIER,
    IF_SO,
    IMPERATIVE,
    INTENT_CUES,
    LAYOUT_RULES,
    MAX_CONJUNCT_WORDS,
    MONTH,
    MONTH_NUMBER,
    NAMED_DOCUMENT,
    PAGES,
    PARTIES_BETWEEN,
    PARTY_DEFINED,
    PARTY_LEAD,
    PARTY_ORG,
    PARTY_ROLES,
    PREPOSED_WH,
    PRONOUNS,
    QUALIFIED,
    QUESTION_STOP_WORDS,
    SHAPE_RULES,
    SHEET_NAMES,
    SHEET_NUMBERS,
    SLIDES,
    SPECIFIC_CONTENT_WORDS,
    THEN,
    TOC_PATTERNS,
    UNIFIED_RULES,
    WH,
    YES_NO_AFTER_CLAUSE,
    YES_NO_QUESTION,
)

KEYWORD = pl.Struct(
    {
        "text": pl.String,  # the keyword as written (a regex when is_regex)
        "weight": pl.Float64,  # 0..1
        "source": pl.String,  # direct | expert_dictionary | anchor | question
        "semantic_group": pl.String,  # the concept (expert_dictionary), "anchor", or null
        "is_regex": pl.Boolean,
    }
)

QUESTIONS = {
    "id": pl.String,
    "question": pl.String,  # the original text
    "keywords": pl.List(KEYWORD),  # deduplicated, strongest source kept, ordered
    "dictionary_ambiguities": pl.List(pl.String),  # dictionary keywords whose concept stayed ambiguous
    "intents": pl.List(pl.String),  # detector intents, in affordances.INTENTS order
    "answer_shape": pl.String,  # single | listing | table | tree | nested_json
    "answer_type": pl.String,  # a key of answer_types.csv
    "pages_hint": pl.List(pl.Int64),
    "toc_section_hint": pl.String,
    "layout_hint": pl.String,  # text | table | image | header | null
    "sheets_hint": pl.List(pl.String),
    "slides_hint": pl.List(pl.Int64),
    "scope_date_from": pl.Date,
    "scope_date_to": pl.Date,
    "scope_parties": pl.List(pl.String),
    "scope_jurisdictions": pl.List(pl.String),  # canonical values of the jurisdiction value sets
    "scope_currencies": pl.List(pl.String),  # canonical values of the currency value set
    "scope_condition": pl.String,  # the condition of a conditional question
    "decomposition_pattern": pl.String,  # single | independent | sequential | unified | conditional | comparison
    "sub_questions": pl.List(pl.String),
    "condition": pl.String,
    "suggested_clarification": pl.String,
    "clarification_options": pl.List(pl.String),  # the competing concepts a vague question may mean (at most 3)
    "ambiguity_reason": pl.String,
    "sequence_position": pl.Int64,  # the Nth item asked for ("the second step": 2), -1 for the last; null
    "sequence_after": pl.String,  # the step a "what comes after X" question names (X); null
    "defined_term": pl.String,  # the term a "what does X mean" question asks to define (X); null
}

SOURCES = ("direct", "expert_dictionary", "anchor", "question")  # strongest first
SHAPES = ("single", "listing", "table", "tree", "nested_json")
LAYOUTS = ("text", "table", "image", "header")
PATTERNS = ("single", "independent", "sequential", "unified", "conditional", "comparison")
JURISDICTION_SETS = ("country", "region", "us_state")
CURRENCY_SETS = ("currency",)

MAX_CHARS = 10_000  # a question longer than this is analysed on its first MAX_CHARS characters
MAX_RANGE = 500  # "pages 1 to 10^9" expands to at most this many pages
DIRECT_WEIGHT = 1.0
ANCHOR_WEIGHT = 0.9
QUESTION_WEIGHT = 0.5
MIN_CONTENT_WORDS = 2  # fewer content words than this and nothing pinned: the question is sent back ("Approval?")
TOO_SHORT = "too short"  # ... its ambiguity_reason's opening


assert {i for i, _, _ in INTENT_CUES} == set(INTENTS), "every detector intent needs a question cue"


def valid_text(x) -> str:
    """A question as a string that is valid UTF-8 (Python strings may hold lone surrogates)."""
    return "" if x is None else (x if isinstance(x, str) else str(x)).encode("utf-8", "replace").decode("utf-8")


def _input_frame(questions) -> pl.DataFrame:
    """_row, id, question and the analysis text _t (bounded, quotes and spaces normalised)."""
    if isinstance(questions, pl.LazyFrame):
        questions = questions.collect()
    if isinstance(questions, pl.DataFrame):
        if "question" not in questions.columns:
            raise ValueError(f"parse_questions needs a 'question' column; got {questions.columns}")
        ids = questions["id"].cast(pl.String) if "id" in questions.columns else None
        qs = questions["question"].cast(pl.String)
    elif isinstance(questions, pl.Series):
        ids, qs = None, questions.cast(pl.String)
    else:
        if isinstance(questions, str):
            questions = [questions]
        # Python strings may hold lone surrogates that are not valid UTF-8: replace them
        clean = [valid_text(x) for x in questions]
        ids, qs = None, pl.Series("question", clean, dtype=pl.String)
    df = pl.DataFrame({"question": qs}).with_row_index("_row")
    generated = pl.lit("q") + (pl.col("_row") + 1).cast(pl.String)
    df = df.with_columns(generated.alias("id") if ids is None else ids.alias("id")).with_columns(pl.col("id").fill_null(generated))
    t = (
        pl.col("question")
        .fill_null("")
        .str.slice(0, MAX_CHARS)
        .str.replace_all(r"[\x00-\x08\x0b-\x1f\x7f]", " ")
        .str.replace_all(r"[’‘`´]", "'")
        .str.replace_all(r"[“”„«»]", '"')
        .str.replace_all(r"\s+", " ")
        .str.strip_chars()
        .str.replace(FRAMING[0], "")
        .str.replace(FRAMING[1], "$1")
        .str.replace(FRAMING[2], "$1 ")
    )
    return df.with_columns(t.alias("_t"))


def _content_words(t: pl.Expr) -> pl.Expr:
    return (
        tokens_expr(t.str.replace_all(HOW_MEASURE, " how ").str.to_lowercase())
        .list.eval(pl.element().filter(~pl.element().is_in(list(QUESTION_STOP_WORDS)) & (pl.element().str.len_chars() >= 2)))
        .list.unique(maintain_order=True)
    )


def _kw(
    lf: pl.DataFrame, text: pl.Expr, weight: float | pl.Expr, source: str, group: str | pl.Expr | None, is_regex: bool | pl.Expr = False
) -> pl.DataFrame:
    """Keyword rows (_row, text, weight, source, semantic_group, is_regex)."""
    return lf.select(
        "_row",
        text.alias("text"),
        (weight if isinstance(weight, pl.Expr) else pl.lit(weight)).cast(pl.Float64).alias("weight"),
        pl.lit(source).alias("source"),
        (group if isinstance(group, pl.Expr) else pl.lit(group, dtype=pl.String)).alias("semantic_group"),
        (is_regex if isinstance(is_regex, pl.Expr) else pl.lit(is_regex)).alias("is_regex"),
    )


def _long(df: pl.DataFrame, col: str) -> pl.DataFrame:
    """Explode a list column to one row per element, dropping nulls and empty strings."""
    out = df.select("_row", col).explode(col).filter(pl.col(col).is_not_null())
    if out.schema[col] == pl.String:
        out = out.with_columns(pl.col(col).str.strip_chars()).filter(pl.col(col) != "")
    return out


def _direct(q: pl.DataFrame) -> pl.DataFrame:
    dq = r'(?:^|[\s(\[:,])"([^"]{1,200})"'
    sq = r"(?:^|[\s(\[:,])'([^']{1,200})'(?:$|[\s)\].,;:?!])"
    quoted = pl.concat_list(
        pl.col("_t").str.extract_all(dq).list.eval(pl.element().str.extract(dq, 1)),
        pl.col("_t").str.extract_all(sq).list.eval(pl.element().str.extract(sq, 1)),
    )
    terms = (
        pl.col("_t")
        .str.extract(r"(?i)\bterms?\s*:\s*([^?;]+)", 1)
        .fill_null("")
        .str.replace_all(r"(?i)\s*(?:,|\band\b|\bor\b)\s*", CUT_MARK)
        .str.split(CUT_MARK)
        .list.eval(pl.element().str.strip_chars(" \"'."))
    )
    d = _long(q.select("_row", pl.concat_list(quoted, terms).alias("text")), "text")
    return _kw(d, pl.col("text"), DIRECT_WEIGHT, "direct", None)


def _in_capitals() -> pl.Expr:
    """Whether the question is written in capitals (most of its letters upper case)."""
    return pl.col("_t").str.count_matches(r"\p{Lu}") > 0.7 * pl.col("_t").str.count_matches(r"\p{L}")


def _anchors(q: pl.DataFrame) -> pl.DataFrame:
    shouting = (pl.col("_t").str.count_matches(r"\p{L}") > 12) & _in_capitals()
    a = q.select("_row", pl.col("_t").str.extract_all(ANCHOR).alias("text"), shouting.alias("_shout"))
    a = a.explode("text").filter(pl.col("text").is_not_null())
    acronym = pl.col("text").str.contains(r"^[A-Z]{3,}s?$")
    a = a.filter(~(acronym & pl.col("_shout"))).with_columns(
        pl.when(acronym).then(pl.col("text").str.replace(r"^([A-Z]{3,})s$", "$1")).otherwise(pl.col("text")).alias("text")
    )
    return _kw(a, pl.col("text"), ANCHOR_WEIGHT, "anchor", "anchor")


def _dictionary_hits(q: pl.DataFrame, d: Dictionary) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Resolved (row, concept) pairs and ambiguous (row, keyword) pairs.

    Literal keywords are matched on stemmed tokens, leftmost-longest (Aho-Corasick, longest
    keys first), so "purchase orders" matches the key of "purchase order" and "spending limit"
    wins over the "limit" inside it. A key shared by several concepts goes to the concept whose
    definition shares most words with the question (the key's own words excluded); a tie
    leaves it ambiguous.
    """
    lit = d.keywords.filter(~pl.col("is_regex"))
    keys = (
        lit.select("key")
        .unique()
        .with_columns(pl.col("key").str.len_bytes().alias("_n"))
        .sort(["_n", "key"], descending=[True, False])["key"]
        .to_list()
    )
    found = pl.col("_skey").str.extract_many(keys, leftmost=True) if keys else pl.lit([], dtype=pl.List(pl.String))
    hits = (
        q.select("_row", "_skey", "_qterms", found.alias("key")).explode("key").filter(pl.col("key").is_not_null()).unique(["_row", "key"])
    )
    cand = (
        hits.join(lit.select("key", "concept", "key_terms").unique(["key", "concept"]), on="key")
        .join(d.concepts.select("concept", "def_terms"), on="concept")
        .with_columns(
            pl.col("_qterms")
            .list.set_difference(pl.col("key_terms"))
            .list.set_intersection(pl.col("def_terms"))
            .list.len()
            .alias("_overlap")
        )
        .with_columns(
            pl.col("concept").n_unique().over("_row", "key").alias("_n_concepts"),
            pl.col("_overlap").max().over("_row", "key").alias("_best"),
        )
        .with_columns((pl.col("_overlap") == pl.col("_best")).sum().over("_row", "key").alias("_n_best"))
    )
    resolved = cand.filter((pl.col("_n_concepts") == 1) | ((pl.col("_overlap") == pl.col("_best")) & (pl.col("_n_best") == 1)))
    ambiguous_keys = cand.filter((pl.col("_n_concepts") > 1) & (pl.col("_n_best") > 1)).select("_row", "key").unique()
    # the keyword as the table writes it: the best-ranked spelling of the key
    spelled = lit.group_by("key").agg(
        pl.col("keyword").sort_by(pl.col("keyword").str.len_chars(), "keyword").first().alias("keyword"), pl.col("weight").max()
    )
    ambiguous = ambiguous_keys.join(spelled, on="key").select("_row", "keyword", "weight")

    rx = d.keywords.filter(pl.col("is_regex"))
    parts = [resolved.select("_row", "concept")]
    for pattern, concept in rx.select("pattern", "concept").iter_rows():
        parts.append(q.filter(pl.col("_t").str.contains(pattern)).select("_row", pl.lit(concept).alias("concept")))
    concepts = pl.concat(parts).unique().sort("_row", "concept")
    return concepts, ambiguous


def _keywords(q: pl.DataFrame, d: Dictionary) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """keywords and dictionary_ambiguities per row, plus the resolved concepts (for vagueness)."""
    concepts, ambiguous = _dictionary_hits(q, d)
    # English first, so a spelling shared by several languages ("Hotel", "hotel") keeps the English row
    expanded = concepts.join(d.keywords, on="concept").sort(
        pl.col("_row"), pl.col("concept"), pl.col("language") != "en", "priority", "language", "keyword"
    )
    parts = [
        _direct(q),
        _kw(expanded, pl.col("pattern"), pl.col("weight"), "expert_dictionary", pl.col("concept"), pl.col("is_regex")),
        _kw(ambiguous, pl.col("keyword"), pl.col("weight"), "expert_dictionary", None),
        _anchors(q),
        _kw(_long(q.select("_row", "_qwords"), "_qwords"), pl.col("_qwords"), QUESTION_WEIGHT, "question", None),
    ]
    rank = pl.col("source").replace_strict({s: i for i, s in enumerate(SOURCES)}, return_dtype=pl.Int64)
    key = pl.when(pl.col("is_regex")).then(pl.lit(REGEX_PREFIX) + pl.col("text")).otherwise(pl.col("text").str.to_lowercase())
    kw = (
        pl.concat(parts)
        .filter(pl.col("text").is_not_null() & (pl.col("text") != ""))
        .with_row_index("_seq")
        .with_columns(rank.alias("_rank"), key.alias("_key"))
        .sort(["_row", "_key", "weight", "_rank", "_seq"], descending=[False, False, True, False, False])
        .unique(["_row", "_key"], keep="first", maintain_order=True)
        .sort(["_row", "_rank", "semantic_group", "weight", "text"], descending=[False, False, False, True, False], nulls_last=True)
        .group_by("_row", maintain_order=True)
        .agg(pl.struct("text", "weight", "source", "semantic_group", "is_regex").alias("keywords"))
    )
    amb = (
        ambiguous.sort("_row", "keyword")
        .group_by("_row", maintain_order=True)
        .agg(pl.col("keyword").unique(maintain_order=True).alias("dictionary_ambiguities"))
    )
    topic = (
        concepts.join(d.concepts.select("concept", "document_family"), on="concept")
        .filter(pl.col("document_family") != "general")
        .select("_row")
        .unique()
    )
    return kw, amb, topic.with_columns(pl.lit(True).alias("_topic_concept"))


def _value_hits(q: pl.DataFrame, d: Dictionary) -> pl.DataFrame:
    """(row, set, canonical, position) of every closed-value spelling in the question.

    One leftmost-longest pass over lower-case tokens ("US dollars" wins over "US"); spellings of a
    case-sensitive kind (ISO codes) must also appear in their own case; symbols match literally.
    """
    words = d.value_sets.filter(pl.col("kind") != "symbol")
    keys = (
        words.select("key")
        .unique()
        .with_columns(pl.col("key").str.len_bytes().alias("_n"))
        .sort(["_n", "key"], descending=[True, False])["key"]
        .to_list()
    )
    matched = pl.col("_vkey").str.extract_many(keys, leftmost=True) if keys else pl.lit([], dtype=pl.List(pl.String))
    found = (
        q.select("_row", "_vkey", "_vkey_cs", matched.alias("key"))
        .with_columns(pl.int_ranges(pl.col("key").list.len()).alias("_pos"))
        .explode("key", "_pos")
        .filter(pl.col("key").is_not_null())
        .join(words.select("key", "set", "canonical", "case_sensitive", "cs_key"), on="key")
        .filter(~pl.col("case_sensitive") | pl.col("_vkey_cs").str.contains(pl.col("cs_key"), literal=True))
    )
    symbols = d.value_sets.filter(pl.col("kind") == "symbol")
    sym = (
        (
            q.select("_row", pl.col("_t").str.extract_many(symbols["value"].unique().sort().to_list()).alias("key"))
            .with_columns((pl.int_ranges(pl.col("key").list.len()) + 10_000).alias("_pos"))
            .explode("key", "_pos")
            .filter(pl.col("key").is_not_null())
            .join(symbols.select(pl.col("value").alias("key"), "set", "canonical"), on="key")
        )
        if symbols.height
        else None
    )
    cols = ["_row", "_pos", "set", "canonical"]
    return pl.concat([found.select(cols)] + ([sym.select(cols)] if sym is not None else [])).sort("_row", "_pos")


def _canonical_list(hits: pl.DataFrame, sets: tuple[str, ...], name: str) -> pl.DataFrame:
    return (
        hits.filter(pl.col("set").is_in(list(sets)))
        .group_by("_row", maintain_order=True)
        .agg(pl.col("canonical").unique(maintain_order=True).alias(name))
    )


# ---- structure, scope, intents ------------------------------------------------------------------


def _number_list(q: pl.DataFrame, pattern: str, name: str, as_string: bool = False) -> pl.DataFrame:
    """ "page 3" -> [3]; "pages 5 to 7" -> [5, 6, 7]; "pages 2, 4 and 9" -> [2, 4, 9] (sorted, unique)."""
    m = _long(q.select("_row", pl.col("_t").str.extract_all(pattern).alias("m")), "m")
    parts = _long(
        m.select(
            "_row",
            pl.col("m")
            .str.replace(r"^\D+", "")
            .str.replace_all(r"(?i)\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s+or\s+)\s*", CUT_MARK)
            .str.split(CUT_MARK)
            .alias("p"),
        ),
        "p",
    )
    start = pl.col("p").str.extract(r"^(\d{1,9})", 1).cast(pl.Int64, strict=False)
    end = pl.col("p").str.extract(r"(?i)(?:-|–|to|through|thru)\s*(\d{1,9})$", 1).cast(pl.Int64, strict=False)
    end = pl.when(end.is_null() | (end < start) | (end - start > MAX_RANGE)).then(start).otherwise(end)
    v = _long(parts.select("_row", pl.int_ranges(start, end + 1).alias("v")), "v")
    out = v.group_by("_row").agg(pl.col("v").unique().sort().alias(name))
    if as_string:
        out = out.with_columns(pl.col(name).list.eval(pl.element().cast(pl.String)))
    return out


def _sheets(q: pl.DataFrame) -> pl.DataFrame:
    lead = r"^(?i:(?:the|on|in|from|which|what)\s+)+"
    names = pl.concat_list([pl.col("_t").str.extract_all(p).list.eval(pl.element().str.extract(p, 1)) for p in SHEET_NAMES])
    n = _long(q.select("_row", names.alias("s")), "s").with_columns(pl.col("s").str.replace(lead, "").str.strip_chars())
    n = n.filter((pl.col("s") != "") & ~pl.col("s").str.to_lowercase().is_in(["the", "this", "that", "which", "each", "every", "a"]))
    nums = _long(_number_list(q, SHEET_NUMBERS, "s", as_string=True), "s")
    both = pl.concat([n.with_columns(pl.lit(0).alias("_k")), nums.with_columns(pl.lit(1).alias("_k"))]).with_row_index("_i")
    return (
        both.sort("_row", "_k", "_i")
        .group_by("_row", maintain_order=True)
        .agg(pl.col("s").unique(maintain_order=True).alias("sheets_hint"))
    )


def _first_rule(rules, col: str = "_t", group: int | None = None) -> pl.Expr:
    """The name (or, with group, the captured text) of the first rule of a table that matches."""
    if group is None:
        return pl.coalesce([pl.when(pl.col(col).str.contains(p)).then(pl.lit(n)) for n, p in rules] + [pl.lit(None, dtype=pl.String)])
    return pl.coalesce([pl.col(col).str.extract(p, group).str.strip_chars(" '\"") for _, p in rules])


def dx_bounds(dx: pl.DataFrame) -> pl.DataFrame:
    """First and last day of each date expression in column `dx` (a day, month, quarter, half,
    fiscal year or year): adds `start` and `end`. Staged in columns, so the plan stays small."""
    g = dx.with_columns(pl.col("dx").str.to_lowercase().str.strip_chars().str.extract_groups(DX_PARTS).alias("_g")).unnest("_g")
    i = lambda n: pl.col(n).cast(pl.Int32, strict=False)  # noqa: E731
    month = lambda n: pl.col(n).str.slice(0, 3).replace_strict(MONTH_NUMBER, default=None, return_dtype=pl.Int32)  # noqa: E731
    ymd = lambda y, m, d: pl.concat_str(  # noqa: E731
        [pl.col(y), pl.lit("-"), m.cast(pl.String).str.zfill(2), pl.lit("-"), pl.col(d).str.zfill(2)]
    ).str.to_date("%Y-%m-%d", strict=False)
    g = g.with_columns(
        pl.coalesce(ymd("iy", i("im"), "id"), ymd("y1", month("m1"), "d1"), ymd("y2", month("m2"), "d2")).alias("_day"),
        pl.coalesce(
            i("qy1"),
            i("qy2"),
            i("hy"),
            i("y3"),
            pl.when(pl.col("fy").str.len_chars() == 2).then(2000 + i("fy")).otherwise(i("fy")),
            i("y4"),
        ).alias("_y"),
        pl.coalesce(
            pl.coalesce(i("q1"), i("q2")) * 3 - 2,
            i("h") * 6 - 5,
            month("m3"),
            pl.when(i("fy").is_not_null() | i("y4").is_not_null()).then(1),
        ).alias("_m0"),
        pl.coalesce(
            pl.coalesce(i("q1"), i("q2")) * 3, i("h") * 6, month("m3"), pl.when(i("fy").is_not_null() | i("y4").is_not_null()).then(12)
        ).alias("_m1"),
    )
    ok = pl.col("_y").is_between(1000, 2999) & pl.col("_m0").is_between(1, 12) & pl.col("_m1").is_between(1, 12)
    return g.select(
        *dx.columns,
        pl.coalesce(pl.col("_day"), pl.when(ok).then(pl.date(pl.col("_y"), pl.col("_m0"), 1))).alias("start"),
        pl.coalesce(pl.col("_day"), pl.when(ok).then(pl.date(pl.col("_y"), pl.col("_m1"), 1).dt.month_end())).alias("end"),
    )


def _scope_dates(q: pl.DataFrame) -> pl.DataFrame:
    """scope_date_from / scope_date_to: a range ("between March 2023 and June 2024"), an open
    start ("since January 2025", "after 2023"), an open end ("before 2020", "until June 30, 2025"),
    or the period itself ("in 2024", "Q2 2025", "FY2026", "on 2025-03-01")."""
    rng = pl.col("_t").str.extract_groups(DATE_RANGE)
    op = pl.col("_t").str.extract_groups(DATE_OPERATOR)
    parts = q.select(
        "_row",
        rng.struct.field("1").alias("a"),
        rng.struct.field("2").alias("b"),
        op.struct.field("1").str.to_lowercase().str.replace_all(r"\s+", " ").alias("op"),
        op.struct.field("2").alias("o"),
        pl.col("_t").str.extract(DATE_BARE, 1).str.replace(r"(?i)\s+[a-z]+$", "").alias("bare"),
    )
    long = pl.concat([parts.select("_row", pl.lit(k).alias("slot"), pl.col(k).alias("dx")) for k in ("a", "b", "o", "bare")])
    b = dx_bounds(long.filter(pl.col("dx").is_not_null()))
    wide = b.group_by("_row").agg(
        *[pl.col(c).filter(pl.col("slot") == k).first().alias(f"{k}_{c}") for k in ("a", "b", "o", "bare") for c in ("start", "end")]
    )
    w = parts.select("_row", "op").join(wide, on="_row", how="left")
    op_ = pl.col("op")
    one_day = pl.duration(days=1)
    open_start = op_.is_in(["since", "from", "starting", "starting in", "starting from", "starting on", "as of"])
    after = op_ == "after"
    before = op_.is_in(["before", "prior to"])
    until = op_.is_in(["until", "till", "up to", "through", "by"])
    has_range = pl.col("a_start").is_not_null() & pl.col("b_end").is_not_null()
    has_op = pl.col("o_start").is_not_null()
    none = pl.lit(None, dtype=pl.Date)
    frm = (
        pl.when(has_range)
        .then(pl.col("a_start"))
        .when(has_op & open_start)
        .then(pl.col("o_start"))
        .when(has_op & after)
        .then(pl.col("o_end") + one_day)
        .when(has_op & (before | until))
        .then(none)
        .when(has_op)
        .then(pl.col("o_start"))
        .otherwise(pl.col("bare_start"))
    )
    to = (
        pl.when(has_range)
        .then(pl.col("b_end"))
        .when(has_op & (open_start | after))
        .then(none)
        .when(has_op & before)
        .then(pl.col("o_start") - one_day)
        .when(has_op)
        .then(pl.col("o_end"))
        .otherwise(pl.col("bare_end"))
    )
    return w.select("_row", frm.cast(pl.Date).alias("scope_date_from"), to.cast(pl.Date).alias("scope_date_to"))


def _parties(q: pl.DataFrame, d: Dictionary) -> pl.DataFrame:
    between = pl.col("_t").str.extract_groups(PARTIES_BETWEEN)
    defined = pl.col("_t").str.extract_all(PARTY_DEFINED).list.eval(pl.element().str.extract(rf"\b[Tt]he\s+({'|'.join(PARTY_ROLES)})", 1))
    orgs = pl.col("_t").str.extract_all(PARTY_ORG)
    cand = q.select("_row", pl.concat_list(pl.concat_list(between.struct.field("1"), between.struct.field("2")), orgs, defined).alias("p"))
    p = (
        _long(cand, "p")
        .with_row_index("_i")
        .with_columns(pl.col("p").str.replace(PARTY_LEAD, "").str.replace(r"[.,]+$", "").str.strip_chars())
    )
    not_values = d.value_sets.select(pl.col("value").str.to_lowercase().alias("_lv")).unique()
    p = (
        p.with_columns(pl.col("p").str.to_lowercase().alias("_lv"))
        .join(not_values, on="_lv", how="anti")
        .filter((pl.col("p") != "") & ~pl.col("p").str.contains(rf"(?i)^(?:{MONTH}\b|q[1-4]\b|h[12]\b|fy\d|\d)"))
    )
    return p.sort("_row", "_i").group_by("_row", maintain_order=True).agg(pl.col("p").unique(maintain_order=True).alias("scope_parties"))


def _intents() -> pl.Expr:
    order = {intent: i for i, intent in enumerate(INTENTS)}
    fired = []
    for intent, cue, veto in sorted(INTENT_CUES, key=lambda r: order[r[0]]):
        hit = pl.col("_t").str.contains(cue)
        if veto:
            hit = hit & ~pl.col("_t").str.contains(veto)
        fired.append(pl.when(hit).then(pl.lit(intent)))
    return pl.concat_list(fired).list.drop_nulls().list.unique(maintain_order=True)


# what a question is about, not what it asks for: the asker's own data ("Can they sell my postal
# address?", "Do you share my e-mail address?") and a file system's links ("a symbolic link to ..."):
# no cue of an answer type
NOT_ASKED = (
    r"(?i)\b(?:my|our|their|his|her)\s+(?:\w+\s+)?(?:e-?mail|postal|mailing|home|street|billing|shipping|phone|telephone|mobile|"
    r"bank|account|credit card|card)(?:\s+(?:address|number|details|account))?\b"
    r"|(?i)\b(?:symbolic|hard|soft)\s+links?\b"
)

# the sentences a question states before the one that asks ("I clicked a link in a phishing email.
# Which addresses do I need to email to report it?"): what they name is not what is asked for
STATED_BEFORE = r"^(?s).*\p{Ll}{2}[.!]\s+[\"“(]?([A-Z¿¡])"  # after a word, not an initial ("e.l.f. Beauty")


# a yes/no question asks for a verdict, whatever value it names ("will I still get emails about my
# orders?"), unless it asks for the value itself ("Is there a phone number for ...?", "Can you give me ..."),
# after a leading phrase too ("Under the reseller agreement, is there a phone number ...?")
VALUE_REQUEST = (
    r"(?i)(?:^\W*|,\s*)(?:is there|are there|do you have|does \w+ have|can you (?:give|tell|send)|could you (?:give|tell|send))\b"
)


def asks_yes_no(question: str = "question") -> pl.Expr:
    """Whether a question asks yes or no, at its start or after a leading phrase or condition."""
    return pl.col(question).str.contains(YES_NO_QUESTION) | pl.col(question).str.contains(YES_NO_AFTER_CLAUSE)


def _answer_type(d: Dictionary, col: str) -> pl.Expr:
    """The type whose question cue matches earliest in the (main) question; at the same place the
    longer cue wins ("budget deadline" is a date, "budget" an amount), then the lower priority
    number; no cue at all: text."""
    scores, names = [], []
    for name, prio, cue in d.answer_types.select("answer_type", "priority", "question_cues").iter_rows():
        if not cue:
            continue
        pos = pl.col(col).str.find(cue).cast(pl.Int64)
        length = pl.col(col).str.extract(f"({cue})", 1).str.len_bytes().cast(pl.Int64).clip(upper_bound=999)
        score = pos * 1_000_000 - length * 1_000 + prio
        scores.append(score)
        names.append((name, score))
    if not scores:
        return pl.lit("text")
    best = pl.min_horizontal(scores)
    return pl.coalesce([pl.when(s == best).then(pl.lit(n)) for n, s in names] + [pl.lit("text")])


# ---- decomposition ------------------------------------------------------------------------------


def _mask(t: pl.Expr) -> pl.Expr:
    """Hide the "and"s that do not coordinate questions: inside quotes, a terms list, "between X
    and Y" and fixed names such as "Travel and Expense"."""
    m = t
    for _ in range(3):
        m = m.str.replace_all(r'((?:^|[\s(:])"[^"]*?)\s+and\s+([^"]*")', f"$1 {AND_MARK} $2")
        m = m.str.replace_all(r"((?:^|[\s(:])'[^']*?)\s+and\s+([^']*')", f"$1 {AND_MARK} $2")
        m = m.str.replace_all(r"(?i)(\bterms?\s*:[^?;]*?)\s+and\s+", f"$1 {AND_MARK} ")
    m = m.str.replace_all(r"(?i)(\bbetween\s+[^,?;]{1,80}?)\s+and\s+", f"$1 {AND_MARK} ")
    for left, right in FIXED_PHRASES:
        m = m.str.replace_all(rf"(?i)\b({left})\s+and\s+({right})\b", f"$1 {AND_MARK} $2")
    return m


def _tidy(e: pl.Expr) -> pl.Expr:
    """A sub-question: unmasked, no leading connective, capitalised, ending in '?' when it asks."""
    s = (
        e.str.replace_all(AND_MARK, "and")
        .str.strip_chars(" ,;")
        .str.replace(r"(?i)^(?:and|then|but|also|as well as)\s+(?:then\s+)?", "")
        .str.strip_chars(" ,;")
    )
    s = s.str.slice(0, 1).str.to_uppercase() + s.str.slice(1)
    # a question: it starts with its wh-word (or its preposition: "by what date"), or the auxiliary, or
    # names its scope first ("Under the X agreement, how much ...")
    asks = s.str.contains(rf"(?i)(?:^|,\s*)(?:{PREPOSED_WH}|{WH}|{AUX})\b|^(?:wer|was|wann|wie|welche\w*|qui|quel\w*|quand|combien|où)\b")
    tells = s.str.contains(rf"(?i)^{IMPERATIVE}\b")
    bare = s.str.replace(r"[?.!\s]+$", "")
    return pl.when(bare == "").then(None).when(asks).then(bare + pl.lit("?")).when(tells).then(bare + pl.lit(".")).otherwise(s)


# what joins two clauses of a compound question ("; then", ", and then", ", and if so", ", and", ", but")
CLAUSE_JOINS = (
    r"(?:;\s*(?:and\s+)?(?:then\s+)?|,?\s+and\s+then\s+|,?\s+then\s+|,?\s+and\s+if\s+so,?\s+|,?\s+and\s+|,?\s+but\s+"
    r"|,?\s+as well as\s+)"
)


def _clauses(m: pl.Expr) -> pl.Expr:
    """The clauses of a masked question (`_mask`), cut where a join starts a new question; after a
    comma, "and" or "but" before an auxiliary starts one whatever its subject ("..., and should
    .packlist files be shipped?")."""
    return (
        m.str.replace_all(rf"(?i)\?\s*(?:and\s+)?(?:then\s+)?({CLAUSE_START})", f"?{CUT_MARK}$1")
        .str.replace_all(rf"(?i)\s*{CLAUSE_JOINS}({CLAUSE_START})", f"{CUT_MARK}$1")
        .str.replace_all(rf"(?i),\s+(?:and|but)\s+({AUX}\s+[^\s,?])", f"{CUT_MARK}$1")
        .str.replace_all(r"(?i)\s*;\s*", CUT_MARK)
        .str.split(CUT_MARK)
        .list.eval(pl.element().str.strip_chars())
        .list.eval(pl.element().filter(pl.element() != ""))
    )


def _decompose(q: pl.DataFrame) -> pl.DataFrame:
    """decomposition_pattern, sub_questions and condition for every row.

    A cheap pre-filter (COMPOUND, or more than one '?') picks the rows worth decomposing; on
    those, the rules run in order: conditional (leading, then trailing condition), clause split
    (sequential when a later clause refers back or says "then", else independent), unified
    (coordinated noun phrases), else single. A comparison (`compare.parts`) is one whatever those say.
    """
    m = _mask(pl.col("_t"))
    base = q.select("_row", "_t", m.alias("_m"))
    flagged = base.filter(pl.col("_m").str.contains(COMPOUND) | (pl.col("_m").str.count_matches(r"\?") > 1))

    lead = pl.col("_m").str.extract_groups(CONDITION_LEADING)
    trail = pl.col("_m").str.extract_groups(CONDITION_TRAILING)
    aux_start = rf"(?i)^{AUX}\b"
    lead_ok = (
        lead.struct.field("2").is_not_null()
        & ~lead.struct.field("2").str.contains(aux_start)
        & (lead.struct.field("3").str.strip_chars() != "")
    )
    trail_main = trail.struct.field("1")
    cut = _clauses(pl.col("_m"))
    trail_ok = (
        trail_main.is_not_null()
        # "What is the protocol version, and what does VERSION return if mine is too low?": the
        # condition is the last part's, not the whole question's
        & (cut.list.len() < 2)
        & ~trail_main.str.contains(r"(?i)\b(?:and|or|but|then|check|tell me|ask|know|see|determine|verify|find out|wonder|whether)$")
        & (trail_main.str.count_matches(r"\S+") >= 2)
        & trail_main.str.contains(rf"(?i)^\W*(?:{WH}|{AUX}|{IMPERATIVE}|what|wer|qui)\b")
        & ~trail.struct.field("3").str.contains(aux_start)
    )
    cond_word = lambda c: pl.when(c.str.to_lowercase() == "unless").then(pl.lit("unless ")).otherwise(pl.lit(""))  # noqa: E731
    f = flagged.with_columns(
        lead_ok.alias("_lead"),
        trail_ok.alias("_trail"),
        pl.when(lead_ok)
        .then(cond_word(lead.struct.field("1")) + lead.struct.field("2"))
        .when(trail_ok)
        .then(cond_word(trail.struct.field("2")) + trail.struct.field("3"))
        .alias("_cond"),
        pl.when(lead_ok).then(lead.struct.field("3")).when(trail_ok).then(trail_main).alias("_main"),
        cut.alias("_parts"),
    )
    back = pl.col("_parts").list.slice(1).list.eval(pl.element().str.contains(BACK_REFERENCE)).list.any()
    f = f.with_columns(
        pl.when(pl.col("_lead") | pl.col("_trail"))
        .then(pl.lit("conditional"))
        .when(pl.col("_parts").list.len() >= 2)
        .then(
            pl.when(back | pl.col("_m").str.contains(THEN) | pl.col("_m").str.contains(IF_SO))
            .then(pl.lit("sequential"))
            .otherwise(pl.lit("independent"))
        )
        .alias("_pattern")
    )

    # unified: the first rule whose conjuncts are short noun phrases
    rest = f.filter(pl.col("_pattern").is_null())
    uni_parts = []
    for k, (_name, rule) in enumerate(UNIFIED_RULES):
        g = pl.col("_m").str.extract_groups(rule)
        u = rest.select(
            "_row",
            pl.lit(k).alias("_rule"),
            g.struct.field("1").str.replace(r"(?i)\bboth\s+$", "").alias("_pre"),
            pl.concat_list(g.struct.field("2").str.split(","), g.struct.field("3")).alias("_items"),
            g.struct.field("4").alias("_end"),
        ).filter(pl.col("_pre").is_not_null())
        uni_parts.append(u)
    uni = pl.concat(uni_parts).with_columns(pl.col("_items").list.eval(pl.element().str.strip_chars()))
    words = pl.col("_items").list.eval(pl.element().str.count_matches(r"\S+"))
    uni = (
        uni.filter(
            (words.list.max() <= MAX_CONJUNCT_WORDS)
            & (words.list.min() >= 1)
            & ~pl.col("_items").list.eval(pl.element().str.contains(rf"(?i)^(?:{WH}|{AUX}|{IMPERATIVE})\b")).list.any()
        )
        .sort("_row", "_rule")
        .unique("_row", keep="first", maintain_order=True)
    )
    # "travel and procurement policies" -> "travel policies", "procurement policies"
    tail = pl.col("_items").list.last().str.extract(r"^\S+\s+([a-z][\w\s'-]*)$", 1)
    uni = uni.with_columns(tail.alias("_tail"))
    items = _long(uni.select("_row", "_items"), "_items").with_row_index("_i").join(uni.select("_row", "_pre", "_end", "_tail"), on="_row")
    single_word = ~pl.col("_items").str.contains(r"\s") & ~pl.col("_items").str.contains(r"(?i)s$")
    last_of_row = pl.col("_i") == pl.col("_i").max().over("_row")
    items = items.with_columns(
        pl.when(single_word & pl.col("_tail").is_not_null() & ~last_of_row)
        .then(pl.col("_items") + pl.lit(" ") + pl.col("_tail"))
        .otherwise(pl.col("_items"))
        .alias("_c")
    ).with_columns(_tidy(pl.col("_pre") + pl.col("_c") + pl.col("_end")).alias("_sub"))
    uni_subs = (
        items.sort("_row", "_i")
        .group_by("_row", maintain_order=True)
        .agg(pl.col("_sub").drop_nulls().alias("_usubs"))
        .filter(pl.col("_usubs").list.len() >= 2)
    )

    f = f.join(uni_subs, on="_row", how="left").with_columns(
        pl.when(pl.col("_pattern").is_null() & pl.col("_usubs").is_not_null())
        .then(pl.lit("unified"))
        .otherwise(pl.col("_pattern"))
        .alias("_pattern")
    )
    f = f.with_columns(
        pl.when(pl.col("_pattern") == "conditional")
        .then(pl.concat_list(_tidy(pl.col("_main"))))
        .when(pl.col("_pattern").is_in(["sequential", "independent"]))
        .then(pl.col("_parts").list.eval(_tidy(pl.element())).list.drop_nulls())
        .when(pl.col("_pattern") == "unified")
        .then(pl.col("_usubs"))
        .alias("_subs"),
        pl.when(pl.col("_pattern") == "conditional")
        .then(pl.col("_cond").str.replace_all(AND_MARK, "and").str.strip_chars(" ,"))
        .alias("condition"),
    )
    out = base.join(f.select("_row", "_pattern", "_subs", "condition"), on="_row", how="left")
    # a comparison ("Which is longer, X or Y?", "Is X longer than Y?") is one part per item, whatever
    # else its "or" or "if" looked like (`compare.parts`)
    compared = comparisons(base.select("_row", "_t")).rename({"sub_questions": "_compared"})
    out = out.join(compared, on="_row", how="left").with_columns(
        pl.when(pl.col("_compared").is_not_null()).then(pl.lit("comparison")).otherwise(pl.col("_pattern")).alias("_pattern"),
        pl.coalesce("_compared", "_subs").alias("_subs"),
        pl.when(pl.col("_compared").is_null()).then(pl.col("condition")).alias("condition"),
    )
    whole = pl.concat_list(_tidy(pl.col("_t")).fill_null(pl.col("_t"))).list.eval(pl.element().filter(pl.element() != ""))
    return out.select(
        "_row",
        pl.col("_pattern").fill_null("single").alias("decomposition_pattern"),
        pl.when(pl.col("_pattern").is_null()).then(whole).otherwise(pl.col("_subs")).alias("sub_questions"),
        pl.col("condition").cast(pl.String),
    )


# ---- vagueness ------------------------------------------------------------------------------------


def _template(tpl: str, m: pl.Expr) -> pl.Expr:
    before, _, after = tpl.partition("{m}")
    return pl.lit(before) + m + pl.lit(after)


def _vagueness() -> tuple[pl.Expr, pl.Expr]:
    """(ambiguity_reason, suggested_clarification), the first reason that applies, else null."""
    empty = pl.col("_t") == ""
    reasons = [pl.when(empty).then(pl.lit("empty question"))]
    clarify = [pl.when(empty).then(pl.lit("Please type a question, for example: 'Who approves purchases over $25,000?'"))]
    short_question = pl.col("_content").list.len() < SPECIFIC_CONTENT_WORDS
    # "IT" in capitals in a question written in lower case is the department, not a pronoun
    t = pl.when(_in_capitals()).then(pl.col("_t")).otherwise(pl.col("_t").str.replace_all(ACRONYM_IT, "I.T."))
    pronoun = t.str.extract(f"(?i)({PRONOUNS})", 1).str.to_lowercase()
    before_pronoun = t.str.extract(f"(?i)^(.*?){PRONOUNS}", 1).fill_null("")
    gate = {
        "always": pl.lit(True),
        "no_date": pl.col("scope_date_from").is_null() & pl.col("scope_date_to").is_null() & short_question,
        "no_topic": ~pl.col("_has_topic") & ~pl.col("_t").str.contains(QUALIFIED) & short_question,
        # a pronoun resolves to a word before it in the question ("a package ... before it migrates"),
        # to the clause after an expletive "it", or, for "they", to the organisation the corpus is about
        "no_antecedent": ~pl.col("_has_topic")
        & (pl.col("decomposition_pattern") != "sequential")
        & (_content_words(before_pronoun).list.len() == 0)
        & ~pl.col("_t").str.contains(EXPLETIVE_IT)
        & ~(pronoun.is_in(COLLECTIVE_PRONOUNS) & (pl.col("_content").list.len() >= MIN_CONTENT_WORDS)),
    }
    # a pinned page, slide, sheet or section names where to look: such a question is never sent back
    pinned = (
        pl.col("pages_hint").list.len().fill_null(0)
        + pl.col("slides_hint").list.len().fill_null(0)
        + pl.col("sheets_hint").list.len().fill_null(0)
        + pl.col("toc_section_hint").is_not_null().cast(pl.UInt32)
    ) > 0
    for _kind, pattern, when, reason, clarification in DANGLING:
        m = t.str.extract(f"({pattern})", 1)
        hit = m.is_not_null() & gate[when] & ~pinned
        reasons.append(pl.when(hit).then(_template(reason, m)))
        clarify.append(pl.when(hit).then(_template(clarification, m)))
    # a term asked to be defined ("What is type design?") is the question's topic however short it is
    # and so is a dictionary concept it names ("What's the per diem?")
    short = (pl.col("_content").list.len() < MIN_CONTENT_WORDS) & ~pinned & pl.col("defined_term").is_null() & ~pl.col("_has_topic")
    reasons.append(pl.when(short).then(pl.lit(f"{TOO_SHORT}: fewer than {MIN_CONTENT_WORDS} content words")))
    clarify.append(
        pl.when(short).then(pl.lit("Please say what you are asking about: the document or topic, and the amount, region or period if any."))
    )
    return pl.coalesce(reasons), pl.coalesce(clarify)


MAX_OPTIONS = 3  # concepts offered back at most


def _offer_options(f: pl.DataFrame, d: Dictionary) -> pl.DataFrame:
    """A question sent back for clarification whose dictionary keyword stays ambiguous ("What is the
    cap?": a threshold or a per diem) is offered the competing concepts (`clarification_options`,
    the first ambiguous keyword's, at most MAX_OPTIONS, in name order), named in its clarification."""
    concepts = (
        d.keywords.select(pl.col("keyword").str.to_lowercase(), "concept")
        .unique()
        .sort("keyword", "concept")
        .group_by("keyword", maintain_order=True)
        .agg(pl.col("concept").head(MAX_OPTIONS).alias("clarification_options"))
    )
    first = pl.col("dictionary_ambiguities").list.first().str.to_lowercase()
    f = f.with_columns(pl.when(pl.col("suggested_clarification").is_not_null()).then(first).alias("_ambiguous"))
    f = f.join(concepts, left_on="_ambiguous", right_on="keyword", how="left")
    return f.with_columns(
        (pl.col("suggested_clarification") + options_said(pl.col("clarification_options"))).alias("suggested_clarification")
    )


def options_said(options: pl.Expr) -> pl.Expr:
    """What a clarification adds for its options: " Do you mean A, B or C?" for two or more, "" otherwise."""
    said = pl.concat_str(options.list.head(options.list.len() - 1).list.join(", "), pl.lit(" or "), options.list.last())
    return pl.when(options.list.len() > 1).then(pl.concat_str(pl.lit(" Do you mean "), said, pl.lit("?"))).otherwise(pl.lit(""))


# ---- order: the Nth item of a list, what comes after a step --------------------------------------

ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
LAST = ("last", "final")
SEQUENCE_NOUN = (  # what a list counts ("the second piece of paperwork", "the third condition")
    r"(?:step|thing|item|stage|task|event|action|phase|point|service|deduction|requirement|duty|obligation|one|"
    r"piece|document|form|condition|criteri(?:on|a)|part|rule|exception|factor|reason|question|box|field|line|bullet|entry|entrie)s?"
)
NTH = rf"(?:{'|'.join([*ORDINALS, *LAST])}|\d{{1,2}}(?:st|nd|rd|th))"  # "fourth", "final", "3rd"
COUNTED = rf"(?:[\w-]+\s+){{0,2}}?{SEQUENCE_NOUN}"  # what an ordinal counts, up to two words after it
# "the fourth task", "the first thing to do", "the final step", "the 3rd item", "step 4 of"
POSITION = rf"(?i)\b({NTH})\s+{COUNTED}\b" r"|(?i)\bstep\s+(?:number\s+)?(\d{1,2})\b"
# the position alone, without the noun it counts ("the fourth task" -> "the task", "step 4" -> "step"):
# what the list's anchor is searched without (no sentence of the list says "fourth"); an ordinal
# counting anything else stays ("the first thing that happens on a new employee's first day")
ORDINAL = rf"(?i)\b{NTH}\s+({COUNTED})\b" r"|(?i)(\bstep)\s+(?:number\s+)?\d{1,2}\b"
# "what comes (right) after X?", "what do I do after X?", "(in the Y process,) once X, what happens
# next?", "X. What do I do next?" (the step done told first)
AFTER = (
    r"(?i)\b(?:comes?|happens?|follows?|(?:do|should|must|shall)\s+(?:i|you|we|they)\s+do|is\s+done|is\s+next)\b[^?]*?"
    r"\b(?:right\s+|immediately\s+|directly\s+|just\s+)?after\s+([^?]+)"
    r"|(?i)(?:^|,)\s*(?:once|after|now that)\s+([^,?]+),\s*(?:what|who)\b[^?]*\bnext\b"
    r"|(?i)^\s*([^.?!]+)[.!;]\s+(?:so\s+|now\s+)?what\s+(?:(?:do|should|must|shall)\s+(?:i|you|we|they)\s+do|happens|comes)\s+next\b"
)


def _sequence() -> tuple[pl.Expr, pl.Expr]:
    """(sequence_position, sequence_after) of each question, from `_t`."""
    pos = pl.col("_t").str.extract_groups(POSITION)
    word = pos.struct.field("1").str.to_lowercase()
    number = pl.coalesce(word.str.extract(r"^(\d+)", 1), pos.struct.field("2")).cast(pl.Int64, strict=False)
    position = (
        pl.when(word.is_in(list(LAST)))
        .then(pl.lit(-1))
        .otherwise(pl.coalesce(word.replace_strict(ORDINALS, default=None, return_dtype=pl.Int64), number))
    )
    after = pl.col("_t").str.extract_groups(AFTER)
    step = pl.coalesce(after.struct.field("1"), after.struct.field("2"), after.struct.field("3")).str.strip_chars(" .,;:")
    # "what happens after 2023?" names a period, not a step
    return position.cast(pl.Int64), pl.when(step.str.count_matches(r"\p{L}{2,}") >= 2).then(step)


# ---- definitions: "what does X mean", "what is a X" -----------------------------------------------

_Q = "\"“'‘"  # opening quotes
_QE = "\"”'’"  # closing quotes
DEFINES = (
    rf"(?i)\bwhat (?:does|do) (?:the (?:term |word |phrase )?)?[{_Q}]?([^?{_QE}]+?)[{_QE}]?"
    r"(?: (?:restriction|priority|field|term|clause|flag|option))? (?:mean|stand for)\b",
    rf"(?i)^\s*what (?:is|are) (?:the |a |an )?[{_Q}]([^?{_QE}]+)[{_QE}]",
    r"(?i)\b(?:what|who) counts as (?:a |an |the )?([^?,]{2,60}?)\s*\?*$",
    # "Which licenses count as a 'Covered License' ...?": the quoted term is defined
    rf"(?i)\b(?:which|what) [\w -]{{1,40}}? (?:counts?|qualif(?:y|ies)) as (?:a |an |the )?[{_Q}]([^?{_QE}]+)[{_QE}]",
    r"(?i)^\s*(?:what is|what's|define) (?:a |an )?([^?,]{2,40}?)\s*\?*$",
    # a term named by where it is seen: "What is the abiname that shows up in Debian kernel package names?"
    r"(?i)^\s*(?:what is|what's) the ([\w-]+) (?:that|which) (?:shows? up|appears?|is shown|you see)\b",
    # a term with its expansion, asked of where it is used: "what is PAM (Pluggable Authentication Modules) on Debian?"
    r"(?i)^\s*(?:what is|what's|what are) (?:a |an )?([^?,(]{2,40}?)\s*\([^)]{2,80}\)(?:\s+(?:on|in|under|for) [^?,]{1,30})?\s*\?*$",
    # the part a thing plays is what it is ("What role does NSS (Name Service Switch) play on a Debian system?")
    r"(?i)^\s*what (?:role|function|purpose) does (?:the )?([^?,(]{2,40}?)(?:\s*\([^)]{2,80}\))? (?:play|serve|have|fulfil+)\b",
    # "who is a sponsor?" asks what a sponsor is, "who is the sponsor?" who
    r"(?i)^\s*who (?:is|are) (?:a|an) ([^?,]{2,40}?)(?: (?:in|at|on|for|within) [^?,]+)?\s*(?:\?|,|$)",
    # the way a measure is worked out is its definition ("How is days sales outstanding calculated?")
    r"(?i)^\s*how (?:is|are) (?:the |a |an )?([^?,]{2,60}?) (?:calculated|computed|measured|worked out)\s*\?*$",
)
NOT_TERMS = r"(?i)^(?:(?:it|this|that|they|these|those|there|a|an)$|the\b)"  # "what is the cap?" asks for a value


def _defined_term() -> pl.Expr:
    """The term a definition question asks about, from `_t` (the first rule that matches)."""
    term = pl.coalesce([pl.col("_t").str.extract(r, 1) for r in DEFINES]).str.strip_chars(" .")
    return pl.when(~term.str.contains(NOT_TERMS)).then(term)


# ---- the parser ---------------------------------------------------------------------------------


def parse_questions(questions: list[str] | pl.DataFrame, dictionary: Dictionary | None = None) -> pl.DataFrame:
    """Parse a batch of questions into one frame, one row per question (schema QUESTIONS).

    `questions` is a list of strings (ids q1..qn) or a frame with a `question` column and an
    optional `id` column. Never raises on the text itself: an empty, huge, unicode or
    punctuation-only question still gives a valid row.
    """
    d = dictionary if dictionary is not None else load_dictionary()
    q = _input_frame(questions)
    q = q.with_columns(
        _content_words(pl.col("_t")).alias("_content"),
        _content_words(pl.col("_t").str.replace_all(ANCHOR, " ")).alias("_qwords"),  # the pieces of "PR.AC-1" are not words
        padded_expr(stems_expr(pl.col("_t").str.replace_all(IDENTIFIER, " "))).alias("_skey"),
        terms_expr("_t").list.unique().alias("_qterms"),
        padded_expr(tokens_expr(pl.col("_t").str.to_lowercase())).alias("_vkey"),
        padded_expr(tokens_expr(pl.col("_t"))).alias("_vkey_cs"),
    )
    kw, amb, topic = _keywords(q, d)
    values = _value_hits(q, d)
    dec = _decompose(q)

    f = (
        q.join(kw, on="_row", how="left")
        .join(amb, on="_row", how="left")
        .join(topic, on="_row", how="left")
        .join(_canonical_list(values, JURISDICTION_SETS, "scope_jurisdictions"), on="_row", how="left")
        .join(_canonical_list(values, CURRENCY_SETS, "scope_currencies"), on="_row", how="left")
        .join(_number_list(q, PAGES, "pages_hint"), on="_row", how="left")
        .join(_number_list(q, SLIDES, "slides_hint"), on="_row", how="left")
        .join(_sheets(q), on="_row", how="left")
        .join(_parties(q, d), on="_row", how="left")
        .join(dec, on="_row", how="left")
        .join(_scope_dates(q), on="_row", how="left")
        .sort("_row")
    )
    main = (
        pl.when(pl.col("decomposition_pattern") == "conditional")
        .then(pl.col("sub_questions").list.first())
        .otherwise(pl.col("_t"))
        .fill_null("")
    )
    has_topic = (
        pl.col("_topic_concept").fill_null(False)
        | pl.col("keywords")
        .list.eval(
            (pl.element().struct.field("source") == "direct")
            | ((pl.element().struct.field("source") == "anchor") & pl.element().struct.field("text").str.contains(CODE_ANCHOR))
        )
        .list.any()
        .fill_null(False)
        | pl.col("_t").str.contains(NAMED_DOCUMENT)
    )
    f = f.with_columns(
        main.alias("_main"),
        main.str.replace(STATED_BEFORE, "$1").str.replace_all(NOT_ASKED, " ").alias("_asked"),
        has_topic.alias("_has_topic"),
        _intents().alias("intents"),
        _first_rule(SHAPE_RULES).fill_null("single").alias("answer_shape"),
        _first_rule(LAYOUT_RULES).alias("layout_hint"),
        _first_rule(TOC_PATTERNS, group=1).alias("toc_section_hint"),
        _defined_term().alias("defined_term"),
    )
    reason, clarification = _vagueness()
    position, after = _sequence()
    f = f.with_columns(
        position.alias("sequence_position"),
        after.alias("sequence_after"),
        pl.when(asks_yes_no("_asked") & ~pl.col("_asked").str.contains(VALUE_REQUEST))
        .then(pl.lit("text"))
        .otherwise(_answer_type(d, "_asked"))
        .alias("answer_type"),
        reason.alias("ambiguity_reason"),
        clarification.alias("suggested_clarification"),
        pl.col("condition").alias("scope_condition"),
    )
    f = _offer_options(f, d)
    empty_lists = {c: pl.col(c).fill_null(pl.lit([], dtype=t)) for c, t in QUESTIONS.items() if isinstance(t, pl.List)}
    f = f.with_columns(**empty_lists)
    return f.select([pl.col(c).cast(t) for c, t in QUESTIONS.items()])


__all__ = ["QUESTIONS", "KEYWORD", "parse_questions"]

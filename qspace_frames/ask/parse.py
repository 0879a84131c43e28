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
No LLM, no network: the same questions and dictionary always give the same frame.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..affordances import INTENTS, MONEY
from ..evaluation.baselines import STOP_WORDS, stem_expr, terms_expr

# ---- the output schema ------------------------------------------------------------------------

KEYWORD = pl.Struct({
    "text": pl.String,            # the keyword as written (a regex when is_regex)
    "weight": pl.Float64,         # 0..1
    "source": pl.String,          # direct | expert_dictionary | anchor | question
    "semantic_group": pl.String,  # the concept (expert_dictionary), "anchor", or null
    "is_regex": pl.Boolean,
})

QUESTIONS = {
    "id": pl.String,
    "question": pl.String,                       # the original text
    "keywords": pl.List(KEYWORD),                # deduplicated, strongest source kept, ordered
    "dictionary_ambiguities": pl.List(pl.String),  # dictionary keywords whose concept stayed ambiguous
    "intents": pl.List(pl.String),               # detector intents, in affordances.INTENTS order
    "answer_shape": pl.String,                   # single | listing | table | tree | nested_json
    "answer_type": pl.String,                    # a key of answer_types.csv
    "pages_hint": pl.List(pl.Int64),
    "toc_section_hint": pl.String,
    "layout_hint": pl.String,                    # text | table | image | header | null
    "sheets_hint": pl.List(pl.String),
    "slides_hint": pl.List(pl.Int64),
    "scope_date_from": pl.Date,
    "scope_date_to": pl.Date,
    "scope_parties": pl.List(pl.String),
    "scope_jurisdictions": pl.List(pl.String),   # canonical values of the jurisdiction value sets
    "scope_currencies": pl.List(pl.String),      # canonical values of the currency value set
    "scope_condition": pl.String,                # the condition of a conditional question
    "decomposition_pattern": pl.String,          # single | independent | sequential | unified | conditional
    "sub_questions": pl.List(pl.String),
    "condition": pl.String,
    "suggested_clarification": pl.String,
    "ambiguity_reason": pl.String,
}

SOURCES = ("direct", "expert_dictionary", "anchor", "question")  # strongest first
SHAPES = ("single", "listing", "table", "tree", "nested_json")
LAYOUTS = ("text", "table", "image", "header")
PATTERNS = ("single", "independent", "sequential", "unified", "conditional")
REQUIRED_ANSWER_TYPES = ("text", "amount", "date", "percentage", "duration", "email", "iban", "role", "count", "url", "phone")
JURISDICTION_SETS = ("country", "region", "us_state")
CURRENCY_SETS = ("currency",)

MAX_CHARS = 10_000          # a question longer than this is analysed on its first MAX_CHARS characters
MAX_RANGE = 500             # "pages 1 to 10^9" expands to at most this many pages
DIRECT_WEIGHT = 1.0
ANCHOR_WEIGHT = 0.9
QUESTION_WEIGHT = 0.5
MIN_CONTENT_WORDS = 3

DEFAULT_FOLDER = "params/dictionary"
_PROJECT_ROOT = Path(__file__).resolve().parents[1]

# ---- the expert dictionary ---------------------------------------------------------------------

_KINDS = ("name", "native", "abbreviation", "iso", "iso2", "iso3", "code", "symbol")
_CASE_SENSITIVE_KINDS = ("iso", "iso2", "iso3", "code")
_FILES = {
    "concepts": ("concepts.csv", ("concept", "definition", "document_family")),
    "keywords": ("concept_keywords.csv", ("concept", "language", "keyword", "priority", "weight")),
    "answer_types": ("answer_types.csv", ("answer_type", "priority", "description", "question_cues", "retrieval_patterns")),
    "value_sets": ("value_sets.csv", ("set", "value", "canonical", "kind")),
}
PATTERN_SEPARATOR = " || "   # separates the retrieval patterns of one answer type
REGEX_PREFIX = "re:"         # a concept keyword written as a regex


class DictionaryError(ValueError):
    """A dictionary file breaks a rule; the message names the file, the row and the rule."""


@dataclass(frozen=True)
class Dictionary:
    """The expert satellite tables, validated, with the derived matching keys."""

    concepts: pl.DataFrame      # concept, definition, document_family, def_terms
    keywords: pl.DataFrame      # concept, language, keyword, priority, weight, is_regex, pattern, key, key_terms
    answer_types: pl.DataFrame  # answer_type, priority, description, question_cues, retrieval_patterns, patterns
    value_sets: pl.DataFrame    # set, value, canonical, kind, case_sensitive, key, cs_key
    folder: str = ""


def _tokens(e: pl.Expr) -> pl.Expr:
    return e.str.extract_all(r"[\p{L}\p{N}]+")


def _padded(tokens: pl.Expr) -> pl.Expr:
    """Tokens as one string, each wrapped in its own spaces (" a  b "), so adjacent matches never
    share a character and a key matches whole tokens only."""
    return tokens.list.eval(pl.lit(" ") + pl.element() + pl.lit(" ")).list.join("")


def _stems(e: pl.Expr) -> pl.Expr:
    return _tokens(e.str.to_lowercase()).list.eval(stem_expr(pl.element()))


def _regex_error(pattern: str, python_too: bool = False) -> str | None:
    """Why a pattern does not compile in the engine that runs it (Polars/Rust), or None."""
    try:
        pl.select(pl.lit("").str.contains(pattern))
    except Exception as e:  # noqa: BLE001 (any engine error is a rule violation to report)
        return f"regex does not compile in Polars: {str(e).splitlines()[0] if str(e) else e}"
    if python_too:
        try:
            re.compile(pattern)
        except re.error as e:
            return f"regex does not compile in Python: {e}"
    return None


def _read(folder: Path, name: str) -> tuple[Path, pl.DataFrame]:
    file, cols = _FILES[name]
    path = folder / file
    if not path.is_file():
        raise DictionaryError(f"{path}: dictionary file missing")
    try:
        df = pl.read_csv(path, infer_schema=False, encoding="utf8")
    except Exception as e:  # noqa: BLE001
        raise DictionaryError(f"{path}: cannot be read as CSV: {_csv_problem(path) or str(e).splitlines()[0]}") from e
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise DictionaryError(f"{path}: missing column(s) {missing}; expected {list(cols)}")
    if df.height == 0:
        raise DictionaryError(f"{path}: no rows")
    return path, df.select(cols).with_columns(pl.all().str.strip_chars())


def _csv_problem(path: Path) -> str | None:
    """The first row whose field count differs from the header's (quote fields holding commas)."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = csv.reader(fh)
            header = next(rows, [])
            for i, row in enumerate(rows):
                if row and len(row) != len(header):
                    return (f"row {i + 1} has {len(row)} fields, the header {len(header)} "
                            f"(quote a field that contains a comma); got {','.join(row)!r}")
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        return str(e)
    return None


def _fail(path: Path, i: int, col: str, value, rule: str):
    raise DictionaryError(f"{path}, row {i + 1} (line {i + 2}), column '{col}': {rule}; got {value!r}")


def _check_rows(path: Path, df: pl.DataFrame, rules: dict) -> None:
    """Apply per-column rules (callables returning an error text or None) row by row."""
    for i, row in enumerate(df.iter_rows(named=True)):
        for col, checks in rules.items():
            for check in checks:
                err = check(row[col], row)
                if err:
                    _fail(path, i, col, row[col], err)


def _nonempty(v, _row):
    return None if v else "must not be empty"


def _name(v, _row):
    return None if v and re.fullmatch(r"[a-z][a-z0-9_]*", v) else "must be a lower-case name ([a-z][a-z0-9_]*)"


def _int_ge1(v, _row):
    return None if v and re.fullmatch(r"\d+", v) and int(v) >= 1 else "must be an integer >= 1"


def _weight(v, _row):
    try:
        w = float(v)
    except (TypeError, ValueError):
        return "must be a number in 0..1"
    return None if 0.0 <= w <= 1.0 and w == w else "must be a number in 0..1"


def _unique(path: Path, df: pl.DataFrame, cols: list[str], rule: str) -> None:
    dup = df.with_row_index("_i").filter(pl.struct([pl.col(c).str.to_lowercase() for c in cols]).is_duplicated())
    if dup.height:
        r = dup.row(1, named=True) if dup.height > 1 else dup.row(0, named=True)
        _fail(path, r["_i"], cols[-1], r[cols[-1]], rule)


def dictionary_fingerprint(folder: str | Path) -> str:
    """Hash of the dictionary tables' names and bytes: what the answers depend on."""
    from ..ids import canonical_json, sha256_hex

    return sha256_hex(canonical_json([[f.name, sha256_hex(f.read_bytes())] for f in sorted(Path(folder).glob("*.csv"))]))


def load_dictionary(folder: str | Path = DEFAULT_FOLDER) -> Dictionary:
    """Read and validate the four dictionary tables of `folder`.

    A relative folder that does not exist from the working directory is looked up from the
    project root, so notebooks and tests find `params/dictionary` wherever they run.
    Raises DictionaryError naming the file, the row and the rule broken.
    """
    folder = Path(folder)
    if not folder.is_dir() and not folder.is_absolute() and (_PROJECT_ROOT / folder).is_dir():
        folder = _PROJECT_ROOT / folder
    if not folder.is_dir():
        raise DictionaryError(f"{folder}: dictionary folder missing")

    # concepts
    p, concepts = _read(folder, "concepts")
    _check_rows(p, concepts, {"concept": [_nonempty], "definition": [_nonempty], "document_family": [_name]})
    _unique(p, concepts, ["concept"], "duplicate concept")
    known = set(concepts["concept"].to_list())

    # concept keywords
    p, kw = _read(folder, "keywords")

    def _concept(v, _row):
        return None if v in known else "unknown concept (not in concepts.csv)"

    def _language(v, _row):
        return None if v and re.fullmatch(r"[a-z]{2}", v) else "must be a two-letter language code (en, fr, de, ...)"

    def _keyword(v, _row):
        if not v:
            return "must not be empty"
        if v.startswith(REGEX_PREFIX):
            pat = v[len(REGEX_PREFIX):]
            return "empty regex" if not pat else _regex_error(pat)
        return None if re.search(r"\w", v) else "must contain a letter or digit"

    _check_rows(p, kw, {"concept": [_concept], "language": [_language], "keyword": [_keyword],
                        "priority": [_int_ge1], "weight": [_weight]})
    _unique(p, kw, ["concept", "language", "keyword"], "duplicate keyword for this concept and language")
    is_rx = pl.col("keyword").str.starts_with(REGEX_PREFIX)
    kw = kw.with_columns(
        pl.col("priority").cast(pl.Int64), pl.col("weight").cast(pl.Float64), is_rx.alias("is_regex"),
        pl.when(is_rx).then(pl.col("keyword").str.slice(len(REGEX_PREFIX))).otherwise(pl.col("keyword")).alias("pattern"),
    ).with_columns(
        pl.when(~pl.col("is_regex")).then(_stems(pl.col("keyword"))).alias("key_terms"),
    ).with_columns(pl.when(~pl.col("is_regex")).then(_padded(pl.col("key_terms"))).alias("key"))

    # answer types
    p, at = _read(folder, "answer_types")

    def _cues(v, row):
        if not v:
            return None if row["answer_type"] == "text" else "must not be empty (only 'text' may have no cues)"
        return _regex_error(v)

    def _patterns(v, _row):
        if not v:
            return "must hold at least one regex"
        for piece in v.split(PATTERN_SEPARATOR):
            if not piece.strip():
                return f"empty pattern between '{PATTERN_SEPARATOR.strip()}' separators"
            err = _regex_error(piece.strip(), python_too=True)
            if err:
                return f"{err} (pattern {piece.strip()!r})"
        return None

    _check_rows(p, at, {"answer_type": [_name], "priority": [_int_ge1], "description": [_nonempty],
                        "question_cues": [_cues], "retrieval_patterns": [_patterns]})
    _unique(p, at, ["answer_type"], "duplicate answer_type")
    _unique(p, at, ["priority"], "duplicate priority (the tie-break between answer types must be total)")
    missing = [t for t in REQUIRED_ANSWER_TYPES if t not in set(at["answer_type"].to_list())]
    if missing:
        raise DictionaryError(f"{p}: missing required answer type(s) {missing}")
    at = at.with_columns(
        pl.col("priority").cast(pl.Int64),
        pl.col("retrieval_patterns").str.split(PATTERN_SEPARATOR).list.eval(pl.element().str.strip_chars()).alias("patterns"),
    ).sort("priority")

    # closed value sets
    p, vs = _read(folder, "value_sets")

    def _kind(v, _row):
        return None if v in _KINDS else f"kind must be one of {list(_KINDS)}"

    def _value(v, row):
        if not v:
            return "must not be empty"
        return None if row["kind"] == "symbol" or re.search(r"\w", v) else "must contain a letter or digit (or use kind 'symbol')"

    _check_rows(p, vs, {"set": [_name], "kind": [_kind], "value": [_value], "canonical": [_nonempty]})
    _unique(p, vs, ["set", "value"], "duplicate value in this set")
    vs = vs.with_columns(pl.col("kind").is_in(list(_CASE_SENSITIVE_KINDS)).alias("case_sensitive"))
    vs = vs.with_columns(
        pl.when(pl.col("kind") == "symbol").then(pl.col("value"))
        .otherwise(_padded(_tokens(pl.col("value").str.to_lowercase()))).alias("key"),
        pl.when(pl.col("case_sensitive")).then(_padded(_tokens(pl.col("value")))).alias("cs_key"),
    )
    clash = vs.group_by("set", "key").agg(pl.col("canonical").n_unique().alias("n"), pl.col("value").first()).filter(pl.col("n") > 1)
    if clash.height:
        r = clash.sort("set", "key").row(0, named=True)
        i = vs.with_row_index("_i").filter((pl.col("set") == r["set"]) & (pl.col("key") == r["key"]))["_i"][-1]
        _fail(p, i, "value", vs["value"][i], f"spelling maps to two canonical values in set '{r['set']}'")

    concepts = concepts.with_columns(terms_expr("definition").alias("def_terms"))
    return Dictionary(concepts=concepts, keywords=kw, answer_types=at, value_sets=vs, folder=str(folder))


def answer_types(dictionary: Dictionary | None = None) -> pl.DataFrame:
    """The answer-type registry: answer_type, priority, description, question_cues,
    retrieval_patterns (the raw ` || `-separated text) and patterns (the list of regexes; any one
    of them matching a text line confirms an answer of that type)."""
    d = dictionary if dictionary is not None else load_dictionary()
    return d.answer_types.select("answer_type", "priority", "description", "question_cues", "retrieval_patterns", "patterns")


def answer_pattern(answer_type: str, dictionary: Dictionary | None = None) -> str:
    """One regex (the alternation of the type's retrieval patterns) for `str.contains`."""
    d = dictionary if dictionary is not None else load_dictionary()
    rows = d.answer_types.filter(pl.col("answer_type") == answer_type)
    if rows.height == 0:
        raise KeyError(f"unknown answer type {answer_type!r}; known: {d.answer_types['answer_type'].to_list()}")
    return "|".join(_scoped(p) for p in rows["patterns"][0].to_list())


def _scoped(pattern: str) -> str:
    """A pattern as a group that can sit in an alternation: a leading "(?i)" becomes "(?i:...)"
    (Python refuses global flags that are not at the start of the whole expression)."""
    m = re.match(r"^\(\?([a-z]+)\)", pattern)
    return f"(?{m.group(1)}:{pattern[m.end():]})" if m else f"(?:{pattern})"


# ---- the parser's own rules ----------------------------------------------------------------------

# Function words of questions: never content (baselines.STOP_WORDS plus question scaffolding,
# and the commonest French and German function words).
QUESTION_STOP_WORDS = tuple(sorted(set(STOP_WORDS) | {
    "about", "after", "all", "also", "any", "before", "both", "could", "did", "does", "each", "every",
    "get", "give", "here", "just", "list", "many", "may", "me", "might", "more", "much", "must", "my",
    "need", "needs", "please", "shall", "should", "show", "some", "tell", "us", "whose", "within",
    "over", "under", "above", "below", "less", "one", "there", "am", "done", "per", "via", "regarding",
    "find", "explain", "describe", "summarise", "summarize", "say", "says", "said", "mention", "mentions",
    "named", "called", "titled", "page", "pages", "slide", "slides", "sheet", "sheets", "tab", "tabs",
    "happen", "happens", "happened", "doit", "wie", "hoch", "viele",
    "le", "la", "les", "de", "du", "des", "et", "pour", "qui", "que", "quel", "quelle", "quels", "quelles",
    "est", "un", "une", "au", "aux", "en", "dans", "sur", "par", "der", "die", "das", "den", "dem",
    "und", "für", "wer", "ist", "ein", "eine", "von", "mit", "im", "über", "bei", "zu",
}))

_WH = r"(?:who|whom|whose|what|when|where|which|why|how)"
_AUX = r"(?:is|are|was|were|do|does|did|can|could|should|must|may|will|would|has|have|had)"
_IMPERATIVE = r"(?:list|give|show|find|tell|name|explain|describe|summari[sz]e|identify|check|compare)"
_SUBJECT = (r"(?:it|they|this|that|these|those|there|the|a|an|any|we|i|you|he|she|its|their|"
            r"employees|vendors|suppliers|contractors|staff|managers)")
# where a new clause can start after "and", ";", "then", "?"
CLAUSE_START = rf"(?:{_WH}|{_IMPERATIVE}|{_AUX}\s+{_SUBJECT})\b"

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_YEAR = r"(?:19|20)\d{2}"
# a date expression (DX): a day, a month, a quarter, a half, a fiscal year or a year
DX = (
    rf"(?:\d{{4}}-\d{{2}}-\d{{2}}"
    rf"|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_YEAR}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+{_YEAR}"
    rf"|q[1-4]\s*(?:of\s+)?(?:fy\s?)?'?{_YEAR}|{_YEAR}\s*q[1-4]"
    rf"|h[12]\s*{_YEAR}"
    rf"|fy\s?'?(?:{_YEAR}|\d{{2}})"
    rf"|{_MONTH}\.?\s+{_YEAR}"
    rf"|{_YEAR})\b"
)
_DX_PARTS = (
    rf"(?i)^(?:(?P<iy>\d{{4}})-(?P<im>\d{{2}})-(?P<id>\d{{2}})"
    rf"|(?P<m1>[a-z]+)\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m2>[a-z]+)\.?,?\s+(?P<y2>\d{{4}})"
    rf"|q(?P<q1>[1-4])\s*(?:of\s+)?(?:fy\s?)?'?(?P<qy1>\d{{4}})|(?P<qy2>\d{{4}})\s*q(?P<q2>[1-4])"
    rf"|h(?P<h>[12])\s*(?P<hy>\d{{4}})"
    rf"|fy\s?'?(?P<fy>\d{{4}}|\d{{2}})"
    rf"|(?P<m3>[a-z]+)\.?\s+(?P<y3>\d{{4}})"
    rf"|(?P<y4>\d{{4}}))$"
)
_MONTH_NUMBER = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
# scope operators: a range, an open start, an open end, or the period itself
DATE_RANGE = rf"(?i)\b(?:between|from)\s+(?:the\s+)?({DX})\s+(?:and|to|until|till|through|thru|-|–)\s+(?:the\s+)?({DX})"
DATE_OPERATOR = (
    rf"(?i)\b(since|after|from|starting(?:\s+(?:in|from|on))?|as of|before|prior to|until|till|up to|through|by|"
    rf"in|during|for|of|on|throughout)\s+(?:the\s+)?(?:(?:fiscal\s+)?year\s+|quarter\s+)?({DX})"
)
DATE_BARE = (
    rf"(?i)(?:^|[\s(,])((?:q[1-4]\s*(?:of\s+)?(?:fy\s?)?'?{_YEAR}|{_YEAR}\s*q[1-4]|h[12]\s*{_YEAR}|fy\s?'?(?:{_YEAR}|\d{{2}})"
    rf"|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_YEAR}|{_MONTH}\.?\s+{_YEAR}|\d{{4}}-\d{{2}}-\d{{2}})\b"
    rf"|{_YEAR}\s+(?:budgets?|revenue|results|reports?|polic(?:y|ies)|plans?|forecasts?|guidelines|numbers|figures|targets?|audit|accounts|financials))"
)

# metrics a question can ask the value of (the finance and customer metrics of the corpora)
METRIC_CUE = (
    r"(?i)\b(?:revenue|gross margin|operating margin|net (?:profit )?margin|profit margin|ebitda(?: margin)?|ebit|net income|gross profit|"
    r"operating income|(?:free |operating )?cash flow|customer churn|churn(?: rate)?|net (?:revenue |dollar )?retention(?: rate)?|"
    r"retention rate|arr|mrr|annual recurring revenue|days sales outstanding|dso|forecast accuracy|active customers|"
    r"average contract value|headcount growth|nps|net promoter score|customer acquisition cost|cac|lifetime value|ltv|arpu|"
    r"earnings per share|eps|margin|kpis?|metrics?|operating expenses|opex|chiffre d'affaires|marge brute|bruttomarge|"
    r"umsatz\w*|kennzahl\w*|indicateur\w*)\b"
)

# intents: (intent, cue, veto). A question asks about an intent when a cue of it matches and its veto does not.
_MONEY_WORDS = r"(?:\d[\d,.]*\s?(?:k|m|million|thousand)?\s?(?:eur|euros?|usd|dollars?|gbp|chf))"
INTENT_CUES: tuple[tuple[str, str, str | None], ...] = (
    ("approval_lookup", r"(?i)\bapprov\w*|\bsign(?:s|ed)?[- ]off\b|\bauthori[sz]\w*|\bapprob\w*|\bapprouv\w*|\bgenehmig\w*|\bfreigabe\b|\bfreigeb\w*", None),
    ("threshold_lookup", MONEY, None),
    ("threshold_lookup", rf"(?i)\bthresholds?\b|\blimits?\b|\bcaps?\b|\bceilings?\b|\bmaximum\b|\bminimum\b|\bup to\b|\bper diem\b|\ballowance\b|"
                         rf"\bseuils?\b|\bplafonds?\b|\bschwellenwert\w*|\bwertgrenze\w*|\bobergrenze\w*|\b(?:over|above|exceed\w*|more than|less than|under|below|über|plus de)\s+{_MONEY_WORDS}",
     r"(?i)\btime limits?\b|\bspeed limits?\b"),
    ("owner_lookup", r"(?i)\bowners?\b|\bowns\b|\bowned by\b|\bownership\b|\bresponsible for\b|\baccountable for\b|\bwho (?:is responsible|is accountable|maintains)\b|"
                     r"\bpropriétaire\b|\bresponsable\b|\bverantwortlich\w*|\bzuständig\w*|\beigentümer\b", None),
    ("effective_date_lookup", r"(?i)\beffective\b|\btakes? effect\b|\bcomes? into (?:force|effect)\b|\bin force\b|\bgo(?:es)?[- ]live\b|\bvalid from\b|"
                              r"\ben vigueur\b|\bgültig\b|\bin kraft\b|\binkrafttreten\b|\bsince when\b", r"(?i)\bcost[- ]effective\b"),
    ("applicability_check", r"(?i)\bappl(?:y|ies)(?:\s+\w+){0,2}\s+(?:to|in|for)\b|\bdoes\s+[^?]{0,60}\bapply\b|\bapplicable\b|\bapplicability\b|\bscope\b|\bcovered by\b|"
                            r"\bwho is covered\b|\bsubject to\b|\bchamp d'application\b|\bs'applique\w*|\bgeltungsbereich\b|\banwendungsbereich\b|\bgilt\b|\bgelten\b", None),
    ("exception_lookup", r"(?i)\bexceptions?\b|\bexcept\b|\bunless\b|\bprohibited\b|\bforbidden\b|\bnot (?:allowed|permitted)\b|\bexempt\w*|\bwaivers?\b|"
                         r"\bexclu\w+|\boutside (?:the )?scope\b|\bdérogation\w*|\bausnahme\w*|\bverboten\b|\binterdit\w*", None),
    ("rule_lookup", r"(?i)\bmust\b|\bshall\b|\brequired\b|\brequires?\b|\bmandatory\b|\ballowed\b|\bpermitted\b|\bobligat\w*|\bneed to\b|\bhave to\b|"
                    r"\bcan (?:i|we|employees|staff|contractors|managers)\b|\bmay (?:i|we|employees|staff|contractors)\b|\brules?\b|"
                    r"\bdoit\b|\bobligatoire\b|\bmuss\b|\bmüssen\b|\bpflicht\w*",
     r"(?i)\b(?:who|whom|which\s+(?:team|role|person|manager|officer|approver))\s+(?:\w+\s+)?(?:must|shall|should|is required to|has to|needs to)\b"),
    ("metric_lookup", METRIC_CUE,
     r"(?i)^\W*(?:why|how come|what (?:drove|caused|explains)|explain|pourquoi|warum)\b"),
    ("variance_explanation", r"(?i)\bvariances?\b|\b(?:why|how come)\b.*\b(?:above|below|over|under|ahead of|behind|miss(?:ed)?|exceed(?:ed)?|beat|short of|higher|lower|"
                             r"increase[ds]?|decrease[ds]?|decline[ds]?|grew|fell|rose|drop(?:ped)?)\b|\bwhat (?:drove|caused|explains|explained)\b|\bdrivers? of\b|"
                             r"\b(?:over|under)spend\w*|\bgap to (?:plan|forecast|budget)\b|\bécarts?\b|\babweichung\w*", None),
    ("sla_lookup", r"(?i)\bhow (?:long|quickly|fast|soon)\b|\bwithin how many\b|\bhow many (?:business |working |calendar )?(?:minutes|hours|days|weeks)\b|"
                   r"\bresponse time\b|\bresolution time\b|\bturnaround\b|\btime limit\b|\bdeadline\b|\bslas?\b|\bservice level\b|\bwithin \d+\b|"
                   r"\bdélai\w*|\breaktionszeit\w*|\bfrist\w*|\bwie (?:lange|schnell)\b", None),
    ("next_step_lookup", r"(?i)\bsteps?\s+\d+\b|\bnext step\b|\b(?:first|last|final|previous) step\b|\b(?:after|before) step\b|\bwhat happens (?:after|next|once|before)\b|"
                         r"\bwhat comes (?:after|next)\b|\bsteps\b|\bprocedure for\b|\bhow do (?:i|we|you)\b|\bétapes?\b|\bschritt\w*", None),
    ("escalation_lookup", r"(?i)\bescalat\w*|\beskal\w*|\bescalade\b", None),
)
assert {i for i, _, _ in INTENT_CUES} == set(INTENTS), "every detector intent needs a question cue"

# answer shapes, first match wins (the rest: single)
SHAPE_RULES: tuple[tuple[str, str], ...] = (
    ("nested_json", r"(?i)\bjson\b|\bnested\b|\bas an? (?:object|dictionary|dict)\b"),
    ("tree", r"(?i)\bhierarch\w*|\bbreak ?down\b|\bbreakdown\b|\bstructure\b|\borgani[sz]ation(?:al)? chart\b|\borg chart\b|\btree\b|\barborescence\b|\bgliederung\b"),
    ("table", r"(?i)\b(?:a|as a|in a|into a) table\b|\btable of\b|\btabular\b|\bcompare\b|\bcomparison\b|\bfor (?:each|every)\b|"
              r"\bper (?:region|country|quarter|month|year|department|team|category|level|tier|severity|metric)\b|\bside by side\b|\bmatrix of\b"),
    ("listing", r"(?i)^\W*(?:list|enumerate|name all|name the|give me all|show all|show me all)\b|\blist (?:all|every|the)\b|"
                r"\bwhich\b[^?]*?\b(?:are|were|have|need|require)\b|\bwhat are\b|\bwho are\b|\ball (?:the )?\w+ (?:that|which|who)\b|"
                r"\bwhat (?:steps|exceptions|documents|metrics|regions|countries|vendors|suppliers|categories|levels)\b|\bquel(?:le)?s sont\b|\bwelche\b"),
)

# where in a document to look, first match wins
LAYOUT_RULES: tuple[tuple[str, str], ...] = (
    ("table", r"(?i)\b(?:in|from|on|inside|within|under) (?:the|this|that|a) (?:[\w'-]+ ){0,3}tables?\b|\btable \d+\b|\bcolumns?\b|\brows?\b|\bcells?\b|\bspreadsheet\b"),
    ("image", r"(?i)\bfigures?\b|\bfig\.|\bcharts?\b|\bgraphs?\b|\bimages?\b|\bdiagrams?\b|\bpictures?\b|\bphotos?\b|\bscreenshots?\b|\billustrations?\b|\blogos?\b|\binfographics?\b"),
    ("header", r"(?i)\bheaders?\b|\bfooters?\b|\btitle\b|\btitle page\b|\bcover page\b|\bheadings?\b|\bletterhead\b|\brunning head\b"),
    ("text", r"(?i)\bparagraphs?\b|\bbody text\b|\bin the text\b|\bfootnotes?\b|\bwording\b|\bsentences?\b|\bprose\b|\bnarrative\b"),
)

# table-of-contents hints, first match wins: group 1 is the section number or name
TOC_PATTERNS: tuple[tuple[str, str], ...] = (
    # the number must stand apart from the word ("Party" is not "Part y")
    ("number", r"(?i)(?:\b(?:sections?|sect\.|clauses?|articles?|chapters?|parts?|appendix|annex|schedule)\s+|§\s*)((?:[A-Z]?\d+(?:[.-]\d+)*[a-z]?|[A-Z]|[IVX]+))\b"),
    ("quoted", r"(?i)\b(?:section|chapter|heading|part)\s+(?:titled|called|named)?\s*[\"']([^\"']{1,80})[\"']"),
    ("quoted_before", r"[\"']([^\"']{1,80})[\"']\s+(?i:section|chapter|heading)\b"),
    ("capitalised", r"(?i:\b(?:in|under|from|of|see|per)\s+the\s+)([A-Z][\w&/-]*(?:\s+(?:[A-Z][\w&/-]*|and|of|&)){0,5})\s+(?i:section|chapter|heading)\b"),
    ("named", r"(?i)\bthe\s+([a-z][\w&/-]*(?:\s+[\w&/-]+){0,3}?)\s+(?:section|chapter)\b"),
    ("under_heading", r"(?i)\bunder\s+(?:the\s+)?heading\s+[\"']?([A-Z][^\"'?,;]{1,60}?)[\"']?(?:[?,;.]|$)"),
)

_LIST_SEP = r"(?:\s*(?:-|–|to|through|thru)\s*|\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s+or\s+)"
PAGES = rf"(?i)\b(?:pages?|pp?\.)\s*#?\s*\d+(?:{_LIST_SEP}\d+)*"
SLIDES = rf"(?i)\bslides?\s*#?\s*\d+(?:{_LIST_SEP}\d+)*"
SHEET_NUMBERS = rf"(?i)\b(?:work)?(?:sheets?|tabs?)\s*#?\s*\d+(?:{_LIST_SEP}\d+)*"
SHEET_NAMES: tuple[str, ...] = (
    r"[\"']([^\"'\n]{1,60})[\"']\s+(?i:(?:work)?sheet|tab)s?\b",
    r"(?i:\b(?:work)?(?:sheets?|tabs?)\s+(?:named|called|titled)?\s*)[\"']([^\"'\n]{1,60})[\"']",
    r"(?i:\b(?:the|on|in|from)\s+)((?:[A-Z][\w&-]*\s+){1,4})(?i:(?:work)?sheet|tab)s?\b",
)

# anchors: codes the retriever can match literally. One alternation, leftmost-first, so a code wins over the number inside it.
ANCHOR_PATTERNS: tuple[tuple[str, str], ...] = (
    ("article", r"\b[A-Z]\d{2,4}(?:-\d+)+\b"),                   # L131-1
    ("control", r"\b[A-Z]{2}\.[A-Z]{2}(?:-\d+)?\b"),             # ID.AM, PR.AC-1
    ("code", r"\b[A-Z]{2,}[A-Z0-9]*(?:-[A-Z0-9]+)+\b"),          # ISO-9001, RC-2024, POL-PRC-004
    ("code_number", r"\b[A-Z]{2,}\d{2,}\b"),                      # FY2026, ISO9001
    ("acronym", r"\b[A-Z]{3,}s?\b"),                              # EMEA, EBITDA, SLAs
    ("number", r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d{4,}\b"),  # 25,000, 2024
)
ANCHOR = "|".join(f"(?:{p})" for _, p in ANCHOR_PATTERNS)
CODE_ANCHOR = r"^(?:[A-Z]\d|[A-Z]{2}\.[A-Z]{2}|[A-Z]{2,}[A-Z0-9]*-)"  # an article, control or document code names a topic

# capitalised multi-word names that contain "and" and must not be split as coordination
FIXED_PHRASES: tuple[tuple[str, str], ...] = (
    ("travel", "expenses?"), ("planning", "analysis"), ("terms", "conditions"), ("profit", "loss"),
    ("research", "development"), ("mergers", "acquisitions"), ("general", "administrative"),
    ("health", "safety"), ("scope", "applicability"), ("ownership", "effective date"),
    ("roles", "responsibilities"), ("depreciation", "amorti[sz]ation"), ("middle east", "africa"),
    ("sales", "marketing"), ("accounts payable", "receivable"), ("legal", "compliance"),
)
_AND = "\x1e"   # a masked "and" (restored in the output)
_CUT = "\x1f"   # a clause boundary
_CONJ = r"(?:if|when|whenever|unless|in case|provided that|assuming|in the event that)"
COMPOUND = r"(?i)\band\b|;|\bthen\b|\bif\b|\bunless\b|\bwhen(?:ever)?\b|\bcompare\b|\bboth\b|\bas well as\b|\bor\b|\bprovided that\b|\bin case\b|\bassuming\b"
CONDITION_LEADING = rf"(?i)^\s*({_CONJ})\s+((?:[^,?]|,\d{{3}})+?)\s*,\s+(?:then\s+)?(.+)$"
CONDITION_TRAILING = r"(?i)^(.*?[^,\s]),?\s+(if|when|whenever|unless|in case|provided that|in the event that)\s+([^?]+?)\s*[?.!]*\s*$"
BACK_REFERENCE = (
    r"(?i)\b(?:it|its|they|them|their|theirs|he|she|him|his|her)\b"
    r"|\b(?:of|for|to|by|is|was|does|did|has|from|with|about|approve|approves|owns)\s+(?:that|this|those|these)\b"
    r"|\b(?:that|this|those|these)\s+(?:one|person|people|team|role|amount|date|owner|approver|step|value|figure|number|threshold|limit|contact)s?\b"
    r"|\b(?:that|this)\s*\?*\s*$"
)
THEN = r"(?i)\bthen\b|\bafter that\b|\bafterwards\b"
_CONJUNCT = r"(?:[^,?;]|,\d{3})+?"
UNIFIED_RULES: tuple[tuple[str, str], ...] = (
    ("preposition", rf"(?i)^(.*\b(?:for|of|in|on|to|about|across|under|by|from|at|with|regarding)\s+)({_CONJUNCT}(?:\s*,\s*{_CONJUNCT})*)\s*,?\s+(?:and|or|as well as)\s+(?:(?:for|of|in|on|to|at|from|with)\s+)?({_CONJUNCT})\s*([?.!]*)\s*$"),
    ("both", rf"(?i)^(.*?)\bboth\s+({_CONJUNCT})\s+and\s+({_CONJUNCT})\s*([?.!]*)\s*$"),
    ("short", rf"(?i)^((?:{_WH}|{_AUX}|{_IMPERATIVE})\b.*\s)(\S+(?:\s\S+)?)\s+(?:and|or)\s+(\S+?(?:\s\S+?)?)\s*([?.!]*)\s*$"),
)
MAX_CONJUNCT_WORDS = 5

# vague questions: (kind, pattern, when it counts, reason, clarification); "{m}" is the matched text
DANGLING: tuple[tuple[str, str, str, str, str], ...] = (
    ("conversation",
     r"(?i)\b(?:the|that) (?:previous|other|same|last) one\b|\bsame as (?:before|last time)\b|\blike (?:before|last time)\b|"
     r"\bas (?:discussed|mentioned) (?:before|earlier)\b",
     "always", "'{m}' refers to an earlier exchange the parser cannot see",
     "Which document, topic or value do you mean by '{m}'?"),
    ("follow_up",
     r"(?i)^\W*(?:and\s+)?(?:what|how) about\b",
     "always", "'{m}' follows up an earlier exchange the parser cannot see",
     "Please ask the whole question: which document, topic or value do you mean?"),
    ("relative_time",
     r"(?i)\b(?:last|this|next|previous|prior|current) (?:fiscal year|year|quarter|month|week)\b|\byesterday\b|\brecently\b|\byear to date\b|\bytd\b",
     "no_date", "relative period '{m}' cannot be resolved to dates",
     "Which period do you mean by '{m}' (for example Q2 2025 or the year 2024)?"),
    ("definite",
     r"(?i)\b(?:the|that|this|those|these)\s+(?:(?:new|latest|current|old|previous|last|same|other|updated|revised)\s+)?"
     r"(?:cap|caps|limit|limits|threshold|thresholds|version|rule|rules|policy|document|file|numbers|figures|deadline|report|"
     r"change|changes|update|procedure|process|form|contract|agreement|matrix|guidelines|standard)\b",
     "no_topic", "'{m}' has no antecedent: the question names no document or topic",
     "Which document or topic does '{m}' refer to (for example a policy, a procedure, a metric or a region)?"),
    ("pronoun",
     r"(?i)\b(?:it|its|they|them|their|he|she|him|his|her)\b",
     "no_topic_not_sequential", "pronoun '{m}' has no antecedent: the question names no document or topic",
     "What does '{m}' refer to? Please name the document, topic or value."),
)
# "the rules for gifts", "the limit of the card": a qualified definite has its antecedent in the question
QUALIFIED = (
    r"(?i)\b(?:the|that|this|those|these)\s+(?:\w+\s+)?(?:caps?|limits?|thresholds?|version|rules?|polic(?:y|ies)|document|file|numbers|figures|"
    r"deadline|report|changes?|update|procedure|process|form|contract|agreement|matrix|guidelines|standard)\s+"
    r"(?:for|of|on|about|regarding|covering|governing|to|under|between)\s+(?:the\s+|a\s+|an\s+)?\w{3,}"
)
NAMED_DOCUMENT = r"\b[A-Z][\w&-]*(?:\s+(?:[A-Z][\w&-]*|and|&))*\s+(?:Policy|Procedure|Matrix|Catalog|Catalogue|Guidelines|Standard|Agreement|Contract|Addendum|Plan|Report|Handbook|Runbook|Checklist)\b"

# contract parties
_CAPS = r"[A-Z][\w&.'-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w&.'-]*){0,4}"
PARTIES_BETWEEN = rf"\b(?i:between)\s+(?:the\s+)?({_CAPS})\s+(?:and|&)\s+(?:the\s+)?({_CAPS})"
PARTY_ROLES = (
    "Service Provider", "Disclosing Party", "Receiving Party", "Supplier", "Customer", "Licensee", "Licensor", "Vendor",
    "Buyer", "Seller", "Contractor", "Client", "Landlord", "Tenant", "Provider", "Purchaser", "Distributor", "Recipient",
    "Consultant", "Franchisee", "Franchisor", "Lender", "Borrower", "Employer", "Subcontractor",
)
PARTY_DEFINED = rf"\b[Tt]he\s+(?:{'|'.join(PARTY_ROLES)})(?:\s+[a-z][\w'-]*|[^\w\s]|$)"
PARTY_ORG = r"\b[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,3}\s+(?:Inc|Ltd|LLC|GmbH|SA|SAS|SARL|AG|plc|PLC|Corp|Corporation|Limited|Co|BV|NV|SE)\b\.?"
_PARTY_LEAD = r"^(?:(?:Does|Do|Did|Is|Are|Was|Were|What|Who|Which|When|Where|How|Why|Can|May|Must|Should|Under|For|With|Between|And|Or|The|If|In|On|At|By|From|To|Has|Have|Will)\s+)+"


# ---- the batch ---------------------------------------------------------------------------------

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
        clean = ["" if x is None else (x if isinstance(x, str) else str(x)).encode("utf-8", "replace").decode("utf-8") for x in questions]
        ids, qs = None, pl.Series("question", clean, dtype=pl.String)
    df = pl.DataFrame({"question": qs}).with_row_index("_row")
    generated = pl.lit("q") + (pl.col("_row") + 1).cast(pl.String)
    df = df.with_columns(generated.alias("id") if ids is None else ids.alias("id")).with_columns(pl.col("id").fill_null(generated))
    t = (
        pl.col("question").fill_null("").str.slice(0, MAX_CHARS)
        .str.replace_all(r"[\x00-\x08\x0b-\x1f\x7f]", " ")
        .str.replace_all(r"[’‘`´]", "'").str.replace_all(r"[“”„«»]", '"')
        .str.replace_all(r"\s+", " ").str.strip_chars()
    )
    return df.with_columns(t.alias("_t"))


def _content_words(t: pl.Expr) -> pl.Expr:
    return (
        _tokens(t.str.to_lowercase())
        .list.eval(pl.element().filter(~pl.element().is_in(list(QUESTION_STOP_WORDS)) & (pl.element().str.len_chars() >= 2)))
        .list.unique(maintain_order=True)
    )


def _kw(lf: pl.DataFrame, text: pl.Expr, weight: float | pl.Expr, source: str, group: str | pl.Expr | None,
        is_regex: bool | pl.Expr = False) -> pl.DataFrame:
    """Keyword rows (_row, text, weight, source, semantic_group, is_regex)."""
    return lf.select(
        "_row", text.alias("text"), (weight if isinstance(weight, pl.Expr) else pl.lit(weight)).cast(pl.Float64).alias("weight"),
        pl.lit(source).alias("source"), (group if isinstance(group, pl.Expr) else pl.lit(group, dtype=pl.String)).alias("semantic_group"),
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
        pl.col("_t").str.extract(r"(?i)\bterms?\s*:\s*([^?;]+)", 1).fill_null("")
        .str.replace_all(r"(?i)\s*(?:,|\band\b|\bor\b)\s*", _CUT).str.split(_CUT)
        .list.eval(pl.element().str.strip_chars(" \"'."))
    )
    d = _long(q.select("_row", pl.concat_list(quoted, terms).alias("text")), "text")
    return _kw(d, pl.col("text"), DIRECT_WEIGHT, "direct", None)


def _anchors(q: pl.DataFrame) -> pl.DataFrame:
    letters = pl.col("_t").str.count_matches(r"\p{L}")
    shouting = (letters > 12) & (pl.col("_t").str.count_matches(r"\p{Lu}") > 0.7 * letters)
    a = q.select("_row", pl.col("_t").str.extract_all(ANCHOR).alias("text"), shouting.alias("_shout"))
    a = a.explode("text").filter(pl.col("text").is_not_null())
    acronym = pl.col("text").str.contains(r"^[A-Z]{3,}s?$")
    a = a.filter(~(acronym & pl.col("_shout"))).with_columns(
        pl.when(acronym).then(pl.col("text").str.replace(r"^([A-Z]{3,})s$", "$1")).otherwise(pl.col("text")).alias("text"))
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
    keys = lit.select("key").unique().with_columns(pl.col("key").str.len_bytes().alias("_n")).sort(["_n", "key"], descending=[True, False])["key"].to_list()
    found = pl.col("_skey").str.extract_many(keys, leftmost=True) if keys else pl.lit([], dtype=pl.List(pl.String))
    hits = (
        q.select("_row", "_skey", "_qterms", found.alias("key"))
        .explode("key").filter(pl.col("key").is_not_null()).unique(["_row", "key"])
    )
    cand = (
        hits.join(lit.select("key", "concept", "key_terms").unique(["key", "concept"]), on="key")
        .join(d.concepts.select("concept", "def_terms"), on="concept")
        .with_columns(pl.col("_qterms").list.set_difference(pl.col("key_terms")).list.set_intersection(pl.col("def_terms")).list.len().alias("_overlap"))
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
        pl.col("keyword").sort_by(pl.col("keyword").str.len_chars(), "keyword").first().alias("keyword"), pl.col("weight").max())
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
    expanded = concepts.join(d.keywords, on="concept").sort(pl.col("_row"), pl.col("concept"), pl.col("language") != "en", "priority", "language", "keyword")
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
        pl.concat(parts).filter(pl.col("text").is_not_null() & (pl.col("text") != "")).with_row_index("_seq")
        .with_columns(rank.alias("_rank"), key.alias("_key"))
        .sort(["_row", "_key", "weight", "_rank", "_seq"], descending=[False, False, True, False, False])
        .unique(["_row", "_key"], keep="first", maintain_order=True)
        .sort(["_row", "_rank", "semantic_group", "weight", "text"], descending=[False, False, False, True, False], nulls_last=True)
        .group_by("_row", maintain_order=True)
        .agg(pl.struct("text", "weight", "source", "semantic_group", "is_regex").alias("keywords"))
    )
    amb = ambiguous.sort("_row", "keyword").group_by("_row", maintain_order=True).agg(pl.col("keyword").unique(maintain_order=True).alias("dictionary_ambiguities"))
    topic = concepts.join(d.concepts.select("concept", "document_family"), on="concept").filter(pl.col("document_family") != "general").select("_row").unique()
    return kw, amb, topic.with_columns(pl.lit(True).alias("_topic_concept"))


def _value_hits(q: pl.DataFrame, d: Dictionary) -> pl.DataFrame:
    """(row, set, canonical, position) of every closed-value spelling in the question.

    One leftmost-longest pass over lower-case tokens ("US dollars" wins over "US"); spellings of a
    case-sensitive kind (ISO codes) must also appear in their own case; symbols match literally.
    """
    words = d.value_sets.filter(pl.col("kind") != "symbol")
    keys = words.select("key").unique().with_columns(pl.col("key").str.len_bytes().alias("_n")).sort(["_n", "key"], descending=[True, False])["key"].to_list()
    matched = pl.col("_vkey").str.extract_many(keys, leftmost=True) if keys else pl.lit([], dtype=pl.List(pl.String))
    found = (
        q.select("_row", "_vkey", "_vkey_cs", matched.alias("key"))
        .with_columns(pl.int_ranges(pl.col("key").list.len()).alias("_pos"))
        .explode("key", "_pos").filter(pl.col("key").is_not_null())
        .join(words.select("key", "set", "canonical", "case_sensitive", "cs_key"), on="key")
        .filter(~pl.col("case_sensitive") | pl.col("_vkey_cs").str.contains(pl.col("cs_key"), literal=True))
    )
    symbols = d.value_sets.filter(pl.col("kind") == "symbol")
    sym = (
        q.select("_row", pl.col("_t").str.extract_many(symbols["value"].unique().sort().to_list()).alias("key"))
        .with_columns((pl.int_ranges(pl.col("key").list.len()) + 10_000).alias("_pos"))
        .explode("key", "_pos").filter(pl.col("key").is_not_null())
        .join(symbols.select(pl.col("value").alias("key"), "set", "canonical"), on="key")
    ) if symbols.height else None
    cols = ["_row", "_pos", "set", "canonical"]
    return pl.concat([found.select(cols)] + ([sym.select(cols)] if sym is not None else [])).sort("_row", "_pos")


def _canonical_list(hits: pl.DataFrame, sets: tuple[str, ...], name: str) -> pl.DataFrame:
    return (
        hits.filter(pl.col("set").is_in(list(sets))).group_by("_row", maintain_order=True)
        .agg(pl.col("canonical").unique(maintain_order=True).alias(name))
    )


# ---- structure, scope, intents ------------------------------------------------------------------

def _number_list(q: pl.DataFrame, pattern: str, name: str, as_string: bool = False) -> pl.DataFrame:
    """"page 3" -> [3]; "pages 5 to 7" -> [5, 6, 7]; "pages 2, 4 and 9" -> [2, 4, 9] (sorted, unique)."""
    m = _long(q.select("_row", pl.col("_t").str.extract_all(pattern).alias("m")), "m")
    parts = _long(m.select("_row", pl.col("m").str.replace(r"^\D+", "")
                           .str.replace_all(r"(?i)\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s+or\s+)\s*", _CUT).str.split(_CUT).alias("p")), "p")
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
    return both.sort("_row", "_k", "_i").group_by("_row", maintain_order=True).agg(pl.col("s").unique(maintain_order=True).alias("sheets_hint"))


def _first_rule(rules, col: str = "_t", group: int | None = None) -> pl.Expr:
    """The name (or, with group, the captured text) of the first rule of a table that matches."""
    if group is None:
        return pl.coalesce([pl.when(pl.col(col).str.contains(p)).then(pl.lit(n)) for n, p in rules] + [pl.lit(None, dtype=pl.String)])
    return pl.coalesce([pl.col(col).str.extract(p, group).str.strip_chars(" '\"") for _, p in rules])


def _dx_bounds(dx: pl.DataFrame) -> pl.DataFrame:
    """First and last day of each date expression in column `dx` (a day, month, quarter, half,
    fiscal year or year): adds `start` and `end`. Staged in columns, so the plan stays small."""
    g = dx.with_columns(pl.col("dx").str.to_lowercase().str.strip_chars().str.extract_groups(_DX_PARTS).alias("_g")).unnest("_g")
    i = lambda n: pl.col(n).cast(pl.Int32, strict=False)  # noqa: E731
    month = lambda n: pl.col(n).str.slice(0, 3).replace_strict(_MONTH_NUMBER, default=None, return_dtype=pl.Int32)  # noqa: E731
    ymd = lambda y, m, d: pl.concat_str([pl.col(y), pl.lit("-"), m.cast(pl.String).str.zfill(2), pl.lit("-"), pl.col(d).str.zfill(2)]).str.to_date("%Y-%m-%d", strict=False)  # noqa: E731
    g = g.with_columns(
        pl.coalesce(ymd("iy", i("im"), "id"), ymd("y1", month("m1"), "d1"), ymd("y2", month("m2"), "d2")).alias("_day"),
        pl.coalesce(i("qy1"), i("qy2"), i("hy"), i("y3"),
                    pl.when(pl.col("fy").str.len_chars() == 2).then(2000 + i("fy")).otherwise(i("fy")), i("y4")).alias("_y"),
        pl.coalesce(pl.coalesce(i("q1"), i("q2")) * 3 - 2, i("h") * 6 - 5, month("m3"), pl.when(i("fy").is_not_null() | i("y4").is_not_null()).then(1)).alias("_m0"),
        pl.coalesce(pl.coalesce(i("q1"), i("q2")) * 3, i("h") * 6, month("m3"), pl.when(i("fy").is_not_null() | i("y4").is_not_null()).then(12)).alias("_m1"),
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
        "_row", rng.struct.field("1").alias("a"), rng.struct.field("2").alias("b"),
        op.struct.field("1").str.to_lowercase().str.replace_all(r"\s+", " ").alias("op"), op.struct.field("2").alias("o"),
        pl.col("_t").str.extract(DATE_BARE, 1).str.replace(r"(?i)\s+[a-z]+$", "").alias("bare"),
    )
    long = pl.concat([parts.select("_row", pl.lit(k).alias("slot"), pl.col(k).alias("dx")) for k in ("a", "b", "o", "bare")])
    b = _dx_bounds(long.filter(pl.col("dx").is_not_null()))
    wide = b.group_by("_row").agg(*[pl.col(c).filter(pl.col("slot") == k).first().alias(f"{k}_{c}") for k in ("a", "b", "o", "bare") for c in ("start", "end")])
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
        pl.when(has_range).then(pl.col("a_start"))
        .when(has_op & open_start).then(pl.col("o_start"))
        .when(has_op & after).then(pl.col("o_end") + one_day)
        .when(has_op & (before | until)).then(none)
        .when(has_op).then(pl.col("o_start"))
        .otherwise(pl.col("bare_start"))
    )
    to = (
        pl.when(has_range).then(pl.col("b_end"))
        .when(has_op & (open_start | after)).then(none)
        .when(has_op & before).then(pl.col("o_start") - one_day)
        .when(has_op).then(pl.col("o_end"))
        .otherwise(pl.col("bare_end"))
    )
    return w.select("_row", frm.cast(pl.Date).alias("scope_date_from"), to.cast(pl.Date).alias("scope_date_to"))


def _parties(q: pl.DataFrame, d: Dictionary) -> pl.DataFrame:
    between = pl.col("_t").str.extract_groups(PARTIES_BETWEEN)
    defined = pl.col("_t").str.extract_all(PARTY_DEFINED).list.eval(pl.element().str.extract(rf"\b[Tt]he\s+({'|'.join(PARTY_ROLES)})", 1))
    orgs = pl.col("_t").str.extract_all(PARTY_ORG)
    cand = q.select("_row", pl.concat_list(
        pl.concat_list(between.struct.field("1"), between.struct.field("2")), orgs, defined).alias("p"))
    p = _long(cand, "p").with_row_index("_i").with_columns(
        pl.col("p").str.replace(_PARTY_LEAD, "").str.replace(r"[.,]+$", "").str.strip_chars())
    not_values = d.value_sets.select(pl.col("value").str.to_lowercase().alias("_lv")).unique()
    p = (
        p.with_columns(pl.col("p").str.to_lowercase().alias("_lv"))
        .join(not_values, on="_lv", how="anti")
        .filter((pl.col("p") != "") & ~pl.col("p").str.contains(rf"(?i)^(?:{_MONTH}\b|q[1-4]\b|h[12]\b|fy\d|\d)"))
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
        m = m.str.replace_all(r'((?:^|[\s(:])"[^"]*?)\s+and\s+([^"]*")', f"$1 {_AND} $2")
        m = m.str.replace_all(r"((?:^|[\s(:])'[^']*?)\s+and\s+([^']*')", f"$1 {_AND} $2")
        m = m.str.replace_all(r"(?i)(\bterms?\s*:[^?;]*?)\s+and\s+", f"$1 {_AND} ")
    m = m.str.replace_all(r"(?i)(\bbetween\s+[^,?;]{1,80}?)\s+and\s+", f"$1 {_AND} ")
    for left, right in FIXED_PHRASES:
        m = m.str.replace_all(rf"(?i)\b({left})\s+and\s+({right})\b", f"$1 {_AND} $2")
    return m


def _tidy(e: pl.Expr) -> pl.Expr:
    """A sub-question: unmasked, no leading connective, capitalised, ending in '?' when it asks."""
    s = (
        e.str.replace_all(_AND, "and").str.strip_chars(" ,;")
        .str.replace(r"(?i)^(?:and|then|but|also|as well as)\s+(?:then\s+)?", "").str.strip_chars(" ,;")
    )
    s = s.str.slice(0, 1).str.to_uppercase() + s.str.slice(1)
    asks = s.str.contains(rf"(?i)^(?:{_WH}|{_AUX})\b|^(?:wer|was|wann|wie|welche\w*|qui|quel\w*|quand|combien|où)\b")
    tells = s.str.contains(rf"(?i)^{_IMPERATIVE}\b")
    bare = s.str.replace(r"[?.!\s]+$", "")
    return pl.when(bare == "").then(None).when(asks).then(bare + pl.lit("?")).when(tells).then(bare + pl.lit(".")).otherwise(s)


def _decompose(q: pl.DataFrame) -> pl.DataFrame:
    """decomposition_pattern, sub_questions and condition for every row.

    A cheap pre-filter (COMPOUND, or more than one '?') picks the rows worth decomposing; on
    those, the rules run in order: conditional (leading, then trailing condition), clause split
    (sequential when a later clause refers back or says "then", else independent), unified
    (coordinated noun phrases), else single.
    """
    m = _mask(pl.col("_t"))
    base = q.select("_row", "_t", m.alias("_m"))
    flagged = base.filter(pl.col("_m").str.contains(COMPOUND) | (pl.col("_m").str.count_matches(r"\?") > 1))

    lead = pl.col("_m").str.extract_groups(CONDITION_LEADING)
    trail = pl.col("_m").str.extract_groups(CONDITION_TRAILING)
    aux_start = rf"(?i)^{_AUX}\b"
    lead_ok = lead.struct.field("2").is_not_null() & ~lead.struct.field("2").str.contains(aux_start) & (lead.struct.field("3").str.strip_chars() != "")
    trail_main = trail.struct.field("1")
    trail_ok = (
        trail_main.is_not_null()
        & ~trail_main.str.contains(r"(?i)\b(?:and|or|but|then|check|tell me|ask|know|see|determine|verify|find out|wonder|whether)$")
        & (trail_main.str.count_matches(r"\S+") >= 2)
        & trail_main.str.contains(rf"(?i)^\W*(?:{_WH}|{_AUX}|{_IMPERATIVE}|what|wer|qui)\b")
        & ~trail.struct.field("3").str.contains(aux_start)
    )
    cond_word = lambda c: pl.when(c.str.to_lowercase() == "unless").then(pl.lit("unless ")).otherwise(pl.lit(""))  # noqa: E731
    cut = (
        pl.col("_m")
        .str.replace_all(rf"(?i)\?\s*(?:and\s+)?(?:then\s+)?({CLAUSE_START})", f"?{_CUT}$1")
        .str.replace_all(rf"(?i)\s*(?:;\s*(?:and\s+)?(?:then\s+)?|,?\s+and\s+then\s+|,?\s+then\s+|,?\s+and\s+|,?\s+but\s+|,?\s+as well as\s+)({CLAUSE_START})", f"{_CUT}$1")
        .str.replace_all(rf"(?i)\s*;\s*", _CUT)
        .str.split(_CUT).list.eval(pl.element().str.strip_chars()).list.eval(pl.element().filter(pl.element() != ""))
    )
    f = flagged.with_columns(
        lead_ok.alias("_lead"), trail_ok.alias("_trail"),
        pl.when(lead_ok).then(cond_word(lead.struct.field("1")) + lead.struct.field("2"))
        .when(trail_ok).then(cond_word(trail.struct.field("2")) + trail.struct.field("3")).alias("_cond"),
        pl.when(lead_ok).then(lead.struct.field("3")).when(trail_ok).then(trail_main).alias("_main"),
        cut.alias("_parts"),
    )
    back = pl.col("_parts").list.slice(1).list.eval(pl.element().str.contains(BACK_REFERENCE)).list.any()
    f = f.with_columns(
        pl.when(pl.col("_lead") | pl.col("_trail")).then(pl.lit("conditional"))
        .when(pl.col("_parts").list.len() >= 2).then(
            pl.when(back | pl.col("_m").str.contains(THEN)).then(pl.lit("sequential")).otherwise(pl.lit("independent")))
        .alias("_pattern")
    )

    # unified: the first rule whose conjuncts are short noun phrases
    rest = f.filter(pl.col("_pattern").is_null())
    uni_parts = []
    for k, (_name, rule) in enumerate(UNIFIED_RULES):
        g = pl.col("_m").str.extract_groups(rule)
        u = rest.select(
            "_row", pl.lit(k).alias("_rule"),
            g.struct.field("1").str.replace(r"(?i)\bboth\s+$", "").alias("_pre"),
            pl.concat_list(g.struct.field("2").str.split(","), g.struct.field("3")).alias("_items"),
            g.struct.field("4").alias("_end"),
        ).filter(pl.col("_pre").is_not_null())
        uni_parts.append(u)
    uni = pl.concat(uni_parts).with_columns(pl.col("_items").list.eval(pl.element().str.strip_chars()))
    words = pl.col("_items").list.eval(pl.element().str.count_matches(r"\S+"))
    uni = uni.filter(
        (words.list.max() <= MAX_CONJUNCT_WORDS) & (words.list.min() >= 1)
        & ~pl.col("_items").list.eval(pl.element().str.contains(rf"(?i)^(?:{_WH}|{_AUX}|{_IMPERATIVE})\b")).list.any()
    ).sort("_row", "_rule").unique("_row", keep="first", maintain_order=True)
    # "travel and procurement policies" -> "travel policies", "procurement policies"
    tail = pl.col("_items").list.last().str.extract(r"^\S+\s+([a-z][\w\s'-]*)$", 1)
    uni = uni.with_columns(tail.alias("_tail"))
    items = _long(uni.select("_row", "_items"), "_items").with_row_index("_i").join(uni.select("_row", "_pre", "_end", "_tail"), on="_row")
    single_word = ~pl.col("_items").str.contains(r"\s") & ~pl.col("_items").str.contains(r"(?i)s$")
    last_of_row = pl.col("_i") == pl.col("_i").max().over("_row")
    items = items.with_columns(
        pl.when(single_word & pl.col("_tail").is_not_null() & ~last_of_row).then(pl.col("_items") + pl.lit(" ") + pl.col("_tail")).otherwise(pl.col("_items")).alias("_c")
    ).with_columns(_tidy(pl.col("_pre") + pl.col("_c") + pl.col("_end")).alias("_sub"))
    uni_subs = items.sort("_row", "_i").group_by("_row", maintain_order=True).agg(pl.col("_sub").drop_nulls().alias("_usubs")).filter(pl.col("_usubs").list.len() >= 2)

    f = f.join(uni_subs, on="_row", how="left").with_columns(
        pl.when(pl.col("_pattern").is_null() & pl.col("_usubs").is_not_null()).then(pl.lit("unified")).otherwise(pl.col("_pattern")).alias("_pattern")
    )
    f = f.with_columns(
        pl.when(pl.col("_pattern") == "conditional").then(pl.concat_list(_tidy(pl.col("_main"))))
        .when(pl.col("_pattern").is_in(["sequential", "independent"])).then(pl.col("_parts").list.eval(_tidy(pl.element())).list.drop_nulls())
        .when(pl.col("_pattern") == "unified").then(pl.col("_usubs")).alias("_subs"),
        pl.when(pl.col("_pattern") == "conditional").then(pl.col("_cond").str.replace_all(_AND, "and").str.strip_chars(" ,")).alias("condition"),
    )
    out = base.join(f.select("_row", "_pattern", "_subs", "condition"), on="_row", how="left")
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
    gate = {
        "always": pl.lit(True),
        "no_date": pl.col("scope_date_from").is_null() & pl.col("scope_date_to").is_null(),
        "no_topic": ~pl.col("_has_topic") & ~pl.col("_t").str.contains(QUALIFIED),
        "no_topic_not_sequential": ~pl.col("_has_topic") & (pl.col("decomposition_pattern") != "sequential"),
    }
    for _kind, pattern, when, reason, clarification in DANGLING:
        m = pl.col("_t").str.extract(f"({pattern})", 1)
        hit = m.is_not_null() & gate[when]
        reasons.append(pl.when(hit).then(_template(reason, m)))
        clarify.append(pl.when(hit).then(_template(clarification, m)))
    # a pinned page, slide, sheet or section names where to look: it stands in for a missing topic word
    pinned = (pl.col("pages_hint").list.len().fill_null(0) + pl.col("slides_hint").list.len().fill_null(0)
              + pl.col("sheets_hint").list.len().fill_null(0) + pl.col("toc_section_hint").is_not_null().cast(pl.UInt32)) > 0
    short = (pl.col("_content").list.len() < MIN_CONTENT_WORDS) & ~((pl.col("_content").list.len() >= 1) & pinned)
    reasons.append(pl.when(short).then(pl.lit(f"too short: fewer than {MIN_CONTENT_WORDS} content words")))
    clarify.append(pl.when(short).then(pl.lit("Please say what you are asking about: the document or topic, and the amount, region or period if any.")))
    return pl.coalesce(reasons), pl.coalesce(clarify)


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
        _padded(_stems(pl.col("_t"))).alias("_skey"),
        terms_expr("_t").list.unique().alias("_qterms"),
        _padded(_tokens(pl.col("_t").str.to_lowercase())).alias("_vkey"),
        _padded(_tokens(pl.col("_t"))).alias("_vkey_cs"),
    )
    kw, amb, topic = _keywords(q, d)
    values = _value_hits(q, d)
    dec = _decompose(q)

    f = (
        q.join(kw, on="_row", how="left").join(amb, on="_row", how="left").join(topic, on="_row", how="left")
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
    main = pl.when(pl.col("decomposition_pattern") == "conditional").then(pl.col("sub_questions").list.first()).otherwise(pl.col("_t")).fill_null("")
    has_topic = (
        pl.col("_topic_concept").fill_null(False)
        | pl.col("keywords").list.eval(
            (pl.element().struct.field("source") == "direct")
            | ((pl.element().struct.field("source") == "anchor") & pl.element().struct.field("text").str.contains(CODE_ANCHOR))
        ).list.any().fill_null(False)
        | pl.col("_t").str.contains(NAMED_DOCUMENT)
    )
    f = f.with_columns(
        main.alias("_main"), has_topic.alias("_has_topic"),
        _intents().alias("intents"),
        _first_rule(SHAPE_RULES).fill_null("single").alias("answer_shape"),
        _first_rule(LAYOUT_RULES).alias("layout_hint"),
        _first_rule(TOC_PATTERNS, group=1).alias("toc_section_hint"),
    )
    reason, clarification = _vagueness()
    f = f.with_columns(
        _answer_type(d, "_main").alias("answer_type"),
        reason.alias("ambiguity_reason"), clarification.alias("suggested_clarification"),
        pl.col("condition").alias("scope_condition"),
    )
    empty_lists = {c: pl.col(c).fill_null(pl.lit([], dtype=t)) for c, t in QUESTIONS.items() if isinstance(t, pl.List)}
    f = f.with_columns(**empty_lists)
    return f.select([pl.col(c).cast(t) for c, t in QUESTIONS.items()])


__all__ = [
    "QUESTIONS", "KEYWORD", "Dictionary", "DictionaryError", "load_dictionary", "answer_types", "answer_pattern",
    "parse_questions", "dictionary_fingerprint", "INTENT_CUES", "SHAPE_RULES", "LAYOUT_RULES", "TOC_PATTERNS", "ANCHOR_PATTERNS", "DANGLING",
    "UNIFIED_RULES", "FIXED_PHRASES",
]

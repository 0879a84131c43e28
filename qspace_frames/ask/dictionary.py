"""The expert dictionary (params/dictionary/): concepts and their keywords, answer types and their
retrieval patterns, and value sets (countries, currencies...), read and validated strictly.

A broken table fails with `DictionaryError` naming the file, the row and the rule broken;
`dictionary_fingerprint` is what the answers depend on (an input of the evaluation stage).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..evaluation.bm25 import stem_expr, terms_expr

REQUIRED_ANSWER_TYPES = ("text", "amount", "date", "percentage", "duration", "email", "iban", "role", "count", "url", "phone")
DEFAULT_FOLDER = "params/dictionary"
_PROJECT_ROOT = Path(__file__).resolve().parents[2]  # qspace_frames/ask/ -> the project

# ---- the expert dictionary ---------------------------------------------------------------------

_KINDS = ("name", "native", "abbreviation", "iso", "iso2", "iso3", "code", "symbol")
_CASE_SENSITIVE_KINDS = ("iso", "iso2", "iso3", "code")
_FILES = {
    "concepts": ("concepts.csv", ("concept", "definition", "document_family")),
    "keywords": ("concept_keywords.csv", ("concept", "language", "keyword", "priority", "weight")),
    "answer_types": ("answer_types.csv", ("answer_type", "priority", "description", "question_cues", "retrieval_patterns", "shown_by")),
    "value_sets": ("value_sets.csv", ("set", "value", "canonical", "kind")),
}
# columns a file may leave out (a dictionary written before they were added), and their value then
OPTIONAL = {"shown_by": ""}
PATTERN_SEPARATOR = " || "  # separates the retrieval patterns of one answer type
REGEX_PREFIX = "re:"  # a concept keyword written as a regex


class DictionaryError(ValueError):
    """A dictionary file breaks a rule; the message names the file, the row and the rule."""


@dataclass(frozen=True)
class Dictionary:
    """The expert satellite tables, validated, with the derived matching keys."""

    concepts: pl.DataFrame  # concept, definition, document_family, def_terms
    keywords: pl.DataFrame  # concept, language, keyword, priority, weight, is_regex, pattern, key, key_terms
    answer_types: pl.DataFrame  # answer_type, priority, description, question_cues, retrieval_patterns, shown_by, patterns, shown
    value_sets: pl.DataFrame  # set, value, canonical, kind, case_sensitive, key, cs_key
    folder: str = ""


def tokens_expr(e: pl.Expr) -> pl.Expr:
    return e.str.extract_all(r"[\p{L}\p{N}]+")


def padded_expr(tokens: pl.Expr) -> pl.Expr:
    """Tokens as one string, each wrapped in its own spaces (" a  b "), so adjacent matches never
    share a character and a key matches whole tokens only."""
    return tokens.list.eval(pl.lit(" ") + pl.element() + pl.lit(" ")).list.join("")


def stems_expr(e: pl.Expr) -> pl.Expr:
    return tokens_expr(e.str.to_lowercase()).list.eval(stem_expr(pl.element()))


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
    df = df.with_columns(pl.lit(v).alias(c) for c, v in OPTIONAL.items() if c in cols and c not in df.columns)
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
                    return (
                        f"row {i + 1} has {len(row)} fields, the header {len(header)} "
                        f"(quote a field that contains a comma); got {','.join(row)!r}"
                    )
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
    return _load(folder.resolve(), dictionary_fingerprint(folder))


# Validating the tables compiles every pattern (~0.15 s), and a notebook or a question set parses
# several times: the same bytes give the same dictionary.
@functools.lru_cache(maxsize=4)
def _load(folder: Path, _fingerprint: str) -> Dictionary:
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
            pat = v[len(REGEX_PREFIX) :]
            return "empty regex" if not pat else _regex_error(pat)
        return None if re.search(r"\w", v) else "must contain a letter or digit"

    _check_rows(p, kw, {"concept": [_concept], "language": [_language], "keyword": [_keyword], "priority": [_int_ge1], "weight": [_weight]})
    _unique(p, kw, ["concept", "language", "keyword"], "duplicate keyword for this concept and language")
    is_rx = pl.col("keyword").str.starts_with(REGEX_PREFIX)
    kw = (
        kw.with_columns(
            pl.col("priority").cast(pl.Int64),
            pl.col("weight").cast(pl.Float64),
            is_rx.alias("is_regex"),
            pl.when(is_rx).then(pl.col("keyword").str.slice(len(REGEX_PREFIX))).otherwise(pl.col("keyword")).alias("pattern"),
        )
        .with_columns(
            pl.when(~pl.col("is_regex")).then(stems_expr(pl.col("keyword"))).alias("key_terms"),
        )
        .with_columns(pl.when(~pl.col("is_regex")).then(padded_expr(pl.col("key_terms"))).alias("key"))
    )

    # answer types
    p, at = _read(folder, "answer_types")

    def _cues(v, row):
        if not v:
            return None if row["answer_type"] == "text" else "must not be empty (only 'text' may have no cues)"
        return _regex_error(v)

    def _patterns(v, _row):
        if not v:
            return "must hold at least one regex"
        return _regexes(v, _row)

    def _regexes(v, _row):  # each pattern compiles; none at all is allowed
        for piece in v.split(PATTERN_SEPARATOR) if v else []:
            if not piece.strip():
                return f"empty pattern between '{PATTERN_SEPARATOR.strip()}' separators"
            err = _regex_error(piece.strip(), python_too=True)
            if err:
                return f"{err} (pattern {piece.strip()!r})"
        return None

    _check_rows(
        p,
        at,
        {
            "answer_type": [_name],
            "priority": [_int_ge1],
            "description": [_nonempty],
            "question_cues": [_cues],
            "retrieval_patterns": [_patterns],
            "shown_by": [_regexes],
        },
    )
    _unique(p, at, ["answer_type"], "duplicate answer_type")
    _unique(p, at, ["priority"], "duplicate priority (the tie-break between answer types must be total)")
    missing = [t for t in REQUIRED_ANSWER_TYPES if t not in set(at["answer_type"].to_list())]
    if missing:
        raise DictionaryError(f"{p}: missing required answer type(s) {missing}")
    at = at.with_columns(
        pl.col("priority").cast(pl.Int64),
        pl.col("retrieval_patterns").str.split(PATTERN_SEPARATOR).list.eval(pl.element().str.strip_chars()).alias("patterns"),
        pl.col("shown_by")
        .fill_null("")
        .str.split(PATTERN_SEPARATOR)
        .list.eval(pl.element().str.strip_chars().filter(pl.element() != ""))
        .alias("shown"),
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
        pl.when(pl.col("kind") == "symbol")
        .then(pl.col("value"))
        .otherwise(padded_expr(tokens_expr(pl.col("value").str.to_lowercase())))
        .alias("key"),
        pl.when(pl.col("case_sensitive")).then(padded_expr(tokens_expr(pl.col("value")))).alias("cs_key"),
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
    retrieval_patterns (the raw ` || `-separated text), patterns (the list of regexes; any one
    of them matching a text line confirms an answer of that type), shown_by (the raw text) and
    shown (its list of regexes: what shows a sentence answers that type without being its value,
    "the help desk" for a contact, "until your account is closed" for a duration)."""
    d = dictionary if dictionary is not None else load_dictionary()
    cols = ("answer_type", "priority", "description", "question_cues", "retrieval_patterns", "patterns", "shown_by", "shown")
    return d.answer_types.select(cols)


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
    return f"(?{m.group(1)}:{pattern[m.end() :]})" if m else f"(?:{pattern})"

"""Values a sentence states, and what they are worth: an amount and its currency, a date, a
duration, a percentage.

The patterns find a value's words (the detectors' slots are built from them); the expressions read
words found so (a detector's role value, or the `first` match in a quote) as a number in one unit,
so that the values of two sentences compare: an amount times its scale, a date, a duration in
hours, a percentage.
"""

from __future__ import annotations

import polars as pl

# numbers written as words, in durations ("thirty (30) days", "two weeks") and comparisons
WORD_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "fourteen": 14, "fifteen": 15, "twenty": 20, "twenty-four": 24, "thirty": 30,
    "forty": 40, "forty-five": 45, "forty-eight": 48, "fifty": 50, "sixty": 60, "seventy-two": 72, "ninety": 90,
    "hundred": 100,
}  # fmt: skip
NUMBER_WORDS = "|".join(sorted(WORD_NUMBERS, key=len, reverse=True))  # the longest first: "forty-five", not "forty"

_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|"
    r"Nov(?:ember)?|Dec(?:ember)?)"
)
DATE = (
    rf"(?:{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?{_MONTHS},?\s+\d{{4}}"
    rf"|\d{{1,2}}-{_MONTHS}-\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}/\d{{4}}|{_MONTHS}\s+\d{{4}})"
)
DATE_FORMATS = ("%B %d %Y", "%b %d %Y", "%d %B %Y", "%d %b %Y", "%Y-%m-%d", "%m/%d/%Y", "%d-%b-%Y")
NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s?(?:million|billion|thousand|mn|bn|[MBK])\b)?"
MONEY = (
    rf"(?:[$€£]\s?(?:{NUM}){_SCALE}"
    rf"|\b(?:USD|EUR|GBP|CAD|AUD|CHF|JPY)\s?(?:{NUM}){_SCALE}"
    rf"|\b(?:{NUM}){_SCALE}\s?(?:USD|EUR|GBP|dollars|euros|pounds)\b)"
)
PERCENT = rf"(?:\b(?:{NUM})\s?(?:%|percent\b|per cent\b))"
DURATION = (
    rf"(?:(?:\d+(?:\.\d+)?|(?i:{NUMBER_WORDS})(?:\s+\(\d+\))?)\s+(?:(?:business|working|calendar)\s+)?"
    r"(?i:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?))\b"
)
# a duration's unit in hours, by the start of its word (the first that matches counts)
UNIT_HOURS = (("min", 1 / 60), ("hour", 1.0), ("hr", 1.0), ("day", 24.0), ("week", 168.0), ("month", 720.0), ("year", 8760.0))


def first(text: pl.Expr, pattern: str) -> pl.Expr:
    """The words of the first value `pattern` finds in `text` (null when there is none)."""
    return text.str.extract(f"({pattern})", 1)


def amount(words: pl.Expr) -> pl.Expr:
    """The number an amount's words state, times its scale ("EUR 1.5 million" -> 1,500,000)."""
    num = words.str.extract(rf"({NUM})", 1).str.replace_all(",", "").cast(pl.Float64, strict=False)
    scale = (
        pl.when(words.str.contains(r"(?i)billion|bn\b|\dB\b"))
        .then(1e9)
        .when(words.str.contains(r"(?i)million|mn\b|\dM\b"))
        .then(1e6)
        .when(words.str.contains(r"(?i)thousand|\dK\b"))
        .then(1e3)
        .otherwise(1.0)
    )
    return num * scale


def currency(words: pl.Expr) -> pl.Expr:
    """The currency of an amount's words, as its ISO code."""
    return (
        pl.when(words.str.contains(r"\$|USD|dollars"))
        .then(pl.lit("USD"))
        .when(words.str.contains(r"€|EUR|euros"))
        .then(pl.lit("EUR"))
        .when(words.str.contains(r"£|GBP|pounds"))
        .then(pl.lit("GBP"))
        .otherwise(words.str.extract(r"\b(CAD|AUD|CHF|JPY)\b", 1))
    )


def date(words: pl.Expr) -> pl.Expr:
    """The date a date's words state ("September 30th, 2023", "1 January 2024", "2024-01-01")."""
    plain = (
        words.str.replace_all(r"(\d)(?:st|nd|rd|th)", "$1")
        .str.replace_all(r"\bday of\s+", "")
        .str.replace_all(",", "")
        .str.replace_all(r"\.", "")
        .str.replace_all(r"\s+", " ")
    )
    return pl.coalesce([plain.str.to_date(f, strict=False) for f in DATE_FORMATS])


def duration_hours(words: pl.Expr) -> pl.Expr:
    """The hours a duration's words state, the numeral in brackets first ("thirty (30) days" -> 720)."""
    n = pl.coalesce(
        words.str.extract(r"\((\d+)\)", 1).cast(pl.Float64, strict=False),
        words.str.extract(r"^(\d+(?:\.\d+)?)", 1).cast(pl.Float64, strict=False),
        words.str.to_lowercase().str.extract(r"^([a-z\-]+)", 1).replace_strict(WORD_NUMBERS, default=None, return_dtype=pl.Float64),
    )
    unit = pl.lit(None, dtype=pl.Float64)
    for key, hours in reversed(UNIT_HOURS):
        unit = pl.when(words.str.to_lowercase().str.contains(rf"\b{key}")).then(hours).otherwise(unit)
    return n * unit


def business(words: pl.Expr) -> pl.Expr:
    """Whether a duration counts business (working) days, not calendar ones."""
    return words.str.contains(r"(?i)business|working")


def percent(words: pl.Expr) -> pl.Expr:
    """The percentage a percentage's words state ("5%" -> 5.0)."""
    return words.str.extract(rf"({NUM})\s?(?:%|percent|per cent)", 1).str.replace_all(",", "").cast(pl.Float64, strict=False)

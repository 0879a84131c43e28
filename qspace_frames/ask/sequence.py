"""Answers read from document order: the step that comes after a named one, and the Nth or last
item of a list or procedure.

A question's parsed `sequence_after` (the step it names) or `sequence_position` (1.., -1 for the
last) sends it here. Its anchor is found as any question's answer is ranked (`rank_candidates`,
most of its keyword groups held); the answer is then read from the anchor's document in order,
item by item. Lists reach `ask` in many shapes (an HTML item per fragment, "2." on a line of its
own before its text, JSON records whose keys are units of their own), so an item is told by what
any of them shows: a new fragment, a list marker or a "Step N" label, and at least MIN_WORDS
words (a bare marker or a record's keys is no item).
"""

from __future__ import annotations

import re

import polars as pl

from ..structure.headings import FENCE

MIN_WORDS = 4  # letter-words a unit needs to be an item ("2." or "[8].id = VON-009" are not)
MARKER = r"(?i)^\s*(?:\(?\d{1,3}[.)]|\(?[a-z][.)]\s|\((?:[ivxl]+|[a-z]|\d+)\)|[-•*▪◦‣]\s|step\s+\d+\b)"
STEP_LABEL = r"(?i)\bstep\s+(\d{1,3})\b"


def items(units: pl.DataFrame) -> pl.DataFrame:
    """The units in document order with `_item`: the number of the item each belongs to in its
    document (from 1; 0 before the first), `_starts`: whether it opens that item, and `_step`: the
    N of its "Step N" label."""
    words = pl.col("text").str.count_matches(r"\p{L}{2,}")
    u = units.sort("doc_id", "char_start").with_columns(
        (words >= MIN_WORDS).alias("_substantive"),
        pl.col("text").str.contains(MARKER).alias("_marker"),
        pl.col("text").str.extract(STEP_LABEL, 1).cast(pl.Int64).alias("_step"),
    )
    u = u.with_columns(
        # the fragment of the previous substantive unit of the same document
        pl.when(pl.col("_substantive")).then(pl.col("fragment_id")).forward_fill().shift(1).over("doc_id").alias("_prev_fragment"),
        (~pl.col("_substantive") & pl.col("_marker")).shift(1).over("doc_id").fill_null(False).alias("_after_marker"),
    )
    # a fenced code block shows the command of the item it is indented under ("2. Execute `git node
    # backport`:" / "```bash ...```"): it opens none
    starts = (
        pl.col("_substantive")
        & ~pl.col("text").str.contains(FENCE)
        & (
            (pl.col("fragment_id") != pl.col("_prev_fragment")).fill_null(True)
            | pl.col("_marker")
            | pl.col("_after_marker")
            | pl.col("_step").is_not_null()
        )
    )
    return u.with_columns(
        starts.alias("_starts"),
        # whether the unit after it opens an item that shows it is one (a list follows)
        LISTED.shift(-1).over("doc_id").fill_null(False).alias("_before_list"),
    ).with_columns(pl.col("_starts").cast(pl.Int64).cum_sum().over("doc_id").alias("_item"))


LISTED = (pl.col("kind") == "list_item") | pl.col("_marker") | pl.col("_step").is_not_null()  # an item that shows it is one
# a list's lead-in: "... all of the following:", or the sentence right before its first item ("Note:
# we suggest drafting all 4 pieces of paperwork ..." before "1. Advanced Sick Leave Request form")
LEAD_IN = pl.col("text").str.strip_chars().str.ends_with(":") | (pl.col("_before_list") & ~LISTED)


def read_in_order(anchors: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """(query_id, unit columns of the answer) for each anchor (query_id, doc_id, char_start,
    sequence_position, sequence_after).

    For a question naming a step: the item after the anchor's. For a position (1.., -1 the last):
    only when the anchor leads a list in or is an item of one (prose is answered as prose), the
    Nth item of that list: of the run of items showing they are items (a list marker, a list
    item, a "Step N" label), else of the anchor's section (its heading path). When the anchor is
    labelled "Step M", the unit labelled "Step M+1" or "Step N" comes first; an anchor outside any
    list in a document labelling its steps takes the unit labelled "Step N" (or the last label)."""
    it = items(units.join(anchors.select("doc_id").unique(), on="doc_id", how="semi"))
    # runs of consecutive items that show they are items, numbered per document
    firsts = (
        it.filter(pl.col("_starts"))
        .with_columns(LISTED.alias("_listed"))
        .with_columns((~pl.col("_listed")).cast(pl.Int64).cum_sum().over("doc_id").alias("_run"))
    )
    a = anchors.join(
        it.select("doc_id", "char_start", "_item", "heading_path", "text", "kind", "_marker", "_step", "_before_list"),
        on=["doc_id", "char_start"],
    )
    # an anchor outside any list (a procedure's title) in a document numbering its steps ("Step 9: ..."):
    # the Nth or last step is the unit labelled so
    numbered = (
        a.filter(pl.col("sequence_position").is_not_null() & ~(LEAD_IN | LISTED))
        .select("query_id", "doc_id", "sequence_position")
        .join(firsts.filter(pl.col("_step").is_not_null()), on="doc_id")
        .filter(
            (pl.col("_step") == pl.col("sequence_position"))
            | ((pl.col("sequence_position") == -1) & (pl.col("_step") == pl.col("_step").max().over("query_id")))
        )
    )
    a = a.filter(pl.col("sequence_after").is_not_null() | LEAD_IN | LISTED).with_columns(
        # the list a lead-in opens is the run of the item after it
        (pl.col("_item") + LEAD_IN.cast(pl.Int64)).alias("_list_item"),
    )
    a = (
        a.join(firsts.select("doc_id", pl.col("_item").alias("_list_item"), "_run", "_listed"), on=["doc_id", "_list_item"], how="left")
        .join(_span(firsts.filter(pl.col("_listed")), ["doc_id", "_run"], "_run"), on=["doc_id", "_run"], how="left")
        .join(_span(firsts, ["doc_id", "heading_path"], "_section"), on=["doc_id", "heading_path"], how="left")
        .with_columns(
            pl.when(pl.col("_listed")).then(pl.col("_run_first")).otherwise(pl.col("_section_first")).alias("_first"),
            pl.when(pl.col("_listed")).then(pl.col("_run_last")).otherwise(pl.col("_section_last")).alias("_last"),
        )
    )
    want = (
        pl.when(pl.col("sequence_after").is_not_null())
        .then(pl.col("_item") + 1)
        .when(pl.col("sequence_position") == -1)
        .then(pl.col("_last"))
        .when(LEAD_IN)
        .then(pl.col("_item") + pl.col("sequence_position"))
        .otherwise(pl.col("_first") + pl.col("sequence_position") - 1)
    )
    by_item = a.select("query_id", "doc_id", want.alias("_item")).join(firsts, on=["doc_id", "_item"])
    labelled = (
        a.filter(pl.col("_step").is_not_null())
        .select(
            "query_id",
            "doc_id",
            pl.when(pl.col("sequence_after").is_not_null()).then(pl.col("_step") + 1).otherwise(pl.col("sequence_position")).alias("_step"),
        )
        .join(firsts, on=["doc_id", "_step"])
    )
    cols = ["query_id", *units.columns]
    found = pl.concat(
        [
            labelled.select(cols).with_columns(pl.lit(0).alias("_by")),
            by_item.select(cols).with_columns(pl.lit(1).alias("_by")),
            numbered.select(cols).with_columns(pl.lit(2).alias("_by")),
        ]
    )
    return found.sort("query_id", "_by", "char_start").group_by("query_id", maintain_order=True).first().drop("_by")


# An enumeration inside one sentence ("... are to: a. propose ...; b. define ...; c. check ...",
# "(i) Service Fees, (ii) commissions ..."): its markers, one style per regex, with the value each
# marker stands for. A run of one style counting up from 1 is the list (a lone "(b)" or "e.g." is not).
_ROMAN = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii", "xiv", "xv")
INLINE_MARKERS = (
    (r"\((" + "|".join(sorted(_ROMAN, key=len, reverse=True)) + r")\)", lambda m: _ROMAN.index(m) + 1),
    (r"\(([a-z])\)", lambda m: ord(m) - ord("a") + 1),
    (r"\((\d{1,2})\)", int),
    (r"(?:^|(?<=[\s;:,]))([a-z])[.)]\s", lambda m: ord(m) - ord("a") + 1),
    (r"(?:^|(?<=[\s;:,]))(\d{1,2})[.)]\s", int),
)
# what ends an item before the next marker: its separator and a dangling "and"/"or"
ITEM_TAIL = re.compile(r"(?:[\s;,]+(?:and|or|and/or)?)+$|\s{2,}\S{1,4}$")


def inline_items(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets in `text` of the items of its longest inline enumeration counting
    up from 1 (two items at least), each item without its marker and trailing separator; [] when
    it holds none."""
    best: list[tuple[int, int]] = []  # (marker start, text start) of each item
    for pattern, value in INLINE_MARKERS:
        chain: list[tuple[int, int]] = []
        for m in re.finditer(pattern, text):
            v = value(m.group(1))
            if v == len(chain) + 1:
                chain.append((m.start(), m.end()))
        if len(chain) >= 2 and len(chain) > len(best):
            best = chain
    spans = []
    for k, (_, start) in enumerate(best):
        end = best[k + 1][0] if k + 1 < len(best) else len(text)
        item = ITEM_TAIL.sub("", text[start:end].rstrip())
        item = item.rstrip(" .;,")
        start += len(item) - len(item.lstrip())
        spans.append((start, start + len(item.strip())))
    return spans


def read_inline(anchors: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """(query_id, unit columns, _qs, _quote) for each anchor (query_id, doc_id, char_start,
    sequence_position) whose own sentence enumerates its items inline, as many as the position
    asks: the item at that position (-1: the last), quoted without its marker, offsets exact."""
    a = anchors.filter(pl.col("sequence_position").is_not_null()).join(units, on=["doc_id", "char_start"])
    picked = []  # (row, item start, item end)
    for i, (text, n) in enumerate(a.select("text", "sequence_position").iter_rows()):
        spans = inline_items(text)
        if spans and (n == -1 or 1 <= n <= len(spans)):
            picked.append((i, *spans[n - 1 if n > 0 else -1]))
    at = pl.DataFrame(picked, schema={"_i": pl.Int64, "_s": pl.Int64, "_e": pl.Int64}, orient="row")
    return (
        a.with_row_index("_i")
        .with_columns(pl.col("_i").cast(pl.Int64))
        .join(at, on="_i")
        .select(
            "query_id",
            *units.columns,
            (pl.col("char_start") + pl.col("_s")).alias("_qs"),
            pl.col("text").str.slice(pl.col("_s"), pl.col("_e") - pl.col("_s")).alias("_quote"),
        )
    )


FOLLOW = 6  # units after a prose anchor searched for the list it introduces


def introduced(anchors: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """`anchors` (query_id, doc_id, char_start, sequence_position, ...) with each anchor of a
    position question that is prose (no list's lead-in, no item of one, no inline enumeration)
    moved to the first unit after it in its section, within FOLLOW units, that is one: a
    procedure is often named in prose a few sentences before its list ("Some testbeds support
    rebooting; ..." ... "The particular steps for a rebooting test are:" and its items; "You
    have the right to request restrictions ..." ... "Your request should include (1) ...; (2) ...")."""
    asked = anchors.filter(pl.col("sequence_position").is_not_null())
    if asked.is_empty():
        return anchors
    it = items(units.join(asked.select("doc_id").unique(), on="doc_id", how="semi")).with_columns(
        (LEAD_IN | LISTED | pl.col("text").map_elements(lambda t: bool(inline_items(t)), return_dtype=pl.Boolean)).alias("_lists"),
        pl.int_range(pl.len()).over("doc_id").alias("_pos"),
    )
    at = asked.select("query_id", "doc_id", "char_start").join(
        it.select("doc_id", "char_start", "heading_path", "_lists", pl.col("_pos").alias("_at")), on=["doc_id", "char_start"]
    )
    lists = it.filter(pl.col("_lists")).select("doc_id", "heading_path", "_pos", pl.col("char_start").alias("_to"))
    moved = (
        at.filter(~pl.col("_lists"))
        .select("query_id", "doc_id", "heading_path", "_at")
        .join(lists, on=["doc_id", "heading_path"])
        .filter((pl.col("_pos") > pl.col("_at")) & (pl.col("_pos") <= pl.col("_at") + FOLLOW))
        .sort("query_id", "_pos")
        .group_by("query_id", maintain_order=True)
        .first()
        .select("query_id", "_to")
    )
    return (
        anchors.join(moved, on="query_id", how="left", maintain_order="left")
        .with_columns(pl.coalesce("_to", "char_start").alias("char_start"))
        .drop("_to")
    )


def _span(firsts: pl.DataFrame, keys: list[str], name: str) -> pl.DataFrame:
    """The first and last item (`{name}_first`, `{name}_last`) of each group of item starts."""
    return firsts.group_by(keys).agg(pl.col("_item").min().alias(f"{name}_first"), pl.col("_item").max().alias(f"{name}_last"))


__all__ = ["inline_items", "introduced", "items", "read_inline", "read_in_order"]

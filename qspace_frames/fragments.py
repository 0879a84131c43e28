"""Stage 3: hierarchical fragmentation.

Pages become lines, lines are classified (headings and page furniture by `structure.headings`),
consecutive lines group into
blocks, and a heading stack per level gives every block its heading path and parent section
(the Docling-style hierarchical chunker, done with forward fills instead of a Python loop).
Blocks over `max_chars` become sentence windows that never cut a sentence. Every fragment keeps
code-point offsets into the canonical document text: doc_text[char_start:char_end] == text.
"""

from __future__ import annotations

import polars as pl

from .ids import id_expr, text_sha_expr
from .params import FragmentParams, StructureParams
from .schemas import FRAGMENTS, conform
from .structure import headings as headings_mod
from .tokens import n_tokens_expr

MAX_LEVEL = headings_mod.MAX_LEVEL
DOC = "doc_id"


def classify(lines: pl.LazyFrame, pages: pl.LazyFrame, sp: StructureParams) -> pl.LazyFrame:
    """Lines with their heading level (`structure.headings`) and their kind."""
    kind = (
        pl.when(pl.col("level").is_not_null() | pl.col("is_cont"))
        .then(pl.lit("section"))
        .when(pl.col("is_table"))
        .then(pl.lit("table_row"))
        .when(pl.col("is_list"))
        .then(pl.lit("list_item"))
        .otherwise(pl.lit("paragraph"))
    )
    return headings_mod.classify(lines, pages, sp).with_columns(kind.alias("kind"))


def lines_of(pages: pl.LazyFrame) -> pl.LazyFrame:
    """One row per line with its code-point offset into the document text.

    Pages are put in document order first: headings carry forward over the rows that follow
    them, so pages arriving out of order (a shard, a concat) must not change a heading path."""
    n = pl.col("line").str.len_chars() + 1  # +1 for the '\n' that split removed
    # a byte order mark (txt and md keep it, their offsets being the decoded file's) is not text:
    # the line starts after it, so "\ufeff# Title" is a heading
    bom = pl.col("line").str.starts_with("\ufeff")
    return (
        pages.sort([DOC, "char_start"])
        .select(DOC, "page", pl.col("char_start").alias("page_start"), pl.col("text").str.split("\n").alias("line"))
        .explode("line")
        .with_columns((pl.col("page_start") + n.cum_sum().over([DOC, "page_start"]) - n).alias("line_start"))
        .with_columns(pl.col("line_start") + bom.cast(pl.Int64), pl.col("line").str.strip_prefix("\ufeff"))
    )


def blocks_of(lines: pl.LazyFrame) -> pl.LazyFrame:
    """Group consecutive lines into blocks: a heading, list item or table row starts a new block;
    a blank line ends one; plain lines after a list item continue it (wrapped markdown lists)."""
    prev = lambda c: pl.col(c).shift(1).over([DOC, "page_start"])  # noqa: E731
    starts = (
        prev("is_blank").fill_null(True) | (pl.col("kind") != "paragraph") | prev("kind").is_in(["section", "table_row"]).fill_null(True)
    ) & ~pl.col("is_cont")  # a heading that wraps is one block (`structure.headings` keeps its lines adjacent)
    lead = pl.col("line").str.len_chars() - pl.col("line").str.strip_chars_start().str.len_chars()
    return (
        lines.with_columns(starts.alias("starts"))
        .filter(~pl.col("is_blank"))
        .with_columns(pl.col("starts").cum_sum().over(DOC).alias("block"))
        .group_by([DOC, "block"], maintain_order=True)
        .agg(
            pl.col("page").first(),
            pl.col("kind").first(),
            pl.col("level").first(),
            pl.col("source").first(),
            pl.col("resume_level").first(),
            (pl.col("line_start").first() + lead.first()).alias("char_start"),
            pl.col("line").str.join("\n").str.strip_chars().alias("text"),
        )
        .with_columns((pl.col("char_start") + pl.col("text").str.len_chars()).alias("char_end"))
    )


def _with_ids(df: pl.LazyFrame) -> pl.LazyFrame:
    return (
        df.with_columns(text_sha_expr("text").alias("_sha"))
        .with_columns(id_expr("frag", DOC, "char_start", "char_end", "_sha").alias("fragment_id"))
        .drop("_sha")
    )


def headings(blocks: pl.LazyFrame) -> pl.LazyFrame:
    """Heading path and parent section for every block, from a heading stack per level.

    For each level, the stack slot holds the latest section of that level and is cleared by any
    section of a higher rank (smaller level); a forward fill carries it down the document.
    """
    is_sec = pl.col("kind") == "section"
    title = pl.col("text").str.replace(r"^#{1,6}\s+", "").str.replace_all(r"\s*\n\s*", " ")
    slots_title, slots_id = [], []
    for lvl in range(1, MAX_LEVEL + 1):
        # a heading of a higher rank ends the section of this level; so does the end of a box (HTML)
        clear = (is_sec & (pl.col("level") < lvl)) | (pl.col("resume_level") <= lvl).fill_null(False)
        slots_title.append(
            pl.when(is_sec & (pl.col("level") == lvl))
            .then(title)
            .when(clear)
            .then(pl.lit(""))
            .otherwise(None)
            .forward_fill()
            .over(DOC)
            .alias(f"_h{lvl}")
        )
        slots_id.append(
            pl.when(is_sec & (pl.col("level") == lvl))
            .then(pl.col("fragment_id"))
            .when(clear)
            .then(pl.lit(""))
            .otherwise(None)
            .forward_fill()
            .over(DOC)
            .alias(f"_s{lvl}")
        )
    own = pl.when(is_sec).then(pl.col("level")).otherwise(MAX_LEVEL + 1)
    parent = pl.coalesce([pl.when((own > lvl) & (pl.col(f"_s{lvl}") != "")).then(pl.col(f"_s{lvl}")) for lvl in range(MAX_LEVEL, 0, -1)])
    path = pl.concat_list([pl.col(f"_h{lvl}") for lvl in range(1, MAX_LEVEL + 1)]).list.eval(
        pl.element().filter(pl.element().is_not_null() & (pl.element() != ""))
    )
    tmp = [f"_h{lvl}" for lvl in range(1, MAX_LEVEL + 1)] + [f"_s{lvl}" for lvl in range(1, MAX_LEVEL + 1)]
    placed = blocks.with_columns(slots_title + slots_id).with_columns(parent.alias("parent_id"), path.alias("heading_path")).drop(tmp)
    return footnotes_with_their_reference(placed)


# A footnote printed at the end of a chapter ("^[6] Different people ...", lynx; "[^6]: ...",
# Markdown) belongs to the section that refers to it ("... in a variety of places.^[6]"), not to
# the chapter's last section.
_NOTE = r"^(?:\^\[(\d{1,3})\]|\[\^(\d{1,3})\]:)\s"
_NOTE_REF = r"\^\[(\d{1,3})\]|\[\^(\d{1,3})\]"


def footnotes_with_their_reference(blocks: pl.LazyFrame) -> pl.LazyFrame:
    """Footnote blocks take the parent section and heading path of the first block that refers to them."""
    number = pl.coalesce(pl.col("text").str.extract(_NOTE, 1), pl.col("text").str.extract(_NOTE, 2))
    is_note = pl.col("text").str.contains(_NOTE)
    refs = (
        blocks.filter(~is_note & (pl.col("kind") != "section"))
        .select(DOC, "char_start", "parent_id", "heading_path", pl.col("text").str.extract_all(_NOTE_REF).alias("_ref"))
        .explode("_ref")
        .filter(pl.col("_ref").is_not_null())
        .select(DOC, "char_start", "parent_id", "heading_path", pl.col("_ref").str.extract(r"(\d+)", 1).alias("_note"))
        .sort(DOC, "char_start")
        .group_by(DOC, "_note", maintain_order=True)
        .agg(
            pl.col("char_start").first().alias("_ref_at"),
            pl.col("parent_id").first().alias("_ref_parent"),
            pl.col("heading_path").first().alias("_ref_path"),
        )
    )
    noted = blocks.with_columns(pl.when(is_note).then(number).alias("_note")).join(
        refs, on=[DOC, "_note"], how="left", maintain_order="left"
    )
    moved = pl.col("_ref_at").is_not_null() & (pl.col("_ref_at") < pl.col("char_start"))
    return noted.with_columns(
        pl.when(moved).then(pl.col("_ref_parent")).otherwise(pl.col("parent_id")).alias("parent_id"),
        pl.when(moved).then(pl.col("_ref_path")).otherwise(pl.col("heading_path")).alias("heading_path"),
    ).drop("_note", "_ref_at", "_ref_parent", "_ref_path")


# A sentence: anything up to a run of . ! ? (plus closing quotes or brackets) that is followed by
# whitespace or the end; a terminator followed by anything else ("12.4", "Inc.\",") does not end it,
# nor one followed on the same line by a lower-case word ("L.P. may", "e.g. your", "10 a.m. on": an
# abbreviation, as 2-4% of the boundaries in CUAD, NDAs and privacy policies were; a new line
# starting lower-case is a record's next key, "steps[5].step = 6"), nor the period of a numbering
# abbreviation before its number ("No. 5", "Inc. 1303 E. Algonquin Road", "Sec. 4").
_CLOSE = "\"'”’)\\]"
_NUMBERING = r"\b(?:[Nn]os?|Inc|[Ss]ec|[Aa]rt|[Vv]ol|[Ff]ig|[Pp]p?)\.\s+\d"
SENTENCE = rf"(?s)(?:{_NUMBERING}|[^.!?]|[.!?]+[{_CLOSE}]*(?:[^\s{_CLOSE}]|[^\S\n]+\p{{Ll}}))*(?:[.!?]+[{_CLOSE}]*(?:\s+|$)|$)"
# A block of header fields, one per line ("Name: click" / "Version: 8.5.1" / "License-Expression:
# MIT", a mail's or a package's headers): no line ends on a terminator, so SENTENCE reads the block
# as one sentence, and a question about one field was answered by all 23 lines, or not at all.
# Each line of a sentence made only of such fields is a sentence of its own. (Records written
# "key.path = value" are not split: a JSON record's fields are read together.)
_FIELD_LINE = r"[ \t]*[A-Z][\w-]*(?: [A-Z][\w-]*){0,3}:[ \t]+\S[^\n]*"
FIELD_BLOCK = rf"^(?:{_FIELD_LINE}\n)+{_FIELD_LINE}\s*$"


def _hard_wrap(piece: str, width: int) -> list[str]:
    """Cut a run with no sentence end (a 20 MB single line, say) at whitespace near `width`."""
    out, i = [], 0
    while len(piece) - i > width:
        cut = piece.rfind(" ", i + width // 2, i + width)
        cut = cut + 1 if cut > 0 else i + width
        out.append(piece[i:cut])
        i = cut
    out.append(piece[i:])
    return out


def _pack(lengths: list[int], limit: int) -> list[int]:
    """Greedy packing of consecutive sentences into windows of at most `limit` characters."""
    ids, cur, w = [], 0, 0
    for n in lengths:
        if cur and cur + n > limit:
            w, cur = w + 1, 0
        ids.append(w)
        cur += n
    return ids


def sentence_windows(long: pl.LazyFrame, p: FragmentParams) -> pl.LazyFrame:
    """Split blocks over max_chars into windows of whole sentences."""

    def split(s: pl.Series) -> pl.Series:
        out = []
        for text, pieces in zip(s.struct.field("text").to_list(), s.struct.field("sent").to_list()):
            if "".join(pieces) != text:  # the rule failed to cover the text: never lose a character
                pieces = [text]
            out.append(
                [x for piece in pieces for x in (_hard_wrap(piece, p.hard_wrap_chars) if len(piece) > p.hard_wrap_chars else [piece])]
            )
        return pl.Series(out, dtype=pl.List(pl.String))

    def pack(s: pl.Series) -> pl.Series:
        return pl.Series([_pack(ls, p.max_chars) for ls in s.to_list()], dtype=pl.List(pl.Int64))

    n = pl.col("sent").str.len_chars()
    return (
        long.with_columns(pl.col("text").str.extract_all(SENTENCE).alias("sent"))
        .with_columns(pl.struct("text", "sent").map_batches(split, return_dtype=pl.List(pl.String)).alias("sent"))
        .with_columns(pl.col("sent").list.eval(pl.element().str.len_chars()).map_batches(pack, return_dtype=pl.List(pl.Int64)).alias("win"))
        .explode(["sent", "win"])
        .filter(n > 0)
        .with_columns((pl.col("char_start") + n.cum_sum().over([DOC, "block"]) - n).alias("s_start"))
        .group_by([DOC, "block", "win"], maintain_order=True)
        .agg(
            pl.col("page", "level", "parent_id", "heading_path").first(),
            pl.col("s_start").first().alias("char_start"),
            pl.col("sent").str.join("").alias("raw"),
        )
        .with_columns(
            pl.lit("sentence_window").alias("kind"),
            (pl.col("char_start") + pl.col("raw").str.len_chars() - pl.col("raw").str.strip_chars_start().str.len_chars()).alias(
                "char_start"
            ),
            pl.col("raw").str.strip_chars().alias("text"),
        )
        .with_columns((pl.col("char_start") + pl.col("text").str.len_chars()).alias("char_end"))
        .drop("raw", "win")
    )


def section_blocks(pages: pl.LazyFrame, sp: StructureParams) -> pl.LazyFrame:
    """Every block of the pages with its id, heading path and parent section: what the fragments
    and the structure tree (`structure.tree`) are both cut from."""
    return headings(_with_ids(blocks_of(classify(lines_of(pages), pages, sp))))


def fragments(pages: pl.LazyFrame, p: FragmentParams, sp: StructureParams = StructureParams()) -> pl.LazyFrame:
    """Pages in, fragments out (schema FRAGMENTS), sorted by document and offset."""
    # collected once: the two branches below would each compute the line rules again (2.4x the time)
    blocks = section_blocks(pages, sp).collect().lazy()
    too_long = (pl.col("kind") != "section") & (pl.col("text").str.len_chars() > p.max_chars)
    kept = blocks.filter(~too_long)
    windows = _with_ids(sentence_windows(blocks.filter(too_long), p))
    cols = [DOC, "fragment_id", "parent_id", "kind", "level", "heading_path", "page", "char_start", "char_end", "text"]
    out = (
        pl.concat([kept.select(cols), windows.select(cols)])
        .filter((pl.col("kind") == "section") | (pl.col("text").str.len_chars() >= p.min_chars))
        .with_columns(pl.when(pl.col("kind") == "section").then(pl.col("level")).alias("level"))
        .with_columns(n_tokens_expr("text", p.encoding).alias("n_tokens"))
        .sort([DOC, "char_start", "char_end", "kind"])
    )
    return conform(out, FRAGMENTS)


# ---- the grounding check notebook 02 shows ------------------------------------------------------


def ungrounded(fragments: pl.DataFrame, docs: pl.DataFrame) -> pl.DataFrame:
    """The fragments whose text is not their document's text at their code-point offsets.

    `docs` holds (doc_id, doc_text). Each document's text is sliced where its fragments say, one
    document at a time: a join would give every fragment a copy of its whole document (15 GB for
    9,000 fragments of a 2.1 and a 1 MB file; 10 GB for the 510 CUAD contracts)."""
    cols = ["fragment_id", "doc_id", "char_start", "char_end"]
    texts = dict(docs.select("doc_id", pl.col("doc_text").fill_null("")).iter_rows())
    bad = []
    for (doc,), rows in fragments.filter(pl.col("doc_id").is_in(list(texts))).group_by(["doc_id"], maintain_order=True):
        text = texts[doc]
        found = [text[s:e] for s, e in zip(rows["char_start"].to_list(), rows["char_end"].to_list())]
        bad.append(rows.filter(pl.Series(found, dtype=pl.String) != rows["text"]).select(cols))
    orphans = fragments.join(docs, on="doc_id", how="anti").select(cols)
    return pl.concat([*bad, orphans]) if bad else orphans

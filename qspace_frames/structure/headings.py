"""Which lines of a document are headings, at which level and on what evidence, and which are page
furniture (running headers, footers, page numbers) to leave out of the searched text.

Evidence, in order of trust (a document uses the most trusted kind it has):

1. `outline`, `font`: what the file's layout shows (a PDF's bookmarks or type sizes), placed by
   the loader on the page's lines (`corpus.loaders.pdf_layout`);
2. `markup`: the canonical `# Title` lines of Markdown, HTML, DOCX, PPTX and XLSX, and
   `underline`: a title over a line of `===`, `---`, `***` or `~~~` (levels in the order the
   characters first appear, as reStructuredText assigns them);
3. `numbering` ("3.2.1 Title", "Article IV", "Section 5."), capitals ("TERMINATION") and
   `pattern`: a short capitalised line standing alone, the lowest rank (it nests under the
   section it is in and ends at the next heading of any level).

Markup documents keep numbered and capitalised lines as headings too (a Markdown file may mean
"3.3 Exceptions" as one), but not one-word capitals or short capitalised lines; a document with
layout evidence or underlines takes no heading from text patterns (its numbered lines are list
items, its capitals emphasis).
Every rule is a named expression over the line table of `fragments.lines_of`.
"""

from __future__ import annotations

import polars as pl
import polars.selectors as cs

from ..params import StructureParams

MAX_LEVEL = 6
DOC = "doc_id"
LIST_GAP = 1  # non-blank lines between two "N." lines of one list
SHOUTED_LINES = 4  # capital lines running that are a paragraph, not a title
SOURCES = ("outline", "font", "markup", "underline", "numbering", "pattern")
RESUME = "resume"  # a loader's mark: this line returns to the section a box's heading interrupted
CODE = "code"  # a loader's mark: the lines up to its end are code (an HTML <pre> block)
# a Markdown code fence (not "~~~", a title's underline in plain text): the lines between two are
# code. Code's lines are never headings: "# /etc/fstab: static file system information." is a
# comment, not a chapter holding the rest of the page
FENCE = r"^\s*```"

stripped = pl.col("line").str.strip_chars()
_prev = lambda e: e.shift(1).over(DOC)  # noqa: E731  (lines are in document order)
_next = lambda e: e.shift(-1).over(DOC)  # noqa: E731

is_blank = (stripped == "").alias("is_blank")

# '## 3.2 Approvals' (loaders emit docx/html/pptx/xlsx headings in this form too), at the line's
# start: indented, "# perl" is a comment in a code example
md_level = pl.col("line").str.extract(r"^(#{1,6})\s+\S", 1).str.len_chars().cast(pl.Int64)

# a line of one repeated punctuation character under a title
# (about the title's length: a much longer one is a horizontal rule, as lynx draws <hr>)
_UNDERLINE = r"^(?:={3,}|-{3,}|~{3,}|\^{3,}|\*{3,}|\+{3,})$"
is_rule = stripped.str.contains(_UNDERLINE)
_title_len = _prev(stripped.str.len_chars())
_title_above = (
    _prev(~stripped.str.contains(_UNDERLINE) & (stripped != "") & ~stripped.str.contains(r"\||\S\s{3,}\S|^#{1,6}\s|[.,;:]$"))
    & (stripped.str.len_chars() * 10 >= _title_len * 6)
    & (stripped.str.len_chars() * 2 <= _title_len * 3 + 4)
).fill_null(False)
# ... with a blank line after it: a rule of dashes between "By: /s/ Name" and "Name: ..." is a
# signature line; a double rule ("GNU Wget" / "========") underlines a title whatever follows it
is_underline = (is_rule & _title_above & (_next(stripped == "").fill_null(True) | stripped.str.starts_with("="))).alias("is_underline")

# contents lines: a title followed by a page number ("Related documents 5", "Purpose ..... 3")
is_contents_line = stripped.str.contains(r"(?:\.{3,}|\s)\s*\d{1,4}$")

# '3.2 Approvals', '4. TERMINATION', '3.4. /bin : Essential binaries': a short numbered title, or
# an FAQ's question ('11.6. And how about Debian and traditional System V init?'), not a sentence
# (a three-digit number with no dot is a street number: "525 South Virgil Avenue")
_NUMBER = r"^(?:\d{1,2}(?:\.\d{1,3}){0,4}\.?|\d{3}(?:\.\d{1,3}){0,4}\.)\s+"
_title_after_number = stripped.str.replace(_NUMBER, "")
numbered_level = (
    pl.when(
        stripped.str.contains(_NUMBER + r"[A-Z/(<\"'“‘]")  # a title starts with a capital: "4.7.1 disclose ..." is a clause
        & ~_title_after_number.str.contains(r"[.!;:,]$|[.!?]\s+[A-Z]|;")
    )
    .then(stripped.str.extract(r"^(\d{1,3}(?:\.\d{1,3}){0,4})", 1).str.count_matches(r"\.") + 1)
    .cast(pl.Int64)
)


def _title_case(text: pl.Expr) -> pl.Expr:
    """Most of the longer words capitalised ("Payment Terms", "PURPOSE"), as a title is written and
    a list item ("1. Increase the visibility of the menu") is not. (Counted with two regexes: a
    list of words per line cost CUAD's 200,000 lines half a second.)"""
    word = r"(?:^|[^A-Za-z'’-])[{}][A-Za-z'’-]{{3,}}"
    return text.str.count_matches(word.format("A-Z")) * 3 >= text.str.count_matches(word.format("A-Za-z")) * 2


# 'ARTICLE IV', 'Section 5. Termination', 'Chapter 2 - Scope': legal and book divisions
legal_level = (
    pl.when(stripped.str.contains(r"^(?i:article|chapter|part|appendix|schedule|exhibit)\s+(?:[IVXLC]+|\d{1,3}|[A-Z])\b"))
    .then(pl.lit(1))
    .when(stripped.str.contains(r"^(?i:section)\s+\d{1,3}(?:\.\d{1,3}){0,3}\b"))
    .then(stripped.str.extract(r"^(?i:section)\s+(\d{1,3}(?:\.\d{1,3}){0,3})", 1).str.count_matches(r"\.") + 2)
    .cast(pl.Int64)
)

# capitals, whatever ends the line: a title's line or one of a shouted paragraph ("THE SOFTWARE IS
# PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR")
is_shouted = stripped.str.contains(r"^[^a-z]*[A-Z][^a-z]*[A-Z][^a-z]*[A-Z][^a-z]*$") & (
    stripped.str.count_matches(r"[A-Z]") >= stripped.str.len_chars() // 2
)
# 'TRAVEL AND EXPENSE POLICY': an ALL-CAPS title line (at least 3 capitals, no lower case)
is_caps = is_shouted & ~stripped.str.contains(r"[.;,]$")
# a line that carries on the prose line above it, wrapped: that line ends on a word, a comma or a
# bracket and is long, or not short and this one hangs further in ("    - drm: Correct the defined
# value for" / "      AMDGPU_DMUB_NOTIFICATION_MAX"), so capitals here are a term, not a title ("Execution
# Copy" / "        CO-BRANDING AND SERVICES AGREEMENT" is one)
WRAP_WIDTH = 50
_prose_goes_on = ~pl.col("is_blank") & stripped.str.contains(r"[a-z]") & stripped.str.contains(r"[\w),]$")
_indent = pl.col("line").str.len_chars() - pl.col("line").str.strip_chars_start().str.len_chars()
_above = _prev(stripped.str.len_chars())
wraps_on = (_prev(_prose_goes_on) & ((_above >= WRAP_WIDTH) | ((_indent > _prev(_indent)) & (_above >= WRAP_WIDTH // 2)))).fill_null(False)

# 'Rationale', 'Payment Terms': a short capitalised line with blank lines around it and no
# sentence punctuation, most of its longer words capitalised
is_pattern = (
    stripped.str.contains(r"^[A-Z][^.!?;:,]*[^.!?;:,\s]$")
    & stripped.str.contains(r"[A-Za-z]{3}")  # a word, not a label ("P3")
    & (stripped.str.split(" ").list.len() <= 6)
    & _title_case(stripped)
    & _prev(stripped == "").fill_null(True)
    & _next(stripped == "").fill_null(True)
)

# 'dpkg (1.21.22) unstable; urgency=medium': the first line of an entry of a Debian changelog, the
# version a change was made in (what "which version fixed ..." asks); the entries are the document's
# sections, as their lines are lower case and not short titles no other rule reads them so
is_changelog_entry = stripped.str.contains(r"^[a-z0-9][a-z0-9.+-]+ \([^()\s]+\)(?: [A-Za-z0-9./+-]+)+; urgency=[a-z]+")

is_list_item = stripped.str.contains(
    r"^(?:[-*+•▪◦]\s+\S|\d{1,3}[.)]\s+\S|[a-zA-Z][.)]\s+\S|\([a-zA-Z0-9]{1,4}\)\s+\S|[Ss]tep\s+\d+\s*[:.)-])"
).alias("is_list")

is_bullet = stripped.str.contains(r"^[-*+•▪◦]\s+\S")

is_table_row = stripped.str.contains(r"^(?:Row \d+:\s|\|.*\|$)").alias("is_table")

# ---- page furniture ------------------------------------------------------------------------------
EDGE_LINES = 2  # lines at the top and at the bottom of a page where running headers and footers sit
_furniture_key = stripped.str.to_lowercase().str.replace_all(r"\d+", "#").str.replace_all(r"\s+", " ")
_page_number = _furniture_key.str.contains(r"^(?:page )?#+(?: ?(?:of|/) ?#+)?$|^[ivxlc]{1,6}$|^- ?# ?-$")


def furniture(lines: pl.LazyFrame, p: StructureParams) -> pl.LazyFrame:
    """Lines at a page's top or bottom that repeat (digits aside) on `furniture_min_pages` pages
    of the document, and bare page numbers there: a column `is_furniture` to join on."""
    on_page = [DOC, "page_start"]
    ranked = (
        lines.filter(~pl.col("is_blank") & pl.col("page").is_not_null())
        .with_columns(
            pl.col("line_start").rank("ordinal").over(on_page).alias("_top"),
            pl.col("line_start").rank("ordinal", descending=True).over(on_page).alias("_bottom"),
            _furniture_key.alias("_key"),
            _page_number.alias("_number"),
        )
        # a marked-up heading or a table row is content wherever it sits
        .filter(((pl.col("_top") <= EDGE_LINES) | (pl.col("_bottom") <= EDGE_LINES)) & pl.col("md").is_null() & ~pl.col("is_table"))
        .with_columns(pl.when(pl.col("_top") <= EDGE_LINES).then(pl.lit("top")).otherwise(pl.lit("bottom")).alias("_edge"))
        .with_columns(pl.col("page_start").n_unique().over([DOC, "_edge", "_key"]).alias("_repeats"))
    )
    pages = pl.col("page_start").n_unique().over(DOC)
    return ranked.filter((pages >= 2) & ((pl.col("_repeats") >= p.furniture_min_pages) | pl.col("_number"))).select(
        DOC, "line_start", pl.lit(True).alias("is_furniture")
    )


def marks(pages: pl.LazyFrame) -> pl.LazyFrame:
    """The loader's layout headings as line marks: (doc_id, line_start, mark_end, mark_level, mark_source)."""
    return (
        pages.select(DOC, "char_start", "headings")
        .explode("headings")
        .filter(pl.col("headings").is_not_null())
        .unnest("headings")
        .select(
            DOC,
            (pl.col("char_start") + pl.col("start")).alias("line_start"),
            (pl.col("char_start") + pl.col("end")).alias("mark_end"),
            pl.col("level").alias("mark_level"),
            pl.col("source").alias("mark_source"),
        )
    )


def classify(lines: pl.LazyFrame, pages: pl.LazyFrame, p: StructureParams) -> pl.LazyFrame:
    """Each line with `level` and `source` (null unless a heading), `is_cont` (the second line of
    a heading that wraps), `resume_level` (the line ends the sections of this level and deeper
    that a box opened), `set_aside` (an underline or page furniture: not searched), `is_blank`
    (blank or set aside), `is_list` and `is_table`."""
    base = lines.with_columns(
        is_blank, is_list_item, is_table_row, is_underline, md_level.alias("md"), _next(is_underline).fill_null(False).alias("_titled")
    )
    all_marks = marks(pages)
    code = all_marks.filter(pl.col("mark_source") == CODE).group_by(DOC, "line_start").agg(pl.col("mark_end").max().alias("_code_end"))
    marked = (
        base.join(all_marks.filter(pl.col("mark_source") != CODE), on=[DOC, "line_start"], how="left", maintain_order="left")
        .join(code, on=[DOC, "line_start"], how="left", maintain_order="left")
        .with_columns(
            pl.when(pl.col("mark_source") == RESUME).then(pl.col("mark_level")).alias("resume_level"),
            *[pl.when(pl.col("mark_source") != RESUME).then(pl.col(c)).alias(c) for c in ("mark_end", "mark_level", "mark_source")],
        )
    )
    fence = pl.col("line").str.contains(FENCE)
    in_code = (pl.col("line_start") < pl.col("_code_end").forward_fill().over(DOC)).fill_null(False) | fence
    in_code = in_code | (fence.cast(pl.Int64).cum_sum().over(DOC) % 2 == 1)
    marked = marked.with_columns(in_code.alias("_code")).with_columns(pl.when(~pl.col("_code")).then(pl.col("md")).alias("md"))
    # a mark that runs past its first line covers the lines below it up to its end
    reach = pl.col("mark_end").forward_fill().over(DOC)
    in_mark = pl.col("mark_end").is_null() & (pl.col("line_start") < reach).fill_null(False)
    under_order = pl.when(pl.col("is_underline")).then(stripped.str.slice(0, 1)).alias("_uchar")
    marked = marked.with_columns(in_mark.alias("is_cont"), under_order)
    # underline characters ranked by where each first appears in its document
    first_seen = pl.col("line_start").min().over([DOC, "_uchar"])
    u_level = pl.when(pl.col("_uchar").is_not_null()).then(first_seen.rank("dense").over([DOC, pl.col("_uchar").is_null()]))
    marked = marked.with_columns(_next(u_level).cast(pl.Int64).alias("u_level"))

    has = lambda e: e.any().over(DOC)  # noqa: E731
    indent = pl.col("line").str.len_chars() - pl.col("line").str.strip_chars_start().str.len_chars()
    nth = (~pl.col("is_blank")).cast(pl.Int64).cum_sum().over(DOC)  # the line's place among non-blank lines
    # each rule below is a column, computed once (as expressions reused in the level and the
    # source, Polars computed the windows again: 4x the time on CUAD)
    marked = marked.with_columns(
        indent.alias("_indent"),
        nth.alias("_nth"),
        (stripped.str.len_chars() <= p.heading_max_chars).alias("_short"),
        is_contents_line.alias("_contents"),
        is_changelog_entry.alias("_entry"),
        pl.coalesce(numbered_level, legal_level).alias("_num_level"),
        _title_case(_title_after_number).alias("_titlelike"),
        has(pl.col("md").is_not_null()).alias("_has_md"),
        (has(pl.col("mark_level").is_not_null()) | (pl.col("is_underline").sum().over(DOC) >= 2)).alias("_no_text_rules"),
    )
    short, indent, nth, titlelike = pl.col("_short"), pl.col("_indent"), pl.col("_nth"), pl.col("_titlelike")
    # ... and not one carrying on the prose line above it, cut after a word or a comma ("added under
    # section" / "7.  This requirement modifies ...", "as set out in" / "Schedule 4."), unless it reads
    # as a title (most words capitalised, no closing stop: "... breach of the same" / "3.11 Residuals",
    # where a document's paragraphs end without one); a line ending on a date or a number may close a
    # signature block or a page above a title
    carries_on = wraps_on & _prev(stripped.str.contains(r"[a-z,]$")) & ~(titlelike & ~stripped.str.contains(r"[.;:,]$"))
    numbered = short & ~pl.col("_contents") & pl.col("_num_level").is_not_null() & ~carries_on
    # a line between two numbered at its depth is an item of a list or of a table of contents
    depth = stripped.str.extract(r"^(\d{1,3}(?:\.\d{1,3}){0,4})[.)]?\s+\S", 1).str.count_matches(r"\.")
    numbered = numbered & ~((_prev(depth) == depth) & (_next(depth) == depth)).fill_null(False)
    # "1. Title" also starts list items: lines with a one-level number a few lines apart are a list
    one_level = stripped.str.contains(r"^\d{1,3}\.?\s")
    at = pl.when(stripped.str.contains(r"^\d{1,3}[.)]?\s+\S")).then(nth)
    near = ((nth - at.shift(1).forward_fill().over(DOC)) <= LIST_GAP) | ((at.shift(-1).backward_fill().over(DOC) - nth) <= LIST_GAP)
    numbered = numbered & ~(one_level & near.fill_null(False) & ~titlelike)
    # a numbered line, not a title, whose next line hangs further in is an item wrapping onto it
    hangs = (_next(~pl.col("is_blank")) & (_next(indent) > indent)).fill_null(False)
    marked = marked.with_columns((numbered & ~(hangs & ~titlelike)).alias("_numbered"))
    # a numbered title that comes again further on is its entry in the contents, the last one the heading
    # ("4. The /usr Hierarchy" lists "# Chapter 4. The /usr Hierarchy")
    listed = stripped.str.to_lowercase().str.replace(r"^[#\s]*(?:chapter|appendix|section|part|article)\s+", "")
    again = pl.when(pl.col("_numbered") | pl.col("md").is_not_null() | pl.col("_titled")).then(listed.str.replace_all(r"[^0-9a-z]", ""))
    # capitals on several lines running are a shouted paragraph (a disclaimer); a bullet is a list item
    caps = short & is_caps & ~pl.col("_contents") & ~is_bullet & ~wraps_on
    marked = marked.with_columns(
        (pl.col("_numbered") & (pl.col("line_start") == pl.col("line_start").max().over([DOC, again]))).alias("_numbered"),
        caps.alias("_caps"),
        is_shouted.alias("_shouted"),
    )
    run = (pl.col("_shouted") != _prev(pl.col("_shouted"))).fill_null(True).cum_sum().over(DOC)  # runs of consecutive lines alike
    # where headings are marked up, an unmarked line needs more: one capitalised word is a term ("STOP")
    caps = pl.col("_caps") & (pl.len().over(DOC, run) < SHOUTED_LINES) & (~pl.col("_has_md") | stripped.str.contains(r"\S\s+\S"))
    # a short line standing alone is a heading only flush left: set in, it is a term, a cell or a caption
    pattern = short & is_pattern & ~pl.col("_contents") & ~pl.col("is_list") & ~pl.col("_has_md")
    marked = marked.with_columns(
        caps.alias("_caps"),
        (pattern & (indent == 0)).alias("_pattern"),
        (pattern & (nth == 1)).alias("_title"),  # ... but the document's first line, centred or not, is its title
    )
    layout = pl.col("mark_level").is_not_null().any().over(DOC)
    text_rules = ~pl.col("_no_text_rules")
    numbered, caps, pattern, title = pl.col("_numbered"), pl.col("_caps"), pl.col("_pattern"), pl.col("_title")
    level = (
        pl.when(layout)
        .then(pl.col("mark_level"))
        .when(pl.col("_code"))
        .then(pl.lit(None))
        .when(pl.col("md").is_not_null())
        .then(pl.col("md"))
        .when(pl.col("_titled"))
        .then(pl.col("u_level"))
        .when(text_rules & numbered)
        .then(pl.col("_num_level"))
        .when(text_rules & pl.col("_entry") & ~pl.col("_has_md"))  # in a marked-up page, a changelog quoted as an example
        .then(pl.lit(1))
        .when(text_rules & (caps | title))
        .then(pl.lit(1))
        .when(text_rules & pattern)
        .then(pl.lit(MAX_LEVEL))
        .cast(pl.Int64)
        .clip(1, MAX_LEVEL)
    )
    source = (
        pl.when(pl.col("level").is_null())
        .then(None)
        .when(layout)
        .then(pl.col("mark_source"))
        .when(pl.col("md").is_not_null())
        .then(pl.lit("markup"))
        .when(pl.col("_titled"))
        .then(pl.lit("underline"))
        .when(numbered)
        .then(pl.lit("numbering"))
        .otherwise(pl.lit("pattern"))
    )
    out = marked.with_columns(level.alias("level")).with_columns(source.alias("source"))
    fur = furniture(out, p)
    return (
        out.join(fur, on=[DOC, "line_start"], how="left", maintain_order="left")
        .with_columns((pl.col("is_underline") | (pl.col("is_furniture").fill_null(False) & pl.col("level").is_null())).alias("set_aside"))
        .with_columns((pl.col("is_blank") | pl.col("set_aside")).alias("is_blank"))
        # a heading goes on over the lines its mark covers, but not across a blank line
        .with_columns((pl.col("is_cont") & ~pl.col("is_blank") & ~_prev(pl.col("is_blank")).fill_null(True)).alias("is_cont"))
        .drop("md", "mark_end", "mark_level", "mark_source", "u_level", "is_underline", "is_furniture", cs.starts_with("_"))
    )

"""Markdown YAML front matter: the title becomes the document's level-1 heading, the rest of the
block blank filler of the same length, so every offset after it still points into the file as
decoded; front matter that cannot be trusted stays as text, with a note."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from qspace_frames.corpus.loaders import Loaded, load_file
from qspace_frames.corpus.loaders.plain import _replace_front_matter
from qspace_frames.corpus.pages import docs_pages, loaded_docs
from qspace_frames.fragments import fragments
from qspace_frames.params import CorpusParams, FragmentParams

HANDBOOKS = ("policy-18f-handbook", "policy-github-site-policy")
P = CorpusParams()

# Where a front matter block ends, found independently of the loader (Jekyll's rule).
BLOCK = re.compile(r"\A\ufeff?---[ \t\r]*\n.*?^(?:---|\.\.\.)[ \t\r]*(?:\n|\Z)", re.S | re.M)

LEAVE = (
    "---\n"
    "title: Voluntary Leave Transfer Program\n"
    "keywords: voluntary, donation\n"
    "redirect_from:\n"
    "  - /voluntary-leave-transfer-program/\n"
    "---\n"
    "\n"
    "The Voluntary Leave Transfer Program (VLTP) allows employees to donate annual leave.\n"
    "\n"
    "## To receive donated hours\n"
    "\n"
    "You must have a negative leave balance of at least 24 hours.\n"
)


def load_bytes(tmp_path: Path, name: str, data: bytes) -> Loaded:
    path = tmp_path / name
    path.write_bytes(data)
    return load_file(path, path.suffix.lstrip("."), P)


def frag(r: Loaded) -> pl.DataFrame:
    """The fragments stage over one loaded document, as the pipeline runs it."""
    pages = docs_pages(loaded_docs([("d", "x.md", "md")], [r]))
    return fragments(pages.lazy(), FragmentParams()).collect()


def text_of(r: Loaded) -> str:
    assert r.status == "loaded", r
    [(page, text)] = r.pages
    assert page is None
    return text


def same_after(raw: str, text: str, end: int) -> None:
    """Same length, and every character from `end` on identical at the same offset."""
    assert len(text) == len(raw)
    assert text[end:] == raw[end:]


# --------------------------------------------------------------------------- with a title


def test_title_becomes_the_heading_and_offsets_hold(tmp_path):
    r = load_bytes(tmp_path, "leave.md", LEAVE.encode())
    text = text_of(r)
    end = BLOCK.match(LEAVE).end()
    same_after(LEAVE, text, end)
    assert text.startswith("# Voluntary Leave Transfer Program\n")
    head = text[:end]
    assert all(not line.strip() for line in head.splitlines()[1:])  # filler: whitespace-only lines
    assert [i for i, c in enumerate(head) if c == "\n"][1:] == [i for i, c in enumerate(LEAVE[:end]) if c == "\n"][1:]
    assert r.reason == "front matter: title taken as the document title"

    fr = frag(r)
    for row in fr.iter_rows(named=True):  # every fragment grounded in the loaded text
        assert text[row["char_start"] : row["char_end"]] == row["text"]
    assert not fr["text"].str.contains("title:|---|keywords|redirect_from").any()
    title = fr.row(0, named=True)
    assert (title["kind"], title["level"], title["text"], title["char_start"]) == ("section", 1, "# Voluntary Leave Transfer Program", 0)
    intro = fr.filter(pl.col("text").str.starts_with("The Voluntary")).row(0, named=True)
    assert intro["heading_path"] == ["Voluntary Leave Transfer Program"]
    assert intro["parent_id"] == title["fragment_id"]
    section = fr.filter(pl.col("text") == "## To receive donated hours").row(0, named=True)
    assert section["heading_path"] == ["Voluntary Leave Transfer Program", "To receive donated hours"]
    # the body keeps the offsets it has in the file as decoded
    assert section["char_start"] == LEAVE.index("## To receive")


def test_markdown_extension_and_dots_closing_line(tmp_path):
    raw = "---\ntitle: Travel\n...\nBody text about travel approvals.\n"
    text = text_of(load_bytes(tmp_path, "travel.markdown", raw.encode()))
    same_after(raw, text, BLOCK.match(raw).end())
    assert text.startswith("# Travel\n") and not text.strip().startswith("---")


def test_crlf_line_endings(tmp_path):
    raw = LEAVE.replace("\n", "\r\n")
    r = load_bytes(tmp_path, "crlf.md", raw.encode())
    text = text_of(r)
    end = BLOCK.match(raw).end()
    same_after(raw, text, end)
    assert text.startswith("# Voluntary Leave Transfer Program\n")
    fr = frag(r)
    assert fr.row(0, named=True)["text"] == "# Voluntary Leave Transfer Program"
    assert not fr["text"].str.contains("title:|---").any()
    section = fr.filter(pl.col("text") == "## To receive donated hours").row(0, named=True)
    assert section["heading_path"] == ["Voluntary Leave Transfer Program", "To receive donated hours"]


def test_utf8_bom(tmp_path):
    raw = "\ufeff" + LEAVE
    r = load_bytes(tmp_path, "bom.md", raw.encode("utf-8"))
    text = text_of(r)
    same_after(raw, text, BLOCK.match(raw).end())
    assert text.startswith("\ufeff# Voluntary Leave Transfer Program\n")  # the BOM stays: offsets are the file's
    fr = frag(r)
    first = fr.row(0, named=True)
    assert first["text"] == "# Voluntary Leave Transfer Program" and first["char_start"] == 1
    assert first["kind"] == "section" and first["heading_path"] == ["Voluntary Leave Transfer Program"]


@pytest.mark.parametrize("name", ["bom.md", "bom.txt"])
def test_a_heading_after_a_byte_order_mark_is_a_heading(tmp_path, name):
    """Windows editors save UTF-8 with a BOM: the file's first line is still a heading, and no
    fragment starts with the BOM (it was dropped as a 14-character paragraph)."""
    raw = "\ufeff# Heading One\n\nThe CFO must approve purchases.\n"
    fr = frag(load_bytes(tmp_path, name, raw.encode("utf-8")))
    assert fr.filter(pl.col("kind") == "section")["text"].to_list() == ["# Heading One"]
    body = fr.filter(pl.col("kind") == "paragraph").row(0, named=True)
    assert body["heading_path"] == ["Heading One"] and raw[body["char_start"] : body["char_end"]] == body["text"]
    assert not fr["text"].str.starts_with("\ufeff").any()


def test_utf16_with_bom(tmp_path):
    r = load_bytes(tmp_path, "wide.md", LEAVE.encode("utf-16"))
    text = text_of(r)
    same_after(LEAVE, text, BLOCK.match(LEAVE).end())
    assert text.startswith("# Voluntary Leave Transfer Program\n")
    assert r.reason == "decoded as UTF-16 (BOM); front matter: title taken as the document title"


def test_title_whitespace_collapsed_and_non_string_titles(tmp_path):
    raw = "---\ntitle: >\n  Leave   policy\n  for\tstaff\n---\nBody of the leave policy.\n"
    assert text_of(load_bytes(tmp_path, "a.md", raw.encode())).startswith("# Leave policy for staff\n")
    raw = "---\ntitle: 2024\n---\nBody of the report.\n"
    assert text_of(load_bytes(tmp_path, "b.md", raw.encode())).startswith("# 2024\n")


def test_a_title_longer_than_its_block_is_cut_to_fit():
    # YAML cannot make a title longer than its block in practice: the cut is a guard, tested directly
    raw = "---\n---\nBody"
    text, note = _replace_front_matter(raw, "title: A much longer title than the block", 8)
    assert text == "# A muc\nBody" and len(text) == len(raw)
    assert note == "front matter: title taken as the document title"


# --------------------------------------------------------------------------- without a title


@pytest.mark.parametrize(
    "raw",
    [
        "---\nlayout: page\npermalink: /leave/\n---\n\nThe leave policy applies to all employees.\n",
        "---\ntitle: '   '\n---\n\nThe leave policy applies to all employees.\n",
        "---\ntitle: [a, b]\n---\n\nThe leave policy applies to all employees.\n",
        "---\n---\n\nThe leave policy applies to all employees.\n",
        "---\n# only a comment\n---\n\nThe leave policy applies to all employees.\n",
    ],
)
def test_front_matter_without_a_title_is_blanked(tmp_path, raw):
    r = load_bytes(tmp_path, "x.md", raw.encode())
    text = text_of(r)
    end = BLOCK.match(raw).end()
    same_after(raw, text, end)
    assert text[:end].strip() == "" and text[:end].count("\n") == raw[:end].count("\n")
    assert r.reason == "front matter without a title: excluded"
    fr = frag(r)
    assert fr["text"].to_list() == ["The leave policy applies to all employees."]
    assert fr["char_start"].to_list() == [end + 1]


def test_only_front_matter_without_a_title_is_empty(tmp_path):
    r = load_bytes(tmp_path, "redirect.md", b"---\nredirect_to: /elsewhere/\n---\n")
    assert (r.status, r.reason) == ("empty", "only YAML front matter without a title, and whitespace")


# --------------------------------------------------------------------------- kept as text


@pytest.mark.parametrize(
    "raw,why",
    [
        (
            "---\ntitle: [unclosed\n---\n\nThe Security Lead owns the incident log.\n",
            "YAML error: ParserError: expected ',' or ']', but got '<stream end>' at line 3",
        ),
        ("---\ntitle: x\n\nThe Security Lead owns the incident log.\n", "no closing '---' or '...' line"),
        ("---\n- title\n- x\n---\n\nThe Security Lead owns the incident log.\n", "YAML list, not a mapping"),
        ("---\njust a sentence\n---\n\nThe Security Lead owns the incident log.\n", "YAML str, not a mapping"),
        (
            "---\ntitle: !!python/object/apply:os.system ['touch /tmp/pwned']\n---\n\nThe log.\n",
            "YAML error: ConstructorError: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/apply:os.system' at line 2",
        ),
        (
            "---\n!!python/object:builtins.dict {title: x}\n---\n\nThe log.\n",
            "YAML error: ConstructorError: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:builtins.dict' at line 2",
        ),
        ("---\ntitle: [" + "[" * 1200 + "\n---\nThe log.\n", "YAML error: RecursionError: maximum recursion depth exceeded"),
        ("---\n" + "k: v\n" * 1000 + "---\nThe log.\n", "no closing line within 1,000 lines or 64 KiB"),
        ("---\ntitle: " + "x" * 70_000 + "\n---\nThe log.\n", "no closing line within 1,000 lines or 64 KiB"),
    ],
)
def test_malformed_front_matter_is_kept_as_text_with_a_note(tmp_path, raw, why):
    r = load_bytes(tmp_path, "x.md", raw.encode())
    assert r.status == "loaded"
    assert r.pages == [(None, raw)]
    assert r.reason.startswith(f"front matter not parsed ({why}") and r.reason.endswith("): kept as text")
    assert not Path("/tmp/pwned").exists()


@pytest.mark.parametrize(
    "raw",
    [
        "Plain markdown.\n\n---\n\ntitle: not front matter\n---\n",  # not at the start
        "----\ntitle: x\n----\nBody\n",  # not a '---' line
        "--- title: x\n---\nBody\n",
        " ---\ntitle: x\n---\nBody\n",
        "---",
    ],
)
def test_no_front_matter_no_change_no_note(tmp_path, raw):
    r = load_bytes(tmp_path, "x.md", raw.encode())
    assert (r.status, r.reason, r.pages) == ("loaded", "", [(None, raw)])


def test_txt_with_the_same_bytes_is_unchanged(tmp_path):
    for name, raw in [("a.txt", LEAVE), ("b.txt", "---\nlayout: page\n---\nBody\n"), ("c.txt", "\ufeff" + LEAVE)]:
        r = load_bytes(tmp_path, name, raw.encode())
        assert (r.status, r.reason, r.pages) == ("loaded", "", [(None, raw)]), name


# --------------------------------------------------------------------------- real handbooks


def handbook_files(corpora: Path) -> list[Path]:
    folders = [corpora / name for name in HANDBOOKS]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        pytest.skip(f"corpus folder(s) missing, front matter not checked on real files: {', '.join(missing)}")
    return sorted(f for d in folders for f in d.rglob("*") if f.is_file() and f.suffix.lower() in (".md", ".markdown"))


def test_every_handbook_markdown_file(corpora):
    files = handbook_files(corpora)
    jobs, results, blocks = [], [], {}
    for i, f in enumerate(files):
        r = load_file(f, f.suffix.lstrip("."), P)
        raw = f.read_bytes().decode("utf-8")
        text = text_of(r)
        assert not text.startswith("---") and "front matter not parsed" not in r.reason, f
        m = BLOCK.match(raw)
        same_after(raw, text, m.end() if m else 0)
        if "title taken" in r.reason:
            assert m and text.startswith("# "), f
            blocks[f"d{i:04}"] = (f, m.end(), len(text))
        jobs.append((f"d{i:04}", str(f), "md"))
        results.append(r)
    fr = fragments(docs_pages(loaded_docs(jobs, results)).lazy(), FragmentParams()).collect()  # one batch
    for doc, (f, end, n) in blocks.items():
        d = fr.filter(pl.col("doc_id") == doc)
        inside = d.filter(pl.col("char_start") < end)  # only the title comes from the block
        assert inside.height == 1 and inside["kind"].to_list() == ["section"], (f, inside["text"].to_list())
        # the title heads every path up to the body's own first level-1 heading, if any
        title = inside["text"].item().removeprefix("# ")
        h1 = d.filter((pl.col("level") == 1) & (pl.col("char_start") >= end))["char_start"].min()
        under = d.filter(pl.col("char_start") < (h1 if h1 is not None else n))
        assert (under["heading_path"].list.first() == title).all(), f
    assert len(blocks) / len(files) > 0.9, f"front matter with a title: {len(blocks)} of {len(files)}"  # 303 of 314 when written

"""Plain text and Markdown: returned exactly as decoded, but for Markdown's YAML front matter,
blanked in place (its title becomes a `# Title` heading of the same length, so offsets hold).
"""

from __future__ import annotations

import datetime as dt
import re

import yaml

from ...params import CorpusParams
from .base import Text, decode_text, error_reason, join_notes, one_line


def load_plain(data: bytes, p: CorpusParams) -> Text:
    # Unchanged: offsets computed by others against the decoded file must agree with ours.
    text, note = decode_text(data, p, keep_bom=True)
    return Text([(None, text)], note=note, empty=f"only whitespace ({len(text):,} characters)")


# Front matter is metadata, bounded so that a file opening with "---" costs little to vet.
_FM_MAX_CHARS = 64 * 1024
_FM_MAX_LINES = 1000
_FM_KEPT = "front matter not parsed ({}): kept as text"


def load_markdown(data: bytes, p: CorpusParams) -> Text:
    doc = load_plain(data, p)
    [(page, text)] = doc.pages
    new, note = _front_matter(text)
    if new != text:
        doc.pages = [(page, new)]
        doc.empty = "only YAML front matter without a title, and whitespace"  # (with a title, never empty)
    doc.note = join_notes(doc.note, note)
    return doc


def _delimiter(line: str) -> str:
    return line.rstrip(" \t\r\n")


def _front_matter(text: str) -> tuple[str, str]:
    """(text, note): a leading YAML front matter block (Jekyll, Hugo) replaced in place.

    Offsets into the decoded file must still hold after the block, so the replacement has its
    exact length: `# <title>` then blank lines, or only blank lines when there is no title.
    Anything doubtful (YAML error, not a mapping, no closing line, too long) stays as text.
    """
    start = 1 if text.startswith("\ufeff") else 0
    if not text.startswith("---", start):
        return text, ""
    limit = min(len(text), start + _FM_MAX_CHARS)
    first = text.find("\n", start, limit)
    if first < 0 or _delimiter(text[start:first]) != "---":
        return text, ""
    pos = body = first + 1
    for _ in range(_FM_MAX_LINES):
        if pos >= len(text):
            return text, _FM_KEPT.format("no closing '---' or '...' line")
        nl = text.find("\n", pos, limit)
        if nl < 0 and limit < len(text):
            break  # the line runs past the bound
        end = nl + 1 if nl >= 0 else limit
        if _delimiter(text[pos:end]) in ("---", "..."):
            return _replace_front_matter(text, text[body:pos], end)
        pos = end
    return text, _FM_KEPT.format(f"no closing line within {_FM_MAX_LINES:,} lines or {_FM_MAX_CHARS // 1024} KiB")


def _replace_front_matter(text: str, source: str, end: int) -> tuple[str, str]:
    """Parse the YAML `source` of the block text[:end] and blank the block if it is a mapping."""
    try:
        meta = yaml.safe_load(source)  # never constructs Python objects: tags like !!python/object fail
    except Exception as e:  # a YAMLError, or e.g. a RecursionError from deep nesting
        mark = getattr(e, "problem_mark", None)
        if isinstance(e, yaml.MarkedYAMLError) and e.problem and mark is not None:
            why = f"{type(e).__name__}: {e.problem} at line {mark.line + 2}"  # a file line: 1-based, after "---"
        else:
            why = error_reason(e)
        return text, _FM_KEPT.format(f"YAML error: {why}")
    if meta is None:  # an empty block ("---\n---"): front matter with nothing in it
        meta = {}
    if not isinstance(meta, dict):
        return text, _FM_KEPT.format(f"YAML {type(meta).__name__}, not a mapping")
    title = meta.get("title")
    ok = isinstance(title, (str, int, float, dt.date)) and not isinstance(title, bool)
    title = one_line(str(title)) if ok else ""
    block = text[:end]
    blank = re.sub(r"[^\r\n]", " ", block)  # keeps every line break: whitespace-only lines
    if not title:
        return blank + text[end:], "front matter without a title: excluded"
    lead = "\ufeff" if block.startswith("\ufeff") else ""  # kept: a heading after it is one (fragments.lines_of)
    title = title[: len(block) - len(lead) - 3]  # room for "# " and "\n": a pathological title is cut
    heading = f"{lead}# {title}\n"
    return heading + blank[len(heading) :] + text[end:], "front matter: title taken as the document title"

"""Record formats, one record per line: CSV rows as table rows, JSON and JSON Lines flattened to
`key.path = value` lines (depth-limited).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from typing import Iterator

from ...params import CorpusParams
from .base import Stop, Text, decode_text, error_reason, join_notes, one_line, row_line


@contextlib.contextmanager
def _csv_field_limit(n: int) -> Iterator[None]:
    old = csv.field_size_limit(n)
    try:
        yield
    finally:
        csv.field_size_limit(old)


def load_csv(data: bytes, p: CorpusParams) -> Text:
    text, note = decode_text(data, p)
    try:
        dialect = csv.Sniffer().sniff(text[:16384], delimiters=",;\t|")
    except csv.Error:  # one column, or nothing to go on: plain comma-separated
        dialect = csv.excel
    header: list[str] | None = None
    lines: list[str] = []
    size = 0
    # a cell may be as long as the text bound allows (the csv module's default stops at 128 KiB)
    with _csv_field_limit(max(p.max_doc_chars, csv.field_size_limit())):
        for row in csv.reader(io.StringIO(text, newline=""), dialect):
            cells = [one_line(c) for c in row]
            if not any(cells):  # a blank line is not a record
                continue
            if header is None:
                header = cells
                continue
            line = row_line(f"Row {len(lines) + 1}", cells, header)
            lines.append(line or "")
            size += len(lines[-1]) + 1
            if size > p.max_doc_chars:
                raise Stop("too_large", f"text is over max_doc_chars={p.max_doc_chars:,} after {len(lines):,} rows")
    if header is not None and not lines:  # a single record: nothing to name its columns by
        lines = [row_line("Row 1", header) or ""]
        note = join_notes(note, "one row only, read as data without a header")
    return Text([(None, "\n".join(lines))], note=note, empty="no non-empty rows")


# --------------------------------------------------------------------------- json, jsonl

# Keys printed bare in a path; anything else (dots, brackets, "=", edge spaces) is JSON-quoted.
_BARE_KEY = re.compile(r'[^\s.\[\]="](?:[^\r\n.\[\]="]*[^\s.\[\]="])?')


# what a reader of the loaded text tells a JSON document and a leaf line by: its file name, and the
# "key.path = " that `_flatten_json` writes before a leaf's value ("[11].text = ", "steps[0].step = ")
JSON_FILE = r"(?i)\.jsonl?$"
LEAF_PATH = r"^((?:\[\d+\]|[\w-]+)(?:\.[\w-]+|\[[^\]\n]*\])+ = )\S"
# ... and what a reader matches of those lines: a key path ("4217[8].numeric"); a line's last key and
# its value; a text that is only leaf lines; a window's run of one array's element lines (the
# currencies of an ISO 4217 list); the path of the element a line belongs to
KEY_PATH = r"[\w\[\].-]+"
LEAF_LINE = re.compile(r"^\s*(?:\S*?[.\]])?([\w-]+) = (.*)$", re.S)
LEAF_LINES = rf"^(?:\s*{KEY_PATH} = [^\n]*\n)+\s*{KEY_PATH} = [^\n]*\s*$"
ELEMENT_LINES = r"^[^\n]*\n(?:[^\n=]*\[\d+\][^\n=]* = [^\n]*\n)+[^\n]*$"
ELEMENT = re.compile(r"^\s*(.*\[\d+\])")


class _TooDeep(Exception):
    pass


def _key_path(path: str, key: str) -> str:
    if _BARE_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _leaf(v: object) -> str:
    return one_line(v) if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _flatten_json(value: object, prefix: str, p: CorpusParams, out: list[str], size: int = 0) -> int:
    """One `path = value` line per leaf, iteratively (no recursion limit); returns the text size.

    Nesting is bounded by json_max_depth; the text by max_doc_chars, checked as it grows because
    every leaf repeats its whole path and so the text can far outgrow the file.
    """
    stack: list[tuple[str, object, int]] = [(prefix, value, 0)]
    while stack:
        path, v, depth = stack.pop()
        if isinstance(v, (dict, list)) and depth >= p.json_max_depth:
            raise _TooDeep(f"JSON nested deeper than {p.json_max_depth}")
        if isinstance(v, dict) and v:
            stack.extend(reversed([(_key_path(path, str(k)), x, depth + 1) for k, x in v.items()]))
        elif isinstance(v, list) and v:
            stack.extend(reversed([(f"{path}[{i}]", x, depth + 1) for i, x in enumerate(v)]))
        else:
            out.append(f"{path} = {_leaf(v)}".rstrip() if path else _leaf(v))
            size += len(out[-1]) + 1
            if size > p.max_doc_chars:
                limit = f"max_doc_chars={p.max_doc_chars:,}"
                raise Stop("too_large", f"text is over {limit} after {len(out):,} JSON values")
    return size


def _parse_json(text: str, max_depth: int) -> object:
    try:
        return json.loads(text)
    except RecursionError:  # the C parser recurses once per level: ~100,000 "[" exhaust it
        raise _TooDeep(f"JSON nested deeper than {max_depth} (the parser hit Python's recursion limit)") from None


def load_json(data: bytes, p: CorpusParams) -> Text:
    text, note = decode_text(data, p)
    out: list[str] = []
    try:
        _flatten_json(_parse_json(text, p.json_max_depth), "", p, out)
    except _TooDeep as e:
        raise Stop("error", str(e)) from None
    except ValueError as e:
        raise Stop("error", f"json parse failed: {error_reason(e)}") from None
    return Text([(None, "\n".join(out))], note=note, empty="JSON holds no values")


def load_jsonl(data: bytes, p: CorpusParams) -> Text:
    text, note = decode_text(data, p)
    out: list[str] = []
    n_lines, bad, size = 0, [], 0
    for i, raw in enumerate(text.split("\n")):  # not splitlines: U+2028 is legal inside JSON strings
        if not raw.strip():
            continue
        n_lines += 1
        try:
            lines: list[str] = []
            size = _flatten_json(_parse_json(raw, p.json_max_depth), f"[{i}]", p, lines, size)
            out.extend(lines)
        except (ValueError, _TooDeep) as e:
            bad.append(f"line {i + 1}: {e if isinstance(e, _TooDeep) else error_reason(e)}")
    if bad and len(bad) == n_lines:
        raise Stop("error", f"none of {n_lines:,} lines is valid JSON (first: {bad[0]})")
    if bad:
        note = join_notes(note, f"{len(bad):,} of {n_lines:,} lines are not valid JSON, skipped (first: {bad[0]})")
    return Text([(None, "\n".join(out))], note=note, empty="no JSON lines")

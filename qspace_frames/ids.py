"""Content-addressed identifiers.

Every id is a prefix plus the first 20 hex digits of a SHA-256 over canonical JSON
(sorted keys, no whitespace), so ids are stable across machines, processes and Polars
versions. Never use Polars row hashes for identity: they change between releases.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

import polars as pl

ID_HEX = 20


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the one serialisation ids are taken over."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def file_sha256(path) -> str:
    """SHA-256 of a file's bytes, read in 1 MB pieces (never whole)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def content_id(prefix: str, obj: Any) -> str:
    return f"{prefix}_{sha256_hex(canonical_json(obj))[:ID_HEX]}"


def doc_id(file_sha256: str) -> str:
    return content_id("doc", {"sha256": file_sha256})


def ids_for_rows(prefix: str, rows: Iterable[tuple]) -> list[str]:
    return [content_id(prefix, list(r)) for r in rows]


def _json_text(e: pl.Expr, dtype: pl.DataType, control: bool = True) -> pl.Expr:
    """An expression's values as canonical JSON text, built in Polars (the bytes `canonical_json` gives)."""
    if isinstance(dtype, pl.List):
        items = e.list.eval(_json_text(pl.element(), dtype.inner, control)).list.join(",")
        out = pl.lit("[") + items + pl.lit("]")
    elif dtype == pl.String:
        esc = e.str.replace_all("\\", "\\\\", literal=True).str.replace_all('"', '\\"', literal=True)
        for ch, rep in _CONTROL if control else ():
            esc = esc.str.replace_all(ch, rep, literal=True)
        out = pl.lit('"') + esc + pl.lit('"')
    elif dtype.is_integer():
        out = e.cast(pl.String)
    elif dtype == pl.Boolean:
        out = pl.when(e).then(pl.lit("true")).otherwise(pl.lit("false"))
    else:
        raise TypeError(f"id_expr: cannot hash values of type {dtype}; hash text, integers, booleans or lists of them")
    return pl.when(e.is_null()).then(pl.lit("null")).otherwise(out)


# json.dumps escapes these control characters so; everything else is kept as is (ensure_ascii=False)
_CONTROL = [("\b", "\\b"), ("\f", "\\f"), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")] + [
    (chr(i), f"\\u{i:04x}") for i in range(32) if chr(i) not in "\b\f\n\r\t"
]


def id_expr(prefix: str, *cols: str, schema: dict | None = None) -> pl.Expr:
    """Content id over the named columns, equal to `content_id(prefix, [values...])`.

    The canonical JSON is assembled by Polars string expressions; only the SHA-256 is a Python
    call, once per batch over the whole column (Polars has no SHA-256 expression).
    """

    def _hash(s: pl.Series) -> pl.Series:
        # UTF-8 bytes straight from Polars (no str.encode per row); the prefix and cut in Polars
        h = hashlib.sha256
        digests = pl.Series([h(b).hexdigest() for b in s.cast(pl.Binary).to_list()], dtype=pl.String)
        return f"{prefix}_" + digests.str.slice(0, ID_HEX)

    def _batch(s: pl.Series) -> pl.Series:
        df = s.struct.unnest()

        # escaping control characters is costly and rarely needed: only when the batch has any
        def has_control(col: pl.Series) -> bool:
            if isinstance(col.dtype, pl.List):
                return has_control(col.explode())
            return col.dtype == pl.String and bool(col.str.contains(r"[\x00-\x1f]").any())

        control = any(has_control(df[c]) for c in cols)
        parts = [_json_text(pl.col(c), df.schema[c], control) for c in cols]
        text = df.select(pl.concat_str([pl.lit("["), pl.concat_str(parts, separator=","), pl.lit("]")]))
        return _hash(text.to_series())

    return pl.struct(cols).map_batches(_batch, return_dtype=pl.String)


def text_sha_expr(col: str) -> pl.Expr:
    """SHA-256 hex of a text column, batch-wise (UTF-8 bytes taken from Polars, no per-row encode)."""
    h = hashlib.sha256
    return pl.col(col).map_batches(
        lambda s: pl.Series([h(b).hexdigest() if b is not None else None for b in s.cast(pl.Binary).to_list()], dtype=pl.String),
        return_dtype=pl.String,
    )

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


def content_id(prefix: str, obj: Any) -> str:
    return f"{prefix}_{sha256_hex(canonical_json(obj))[:ID_HEX]}"


def doc_id(file_sha256: str) -> str:
    return content_id("doc", {"sha256": file_sha256})


def ids_for_rows(prefix: str, rows: Iterable[tuple]) -> list[str]:
    return [content_id(prefix, list(r)) for r in rows]


def id_expr(prefix: str, *cols: str) -> pl.Expr:
    """Vectorised-by-batch content id over the named columns (hashlib over each row's values).

    A Python UDF is unavoidable here (Polars has no SHA-256 expression); it runs once per
    batch over whole columns.
    """

    def _batch(s: pl.Series) -> pl.Series:
        rows = zip(*(s.struct.field(c).to_list() for c in cols))
        return pl.Series(ids_for_rows(prefix, rows), dtype=pl.String)

    return pl.struct(cols).map_batches(_batch, return_dtype=pl.String)


def text_sha_expr(col: str) -> pl.Expr:
    """SHA-256 hex of a text column, batch-wise."""
    return pl.col(col).map_batches(
        lambda s: pl.Series([sha256_hex(t) if t is not None else None for t in s.to_list()], dtype=pl.String),
        return_dtype=pl.String,
    )

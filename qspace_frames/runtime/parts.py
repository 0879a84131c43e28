"""Per-document parts: a per-document stage's rows of one document, kept for the next run.

The per-document stages (load, fragments, affordances, the BM25 chunks) give the same rows for a
document whatever else is in the corpus. So each document's rows are kept in the store as a part,
keyed by what they are a function of: the stage, its code version and the parameters it reads (the
`tag`), and the document's own input rows (its bytes and format for loading, its pages for the
fragments, and so on). A run over a corpus that grew by one file computes that file's rows and reads
every other document's from its part; the stage's artifact is then assembled from the parts in
document order, the same rows in the same order as a run that computed everything, so its bytes,
content hashes and id are those of a fresh run.

Layout: <store>/parts/<stage>/<key[:2]>/<key>.parquet, one file per part, written to a temporary
name and renamed into place (two runs writing the same part write the same bytes; a killed run
leaves at most a temporary file, which no reader sees). A part that cannot be read is computed
again.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator

import polars as pl

from ..ids import sha256_hex
from .shards import run_tasks
from .store import frame_hash

PARTS = "parts"  # the folder of the parts in a store
# threads reading parts: a part is a small file, so a rerun that reuses 510 documents is mostly
# opening files, which Polars does without the GIL (x1's fragments parts: 0.76-1.19 s in one
# thread, 0.40 s in four, 0.34 s in eight, measured)
PART_READERS = 4


@dataclass
class Parts:
    """The parts of one per-document stage (`tag`: stage, code version, parameters), with what a
    run did: documents read from a part (`reused`), computed, and the part of every document
    (`keys`: doc_id -> key)."""

    root: Path  # <store>/parts/<stage>
    tag: str
    reused: int = 0
    computed: int = 0
    keys: dict[str, str] = field(default_factory=dict)

    def key(self, fingerprint: str) -> str:
        """The part of the document whose input rows have this fingerprint."""
        return sha256_hex(f"{self.tag}\n{fingerprint}")[:40]

    def get(self, key: str) -> pl.DataFrame | None:
        path = part_path(self.root, key)
        if not path.is_file():
            return None
        try:
            return pl.read_parquet(path)
        except Exception:  # a damaged part is computed again, never trusted
            return None

    def get_many(self, keys: list[str]) -> list[pl.DataFrame | None]:
        """`get` of each key, in order, read side by side."""
        if len(keys) < 2:
            return [self.get(k) for k in keys]
        with ThreadPoolExecutor(PART_READERS) as readers:
            return list(readers.map(self.get, keys))

    def put(self, key: str, rows: pl.DataFrame) -> None:
        put(self.root, key, rows)

    def record(self, doc: str, key: str, reused: bool) -> None:
        self.keys[doc] = key
        if reused:
            self.reused += 1
        else:
            self.computed += 1


def part_path(root: Path, key: str) -> Path:
    return root / key[:2] / f"{key}.parquet"


def put(root: Path, key: str, rows: pl.DataFrame) -> None:
    """Keep a document's rows as the part `key` under `root`: written aside, then renamed into place."""
    path = part_path(root, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{key}-{os.getpid()}.tmp")
    try:
        rows.write_parquet(tmp, statistics=False)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _computed_and_kept(fn: Callable, root: Path, keys: dict[str, str], *frames: pl.DataFrame) -> pl.DataFrame:
    """`fn(*frames)`, each document's rows kept as its part (`keys`: doc_id -> key); a pool task,
    so the parts are written where the rows are computed, in parallel."""
    rows = fn(*frames)
    made = rows.partition_by("doc_id", maintain_order=True, as_dict=True) if rows.height else {}
    for doc, key in keys.items():
        put(root, key, made.get((doc,), rows.clear()))
    return rows


def fingerprints(frames: tuple[pl.DataFrame, ...], upstream: dict[str, str]) -> dict[str, str]:
    """doc_id -> what a document's input rows are a function of: the part its inputs were
    assembled from upstream (`upstream`, doc_id -> key: the key names the stage, its code, its
    parameters and its own inputs, down to the file's bytes), else a content hash of its rows in
    each of `frames` (sorted by doc_id)."""
    docs = frames[0]["doc_id"].unique(maintain_order=True).to_list()
    if all(d in upstream for d in docs):
        return {d: upstream[d] for d in docs}
    hashes: dict[str, list[str]] = {}
    for df in frames:
        for (doc,), rows in df.partition_by("doc_id", maintain_order=True, as_dict=True).items():
            hashes.setdefault(doc, []).append(frame_hash(rows))
    return {doc: sha256_hex("\n".join(h)) for doc, h in hashes.items()}


def per_document(
    shards: Iterable[tuple[pl.DataFrame, ...]],
    fn: Callable[..., pl.DataFrame],
    workers: int,
    parts: Parts | None,
    upstream: dict[str, str] | None = None,
) -> Iterator[pl.DataFrame]:
    """`fn(*shard)` for each shard (frames of whole documents, sorted by doc_id, the first holding
    every document of the shard), in the pool of `workers`; with `parts`, each document's rows are
    read from its part when the store holds one, and only the others are computed (and kept as
    parts). Rows come in document order, each document's as computing it gives them: the rows of
    computing the whole shard. `upstream` (doc_id -> part key) names each document's inputs by the
    parts they were assembled from (`fingerprints`)."""
    if parts is None:
        yield from run_tasks(fn, shards, workers)
        return
    pending: list[tuple[list[str], dict[str, str], dict[str, pl.DataFrame]]] = []

    def missing() -> Iterator[tuple]:
        for frames in shards:
            docs = frames[0]["doc_id"].unique(maintain_order=True).to_list()
            keys = {d: parts.key(f) for d, f in fingerprints(frames, upstream or {}).items()}
            have = {d: rows for d, rows in zip(docs, parts.get_many([keys[d] for d in docs])) if rows is not None}
            pending.append((docs, keys, have))
            todo = [d for d in docs if d not in have]
            yield ({d: keys[d] for d in todo}, *(f.filter(pl.col("doc_id").is_in(todo)) for f in frames))

    for computed in run_tasks(partial(_computed_and_kept, fn, parts.root), missing(), workers):
        docs, keys, have = pending.pop(0)
        made = computed.partition_by("doc_id", maintain_order=True, as_dict=True) if computed.height else {}
        out = []
        for d in docs:
            parts.record(d, keys[d], reused=d in have)
            out.append(have[d] if d in have else made.get((d,), computed.clear()))
        yield pl.concat(out, how="vertical_relaxed") if out else computed.clear()

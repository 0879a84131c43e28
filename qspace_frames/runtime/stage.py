"""The stage contract and the generic runner.

A stage declares what it reads (input tables, and sources the run provides such as the corpus
files or the gold file), the parameter keys it reads, the tables it writes with their schemas,
and a function over them. The runner hands the function exactly that: each input as a stored
`Table` (or the source's value), a view of the parameters that refuses undeclared keys, and the
`Runtime` (workers, engine). The function returns {table: frame} or yields (table, frame) pairs,
each table its own stream; every frame is checked against the declared schema before it is
written, and a declared table that got no rows is written empty with its schema.

The artifact id hashes what the function is actually given: its inputs' ids, its parameters, and
its code (the function and the modules and helpers it names) with docstrings and comments
stripped, so editing an adapter recomputes its stage and fixing a typo in a comment does not.
Models: Kedro's runner (nodes never see the catalog) and Hamilton's cache key (code version with
docs stripped, dependency data versions).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import json
import os
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import polars as pl

from ..ids import sha256_hex


@dataclass(frozen=True)
class Runtime:
    """How a stage runs (never what it computes: no artifact id or byte depends on it)."""

    workers: int = 1
    engine: str = "local"
    parts: Any = None  # runtime.parts.Parts of a per-document stage: its documents' rows kept for the next run


@dataclass(frozen=True)
class Stage:
    name: str
    doc: str
    inputs: tuple[str, ...]  # "stage/table" for a stored table, a bare name for a source of the run ("files", "gold", ...)
    params: tuple[str, ...]  # parameter sections ("trees") or single keys ("evaluation.chunk_tokens")
    outputs: dict[str, Any]  # table -> schema, or a function of the stage's parameters giving it
    fn: Callable  # fn(inputs, p, rt) -> {table: frame} | Iterator[(table, frame)]
    code: tuple = ()  # the modules and helper functions fn runs: part of the artifact id

    @property
    def code_version(self) -> str:
        return sha256_hex("".join(code_hash(c) for c in (self.fn, *self.code)))[:16]

    def schemas(self, p) -> dict[str, dict]:
        return {name: s(p) if callable(s) else s for name, s in self.outputs.items()}


@functools.lru_cache(maxsize=None)
def code_hash(obj) -> str:
    """Hash of a module's or function's code without its docstrings and comments (the syntax
    tree written back as text), so only a change of behaviour changes it. A package is hashed
    with every module in it."""
    if hasattr(obj, "__path__"):
        files = sorted(f for d in obj.__path__ for f in Path(d).rglob("*.py"))
        return sha256_hex("".join(f"{f.name}:{_source_hash(f.read_text(encoding='utf-8'))}" for f in files))
    return _source_hash(textwrap.dedent(inspect.getsource(obj)))


# Stripping the package's code (parse, drop docstrings, write back: ~0.8 s for all of it) would be
# paid by every process that names an artifact: a run, each of its kernels, every `qspace ask`. A
# source text's stripped hash never changes, so it is remembered by the text's own hash, in memory
# and in the user's cache folder (not in a store: it is no artifact, and serves every store).
_SOURCE_HASHES: dict[str, str] = {}
_MEMO_FILE: list[Path] = []  # the file remembered in, once read
_MEMO_LOCK = threading.Lock()


def code_hash_cache() -> Path:
    """$XDG_CACHE_HOME/qspace-frames/code_hashes.json (default ~/.cache)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "qspace-frames" / "code_hashes.json"


def remember_code_hashes(path: Path) -> None:
    """Keep the stripped-code hashes in the JSON file `path` (raw text's hash -> stripped hash)."""
    with _MEMO_LOCK:
        _MEMO_FILE[:] = [path]
        with contextlib.suppress(OSError, ValueError):
            _SOURCE_HASHES.update(json.loads(path.read_text(encoding="utf-8")))


def _source_hash(source: str) -> str:
    if not _MEMO_FILE:
        remember_code_hashes(code_hash_cache())
    raw = sha256_hex(source)
    if raw not in _SOURCE_HASHES:
        stripped = sha256_hex(_stripped(source))
        with _MEMO_LOCK, contextlib.suppress(OSError):  # best effort: a memo not written is only slower next time
            _SOURCE_HASHES[raw] = stripped
            memo = _MEMO_FILE[0]
            tmp = memo.with_name(f".{memo.name}-{os.getpid()}-{threading.get_ident()}")
            memo.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(_SOURCE_HASHES, sort_keys=True), encoding="utf-8")
            os.replace(tmp, memo)
    return _SOURCE_HASHES[raw]


# CPython 3.11 counts the AST constructor's recursion depth per interpreter, not per thread: two
# threads parsing at once can fail with "SystemError: AST constructor recursion depth mismatch"
# (python/cpython#106905). A run hashes stage code in its main thread while its render threads read
# notebooks' parameters cells, so every parse in the package holds this lock.
_AST_LOCK = threading.Lock()


def syntax_tree(source: str) -> ast.Module:
    """`ast.parse`, one thread at a time."""
    with _AST_LOCK:
        return ast.parse(source)


def _stripped(source: str) -> str:
    tree = syntax_tree(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


class StageOutputError(ValueError):
    """A stage wrote a table it does not declare, or a frame whose columns differ from the schema."""


def run(stage: Stage, inputs: dict[str, Any], p, rt: Runtime) -> Iterator[tuple[str, pl.DataFrame]]:
    """The stage's output frames as (table, frame) pairs, each checked against its schema."""
    schemas = stage.schemas(p)
    out = stage.fn(inputs, p, rt)
    for name, df in out.items() if isinstance(out, dict) else out:
        if name not in schemas:
            raise StageOutputError(f"stage {stage.name!r} wrote table {name!r}, which it does not declare (declared: {', '.join(schemas)})")
        want, got = schemas[name], dict(df.schema)
        if list(got) != list(want) or any(got[k] != v for k, v in want.items()):
            diff = {k: (str(want.get(k)), str(got.get(k))) for k in dict.fromkeys([*want, *got]) if want.get(k) != got.get(k)}
            raise StageOutputError(
                f"stage {stage.name!r}, table {name!r}: columns differ from the declared schema "
                f"(column: (declared, written)) {diff or 'same columns, another order'}"
            )
        yield name, df

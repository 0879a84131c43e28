"""Executed notebooks kept in the store, so a run under another name reuses them.

A run's rendering (its executed notebooks and the files they wrote: exports, charts, tree
drawings) is a function of the notebooks, the code, the parameters, the corpus, the gold and the
dictionary; the run's name only appears in the cell papermill injects. So after a complete run
the rendering is kept under store/renders/<key>, the key being the last notebook's chained key
(it covers every notebook and all they depend on), and a later run with the same key under any
name reuses it instead of starting kernels: each notebook gets its own run's parameters cell and
is exported to HTML again. Published like an artifact: written aside, renamed into place; its
files are hard links to the run folder's, their SHA-256 checked before a reuse (`find`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..ids import file_sha256
from ..runtime.store import MANIFEST, publish_folder

RENDERS = "renders"
NOTEBOOKS = "notebooks"  # the executed notebooks, apart from the files they wrote
# What the run itself writes, not its notebooks: never part of a rendering.
RUN_FILES = frozenset(
    {
        "index.html",
        "dashboard.html",
        "final_report.md",
        "run_summary.md",
        "run_metadata.json",
        "artifacts.json",
        "artifacts.lock",
        "stage_log.jsonl",
        "notebook_keys.json",
        "timings.json",
    }
)


def _written(run_dir: Path, notebooks: list[str]) -> list[str]:
    """The files of the run folder its notebooks wrote (relative, sorted): everything but the run's
    own files, the notebooks and their HTML pages."""
    pages = {f"{n}.{ext}" for n in notebooks for ext in ("ipynb", "html")}
    return sorted(
        p.relative_to(run_dir).as_posix()
        for p in run_dir.rglob("*")
        if p.is_file() and p.relative_to(run_dir).as_posix() not in RUN_FILES | pages and not p.name.endswith((".tmp", ".link"))
    )


def clear(run_dir: Path, notebooks: list[str]) -> None:
    """Remove what notebooks wrote into the run folder, before all of them are rendered (or a
    rendering is copied): the folder then holds this rendering's files and no file left by an
    earlier one."""
    for rel in _written(run_dir, notebooks):
        (run_dir / rel).unlink()


def keep(store: Path, key: str, run_dir: Path, keys: dict[str, dict]) -> Path:
    """Keep the rendering of a complete run (`keys`: notebook -> {"key", "artifacts"}) under its key;
    a rendering already kept is left as it is. The files are hard links to the run folder's (every
    writer of a run's files replaces a file, never rewrites it), the notebooks copies (they are
    rewritten in place); the manifest holds the SHA-256 of each, checked before any reuse."""
    final = store / RENDERS / key
    if (final / MANIFEST).is_file():
        return final
    tmp = final.parent / f".tmp-{key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    for rel in _written(run_dir, list(keys)):
        _share(run_dir / rel, tmp / rel)
    (tmp / NOTEBOOKS).mkdir(parents=True, exist_ok=True)
    for name in keys:
        shutil.copyfile(run_dir / f"{name}.ipynb", tmp / NOTEBOOKS / f"{name}.ipynb")
    digests = {p.relative_to(tmp).as_posix(): file_sha256(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
    (tmp / MANIFEST).write_text(json.dumps({"notebooks": keys, "files": digests}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    publish_folder(tmp, final)
    return final


class DamagedRendering(ValueError):
    pass


def find(store: Path, key: str) -> dict | None:
    """The manifest of the rendering kept under `key`, or None; a kept file (or notebook) whose
    bytes changed, or a manifest that does not read, is an error (DamagedRendering)."""
    src = store / RENDERS / key
    if not (src / MANIFEST).is_file():
        return None
    try:
        manifest = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
        digests, names = dict(manifest["files"]), list(manifest["notebooks"])
    except (ValueError, KeyError, TypeError) as e:
        raise DamagedRendering(f"{src / MANIFEST}: {e}") from None
    for rel in [*digests, *(f"{NOTEBOOKS}/{n}.ipynb" for n in names)]:
        if not (src / rel).is_file() or file_sha256(src / rel) != digests.get(rel):
            raise DamagedRendering(f"{src / rel}: not the bytes that were kept")
    return manifest


def discard(store: Path, key: str) -> None:
    """Remove the rendering kept under `key` (a damaged one: the next complete run keeps anew)."""
    shutil.rmtree(store / RENDERS / key, ignore_errors=True)


def restore(store: Path, key: str, run_dir: Path, manifest: dict) -> list[Path]:
    """Put the rendering kept under `key` (its manifest from `find`) into the run folder, which
    then holds exactly its files (any other file a notebook of an earlier run there wrote is
    removed); returns the executed notebooks' paths in the run folder, for the caller to give
    each its parameters cell and HTML page."""
    src, names = store / RENDERS / key, list(manifest["notebooks"])
    clear(run_dir, names)
    for rel in manifest["files"]:
        if not rel.startswith(f"{NOTEBOOKS}/"):
            _share(src / rel, run_dir / rel)
    for name in names:
        shutil.copyfile(src / NOTEBOOKS / f"{name}.ipynb", run_dir / f"{name}.ipynb")
    return [run_dir / f"{name}.ipynb" for name in names]


def _share(src: Path, dest: Path) -> None:
    """`dest` becomes `src`'s bytes in one step: a hard link (no second copy on disk), or a copy
    where the two folders are on different file systems."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.link")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)

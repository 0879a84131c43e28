"""Executed notebooks kept in the store, so a run under another name reuses them.

A run's rendering (its executed notebooks and the files they wrote: exports, charts, tree
drawings) is a function of the notebooks, the code, the parameters, the corpus, the gold and the
dictionary; the run's name only appears in the cell papermill injects. So after a complete run
the rendering is kept under store/renders/<key>, the key being the last notebook's chained key
(it covers every notebook and all they depend on), and a later run with the same key under any
name reuses it instead of starting kernels: each notebook gets its own run's parameters cell and
is exported to HTML again. Published like an artifact: written aside, renamed into place; its
files are hard links to the run folder's, their SHA-256 checked before a reuse.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

RENDERS = "renders"
MANIFEST = "manifest.json"
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
    rewritten in place); the manifest holds each file's SHA-256, checked before any reuse."""
    final = store / RENDERS / key
    if (final / MANIFEST).is_file():
        return final
    tmp = final.parent / f".tmp-{key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    files = {}
    for rel in _written(run_dir, list(keys)):
        _share(run_dir / rel, tmp / rel)
        files[rel] = _digest(tmp / rel)
    for name in keys:
        (tmp / NOTEBOOKS).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run_dir / f"{name}.ipynb", tmp / NOTEBOOKS / f"{name}.ipynb")
    manifest = {"notebooks": keys, "files": files}
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    try:
        os.rename(tmp, final)
    except OSError:  # another run kept the same rendering first
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def find(store: Path, key: str) -> dict | None:
    """The manifest of the rendering kept under `key`, or None."""
    path = store / RENDERS / key / MANIFEST
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def discard(store: Path, key: str) -> None:
    """Remove the rendering kept under `key` (a damaged one: the next complete run keeps anew)."""
    shutil.rmtree(store / RENDERS / key, ignore_errors=True)


class DamagedRendering(ValueError):
    pass


def restore(store: Path, key: str, run_dir: Path, manifest: dict) -> list[Path]:
    """Put the kept rendering into the run folder, which then holds exactly its files (any other
    file a notebook of an earlier run there wrote is removed); returns the executed notebooks'
    paths in the run folder, for the caller to give each its parameters cell and HTML page. A
    kept file whose bytes changed is an error (DamagedRendering) before the folder is touched."""
    src = store / RENDERS / key
    for rel, digest in manifest["files"].items():
        if not (src / rel).is_file() or _digest(src / rel) != digest:
            raise DamagedRendering(f"{src / rel}: not the bytes that were kept")
    clear(run_dir, list(manifest["notebooks"]))
    for rel in manifest["files"]:
        _share(src / rel, run_dir / rel)
    out = []
    for name in manifest["notebooks"]:
        shutil.copyfile(src / NOTEBOOKS / f"{name}.ipynb", run_dir / f"{name}.ipynb")
        out.append(run_dir / f"{name}.ipynb")
    return out


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


def _digest(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()

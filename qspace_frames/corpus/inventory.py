"""Stage 1: corpus discovery and the inventory.

`discover` walks a folder and fingerprints every candidate file (path, size, SHA-256); the
fingerprint is what makes every later artifact content-addressed. `choose_corpus` picks a folder
when the user names none. `inventory` joins discovery with load results and adds domain hints.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..ids import content_id, doc_id, file_sha256
from ..params import CorpusParams
from ..schemas import FILES, INVENTORY, conform


def _skip_dir(name: str, p: CorpusParams) -> bool:
    return name in p.skip_dirs or (p.skip_hidden and name.startswith(".")) or name.endswith(".egg-info")


def _ext(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""


def walk(root: Path, p: CorpusParams) -> list[Path]:
    """Every regular file under root (symlinked files followed, symlinked folders not: no loops)."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not _skip_dir(d, p))
        for name in sorted(filenames):
            if p.skip_hidden and name.startswith("."):
                continue
            found.append(Path(dirpath) / name)
    return found


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
}


def discover(root: str | Path, p: CorpusParams) -> pl.DataFrame:
    """One row per file under root: relative path, extension, size, SHA-256 and doc_id."""
    root = Path(root)
    rows = []
    for path in walk(root, p):
        rel = path.relative_to(root).as_posix()
        ext, size, sha, err = _ext(path.name), None, None, None
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes in the name: record it escaped, never read it
            rel = os.fsencode(rel).decode("utf-8", errors="backslashreplace")
            err = "file name is not valid UTF-8 (shown with \\x escapes): not read; rename the file"
        try:
            st = path.stat() if err is None else None  # follows a symlink; a loop raises OSError here
            if st is not None and not stat.S_ISREG(st.st_mode):  # never opened: a FIFO would block
                err = f"not a regular file ({_KINDS.get(stat.S_IFMT(st.st_mode), 'special file')})"
            elif st is not None:
                size = st.st_size
                sha = file_sha256(path)
        except OSError as e:
            why = f"{type(e).__name__}: {e.strerror or e}"
            broken = path.is_symlink() and not os.path.exists(path)  # dangling, or a loop
            err = f"cannot read: broken symbolic link ({why})" if broken else f"cannot read: {why}"
        did = doc_id(sha) if sha else content_id("doc", {"unreadable": rel})
        rows.append({"path": rel, "ext": ext, "bytes": size, "sha256": sha, "doc_id": did, "discover_error": err})
    df = pl.DataFrame(rows, schema=FILES) if rows else pl.DataFrame(schema=FILES)
    return df.sort("path")


@dataclass
class CorpusChoice:
    corpus: Path
    reason: str
    candidates: list[tuple[str, int]] = field(default_factory=list)


def count_documents(folder: Path, p: CorpusParams) -> int:
    return sum(1 for f in walk(folder, p) if _ext(f.name) in p.extensions)


def choose_corpus(project_root: str | Path, p: CorpusParams) -> CorpusChoice:
    """With no corpus named: the top-level folder holding the most documents.

    The project's own folders (reports, notebooks, tests, the package, params) are never
    candidates, so the workbench does not ingest its own README or outputs.
    """
    root = Path(project_root)
    cands = []
    for d in sorted(root.iterdir()):
        if d.is_dir() and not d.is_symlink() and not _skip_dir(d.name, p) and d.name not in p.project_skip_dirs:
            n = count_documents(d, p)
            if n:
                cands.append((d.name, n))
    if not cands:
        raise FileNotFoundError(f"{root}: no folder with documents ({', '.join(p.extensions)}) found; pass --corpus")
    cands.sort(key=lambda c: (-c[1], c[0]))
    best = cands[0]
    return CorpusChoice(root / best[0], f"holds the most documents ({best[1]}); ties broken by name", cands)


def domain_hints(pages: pl.LazyFrame, p: CorpusParams) -> pl.LazyFrame:
    """Per document, the domains whose keywords occur at least `domain_hint_min_hits` times, most hits first."""
    lower = pl.col("text").str.to_lowercase()
    hits = [
        lower.str.count_matches(r"\b(?:" + "|".join(_re_escape(k) for k in kws) + r")\b").sum().alias(dom)
        for dom, kws in sorted(p.domain_hints.items())
    ]
    doms = sorted(p.domain_hints)
    return (
        pages.group_by("doc_id")
        .agg(hits)
        .unpivot(index="doc_id", on=doms, variable_name="domain", value_name="hits")
        .filter(pl.col("hits") >= p.domain_hint_min_hits)
        .sort(["doc_id", "hits", "domain"], descending=[False, True, False])
        .group_by("doc_id", maintain_order=True)
        .agg(pl.col("domain").alias("domain_hints"))
    )


def _re_escape(s: str) -> str:
    import re

    return re.escape(s)


def inventory(files: pl.LazyFrame, loaded: pl.LazyFrame, hints: pl.LazyFrame, p: CorpusParams) -> pl.LazyFrame:
    """Every discovered file, with its load status and reason: nothing is lost. `hints` are the
    documents' `domain_hints` (a document's pages are never split, so they can be taken batch
    by batch as the pages stream by)."""
    return conform(
        files.join(loaded, on="path", how="left")
        .join(hints, on="doc_id", how="left")
        .with_columns(pl.col("domain_hints").fill_null(pl.lit([], dtype=pl.List(pl.String))))
        .sort("path"),
        INVENTORY,
    )


def changes_sentence(files: dict[str, int], documents: dict[str, int] | None = None, outcome: str = "") -> str:
    """`corpus_changes` (and, when given, the documents read from their parts or from their files,
    and the files' `load_outcome`) in words."""
    f, d = files, documents
    line = f"{_count(f['files'], 'file')}: " + ", ".join(f"{f[k]:,} {k}" for k in ("added", "changed", "removed", "unchanged"))
    parts = "its part" if d and d["reused"] == 1 else "their parts"
    line += f"; {_count(d['reused'], 'document')} read from {parts}, {d['computed']:,} read from their files" if d else ""
    return line + (f"; {outcome}" if outcome else "")


def _count(n: int, noun: str) -> str:
    """ "1 file", "4 files"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def load_outcome(inv: pl.DataFrame) -> str:
    """How an inventory's files fared, in words: "3 loaded, 4 unsupported (.rst 4)", "6 loaded, 1
    duplicate, 1 empty, 1 error, 1 unsupported (.txt 1)". A file not loaded is never silent: a
    folder of .rst notes says so on the first line of the run, not only in notebook 01."""
    counts = dict(inv.group_by("load_status").len().rows())
    said = [f"{counts.pop('loaded'):,} loaded"] if "loaded" in counts else []
    for status in sorted(counts):
        n = f"{counts[status]:,} {status}"
        if status == "unsupported":
            exts = inv.filter(pl.col("load_status") == status).group_by(pl.col("ext").fill_null("")).len().sort("ext").rows()
            n += " (" + ", ".join(f".{e} {k:,}" if e else f"no extension {k:,}" for e, k in exts) + ")"
        said.append(n)
    return ", ".join(said)


def corpus_changes(before: pl.DataFrame | None, files: pl.DataFrame) -> dict[str, int]:
    """How the discovered files (path, sha256) differ from an earlier inventory of the same run:
    paths added, paths whose bytes changed, paths removed, and the files unchanged. With no earlier
    inventory every file is added."""
    now = files.select("path", "sha256")
    if before is None:
        return {"files": now.height, "added": now.height, "changed": 0, "removed": 0, "unchanged": 0}
    both = now.join(before.select("path", pl.col("sha256").alias("_before")), on="path", how="inner")
    same = int((both["sha256"] == both["_before"]).fill_null(False).sum())
    return {
        "files": now.height,
        "added": now.height - both.height,
        "changed": both.height - same,
        "removed": before.height - both.height,
        "unchanged": same,
    }

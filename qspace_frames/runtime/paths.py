"""Where a project's runs and artifact store live on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..params import Params, ParamsError, StoreParams

REPORTS_ENV, STORE_ENV = "QSPACE_REPORTS", "QSPACE_STORE"  # where runs and the store go, overriding reports/ and store.root


def reports_root(root: Path) -> Path:
    """The folder holding the run folders: reports/ of the project, or $QSPACE_REPORTS (the test
    suite points it at a temporary folder so the repository's reports/ are never touched)."""
    return root / os.environ.get(REPORTS_ENV, "reports")


def store_root(root: Path, params: Params) -> Path:
    """The artifact store: the store.root parameter (relative to the project); $QSPACE_STORE
    replaces its default, never a folder a parameters file names."""
    default = params.store.root == StoreParams().root
    store = root / (os.environ.get(STORE_ENV, params.store.root) if default else params.store.root)
    if store.exists() and not store.is_dir():
        raise ParamsError(f"store.root: {store} is a file, not a folder for the artifact store")
    return store


def shown(path: Path, root: Path) -> str:
    """A path as a message shows it: relative to the project when it is inside it."""
    return str(path.relative_to(root) if path.is_relative_to(root) else path)


RUN_RECORD = "artifacts.json"  # reports/<run>/: the artifact of every stage the run read, its corpus and parameters


class RunRecordError(ValueError):
    """A run's record cannot be read: it is not JSON, or not a mapping with its artifacts."""


def read_run_record(run_dir: Path) -> dict:
    """reports/<run>/artifacts.json, checked: a JSON object whose "artifacts" maps stages to ids
    (an edited or truncated record would otherwise answer from another corpus, or fail deep in a
    command with a traceback)."""
    path = run_dir / RUN_RECORD
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RunRecordError(f"{path}: not a run record ({e}); run `qspace run --name {run_dir.name}` again") from None
    arts = rec.get("artifacts") if isinstance(rec, dict) else None
    if not (isinstance(arts, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in arts.items())):
        raise RunRecordError(f"{path}: not a run record (no mapping of artifacts); run `qspace run --name {run_dir.name}` again")
    return rec

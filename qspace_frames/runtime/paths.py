"""Where a project's runs and artifact store live on disk."""

from __future__ import annotations

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

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"


@pytest.fixture(scope="session")
def corpora() -> Path:
    if not CORPORA.is_dir():
        pytest.fail(f"the shared corpora are missing: expected them at {CORPORA}")
    return CORPORA


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT

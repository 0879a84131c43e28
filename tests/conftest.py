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


@pytest.fixture(scope="session")
def corpus_workbench(tmp_path_factory, root, corpora):
    """Workbench factory over the real corpora, sharing one store for the whole test session."""
    from qspace_frames.pipeline import Workbench

    d = tmp_path_factory.mktemp("corpora")
    params = d / "params.yaml"
    params.write_text(f"store:\n  root: {d / 'store'}\n")
    cache = {}

    def get(folder: str):
        if folder not in cache:
            cache[folder] = Workbench(params_file=str(params), corpus_arg=str(corpora / folder), run_name="corpora-test",
                                      project_root=root, workers=2, reports_dir=d / "reports")
        return cache[folder]

    return get

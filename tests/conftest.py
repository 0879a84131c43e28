from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
_SCRATCH: list[str] = []


def pytest_configure(config):
    """Runs, notebooks (nbval) and the CLI compute into a temporary folder, never into the
    repository's reports/ (a run folder or the default store left behind by a test)."""
    if "QSPACE_REPORTS" not in os.environ:
        d = tempfile.mkdtemp(prefix="qspace-tests-")
        _SCRATCH.append(d)
        os.environ["QSPACE_REPORTS"], os.environ["QSPACE_STORE"] = f"{d}/reports", f"{d}/store"


def pytest_unconfigure(config):
    for d in _SCRATCH:
        shutil.rmtree(d, ignore_errors=True)


# Tiers (`make test-fast` runs `-m "not slow"`): markers follow from what a test uses.
SLOW_FILES = {"test_hostile.py", "test_crash_safety.py", "test_bench.py", "test_ray.py", "test_zoo.py", "test_report.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & {"corpora", "corpus_workbench"}:
            item.add_marker("corpora")
        if "browser" in used:
            item.add_marker("browser")
        if item.path.name == "test_ray.py":
            item.add_marker("ray")
        if item.path.suffix == ".ipynb":
            item.add_marker("notebooks")
        if item.path.name in SLOW_FILES or item.get_closest_marker("notebooks") or item.get_closest_marker("corpora"):
            item.add_marker("slow")


@pytest.fixture(scope="session")
def corpora() -> Path:
    if not CORPORA.is_dir():
        pytest.skip(f"../shared/corpora is not there ({CORPORA}): the tests on real corpora need it beside the project")
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
            cache[folder] = Workbench(
                params_file=str(params),
                corpus_arg=str(corpora / folder),
                run_name="corpora-test",
                project_root=root,
                workers=2,
                reports_dir=d / "reports",
            )
        return cache[folder]

    return get

"""Crash safety: a run SIGKILLed at ten points of the store's write protocol never leaves a half
artifact, and a rerun completes to artifacts byte-identical to an uninterrupted run.

The kill points are deterministic: store.py's testing hook (QSPACE_CRASH_AT, inert unless set)
makes the pipeline process SIGKILL itself at a named point of one stage's write. Each episode
runs the whole pipeline on a small copy of the sample corpus in a fresh store, is killed, has its
store inspected, and is rerun to completion; the final store must equal a reference store written
by an uninterrupted run, file for file and byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pytest

from qspace_frames.runtime.parts import PARTS
from qspace_frames.runtime.store import CRASH_ENV, MANIFEST

ROOT = Path(__file__).resolve().parents[1]
FILES = ["policy/procurement_policy.md", "finance/budget_guidelines_fy2026.txt", "finance/approval_matrix.xlsx"]
STAGES = [
    "corpus",
    "fragments",
    "affordances",
    "prototypes",
    "classes",
    "density",
    "proximity",
    "evidence",
    "graph",
    "trees",
    "simulation",
    "chunks",
    "evaluation",
]

# (stage, point, n): every point of the write protocol, across early, middle and late stages
CRASH_POINTS = [
    ("corpus", "tmp_created", 1),  # temporary folder made, nothing in it
    ("corpus", "table_written", 1),  # one of two tables written (inventory), pages not yet
    ("corpus", "manifest_written", 1),  # everything written, nothing fsynced
    ("fragments", "synced", 1),  # durable, but not yet renamed into place
    ("fragments", "renamed", 1),  # published; the run log has not recorded it
    ("affordances", "table_written", 2),  # both tables written, no manifest
    ("prototypes", "tmp_created", 1),
    ("trees", "manifest_written", 1),
    ("simulation", "synced", 1),
    ("evaluation", "table_written", 3),  # the last stage, midway through its four tables
]

RUNNER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from qspace_frames.pipeline import Workbench
    params, corpus, reports, root, stages = sys.argv[1:6]
    wb = Workbench(params_file=params, corpus_arg=corpus, run_name="crash", project_root=Path(root),
                   reports_dir=Path(reports))
    for stage in stages.split(","):
        wb.artifact(stage)
""")


def run_pipeline(work: Path, corpus: Path, crash: str | None = None) -> int:
    """Run the pipeline in a subprocess with its store in work/store; return its exit code.

    The code and parameters run are a frozen copy (see `project`) beside the corpus, so every
    run of the test executes the same source: stage ids hash it."""
    project = corpus.parent / "project"
    params = work / "params.yaml"
    if not params.exists():
        work.mkdir(parents=True, exist_ok=True)
        params.write_text(f"store:\n  root: {work / 'store'}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    env["PYTHONPATH"] = str(project)
    if crash:
        env[CRASH_ENV] = crash
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(params), str(corpus), str(work / "reports"), str(project), ",".join(STAGES)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=project,
    )
    if proc.returncode not in (0, -signal.SIGKILL):
        raise RuntimeError(f"pipeline failed (exit {proc.returncode}, crash={crash}):\n{proc.stderr[-3000:]}")
    return proc.returncode


def store_files(store: Path) -> dict[str, bytes]:
    """Every file under the store, by relative path (temporary folders included, if any)."""
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def assert_no_partial_artifact(store: Path) -> list[str]:
    """Every visible artifact is whole; returns the temporary folders (hidden, never artifacts)."""
    from qspace_frames.runtime.store import Store

    temps = []
    parts = store / PARTS  # per-document parts: whole Parquet files, or hidden temporary ones
    for f in sorted(parts.rglob("*")) if parts.is_dir() else []:
        if f.is_file() and f.name.startswith("."):
            temps.append(f.relative_to(store).as_posix())
        elif f.is_file():
            assert f.suffix == ".parquet" and pl.read_parquet(f).height >= 0, f
    for stage_dir in sorted(p for p in store.iterdir() if p.is_dir() and p.name != PARTS) if store.is_dir() else []:
        for d in sorted(stage_dir.iterdir()):
            if d.name.startswith(".tmp-"):
                temps.append(f"{stage_dir.name}/{d.name}")
                continue
            assert d.name.startswith("art_"), d
            manifest = json.loads((d / MANIFEST).read_text(encoding="utf-8"))  # a manifest, always
            assert manifest["artifact_id"] == d.name and manifest["stage"] == stage_dir.name
            on_disk = {p.name for p in d.iterdir()}
            assert on_disk == {MANIFEST, *(f"{t}.parquet" for t in manifest["tables"])}, d
            for table, info in manifest["tables"].items():
                df = pl.read_parquet(d / f"{table}.parquet")
                assert df.height == info["rows"], (d, table)
                assert {k: str(v) for k, v in df.schema.items()} == info["columns"], (d, table)
        # the store's readers see exactly the whole artifacts
        listed = {a.artifact_id for a in Store(store).artifacts(stage_dir.name)}
        assert listed == {d.name for d in stage_dir.iterdir() if d.name.startswith("art_")}
    return temps


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("crash") / "corpus"
    for rel in FILES:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "sample_corpus" / rel, d / rel)
    project = d.parent / "project"
    shutil.copytree(ROOT / "qspace_frames", project / "qspace_frames", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "params", project / "params")
    shutil.copyfile(ROOT / "pyproject.toml", project / "pyproject.toml")
    return d


def episode(work: Path, corpus: Path, stage: str, point: str, n: int) -> dict:
    """Kill a fresh run at one point, inspect the store, rerun to completion, inspect again."""
    out: dict = {"code": run_pipeline(work, corpus, crash=f"{stage}/{point}:{n}")}
    store = work / "store"
    try:
        out["temps"] = assert_no_partial_artifact(store)
    except AssertionError as e:
        out["partial"] = f"after the kill: {e!r}"
        return out
    out["published"] = any(d.name.startswith("art_") for d in (store / stage).iterdir()) if (store / stage).is_dir() else False
    out["later"] = [s for s in STAGES[STAGES.index(stage) + 1 :] if (store / s).exists()]
    out["rerun_code"] = run_pipeline(work, corpus)
    try:
        out["temps_after"] = assert_no_partial_artifact(store)
    except AssertionError as e:
        out["partial"] = f"after the rerun: {e!r}"
        return out
    out["final"] = store_files(store)
    log = [json.loads(line) for line in (work / "reports" / "crash" / "stage_log.jsonl").read_text().splitlines()]
    out["rerun_actions"] = {e["stage"]: e["action"] for e in log[-len(STAGES) :]}
    return out


@pytest.fixture(scope="module")
def episodes(small_corpus) -> tuple[dict[str, bytes], dict[tuple, dict]]:
    """The reference run, then the ten kill-and-rerun episodes, two at a time (each is two
    Python processes that mostly wait on imports)."""
    work = small_corpus.parent / "reference"
    with ThreadPoolExecutor(max_workers=2) as ex:
        ref = ex.submit(run_pipeline, work, small_corpus)
        futures = {pt: ex.submit(episode, small_corpus.parent / "-".join(map(str, pt)), small_corpus, *pt) for pt in CRASH_POINTS}
        assert ref.result() == 0
        return store_files(work / "store"), {pt: f.result() for pt, f in futures.items()}


def test_reference_run_is_whole(episodes):
    reference, _ = episodes
    assert not any("/.tmp-" in f for f in reference)
    assert {f.split("/")[0] for f in reference} == {*STAGES, PARTS}


def test_crash_hook_is_inert_without_the_variable(tmp_path):
    from qspace_frames.runtime.store import Store

    assert CRASH_ENV not in os.environ
    art = Store(tmp_path).put("s", "art_x", {"s": pl.DataFrame({"a": [1]})}, {})  # would SIGKILL pytest otherwise
    assert art.read()["a"].to_list() == [1]


def test_a_stray_folder_without_manifest_is_replaced_not_served(tmp_path):
    from qspace_frames.runtime.store import Store

    stray = tmp_path / "s" / "art_x"  # e.g. copied by hand, half-way; never a valid artifact
    stray.mkdir(parents=True)
    (stray / "s.parquet").write_bytes(b"half")
    st = Store(tmp_path)
    assert st.get("s", "art_x") is None and st.artifacts("s") == []
    art = st.put("s", "art_x", {"s": pl.DataFrame({"a": [1, 2]})}, {})
    assert art.read()["a"].to_list() == [1, 2] and art.manifest["tables"]["s"]["rows"] == 2
    assert [p.name for p in (tmp_path / "s").iterdir()] == ["art_x"]


@pytest.mark.parametrize("stage,point,n", CRASH_POINTS, ids=[f"{s}-{p}-{n}" for s, p, n in CRASH_POINTS])
def test_kill_then_rerun(episodes, stage, point, n):
    reference, results = episodes
    r = results[(stage, point, n)]
    assert r["code"] == -signal.SIGKILL, "the run was not killed at the crash point"
    assert "partial" not in r, r.get("partial")
    if point == "renamed":  # killed after publishing: the artifact is whole and will be reused
        assert r["published"] and not r["temps"]
    else:  # killed while writing: only a hidden temporary folder, never a visible artifact
        assert not r["published"] and [t.split("/")[0] for t in r["temps"]] == [stage]
    assert r["later"] == [], "a stage after the kill ran"

    assert r["rerun_code"] == 0
    assert r["temps_after"] == []  # the rerun swept the dead writer's temporary folder
    final = r["final"]
    assert sorted(final) == sorted(reference)
    differing = [f for f in final if final[f] != reference[f]]
    assert not differing, f"not byte-identical to an uninterrupted run: {differing}"
    actions = r["rerun_actions"]
    assert actions[stage] == ("reused" if point == "renamed" else "computed")
    assert all(actions[s] == "reused" for s in STAGES[: STAGES.index(stage)])

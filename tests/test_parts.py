"""Issue 24: incremental corpus updates. The per-document stages keep each document's rows as a
part; a run over a changed corpus computes only new or changed documents and assembles the
rest from their parts, and its artifacts are byte for byte those of a fresh run."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

from qspace_frames.pipeline import Workbench
from qspace_frames.pipeline.stages import PER_DOCUMENT  # corpus, structure, fragments, affordances, chunks
from qspace_frames.runtime.parts import PARTS

BASE = {
    "a.txt": "Purchases over 10,000 USD must be approved by the Chief Financial Officer. Receipts are required for every expense.",
    "b.md": "# Travel\n\nEconomy class is required for flights under six hours. The travel desk books hotels.\n",
    "c.txt": "Laptops are returned to IT within five business days of the last working day.",
    "d.txt": "Incidents are reported to the security team within 24 hours. The CISO owns this procedure.",
}


def _add(c: Path) -> None:
    (c / "e.txt").write_text("New hires receive their badge on the first day. The office manager issues it.", encoding="utf-8")


def _change(c: Path) -> None:
    with open(c / "b.md", "a", encoding="utf-8") as fh:
        fh.write("\nFirst class air travel is prohibited.\n")


def _remove(c: Path) -> None:
    (c / "c.txt").unlink()


def _rename(c: Path) -> None:
    (c / "sub").mkdir(exist_ok=True)
    (c / "d.txt").rename(c / "sub" / "d_moved.txt")


STEPS = {"add": _add, "change": _change, "remove": _remove, "rename": _rename}


def _base(c: Path) -> Path:
    c.mkdir(parents=True, exist_ok=True)
    for name, text in BASE.items():
        (c / name).write_text(text, encoding="utf-8")
    return c


def _params(tmp: Path, store: str) -> Path:
    """The parameters file naming the store `tmp/store`, written once: two processes writing it at
    once could each read it half-written (empty: the default store)."""
    params = tmp / f"{store}.yaml"
    if not params.is_file():
        params.write_text(f"store:\n  root: {tmp / store}\n", encoding="utf-8")
    return params


def _workbench(tmp: Path, store: str, corpus: Path, run: str) -> Workbench:
    params = _params(tmp, store)
    return Workbench(
        params_file=str(params), corpus_arg=str(corpus), run_name=run, project_root=Path(__file__).parents[1], reports_dir=tmp / "reports"
    )


def _artifacts(wb: Workbench) -> dict:
    """Each per-document stage's artifact id and its tables' content hashes."""
    return {
        s: (wb.artifact(s).artifact_id, {t: v["content_hash"] for t, v in wb.artifact(s).manifest["tables"].items()}) for s in PER_DOCUMENT
    }


def _documents(wb: Workbench) -> dict:
    """What this Workbench's per-document stages read from parts and computed."""
    return wb.documents()


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """The artifacts of a fresh store for each corpus state (the set of steps applied), computed once."""
    tmp = tmp_path_factory.mktemp("fresh")
    memo: dict[frozenset, dict] = {}

    def get(done: frozenset) -> dict:
        if done not in memo:
            c = _base(tmp / f"c{len(memo)}")
            for step in STEPS:  # a state is the same whatever the order its steps were taken in
                if step in done:
                    STEPS[step](c)
            memo[done] = _artifacts(_workbench(tmp, f"store{len(memo)}", c, "fresh"))
        return memo[done]

    return get


@pytest.mark.slow  # 24 orders, about 40 s
@pytest.mark.parametrize("order", list(itertools.permutations(STEPS)), ids="-".join)
def test_every_order_of_add_change_remove_rename_gives_a_fresh_runs_artifacts(tmp_path, fresh, order):
    c = _base(tmp_path / "corpus")
    assert _artifacts(_workbench(tmp_path, "store", c, "inc")) == fresh(frozenset())
    done: set[str] = set()
    for step in order:
        STEPS[step](c)
        done.add(step)
        wb = _workbench(tmp_path, "store", c, "inc")
        assert _artifacts(wb) == fresh(frozenset(done)), f"after {step} ({order})"
        # only a new or changed document is computed; a renamed one is read from its part
        new = {"add": 1, "change": 1}.get(step, 0)
        n_docs = 4 + ("add" in done) - ("remove" in done)
        assert _documents(wb) == {s: {"reused": n_docs - new, "computed": new} for s in PER_DOCUMENT}, f"after {step} ({order})"


def test_the_run_says_what_changed_and_what_was_reused(tmp_path):
    c = _base(tmp_path / "corpus")
    first = _workbench(tmp_path, "store", c, "inc")
    first.artifact("corpus")
    assert (
        first.changes_line()
        == "4 files: 4 added, 0 changed, 0 removed, 0 unchanged; 0 documents read from their parts, 4 read from their files; 4 loaded"
    )
    _add(c), _change(c), _remove(c), _rename(c)
    again = _workbench(tmp_path, "store", c, "inc")
    again.artifact("corpus")
    # the rename is a removal and an addition of a path, whose document is read from its part
    assert (
        again.changes_line()
        == "4 files: 2 added, 1 changed, 2 removed, 1 unchanged; 2 documents read from their parts, 2 read from their files; 4 loaded"
    )
    log = [json.loads(line) for line in (again.run_dir / "stage_log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert log[-1]["stage"] == "corpus" and log[-1]["files"] == {"files": 4, "added": 2, "changed": 1, "removed": 2, "unchanged": 1}
    nothing = _workbench(tmp_path, "store", c, "inc")
    nothing.artifact("corpus")
    assert nothing.changes_line() == "" and nothing.last_action("corpus") == "reused"


def test_a_damaged_or_missing_part_is_computed_again(tmp_path):
    c = _base(tmp_path / "corpus")
    before = _artifacts(_workbench(tmp_path, "store", c, "one"))
    parts = sorted((tmp_path / "store" / PARTS / "fragments").rglob("*.parquet"))
    assert len(parts) == 4
    parts[0].write_bytes(b"not parquet")
    parts[1].unlink()
    for s in PER_DOCUMENT:  # the artifacts go, the parts stay (two of them spoilt)
        shutil.rmtree(tmp_path / "store" / s)
    wb = _workbench(tmp_path, "store", c, "two")
    assert _artifacts(wb) == before
    assert _documents(wb)["fragments"] == {"reused": 2, "computed": 2}


def test_gc_removes_what_no_kept_run_needs_and_nothing_a_kept_run_needs(tmp_path):
    from qspace_frames.runtime import gc

    c = _base(tmp_path / "corpus")
    kept = _workbench(tmp_path, "store", c, "kept")
    for s in PER_DOCUMENT:
        kept.artifact(s)
    _add(c), _change(c)
    gone = _workbench(tmp_path, "store", c, "gone")  # a second run over a changed corpus, then deleted
    for s in PER_DOCUMENT:
        gone.artifact(s)
    shutil.rmtree(gone.run_dir)
    store = tmp_path / "store"
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((tmp_path / "reports").glob("*/artifacts.json"))]
    assert len(records) == 1
    recent = gc.garbage(store, records)  # written just now: a run may still be writing it
    assert recent.paths() == []
    g = gc.garbage(store, records, keep_recent=0)
    # the second run's own artifacts and the parts of its two new documents, four stages each
    assert sorted(p.parent.name for p in g.artifacts) == sorted(PER_DOCUMENT)
    assert len(g.parts) == 2 * len(PER_DOCUMENT) and g.bytes > 0
    assert gc.collect(g) == g.bytes
    assert gc.garbage(store, records, keep_recent=0).paths() == []
    # the kept run's corpus, restored, is read back whole: nothing it needs was removed
    (c / "e.txt").unlink()
    (c / "b.md").write_text(BASE["b.md"], encoding="utf-8")
    back = _workbench(tmp_path, "store", c, "kept")
    assert _artifacts(back) == _artifacts(kept) and all(back.last_action(s) == "reused" for s in PER_DOCUMENT)


def _run_stages(args: tuple[str, str, str]) -> dict:
    tmp, corpus, run = map(Path, args)
    return _artifacts(_workbench(tmp, "store", corpus, run.name))


def test_two_runs_at_once_over_overlapping_corpora_share_parts_safely(tmp_path):
    """Two processes computing the same documents into one store at once: every part is whole, and
    each run's artifacts are a fresh store's."""
    import multiprocessing

    one = _base(tmp_path / "one")
    two = _base(tmp_path / "two")
    _add(two), _change(two)
    _params(tmp_path, "store")  # before the two processes read it
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        got = pool.map(_run_stages, [(str(tmp_path), str(one), "r1"), (str(tmp_path), str(two), "r2")])
    parts = sorted((tmp_path / "store" / PARTS).rglob("*"))
    assert not [p for p in parts if p.name.endswith(".tmp")]  # nothing half-written left behind
    # six distinct documents (the four, the changed one and the added one) in each per-document stage
    assert len([p for p in parts if p.suffix == ".parquet"]) == 6 * len(PER_DOCUMENT)
    for i, c in enumerate((one, two)):
        assert got[i] == _artifacts(_workbench(tmp_path, f"fresh{i}", c, f"f{i}"))

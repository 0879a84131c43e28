"""The workbench end to end through the store: reuse, side-by-side artifacts, determinism."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import polars as pl
import pytest

from qspace_frames import pipeline
from qspace_frames.pipeline import Workbench
from qspace_frames.schemas import FRAGMENTS, INVENTORY, check


def overlay(tmp_path, name, body=""):
    p = tmp_path / name
    p.write_text(f"store:\n  root: {tmp_path / 'store'}\n{body}")
    return p


def wb_for(root, tmp_path, params, corpus="sample_corpus", run="t"):
    return Workbench(params_file=str(params), corpus_arg=str(corpus), run_name=run, project_root=root, reports_dir=tmp_path / "reports")


def actions(wb):
    log = wb.run_dir / "stage_log.jsonl"
    return [(e["stage"], e["action"]) for e in map(json.loads, log.read_text().splitlines())]


def test_sample_corpus_all_formats_load(root, tmp_path):
    wb = wb_for(root, tmp_path, overlay(tmp_path, "p.yaml"))
    inv = wb.read("corpus", "inventory")
    check(inv, INVENTORY)
    assert set(inv["ext"]) == {"txt", "md", "html", "csv", "json", "jsonl", "pdf", "docx", "xlsx", "pptx"}
    assert inv["load_status"].to_list() == ["loaded"] * inv.height
    fr = wb.read("fragments")
    check(fr, FRAGMENTS)
    assert set(fr["doc_id"]) == set(inv["doc_id"])
    pdf = inv.filter(pl.col("ext") == "pdf")
    assert pdf["n_pages"].to_list() == [3]
    assert set(fr.filter(pl.col("doc_id") == pdf["doc_id"][0])["page"]) == {1, 2, 3}


def test_rerun_recomputes_nothing_and_limits_sit_side_by_side(root, tmp_path, monkeypatch):
    a = overlay(tmp_path, "a.yaml")
    b = overlay(tmp_path, "b.yaml", "fragments:\n  max_chars: 200\n")
    wa = wb_for(root, tmp_path, a, run="a")
    ids_a = (wa.artifact("corpus").artifact_id, wa.artifact("fragments").artifact_id)
    wb_ = wb_for(root, tmp_path, b, run="b")
    ids_b = (wb_.artifact("corpus").artifact_id, wb_.artifact("fragments").artifact_id)
    assert ids_a[0] == ids_b[0]  # the corpus stage does not read fragment parameters
    assert ids_a[1] != ids_b[1]
    assert len(list((tmp_path / "store" / "fragments").glob("art_*"))) == 2
    assert actions(wb_) == [("corpus", "reused"), ("fragments", "computed")]

    # rerunning either returns its old ids, and no stage function is called
    def boom(*_):
        raise AssertionError("a stage was recomputed")

    from qspace_frames.runtime import stage as stage_mod

    monkeypatch.setattr(stage_mod, "run", boom)
    for params, run, ids in [(a, "a2", ids_a), (b, "b2", ids_b)]:
        w = wb_for(root, tmp_path, params, run=run)
        assert (w.artifact("corpus").artifact_id, w.artifact("fragments").artifact_id) == ids
        assert actions(w) == [("corpus", "reused"), ("fragments", "reused")]


def test_byte_identical_artifacts_across_stores_and_input_order(root, tmp_path):
    """Two fresh stores, the second fed a copy of the corpus with files created in reverse order."""
    src = root / "sample_corpus"
    rev = tmp_path / "rev"
    for f in sorted(src.rglob("*"), reverse=True):
        if f.is_file():
            (rev / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, rev / f.relative_to(src))
    one = tmp_path / "one"
    one.mkdir()
    two = tmp_path / "two"
    two.mkdir()
    w1 = wb_for(root, one, overlay(one, "p.yaml"), corpus=src)
    w2 = wb_for(root, two, overlay(two, "p.yaml"), corpus=rev)
    for stage in pipeline.STAGES:
        a1, a2 = w1.artifact(stage), w2.artifact(stage)
        assert a1.artifact_id == a2.artifact_id, stage
        assert a1.manifest == a2.manifest, stage
        for table in a1.tables:
            assert (a1.path / f"{table}.parquet").read_bytes() == (a2.path / f"{table}.parquet").read_bytes(), (stage, table)


def test_unknown_corpus_folder_fails_clearly(root, tmp_path):
    with pytest.raises(FileNotFoundError, match="corpus folder not found"):
        wb_for(root, tmp_path, overlay(tmp_path, "p.yaml"), corpus=tmp_path / "missing")
    (tmp_path / "notes.md").write_text("# Notes\n")
    with pytest.raises(FileNotFoundError, match=r"notes.md is a file, not a folder: give the folder that holds it, "):
        wb_for(root, tmp_path, overlay(tmp_path, "p.yaml"), corpus=tmp_path / "notes.md")
    cli = subprocess.run(
        [sys.executable, "-m", "qspace_frames.cli", "run", "--corpus", "sample_corpus/policy/procurement_policy.md", "--name", "x"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert cli.returncode == 2
    said = "corpus sample_corpus/policy/procurement_policy.md is a file, not a folder: give the folder that holds it, sample_corpus/policy"
    assert cli.stderr.strip() == f"error: {said}"


def test_the_run_and_ask_say_which_files_were_not_read(root, tmp_path, capsys):
    """A folder of notes in a format no loader reads is not silently ignored: the run's first line
    counts each status (and the extensions not supported), and a question with no answer is told
    that some files were never read."""
    from qspace_frames.cli import _unread_note

    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "iris.rst").write_text("Iris\n====\n\nThe iris data set was created by R. A. Fisher.\n")
    (corpus / "empty.txt").write_text("")
    (corpus / "a.md").write_text("# Plants\n\nThe rose is red.\n")
    (corpus / "b.md").write_text("# Plants\n\nThe rose is red.\n")
    wb = wb_for(root, tmp_path, overlay(tmp_path, "p.yaml"), corpus=corpus)
    wb.artifact("corpus")
    assert wb.changes_line().endswith("; 1 loaded, 1 duplicate, 1 empty, 1 unsupported (.rst 1)"), wb.changes_line()
    _unread_note(wb.read("corpus", "inventory"))
    assert capsys.readouterr().err == (
        "note: 2 of the corpus's 4 files were not read (1 empty, 1 unsupported (.rst 1)); "
        "an answer in them cannot be found (notebook 01 lists them)\n"
    )
    # a folder with no file at all is said so (found by a helper: "No answer found" and nothing else)
    _unread_note(wb.read("corpus", "inventory").clear())
    assert capsys.readouterr().err == "note: the corpus holds no file; there is nothing to answer from\n"


def test_bm25_chunks_are_reused_across_evaluation_sweeps(root, tmp_path):
    """The corpus's BM25 chunks read only the chunk size and encoding: a sweep of another
    evaluation parameter recomputes the evaluation on the stored chunks; a new size cuts again."""
    base = wb_for(root, tmp_path, overlay(tmp_path, "a.yaml"), run="a")
    first = base.artifact("chunks")
    assert base.read("chunks")["n_tokens"].max() <= 512
    k1 = wb_for(root, tmp_path, overlay(tmp_path, "b.yaml", "evaluation:\n  bm25_k1: 0.9\n"), run="b")
    assert k1.artifact("evaluation").artifact_id != base.artifact("evaluation").artifact_id
    assert k1.artifact("chunks").artifact_id == first.artifact_id
    assert ("chunks", "reused") in actions(k1) and ("evaluation", "computed") in actions(k1)
    small = wb_for(root, tmp_path, overlay(tmp_path, "c.yaml", "evaluation:\n  chunk_tokens: 64\n"), run="c")
    assert small.artifact("chunks").artifact_id != first.artifact_id
    assert small.read("chunks")["n_tokens"].max() <= 64
    assert small.read("chunks").height > base.read("chunks").height


def test_the_evaluation_runs_qspace_with_every_tree_choice(root, tmp_path):
    """The tree ablation: Qspace with the selected trees is the evaluation's own Qspace row, each
    forced candidate walks its own depth to the leaves (the deepest shape costs the most nodes),
    and without trees no leaf is walked to (path length: the fragment and the sentence)."""
    from qspace_frames.evaluation.qspace import NO_TREE, SELECTED, TREE_CHOICES

    wb = wb_for(root, tmp_path, overlay(tmp_path, "a.yaml", "evaluation:\n  tree_ablation_questions: 1000\n"))  # every question
    abl, m = wb.read("evaluation", "tree_ablation"), wb.read("evaluation", "metrics")
    assert sorted(set(abl["strategy"])) == sorted(TREE_CHOICES)
    mine = abl.filter(pl.col("strategy") == SELECTED).drop("strategy")
    assert mine.equals(m.filter(pl.col("strategy") == "qspace").drop("strategy"))  # the same run, measured once more
    value = {(s, k): v for s, k, v in abl.filter(pl.col("budget").is_null()).select("strategy", "metric", "value").rows()}
    assert (
        value[("class_objective_tree", "path_length")]
        > value[("evidence_role_tree", "path_length")]
        > value[("source_order_tree", "path_length")]
    )
    assert value[("class_objective_tree", "nodes_visited")] > value[("source_order_tree", "nodes_visited")]
    assert value[(NO_TREE, "path_length")] == 2.0 and value[(NO_TREE, "nodes_visited")] < value[(SELECTED, "nodes_visited")]
    assert (
        abl.filter(pl.col("metric") == "evidence_recall")["n_queries"] == m.filter(pl.col("metric") == "evidence_recall")["n_queries"][0]
    ).all()
    # a larger gold set is ablated on a sample of its questions spread over it; 0 turns the ablation off
    few = wb_for(root, tmp_path, overlay(tmp_path, "b.yaml", "evaluation:\n  tree_ablation_questions: 40\n"), run="b")
    n = few.read("evaluation", "tree_ablation").filter(pl.col("metric") == "evidence_recall")["n_queries"]
    assert n.n_unique() == 1 and n[0] == 40 and few.read("evaluation", "metrics").equals(m)
    off = wb_for(root, tmp_path, overlay(tmp_path, "c.yaml", "evaluation:\n  tree_ablation_questions: 0\n"), run="c")
    assert off.read("evaluation", "tree_ablation").is_empty() and off.read("evaluation", "metrics").equals(m)


def test_cost_weights_move_the_trees_and_the_sweep_counts_what_moved(root, tmp_path):
    """Issue 23: weights that push one term of J(T) to the extreme select other trees than the
    default weights; the sweep's table counts the fragments that changed tree against the first
    weight set, which trees are flat, and where a tree can act at all (two evidence sentences)."""
    from qspace_frames.report import summaries

    only_locality = (root / "params" / "weights" / "locality_only.yaml").read_text()
    runs = {
        "default": wb_for(root, tmp_path, overlay(tmp_path, "a.yaml"), run="a"),
        "locality_only": wb_for(root, tmp_path, overlay(tmp_path, "b.yaml", only_locality), run="b"),
    }
    sel = {w: wb.read("trees", "tree_scores").filter(pl.col("selected")).select("fragment_id", "candidate") for w, wb in runs.items()}
    moved = sel["default"].join(sel["locality_only"], on="fragment_id").filter(pl.col("candidate") != pl.col("candidate_right")).height
    assert moved > 0
    table = summaries.sweep_table(sel, {w: wb.read("evaluation", "metrics") for w, wb in runs.items()})
    assert table["weights"].to_list() == ["default", "locality_only"]
    assert table["changed tree"].to_list() == [0, moved]
    assert table["fragments"].to_list() == [sel["default"].height] * 2
    flat = [int((s["candidate"] == "source_order_tree").sum()) for s in sel.values()]
    assert table["flat tree"].to_list() == flat and flat[1] < flat[0]
    assert {"recall@256", "recall@2048", "nodes_visited", "tokens_loaded"} <= set(table.columns)
    verdict = summaries.sweep_verdict(table)
    assert f"from 0 to {moved} of {sel['default'].height} fragments" in verdict and "locality_only" in verdict
    with_tree, several = summaries.tree_reach(runs["default"].scan("trees", "tree_nodes"), runs["default"].scan("trees", "tree_scores"))
    assert with_tree == sel["default"].height and 0 < several < with_tree
    assert f"Only {several} of the {with_tree} fragments" in summaries.tree_verdict(
        runs["default"].read("evaluation", "tree_ablation"), (with_tree, several)
    )

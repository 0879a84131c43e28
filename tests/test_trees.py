"""Retrieval trees, J(T), traversal simulation and what a changed cost weight recomputes."""

from __future__ import annotations

import polars as pl
import pytest

from qspace_frames import pipeline
from qspace_frames.pipeline import Workbench
from qspace_frames.trees.compile import (
    CANDIDATES,
    COMPONENTS,
    TREE_NODES,
    TREE_SCORES,
    j_expr,
)


def overlay(tmp_path, name, body=""):
    p = tmp_path / name
    p.write_text(f"store:\n  root: {tmp_path / 'store'}\n{body}")
    return p


@pytest.fixture(scope="module")
def sample(tmp_path_factory, root):
    d = tmp_path_factory.mktemp("trees")
    return Workbench(
        params_file=str(overlay(d, "p.yaml")), corpus_arg="sample_corpus", run_name="t", project_root=root, reports_dir=d / "r"
    )


def check_scores(wb):
    nodes, scores = wb.read("trees", "tree_nodes"), wb.read("trees", "tree_scores")
    assert dict(nodes.schema) == TREE_NODES and dict(scores.schema) == TREE_SCORES
    p = wb.params.trees
    w = p.weights()
    # J recomputed from the exported components equals the stored J
    recomputed = scores.with_columns(
        pl.sum_horizontal([pl.col(c) * w[c] for c in COMPONENTS]).alias("_total"),
    ).with_columns(j_expr(p).alias("_J"))
    assert (recomputed["_total"] - recomputed["total_cost"]).abs().max() < 1e-12
    assert (recomputed["_J"] - recomputed["J"]).abs().max() < 1e-12
    # one selected tree per fragment, and no candidate has a lower J
    per = scores.group_by("fragment_id").agg(
        pl.col("selected").sum().alias("n_sel"),
        pl.col("J").min().alias("best"),
        pl.col("J").filter(pl.col("selected")).first().alias("chosen"),
        pl.col("candidate").n_unique().alias("n_cand"),
    )
    assert (per["n_sel"] == 1).all()
    assert (per["chosen"] <= per["best"] + 1e-12).all()
    assert (per["n_cand"] == len(CANDIDATES)).all()
    # structure: one root per tree, every parent in the same tree, the same leaves in every candidate
    assert nodes.filter(pl.col("kind") == "root").group_by("tree_id").len()["len"].max() == 1
    parents = nodes.select("tree_id", pl.col("node_id").alias("parent_id"))
    orphans = nodes.filter(pl.col("parent_id").is_not_null()).join(parents, on=["tree_id", "parent_id"], how="anti")
    assert orphans.height == 0
    leaves = nodes.filter(pl.col("kind") == "leaf").group_by("fragment_id", "candidate").agg(pl.col("evidence_id").sort())
    assert leaves.group_by("fragment_id").agg(pl.col("evidence_id").n_unique())["evidence_id"].max() == 1
    return nodes, scores


def test_sample_corpus_trees(sample):
    nodes, scores = check_scores(sample)
    assert scores["fragment_id"].n_unique() > 50
    assert scores.filter(pl.col("selected"))["candidate"].n_unique() >= 2  # J picks different shapes


def test_contracts_trees(corpus_workbench):
    check_scores(corpus_workbench("contracts-cuad/txt"))


def test_simulation_returns_the_right_value_from_the_right_sentence(sample):
    sims = sample.read("simulation", "simulations")
    assert sims.height > 100
    assert sims["correct"].all() and sims["found_all"].all()
    assert (sims["nodes_visited"] >= 2).all() and (sims["context_tokens"] > 0).all()


def test_several_leaves_with_one_role_are_told_apart(tmp_path, root):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "matrix.md").write_text(
        "# Approvals\n\nPurchases over $5,000 must be approved by the Finance Manager. "
        "Purchases over $50,000 must be approved by the Chief Financial Officer. "
        "Purchases over $500,000 must be approved by the Board of Directors.\n"
    )
    wb = Workbench(
        params_file=str(overlay(tmp_path, "p.yaml")), corpus_arg=str(corpus), run_name="t", project_root=root, reports_dir=tmp_path / "r"
    )
    sims = wb.read("simulation", "simulations").filter(pl.col("intent") == "approval_lookup")
    assert sims.height == 3
    answers = {r["question"]: r["answer"] for r in sims.iter_rows(named=True)}
    assert answers["Who must approve purchases over $50,000?"] == ["$50,000", "Chief Financial Officer"]
    assert answers["Who must approve purchases over $500,000?"] == ["$500,000", "Board of Directors"]
    assert sims["correct"].all()


def test_changing_a_cost_weight_recomputes_only_the_tree_stages(tmp_path, root):
    a = Workbench(
        params_file=str(overlay(tmp_path, "a.yaml")),
        corpus_arg="sample_corpus",
        run_name="a",
        project_root=root,
        reports_dir=tmp_path / "r",
    )
    b = Workbench(
        params_file=str(overlay(tmp_path, "b.yaml", "trees:\n  w_context_tokens: 0.6\n")),
        corpus_arg="sample_corpus",
        run_name="b",
        project_root=root,
        reports_dir=tmp_path / "r",
    )
    downstream = {"trees", "simulation", "evaluation"}
    for stage in pipeline.STAGES:
        same = a.artifact(stage).artifact_id == b.artifact(stage).artifact_id
        assert same == (stage not in downstream), stage
    assert len(list((tmp_path / "store" / "trees").glob("art_*"))) == 2
    assert len(list((tmp_path / "store" / "affordances").glob("art_*"))) == 1


def test_sweep_of_the_weight_files_leaves_one_tree_set_each_and_one_upstream(tmp_path, root):
    store = tmp_path / "store"
    weights = sorted((root / "params" / "weights").glob("*.yaml"))
    stems = ["ambiguity_only", "default", "locality_first", "locality_only", "shallow_paths", "tokens_heavy", "tokens_only"]
    assert [w.stem for w in weights] == stems
    for w in weights:  # each file merged over params/default.yaml, with the store moved to tmp
        over = tmp_path / "weights" / w.name
        over.parent.mkdir(exist_ok=True)
        (tmp_path / "weights" / "default.yaml").write_text((root / "params" / "default.yaml").read_text())
        over.write_text(w.read_text() + f"\nstore:\n  root: {store}\n")
        wb = Workbench(params_file=str(over), corpus_arg="sample_corpus", run_name=w.stem, project_root=root, reports_dir=tmp_path / "r")
        for stage in pipeline.STAGES:
            wb.artifact(stage)
    counts = {s: len(list((store / s).glob("art_*"))) for s in pipeline.STAGES}
    sets = len(stems)
    assert {s: n for s, n in counts.items() if s in {"trees", "simulation", "evaluation"}} == {
        "trees": sets,
        "simulation": sets,
        "evaluation": sets,
    }
    assert all(n == 1 for s, n in counts.items() if s not in {"trees", "simulation", "evaluation"}), counts

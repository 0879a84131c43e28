"""The fast paths of the tree stage give the rows the plain definitions give: batching, the merge of
the batches, and sibling order, preorder and parent ids found by forward fills."""

from __future__ import annotations

import polars as pl
import pytest

from qspace_frames.pipeline import Workbench
from qspace_frames.trees.compile import NODE_ORDER, compile_trees, node_frame

INPUTS = (
    "fragments",
    "evidence",
    "prototypes/fragment_question_edges",
    "prototypes",
    "density",
    "classes/memberships",
    "classes",
    "evidence/codemand",
)


@pytest.fixture(scope="module")
def sample(tmp_path_factory, root):
    d = tmp_path_factory.mktemp("trees_speed")
    (d / "p.yaml").write_text(f"store:\n  root: {d / 'store'}\n")
    return Workbench(params_file=str(d / "p.yaml"), corpus_arg="sample_corpus", run_name="t", project_root=root, reports_dir=d / "r")


def test_any_batch_size_gives_the_rows_of_one_pass(sample):
    r = [sample.scan(*k.split("/")) for k in INPUTS]
    nodes, scores = compile_trees(*r, sample.params.trees, batch_units=10**9)
    for units in (1, 7, 50):  # batches of one fragment, and of several: the merge keeps the stored order (NODE_ORDER)
        n, s = compile_trees(*r, sample.params.trees, batch_units=units)
        assert n.equals(nodes), units
        # the same trees chosen; expected components may differ in their last bit between batch sizes
        assert s.drop(pl.selectors.float()).equals(scores.drop(pl.selectors.float())), units
        assert (s["J"] - scores["J"]).abs().max() < 1e-12, units
    assert nodes.equals(nodes.sort(NODE_ORDER))


def test_order_preorder_and_parents_follow_their_definitions(sample):
    nodes = sample.read("trees", "tree_nodes")
    # preorder numbers each tree's nodes 0..n-1, from its root
    per_tree = nodes.group_by("tree_id").agg(pl.col("preorder").sort(), pl.len())
    assert all(p == list(range(n)) for p, n in per_tree.select("preorder", "len").iter_rows())
    assert nodes.filter(pl.col("preorder") == 0)["kind"].eq("root").all()
    # siblings: orders 0..k-1, in preorder, all one level below their parent
    kids = nodes.filter(pl.col("parent_id").is_not_null()).sort("tree_id", "preorder")
    sib = kids.group_by("tree_id", "parent_id", maintain_order=True).agg(pl.col("order"), pl.col("depth").n_unique())
    assert all(o == list(range(len(o))) for o in sib["order"].to_list())
    assert (sib["depth"] == 1).all()
    # a parent comes before its children, one level up, in the same tree
    parents = nodes.select("tree_id", pl.col("node_id").alias("parent_id"), pl.col("preorder").alias("_pp"), pl.col("depth").alias("_pd"))
    linked = kids.join(parents, on=["tree_id", "parent_id"])
    assert linked.height == kids.height
    assert (linked["_pp"] < linked["preorder"]).all() and (linked["_pd"] == linked["depth"] - 1).all()
    # node_frame's ancestors: `_p` is the parent's preorder
    n = node_frame(nodes)
    with_parent = n.join(nodes.select("tree_id", "preorder", "parent_id"), on=["tree_id", "preorder"]).join(
        parents.select("tree_id", "parent_id", "_pp"), on=["tree_id", "parent_id"], how="left"
    )
    assert with_parent.filter(pl.col("depth") > 0).select((pl.col("_p") == pl.col("_pp")).all()).item()


def test_a_span_that_is_its_whole_fragment_takes_the_fragments_count(sample):
    """Leaf tokens are the span's own count whether it is counted in the tree stage or taken from
    its fragment (a span with the fragment's offsets is the fragment's text), and the sample has such spans."""
    from qspace_frames.tokens import count_tokens

    r = [sample.scan(*k.split("/")) for k in INPUTS]
    counted, _ = compile_trees(*r, sample.params.trees)
    reused, _ = compile_trees(*r, sample.params.trees, fragment_encoding=sample.params.fragments.encoding)
    assert reused.equals(counted)
    frags = sample.read("fragments").select("fragment_id", "char_start", "char_end")
    whole = (
        reused.filter(pl.col("kind") == "leaf")
        .join(frags, on="fragment_id")
        .filter((pl.col("span_start") == pl.col("char_start")) & (pl.col("span_end") == pl.col("char_end")))
        .join(sample.read("evidence").select("evidence_id", "span"), on="evidence_id")
    )
    assert whole.height > 0
    assert whole["tokens"].to_list() == count_tokens(whole["span"].to_list(), sample.params.trees.encoding)

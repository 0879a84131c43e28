"""Question space stages: classes, density, proximity, evidence, co-demand, graph."""

from __future__ import annotations

import polars as pl
import pytest
from pydantic import ValidationError

from qspace_frames.exprs import jaccard
from qspace_frames.ids import content_id
from qspace_frames.qspace.classes import (
    CLASSES,
    MEMBERSHIPS,
    ClassParams,
    classes,
    n_clusters,
)
from qspace_frames.qspace.density import DENSITY, DensityParams, density
from qspace_frames.qspace.evidence import CODEMAND, EVIDENCE, codemand, evidence
from qspace_frames.qspace.graph import (
    EDGE_TYPES,
    GRAPH_EDGES,
    GRAPH_NODES,
    NODE_TYPES,
    graph,
    to_networkx,
)
from qspace_frames.qspace.proximity import PROXIMITY, ProximityParams, proximity
from qspace_frames.schemas import check

PROTOTYPE_SCHEMA = {
    "prototype_id": pl.String,
    "intent": pl.String,
    "slot_signature": pl.List(pl.String),
    "role_signature": pl.List(pl.String),
    "canonical_name": pl.String,
    "canonical_question": pl.String,
    "answer_shape": pl.String,
    "answer_type": pl.String,
    "example_questions": pl.List(pl.String),
    "fragment_ids": pl.List(pl.String),
    "doc_ids": pl.List(pl.String),
    "n_fragments": pl.Int64,
    "n_docs": pl.Int64,
    "n_direct": pl.Int64,
    "n_partial": pl.Int64,
}


def proto(pid, intent, roles=(), slots=(), frags=("f0",), docs=("d0",), shape="value", atype="money", n_fragments=None, n_docs=None):
    return {
        "prototype_id": pid,
        "intent": intent,
        "slot_signature": sorted(slots),
        "role_signature": sorted(roles),
        "canonical_name": f"{intent} {pid}",
        "canonical_question": f"What about {pid}?",
        "answer_shape": shape,
        "answer_type": atype,
        "example_questions": [],
        "fragment_ids": sorted(set(frags)),
        "doc_ids": sorted(set(docs)),
        "n_fragments": len(set(frags)) if n_fragments is None else n_fragments,
        "n_docs": len(set(docs)) if n_docs is None else n_docs,
        "n_direct": len(set(frags)),
        "n_partial": 0,
    }


def frame(rows) -> pl.LazyFrame:
    return pl.DataFrame(rows, schema=PROTOTYPE_SCHEMA).lazy()


# eight prototypes in three families
EIGHT = [
    proto("p1", "approval_lookup", ["amount_threshold", "approver_role"], ["amount"], ["f1", "f2"], ["d1"], "entity", "role"),
    proto("p2", "threshold_lookup", ["amount_threshold"], ["amount"], ["f1"], ["d1"]),
    proto("p3", "metric_lookup", ["metric", "period"], ["metric"], ["f3", "f4", "f5"], ["d2", "d3"]),
    proto("p4", "variance_explanation", ["driver", "metric", "period"], ["metric"], ["f3"], ["d2"], "text", "explanation"),
    proto("p5", "next_step_lookup", ["step"], [], ["f6"], ["d3"], "text", "step"),
    proto("p6", "sla_lookup", ["duration", "step"], ["step"], ["f6", "f7"], ["d3"], "value", "duration"),
    proto("p7", "approval_lookup", ["approver_role", "region"], ["region"], ["f2"], ["d1"], "entity", "role"),
    proto("p8", "rule_lookup", [], [], ["f8"], ["d1"], "text", "rule"),
]


# ---- density -----------------------------------------------------------------------------------


def test_density_formula_by_hand():
    rows = [
        proto("a", "approval_lookup", n_fragments=4, n_docs=2),
        proto("b", "metric_lookup", n_fragments=2, n_docs=1),
        proto("c", "next_step_lookup", n_fragments=1, n_docs=2),
    ]
    d = density(frame(rows), DensityParams()).collect()
    check(d, DENSITY)
    # support_norm a 1, b .5, c .25; document_norm a 1, b .5, c 1; risk a .9, b .5, c .45
    # importance a .45+.3+.2 = .95, b .25+.15+.1 = .5, c .225+.075+.2 = .5
    # density a .45+.3325+.2 = .9825, b .225+.175+.1 = .5, c .1125+.175+.2 = .4875; sum 1.97
    expect = {
        "a": (1.0, 1.0, 0.9, 0.95, 0.9825),
        "b": (0.5, 0.5, 0.5, 0.5, 0.5),
        "c": (0.25, 1.0, 0.45, 0.5, 0.4875),
    }
    assert d["prototype_id"].to_list() == ["a", "b", "c"]
    assert d["rank"].to_list() == [1, 2, 3]
    for r in d.iter_rows(named=True):
        sn, dn, risk, imp, dens = expect[r["prototype_id"]]
        assert r["support_norm"] == pytest.approx(sn)
        assert r["document_norm"] == pytest.approx(dn)
        assert r["risk_prior"] == pytest.approx(risk)
        assert r["importance"] == pytest.approx(imp)
        assert r["density"] == pytest.approx(dens)
        assert r["p_q"] == pytest.approx(dens / 1.97)
    assert d["p_q"].sum() == pytest.approx(1.0)


def test_density_unknown_intent_uses_default_risk_and_ties_sort_by_id():
    rows = [proto("z", "brand_new_intent"), proto("y", "brand_new_intent")]
    d = density(frame(rows), DensityParams(default_risk=0.2)).collect()
    assert d["risk_prior"].to_list() == [0.2, 0.2]
    assert d["prototype_id"].to_list() == ["y", "z"]  # equal density: by id
    assert d["p_q"].to_list() == pytest.approx([0.5, 0.5])


def test_density_weights_must_sum_to_one():
    with pytest.raises(ValidationError, match=r"importance weights .* must sum to 1.0, got 1.1"):
        DensityParams(w_risk=0.6)
    with pytest.raises(ValidationError, match=r"density weights .* must sum to 1.0, got 0.9"):
        DensityParams(d_doc=0.1)
    with pytest.raises(ValidationError):
        DensityParams(w_risk=-0.1, w_support=0.9)


# ---- proximity ---------------------------------------------------------------------------------

PAIR = [
    proto(
        "x", "approval_lookup", ["amount_threshold", "approver_role"], ["amount", "region"], ["f1", "f2", "f3"], ["d1"], "entity", "role"
    ),
    proto("y", "approval_lookup", ["approver_role", "region"], ["amount"], ["f3"], ["d1"], "entity", "person"),
    proto("z", "rule_lookup", [], [], ["f9"], ["d2"], "text", "rule"),
    proto("w", "rule_lookup", [], [], ["f8"], ["d2"], "text", "rule"),
]
PAIR_MEMBERS = pl.DataFrame(
    {"class_id": ["c1", "c1", "c2"], "prototype_id": ["x", "y", "z"], "intent": ["approval_lookup"] * 2 + ["rule_lookup"]}
)


def test_proximity_components_for_a_known_pair():
    pr = proximity(frame(PAIR), PAIR_MEMBERS.lazy(), ProximityParams()).collect()
    check(pr, PROXIMITY)
    assert pr.select("prototype_a", "prototype_b").rows() == [("w", "x"), ("w", "y"), ("w", "z"), ("x", "y"), ("x", "z"), ("y", "z")]
    xy = pr.filter((pl.col("prototype_a") == "x") & (pl.col("prototype_b") == "y")).row(0, named=True)
    assert xy["intent_match"] == 1.0
    assert xy["role_jaccard"] == pytest.approx(1 / 3)  # {approver_role} / {amount_threshold, approver_role, region}
    assert xy["slot_jaccard"] == pytest.approx(1 / 2)  # {amount} / {amount, region}
    assert xy["shape_jaccard"] == pytest.approx(1 / 3)  # {entity} / {entity, role, person}
    assert xy["fragment_overlap"] == pytest.approx(1 / 3)  # {f3} / {f1, f2, f3}
    assert xy["class_overlap"] == 1.0
    assert xy["similarity"] == pytest.approx(0.25 + 0.20 / 3 + 0.20 / 2 + 0.15 / 3 + 0.10 / 3 + 0.10)
    assert xy["in_network"]


def test_proximity_empty_sets_score_zero():
    pr = proximity(frame(PAIR), PAIR_MEMBERS.lazy(), ProximityParams()).collect()
    wz = pr.filter((pl.col("prototype_a") == "w") & (pl.col("prototype_b") == "z")).row(0, named=True)
    assert wz["role_jaccard"] == 0.0 and wz["slot_jaccard"] == 0.0  # both signatures empty
    assert wz["class_overlap"] == 0.0  # w has no class
    assert wz["similarity"] == pytest.approx(0.25 + 0.15)
    assert not wz["in_network"]
    empties = pl.DataFrame({"a": [[], ["r"]], "b": [[], []]}, schema={"a": pl.List(pl.String), "b": pl.List(pl.String)})
    assert empties.select(jaccard(pl.col("a"), pl.col("b")))[:, 0].to_list() == [0.0, 0.0]


@pytest.mark.parametrize("n", [0, 1])
def test_proximity_of_fewer_than_two_prototypes_is_empty(n):
    pr = proximity(frame(PAIR[:n]), PAIR_MEMBERS.lazy(), ProximityParams()).collect()
    check(pr, PROXIMITY)
    assert pr.height == 0


def test_proximity_weights_must_sum_to_one():
    with pytest.raises(ValidationError, match=r"proximity weights must sum to 1.0, got 1.1"):
        ProximityParams(w_intent=0.35)
    with pytest.raises(ValidationError):
        ProximityParams(w_intent=-0.25, w_roles=0.7)
    with pytest.raises(ValidationError):
        ProximityParams(bogus=1.0)
    ProximityParams(w_intent=0.3, w_class=0.05)  # 1.0 again: accepted


# ---- classes -----------------------------------------------------------------------------------


def test_k_rule():
    p = ClassParams()
    assert [n_clusters(n, p) for n in (4, 5, 6, 10, 11, 40)] == [2, 2, 3, 5, 5, 5]
    assert n_clusters(40, ClassParams(max_classes=8)) == 8
    assert n_clusters(10, ClassParams(n_classes=3)) == 3
    assert n_clusters(4, ClassParams(n_classes=9)) == 4  # capped at the number of prototypes


def test_classes_clustered():
    c, m = classes(frame(EIGHT), ClassParams())
    check(c, CLASSES)
    check(m, MEMBERSHIPS)
    assert c.height == 4 and set(c["method"]) == {"agglomerative"} and set(c["status"]) == {"proposed"}
    assert sorted(m["prototype_id"]) == [r["prototype_id"] for r in EIGHT]  # every prototype once
    assert c["name"].n_unique() == c.height
    for r in c.iter_rows(named=True):
        ids = sorted(m.filter(pl.col("class_id") == r["class_id"])["prototype_id"])
        assert r["class_id"] == content_id("class", [ids])
        assert r["n_prototypes"] == len(ids)
    finance = c.filter(pl.col("archetype") == "finance_like").row(0, named=True)
    assert finance["name"] == "finance-like: metric_lookup + variance_explanation"
    assert finance["archetype_overlap"] == pytest.approx(2 / 3)
    assert finance["roles"] == ["driver", "metric", "period"]


def test_classes_fallback_for_three_prototypes():
    rows = [proto("q1", "threshold_lookup"), proto("q2", "owner_lookup"), proto("q3", "metric_lookup")]
    c, m = classes(frame(rows), ClassParams())
    assert set(c["method"]) == {"archetype_fallback"}
    # Jaccard of one intent with an archetype is 1/|archetype|: the smallest archetype holding it wins
    assert dict(c.select("name", "archetype").iter_rows()) == {
        "finance-like: metric_lookup + threshold_lookup": "finance_like",  # member counts tie: by name
        "SOP-like: owner_lookup": "sop_like",
    }
    assert dict(c.select("archetype", "archetype_overlap").iter_rows()) == pytest.approx({"finance_like": 2 / 3, "sop_like": 1 / 4})
    by_proto = dict(m.join(c, on="class_id").select("prototype_id", "archetype").iter_rows())
    assert by_proto == {"q1": "finance_like", "q2": "sop_like", "q3": "finance_like"}


def test_class_names_are_unique():
    # two tight groups of approval prototypes with disjoint roles: both clusters earn the same base name
    rows = [
        proto("a1", "approval_lookup", ["amount_threshold", "approver_role", "cost_center"]),
        proto("a2", "approval_lookup", ["amount_threshold", "approver_role", "cost_center"]),
        proto("b1", "approval_lookup", ["region", "vendor", "contract_type"]),
        proto("b2", "approval_lookup", ["region", "vendor", "contract_type"]),
    ]
    c, m = classes(frame(rows), ClassParams())
    assert c["name"].sort().to_list() == ["policy-like: approval_lookup", "policy-like: approval_lookup (2)"]
    groups = m.group_by("class_id").agg(pl.col("prototype_id").sort())["prototype_id"].to_list()
    assert sorted(groups) == [["a1", "a2"], ["b1", "b2"]]
    # the cluster holding the smallest prototype id keeps the plain name
    first = m.filter(pl.col("prototype_id") == "a1")["class_id"][0]
    assert c.filter(pl.col("class_id") == first)["name"][0] == "policy-like: approval_lookup"


@pytest.mark.parametrize("rows", [EIGHT, EIGHT[:3]], ids=["clustered", "fallback"])
def test_classes_do_not_depend_on_input_order(rows):
    c0, m0 = classes(frame(rows), ClassParams())
    for seed in range(5):
        shuffled = pl.DataFrame(rows, schema=PROTOTYPE_SCHEMA).sample(fraction=1.0, shuffle=True, seed=seed)
        c, m = classes(shuffled.lazy(), ClassParams())
        assert c.equals(c0) and m.equals(m0)


def test_classes_of_no_prototypes():
    c, m = classes(frame([]), ClassParams())
    check(c, CLASSES)
    check(m, MEMBERSHIPS)
    assert c.height == m.height == 0


# ---- evidence and co-demand --------------------------------------------------------------------

AFF_SCHEMA = {
    "affordance_id": pl.String,
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "intent": pl.String,
    "support": pl.String,
    "prototype_id": pl.String,
    "confidence": pl.Float64,
    "span": pl.String,
    "span_start": pl.Int64,
    "span_end": pl.Int64,
    "roles": pl.List(pl.Struct({"role": pl.String, "value": pl.String, "start": pl.Int64, "end": pl.Int64})),
}


def role(r, v, s):
    return {"role": r, "value": v, "start": s, "end": s + len(v)}


def test_evidence_dedups_shared_role_values():
    affs = pl.DataFrame(
        [
            {
                "affordance_id": "aff_1",
                "fragment_id": "f1",
                "doc_id": "d1",
                "intent": "approval_lookup",
                "support": "direct",
                "prototype_id": "p1",
                "confidence": 0.8,
                "span": "Purchases over $25,000 need CFO approval.",
                "span_start": 0,
                "span_end": 41,
                "roles": [role("amount_threshold", "$25,000", 15), role("approver_role", "CFO", 28)],
            },
            {
                "affordance_id": "aff_2",
                "fragment_id": "f1",
                "doc_id": "d1",
                "intent": "threshold_lookup",
                "support": "direct",
                "prototype_id": "p2",
                "confidence": 0.9,
                "span": "Purchases over $25,000",
                "span_start": 0,
                "span_end": 22,
                "roles": [role("amount_threshold", "$25,000", 15)],
            },
            {
                "affordance_id": "aff_3",
                "fragment_id": "f1",
                "doc_id": "d1",
                "intent": "rule_lookup",
                "support": "partial",
                "prototype_id": "p3",
                "confidence": 0.99,
                "span": "Purchases",
                "span_start": 0,
                "span_end": 9,
                "roles": [],
            },
        ],
        schema=AFF_SCHEMA,
    )
    ev = evidence(affs.lazy()).collect()
    check(ev, EVIDENCE)
    assert ev.select("role", "value", "value_start", "value_end").rows() == [
        ("amount_threshold", "$25,000", 15, 22),
        ("approver_role", "CFO", 28, 31),
    ]
    amount = ev.row(0, named=True)
    assert amount["prototype_ids"] == ["p1", "p2"]
    assert amount["n_affordances"] == 2
    assert amount["confidence"] == pytest.approx(0.9 * 0.95)
    assert (amount["span"], amount["span_start"], amount["span_end"]) == ("Purchases over $25,000", 0, 22)  # the 0.9 parent
    assert amount["evidence_id"] == content_id("ev", ["f1", "amount_threshold", 15, 22])
    cfo = ev.row(1, named=True)
    assert cfo["prototype_ids"] == ["p1"] and cfo["confidence"] == pytest.approx(0.8 * 0.95)
    # input order does not matter
    assert evidence(affs.reverse().lazy()).collect().equals(ev)


def test_codemand_by_hand():
    protos = frame(
        [
            proto("q1", "approval_lookup", ["a", "b"]),
            proto("q2", "rule_lookup", ["b", "c"]),
            proto("q3", "rule_lookup", ["b"]),
            proto("q4", "rule_lookup", []),
        ]
    )
    dens = pl.LazyFrame({"prototype_id": ["q1", "q2", "q3", "q4"], "p_q": [0.5, 0.3, 0.15, 0.05]})
    cd = codemand(protos, dens).collect()
    check(cd, CODEMAND)
    # S(b,b) = .5+.3+.15; S(a,a) = S(a,b) = .5; S(b,c) = S(c,c) = .3; a and c never meet
    got = {(r["role_a"], r["role_b"]): (r["S"], r["n_prototypes"]) for r in cd.iter_rows(named=True)}
    assert list(got) == [("b", "b"), ("a", "a"), ("a", "b"), ("b", "c"), ("c", "c")]
    want = {("b", "b"): (0.95, 3), ("a", "a"): (0.5, 1), ("a", "b"): (0.5, 1), ("b", "c"): (0.3, 1), ("c", "c"): (0.3, 1)}
    for k, (s, n) in want.items():
        assert got[k][0] == pytest.approx(s) and got[k][1] == n


# ---- graph -------------------------------------------------------------------------------------


def test_graph_types_gaps_and_integrity():
    protos = frame(EIGHT)
    c, m = classes(protos, ClassParams())
    dens = density(protos, DensityParams())
    prox = proximity(protos, m.lazy(), ProximityParams())
    fe = pl.DataFrame(
        [
            {
                "fragment_id": f,
                "doc_id": r["doc_ids"][0],
                "prototype_id": r["prototype_id"],
                "support": "direct",
                "confidence": 0.8,
                "span": "s",
            }
            for r in EIGHT
            for f in r["fragment_ids"]
        ]
        + [{"fragment_id": "f1", "doc_id": "d1", "prototype_id": "unknown", "support": "direct", "confidence": 0.5, "span": "s"}]
    )
    nodes, edges = graph(protos, m, c, fe.lazy(), prox, dens)
    check(nodes, GRAPH_NODES)
    check(edges, GRAPH_EDGES)
    assert set(nodes["node_type"]) == set(NODE_TYPES)
    assert set(edges["edge_type"]) == set(EDGE_TYPES)
    assert nodes["node_id"].n_unique() == nodes.height
    ids = set(nodes["node_id"])
    assert set(edges["src"]) <= ids and set(edges["dst"]) <= ids
    assert "prototype:unknown" not in ids
    assert edges.equals(edges.sort(["edge_type", "src", "dst"])) and nodes.equals(nodes.sort(["node_type", "node_id"]))
    gap = dict(nodes.filter(pl.col("node_type") == "prototype").select("node_id", "coverage_gap").iter_rows())
    assert gap["prototype:p2"] is True and gap["prototype:p1"] is False and gap["prototype:p3"] is False
    assert not nodes.filter(pl.col("node_type") != "prototype")["coverage_gap"].any()
    near = edges.filter(pl.col("edge_type") == "near")
    assert ("prototype:p1", "prototype:p2") in near.select("src", "dst").rows()  # similarity exactly 0.45
    assert near.height == prox.collect()["in_network"].sum()
    g = to_networkx(nodes, edges)
    assert g.number_of_nodes() == nodes.height and g.number_of_edges() == edges.height
    assert g.nodes["role:metric"]["node_type"] == "evidence_role"
    assert g.edges["fragment:f1", "prototype:p1"] == {"edge_type": "answers", "weight": 0.8, "support": "direct"}


def test_average_linkage_is_scikit_learns_partition():
    """Classes cut SciPy's average linkage themselves; the partition must be scikit-learn's, ties included."""
    import numpy as np
    from sklearn.cluster import AgglomerativeClustering

    from qspace_frames.qspace.classes import average_linkage_labels, jaccard_distances

    rng = np.random.default_rng(7)
    for trial in range(150):
        n = int(rng.integers(3, 40))
        x = (rng.random((n, int(rng.integers(2, 10)))) < rng.uniform(0.1, 0.6)).astype(np.int8)
        if trial % 3 == 0:  # duplicate rows: equal distances everywhere
            x = x[rng.integers(0, max(2, n // 4), n)]
        d = jaccard_distances(x)
        k = int(rng.integers(1, n))
        want = AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="average").fit_predict(d)
        got = average_linkage_labels(d, k)
        part = lambda labels: sorted(tuple(np.flatnonzero(labels == v)) for v in np.unique(labels))  # noqa: E731
        assert part(got) == part(want), (n, k)


def test_average_linkage_merges_are_scipys_linkage():
    """The nearest-neighbour chain replays SciPy's average linkage merge for merge: the same pairs,
    distances, sizes and numbering, also where many distances tie."""
    import numpy as np
    from scipy.cluster.hierarchy import linkage

    from qspace_frames.qspace.classes import average_linkage_merges, jaccard_distances

    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(2, 50))
        if trial % 2:  # quarter steps: ties everywhere
            d = np.triu(np.round(rng.random((n, n)) * 4) / 4, 1)
            d = d + d.T
        else:
            d = jaccard_distances((rng.random((n, int(rng.integers(2, 10)))) < rng.uniform(0.1, 0.6)).astype(np.int8))
        i, j = np.triu_indices(n, k=1)
        np.testing.assert_array_equal(average_linkage_merges(d), linkage(d[i, j], method="average"), err_msg=f"trial {trial}")

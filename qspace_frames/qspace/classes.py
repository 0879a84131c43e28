"""Stage 6: class discovery.

Prototypes are described by binary features (a one-hot of their intent plus the presence of each
evidence role) and grouped by average-linkage agglomerative clustering over Jaccard distances.
Too few prototypes to cluster meaningfully fall back to the fixed archetypes below. Every class is
named by its best-overlapping archetype and its two most common intents; names are unique.
Classes are only *proposed*: a researcher accepts, renames or merges them.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..exprs import jaccard
from ..ids import id_expr
from ..params import ClassParams
from ..schemas import conform

CLASSES = {
    "class_id": pl.String,  # content id of the sorted member prototype ids
    "name": pl.String,  # unique across classes
    "archetype": pl.String,  # key of ARCHETYPES, or "other" when no archetype overlaps
    "archetype_overlap": pl.Float64,  # Jaccard of the class's intent set with the archetype's
    "intents": pl.List(pl.String),
    "roles": pl.List(pl.String),
    "n_prototypes": pl.Int64,
    "status": pl.String,  # always "proposed"
    "method": pl.String,  # "agglomerative" or "archetype_fallback"
}

MEMBERSHIPS = {
    "class_id": pl.String,
    "prototype_id": pl.String,
    "intent": pl.String,
}

# The three document families of the sample corpus, as intent sets. They name clusters and are the
# classes themselves when there are too few prototypes to cluster. An intent may sit in several
# (threshold_lookup: policies and budgets; owner_lookup: policies and SOPs).
ARCHETYPES: dict[str, frozenset[str]] = {
    "finance_like": frozenset({"metric_lookup", "variance_explanation", "threshold_lookup"}),
    "policy_like": frozenset(
        {
            "approval_lookup",
            "threshold_lookup",
            "owner_lookup",
            "effective_date_lookup",
            "applicability_check",
            "exception_lookup",
            "rule_lookup",
        }
    ),
    "sop_like": frozenset({"next_step_lookup", "sla_lookup", "escalation_lookup", "owner_lookup"}),
}
OTHER = "other"  # a class none of whose intents is in any archetype (an intent added later, say)
LABELS = {"finance_like": "finance-like", "policy_like": "policy-like", "sop_like": "SOP-like", OTHER: "other"}


def n_clusters(n_prototypes: int, p: ClassParams) -> int:
    """k = n_classes if set, else max(2, min(max_classes, n // 2)); never more than n."""
    k = p.n_classes if p.n_classes is not None else max(2, min(p.max_classes, n_prototypes // 2))
    return min(k, n_prototypes)


def _archetypes() -> pl.LazyFrame:
    return pl.LazyFrame(
        {"archetype": sorted(ARCHETYPES), "a_intents": [sorted(ARCHETYPES[a]) for a in sorted(ARCHETYPES)]},
        schema={"archetype": pl.String, "a_intents": pl.List(pl.String)},
    )


def _best_archetype(df: pl.LazyFrame, key: str, intents: str) -> pl.LazyFrame:
    """Per `key`: the archetype whose intent set overlaps `intents` best (Jaccard; ties by name)."""
    return (
        df.select(key, intents)
        .join(_archetypes(), how="cross")
        .with_columns(jaccard(pl.col(intents), pl.col("a_intents")).alias("archetype_overlap"))
        .sort([key, "archetype_overlap", "archetype"], descending=[False, True, False])
        .group_by(key, maintain_order=True)
        .first()
        .with_columns(pl.when(pl.col("archetype_overlap") > 0).then(pl.col("archetype")).otherwise(pl.lit(OTHER)).alias("archetype"))
        .select(key, "archetype", "archetype_overlap")
    )


def features(prototypes: pl.DataFrame) -> pl.DataFrame:
    """Binary feature matrix: `intent:<x>` one-hot + `role:<r>` presence + `archetype:<a>` for the
    archetypes the intent belongs to (so a policy rule and a policy exception share something even
    when their roles differ), columns sorted, rows by prototype_id."""
    arch = {
        i: sorted(f"archetype:{a}" for a, members in ARCHETYPES.items() if i in members) for i in sorted(set().union(*ARCHETYPES.values()))
    }
    tokens = pl.concat_list(
        pl.concat_str(pl.lit("intent:"), pl.col("intent")),
        pl.col("intent").replace_strict(arch, default=[], return_dtype=pl.List(pl.String)),
        pl.col("role_signature").fill_null([]).list.eval(pl.concat_str(pl.lit("role:"), pl.element())),
    )
    df = prototypes.select("prototype_id", tokens.alias("_f")).sort("prototype_id")
    vocab = sorted(df["_f"].explode().drop_nulls().unique().to_list())
    return df.select("prototype_id", *[pl.col("_f").list.contains(f).cast(pl.Int8).alias(f) for f in vocab])


def jaccard_distances(x: np.ndarray) -> np.ndarray:
    """Pairwise Jaccard distances of binary rows, in exact integer counts (no float drift)."""
    x = x.astype(np.int64)
    inter = x @ x.T
    size = x.sum(axis=1)
    union = size[:, None] + size[None, :] - inter
    return 1.0 - np.divide(inter, union, out=np.zeros(inter.shape, dtype=np.float64), where=union > 0)


def average_linkage_merges(dist: np.ndarray) -> np.ndarray:
    """The n - 1 merges of average-linkage (UPGMA) clustering of a square distance matrix, as
    rows (a, b, distance, size) in the order and numbering SciPy's `linkage(method="average")`
    gives (scikit-learn's AgglomerativeClustering calls it), ties included: leaves are 0..n-1 and
    the m-th merge makes cluster n + m.

    Merges are found by the nearest-neighbour chain (Muellner 2011): follow nearest neighbours
    from a cluster until two are each other's, merge them. Ties go to the chain's previous cluster,
    then to the lowest index; a merged cluster takes the higher index of its two, with
    distances (n_a d(a, i) + n_b d(b, i)) / (n_a + n_b). The merges, stably sorted by distance, are
    then numbered in that order."""
    n = dist.shape[0]
    d = np.array(dist, dtype=np.float64)
    size = np.ones(n, dtype=np.int64)
    idx = np.arange(n)
    found = np.empty((max(n - 1, 0), 4))
    chain: list[int] = []
    for m in range(n - 1):
        if not chain:
            chain.append(int(np.flatnonzero(size)[0]))
        while True:
            x = chain[-1]
            row = np.where((size > 0) & (idx != x), d[x], np.inf)
            y = int(np.argmin(row))  # the first index of the least distance
            if len(chain) > 1 and not row[y] < d[x, chain[-2]]:
                y = chain[-2]
                break
            chain.append(y)
        del chain[-2:]
        x, y = min(x, y), max(x, y)
        nx, ny = size[x], size[y]
        found[m] = (x, y, d[x, y], nx + ny)
        size[x], size[y] = 0, nx + ny
        live = np.flatnonzero(size > 0)
        live = live[live != y]
        d[y, live] = d[live, y] = (nx * d[x, live] + ny * d[y, live]) / (nx + ny)
    merges = found[np.argsort(found[:, 2], kind="stable")]
    # number the clusters in merge order: a slot stands for the latest cluster that holds it
    top, members = np.arange(2 * n - 1), np.ones(2 * n - 1, dtype=np.int64)
    for m in range(n - 1):
        a, b = sorted((_top(top, int(merges[m, 0])), _top(top, int(merges[m, 1]))))
        top[a] = top[b] = n + m
        members[n + m] = members[a] + members[b]
        merges[m, 0], merges[m, 1], merges[m, 3] = a, b, members[n + m]
    return merges


def average_linkage_labels(dist: np.ndarray, k: int) -> np.ndarray:
    """Average-linkage agglomerative clusters of a precomputed distance matrix, cut at k clusters:
    the partition scikit-learn's AgglomerativeClustering(n_clusters=k, metric="precomputed",
    linkage="average") gives (the clusters left after the first n - k merges), without importing
    scikit-learn or SciPy (a second of start-up for one small call). Labels are each cluster's
    top merge node."""
    n = dist.shape[0]
    merges = average_linkage_merges(dist)
    top = np.arange(2 * n - 1)
    for m in range(n - k):
        top[int(merges[m, 0])] = top[int(merges[m, 1])] = n + m
    return np.array([_top(top, i) for i in range(n)], dtype=np.int64)


def _top(top: np.ndarray, i: int) -> int:
    """The latest cluster holding node i, where `top` points each merged node at its merge."""
    while top[i] != i:
        i = int(top[i])
    return i


def _cluster(prototypes: pl.DataFrame, p: ClassParams) -> pl.DataFrame:
    """prototype_id -> raw cluster label (average linkage, as scikit-learn computes it) on prototypes sorted by id."""
    feats = features(prototypes)
    k = n_clusters(feats.height, p)
    if k >= feats.height:  # every prototype its own class; the linkage would agree, minus the work
        labels = np.arange(feats.height)
    else:
        labels = average_linkage_labels(jaccard_distances(feats.drop("prototype_id").to_numpy()), k)
    return feats.select("prototype_id").with_columns(pl.Series("_label", labels, dtype=pl.Int64))


def _fallback(prototypes: pl.DataFrame) -> pl.DataFrame:
    """prototype_id -> archetype, by the best overlap of the prototype's intent with each archetype."""
    one = prototypes.lazy().select("prototype_id", pl.concat_list("intent").alias("_i"))
    return _best_archetype(one, "prototype_id", "_i").select("prototype_id", pl.col("archetype").alias("_label")).collect()


def _name(top: pl.Expr, label: pl.Expr) -> pl.Expr:
    return pl.concat_str(label, pl.lit(": "), top)


def classes(prototypes: pl.LazyFrame, p: ClassParams) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Prototypes in; (classes, memberships) out, schemas CLASSES and MEMBERSHIPS.

    Input order never matters: prototypes are sorted by id before clustering, clusters are
    ordered by their smallest member id, and class ids hash the sorted member ids.
    """
    protos = (
        prototypes.select("prototype_id", "intent", pl.col("role_signature").fill_null([]))
        .sort("prototype_id", "intent")
        .unique("prototype_id", keep="first", maintain_order=True)
        .collect()
    )
    if protos.height == 0:
        return pl.DataFrame(schema=CLASSES), pl.DataFrame(schema=MEMBERSHIPS)

    fallback = protos.height < p.min_prototypes_to_cluster
    labels = _fallback(protos) if fallback else _cluster(protos, p)
    members = (
        protos.lazy()
        .join(labels.lazy(), on="prototype_id", how="inner")
        # the cluster's order: rank of its smallest member id (sklearn's own labels are arbitrary)
        .with_columns(pl.col("prototype_id").min().over("_label").rank("dense").cast(pl.Int64).alias("_c"))
    )
    per_class = (
        members.group_by("_c")
        .agg(
            pl.col("prototype_id").sort().alias("_members"),
            pl.col("intent").unique().sort().alias("intents"),
            pl.col("role_signature").explode().drop_nulls().unique().sort().alias("roles"),
            pl.len().cast(pl.Int64).alias("n_prototypes"),
            pl.col("_label").first().cast(pl.String).alias("_label"),
        )
        .with_columns(id_expr("class", "_members").alias("class_id"))
    )
    if fallback:  # the class *is* the archetype it was assigned to
        arch = (
            per_class.select("_c", "intents", pl.col("_label").alias("archetype"))
            .join(_archetypes(), on="archetype", how="left")
            .select("_c", "archetype", jaccard(pl.col("intents"), pl.col("a_intents").fill_null([])).alias("archetype_overlap"))
        )
    else:
        arch = _best_archetype(per_class, "_c", "intents")
    # top two intents by member count, ties by intent name
    top = (
        members.group_by("_c", "intent")
        .agg(pl.len().alias("_n"))
        .sort(["_c", "_n", "intent"], descending=[False, True, False])
        .group_by("_c", maintain_order=True)
        .agg(pl.col("intent").head(2).str.join(" + ").alias("_top"))
    )
    label = pl.col("archetype").replace_strict(LABELS, default=pl.col("archetype"), return_dtype=pl.String)
    named = (
        per_class.join(arch, on="_c")
        .join(top, on="_c")
        .with_columns(_name(pl.col("_top"), label).alias("_base"))
        # equal names get " (2)", " (3)", ... in cluster order; base names never end in " (n)"
        .sort("_c")
        .with_columns(pl.int_range(1, pl.len() + 1).over("_base").alias("_dup"))
        .with_columns(
            pl.when(pl.col("_dup") == 1)
            .then(pl.col("_base"))
            .otherwise(pl.concat_str(pl.col("_base"), pl.lit(" ("), pl.col("_dup").cast(pl.String), pl.lit(")")))
            .alias("name"),
            pl.lit("proposed").alias("status"),
            pl.lit("archetype_fallback" if fallback else "agglomerative").alias("method"),
        )
    )
    out_classes = conform(named.sort(["n_prototypes", "name"], descending=[True, False]), CLASSES).collect()
    out_members = conform(members.join(named.select("_c", "class_id"), on="_c").sort(["class_id", "prototype_id"]), MEMBERSHIPS).collect()
    return out_classes, out_members

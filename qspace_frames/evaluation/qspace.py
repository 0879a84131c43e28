"""The Qspace retrieval strategy: question -> prototypes -> fragments -> selected tree -> evidence leaves.

1. The question is read by the same detector cues that built the question space: the intents
   it asks about select candidate prototypes.
2. Fragments of the question's document are ranked by BM25 of the question over the fragment
   (heading path included); fragments that answer a candidate prototype gain its density.
3. Within a fragment the reader follows the fragment's selected tree to its evidence leaves,
   then reads the fragment's other sentences. What it loads is a sentence, never the whole
   fragment: a unit's score is its own BM25 plus its fragment's, plus the prototype boost when
   the sentence holds a leaf of a candidate prototype.

Units are loaded best-first until max_tokens; nodes_visited counts each fragment entered, each
tree node walked to reach a leaf, and each sentence read.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..affordances.rules import DETECTORS
from ..affordances.sentences import all_sentences
from ..exprs import exact_sums
from ..frames import as_lazy
from ..params import AffordanceParams, EvalParams
from ..trees.compile import CANDIDATES
from . import semantic
from .bm25 import Bm25Counts, query_terms, term_counts, terms_expr
from .loading import count_ranked, gold_queries, load_in_order

STRATEGY = "qspace"
FRAGMENT_SLICE = 50_000  # fragments read per step when counting the terms of the whole corpus
BOOST_ROWS = 1_000_000  # answering places (leaf x candidate set) boosted per step


def question_intents(queries: pl.LazyFrame) -> pl.LazyFrame:
    """(query_id, intent) for every detector whose cue the question itself carries."""
    return pl.concat(
        [queries.filter(pl.col("question").str.contains(d.cue)).select("query_id", pl.lit(d.intent).alias("intent")) for d in DETECTORS]
    )


def fragment_terms(
    units: pl.DataFrame, sents: pl.DataFrame, s_dl: pl.DataFrame, s_tf: pl.DataFrame, wanted: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(dl, tf) as `term_counts` gives them for fragment units (chunk, fragment_id, heading_path,
    text) searched as "<heading path> <text>", from their sentences' (chunk, fragment_id) counts.

    The sentences tile the fragment's text with whitespace between them, so the unit's words are
    its headings' and then its sentences'; it has none when its heading path or text is null
    (the joined text is then null). Only the headings are read here."""
    heads = units.select(
        pl.col("chunk").alias("_u"), pl.when(pl.col("text").is_not_null()).then(pl.col("heading_path").list.join(" ")).alias("text")
    )
    h_dl, h_tf = term_counts(heads, wanted)
    owner = (
        sents.select(pl.col("chunk").alias("_s"), "fragment_id")
        .join(units.filter(pl.col("heading_path").is_not_null()).select("fragment_id", pl.col("chunk").alias("_u")), on="fragment_id")
        .drop("fragment_id")
    )
    s_dl = s_dl.rename({"_u": "_s"}).join(owner, on="_s").group_by("_u").agg(pl.col("dl").sum().alias("_s_dl"))
    dl = h_dl.join(s_dl, on="_u", how="left").select("_u", (pl.col("dl") + pl.col("_s_dl").fill_null(0)).alias("dl"))
    tf = (
        pl.concat([h_tf, s_tf.rename({"_u": "_s"}).join(owner, on="_s").select("_u", "term", "tf")])
        .group_by("_u", "term")
        .agg(pl.col("tf").sum())
    )
    return dl, tf


def selected_leaves(nodes: pl.LazyFrame, scores: pl.LazyFrame) -> pl.LazyFrame:
    """(fragment_id, evidence_id, span_start, depth, preorder, WALK) of every evidence leaf of a selected tree."""
    return tree_leaves(all_leaves(nodes, scores, every=False), SELECTED)


# a leaf's ancestors below the root, from the top (the deepest candidate, class -> role -> leaf, has two)
WALK = ("_a1", "_a2")


def all_leaves(nodes: pl.LazyFrame, scores: pl.LazyFrame, every: bool = True) -> pl.DataFrame:
    """(candidate, selected, fragment_id, evidence_id, span_start, depth, preorder, WALK) of every
    evidence leaf of every candidate tree (`every`), or of the selected trees only; WALK holds the
    node ids of the leaf's ancestors (null past its parent), from which `walked` measures how far
    apart two leaves of a tree are. The node table is the largest the evaluation reads: its rows
    are kept or dropped as they are read (the selected tree ids are a set the scan filters by, not a
    join), so it never sits in memory whole (a join held 0.6 GB more at x16); the streaming engine
    reads it in morsels (0.33 GB at x16 instead of 0.42)."""
    selected = scores.filter(pl.col("selected")).select("tree_id").collect(engine="streaming")["tree_id"].implode()
    kept = pl.lit(True) if every else pl.col("tree_id").is_in(selected)
    leaves = nodes.filter((pl.col("kind") == "leaf") & kept).select(
        "candidate",
        pl.col("tree_id").is_in(selected).alias("selected"),
        "fragment_id",
        "evidence_id",
        "span_start",
        "depth",
        "preorder",
        "parent_id",
    )
    groups = nodes.filter((pl.col("kind") == "group") & kept).select(
        pl.col("node_id").alias("parent_id"), pl.col("parent_id").alias("_grand")
    )
    depth = pl.col("depth")
    return (
        leaves.join(groups, on="parent_id", how="left", maintain_order="left")
        .with_columns(
            pl.when(depth == 2).then(pl.col("parent_id")).when(depth == 3).then(pl.col("_grand")).alias("_a1"),
            pl.when(depth == 3).then(pl.col("parent_id")).alias("_a2"),
        )
        .drop("parent_id", "_grand")
        .collect(engine="streaming")
    )


# The trees Qspace can be run with (`by_tree`): the selected tree of each fragment, one candidate
# forced on every fragment, or none (no leaf, so no prototype boost and no path to walk).
SELECTED, NO_TREE = "selected", "no tree"
TREE_CHOICES = (SELECTED, *CANDIDATES, NO_TREE)


def tree_leaves(leaves: pl.DataFrame, choice: str) -> pl.LazyFrame:
    """The evidence leaves (`all_leaves`) of the trees `choice` (one of TREE_CHOICES) names."""
    keep = pl.col("selected") if choice == SELECTED else pl.col("candidate") == choice if choice != NO_TREE else pl.lit(False)
    return leaves.lazy().filter(keep).select("fragment_id", "evidence_id", "span_start", "depth", "preorder", *WALK)


def walked(units: pl.DataFrame, leaves: pl.LazyFrame) -> pl.DataFrame:
    """The ranked units (query_id, fragment_id, char_start, ... best first) in the order a reader
    following the trees loads them. The ranking says when a fragment's evidence is read: the places
    its leaf sentences hold in it. The fragment's tree says in which order: the first of them (the
    question's path into the tree) takes the first place, and the others follow by how far they
    are from it in the tree (siblings before cousins), then in the tree's own order. Other sentences
    keep their places. With a flat tree the leaves follow the source order; with no tree
    (`leaves` empty) the ranking is unchanged. Rows move by a permutation of their positions, not a
    sort of the whole ranking: most fragments hold one leaf, and nothing of theirs moves."""
    key = ["query_id", "fragment_id", "char_start"]
    at = (
        units.select(*key)
        .with_row_index("_i")
        .join(
            leaves.rename({"span_start": "char_start"}).select("fragment_id", "char_start", "depth", "preorder", *WALK).collect(),
            on=key[1:],
        )
        .sort("query_id", "fragment_id", "_i", "preorder")
    )
    if at.is_empty():
        return units
    entry = (
        at.group_by("query_id", "fragment_id", maintain_order=True)
        .first()
        .select("query_id", "fragment_id", *[pl.col(c).alias(f"_e{c}") for c in ("depth", "preorder", *WALK)])
    )
    # the depth of the lowest common ancestor: how many ancestors from the root down both leaves share
    shared = pl.lit(0)
    for k, a in enumerate(WALK, 1):  # the deepest shared ancestor decides
        shared = pl.when(pl.col(a).is_not_null() & (pl.col(a) == pl.col(f"_e{a}"))).then(k).otherwise(shared)
    distance = pl.when(pl.col("preorder") == pl.col("_epreorder")).then(0).otherwise(pl.col("depth") + pl.col("_edepth") - 2 * shared)
    moves = (
        at.join(entry, on=key[:2])
        .select(*key, "_i", distance.alias("_d"), pl.col("preorder").alias("_p"))
        .sort(*key, "_d", "_p")
        .unique(key, keep="first", maintain_order=True)  # a sentence holding several leaves: its nearest
        .sort("query_id", "fragment_id", "_d", "_p", "char_start")
        # the fragment's rows, in the ranking's order, filled in the walk's order
        .select("_i", pl.col("_i").sort().over("query_id", "fragment_id").alias("_to"))
        .filter(pl.col("_i") != pl.col("_to"))
    )
    if moves.is_empty():
        return units
    rows = np.arange(units.height)
    rows[moves["_to"].to_numpy()] = moves["_i"].to_numpy()
    return units[rows]


def by_tree(
    gold,
    fragments: pl.LazyFrame,
    prototypes: pl.LazyFrame,
    evidence: pl.LazyFrame,
    density: pl.LazyFrame,
    nodes: pl.LazyFrame,
    scores: pl.LazyFrame,
    p: EvalParams,
    ap: AffordanceParams | None = None,
    ablation: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """Retrievals (evaluation.RETRIEVALS) of the Qspace strategy for resolved gold questions: BM25
    of the question's sentences and fragments, the prototype boosts of the selected trees' leaves,
    one ranking, then the units loaded in rank order within the budget; and (the tree ablation)
    the same with each of TREE_CHOICES on the `ablation` questions (`ablation_questions`): the
    BM25 counts and the latent space are the same for all, only the leaves change."""
    ablate = ablation is not None and ablation.height > 0
    q = gold_queries(gold).collect().sort("query_id")
    s_score, sents, f_score = _bm25_scores(q, fragments, p, ap or AffordanceParams())
    leaves = all_leaves(nodes, scores, every=ablate)  # the node table read once for every choice
    if ablate:  # and so are the other tables each choice reads
        prototypes, density, evidence = (
            x.select(*cols).collect().lazy()
            for x, cols in (
                (prototypes, ["prototype_id", "intent"]),
                (density, ["prototype_id", "p_q"]),
                (evidence, ["evidence_id", "prototype_ids"]),
            )
        )

    def ranked(qs: pl.DataFrame, choice: str) -> pl.DataFrame:
        ids = qs["query_id"].implode()
        sig, boosted, top_proto = _prototype_boosts(qs.lazy(), prototypes, density, evidence, tree_leaves(leaves, choice), sents)
        mine = [x.filter(pl.col("query_id").is_in(ids)) for x in (s_score, f_score)]
        return _ranked_units(mine[0], sents, mine[1], sig, boosted, top_proto, p)

    units = ranked(q, SELECTED)
    space = semantic.LatentSpace.of(units, p.qspace_semantic_dims) if p.qspace_semantic_dims else None
    similarity = space.similarity(q, units) if space is not None else None  # None: too little text, the lexical ranking stands

    counted = []  # (text, n_tokens) of the units loaded so far: the choices load much the same sentences

    def loaded(u: pl.DataFrame, choice: str, counts=None) -> pl.DataFrame:
        known = pl.concat(counted).unique("text") if counted else None
        ranking = _introduced(_first_ranked(_with_feedback(u if similarity is None else _with_meaning(u, similarity, p), q, p, counts)))
        out = _loaded(walked(ranking, tree_leaves(leaves, choice)), p, known)
        counted.append(out.select("text", "n_tokens"))
        return out

    selected = loaded(units, SELECTED)
    if not ablate:
        return selected, {}
    # the selected trees' rows of the sample are those of the run (a question's ranking reads only its own rows)
    sample = gold_queries(ablation).collect()
    mine = units.join(sample.select("query_id"), on="query_id", how="semi")
    # every tree choice ranks the same sentences (those of the sample's documents): their words are
    # counted once, not once per choice (a fifth of the evaluation on CUAD)
    counts = unit_counts(mine) if p.qspace_feedback_weight and mine.height else None
    kept = selected.join(sample.select("query_id"), on="query_id", how="semi")
    return selected, {choice: kept if choice == SELECTED else loaded(ranked(sample, choice), choice, counts) for choice in TREE_CHOICES}


def ablation_questions(gold, n: int, max_chars: int = 0) -> pl.DataFrame:
    """The resolved gold questions the tree ablation runs on: `n` of those served (all when there
    are fewer), evenly spaced by id so they spread over the documents (none when `n` is 0); fewer,
    still evenly spaced, when their documents (`n_chars`) hold more than `max_chars` characters in
    all (0: no bound). Each question ranks every sentence of its document once per tree choice: 100
    questions on one 1 MB document made the ablation 63 of the evaluation's 85 seconds."""
    g = as_lazy(gold)
    ok = (g.filter(pl.col("status") == "ok") if "status" in g.collect_schema().names() else g).collect().sort("id")

    def spaced(k: int) -> pl.DataFrame:
        return ok.gather([i * ok.height // k for i in range(k)]) if k < ok.height else ok

    sample = spaced(n)
    while max_chars and "n_chars" in sample.columns and sample.height > 1:
        total = sample["n_chars"].fill_null(0).sum()
        if total <= max_chars:
            break
        sample = spaced(max(1, sample.height * max_chars // total))
    return sample


def _bm25_scores(q: pl.DataFrame, fragments, p: EvalParams, ap: AffordanceParams) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """(sentence scores, the questions' documents' sentences, fragment scores): BM25 of each
    question over the sentences and the fragments of the whole corpus, counted in one pass."""
    # every sentence of every fragment is a unit a reader can load (a leaf or the fragment's remainder);
    # the corpus is read a slice of fragments at a time, and only the questions' own documents are kept whole
    cols = ["doc_id", "fragment_id", "kind", "heading_path", "char_start", "char_end", "text"]

    def slices():  # `fragments`: a frame, or batches of them in the stored order (read once)
        if not isinstance(fragments, (pl.DataFrame, pl.LazyFrame)):
            yield from (f.select(cols) for f in fragments)
            return
        frags = as_lazy(fragments).select(cols).collect()
        for off in range(0, max(frags.height, 1), FRAGMENT_SLICE):
            yield frags.slice(off, FRAGMENT_SLICE)

    # sentences and fragments are counted in one pass: a fragment's words are its sentences'
    q_terms = query_terms(q)
    terms = q_terms.select("term").unique()
    sent_counts, frag_counts, s_off, f_off = Bm25Counts(q), Bm25Counts(q), 0, 0
    for f in slices():
        s = (
            all_sentences(f.lazy(), ap)
            .select(
                "doc_id",
                "fragment_id",
                pl.col("sent_start").alias("char_start"),
                pl.col("sent_end").alias("char_end"),
                pl.col("sentence").alias("text"),
            )
            .collect()
        )
        s = s.with_columns(pl.int_range(s_off, s_off + s.height, dtype=pl.Int64).alias("chunk"))
        u = f.filter(pl.col("kind") != "section").select("doc_id", "fragment_id", "heading_path", "text")
        u = u.with_columns(pl.int_range(f_off, f_off + u.height, dtype=pl.Int64).alias("chunk"))
        s_off, f_off = s_off + s.height, f_off + u.height
        s_dl, s_tf = term_counts(s.select(pl.col("chunk").alias("_u"), "text"), terms)
        sent_counts.add(s.select(pl.col("chunk").alias("_u"), "doc_id", "chunk"), s_dl, s_tf, s)
        frag_counts.add(
            u.select(pl.col("chunk").alias("_u"), "doc_id", "chunk"),
            *fragment_terms(u, s, s_dl, s_tf, terms),
            u.select("doc_id", "fragment_id", "chunk"),
        )
        del s, u
    s_score, sents = sent_counts.scores(q_terms, p)
    s_score = s_score.rename({"score": "s_bm25"})
    sents = sents.lazy()
    f_score, frag_units = frag_counts.scores(q_terms, p)
    del sent_counts, frag_counts
    f_score = f_score.join(frag_units.lazy().select("chunk", "fragment_id"), on="chunk").select(
        "query_id", "fragment_id", pl.col("score").alias("f_bm25")
    )
    return s_score, sents, f_score


def _prototype_boosts(queries: pl.LazyFrame, prototypes, density, evidence, leaves: pl.LazyFrame, sents: pl.LazyFrame):
    """(sig, boosted, top_proto): each question's candidate-set number, the boost of every
    sentence that holds one of the trees' `leaves` (`tree_leaves`) answering one of its candidate
    prototypes (with the leaf's depth), and the best boost of the corpus per candidate set (to
    normalise by)."""
    # candidate prototypes of the question, and the selected-tree leaves that answer them. Questions
    # with the same candidates get the same boosts: each distinct candidate set is computed once.
    cand = (
        question_intents(queries)
        .join(prototypes.select("prototype_id", "intent"), on="intent")
        .join(density.select("prototype_id", "p_q"), on="prototype_id")
        .select("query_id", "prototype_id", "p_q")
        .collect()
    )
    sig = (
        cand.group_by("query_id")
        .agg(pl.col("prototype_id").sort().str.join("|").alias("_key"))
        .with_columns(pl.col("_key").rank("dense").cast(pl.Int64).alias("_s"))
        .drop("_key")
    )
    answers = (
        evidence.select("evidence_id", pl.col("prototype_ids").alias("prototype_id"))
        .explode("prototype_id")
        .join(cand.lazy().select("prototype_id").unique(), on="prototype_id", how="semi")
        .join(leaves, on="evidence_id")
        .select("prototype_id", "fragment_id", pl.col("span_start").alias("char_start"), "depth")
        .collect()
    )
    # the fragments a question can load: those of its own document
    wanted = (  # computed once, not once per candidate set
        sents.select("doc_id", "fragment_id")
        .unique()
        .join(queries.select("query_id", "doc_id"), on="doc_id")
        .join(sig.lazy(), on="query_id")
        .select("_s", "fragment_id")
        .collect()
    )
    # the (fragment, sentence start) places of the answers, numbered: the loop below groups and
    # joins them as one integer, not as text
    key = ["fragment_id", "char_start"]
    places = answers.select(key).unique().sort(key).with_row_index("_k")
    answers = answers.join(places, on=key).select("prototype_id", "_k", "depth")
    # each candidate set's prototypes (those of its first question), and the sets in batches of at
    # most BOOST_ROWS answering places: one pass per batch, not per set (a pass costs ~20 small
    # queries whatever its size), memory still bounded
    reps = (
        cand.join(sig, on="query_id")
        .filter(pl.col("query_id") == pl.col("query_id").min().over("_s"))
        .select("_s", "prototype_id", "p_q")
        .sort("_s", "prototype_id")
    )
    sizes = (
        reps.join(answers.group_by("prototype_id").len("_n"), on="prototype_id", how="left")
        .group_by("_s")
        .agg(pl.col("_n").fill_null(0).sum())
        .sort("_s")
        .with_columns((pl.col("_n").cum_sum() // BOOST_ROWS).alias("_b"))
    )
    boosted, top_proto = [], []
    for (_,), batch in sizes.group_by("_b", maintain_order=True):
        hits = answers.join(reps.join(batch.select("_s"), on="_s", how="semi"), on="prototype_id").drop("prototype_id")
        sums = exact_sums(hits, ["_s", "_k"], {"proto": "p_q"})
        # the boost is normalised by the best fragment of the whole corpus, kept only where the question can load it
        top_proto.append(batch.select("_s").join(sums.group_by("_s").agg(pl.col("proto").max().alias("_max_proto")), on="_s", how="left"))
        mine = places.join(wanted.join(batch.select("_s"), on="_s", how="semi").unique(), on="fragment_id").select("_s", "_k")
        boosted.append(
            sums.join(mine, on=["_s", "_k"], how="semi").join(
                hits.join(mine, on=["_s", "_k"], how="semi").group_by("_s", "_k").agg(pl.col("depth").max().alias("leaf_depth")),
                on=["_s", "_k"],
            )
        )
        del hits, sums
    empty = pl.DataFrame(schema={"_k": places.schema["_k"], "proto": pl.Float64, "leaf_depth": pl.Int64, "_s": pl.Int64})
    boosted = pl.concat([empty, *[x.select(empty.columns).cast(empty.schema) for x in boosted]]).join(places, on="_k").drop("_k")
    top_proto = pl.concat([pl.DataFrame(schema={"_s": pl.Int64, "_max_proto": pl.Float64}), *top_proto])
    return sig, boosted, top_proto


def _ranked_units(s_score, sents, f_score, sig, boosted, top_proto, p: EvalParams) -> pl.DataFrame:
    """Every loadable sentence of each question's document with its score: its own BM25, its
    fragment's (weighted) and its normalised prototype boost, best first."""
    key = ["_s", "fragment_id", "char_start"]
    return (
        s_score.join(sents.select("chunk", "fragment_id", "char_start", "char_end", "text"), on="chunk")
        .join(f_score, on=["query_id", "fragment_id"], how="left")
        .join(sig.lazy(), on="query_id", how="left")
        .join(boosted.lazy(), on=key, how="left")
        .join(top_proto.lazy(), on="_s", how="left")
        .with_columns(
            (pl.col("proto").fill_null(0) / pl.col("_max_proto").fill_null(1).clip(lower_bound=1e-12)).alias("proto_norm"),
        )
        .with_columns(
            (
                pl.col("s_bm25")
                + p.qspace_fragment_weight * pl.col("f_bm25").fill_null(0)
                + p.qspace_prototype_weight * pl.col("proto_norm")
            ).alias("score"),
        )
        .pipe(_best_first)
        .collect()
    )


# Each question ranks every sentence of its document; the largest budget is filled long before this
# rank, so a longer document's rest is dropped before the tree walk and the token counts (a sentence
# there could only be loaded if its tree's walk or a label before it lifted it past 4,000 others).
# 100 questions on one 1 MB document of 15,000 sentences, with the ablation's bound
# (`ablation_questions`): the evaluation 85 -> 25 s, peak memory 5.5 -> 2.7 GB. The development
# splits and CUAD's contracts (2,426 sentences at most) give the same tables.
MAX_RANKED = 4_000


def _first_ranked(units: pl.DataFrame) -> pl.DataFrame:
    """Each question's first MAX_RANKED units (`_best_first`); all of them, unsorted, when no
    question has more (every corpus of ordinary documents: no sort is added to its evaluation)."""
    if units.is_empty() or units["query_id"].value_counts()["count"].max() <= MAX_RANKED:
        return units
    return _best_first(units).group_by("query_id", maintain_order=True).head(MAX_RANKED)


def _best_first(units):
    """Each question's units, best first; fragment_id breaks the last tie (a sentence may start at
    the same offset in nested fragments)."""
    return units.sort(["query_id", "score", "char_start", "fragment_id"], descending=[False, True, False, False])


def _standardised(col: str) -> pl.Expr:
    """The column's z-score within each question (0 where all its units score alike)."""
    z = (pl.col(col) - pl.col(col).mean().over("query_id")) / pl.col(col).std().over("query_id")
    return z.fill_nan(0.0).fill_null(0.0)


# the weight of a sentence's fragment's latent similarity beside its own (both times
# qspace_semantic_weight): ContractNLI dev recall +1.2 points at 256 and 512 tokens, PolicyQA dev
# within +0.4 at every budget
FRAGMENT_MEANING = 0.5


def _with_meaning(units: pl.DataFrame, similarity: pl.DataFrame, p: EvalParams) -> pl.DataFrame:
    """The ranked units re-scored by their lexical score and by the latent `similarity` of each
    sentence and of its fragment to the question (`semantic.LatentSpace.similarity`, fitted on
    these units), each standardised per question, the similarities weighted qspace_semantic_weight;
    in the ranking's order still (`_introduced` ranks them again)."""
    meaning = _standardised("similarity") + FRAGMENT_MEANING * _standardised("fragment_similarity")
    return (
        units.join(similarity, on=["query_id", "chunk"], how="left", maintain_order="left")
        .with_columns((_standardised("score") + p.qspace_semantic_weight * meaning).alias("score"))
        .drop("similarity", "fragment_similarity")
    )


# Pseudo-relevance feedback (RM3's idea, Abdul-Jaleel et al. 2004, on sentences): the question's
# first FEEDBACK_DEPTH sentences name what it is about in the documents' own words ("disclose" asked,
# "share with partners" written); their FEEDBACK_TERMS words of most tf x idf that the question lacks
# are searched too. Development recall at 256-2048 tokens, depth 3 or 5 x 5 or 10 words x weight
# 0.1-0.5: ContractNLI R@512 +.003 to +.009 in every setting, PolicyQA R@256 and R@512 +.001 to +.004,
# the other budgets within .003. Statistics are those of the units ranked (the questions' documents)
FEEDBACK_DEPTH, FEEDBACK_TERMS = 3, 5
# Measured and dropped beside it (development recall at 256-2048 tokens): the expert dictionary's
# variants of the concepts a question names, searched at 0.3 of a question word's weight (ContractNLI
# R@256 .726 -> .721, PolicyQA within +.002), or only those bridging a word the corpus lacks (nothing
# moved); each sentence's share of the question's IDF (-.007 at 512 on ContractNLI); the ask
# strategy's ranking fused in (reciprocal ranks, or its first sentence first: lower or unchanged)


def unit_counts(units: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, float]:
    """(tf, dl, idf, avgdl) of the words (terms_expr) of the ranked units' sentences: the
    statistics of the questions' documents that the feedback words are scored by."""
    sents = units.select("chunk", "text").unique("chunk").sort("chunk").with_columns(terms_expr("text").alias("_t"))
    n, avgdl = sents.height, max(sents["_t"].list.len().mean() or 0.0, 1e-9)
    tf = sents.select("chunk", "_t").explode("_t").drop_nulls("_t").group_by("chunk", "_t").len("tf")
    dl = sents.select("chunk", pl.col("_t").list.len().alias("dl"))
    idf = tf.group_by("_t").len("df").select("_t", ((n - pl.col("df") + 0.5) / (pl.col("df") + 0.5) + 1).log().alias("idf"))
    return tf, dl, idf, avgdl


def _with_feedback(units: pl.DataFrame, queries: pl.DataFrame, p: EvalParams, counts=None) -> pl.DataFrame:
    """The ranked units, each question's score plus qspace_feedback_weight x the standardised BM25
    of its feedback words (FEEDBACK_DEPTH, FEEDBACK_TERMS); in the ranking's order still. `counts`:
    the units' `unit_counts`, when already counted."""
    if p.qspace_feedback_weight == 0 or units.is_empty():
        return units
    tf, dl, idf, avgdl = counts or unit_counts(units)
    asked = queries.select("query_id", terms_expr("question").alias("_q"))
    first = _best_first(units).group_by("query_id", maintain_order=True).head(FEEDBACK_DEPTH).select("query_id", "chunk")
    words = (
        first.join(tf, on="chunk")
        .join(asked, on="query_id")
        .filter(~pl.col("_t").is_in(pl.col("_q")) & (pl.col("_t").str.len_chars() >= 3))
        .group_by("query_id", "_t")
        .agg(pl.col("tf").sum())  # integers: any order gives the same sum
        .join(idf, on="_t")
        .with_columns((pl.col("tf") * pl.col("idf")).alias("_w"))
        .sort(["query_id", "_w", "_t"], descending=[False, True, False])
        .group_by("query_id", maintain_order=True)
        .head(FEEDBACK_TERMS)
    )
    k1, b = p.bm25_k1, p.bm25_b
    parts = (
        units.select("query_id", "chunk")
        .join(words.select("query_id", "_t"), on="query_id")
        .join(tf, on=["chunk", "_t"])
        .join(dl, on="chunk")
        .join(idf, on="_t")
        .with_columns((pl.col("idf") * pl.col("tf") * (k1 + 1) / (pl.col("tf") + k1 * (1 - b + b * pl.col("dl") / avgdl))).alias("_part"))
    )
    fed = exact_sums(parts, ["query_id", "chunk"], {"_fed": "_part"})  # the same bits whatever the join order
    return (
        units.join(fed, on=["query_id", "chunk"], how="left", maintain_order="left")
        .with_columns(pl.col("_fed").fill_null(0.0))
        .with_columns((pl.col("score") + p.qspace_feedback_weight * _standardised("_fed")).alias("score"))
        .drop("_fed")
    )


# A sentence of a few words ("Business Transfers.", "A. Non-Personally Identifiable Information.":
# a label or a run-in heading that the text did not set on a line of its own) introduces the
# sentence after it, which gains part of its score. Development recall, ContractNLI and PolicyQA
# each split in two halves by document: +.002 to +.005 at 512 and 1024 tokens on all four
# halves, 256 and 2048 within .004 (6 or 8 words, a third or half of the score, tried)
LABEL_WORDS, LABEL_SHARE = 8, 0.5


def _introduced(units: pl.DataFrame) -> pl.DataFrame:
    """The ranked units re-ranked once each sentence right after a label (LABEL_WORDS words at
    most, in the question's document) has gained LABEL_SHARE of the label's score."""
    label = pl.col("text").str.count_matches(r"\S+").shift(1).over("query_id") <= LABEL_WORDS  # on units in document order
    gain = pl.when(label).then(LABEL_SHARE * pl.col("score").shift(1).over("query_id")).otherwise(0.0)
    in_order = units.sort("query_id", "char_start", "fragment_id")
    return _best_first(in_order.with_columns((pl.col("score") + gain).alias("score")))


def _loaded(units: pl.DataFrame, p: EvalParams, known: pl.DataFrame | None = None) -> pl.DataFrame:
    """The ranked units loaded in order within the budget, each charged its nodes: the fragment
    the first time it is entered, the tree path to a leaf, the sentence itself (`known`: token
    counts of texts counted before, `count_ranked`)."""
    # exact token counts, only as far down each query's ranking as a reader can load
    n_tokens = count_ranked(units, "text", p, known=known).lazy()
    # nodes: a fragment node the first time its fragment is entered, the tree path to a leaf, the sentence itself
    first_in_fragment = pl.col("fragment_id").is_first_distinct().over("query_id").cast(pl.Int64)
    step = first_in_fragment + pl.col("leaf_depth").fill_null(0).cast(pl.Int64) + 1
    return load_in_order(
        n_tokens.with_columns(step.alias("_step"), (1 + pl.col("leaf_depth").fill_null(1)).cast(pl.Int64).alias("path_length")),
        STRATEGY,
        pl.col("_step").cum_sum().over("query_id"),
        p,
    )

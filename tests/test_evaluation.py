"""Measured evaluation: gold files, the ContractNLI converter, baselines and metrics on real data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from pydantic import ValidationError

from qspace_frames.affordances.detect import affordances
from qspace_frames.corpus.inventory import discover, domain_hints, inventory
from qspace_frames.corpus.loaders import load_file
from qspace_frames.corpus.pages import document_text
from qspace_frames.evaluation.baselines import (
    bm25_chunks,
    heading_tree,
    run_baselines,
    section_visits,
    source_order,
)
from qspace_frames.evaluation.chunks import CHUNK, chunk_bounds, chunks
from qspace_frames.evaluation.gold import (
    GOLD,
    RESOLVED_GOLD,
    read_gold,
    resolve_gold,
    silver_gold,
)
from qspace_frames.evaluation.gold_sets import contractnli_to_gold
from qspace_frames.evaluation.metrics import (
    METRICS,
    RETRIEVALS,
    EvalParams,
    metrics,
    per_query,
    prefix_chars,
    recall_column,
)
from qspace_frames.fragments import fragments
from qspace_frames.params import AffordanceParams, CorpusParams, FragmentParams
from qspace_frames.pipeline.per_document import load_documents
from qspace_frames.schemas import check
from qspace_frames.tokens import count_tokens

P = EvalParams()
ENC = P.encoding
DATA = Path(__file__).parent / "data"


def build(root: Path, limit: int | None = None) -> dict[str, pl.DataFrame]:
    """Discovery, loading, inventory, document texts and fragments with default parameters."""
    cp = CorpusParams()
    files = discover(root, cp)
    if limit:
        files = files.head(limit)
    loaded, pages = load_documents(files, root, cp)
    inv = inventory(files.lazy(), loaded.lazy(), domain_hints(pages.lazy(), cp), cp).collect()
    docs = document_text(pages.lazy()).collect()
    fr = fragments(pages.lazy(), FragmentParams()).collect()
    return {"inventory": inv, "docs": docs, "fragments": fr}


def texts_by_id(docs: pl.DataFrame) -> dict[str, str]:
    return dict(zip(docs["doc_id"], docs["doc_text"]))


def write_lines(path: Path, lines: list) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


# ---- gold files ---------------------------------------------------------------------------------

GOOD = {"id": "q1", "question": "Who approves?", "document": "a.txt", "gold_spans": [[0, 5]]}


@pytest.mark.parametrize(
    "bad, key, rule",
    [
        ("{not json", "<json>", "invalid JSON"),
        ([1, 2], "<line>", "must be a JSON object"),
        ({k: v for k, v in GOOD.items() if k != "question"}, "question", "missing required key"),
        ({**GOOD, "id": 7}, "id", "must be a non-empty string"),
        ({**GOOD, "document": "/etc/passwd"}, "document", "relative"),
        ({**GOOD, "document": "a/../b.txt"}, "document", "relative"),
        ({**GOOD, "gold_spans": "0-5"}, "gold_spans", "non-empty list"),
        ({**GOOD, "gold_spans": []}, "gold_spans", "non-empty list"),
        ({**GOOD, "gold_spans": [[0, 5], [3]]}, "gold_spans[1]", "[start, end] pair of integers"),
        ({**GOOD, "gold_spans": [[True, 5]]}, "gold_spans[0]", "[start, end] pair of integers"),
        ({**GOOD, "gold_spans": [[0, 2.5]]}, "gold_spans[0]", "[start, end] pair of integers"),
        ({**GOOD, "gold_spans": [[5, 5]]}, "gold_spans[0]", "start must be < end"),
        ({**GOOD, "gold_spans": [[9, 4]]}, "gold_spans[0]", "start must be < end"),
        ({**GOOD, "gold_spans": [[0, 1], [-3, 4]]}, "gold_spans[1]", "start must be >= 0"),
        ({**GOOD, "id": "q0"}, "id", "duplicate id 'q0' (first on line 1)"),
    ],
)
def test_gold_reader_errors_name_file_line_and_key(tmp_path, bad, key, rule):
    path = write_lines(tmp_path / "gold.jsonl", [{**GOOD, "id": "q0"}, "", bad])
    with pytest.raises(ValueError) as e:
        read_gold(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}:3: {key}: "), msg
    assert rule in msg


def test_gold_reader_ignores_extra_keys_and_blank_lines(tmp_path):
    path = write_lines(
        tmp_path / "gold.jsonl", ["", {**GOOD, "label": "x", "notes": [1]}, "   ", {**GOOD, "id": "q2", "gold_spans": [[3, 9], [0, 4]]}]
    )
    g = read_gold(path)
    check(g, GOLD)
    assert g["id"].to_list() == ["q1", "q2"]
    assert g["gold_spans"].to_list()[1] == [{"start": 3, "end": 9}, {"start": 0, "end": 4}]


@pytest.fixture(scope="module")
def sample(root):
    return build(root / "sample_corpus")


def test_gold_example_reads_and_resolves_against_the_sample_corpus(sample):
    lines = [json.loads(x) for x in (DATA / "gold_example.jsonl").read_text(encoding="utf-8").splitlines()]
    gold = read_gold(DATA / "gold_example.jsonl")
    check(gold, GOLD)
    assert gold.height == 5
    assert set(gold["document"]) == {"policy/procurement_policy.md", "finance/budget_guidelines_fy2026.txt"}
    res = resolve_gold(gold, sample["inventory"], sample["docs"])
    check(res, RESOLVED_GOLD)
    assert res["status"].to_list() == ["ok"] * 5 and res["reason"].null_count() == 5
    text = texts_by_id(sample["docs"])
    for row, line in zip(res.iter_rows(named=True), lines):
        got = [text[row["doc_id"]][s["start"] : s["end"]] for s in row["gold_spans"]]
        assert got == line["evidence"]  # the hand-written evidence sentences, at their offsets
        assert row["gold_chars"] == sum(len(x) for x in got)
    assert "Purchases over $25,000 must be approved by the Chief Financial Officer." in lines[0]["evidence"]


def test_resolve_keeps_unresolvable_questions_with_a_reason(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Alpha policy text. Second sentence here.", encoding="utf-8")
    (corpus / "empty.txt").write_bytes(b"")
    (corpus / "blob.xyz").write_bytes(b"\x00\x01")
    b = build(corpus)
    gold = pl.DataFrame(
        [
            {"id": "ok", "question": "q", "document": "a.txt", "gold_spans": [{"start": 0, "end": 5}, {"start": 3, "end": 18}]},
            {"id": "far", "question": "q", "document": "a.txt", "gold_spans": [{"start": 0, "end": 5}, {"start": 30, "end": 400}]},
            {"id": "gone", "question": "q", "document": "missing.txt", "gold_spans": [{"start": 0, "end": 5}]},
            {"id": "empty", "question": "q", "document": "empty.txt", "gold_spans": [{"start": 0, "end": 5}]},
            {"id": "binary", "question": "q", "document": "blob.xyz", "gold_spans": [{"start": 0, "end": 1}]},
        ],
        schema=GOLD,
    )
    res = resolve_gold(gold, b["inventory"], b["docs"])
    assert res["id"].to_list() == ["ok", "far", "gone", "empty", "binary"]
    assert res["status"].to_list() == ["ok", "span_out_of_range", "unknown_document", "not_loaded", "not_loaded"]
    reasons = dict(zip(res["id"], res["reason"]))
    assert reasons["ok"] is None
    assert "[30, 400]" in reasons["far"] and "40 characters" in reasons["far"]
    assert "missing.txt" in reasons["gone"]
    assert "load_status=empty" in reasons["empty"]
    assert "load_status=unsupported" in reasons["binary"]
    assert res.filter(pl.col("id") == "ok")["gold_chars"][0] == 18  # [0,5) and [3,18) overlap: counted once


# ---- ContractNLI --------------------------------------------------------------------------------

CNLI = "qa-contractnli-dev"


@pytest.fixture(scope="module")
def cnli(corpora, tmp_path_factory):
    out = tmp_path_factory.mktemp("contractnli")
    src = corpora / CNLI / "dev.json"
    gold_path = contractnli_to_gold(src, out)
    return {"src": src, "out": out, "gold_path": gold_path, "raw": json.loads(src.read_text(encoding="utf-8"))}


def test_contractnli_conversion_counts_and_offsets(cnli):
    raw, out = cnli["raw"], cnli["out"]
    assert cnli["gold_path"] == out / "gold.jsonl"
    expected = sum(
        a["choice"] in ("Entailment", "Contradiction") for d in raw["documents"] for a in d["annotation_sets"][0]["annotations"].values()
    )
    written = sorted((out / "docs").glob("*.txt"))
    assert len(written) == len(raw["documents"]) == 61
    assert expected == 614
    gold = read_gold(cnli["gold_path"])
    assert gold.height == expected and gold["id"].n_unique() == expected
    records = [json.loads(x) for x in cnli["gold_path"].read_text(encoding="utf-8").splitlines()]
    assert {r["label"] for r in records} == {"Entailment", "Contradiction"}
    assert sum(r["label"] == "Contradiction" for r in records) == 95
    by_id = {str(d["id"]): d for d in raw["documents"]}
    for r in records:
        did, label = r["id"].split(":")
        doc = by_id[did]
        assert r["question"] == raw["labels"][label]["hypothesis"]
        path = out / "docs" / r["document"]
        text = path.read_bytes().decode("utf-8")
        assert text == doc["text"]
        spans = r["gold_spans"]
        assert spans == sorted(spans) and all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # merged
        # every character of the annotated evidence but edge whitespace, and nothing else, is gold
        annotated = set()
        for i in doc["annotation_sets"][0]["annotations"][label]["spans"]:
            s, e = doc["spans"][i]
            piece = doc["text"][s:e]
            annotated |= set(range(s + len(piece) - len(piece.lstrip()), e - len(piece) + len(piece.rstrip())))
        assert {c for s, e in spans for c in range(s, e)} == annotated
        for s, e in spans:
            assert text[s:e] == doc["text"][s:e]
            assert text[s:e] == text[s:e].strip() and text[s:e]


def test_contractnli_offsets_survive_the_txt_loader(cnli):
    cp = CorpusParams()
    records = [json.loads(x) for x in cnli["gold_path"].read_text(encoding="utf-8").splitlines()]
    raw_by_name = {}
    for d in cnli["raw"]["documents"]:
        raw_by_name[f"{d['id']:05d}.txt"] = d["text"]
    loaded = {}
    for name, text in raw_by_name.items():
        got = load_file(cnli["out"] / "docs" / name, "txt", cp)
        assert got.status == "loaded", (name, got.reason)
        assert [t for _, t in got.pages] == [text]
        loaded[name] = got.pages[0][1]
    for r in records:
        text = loaded[r["document"]]
        for s, e in r["gold_spans"]:
            assert text[s:e] == raw_by_name[r["document"]][s:e]


def test_contractnli_conversion_is_deterministic(cnli, tmp_path):
    again = contractnli_to_gold(cnli["src"], tmp_path)
    assert again.read_bytes() == cnli["gold_path"].read_bytes()


# ---- chunks -------------------------------------------------------------------------------------


def assert_chunks_exact(ch: pl.DataFrame, text: dict[str, str], size: int) -> None:
    check(ch, CHUNK)
    for (did,), g in ch.group_by("doc_id"):
        g = g.sort("chunk")
        assert "".join(g["text"]) == text[did]
        assert g["char_start"][0] == 0 and g["char_end"][-1] == len(text[did])
        assert g["char_start"][1:].to_list() == g["char_end"][:-1].to_list()  # no gap, no overlap
        assert all(text[did][s:e] == t for s, e, t in zip(g["char_start"], g["char_end"], g["text"]))
    assert ch["n_tokens"].max() <= size
    assert ch["n_tokens"].to_list() == count_tokens(ch["text"].to_list(), ENC)


def test_chunks_cover_contractnli_documents_exactly(cnli):
    b = build(cnli["out"] / "docs")
    ch = chunks(b["docs"], P)
    assert_chunks_exact(ch, texts_by_id(b["docs"]), P.chunk_tokens)
    assert set(ch["doc_id"]) == set(b["docs"]["doc_id"])
    # a whole number of windows: all but the last chunk of a document are (close to) full
    assert ch.filter(pl.col("chunk") < pl.col("chunk").max().over("doc_id"))["n_tokens"].min() >= P.chunk_tokens - 8


def test_chunk_boundaries_inside_multibyte_characters_move_to_a_character_boundary():
    # each Fraktur letter is 4 UTF-8 bytes and 3 tokens, so 4-token windows end mid-character
    text = {"d1": "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 text, 日本語 and naïve café 🙂🙂🙂 done", "d2": "plain", "d3": ""}
    docs = pl.DataFrame({"doc_id": list(text), "doc_text": list(text.values())})
    for size in (4, 5, 7, 16):  # >= 4: a single character can take 4 tokens and is never cut
        ch = chunks(docs, EvalParams(chunk_tokens=size))
        assert_chunks_exact(ch, {k: v for k, v in text.items() if v}, size)
        assert "d3" not in set(ch["doc_id"])  # an empty document has no chunks
    assert chunk_bounds(["𝔘𝔫"], 4, ENC) == [[0, 1, 2]]  # 3 + 3 tokens: the window end at 4 moves back to 1 character


def test_prefix_chars_never_splits_a_character():
    # '🙂' is two tokens of two bytes each: one token is half a character, so no character fits
    assert prefix_chars(["🙂", "x🙂y", "x🙂y", "naïve café"], [1, 2, 3, 2], ENC) == [0, 1, 2, 3]
    assert prefix_chars(["abc", "abc"], [0, 99], ENC) == [0, 3]


# ---- metrics by hand ----------------------------------------------------------------------------

HAND = "one two three four five six seven eight nine ten"  # one token per word


def hand_case() -> tuple[pl.DataFrame, pl.DataFrame]:
    gold = pl.DataFrame(
        [
            {
                "id": "q",
                "question": "x",
                "document": "d.txt",
                "gold_spans": [{"start": 4, "end": 23}],
                "doc_id": "d",
                "n_chars": len(HAND),
                "gold_chars": 19,
                "status": "ok",
                "reason": None,
            },
            {
                "id": "miss",
                "question": "x",
                "document": "d.txt",
                "gold_spans": [{"start": 40, "end": 45}],
                "doc_id": "d",
                "n_chars": len(HAND),
                "gold_chars": 5,
                "status": "ok",
                "reason": None,
            },
            {
                "id": "skipped",
                "question": "x",
                "document": "gone.txt",
                "gold_spans": [{"start": 0, "end": 1}],
                "doc_id": None,
                "n_chars": None,
                "gold_chars": 1,
                "status": "unknown_document",
                "reason": "no inventory path",
            },
        ],
        schema=RESOLVED_GOLD,
    )
    # U1 = "one two three", U2 = "two three four" overlaps U1, U3 = " five ... ten"
    units = [(0, 13), (4, 18), (18, len(HAND))]
    rows = [
        loaded_unit(HAND, qid, rank, s, e, nodes_visited=rank + 10, path_length=rank)
        for qid in ("q", "miss")
        for rank, (s, e) in enumerate(units[: 3 if qid == "q" else 2], start=1)
    ]
    return pl.DataFrame(rows, schema=RETRIEVALS), gold


def loaded_unit(
    doc: str, qid: str, rank: int, s: int, e: int, nodes_visited: int, path_length: int, fragment_id: str | None = None
) -> dict:
    """A RETRIEVALS row of the strategy "hand": doc[s:e] of document "d", loaded at `rank`."""
    return {
        "query_id": qid,
        "strategy": "hand",
        "rank": rank,
        "doc_id": "d",
        "char_start": s,
        "char_end": e,
        "text": doc[s:e],
        "n_tokens": count_tokens([doc[s:e]], ENC)[0],
        "nodes_visited": nodes_visited,
        "path_length": path_length,
        "fragment_id": fragment_id,
    }


def test_recall_by_hand_cuts_the_crossing_unit_and_counts_overlaps_once():
    r, gold = hand_case()
    assert r.filter(pl.col("query_id") == "q")["n_tokens"].to_list() == [3, 3, 6]
    p = EvalParams(budgets=[2, 4, 6, 7, 12], max_tokens=12)
    pq = per_query(r, gold, p)
    assert pq["query_id"].to_list() == ["miss", "q"]  # the unresolved question is not evaluated
    q = pq.filter(pl.col("query_id") == "q").row(0, named=True)
    # B=2: "one two" of U1 -> gold [4,7) ; B=4: U1 whole + "two" of U2 (already loaded) -> [4,13)
    # B=6: U1 + U2 -> [4,18) (summing units would count "two three" twice: 23 > 19 gold chars)
    # B=7: + " five" cut from U3 -> [4,23) ; B=12: everything
    assert [q[recall_column(b)] for b in p.budgets] == [3 / 19, 9 / 19, 14 / 19, 1.0, 1.0]
    assert q["first_gold_rank"] == 1 and q["correct_fragment"] and not q["missed"]
    assert q["tokens_to_first_gold"] == 3 and q["nodes_visited"] == 11 and q["path_length"] == 1
    assert q["citation_locality"] == 9 / 13
    assert q["tokens_loaded"] == 12 and q["n_units"] == 3
    assert q["total_cost"] == pytest.approx(3 / 1000 + 0.1 * 11 + 0.2 * 1)
    m = pq.filter(pl.col("query_id") == "miss").row(0, named=True)
    assert m["missed"] and m["first_gold_rank"] is None and not m["correct_fragment"]
    assert m["tokens_to_first_gold"] == 12  # a miss counts max_tokens (it loaded only 6)
    assert m["nodes_visited"] == 12 and m["path_length"] == 2  # the last unit loaded
    assert m["citation_locality"] is None and m[recall_column(12)] == 0.0
    assert m["total_cost"] == pytest.approx(12 / 1000 + 0.1 * 12 + 0.2 * 2 + 5.0)
    mt = metrics(r, gold, p)
    check(mt, METRICS)
    val = {(x["metric"], x["budget"]): (x["value"], x["n_queries"]) for x in mt.iter_rows(named=True)}
    assert val[("evidence_recall", 4)] == (pytest.approx((9 / 19 + 0) / 2), 2)
    assert val[("correct_fragment_rate", None)] == (0.5, 2)
    assert val[("miss_rate", None)] == (0.5, 2)
    assert val[("citation_locality", None)] == (9 / 13, 1)  # misses have no citation
    assert val[("tokens_to_first_gold", None)] == (7.5, 2)


def test_a_strategy_that_loads_nothing_scores_zero_not_absent():
    r, gold = hand_case()
    r = r.filter(pl.col("query_id") == "q")
    pq = per_query(r, gold, P)
    m = pq.filter(pl.col("query_id") == "miss").row(0, named=True)
    assert m["missed"] and m["n_units"] == 0 and m["tokens_to_first_gold"] == P.max_tokens
    assert all(m[recall_column(b)] == 0.0 for b in P.budgets)


# ---- strategies on small real documents ---------------------------------------------------------


def corpus_of(tmp_path: Path, files: dict[str, str]) -> dict[str, pl.DataFrame]:
    root = tmp_path / "corpus"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return build(root)


FILLER = " ".join(f"Clause {i} sets out routine matters about notices, counterparts and headings." for i in range(12))
CONTRACT = f"{FILLER}\n\nThe indemnification obligations of the Supplier survive termination of this Agreement for five years.\n\n{FILLER}"


def test_bm25_ranks_the_obviously_relevant_chunk_first(tmp_path):
    b = corpus_of(tmp_path, {"contract.txt": CONTRACT, "other.txt": "Payment is due within thirty days. " * 40})
    text = CONTRACT
    s = text.index("The indemnification")
    gold = pl.DataFrame(
        [
            {
                "id": "q",
                "question": "Does indemnification survive termination?",
                "document": "contract.txt",
                "gold_spans": [{"start": s, "end": text.index("years.") + 6}],
            }
        ],
        schema=GOLD,
    )
    res = resolve_gold(gold, b["inventory"], b["docs"])
    p = EvalParams(chunk_tokens=64, budgets=[64, 128], max_tokens=4096)
    r = bm25_chunks(res, b["docs"], p)
    check(r, RETRIEVALS)
    assert "indemnification" in r["text"][0] and "survive termination" in r["text"][0]
    assert r["rank"].to_list() == list(range(1, r.height + 1)) and r["nodes_visited"].to_list() == r["rank"].to_list()
    assert set(r["doc_id"]) == set(res["doc_id"])  # only the question's own document is searched
    ch = chunks(b["docs"], p).filter(pl.col("doc_id") == res["doc_id"][0])
    assert r.height == ch.height  # the whole document fits in max_tokens: every chunk loaded once
    assert r.sort("char_start")["text"].str.join("").item() == text
    pq = per_query(r, res, p)
    assert pq["correct_fragment"].item() and pq["first_gold_rank"].item() == 1


def test_max_tokens_stops_after_the_crossing_unit(tmp_path):
    b = corpus_of(tmp_path, {"contract.txt": CONTRACT})
    gold = pl.DataFrame(
        [{"id": "q", "question": "notices", "document": "contract.txt", "gold_spans": [{"start": 0, "end": 10}]}], schema=GOLD
    )
    res = resolve_gold(gold, b["inventory"], b["docs"])
    p = EvalParams(chunk_tokens=32, budgets=[32, 64], max_tokens=100)
    for r in (bm25_chunks(res, b["docs"], p), source_order(res, b["fragments"], p)):
        before = r["n_tokens"].cum_sum() - r["n_tokens"]
        assert (before < 100).all() and r["n_tokens"].sum() >= 100


POLICY = """# Supplier Agreement

## 1. Payment Terms

Invoices are paid within 45 days of receipt by the Accounts Payable team.

Late invoices accrue no interest.

## 2. Termination

Either party may end this agreement with ninety days written notice.

### 2.1 Termination Notice Delivery

Notice of termination must be delivered by registered mail to the registered office.

## 3. Confidentiality

Each party keeps the other party's information confidential for three years.
"""


def test_heading_tree_visits_the_matching_section_first(tmp_path):
    b = corpus_of(tmp_path, {"policy.md": POLICY})
    s = POLICY.index("Notice of termination")
    gold = pl.DataFrame(
        [
            {
                "id": "q",
                "question": "How must a termination notice be delivered?",
                "document": "policy.md",
                "gold_spans": [{"start": s, "end": POLICY.index("office.") + 7}],
            }
        ],
        schema=GOLD,
    )
    res = resolve_gold(gold, b["inventory"], b["docs"])
    visits = section_visits(res, b["fragments"]).collect()
    secs = b["fragments"].filter(pl.col("kind") == "section")
    title = dict(zip(secs["fragment_id"], secs["text"]))
    assert title[visits["section_id"][0]] == "### 2.1 Termination Notice Delivery"  # termination, notice
    assert title[visits["section_id"][1]] == "## 2. Termination"  # termination
    r = heading_tree(res, b["fragments"], P)
    check(r, RETRIEVALS)
    first = r.row(0, named=True)
    assert first["text"].startswith("Notice of termination")
    assert first["nodes_visited"] == 2 and first["path_length"] == 4  # 1 heading + 1 fragment; depth 3 + 1
    so = source_order(res, b["fragments"], P)
    assert so["text"][0].startswith("Invoices are paid") and (so["path_length"] == 1).all()
    # every non-section fragment is loaded exactly once by both fragment strategies
    content = b["fragments"].filter(pl.col("kind") != "section")
    assert sorted(r["fragment_id"]) == sorted(so["fragment_id"]) == sorted(content["fragment_id"])
    assert r["nodes_visited"].is_sorted() and r["nodes_visited"][-1] == r.height + secs.height
    pq = per_query(pl.concat([r, so]), res, P)
    got = dict(zip(pq["strategy"], pq["tokens_to_first_gold"]))
    assert got["heading_tree"] < got["source_order"]


def test_silver_gold_from_the_sample_corpus_affordances(sample):
    aff, _ = affordances(sample["fragments"].lazy(), sample["docs"].lazy(), AffordanceParams())
    aff = aff.collect()
    silver = silver_gold(aff, sample["inventory"], max_per_intent=3)
    check(silver, GOLD)
    direct = aff.filter(pl.col("support") == "direct")
    assert 0 < silver.height <= 3 * direct["intent"].n_unique()
    kept = direct.filter(pl.col("affordance_id").is_in(silver["id"].to_list()))
    assert kept.group_by("intent").len()["len"].max() <= 3
    # the cap keeps the most confident: no dropped affordance of an intent beats a kept one
    floor = kept.group_by("intent").agg(pl.col("confidence").min().alias("lo"))
    dropped = direct.join(kept, on="affordance_id", how="anti").join(floor, on="intent")
    assert (dropped["confidence"] <= dropped["lo"]).all()
    res = resolve_gold(silver, sample["inventory"], sample["docs"])
    assert (res["status"] == "ok").all()
    text = texts_by_id(sample["docs"])
    spans = dict(zip(aff["affordance_id"], aff["span"]))
    for row in res.iter_rows(named=True):
        (sp,) = row["gold_spans"]
        assert text[row["doc_id"]][sp["start"] : sp["end"]] == spans[row["id"]]
    assert silver.equals(silver_gold(aff.reverse(), sample["inventory"], max_per_intent=3))
    assert silver_gold(aff, sample["inventory"]).height == direct.height


def test_eval_params_are_strict():
    with pytest.raises(ValidationError):
        EvalParams(budgets=[512, 256])
    with pytest.raises(ValidationError):
        EvalParams(budgets=[256, 8192])  # past max_tokens
    with pytest.raises(ValidationError):
        EvalParams(chunk_tokens="512")
    with pytest.raises(ValidationError):
        EvalParams(bm25_k2=1.0)


# ---- smoke run on real ContractNLI documents ----------------------------------------------------


def test_all_baselines_on_ten_contractnli_documents(cnli):
    b = build(cnli["out"] / "docs", limit=10)
    res = resolve_gold(read_gold(cnli["gold_path"]), b["inventory"], b["docs"])
    ok = res.filter(pl.col("status") == "ok")
    assert ok["doc_id"].n_unique() == 10 and ok.height >= 50
    assert set(res["status"]) == {"ok", "unknown_document"}  # the other 51 documents were not built
    r = run_baselines(res, b["docs"], b["fragments"], P)
    check(r, RETRIEVALS)
    # the same rows whatever the order of the input frames (explicit sorts and tie-breaks)
    assert r.equals(run_baselines(res.reverse(), b["docs"].reverse(), b["fragments"].sample(fraction=1.0, shuffle=True, seed=5), P))
    text = texts_by_id(b["docs"])
    assert all(text[d][s:e] == t for d, s, e, t in zip(r["doc_id"], r["char_start"], r["char_end"], r["text"]))
    assert r["n_tokens"].to_list() == count_tokens(r["text"].to_list(), ENC)
    assert set(r["query_id"]) == set(ok["id"])
    assert r.join(ok.select(pl.col("id").alias("query_id"), "doc_id"), on=["query_id", "doc_id"], how="anti").is_empty()
    m = metrics(r, res, P)
    check(m, METRICS)
    recall = m.filter(pl.col("metric") == "evidence_recall")
    assert sorted(set(recall["strategy"])) == ["bm25_chunks", "heading_tree", "source_order"]
    for (strategy,), g in recall.group_by("strategy"):
        g = g.sort("budget")
        assert g["budget"].to_list() == P.budgets
        assert g["value"].is_sorted(), strategy
        assert g["value"].is_between(0, 1).all() and (g["n_queries"] == ok.height).all()
    pq = per_query(r, res, P)
    for a, c in zip(P.budgets, P.budgets[1:]):
        assert (pq[recall_column(a)] <= pq[recall_column(c)]).all()  # per query too, not only on average
    assert metrics(r.sample(fraction=1.0, shuffle=True, seed=3), res, P).equals(m)  # row order does not matter
    # each strategy's values depend on its own runs only: the evaluation measures each strategy where it runs
    parts = [per_query(g, res, P) for _, g in r.group_by("strategy", maintain_order=True)]
    assert len(parts) == 3 and pl.concat(parts).sort(["strategy", "query_id"]).equals(pq)


# ---- why a strategy misses ----------------------------------------------------------------------

# four fragments of one document: two paragraphs, a table row, a paragraph of two sentences
MISS_DOC = "Alpha one sentence here. Beta two sentence here.\nRow: gamma | three\nDelta four. Epsilon five."
MISS_FRAGMENTS = [("fa", "paragraph", 0, 24), ("fb", "paragraph", 25, 48), ("fc", "table_row", 49, 67), ("fd", "paragraph", 68, 93)]


def test_misses_file_each_missed_question_under_its_reason():
    from qspace_frames.evaluation.metrics import per_query
    from qspace_frames.evaluation.misses import MISSES, REASONS, misses, reasons

    assert MISS_DOC[68:79] == "Delta four." and MISS_DOC[80:93] == "Epsilon five."
    frags = pl.DataFrame(
        [{"fragment_id": f, "doc_id": "d", "kind": k, "char_start": s, "char_end": e} for f, k, s, e in MISS_FRAGMENTS]
        + [{"fragment_id": "sec", "doc_id": "d", "kind": "section", "char_start": 0, "char_end": 93}]  # a section holds everything
    )
    # question -> (gold spans, the units loaded: fragment and span)
    cases = {
        "hit": ([(0, 24)], [("fa", 0, 24)]),
        "table": ([(49, 67)], [("fa", 0, 24)]),
        "entered": ([(80, 93)], [("fd", 68, 79)]),  # its fragment entered, its sentence not loaded
        "split": ([(0, 24), (80, 93)], [("fb", 25, 48)]),
        "other": ([(68, 79)], [("fb", 25, 48)]),
    }
    gold = pl.DataFrame(
        [
            {
                "id": q,
                "question": q,
                "document": "d.txt",
                "gold_spans": [{"start": s, "end": e} for s, e in spans],
                "doc_id": "d",
                "n_chars": len(MISS_DOC),
                "gold_chars": sum(e - s for s, e in spans),
                "status": "ok",
                "reason": None,
            }
            for q, (spans, _) in cases.items()
        ],
        schema=RESOLVED_GOLD,
    )
    runs = pl.DataFrame(
        [
            loaded_unit(MISS_DOC, q, rank, s, e, nodes_visited=rank, path_length=1, fragment_id=f)
            for q, (_, units) in cases.items()
            for rank, (f, s, e) in enumerate(units, start=1)
        ],
        schema=RETRIEVALS,
    )
    p = EvalParams(budgets=[64], max_tokens=64)
    m = misses(runs, per_query(runs, gold, p), gold, frags, p.budgets)
    check(m, MISSES)
    got = dict(m.select("query_id", "reason").rows())
    assert got == {
        "table": "gold in a table",
        "entered": "right fragment, wrong sentence",
        "split": "gold split across fragments",
        "other": "other part ranked first",
    }
    assert m.filter(pl.col("query_id") == "split")["gold_fragments"].item() == 2  # the section is not a fragment the gold is "in"
    counted = reasons(m, gold.height)
    assert counted["reason"].to_list() == [r for r, _ in REASONS] and counted["questions"].to_list() == [1, 1, 1, 1]
    assert counted["share"].to_list() == [0.2] * 4


# ---- latent semantic similarity -----------------------------------------------------------------


def test_latent_similarity_meets_a_question_on_words_it_does_not_share():
    from qspace_frames.evaluation.semantic import LatentSpace

    # fragments of two sentences; "reverse" and "engineer" always occur beside "decompile" and "disassemble"
    fragments = [
        ["The recipient shall not reverse engineer the software.", "Nor may it decompile or disassemble it."],
        ["No party may reverse engineer any sample.", "Decompiling and disassembling are forbidden too."],
        ["Reverse engineer attempts are a breach.", "So is any effort to decompile or disassemble."],
        ["The supplier will deliver the goods to the warehouse within ten days.", "Goods are delivered at the supplier's cost."],
        ["Invoices are paid within thirty days of the delivery of the goods.", "Payment of invoices is due after delivery."],
        ["The buyer inspects the goods at the warehouse.", "Defective goods are returned to the supplier."],
        [
            "The recipient must not disassemble the prototype.",
            "The warehouse keeps the prototype.",
        ],  # no word of the question but "recipient"
    ]
    units = pl.DataFrame(
        [
            {"chunk": 2 * f + i, "fragment_id": f"f{f}", "char_start": 100 * f + 50 * i, "text": t}
            for f, pair in enumerate(fragments)
            for i, t in enumerate(pair)
        ]
    )
    queries = pl.DataFrame({"query_id": ["q"], "question": ["May the recipient reverse engineer the product?"]})
    pairs = units.select(pl.lit("q").alias("query_id"), "chunk")
    sim = LatentSpace.of(units, dims=2).similarity(queries, pairs)
    assert sim.height == units.height and sim.columns == ["query_id", "chunk", "similarity", "fragment_similarity"]
    got = dict(sim.select("chunk", "similarity").rows())
    assert got[12] > max(got[c] for c in range(6, 12))  # closer than every delivery, payment or inspection sentence
    frag = dict(sim.join(units, on="chunk").select("fragment_id", "fragment_similarity").unique().rows())
    assert min(frag[f"f{f}"] for f in range(3)) > max(frag[f"f{f}"] for f in range(3, 6))
    assert sim.equals(LatentSpace.of(units, dims=2).similarity(queries, pairs))  # the same bits again
    # too little text to learn from: no space, not an error
    assert LatentSpace.of(units.head(2), dims=30) is None and LatentSpace.of(units.head(0), dims=30) is None


def _fragment_tree(groups: list[list[int]]) -> pl.LazyFrame:
    """The evidence leaves (as `qspace.tree_leaves` gives them) of a tree of fragment F: root ->
    one group per list -> a leaf per sentence start of the list, in preorder."""
    rows, pre = [], 1
    for g in groups:
        group, pre = f"g{pre}", pre + 1
        for start in g:
            rows.append(
                {
                    "fragment_id": "F",
                    "evidence_id": f"e{start}",
                    "span_start": start,
                    "depth": 2,
                    "preorder": pre,
                    "_a1": group,
                    "_a2": None,
                }
            )
            pre += 1
    schema = {"fragment_id": pl.String, "evidence_id": pl.String, "span_start": pl.Int64, "depth": pl.Int64, "preorder": pl.Int64}
    return pl.DataFrame(rows, schema={**schema, "_a1": pl.String, "_a2": pl.String}).lazy()


def test_the_tree_walk_decides_which_evidence_of_a_fragment_is_loaded_within_the_budget():
    """Issue 23: a fragment's evidence leaves are read in its tree's walk (the question's leaf first,
    then its siblings, then the other branches), in the places the ranking gives them; two trees
    grouping the same leaves differently load different sentences within one budget."""
    from qspace_frames.evaluation.qspace import _loaded, walked

    words = {0: "alpha", 40: "other", 100: "red", 200: "green", 300: "blue"}  # ten tokens a sentence
    # ranked best first: alpha (a leaf), a sentence that is no leaf, then red, green, blue (leaves)
    units = pl.DataFrame(
        {
            "query_id": ["q"] * 5,
            "doc_id": ["d"] * 5,
            "fragment_id": ["F"] * 5,
            "char_start": [0, 40, 100, 200, 300],
            "char_end": [30, 70, 130, 230, 330],
            "text": [" ".join([words[s]] * 10) for s in (0, 40, 100, 200, 300)],
            "leaf_depth": [2, None, 2, 2, 2],
        }
    )
    assert walked(units, _fragment_tree([]))["char_start"].to_list() == [0, 40, 100, 200, 300]  # no tree: the ranking
    by_role = walked(units, _fragment_tree([[0, 200], [100, 300]]))  # alpha's sibling is green
    by_intent = walked(units, _fragment_tree([[0, 100], [200, 300]]))  # alpha's sibling is red
    flat = walked(units, _fragment_tree([[300, 200, 100, 0]]))  # one branch: the tree's own order after alpha
    assert by_role["char_start"].to_list() == [0, 40, 200, 100, 300]
    assert by_intent["char_start"].to_list() == [0, 40, 100, 200, 300]
    assert flat["char_start"].to_list() == [0, 40, 300, 200, 100]
    # a budget that reaches the third place: the trees load different evidence
    p = EvalParams(budgets=[25], max_tokens=25)
    loaded = {name: _loaded(u, p)["text"].str.extract(r"(\w+)").to_list() for name, u in (("role", by_role), ("intent", by_intent))}
    assert loaded == {"role": ["alpha", "other", "green"], "intent": ["alpha", "other", "red"]}


def test_latent_space_is_the_same_bits_on_every_fit_of_real_contracts(cnli):
    """Fitted on the sentences of 20 NDAs, the space gives the same vectors every time: each
    TF-IDF row is normalised in column order (a sum in group-by order differed in the last bits
    from fit to fit), and the fragments' vectors read from the fitted matrix are those projected anew."""
    from qspace_frames.affordances.sentences import all_sentences
    from qspace_frames.evaluation.semantic import LatentSpace, _terms

    fr = build(cnli["out"] / "docs", limit=20)["fragments"]
    units = (
        all_sentences(fr.lazy(), AffordanceParams())
        .select("fragment_id", pl.col("sent_start").alias("char_start"), pl.col("sentence").alias("text"))
        .collect()
        .with_row_index("chunk")
    )
    assert units.height > 1000
    first = LatentSpace.of(units, dims=30)
    for _ in range(3):
        again = LatentSpace.of(units, dims=30)
        assert np.array_equal(first.components, again.components)
        assert np.array_equal(first.unit_vectors, again.unit_vectors) and np.array_equal(first.group_vectors, again.group_vectors)
    joined = units.sort("fragment_id", "char_start", "chunk").group_by("fragment_id", maintain_order=True).agg(pl.col("text").str.join(" "))
    assert np.array_equal(first.group_vectors, first._project(_terms(joined, "text")))


def test_the_words_of_the_first_sentences_lift_the_sentences_sharing_them():
    """Pseudo-relevance feedback: the question asks about disclosing data, its first sentences say
    "advertising partners"; a sentence about advertising partners that shares no word of the
    question then outranks one that scored a little higher on its own. Another question over the
    same sentences is fed back by its own first sentences; a weight of 0 changes nothing."""
    from qspace_frames.evaluation.qspace import _best_first, _with_feedback
    from qspace_frames.params import EvalParams

    text = [
        ("We disclose your data to advertising partners.", 3.0),
        ("Advertising partners may combine your data with their own records.", 2.0),
        ("Data is disclosed to advertising partners only as this notice describes.", 1.9),
        ("Advertising partners receive a hashed identifier for each visitor.", 1.0),
        ("We keep server logs for thirty days.", 1.05),
        ("Cookies remember the language you chose.", 0.5),
        ("You can close your account at any time.", 0.4),
        *[(f"Section {n} of this notice covers topic number {n}.", 0.1) for n in range(10)],
    ]
    units = pl.DataFrame(
        {
            "query_id": ["q"] * len(text),
            "chunk": list(range(len(text))),
            "fragment_id": ["f"] * len(text),
            "char_start": [100 * i for i in range(len(text))],
            "text": [t for t, _ in text],
            "score": [s for _, s in text],
        }
    )
    queries = pl.DataFrame({"query_id": ["q", "r"], "question": ["Do you disclose my data?", "How long are server logs kept?"]})
    p = EvalParams()
    fed = _best_first(_with_feedback(units, queries, p))
    order = fed["chunk"].to_list()
    assert order.index(3) < order.index(4), fed.select("chunk", "score")
    assert _best_first(units)["chunk"].to_list().index(4) < _best_first(units)["chunk"].to_list().index(3)
    assert _with_feedback(units, queries, p.model_copy(update={"qspace_feedback_weight": 0.0})).equals(units)
    # question r's first sentences are its own: the logs sentence first, no lift for advertising
    other = units.with_columns(pl.lit("r").alias("query_id"), pl.when(pl.col("chunk") == 4).then(3.0).otherwise(0.1).alias("score"))
    both = _best_first(_with_feedback(pl.concat([units, other]), queries, p))
    assert both.filter(pl.col("query_id") == "q")["chunk"].to_list() == order
    assert both.filter(pl.col("query_id") == "r")["chunk"].to_list()[0] == 4


def test_a_label_lifts_the_sentence_it_introduces():
    """A sentence of a few words (a run-in heading the text did not set on its own line) passes half
    its score to the next sentence of the document: the next one outranks a sentence that scored a
    little higher on its own, and a long sentence passes nothing on."""
    from qspace_frames.evaluation.qspace import LABEL_SHARE, _introduced

    text = [
        ("Business Transfers.", 4.0),  # the label, matching the question
        ("Customer information may be one of the assets we transfer.", 1.0),  # what it introduces
        ("We may share data with service providers who help us run the business and the sites.", 1.5),
        ("Our partners transfer nothing of ours, and we review every one of them each year.", 0.5),
    ]
    units = pl.DataFrame(
        {
            "query_id": ["q"] * 4,
            "fragment_id": ["f"] * 4,
            "char_start": [0, 20, 80, 170],
            "text": [t for t, _ in text],
            "score": [s for _, s in text],
        }
    ).sort("score", descending=True)
    got = _introduced(units)
    assert got["char_start"].to_list() == [0, 20, 80, 170]
    assert dict(zip(got["char_start"], got["score"])) == {0: 4.0, 20: 1.0 + LABEL_SHARE * 4.0, 80: 1.5, 170: 0.5}
    # a second question over the same sentences is ranked on its own
    both = _introduced(pl.concat([units, units.with_columns(pl.lit("p").alias("query_id"), pl.col("score").reverse())]))
    assert both.filter(pl.col("query_id") == "q").equals(got)

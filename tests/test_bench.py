"""The benchmark's own machinery: scaled corpora, one measured run, the targets from the medians."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from qspace_frames.bench import (
    Spec,
    TreeSampler,
    measure,
    scaled_corpus,
    summarise,
    targets,
)

ROOT = Path(__file__).resolve().parents[1]
CUAD_TXT = ROOT / ".." / "shared" / "corpora" / "contracts-cuad" / "txt"


def test_scaled_corpus_copies_are_distinct_documents_and_reused(tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("Alpha clause.\n", encoding="utf-8")
    (src / "sub" / "b.md").write_text("# Beta\n\nText.\n", encoding="utf-8")
    dest = scaled_corpus(src, 3, tmp_path / "x3")
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file() and p.name != ".complete")
    assert files == [f"copy{i:02d}/{n}" for i in range(3) for n in ("a.txt", "sub/b.md")]
    # copy 0 is the source as it is; every other copy differs from it in its first line only
    assert (dest / "copy00" / "a.txt").read_bytes() == (src / "a.txt").read_bytes()
    bodies = {(dest / f"copy{i:02d}" / "a.txt").read_bytes() for i in range(3)}
    assert len(bodies) == 3
    assert all(b.endswith(b"Alpha clause.\n") for b in bodies)
    # made once: a second call with the same source leaves the files alone
    marker = dest / "copy01" / "a.txt"
    os.utime(marker, (1, 1))
    assert scaled_corpus(src, 3, tmp_path / "x3") == dest and marker.stat().st_mtime == 1
    # a changed source is copied again
    (src / "a.txt").write_text("Alpha clause, amended.\n", encoding="utf-8")
    scaled_corpus(src, 3, tmp_path / "x3")
    assert (dest / "copy01" / "a.txt").read_bytes().endswith(b"amended.\n")


def test_tree_sampler_counts_child_processes():
    """The sampled peak covers the pool: a child holding 200 MB shows in the parent's tree."""
    code = "import time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.5)"
    sampler = TreeSampler(os.getpid(), every=0.05)
    subprocess.run([sys.executable, "-c", code], check=True)
    assert sampler.stop() >= 200


@pytest.mark.skipif(not CUAD_TXT.is_dir(), reason="needs ../shared/corpora")
def test_one_measured_run_reports_its_stages(tmp_path):
    corpus = tmp_path / "cuad10"
    corpus.mkdir()
    for f in sorted(CUAD_TXT.glob("*.txt"))[:10]:
        (corpus / f.name).write_bytes(f.read_bytes())
    row = measure(Spec("x1", corpus, "affordances", 1, "local"), ROOT)
    # files with the same bytes are one document (CUAD's first ten hold a duplicate)
    distinct = {hashlib.sha256(f.read_bytes()).digest() for f in corpus.iterdir()}
    assert row["files"] == 10 and row["loaded"] == len(distinct) < 10
    assert row["mb"] == pytest.approx(sum(f.stat().st_size for f in corpus.iterdir()) / 1e6)
    stages = ("corpus", "structure", "fragments", "affordances")  # every stage up to `upto`
    assert all(row[f"{s}_s"] > 0 and row[f"{s}_peak_mb"] > 50 for s in stages)
    assert "prototypes_s" not in row  # nothing past `upto` runs
    assert row["e2e_s"] == pytest.approx(row["discovery_s"] + sum(row[f"{s}_s"] for s in stages))
    assert row["mb_per_s"] == pytest.approx(row["mb"] / row["e2e_s"])
    assert row["peak_tree_rss_mb"] >= max(row[f"{s}_peak_mb"] for s in stages) * 0.9
    assert row["wall_s"] >= row["e2e_s"]


def _run(corpus: str, upto: str, e2e: float, rss: float, repeat: int = 1, workers: int = 2, corpus_s: float = 1.0) -> dict:
    return {
        "repeat": repeat,
        "corpus": corpus,
        "engine": "local",
        "workers": workers,
        "upto": upto,
        "files": 510,
        "mb": 26.8,
        "e2e_s": e2e,
        "mb_per_s": 26.8 / e2e,
        "peak_rss_mb": rss,
        "peak_tree_rss_mb": rss * 1.5,
        "corpus_s": corpus_s,
    }


def test_targets_from_medians_compare_like_with_like():
    runs = pl.DataFrame(
        [
            _run("x1", "evaluation", 30.0, 900, 1),
            _run("x1", "evaluation", 20.0, 950, 2),
            _run("x1", "evaluation", 40.0, 800, 3),
            _run("x16", "fragments", 100.0, 1500),
            _run("pdf", "evaluation", 50.0, 700, corpus_s=10.0),
            _run("pdf-w1", "corpus", 19.0, 400, workers=1, corpus_s=19.0),
        ]
    )
    summary = summarise(runs)
    x1 = summary.filter(pl.col("corpus") == "x1").row(0, named=True)
    assert x1["repeats"] == 3 and x1["e2e_s"] == 30.0  # the median, not the mean or the last run
    t = targets(summary)
    assert t["x1 MB/s, end to end (target >= 2 end to end)"] == pytest.approx(26.8 / 30.0)
    # x16 ran only up to fragments: no end-to-end ratio is claimed from it
    assert not any("x16" in k for k in t)
    assert t["PDF load speed-up, 2 workers vs 1 (target >= 1.8)"] == pytest.approx(1.9)
    # with x1 measured up to the same stage, the ratio and the x16 memory are reported
    t = targets(summarise(pl.concat([runs, pl.DataFrame([_run("x1", "fragments", 6.0, 500)])])))
    assert t["time x16 / x1, discovery to fragments (target <= 18)"] == pytest.approx(100.0 / 6.0)
    assert t["x16 peak RSS MB, discovery to fragments (target <= 2048)"] == 1500
    assert t["x16 peak RSS of the run and its pool together MB, discovery to fragments"] == 2250


def test_a_gold_set_run_reports_recall_beside_its_seconds():
    from qspace_frames.bench import GOLD_SETS, QUALITY, quality, specs

    (spec,) = specs(ROOT, ["cnli-dev"], ROOT / "reports" / "bench" / "corpora", 2, "local", "evaluation")
    if not spec.corpus.is_file():
        pytest.skip(f"the ContractNLI dev split is missing: {spec.corpus}")
    assert spec.mode == "gold" and GOLD_SETS["cnli-dev"][1] == "contractnli"
    row = measure(spec, ROOT)
    assert row["files"] == 61 and row["questions"] > 500  # every NDA of the split; its labelled hypotheses
    for s in QUALITY:
        curve = [row[f"{s}_r{b}"] for b in (256, 512, 1024, 2048)]
        assert all(0 <= r <= 1 for r in curve) and curve == sorted(curve), (s, curve)
    assert row["qspace_r512"] > row["bm25_chunks_r512"]  # the claim the evaluation rows exist to check
    q = quality(summarise(pl.DataFrame([{"repeat": 1, **row}])))
    assert q["set"].to_list() == ["cnli-dev"] and q["questions"].to_list() == [row["questions"]]
    assert q.columns[3:] == [f"{s} @{b}" for s in sorted(QUALITY) for b in (256, 512, 1024, 2048)]

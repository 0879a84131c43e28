"""Every corpus runs end to end through the notebooks, as `qspace run` does (papermill).

A new user's first act is `qspace run --corpus <their folder>`. The corpus zoo (tests/corpus_zoo.py)
holds the odd folders: no headings, one document, nothing loads, nothing detected, one huge
block, one format only, a gold file about missing documents, front matter. The real corpora in
../shared/corpora are run too. Each run must exit 0 with a complete report, every file in the
inventory, no error output in any executed notebook, and the empty tables said in a sentence.

Marked `notebooks` (and the real ones `corpora`): `make test-fast` skips them, `make test` runs them.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import corpus_zoo
import polars as pl
import pytest

from qspace_frames.evaluation.gold_sets import policyqa_to_gold
from qspace_frames.report.kernels import KERNELS, WarmKernel, kernel_name
from qspace_frames.report.runner import run
from qspace_frames.runtime.paths import reports_root, shown

pytestmark = pytest.mark.notebooks

NOTEBOOKS = 9

# What the report must say on each odd corpus: (notebook, a sentence its outputs hold).
SAYS = {
    "flat_text": [("02_fragments", ": 0 sections, "), ("01_corpus", "3 files discovered, 3 loaded")],
    "one_document": [("01_corpus", "1 files discovered, 1 loaded"), ("04_question_space", "1 prototypes")],
    "all_broken": [
        ("01_corpus", "5 files discovered, 0 loaded"),
        ("02_fragments", "No fragments: no document in this corpus"),
        ("03_affordances", "No questions: no sentence"),
        ("06_trees", "No retrieval trees"),
        ("07_evaluation", "No question to evaluate"),
        ("08_ask", "No answer found"),
    ],
    "empty_folder": [
        ("01_corpus", "0 files discovered"),
        ("01_corpus", "No file was discovered in this folder."),
        ("02_fragments", "No fragments: nothing to check."),
    ],
    "no_affordances": [
        ("03_affordances", "No questions: no sentence"),
        ("04_question_space", "No prototypes"),
        ("05_evidence_graph", "No evidence units"),
        ("06_trees", "No trees: nothing to check."),
        ("07_evaluation", "No traversal to simulate"),
    ],
    "one_block": [("02_fragments", "sentence_window")],
    "spreadsheets_only": [("01_corpus", "1 files discovered, 1 loaded")],
    "pdfs_only": [("01_corpus", "2 files discovered, 2 loaded")],
    "slides_only": [("01_corpus", "1 files discovered, 1 loaded")],
    "front_matter": [("02_fragments", "leave.md: 2 sections, 3 fragments")],
    "gold_missing": [("07_evaluation", "0 questions evaluated (gold file); 2 could not be resolved")],
}


def front_matter_is_the_title(run_dir: Path) -> None:
    fr = pl.read_ndjson(run_dir / "fragments.jsonl")
    assert ["Voluntary leave transfer", "Eligibility"] in fr["heading_path"].to_list()
    assert not fr.filter(pl.col("text").str.contains("keywords:")).height  # the block is not text
    inv = pl.read_csv(run_dir / "inventory.csv", infer_schema=False).sort("path")
    assert inv["load_status"].to_list() == ["loaded", "loaded"]
    assert inv["error"].to_list() == [
        "front matter not parsed (YAML error: ParserError: expected ',' or ']', but got '<stream end>' at line 3): kept as text",
        "front matter: title taken as the document title",
    ]


def one_prototype(run_dir: Path) -> None:
    assert pl.read_csv(run_dir / "question_prototypes.csv").height == 1


def every_file_has_a_reason(run_dir: Path) -> None:
    inv = pl.read_csv(run_dir / "inventory.csv", infer_schema=False)
    assert inv.filter(pl.col("load_status") == "loaded").height == 0
    assert inv["error"].str.len_chars().min() > 0


CHECKS = {"front_matter": front_matter_is_the_title, "one_document": one_prototype, "all_broken": every_file_has_a_reason}
REAL = [
    "office-docx-python-docx",
    "office-pptx-python-pptx",
    "office-xlsx-openpyxl",
    "debian-policy",
    "policy-github-site-policy",
    "policyqa-dev-as-text",
]


@pytest.fixture(scope="module")
def kernels(root):
    """Warm kernels for every run of the module, as `qspace sweep` shares them across its runs."""
    pool = [WarmKernel(kernel_name(), root) for _ in range(KERNELS)]
    yield pool
    for k in pool:
        k.close()


@pytest.fixture(scope="module")
def params(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("zoo-store")
    p = d / "params.yaml"
    p.write_text(f"store:\n  root: {d / 'store'}\n")
    return p


def outputs(nb_path: Path) -> tuple[str, list[str]]:
    """(all text a notebook shows, its error outputs and stderr streams)."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    text, errors = [], []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            if o["output_type"] == "error":
                errors.append(f"{o['ename']}: {o['evalue']}")
            elif o["output_type"] == "stream":
                (errors if o["name"] == "stderr" else text).append("".join(o["text"]))
            else:
                text.append("".join(o.get("data", {}).get("text/plain", "")))
    return "\n".join(text), errors


def run_through_notebooks(root: Path, folder: Path, name: str, params: Path, kernels: list[WarmKernel], gold: Path | None = None) -> Path:
    out = io.StringIO()
    run_dir = reports_root(root) / name
    shutil.rmtree(run_dir, ignore_errors=True)
    code = run(root, str(params), name, str(folder), out=out, gold=str(gold) if gold else None, kernels=kernels)
    assert code == 0, out.getvalue()
    assert f"Report: {shown(reports_root(root) / name / 'index.html', root)}" in out.getvalue()
    for page in ("index.html", "dashboard.html", "final_report.md", "inventory.csv"):
        assert (run_dir / page).is_file(), page
    pages = sorted(run_dir.glob("[0-9][0-9]_*.ipynb"))
    assert len(pages) == NOTEBOOKS and all(p.with_suffix(".html").is_file() for p in pages)
    for p in pages:
        assert outputs(p)[1] == [], (p.name, outputs(p)[1])
    rels = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
    files = sorted(r for r in rels if not any(part.startswith(".") for part in r.split("/")))  # hidden: skipped (corpus.skip_hidden)
    inv = pl.read_csv(run_dir / "inventory.csv", infer_schema=False)
    assert sorted(inv["path"]) == files  # every file accounted for, once
    return run_dir


@pytest.mark.parametrize("kind", sorted(corpus_zoo.KINDS))
def test_every_odd_corpus_runs_through_the_notebooks(kind, root, tmp_path, params, kernels):
    folder = corpus_zoo.write(kind, tmp_path / kind)
    run_dir = run_through_notebooks(root, folder, f"zoo-{kind}", params, kernels, corpus_zoo.gold_file(folder))
    for nb, sentence in SAYS[kind]:
        assert sentence in outputs(run_dir / f"{nb}.ipynb")[0], (nb, sentence)
    CHECKS.get(kind, lambda _: None)(run_dir)
    shutil.rmtree(run_dir)


@pytest.mark.corpora
@pytest.mark.parametrize("name", REAL)
def test_every_real_corpus_runs_through_the_notebooks(name, root, corpora, tmp_path, params, kernels):
    if name == "policyqa-dev-as-text":  # twenty privacy policies as plain text: paragraphs, no headings
        folder = policyqa_to_gold(corpora / "qa-policyqa-dev" / "dev.json", tmp_path / "policyqa").parent / "docs"
    else:
        folder = corpora / name
    run_dir = run_through_notebooks(root, folder, f"real-{name}", params, kernels)
    text = outputs(run_dir / "06_trees.ipynb")[0]
    assert "fragments with evidence" in text
    shutil.rmtree(run_dir)

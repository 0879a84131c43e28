"""The real corpora in ../shared/corpora: every file accounted for, every fragment grounded,
every token count exact."""

from __future__ import annotations

import polars as pl
import pytest

from qspace_frames.corpus.pages import document_text
from qspace_frames.schemas import FRAGMENTS, INVENTORY, check
from qspace_frames.tokens import count_tokens

FOLDERS = [
    "policy-18f-handbook",
    "policy-github-site-policy",
    "debian-policy",
    "contracts-cuad",
    "office-pdf-py-pdf-sample-files",
    "office-pdf-pypdf-resources",
    "office-docx-python-docx",
    "office-pptx-python-pptx",
    "office-xlsx-openpyxl",
    "qa-contractnli-dev",
]
STATUSES = {"loaded", "empty", "encrypted", "too_large", "unsupported", "error", "duplicate"}


@pytest.fixture(scope="module")
def runs(corpus_workbench):
    cache = {}

    def get(folder):
        if folder not in cache:
            wb = corpus_workbench(folder)
            cache[folder] = (wb, wb.read("corpus", "inventory"), wb.read("fragments"))
        return cache[folder]

    return get


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_file_accounted_for_and_every_fragment_grounded(folder, corpora, runs):
    wb, inv, fr = runs(folder)
    check(inv, INVENTORY)
    check(fr, FRAGMENTS)
    on_disk = sorted(
        p.relative_to(corpora / folder).as_posix()
        for p in (corpora / folder).rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(corpora / folder).parts)
    )
    assert sorted(inv["path"].to_list()) == on_disk
    assert set(inv["load_status"]) <= STATUSES
    assert inv.filter(pl.col("load_status") != "loaded")["error"].null_count() == 0  # every non-load has a reason
    assert not inv["error"].drop_nulls().str.contains("\n").any()  # one line each
    docs = document_text(wb.scan("corpus", "pages")).collect()
    got = fr.join(docs, on="doc_id").select(
        (pl.col("doc_text").str.slice(pl.col("char_start"), pl.col("char_end") - pl.col("char_start")) == pl.col("text")).alias("ok")
    )
    assert got.height == fr.height and got["ok"].all(), f"{(~got['ok']).sum()} fragments off their offsets"
    assert fr["n_tokens"].to_list() == count_tokens(fr["text"].to_list(), wb.params.fragments.encoding)
    assert fr["fragment_id"].n_unique() == fr.height
    loaded = set(inv.filter(pl.col("load_status") == "loaded")["doc_id"])
    assert set(fr["doc_id"]) <= loaded


def status(inv, suffix):
    rows = inv.filter(pl.col("path").str.ends_with(suffix))
    assert rows.height == 1, suffix
    return rows.row(0, named=True)


def test_office_and_pdf_statuses(runs):
    _, xl, _ = runs("office-xlsx-openpyxl")
    nf = status(xl, "null_file.xlsx")
    assert nf["load_status"] == "error" and nf["error"]
    assert status(xl, "null_archive.xlsx")["load_status"] == "error"
    _, pdfs, _ = runs("office-pdf-py-pdf-sample-files")
    assert status(pdfs, "005-libreoffice-writer-password/libreoffice-writer-password.pdf")["load_status"] == "encrypted"
    _, res, _ = runs("office-pdf-pypdf-resources")
    enc = res.filter(pl.col("load_status") == "encrypted")
    assert enc.height >= 5 and enc["error"].str.contains("password").all()
    # image-only PDFs have no text layer: empty, not an error
    assert pdfs.filter(pl.col("load_status") == "empty").height >= 1


def test_names_with_spaces_hash_tilde_and_accents(runs):
    odd = pl.concat([runs(f)[1] for f in FOLDERS]).filter(pl.col("path").str.contains(r"[ #~,]|[^\x00-\x7f]"))
    assert odd.height >= 5  # the corpora do contain such names
    assert odd.filter(pl.col("load_status") == "loaded").height >= 3
    assert not odd["error"].drop_nulls().str.contains("cannot read|No such file").any()

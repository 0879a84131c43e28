"""Loaders against real corpora (../shared/corpora) and small synthetic hostile files.

Every file of every corpus folder is loaded once (contracts-cuad: a handful) and must come back
as a valid Loaded, silently; then specific files are checked against what is known about them.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import random
import re
import tempfile
import warnings
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from qspace_frames.corpus.loaders import STATUSES, Loaded, load_file
from qspace_frames.params import CorpusParams

P = CorpusParams()
CUAD_SAMPLE = 4  # per kind (txt, pdf): the full 47 MB is a benchmark, not a unit test


def load(path: Path, p: CorpusParams = P) -> Loaded:
    return load_file(path, path.suffix.lower().lstrip("."), p)


def assert_valid(r: Loaded, where: object) -> None:
    assert isinstance(r, Loaded), where
    assert r.status in STATUSES, (where, r.status)
    assert isinstance(r.reason, str) and "\n" not in r.reason and "\r" not in r.reason, (where, r.reason)
    assert r.reason == r.reason.strip(), (where, r.reason)
    assert r.reason or r.status == "loaded", (where, r)
    if r.status != "loaded":
        assert r.pages == [], (where, r.status)
        return
    assert r.pages and any(text.strip() for _, text in r.pages), where
    assert all(isinstance(text, str) for _, text in r.pages), where
    if r.n_pages is None:
        assert len(r.pages) == 1 and r.pages[0][0] is None, where
    else:
        assert [page for page, _ in r.pages] == list(range(1, r.n_pages + 1)), where


def corpus_files(corpora: Path) -> dict[str, list[Path]]:
    out = {}
    for folder in sorted(d for d in corpora.iterdir() if d.is_dir()):
        files = sorted(f for f in folder.rglob("*") if f.is_file())
        if folder.name == "contracts-cuad":
            files = [f for f in files if f.suffix != ".txt"][:CUAD_SAMPLE] + [f for f in files if f.suffix == ".txt"][:CUAD_SAMPLE]
        out[folder.name] = files
    assert len(out) >= 10, f"expected the 10 corpus folders of the README, found {sorted(out)}"
    return out


class _Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def capture_everything():
    """Catch anything that escapes a loader: fd-level and Python-level output, warnings, logs."""
    got: dict = {}
    saved = [os.dup(1), os.dup(2)]
    recorder = _Recorder()
    root = logging.getLogger()
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old_level = root.level
        root.addHandler(recorder)
        root.setLevel(logging.DEBUG)
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                yield got
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            root.removeHandler(recorder)
            root.setLevel(old_level)
            sink.seek(0)
            got["fd"] = sink.read().decode("utf-8", "replace")
            got["py"] = out.getvalue() + err.getvalue()
            got["warnings"] = [str(w.message) for w in caught]
            got["logs"] = [f"{r.name}: {r.getMessage()}" for r in recorder.records]


@pytest.fixture(scope="module")
def sweep(corpora) -> dict:
    """Every corpus file loaded once, with whatever escaped the loaders."""
    results: dict[str, dict[str, Loaded]] = {}
    with capture_everything() as escaped:
        for folder, files in corpus_files(corpora).items():
            results[folder] = {str(f.relative_to(corpora / folder)): load(f) for f in files}
    return {"results": results, "escaped": escaped}


def result(sweep: dict, rel: str) -> Loaded:
    folder, _, inner = rel.partition("/")
    return sweep["results"][folder][inner]


# --------------------------------------------------------------------------- whole corpora


def test_every_corpus_file_gives_a_valid_loaded(sweep):
    n = 0
    for folder, files in sweep["results"].items():
        for rel, r in files.items():
            assert_valid(r, f"{folder}/{rel}")
            n += 1
    assert n > 600


def test_loaders_are_silent(sweep):
    escaped = sweep["escaped"]
    assert escaped["fd"] == "" and escaped["py"] == "", escaped
    assert escaped["warnings"] == [], escaped["warnings"][:5]
    assert escaped["logs"] == [], escaped["logs"][:5]


def test_status_counts_per_corpus(sweep, capsys):
    table = {}
    for folder, files in sweep["results"].items():
        known = [r for rel, r in files.items() if Path(rel).suffix.lower().lstrip(".") in P.extensions]
        table[folder] = Counter(r.status for r in known)
    with capsys.disabled():  # shown with -s: the shape of the corpora at a glance
        print("\n" + "\n".join(f"{k:32} {dict(v)}" for k, v in table.items()))
    # Plain-text corpora and the policy corpora load completely.
    for folder in ("policy-18f-handbook", "policy-github-site-policy", "debian-policy", "contracts-cuad"):
        assert set(table[folder]) == {"loaded"}, (folder, table[folder])
    # Only the statuses that the files deserve (checked one by one below) appear elsewhere.
    assert table["office-pdf-pypdf-resources"]["encrypted"] == 10
    assert table["office-pdf-py-pdf-sample-files"]["error"] == 1
    assert table["office-xlsx-openpyxl"]["error"] == 2


def test_files_of_other_types_are_unsupported_with_their_extension(sweep):
    for folder, files in sweep["results"].items():
        for rel, r in files.items():
            ext = Path(rel).suffix.lower().lstrip(".")
            if ext not in P.extensions:
                assert r.status == "unsupported", rel
                assert r.reason == (f"no loader for .{ext}" if ext else "no loader for files without an extension")


# --------------------------------------------------------------------------- pdf

ENCRYPTED = [
    "office-pdf-py-pdf-sample-files/005-libreoffice-writer-password/libreoffice-writer-password.pdf",
    "office-pdf-pypdf-resources/resources/libreoffice-writer-password.pdf",
    "office-pdf-pypdf-resources/resources/crazyones-encrypted-256.pdf",
    "office-pdf-pypdf-resources/resources/encrypted-file.pdf",
    "office-pdf-pypdf-resources/resources/encryption/r2-user-password.pdf",
    "office-pdf-pypdf-resources/resources/encryption/r3-user-password.pdf",
    "office-pdf-pypdf-resources/resources/encryption/r4-user-password.pdf",
    "office-pdf-pypdf-resources/resources/encryption/r4-aes-user-password.pdf",
    "office-pdf-pypdf-resources/resources/encryption/r6-both-passwords.pdf",
]
# R5/R6 with a user password but an empty owner password: pypdf's decrypt("") succeeds through
# the owner password, which must not count as "no password needed".
USER_PASSWORD_EMPTY_OWNER = [
    "office-pdf-pypdf-resources/resources/encryption/r5-user-password.pdf",
    "office-pdf-pypdf-resources/resources/encryption/r6-user-password.pdf",
]
EMPTY_USER_PASSWORD = [
    f"office-pdf-pypdf-resources/resources/encryption/{name}.pdf"
    for name in (
        "r2-empty-password", "r3-empty-password", "r5-empty-password", "r6-empty-password",
        "r2-owner-password", "r4-owner-password", "r5-owner-password", "r6-owner-password",
        "r4-aes-v2-no-key-length",
    )
]  # fmt: skip
IMAGE_ONLY = [
    "office-pdf-py-pdf-sample-files/007-imagemagick-images/imagemagick-ASCII85Decode.pdf",
    "office-pdf-py-pdf-sample-files/007-imagemagick-images/imagemagick-CCITTFaxDecode.pdf",
    "office-pdf-py-pdf-sample-files/007-imagemagick-images/imagemagick-lzw.pdf",
    "office-pdf-py-pdf-sample-files/019-grayscale-image/grayscale-image.pdf",
    "office-pdf-py-pdf-sample-files/023-cmyk-image/cmyk-image.pdf",
    "office-pdf-pypdf-resources/resources/imagemagick-lzw.pdf",
    "office-pdf-pypdf-resources/resources/box.pdf",
]


@pytest.mark.parametrize("rel", ENCRYPTED)
def test_password_protected_pdfs_are_encrypted(sweep, rel):
    r = result(sweep, rel)
    assert (r.status, r.reason) == ("encrypted", "password required (the empty password does not open it)")


@pytest.mark.parametrize("rel", USER_PASSWORD_EMPTY_OWNER)
def test_user_password_with_empty_owner_password_is_encrypted(sweep, rel):
    r = result(sweep, rel)
    assert (r.status, r.reason) == ("encrypted", "user password required (only the owner password is empty)")


@pytest.mark.parametrize("rel", EMPTY_USER_PASSWORD)
def test_pdfs_with_an_empty_user_password_load(sweep, rel):
    r = result(sweep, rel)
    assert r.status == "loaded" and r.reason == "encrypted; opened with the empty password"
    assert "pdf encryption test" in r.pages[0][1]  # the decrypted text, not ciphertext


def test_unencrypted_control_file_has_no_reason(sweep):
    r = result(sweep, "office-pdf-pypdf-resources/resources/encryption/unencrypted.pdf")
    assert r.status == "loaded" and r.reason == "" and "pdf encryption test" in r.pages[0][1]


@pytest.mark.parametrize("rel", IMAGE_ONLY)
def test_image_only_pdfs_are_empty(sweep, rel):
    r = result(sweep, rel)
    assert r.status == "empty" and r.n_pages == 1
    assert r.reason == "no text layer on any of 1 pages (image-only PDF?)"


def test_broken_pdf_reports_the_real_reason(sweep):
    r = result(sweep, "office-pdf-py-pdf-sample-files/017-unreadable-meta-data/unreadablemetadata.pdf")
    assert r.status == "error"
    assert r.reason == "pdf page tree unreadable: PdfReadError: Invalid object in /Pages"


def test_pdf_page_counts_match_the_corpus_metadata(sweep, corpora):
    """files.json of py-pdf/sample-files records each PDF's page count: ours must agree."""
    meta = json.loads((corpora / "office-pdf-py-pdf-sample-files" / "files.json").read_text())
    checked = 0
    for entry in meta["data"]:
        r = sweep["results"]["office-pdf-py-pdf-sample-files"].get(entry["path"])
        if r is None or r.status not in ("loaded", "empty") or "pages" not in entry:
            continue
        assert r.n_pages == entry["pages"], entry["path"]
        checked += 1
    assert checked >= 25


def test_pdf_pages_are_numbered_and_kept_in_order(sweep):
    r = result(sweep, "office-pdf-py-pdf-sample-files/004-pdflatex-4-pages/pdflatex-4-pages.pdf")
    assert r.status == "loaded" and r.n_pages == 4 and [pg for pg, _ in r.pages] == [1, 2, 3, 4]
    assert all(text.strip() for _, text in r.pages)


def test_cuad_pdf_text_matches_its_txt_twin(sweep, corpora):
    """CUAD ships each contract as PDF and as text: the PDF loader must find the same words."""
    cuad = corpora / "contracts-cuad"
    for rel, r in sweep["results"]["contracts-cuad"].items():
        if not rel.endswith(".pdf"):
            continue
        twin = cuad / "txt" / (Path(rel).stem + ".txt")
        assert r.status == "loaded" and twin.is_file(), rel
        pdf_words = set(re.findall(r"[a-z]{4,}", " ".join(t for _, t in r.pages).lower()))
        txt_words = set(re.findall(r"[a-z]{4,}", twin.read_text(encoding="utf-8").lower()))
        assert len(pdf_words & txt_words) / len(txt_words) > 0.8, rel


@pytest.mark.parametrize("name", ["r6-empty-password.pdf", "r4-aes-v2-no-key-length.pdf"])
def test_aes_pdf_without_a_crypto_package_says_so(monkeypatch, name, corpora):
    """Swap pypdf's AES primitives for its no-dependency fallbacks, as if cryptography were absent."""
    import pypdf._encryption as enc
    from pypdf._crypt_providers import _fallback

    for attr in ("CryptAES", "aes_cbc_decrypt", "aes_cbc_encrypt", "aes_ecb_decrypt", "aes_ecb_encrypt"):
        monkeypatch.setattr(enc, attr, getattr(_fallback, attr))
    r = load(corpora / "office-pdf-pypdf-resources/resources/encryption" / name)
    assert r.status == "error" and r.reason.startswith("pdf decryption needs a missing package: DependencyError:")
    assert "cryptography" in r.reason


def test_max_pages(sweep, corpora):
    path = corpora / "office-pdf-py-pdf-sample-files/004-pdflatex-4-pages/pdflatex-4-pages.pdf"
    r = load(path, CorpusParams(max_pages=3))
    assert (r.status, r.reason, r.n_pages) == ("too_large", "4 pages, over max_pages=3", 4)


# --------------------------------------------------------------------------- text formats


def test_txt_and_md_come_back_unchanged(sweep, corpora):
    """Unchanged but for md front matter, blanked in place (tests/test_front_matter.py)."""
    checked = blanked = 0
    for folder, files in sweep["results"].items():
        for rel, r in files.items():
            if rel.endswith((".txt", ".md")) and r.status == "loaded":
                raw = (corpora / folder / rel).read_bytes().decode("utf-8")
                if rel.endswith(".md") and "front matter: title taken" in r.reason:
                    [(page, text)] = r.pages
                    end = raw.index("\n---", 3) + 4  # the closing line (none of these use "...")
                    assert page is None and len(text) == len(raw) and text[end:] == raw[end:], rel
                    assert text.startswith("# ") and not text[text.index("\n") : end].strip(), rel
                    blanked += 1
                else:
                    assert r.pages == [(None, raw)], rel
                checked += 1
    assert checked > 300 and blanked > 300


def test_html_from_debian_policy(sweep):
    r = result(sweep, "debian-policy/usr/share/doc/debian-policy/README.html")
    text = r.pages[0][1]
    assert text.startswith("# Debian Policy\n\n## Infrastructure\n\n- Website:: https://")
    assert "debian-policy@lists.debian.org" in text  # entity-obfuscated address, unescaped
    assert not re.search(r"</?(a|p|li|ul|h\d|div|span)\b", text)  # no markup left (the docs quote XML)
    for rel, r in sweep["results"]["debian-policy"].items():
        if rel.endswith(".html"):
            body = r.pages[0][1]
            assert "¶" not in body, rel  # Sphinx permalinks dropped
            assert "\n\n\n" not in body, rel
            assert re.search(r"^#{1,6} \S", body, re.M), rel


def test_contractnli_json_is_flattened_to_leaf_paths(sweep):
    r = result(sweep, "qa-contractnli-dev/dev.json")
    lines = r.pages[0][1].split("\n")
    assert lines[0] == "documents[0].id = 3"
    assert any(line.startswith("documents[0].text = ") for line in lines)
    assert any(re.fullmatch(r"documents\[\d+\]\.spans\[\d+\]\[1\] = \d+", line) for line in lines)
    assert any(line.startswith("labels.nda-") and ".hypothesis = " in line for line in lines)


# --------------------------------------------------------------------------- office


def test_docx_headings_lists_and_table_rows(sweep):
    base = "office-docx-python-docx/features/steps/test_files/"
    assert result(sweep, base + "par-known-styles.docx").pages[0][1].split("\n\n") == [
        "no specified style", "missing style", "# Heading 1", "Body Text",
    ]  # fmt: skip
    assert (
        result(sweep, base + "tbl-cell-access.docx")
        .pages[0][1]
        .startswith("Row 1: 1 = 4; 2 = 5; 3 = 6\n\nRow 2: 1 = 7; 2 = 8; 3 = 9\n\nRow 1: 1 = 4; 3 = 6")
    )
    # Paragraphs and tables interleaved in document order; a header row with nothing under it
    # is read as data rather than lost.
    assert result(sweep, "office-docx-python-docx/tests/test_files/sct-inner-content.docx").pages[0][1].split("\n\n") == [
        "P1",
        "Row 1: col1 = T2",
        "P3",
        "Row 1: col1 = T4",
        "P5",
        "P6",
        "P7",
        "P8",
        "P9",
    ]
    kickoff = result(sweep, "policy-18f-handbook/downloads/TEMPLATE_Internal_kickoff_agenda.docx")
    blocks = kickoff.pages[0][1].split("\n\n")
    assert blocks[0].startswith("Row 1: col1 = 🏁 🔐 🏁 FRONT MATTER")
    assert blocks[1] == "# [Project Name] Internal Kickoff"
    assert "## Team introductions (10 minutes):" in blocks
    assert "- Name, discipline, role on the project, location, pronouns" in blocks


def test_docx_without_text_is_empty(sweep):
    r = result(sweep, "office-docx-python-docx/features/steps/test_files/doc-default.docx")
    assert (r.status, r.reason) == ("empty", "no text in the document body")


def test_pptx_pages_are_slides(sweep, corpora):
    from pptx import Presentation

    base = corpora / "office-pptx-python-pptx"
    r = result(sweep, "office-pptx-python-pptx/features/steps/test_files/tbl-cell.pptx")
    assert r.n_pages == 3 and r.pages == [
        (1, "Row 1: having custom margins = unladen swallows"),
        (2, "Row 1: col1 = merged cell\n\nRow 1: col1 = merged cell"),  # spanned cells once
        (3, "Row 1: a = d; b = e; c = f\n\nRow 2: a = g; b = h; c = i"),
    ]
    assert result(sweep, "office-pptx-python-pptx/tests/test_files/test.pptx").pages == [(1, "# Presentation Title Text\n\nSubtitle Text")]
    for rel, r in sweep["results"]["office-pptx-python-pptx"].items():
        if rel.endswith(".pptx") and r.status in ("loaded", "empty"):
            assert r.n_pages == len(Presentation(str(base / rel)).slides), rel


def test_xlsx_pages_are_sheets(sweep, corpora):
    import openpyxl

    base = "office-xlsx-openpyxl/openpyxl/"
    r = result(sweep, base + "reader/tests/data/contains_chartsheets.xlsx")
    assert r.n_pages == 3 and r.pages[1] == (2, "")  # the chartsheet: a blank page
    assert r.pages[0][1].startswith("# data\n\nRow 2: x = 0; y = 0\n\nRow 3: x = 1; y = 0.312961796207787")
    assert r.pages[2][1].startswith("# moredata\n\nRow 2: month = january; count = 18")
    for name in ("date_1900.xlsx", "date_1904.xlsx"):  # both epochs give the same ISO date
        assert result(sweep, base + "reader/tests/data/" + name).pages[0] == (1, "# Sheet1\n\nRow 1: col1 = 2011-10-31")
    root = corpora / "office-xlsx-openpyxl"
    for rel, r in sweep["results"]["office-xlsx-openpyxl"].items():
        if r.status in ("loaded", "empty") and r.n_pages is not None:
            wb = openpyxl.load_workbook(root / rel, read_only=True)
            assert r.n_pages == len(wb.sheetnames), rel
            wb.close()


def test_malformed_workbooks_are_errors_with_reasons(sweep):
    base = "office-xlsx-openpyxl/openpyxl/"
    r = result(sweep, base + "reader/tests/data/null_file.xlsx")
    assert (r.status, r.reason) == ("error", "not a zip archive (file is 0 bytes)")
    r = result(sweep, base + "tests/data/reader/null_archive.xlsx")
    assert r.status == "error"
    assert r.reason == "not an Office package: [Content_Types].xml missing from the zip (1 members)"


# --------------------------------------------------------------------------- synthetic: hostile input


def _docx_bytes(paragraph: str = "hello") -> bytes:
    from test_hostile import (
        _docx_bytes as docx_package,  # one builder for the docx test files
    )

    return docx_package(paragraph)


def _replace_member(package: bytes, name: str, content: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(package))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, content if info.filename == name else src.read(info))
    return out.getvalue()


def test_zip_bomb_docx_is_refused_before_parsing(tmp_path):
    inflated = b'<?xml version="1.0"?><w:document>' + b" " * 8_000_000 + b"</w:document>"
    bomb = _replace_member(_docx_bytes(), "word/document.xml", inflated)
    path = tmp_path / "bomb.docx"
    path.write_bytes(bomb)
    assert len(bomb) < 100_000
    r = load(path, CorpusParams(max_zip_bytes=1_000_000))
    assert r.status == "too_large"
    assert re.fullmatch(r"zip expands to 8,\d{3},\d{3} bytes, over max_zip_bytes=1,000,000", r.reason), r.reason
    r = load(path)  # within the default size bound, but it inflates far beyond the ratio bound
    assert r.status == "too_large" and "over max_zip_ratio=200" in r.reason, r.reason


def test_docx_with_entity_declarations_is_refused(tmp_path):
    plain = _docx_bytes()
    path = tmp_path / "plain.docx"
    path.write_bytes(plain)
    assert load(path).pages == [(None, "hello")]  # the untouched document loads
    original = zipfile.ZipFile(io.BytesIO(plain)).read("word/document.xml").decode("utf-8")
    decl, _, body = original.partition("?>")
    laughs = '<!DOCTYPE w:document [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
    variants = {
        "entity.docx": (decl + "?>" + laughs + body).encode("utf-8"),
        # padded past the first 2 KiB with a comment: still inside the prolog, still refused
        "padded.docx": (decl + "?><!--" + "x" * 10_000 + "-->" + laughs + body).encode("utf-8"),
        "bom.docx": b"\xef\xbb\xbf" + (decl + "?><!--" + "x" * 10_000 + "-->" + laughs + body).encode("utf-8"),
        "utf16.docx": (decl.replace("UTF-8", "UTF-16") + "?>" + laughs + body).encode("utf-16"),
    }
    for name, xml in variants.items():
        path = tmp_path / name
        path.write_bytes(_replace_member(plain, "word/document.xml", xml))
        r = load(path)
        assert (r.status, r.reason) == ("error", "XML entity declarations are not allowed (word/document.xml)"), name


def test_office_file_that_is_not_a_zip(tmp_path):
    path = tmp_path / "fake.docx"
    path.write_text("just some text, not a zip", encoding="utf-8")
    r = load(path)
    assert r.status == "error" and r.reason.startswith("not a zip archive (BadZipFile: File is not a zip file;")


def test_ole_containers(tmp_path):
    """Password-protected OOXML is an OLE compound file with an EncryptionInfo stream, not a zip."""
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500)
    path = tmp_path / "locked.xlsx"
    path.write_bytes(ole + "EncryptionInfo".encode("utf-16-le") + bytes(500))
    r = load(path)
    assert (r.status, r.reason) == ("encrypted", "password-protected Office file (OLE container with EncryptionInfo)")
    path = tmp_path / "legacy.docx"
    path.write_bytes(ole + "WordDocument".encode("utf-16-le") + bytes(500))
    r = load(path)
    assert (r.status, r.reason) == ("error", "not a zip archive (an OLE compound file: legacy binary Office format?)")


def test_json_nested_100000_deep_is_an_error_not_a_crash(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    r = load(path)
    assert r.status == "error" and r.reason.startswith("JSON nested deeper than 64"), r.reason


def test_json_depth_limit_is_exact(tmp_path):
    ok, deep = tmp_path / "ok.json", tmp_path / "deep.json"
    ok.write_text("[" * 64 + "1" + "]" * 64, encoding="utf-8")
    deep.write_text("[" * 65 + "1" + "]" * 65, encoding="utf-8")
    assert load(ok).pages == [(None, "[0]" * 64 + " = 1")]
    assert (load(deep).status, load(deep).reason) == ("error", "JSON nested deeper than 64")


def test_json_leaf_lines(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(
        json.dumps({"a": {"b": [1, {"c": "two\nlines"}]}, "d.e": None, "f": True, "g": [], "h": ""}),
        encoding="utf-8",
    )
    assert load(path).pages[0][1].split("\n") == [
        "a.b[0] = 1", "a.b[1].c = two lines", '["d.e"] = null', "f = true", "g = []", "h =",
    ]  # fmt: skip
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1,}', encoding="utf-8")
    r = load(bad)
    assert r.status == "error" and r.reason.startswith("json parse failed: JSONDecodeError: Expecting property name")


def test_json_text_bound_is_checked_while_flattening(tmp_path):
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({"k" * 50: list(range(1000))}), encoding="utf-8")
    r = load(path, CorpusParams(max_doc_chars=5_000))
    assert (r.status, r.reason) == ("too_large", "text is over max_doc_chars=5,000 after 84 JSON values")


def test_jsonl_bad_lines_are_counted(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\nnot json\n\n{"b": [true]}\n', encoding="utf-8")
    r = load(path)
    assert r.status == "loaded" and r.pages == [(None, "[0].a = 1\n[3].b[0] = true")]
    assert r.reason.startswith("1 of 3 lines are not valid JSON, skipped (first: line 2: JSONDecodeError")
    path.write_text("nope\nnope\n", encoding="utf-8")
    r = load(path)
    assert r.status == "error" and r.reason.startswith("none of 2 lines is valid JSON")


def test_random_bytes_named_txt_are_unsupported(tmp_path):
    rng = random.Random(0)
    path = tmp_path / "random.txt"
    path.write_bytes(rng.randbytes(20_000))
    r = load(path)
    assert r.status == "unsupported" and re.fullmatch(r"binary content in a text file \([\d,]+ NUL bytes\)", r.reason)
    path.write_bytes(bytes(rng.randrange(0x80, 0x100) for _ in range(20_000)))  # no NUL at all
    r = load(path)
    assert r.status == "unsupported" and r.reason.startswith("binary content in a text file (")
    assert "over binary_ratio=0.1" in r.reason


def test_a_few_undecodable_bytes_are_replaced_and_reported(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("Policy for the café: pay within 30 days.\n".encode("utf-8").replace("é".encode(), b"\xe9"))
    r = load(path)
    assert r.status == "loaded" and r.pages == [(None, "Policy for the caf\ufffd: pay within 30 days.\n")]
    assert r.reason == "not valid UTF-8: 1 undecodable bytes replaced with U+FFFD"


@pytest.mark.parametrize("codec,label", [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")])
def test_utf16_and_utf32_with_bom(tmp_path, codec, label):
    text = "Überschrift\r\nLine two — ünïcödé\n"
    path = tmp_path / "x.txt"
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    path.write_bytes(data)
    r = load(path)
    assert r.status == "loaded" and r.pages == [(None, text)]  # newlines untouched
    assert r.reason == f"decoded as {label} (BOM)"


def test_utf8_text_is_not_normalised(tmp_path):
    text = "\ufeffa\r\nb\rc  \n\n\n"
    path = tmp_path / "x.md"
    path.write_bytes(text.encode("utf-8"))
    assert load(path).pages == [(None, text)]


@pytest.mark.parametrize(
    "name,status,reason",
    [
        ("empty.txt", "empty", "file is 0 bytes"),
        ("empty.md", "empty", "file is 0 bytes"),
        ("empty.json", "empty", "file is 0 bytes"),
        ("empty.pdf", "error", "not a PDF: file is 0 bytes"),
        ("empty.docx", "error", "not a zip archive (file is 0 bytes)"),
        ("empty.pptx", "error", "not a zip archive (file is 0 bytes)"),
    ],
)
def test_zero_byte_files(tmp_path, name, status, reason):
    path = tmp_path / name
    path.write_bytes(b"")
    assert (load(path).status, load(path).reason) == (status, reason)


def test_whitespace_only_text_is_empty(tmp_path):
    path = tmp_path / "blank.txt"
    path.write_text(" \n\t\n", encoding="utf-8")
    assert (load(path).status, load(path).reason) == ("empty", "only whitespace (4 characters)")


def test_text_file_named_pdf(tmp_path):
    path = tmp_path / "fake.pdf"
    path.write_text("Hello, I am not a PDF.\n", encoding="utf-8")
    r = load(path)
    assert r.status == "error"
    assert r.reason == "not a PDF: no %PDF- header in the first 1 KiB (starts with b'Hello, I am ')"


def test_truncated_pdf_reports_the_parser_error(tmp_path, corpora):
    data = (corpora / "office-pdf-py-pdf-sample-files/004-pdflatex-4-pages/pdflatex-4-pages.pdf").read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(data[: len(data) // 2])
    r = load(path)
    assert (r.status, r.reason) == ("error", "pdf parse failed: PdfStreamError: Stream has ended unexpectedly")


def test_size_limits(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("word " * 200, encoding="utf-8")
    r = load(path, CorpusParams(max_file_bytes=100))
    assert (r.status, r.reason) == ("too_large", "file is 1,000 bytes, over max_file_bytes=100")
    r = load(path, CorpusParams(max_doc_chars=999))
    assert (r.status, r.reason) == ("too_large", "text is 1,000 characters, over max_doc_chars=999")


def test_unreadable_and_missing_files(tmp_path, monkeypatch):
    path = tmp_path / "secret.txt"
    path.write_text("secret", encoding="utf-8")
    path.chmod(0)
    if os.access(path, os.R_OK):  # running as root: permissions do not stop reading, so fake it

        def denied(self):
            raise PermissionError(13, "Permission denied", str(self))

        monkeypatch.setattr(Path, "read_bytes", denied)
    r = load(path)
    assert r.status == "error" and r.reason.startswith("cannot read: PermissionError: [Errno 13] Permission denied")
    r = load(tmp_path / "missing.txt")
    assert r.status == "error" and r.reason.startswith("cannot stat: FileNotFoundError:")


def test_unknown_extension(tmp_path):
    path = tmp_path / "x.xyz"
    path.write_text("x", encoding="utf-8")
    assert (load(path).status, load(path).reason) == ("unsupported", "no loader for .xyz")


# --------------------------------------------------------------------------- synthetic: conventions


def _html_blocks(tmp_path, html: str) -> list[str]:
    """The blocks (paragraphs) of an HTML file's text as the loader writes it."""
    path = tmp_path / "x.html"
    path.write_text(html, encoding="utf-8")
    return load(path).pages[0][1].split("\n\n")


def test_html_conventions(tmp_path):
    html = """<html><head><title>The  Title</title><style>p {color: red}</style>
        <script>var x = "<p>no</p>";</script></head>
        <body><noscript>enable js</noscript>
        <h2>Leave &amp; travel</h2><p>Approve   within
        5&nbsp;days.<p>Second para
        <ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>
        <pre>a  b
          c</pre>
        <table><tr><th>Role</th><th>Limit</th></tr>
        <tr><td>Manager</td><td>$5,000</td></tr><tr><td></td><td></td></tr>
        <tr><td>Director</td><td colspan="1"><p>$20,000</p></td></tr></table>
        <table><tr><td>a</td><td>b</td></tr></table>
        </body></html>"""
    assert _html_blocks(tmp_path, html) == [
        "# The Title",
        "## Leave & travel",
        "Approve within 5 days.",
        "Second para",
        "- one",
        "- two",
        "- nested",
        "a  b\n          c",
        "Row 1: Role = Manager; Limit = $5,000",
        "Row 2: Role = Director; Limit = $20,000",
        "Row 1: col1 = a; col2 = b",
    ]


def test_an_html_list_item_is_marked_as_one_whatever_block_holds_its_text(tmp_path):
    """Sphinx writes each item's text in a <p> (`<li><p>Other NMUs: 10 days</p></li>`): the item's
    first block is marked as an item, its next paragraphs carry on without a marker, and an item
    that opens with code is not marked on the code."""
    html = (
        "<html><body><p>Here are some recommended values to use for delays:</p><ul class='simple'>"
        "<li><p>Upload fixing only release-critical bugs: 2 days</p></li>"
        "<li><p>Other NMUs: 10 days</p><p>Those are examples.</p></li>"
        "<li><pre>dcut cancel</pre><p>cancels it</p></li></ul><p>After the list.</p></body></html>"
    )
    assert _html_blocks(tmp_path, html) == [
        "Here are some recommended values to use for delays:",
        "- Upload fixing only release-critical bugs: 2 days",
        "- Other NMUs: 10 days",
        "Those are examples.",
        "dcut cancel",
        "- cancels it",
        "After the list.",
    ]


def test_html_title_is_not_repeated_when_there_is_an_h1(tmp_path):
    path = tmp_path / "x.htm"
    path.write_text("<title>T</title><h1>Real heading</h1>text", encoding="utf-8")
    assert load(path).pages == [(None, "# Real heading\n\ntext")]


def test_csv_conventions(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text('name;amount;note\nAlice;10;"two\nlines"\n\nBob;;x\n', encoding="utf-8")
    assert load(path).pages == [(None, "Row 1: name = Alice; amount = 10; note = two lines\nRow 2: name = Bob; note = x")]
    path.write_text("only,one,row\n", encoding="utf-8")
    r = load(path)
    assert r.pages == [(None, "Row 1: col1 = only; col2 = one; col3 = row")]
    assert r.reason == "one row only, read as data without a header"


def test_docx_conventions(tmp_path):
    import docx

    d = docx.Document()
    d.add_heading("Travel policy", level=0)  # the Title style
    d.add_paragraph("Intro text.")
    d.add_heading("Approvals", level=2)
    d.add_paragraph("First item", style="List Bullet")
    t = d.add_table(rows=3, cols=2)
    for r, row in enumerate([("Role", "Limit"), ("Manager", "5000"), ("", "")]):
        for c, value in enumerate(row):
            t.cell(r, c).text = value
    d.add_paragraph("After the table.")
    path = tmp_path / "x.docx"
    d.save(path)
    r = load(path)
    assert r.n_pages is None and r.pages[0][1].split("\n\n") == [
        "# Travel policy", "Intro text.", "## Approvals", "- First item",
        "Row 1: Role = Manager; Limit = 5000", "After the table.",
    ]  # fmt: skip


def test_xlsx_conventions(tmp_path):
    import datetime as dt

    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws.append(["Item", "Amount", "Due", "Paid"])
    ws.append(["Travel", 3.0, dt.date(2024, 3, 1), True])
    ws.append([])
    ws.append(["Meals", 12.5, dt.datetime(2024, 3, 2, 14, 30), False])
    wb.create_sheet("Empty")
    path = tmp_path / "x.xlsx"
    wb.save(path)
    r = load(path)
    assert r.n_pages == 2 and r.pages == [
        (1, "# Budget\n\nRow 2: Item = Travel; Amount = 3; Due = 2024-03-01; Paid = TRUE\n\n"
            "Row 4: Item = Meals; Amount = 12.5; Due = 2024-03-02T14:30:00; Paid = FALSE"),
        (2, ""),
    ]  # fmt: skip


def test_pptx_conventions(tmp_path):
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    slide.shapes.title.text = "Quarterly  review"
    box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1))
    box.text_frame.text = "Revenue up"
    box.text_frame.add_paragraph().text = "Costs flat"
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1)).table
    for c, (head, value) in enumerate([("Metric", "Revenue"), ("Value", "10")]):
        table.cell(0, c).text, table.cell(1, c).text = head, value
    deck.slides.add_slide(deck.slide_layouts[6])  # blank
    path = tmp_path / "x.pptx"
    deck.save(path)
    r = load(path)
    assert r.n_pages == 2 and r.pages == [
        (1, "# Quarterly review\n\nRevenue up\n\nCosts flat\n\nRow 1: Metric = Revenue; Value = 10"),
        (2, ""),
    ]


def test_an_office_file_under_another_office_extension_says_so_the_same_way_every_run(tmp_path):
    """A workbook saved as .docx: the library's message names an in-memory file by its repr, whose
    address changes from run to run; the reason keeps the message, not the address."""
    import openpyxl

    wrong = tmp_path / "budget.docx"
    openpyxl.Workbook().save(wrong)
    first, again = load(wrong), load(wrong)
    assert first.status == "error" and "not a Word file" in first.reason
    assert " at 0x" not in first.reason and first.reason == again.reason

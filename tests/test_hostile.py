"""Hostile input, end to end: a corpus of malicious and broken files generated into tmp_path.

Nothing hostile is committed: every file is built by `make_hostile_corpus` (zip bombs are
streamed, so building one costs a second of CPU and a few hundred KB of disk). The corpus stage
and then the whole pipeline run on it in a SUBPROCESS, so a crash, a hang or a memory blow-up is
observed rather than suffered; the test asserts that every file is in the inventory with the
status and reason of the EXPECTED table below, that the run completes, that the subprocess
stays under 1 GB of peak RSS, and that nothing was fetched or expanded from hostile XML.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import zipfile
import zlib
from pathlib import Path

import polars as pl
import pytest

PASSWD_MARKER = "root:x:0:0"  # the first line of /etc/passwd on every Linux
LAUGH = "LOLHOSTILE"  # the entity text a billion-laughs expansion would multiply
MAX_FILE_BYTES = 2 * 2**20  # params overlay: keeps the over-the-limit text file small
BOMB_BYTES = 300 * 2**20  # inflated size of a zip bomb's one huge part (over max_zip_bytes)
RATIO_BOMB_BYTES = 100 * 2**20  # under max_zip_bytes, but far over max_zip_ratio
MAX_RSS = 2**30  # 1 GB

# --------------------------------------------------------------------------- building blocks


def _docx_bytes(text: str = "hello from a docx") -> bytes:
    import docx

    d = docx.Document()
    d.add_paragraph(text)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _xlsx_bytes() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["name", "value"])
    ws.append(["alpha", "hello from a workbook"])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _pptx_bytes() -> bytes:
    from pptx import Presentation

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Hello from a deck"
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def _rezip(package: bytes, replace: dict[str, bytes] | None = None, bomb: str | None = None, bomb_bytes: int = 0) -> bytes:
    """Copy an Office package, replacing members; `bomb` names a member streamed as zeros."""
    replace = replace or {}
    src = zipfile.ZipFile(io.BytesIO(package))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            if info.filename == bomb:
                zi = zipfile.ZipInfo(info.filename, info.date_time)
                zi.compress_type = zipfile.ZIP_DEFLATED
                with dst.open(zi, "w") as fh:  # streamed: never more than one chunk in memory
                    chunk = bytes(8 * 2**20)
                    for _ in range(bomb_bytes // len(chunk)):
                        fh.write(chunk)
            else:
                dst.writestr(info.filename, replace.get(info.filename, src.read(info)), zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _lying_size(package: bytes, member: str, declared: int) -> bytes:
    """Rewrite a member's declared uncompressed size (local header and central directory)."""
    data = bytearray(package)
    name = member.encode()
    local = data.find(b"PK\x03\x04")
    while local >= 0:
        n = int.from_bytes(data[local + 26 : local + 28], "little")
        if data[local + 30 : local + 30 + n] == name:
            data[local + 22 : local + 26] = declared.to_bytes(4, "little")
        local = data.find(b"PK\x03\x04", local + 4)
    central = data.find(b"PK\x01\x02")
    while central >= 0:
        n = int.from_bytes(data[central + 28 : central + 30], "little")
        if data[central + 46 : central + 46 + n] == name:
            data[central + 24 : central + 28] = declared.to_bytes(4, "little")
        central = data.find(b"PK\x01\x02", central + 4)
    return bytes(data)


RENAMED_EXPECTED = {  # what python-docx (lxml) makes of a DTD in a part the prolog check does not read
    "laughs": ("error", r"docx parse failed: XMLSyntaxError: .*[Aa]mplification.*"),
    "xxe-file": ("empty", r"no text in the document body"),  # the entity is left unresolved, not fetched
    "xxe-http": ("empty", r"no text in the document body"),
}
LAUGHS_DTD = f'<!DOCTYPE r [<!ENTITY l0 "{LAUGH}">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10)) + "]>"


def _with_dtd(xml: bytes, dtd: str, entity: str) -> bytes:
    """Insert a DTD after the XML declaration and use `entity` in the first text node."""
    text = xml.decode("utf-8")
    decl, sep, body = text.partition("?>")
    if not sep:
        decl, body = "", text
    else:
        decl += "?>"
    # put the entity reference where text is: inside the first <w:t>, <t> or <a:t> element
    body = re.sub(r"(<(?:w:|a:)?t(?: [^>]*)?>)", lambda m: m.group(1) + f"&{entity};", body, count=1)
    return (decl + dtd + body).encode("utf-8")


def _rename_part(package: bytes, old: str, new: str) -> bytes:
    """Move a part to a new name and point [Content_Types].xml and the .rels files at it."""
    src = zipfile.ZipFile(io.BytesIO(package))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "[Content_Types].xml" or info.filename.endswith(".rels"):
                data = data.replace(b"/" + old.encode(), b"/" + new.encode())
                data = data.replace(old.rsplit("/", 1)[1].encode(), new.rsplit("/", 1)[1].encode())
            dst.writestr(new if info.filename == old else info.filename, data)
    return out.getvalue()


def _member(package: bytes, name: str) -> bytes:
    return zipfile.ZipFile(io.BytesIO(package)).read(name)


def _shared_strings_xlsx() -> tuple[bytes, str]:
    """An xlsx whose strings live in sharedStrings.xml (openpyxl writes them there)."""
    pkg = _xlsx_bytes()
    return pkg, "xl/sharedStrings.xml"


def _minimal_pdf(kids_of_pages: str, count: int = 1) -> bytes:
    """A small PDF with a hand-written page tree; xref offsets computed, so only the tree is odd."""
    objs = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids_of_pages}] /Count {count} >>",
        "<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R 4 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 3 0 R /MediaBox [0 0 200 200] /Contents 5 0 R /Resources << /Font << /F1 6 0 R >> >> >>",
        None,  # content stream
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    stream = b"BT /F1 12 Tf 20 100 Td (cyclic page tree) Tj ET"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        if obj is None:
            out += f"{i} 0 obj\n<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream\nendobj\n"
        else:
            out += f"{i} 0 obj\n{obj}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _flate_bomb_pdf(inflated: int) -> bytes:
    """A one-page PDF whose content stream is `inflated` bytes of spaces, deflated (streamed)."""
    c = zlib.compressobj(9)
    body = c.compress(b"BT /F1 12 Tf 20 100 Td (bomb) Tj ET\n")
    chunk = b" " * (8 * 2**20)
    for _ in range(inflated // len(chunk)):
        body += c.compress(chunk)
    body += c.flush()
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def _text_pdf() -> bytes:
    """A valid one-page PDF (the cyclic builder with an acyclic tree)."""
    return _minimal_pdf("3 0 R").replace(b"/Kids [2 0 R 3 0 R 4 0 R]", b"/Kids [4 0 R]        ")


# --------------------------------------------------------------------------- the corpus


def make_hostile_corpus(root: Path, http_url: str = "http://127.0.0.1:9/evil.dtd") -> dict[str, tuple[str, str]]:
    """Write every hostile file under root; return {path: (expected status, reason regex)}.

    `http_url` is what the external-entity files point at: the test listens there.
    """
    root.mkdir(parents=True, exist_ok=True)
    exp: dict[str, tuple[str, str]] = {}

    def put(rel: str, data: bytes | str, status: str, reason: str) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        exp[rel] = (status, reason)

    docx_pkg, xlsx_pkg, pptx_pkg = _docx_bytes(), _xlsx_bytes(), _pptx_bytes()

    # zip bombs: a small archive with one part of hundreds of MB of zeros
    over = r"zip expands to [\d,]+ bytes, over max_zip_bytes=268,435,456"
    ratio = r"zip compression ratio [\d,]+:1 \([\d,]+ bytes from [\d,]+\), over max_zip_ratio=200"
    put("bombs/bomb.docx", _rezip(docx_pkg, bomb="word/document.xml", bomb_bytes=BOMB_BYTES), "too_large", over)
    put("bombs/bomb.xlsx", _rezip(xlsx_pkg, bomb="xl/worksheets/sheet1.xml", bomb_bytes=RATIO_BOMB_BYTES), "too_large", ratio)
    put("bombs/bomb.pptx", _rezip(pptx_pkg, bomb="ppt/slides/slide1.xml", bomb_bytes=BOMB_BYTES), "too_large", over)
    # a bomb whose central directory lies: it declares 5,000 bytes for a part that inflates to 100 MB
    liar = _lying_size(_rezip(docx_pkg, bomb="word/document.xml", bomb_bytes=RATIO_BOMB_BYTES), "word/document.xml", 5000)
    put("bombs/lying-size.docx", liar, "error", r"docx parse failed: BadZipFile: Bad CRC-32 for file 'word/document\.xml'")

    # XML entity expansion and external entities, in docx and xlsx parts
    refused = r"XML entity declarations are not allowed \({part}\)"
    xxe_file = '<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    xxe_http = f'<!DOCTYPE r [<!ENTITY xxe SYSTEM "{http_url}">]>'
    xxe_param = '<!DOCTYPE r [<!ENTITY % ext SYSTEM "file:///etc/passwd"> %ext;]>'
    doc_xml = _member(docx_pkg, "word/document.xml")
    xlsx_strings = "xl/worksheets/sheet1.xml"
    strings_xml = _member(xlsx_pkg, xlsx_strings)
    for kind, dtd, entity in [
        ("laughs", LAUGHS_DTD, "l9"),
        ("xxe-file", xxe_file, "xxe"),
        ("xxe-http", xxe_http, "xxe"),
        ("xxe-param", xxe_param, "amp"),
    ]:
        put(
            f"xml/{kind}.docx",
            _rezip(docx_pkg, {"word/document.xml": _with_dtd(doc_xml, dtd, entity)}),
            "error",
            refused.format(part=r"word/document\.xml"),
        )
        put(
            f"xml/{kind}.xlsx",
            _rezip(xlsx_pkg, {xlsx_strings: _with_dtd(strings_xml, dtd, entity)}),
            "error",
            refused.format(part=r"xl/worksheets/sheet1\.xml"),
        )

    # the same attacks in parts whose names do not end in .xml (not vetted by name): the XML
    # parsers themselves must neither fetch nor expand (lxml: no network, entity amplification cap)
    for kind, dtd, entity in [("laughs", LAUGHS_DTD, "l9"), ("xxe-file", xxe_file, "xxe"), ("xxe-http", xxe_http, "xxe")]:
        pkg = _rezip(docx_pkg, {"word/document.xml": _with_dtd(doc_xml, dtd, entity)})
        put(f"xml/renamed-part-{kind}.docx", _rename_part(pkg, "word/document.xml", "word/body.bin"), *RENAMED_EXPECTED[kind])

    # PDFs: truncated, cyclic page trees (a /Pages node listing itself, and a child listing its parent)
    good_pdf = _text_pdf()
    put("pdf/control.pdf", good_pdf, "loaded", r"")
    put("pdf/truncated.pdf", good_pdf[: len(good_pdf) // 2], "error", r"pdf (parse failed|page tree unreadable): .+")
    put("pdf/cyclic-self.pdf", _minimal_pdf("2 0 R 3 0 R"), "error", r"pdf page tree unreadable: .+")
    put(
        "pdf/flate-bomb.pdf",
        _flate_bomb_pdf(RATIO_BOMB_BYTES),
        "error",  # pypdf stops inflating at its limit
        r"pdf text extraction failed on all 1 pages \(first: page 1: LimitReachedError: Limit reached while decompressing.*\)",
    )
    put("pdf/cyclic-parent.pdf", _minimal_pdf("3 0 R"), "error", r"pdf page tree unreadable: .+")

    # text formats
    put("text/deep.json", "[" * 100_000 + "]" * 100_000, "error", r"JSON nested deeper than 64.*")
    put(
        "text/deep.jsonl",
        "{}\n" + '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n",
        "loaded",
        r"1 of 2 lines are not valid JSON, skipped \(first: line 2: JSON nested deeper than 64.*",
    )
    put(
        "text/lone-surrogate.json",
        '{"a": "x\\ud800y", "b": "\\ud83d\\ude00 paired is fine"}',
        "loaded",
        r"1 lone surrogate code points replaced with U\+FFFD",
    )
    put(
        "text/one-huge-line.txt",
        "word " * (MAX_FILE_BYTES // 5 + 1000),
        "too_large",
        r"file is [\d,]+ bytes, over max_file_bytes=2,097,152",
    )
    put(
        "text/invalid-utf8.txt",
        b"Purchases over \xff\xfe$25,000 need approval from the caf\xe9 manager.\n",
        "loaded",
        r"not valid UTF-8: 3 undecodable bytes replaced with U\+FFFD",
    )
    put(
        "text/invalid-utf8-binary.txt",
        bytes(range(0x80, 0x100)) * 40,
        "unsupported",
        r"binary content in a text file \(.*over binary_ratio=0\.1\)",
    )
    put("text/utf16-bom.txt", "Überschrift: UTF-16 text with a BOM.\n".encode("utf-16"), "loaded", r"decoded as UTF-16 \(BOM\)")
    put("text/utf16-bom.csv", "name,value\nalpha,Ünïcödé\n".encode("utf-16"), "loaded", r"decoded as UTF-16 \(BOM\)")
    put(
        "text/not-a-pdf.pdf",
        "Hello, I am plain text wearing a .pdf name.\n",
        "error",
        r"not a PDF: no %PDF- header in the first 1 KiB \(starts with b'Hello, I am '\)",
    )
    put("text/not-a-docx.docx", "plain text named .docx\n", "error", r"not a zip archive \(BadZipFile: .*")
    put("text/deep-nesting.html", "<div>" * 100_000 + "deep text" + "</div>" * 100_000, "loaded", r"")
    put("text/deep-skip.html", "<noscript>" * 50_000 + "hidden" + "</noscript>" * 50_000 + "<p>after the noscripts</p>", "loaded", r"")
    put("text/deep-tables.html", "<table><tr><td>" * 5_000 + "cell" + "</td></tr></table>" * 5_000, "loaded", r"")
    put("text/huge-cell.csv", 'name,value\nalpha,"' + "x" * 300_000 + '"\n', "loaded", r"")
    put("text/long-line-under-limit.txt", "word " * 400_000, "loaded", r"")  # 2,000,000 bytes, one line
    put("text/script.html", "<p>Hi <script>alert(1)</script><img src=x onerror=alert(1)> there</p>", "loaded", r"")

    # a 0-byte file of every supported extension: each judged by its own format
    for ext in ["txt", "md", "html", "csv", "json", "jsonl"]:
        put(f"zero/empty.{ext}", b"", "empty", r"file is 0 bytes")
    put("zero/empty.pdf", b"", "error", r"not a PDF: file is 0 bytes")
    for ext in ["docx", "xlsx", "pptx"]:
        put(f"zero/empty.{ext}", b"", "error", r"not a zip archive \(file is 0 bytes\)")

    # file names with newlines, non-ASCII, and bytes that are not UTF-8
    put("names/line\nbreak.txt", "A file whose name holds a newline.\n", "loaded", r"")
    put("names/ünïcödé ✓ 文書.md", "# Non-ASCII name\n\nThis file has a non-ASCII name.\n", "loaded", r"")
    put("names/a\nb.txt", "Same bytes under two names.\n", "loaded", r"")
    put("names/a.txt", "Same bytes under two names.\n", "duplicate", r"same bytes as names/a\\nb\.txt")
    bad_name = os.fsdecode(b"names/bad-\xff-name.txt")
    (root / bad_name).write_bytes(b"A file whose name is not UTF-8.\n")
    exp["names/bad-\\xff-name.txt"] = (
        "error",
        re.escape("file name is not valid UTF-8 (shown with \\x escapes): not read; rename the file"),
    )

    # things that are not readable regular files, as root too
    special = root / "special"
    special.mkdir()
    os.mkfifo(special / "fifo.txt")  # opening it for reading would block forever
    exp["special/fifo.txt"] = ("error", r"not a regular file \(a FIFO\)")
    os.symlink(special / "missing-target.txt", special / "dangling.txt")
    exp["special/dangling.txt"] = ("error", r"cannot read: broken symbolic link \(FileNotFoundError: No such file or directory\)")
    os.symlink(special / "loop-b.txt", special / "loop-a.txt")
    os.symlink(special / "loop-a.txt", special / "loop-b.txt")
    exp["special/loop-a.txt"] = ("error", r"cannot read: broken symbolic link \(OSError: Too many levels of symbolic links\)")
    exp["special/loop-b.txt"] = exp["special/loop-a.txt"]
    os.symlink(special / "self.txt", special / "self.txt")
    exp["special/self.txt"] = exp["special/loop-a.txt"]
    locked = special / "chmod-000.txt"
    locked.write_text("Permissions say nobody may read this file.\n", encoding="utf-8")
    locked.chmod(0)
    if os.access(locked, os.R_OK):  # root (CAP_DAC_OVERRIDE) reads it anyway: say so, honestly
        exp["special/chmod-000.txt"] = ("loaded", r"")
    else:
        exp["special/chmod-000.txt"] = ("error", r"cannot read: PermissionError: .*")
    (special / "dir.txt").mkdir()  # a folder named like a file: walked as a folder, holds one file
    put("special/dir.txt/inside.txt", "Inside a folder named dir.txt.\n", "loaded", r"")
    return exp


# --------------------------------------------------------------------------- the run, in a subprocess

ROOT = Path(__file__).resolve().parents[1]
STAGES_TO_RUN = [
    "corpus",
    "fragments",
    "affordances",
    "prototypes",
    "classes",
    "density",
    "proximity",
    "evidence",
    "graph",
    "trees",
    "simulation",
    "chunks",
    "evaluation",
]
RUNNER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from qspace_frames.pipeline import Workbench
    params, corpus, reports, root, stages = sys.argv[1:6]
    wb = Workbench(params_file=params, corpus_arg=corpus, run_name="hostile", project_root=Path(root),
                   reports_dir=Path(reports), workers=2)
    done = {}
    for stage in stages.split(","):
        art = wb.artifact(stage)
        done[stage] = str(art.path)
        print("done", stage, flush=True)
    # Peak memory, measured here: this process's own high-water mark (VmHWM: its address space
    # since exec) and, through RUSAGE_CHILDREN, the loader pool processes it forked and waited for.
    # Measured from the test process instead, ru_maxrss would inherit pytest's own peak: a child
    # spawned by vfork or posix_spawn starts from its parent's high-water mark.
    import resource
    hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    pool = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    Path(reports, "peak.json").write_text(json.dumps({"self_kib": hwm, "pool_kib": pool}))
    Path(reports, "done.json").write_text(json.dumps(done))
""")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    corpus = tmp / "corpus"
    listener = socket.socket()  # the external entities point here: any fetch would connect
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    expected = make_hostile_corpus(corpus, f"http://127.0.0.1:{listener.getsockname()[1]}/evil.dtd")
    params = tmp / "params.yaml"
    params.write_text(f"store:\n  root: {tmp / 'store'}\ncorpus:\n  max_file_bytes: {MAX_FILE_BYTES}\n", encoding="utf-8")
    out, err = open(tmp / "stdout", "wb"), open(tmp / "stderr", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(params), str(corpus), str(tmp / "reports"), str(ROOT), ",".join(STAGES_TO_RUN)],
        stdout=out,
        stderr=err,
        cwd=tmp,
    )
    try:
        proc.wait(timeout=240)  # a hang is a failure, not a stuck test session
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"the pipeline hung on the hostile corpus: {(tmp / 'stdout').read_text()}")
    finally:
        out.close()
        err.close()
    stderr = (tmp / "stderr").read_text(errors="replace")
    assert proc.returncode == 0, f"pipeline failed on the hostile corpus (exit {proc.returncode}):\n{stderr[-3000:]}"
    done = json.loads((tmp / "reports" / "done.json").read_text())
    peak = max(json.loads((tmp / "reports" / "peak.json").read_text()).values()) * 1024
    try:
        listener.accept()
        fetched = True
    except BlockingIOError:
        fetched = False
    finally:
        listener.close()
    return {
        "fetched": fetched,
        "expected": expected,
        "peak": peak,
        "done": done,
        "stderr": stderr,
        "inventory": pl.read_parquet(Path(done["corpus"]) / "inventory.parquet"),
        "pages": pl.read_parquet(Path(done["corpus"]) / "pages.parquet"),
        "fragments": pl.read_parquet(Path(done["fragments"]) / "fragments.parquet"),
    }


def test_every_hostile_file_is_in_the_inventory_with_the_expected_status(hostile_run):
    inv, expected = hostile_run["inventory"], hostile_run["expected"]
    rows = {r["path"]: r for r in inv.iter_rows(named=True)}
    assert sorted(rows) == sorted(expected), sorted(set(rows) ^ set(expected))
    wrong = []
    for path, (status, reason) in sorted(expected.items()):
        r = rows[path]
        got = r["error"] or ""
        if r["load_status"] != status or not re.fullmatch(reason, got):
            wrong.append(f"{path!r}: expected {status} /{reason}/, got {r['load_status']} {got!r}")
        # every file has a status, and every file not loaded has a one-line reason
        assert r["load_status"], path
        if r["load_status"] != "loaded":
            assert got.strip() and "\n" not in got and "\r" not in got, (path, got)
    assert not wrong, "\n".join(wrong)


def test_the_whole_pipeline_completes_within_memory(hostile_run):
    assert list(hostile_run["done"]) == STAGES_TO_RUN
    print(f"peak RSS of the hostile run: {hostile_run['peak'] / 2**20:,.0f} MiB")
    assert hostile_run["peak"] < MAX_RSS, f"peak RSS {hostile_run['peak'] / 2**20:,.0f} MiB"
    assert "Traceback" not in hostile_run["stderr"], hostile_run["stderr"][-3000:]


def test_nothing_is_fetched_or_expanded_from_xml(hostile_run):
    assert not hostile_run["fetched"], "an external entity was fetched over http"
    pages, fragments = hostile_run["pages"], hostile_run["fragments"]
    for frame in (pages, fragments):
        text = frame["text"]
        assert not text.str.contains(PASSWD_MARKER, literal=True).any()
        assert not text.str.contains("/bin/bash", literal=True).any()
        assert not text.str.contains(LAUGH, literal=True).any()
    inv = hostile_run["inventory"]
    grown = inv.filter(pl.col("n_chars") > 2 * pl.col("bytes") + 100)  # no text expanded beyond its file
    assert grown.height == 0, grown.select("path", "bytes", "n_chars")
    xml_docs = inv.filter(pl.col("path").str.starts_with("xml/"))
    assert not pages["doc_id"].is_in(xml_docs["doc_id"].to_list()).any()  # no hostile XML part loaded text


def test_loaded_hostile_text_is_what_the_files_hold(hostile_run):
    inv, pages = hostile_run["inventory"], hostile_run["pages"]

    def text_of(path: str) -> str:
        did = inv.filter(pl.col("path") == path)["doc_id"][0]
        return "\n\n".join(pages.filter(pl.col("doc_id") == did).sort("char_start")["text"].to_list())

    assert text_of("text/utf16-bom.txt") == "Überschrift: UTF-16 text with a BOM.\n"
    assert text_of("text/invalid-utf8.txt") == "Purchases over \ufffd\ufffd$25,000 need approval from the caf\ufffd manager.\n"
    assert text_of("text/lone-surrogate.json") == "a = x\ufffdy\nb = \U0001f600 paired is fine"
    assert text_of("text/script.html") == "Hi there"  # script dropped, the img carries no text
    assert text_of("pdf/control.pdf") == "cyclic page tree"
    assert text_of("text/deep-nesting.html") == "deep text"
    assert text_of("text/deep-skip.html") == "after the noscripts"
    assert text_of("text/deep-tables.html") == "Row 1: col1 = cell"
    assert text_of("text/huge-cell.csv") == "Row 1: name = alpha; value = " + "x" * 300_000
    assert text_of("names/line\nbreak.txt") == "A file whose name holds a newline.\n"
    dup = inv.filter(pl.col("path") == "names/a.txt").row(0, named=True)
    assert dup["duplicate_of"] == "names/a\nb.txt"  # the column keeps the exact path; the reason escapes it

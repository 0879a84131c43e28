"""Shareable reports: the dashboard, markdown reports and notebook HTML, opened in headless Chromium.

The browser runs with no network (every request it makes is recorded and must stay on file:// or
data:), and the pages must render every chart with no console error. A corpus whose text is
hostile HTML must give a dashboard where nothing runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from qspace_frames.pipeline import CONTRACTNLI, Workbench
from qspace_frames.report import dashboard as report
from qspace_frames.report.runner import run, to_html
from qspace_frames.runtime.paths import reports_root

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
HOSTILE = ["<script>alert('doc')</script>", "<img src=x onerror=alert('img')>", '<iframe src="https://example.com/"></iframe>']


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM.exists() and DRIVER.exists()):
        pytest.fail("chromium and chromium-driver are missing: `make test` installs them (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--allow-file-access-from-files",
        "--window-size=1400,1000",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def open_page(driver, path: Path) -> dict:
    """Load a page; return its console errors, the URLs it requested and how its images rendered."""
    driver.get_log("browser"), driver.get_log("performance")  # drop what earlier pages left
    driver.get(path.resolve().as_uri())
    images = driver.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0]);"
    )
    requests = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"]
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    alert = driver.execute_script("return window.__ran === true;")
    return {
        "images": images,
        "urls": urls,
        "errors": errors,
        "ran": alert,
        "scripts": driver.execute_script("return document.scripts.length;"),
        "text": driver.execute_script("return document.body.innerText;"),
    }


def off_machine(urls: list[str]) -> list[str]:
    return [u for u in urls if not u.startswith(("file://", "data:", "about:"))]


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory, root):
    """The sample corpus run end to end by the runner (papermill), into its own store."""
    d = tmp_path_factory.mktemp("report")
    overlay = d / "params.yaml"
    overlay.write_text(f"store:\n  root: {d / 'store'}\n")
    name = "test-report"
    shutil.rmtree(reports_root(root) / name, ignore_errors=True)
    assert run(root, str(overlay), name, "sample_corpus", contractnli=CONTRACTNLI) == 0  # as the stored notebooks
    yield reports_root(root) / name
    shutil.rmtree(reports_root(root) / name, ignore_errors=True)


def test_sample_run_report_files(sample_run):
    for name in (
        "dashboard.html",
        "index.html",
        "final_report.md",
        "run_summary.md",
        "run_metadata.json",
        "corpus_discovery.md",
        "sample_retrieval_traces.md",
    ):
        assert (sample_run / name).is_file(), name
    meta = json.loads((sample_run / "run_metadata.json").read_text())
    assert set(meta["artifacts"]) >= {"corpus", "fragments", "affordances", "trees", "simulation", "evaluation"}
    assert meta["counts"]["documents"] == 10 and meta["counts"]["fragments"] > 100
    assert set(meta["wall_time"]["notebooks"]) == {p.stem for p in sample_run.glob("[0-9][0-9]_*.ipynb")}
    assert meta["versions"]["polars"] and meta["params_hash"]
    final = (sample_run / "final_report.md").read_text()
    for section in (
        "Corpus",
        "Fragmentation",
        "affordances",
        "prototypes",
        "classes",
        "Density and proximity",
        "co-demand",
        "Graph",
        "trees",
        "Traversal",
        "Evaluation",
        "Limitations",
        "Next steps",
    ):
        assert section in final, section
    summary = (sample_run / "run_summary.md").read_text()
    assert "vs BM25 over 512-token chunks" in summary and "| qspace |" in summary
    # the tree ablation, in words and as a table, in the final report and on the dashboard
    dashboard = (sample_run / "dashboard.html").read_text()
    for page in (final, dashboard):
        assert "Do the trees matter?" in page and "whichever tree is used" in page and "class_objective_tree" in page


def shown(nb_path: Path) -> list[list[str]]:
    """What each code cell of a notebook shows (text, tables, charts), but the parameters papermill injects."""
    cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
    return [
        [
            "".join(o.get("text", "")) + "".join(v if isinstance(v, str) else "".join(v) for v in o.get("data", {}).values())
            for o in c["outputs"]
        ]
        for c in cells
        if c["cell_type"] == "code" and "injected-parameters" not in c["metadata"].get("tags", [])
    ]


def test_a_run_shows_what_the_stored_notebooks_show(sample_run, root):
    """The runner executes a run's notebooks in one kernel, reset before each: every notebook must
    show exactly what it shows executed alone in a fresh kernel (the stored notebooks, which nbval
    re-executes)."""
    stored = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert len(stored) == 9
    for nb in stored:
        assert shown(sample_run / nb.name) == shown(nb), nb.name


def test_index_and_dashboard_render_offline_with_every_chart(browser, sample_run):
    dash = open_page(browser, sample_run / "dashboard.html")
    charts = sorted(p.name for p in (sample_run / "charts").glob("*.svg"))
    assert len(charts) >= 15
    shown = {Path(src).name for src, ok in dash["images"]}
    assert shown == set(charts)  # every chart of the run is on the dashboard ...
    assert all(ok for _, ok in dash["images"]), [s for s, ok in dash["images"] if not ok]  # ... and rendered
    assert dash["errors"] == [] and off_machine(dash["urls"]) == []
    assert "Qspace" in dash["text"] or "qspace" in dash["text"]

    index = open_page(browser, sample_run / "index.html")
    assert index["errors"] == [] and off_machine(index["urls"]) == []
    pages = sorted(sample_run.glob("[0-9][0-9]_*.html"))
    assert len(pages) == 9
    for page in pages:  # every executed notebook, as exported: its charts render, nothing leaves the machine
        got = open_page(browser, page)
        assert got["errors"] == [], (page.name, got["errors"])
        assert off_machine(got["urls"]) == [], (page.name, off_machine(got["urls"]))
        assert all(ok for _, ok in got["images"]), page.name
    assert sum(len(open_page(browser, p)["images"]) for p in pages[:3]) >= 3


def test_report_command_rebuilds_without_recomputing(sample_run, root):
    """`qspace report` rebuilds the report and rewrites the exports and charts from the stored
    artifacts, with the functions the notebooks called: the same bytes, and no stage runs."""
    from qspace_frames.report.charts import RUN_CHARTS

    (sample_run / "dashboard.html").unlink()
    before = (sample_run / "stage_log.jsonl").read_text()
    drawn = {name: (sample_run / "charts" / f"{name}.svg").read_bytes() for name in RUN_CHARTS}  # by the notebooks
    exported = {
        f: (sample_run / f).read_bytes() for f in ("inventory.csv", "fragments.jsonl", "retrieval_trees.jsonl", "evaluation/per_query.csv")
    }
    for f in [*(sample_run / "charts" / f"{name}.svg" for name in RUN_CHARTS), *(sample_run / f for f in exported)]:
        f.unlink()
    out = subprocess.run(
        [sys.executable, "-m", "qspace_frames.cli", "report", "--run", sample_run.name], capture_output=True, text=True, cwd=root
    )
    assert out.returncode == 0, out.stderr
    assert (sample_run / "dashboard.html").is_file() and "Report rebuilt" in out.stdout
    assert (sample_run / "stage_log.jsonl").read_text() == before  # no stage ran
    assert {name: (sample_run / "charts" / f"{name}.svg").read_bytes() for name in RUN_CHARTS} == drawn
    assert {f: (sample_run / f).read_bytes() for f in exported} == exported
    missing = subprocess.run(
        [sys.executable, "-m", "qspace_frames.cli", "report", "--run", "no-such-run"], capture_output=True, text=True, cwd=root
    )
    assert missing.returncode == 2 and "no finished run named 'no-such-run'" in missing.stderr


def test_hostile_document_text_never_runs(browser, tmp_path, root):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    body = "\n\n".join(f"Purchases over $5,000 require approval from the {h} Finance Director." for h in HOSTILE)
    (corpus / "hostile.md").write_text("# Approvals <script>window.__ran = true</script>\n\n" + body + "\n", encoding="utf-8")
    (corpus / "<img src=x onerror=window.__ran=true>.txt").write_text(
        "Invoices over $10,000 must be approved by the Controller. <b onmouseover=alert(1)>bold</b>\n", encoding="utf-8"
    )
    (tmp_path / "p.yaml").write_text(f"store:\n  root: {tmp_path / 'store'}\n")
    wb = Workbench(
        params_file=str(tmp_path / "p.yaml"),
        corpus_arg=str(corpus),
        run_name="hostile",
        project_root=root,
        reports_dir=tmp_path / "reports",
    )
    for stage in ("simulation", "evaluation", "graph"):
        wb.artifact(stage)
    report.build(wb.run_dir, root)
    page = wb.run_dir / "dashboard.html"
    html_text = page.read_text()
    assert "<script" not in html_text.lower() and "<img src=x" not in html_text and "<iframe" not in html_text
    got = open_page(browser, page)
    assert got["scripts"] == 0 and not got["ran"] and off_machine(got["urls"]) == []
    assert "<img src=x onerror=window.__ran=true>.txt" in got["text"]  # the hostile file name is shown as text

    # notebook outputs: a table and printed text carrying the text arrive escaped; raw HTML that an
    # output might still carry is inert under the exported page's policy
    import polars as pl

    table = pl.DataFrame({"span": HOSTILE})._repr_html_()
    nb = new_notebook(
        cells=[
            new_code_cell(
                "x",
                outputs=[
                    new_output("execute_result", data={"text/html": table, "text/plain": "x"}, execution_count=1),
                    new_output("stream", name="stdout", text="\n".join(HOSTILE) + "<script>window.__ran = true</script>\n"),
                    new_output(
                        "display_data",
                        data={"text/html": "<script>window.__ran = true</script><img src=x onerror=window.__ran=true>", "text/plain": "x"},
                    ),
                ],
            )
        ]
    )
    ipynb = tmp_path / "hostile.ipynb"
    nbformat.write(nb, ipynb)
    exported = to_html(ipynb)
    got = open_page(browser, exported)
    assert not got["ran"] and off_machine(got["urls"]) == []
    assert all(h in got["text"] for h in HOSTILE)  # the table and the printed text show it as text


def test_report_pages_are_nbconverts_pages(root):
    """The page exporter skips HTMLExporter's BeautifulSoup pass and adds its attributes itself:
    the same document, parsed, for the stored notebooks and for images with and without alt text."""
    from bs4 import BeautifulSoup
    from nbconvert import HTMLExporter
    from nbformat.v4 import new_markdown_cell, new_notebook

    from qspace_frames.report.runner import html_exporter

    theirs = HTMLExporter(template_name="offline", extra_template_basedirs=[str(root / "qspace_frames" / "report" / "templates")])
    images = new_notebook(cells=[new_markdown_cell('<img src="b.png"> <img src="a.png" alt="kept">')])
    stored = [nbformat.read(p, as_version=4) for p in sorted((root / "notebooks").glob("0*.ipynb"))]
    for nb in [images, *stored]:
        mine, _ = html_exporter().from_notebook_node(nb)
        want, _ = theirs.from_notebook_node(nb)
        assert str(BeautifulSoup(mine, "html.parser")) == str(BeautifulSoup(want, "html.parser"))
        assert mine.count('tabindex="0"') == want.count('tabindex="0"') > 0
    mine, _ = html_exporter().from_notebook_node(images)
    assert mine.count('alt="No description has been provided for this image"') == 1 and 'alt="kept"' in mine

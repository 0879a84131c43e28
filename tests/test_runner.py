"""The papermill runner and the command line."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from qspace_frames.cli import main
from qspace_frames.report.kernels import WarmKernel, kernel_name
from qspace_frames.report.runner import run
from qspace_frames.runtime.paths import reports_root


def mini_project(tmp_path, root, cells):
    (tmp_path / "pyproject.toml").write_text("")
    shutil.copytree(root / "params", tmp_path / "params")
    (tmp_path / "notebooks").mkdir()
    p = new_code_cell("params_file = ''\nrun_name = ''\ncorpus = ''\nnotebook = ''")
    p.metadata["tags"] = ["parameters"]
    for i, body in enumerate(cells, 1):
        nbformat.write(new_notebook(cells=[p, *[new_code_cell(b) for b in body]]), tmp_path / "notebooks" / f"0{i}_step.ipynb")
    return tmp_path


@pytest.fixture(autouse=True)
def project_reports(monkeypatch):
    """Runs in temporary projects (`mini_project`) keep their own reports/, already scratch: the
    suite's redirection of runs and store (conftest) does not apply to them."""
    monkeypatch.delenv("QSPACE_REPORTS", raising=False)
    monkeypatch.delenv("QSPACE_STORE", raising=False)


def test_failing_notebook_names_notebook_and_cell(tmp_path, root):
    proj = mini_project(tmp_path, root, [["x = 1"], ["x = 1", "y = 2\nraise ValueError('stage exploded')"], ["z = 3"]])
    out = io.StringIO()
    code = run(proj, "params/default.yaml", "bad", None, out=out)
    text = out.getvalue()
    assert code == 1
    assert "01_step: rendered" in text and "02_step: rendered" not in text and "03_step" not in text  # the report's notebook never starts
    assert "FAILED: notebook 02_step.ipynb, cell [4] 'y = 2': ValueError: stage exploded" in text


def test_a_stopped_run_still_reports_what_completed(tmp_path, root):
    proj = mini_project(tmp_path, root, [["print('one')"], ["print('two')"], ["print('three')"]])
    assert run(proj, "params/default.yaml", "stop", None, out=io.StringIO()) == 0  # a complete earlier run
    nb = nbformat.read(proj / "notebooks" / "02_step.ipynb", as_version=4)
    nb.cells[1].source = "raise ValueError('stage exploded')"
    nbformat.write(nb, proj / "notebooks" / "02_step.ipynb")
    out = io.StringIO()
    assert run(proj, "params/default.yaml", "stop", None, out=out) == 1
    run_dir = proj / "reports" / "stop"
    assert "FAILED: notebook 02_step.ipynb, cell [3] \"raise ValueError('stage exploded')\": ValueError: stage exploded" in out.getvalue()
    assert "Partial report: reports/stop/index.html" in out.getvalue()
    index = (run_dir / "index.html").read_text()
    assert "This run stopped in 02_step" in index and "ValueError: stage exploded" in index
    assert 'href="01_step.html"' in index and 'href="02_step.html"' in index  # what completed, then the failed copy
    assert "stage exploded" in (run_dir / "02_step.html").read_text()  # its traceback, exported
    assert not (run_dir / "03_step.ipynb").exists() and "03_step" not in index  # no copy left from the earlier run


def test_notebooks_of_a_run_share_one_kernel_yet_start_fresh(tmp_path, root):
    """Notebooks that share a kernel, reset before each: no name, display setting or cell number
    leaks from one notebook into the next."""
    proj = mini_project(
        tmp_path,
        root,
        [
            ["import polars as pl\npl.Config.set_tbl_rows(3)\nleak = 1", "import os\nos.getpid()"],
            ["import os, polars as pl\nprint('leak' in dir(), pl.Config.state(if_set=True).get('POLARS_FMT_MAX_ROWS'))", "os.getpid()"],
        ],
    )
    kernel = WarmKernel(kernel_name(), proj)
    try:
        assert run(proj, "params/default.yaml", "warm", None, out=io.StringIO(), kernels=[kernel]) == 0
    finally:
        kernel.close()
    first, second = (nbformat.read(proj / "reports" / "warm" / f"0{i}_step.ipynb", as_version=4) for i in (1, 2))
    assert second.cells[-2].outputs[0]["text"] == "False None\n"
    assert first.cells[-1].outputs[0]["data"]["text/plain"] == second.cells[-1].outputs[0]["data"]["text/plain"]  # one process
    assert [c.execution_count for c in second.cells if c.cell_type == "code"] == [1, 2, 3, 4]


def test_a_spare_kernel_joins_once_the_computation_is_done_if_enough_notebooks_wait(tmp_path, root, monkeypatch):
    """One kernel a core fewer while the library computes; the spare one starts when it is done
    (here at once: a project without documents), if three notebooks besides the report still wait.
    Each notebook prints its kernel's process id."""
    from qspace_frames.report import runner

    monkeypatch.setattr(runner, "KERNELS", 2)
    here = Path.cwd()
    for notebooks, kernels in ((5, 2), (3, 1)):
        (tmp_path / str(notebooks)).mkdir()
        proj = mini_project(tmp_path / str(notebooks), root, [["import os, time\ntime.sleep(0.5)\nprint(os.getpid())"]] * notebooks)
        assert run(proj, "params/default.yaml", "spare", None, out=io.StringIO()) == 0
        pids = {nbformat.read(p, as_version=4).cells[-1].outputs[0]["text"] for p in (proj / "reports" / "spare").glob("0*.ipynb")}
        assert len(pids) == kernels
        # notebooks rendered side by side leave the process where it was (papermill's chdir is global)
        assert Path.cwd() == here


def test_successful_run_writes_html_and_index(tmp_path, root):
    proj = mini_project(tmp_path, root, [["print('hello')"]])
    out = io.StringIO()
    assert run(proj, "params/default.yaml", "ok", None, out=out) == 0
    run_dir = proj / "reports" / "ok"
    assert (run_dir / "01_step.ipynb").is_file() and (run_dir / "01_step.html").is_file()
    index = (run_dir / "index.html").read_text()
    assert 'href="01_step.html"' in index
    nb = nbformat.read(run_dir / "01_step.ipynb", as_version=4)
    assert "papermill" not in nb.metadata  # no timestamps in the stored report
    assert "Report: reports/ok/index.html" in out.getvalue()


def test_bad_params_fail_before_any_work(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("fragments:\n  max_chars: -1\n")
    assert main(["run", "--params", str(bad), "--corpus", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: fragments.max_chars" in err and "greater than or equal to 50" in err


@pytest.mark.parametrize("name", ["../../outside", "", "a/b", ".hidden", "store", "x" * 101])
def test_run_and_ask_refuse_a_name_that_is_not_one_folder_of_reports(name, capsys):
    """A run name names reports/NAME/: one that climbs out of it, is empty (the reports root itself),
    nests, hides or takes the store's folder is refused before anything is written."""
    for argv in (["run", "--name", name], ["ask", "--run", name, "anything"], ["report", "--run", name]):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        assert ("is reserved" if name == "store" else "is not a run name") in capsys.readouterr().err


def test_only_names_notebooks_that_exist(tmp_path, root, monkeypatch, capsys):
    monkeypatch.chdir(root)
    assert main(["run", "--corpus", str(tmp_path), "--only", "01", "99", "foo"]) == 2
    err = capsys.readouterr().err
    assert "no notebook '99', 'foo'" in err and "01_corpus" in err
    assert main(["notebooks", "--only", "nope"]) == 2


def test_help_documents_run():
    out = subprocess.run([sys.executable, "-m", "qspace_frames.cli", "run", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for flag in ("--corpus", "--params", "--name"):
        assert flag in out.stdout


def test_second_run_keeps_unchanged_notebooks_and_reruns_edited_ones(tmp_path, root):
    proj = mini_project(tmp_path, root, [["print('one')"], ["print('two')"]])
    assert run(proj, "params/default.yaml", "again", None, out=io.StringIO()) == 0
    out = io.StringIO()
    assert run(proj, "params/default.yaml", "again", None, out=out) == 0
    assert out.getvalue().count("unchanged (same notebook, inputs, parameters and code)") == 2
    nb = nbformat.read(proj / "notebooks" / "01_step.ipynb", as_version=4)
    nb.cells[1].source = "print('one, edited')"
    nbformat.write(nb, proj / "notebooks" / "01_step.ipynb")
    out = io.StringIO()
    assert run(proj, "params/default.yaml", "again", None, out=out) == 0
    # the edited notebook and every one after it run again
    assert out.getvalue().count("unchanged") == 0
    assert "one, edited" in (proj / "reports" / "again" / "01_step.ipynb").read_text()


def test_eval_command_writes_metrics_json(root, tmp_path, monkeypatch):
    monkeypatch.setenv("QSPACE_REPORTS", str(tmp_path / "reports"))  # a run of this project: not into its reports/
    monkeypatch.setenv("QSPACE_STORE", str(tmp_path / "store"))
    """`qspace eval` on the sample corpus with the example gold file: every strategy, every budget."""
    import json

    name = "test-eval-example"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "qspace_frames.cli",
            "eval",
            "--corpus",
            "sample_corpus",
            "--gold",
            "tests/data/gold_example.jsonl",
            "--name",
            name,
        ],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    metrics = json.loads((reports_root(root) / name / "evaluation" / "metrics.json").read_text())
    assert set(metrics) == {"bm25_chunks", "source_order", "heading_tree", "qspace", "ask"}
    for strategy, m in metrics.items():
        assert m["n_queries"] == 5
        recalls = [m[f"evidence_recall@{b}"] for b in (256, 512, 1024, 2048)]
        assert recalls == sorted(recalls) and 0 <= recalls[0] and recalls[-1] <= 1
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "qspace_frames.cli",
            "eval",
            "--corpus",
            "sample_corpus",
            "--gold",
            str(tmp_path / "missing.jsonl"),
            "--name",
            name,
        ],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert bad.returncode == 2 and "missing.jsonl" in bad.stderr
    # found by a helper: an empty gold file, or one whose every question names a document the
    # corpus lacks, gave an empty metrics.json and exit 0 with nothing said
    empty, unknown = tmp_path / "empty.jsonl", tmp_path / "unknown.jsonl"
    empty.write_text("\n")
    unknown.write_text('{"id": "q1", "question": "Who approves?", "document": "missing.md", "gold_spans": [[0, 10]]}\n')
    argv = [sys.executable, "-m", "qspace_frames.cli", "eval", "--corpus", "sample_corpus", "--name", name, "--gold"]
    got = subprocess.run([*argv, str(empty)], capture_output=True, text=True, cwd=root)
    assert got.returncode == 2 and got.stderr.strip() == f"error: {empty}: no gold question (every line is blank)", got.stderr
    got = subprocess.run([*argv, str(unknown)], capture_output=True, text=True, cwd=root)
    said = "note: none of the 1 gold questions could be evaluated (1 unknown_document); notebook 07 lists them"
    assert got.returncode == 0 and said in got.stderr, got.stderr


def writing_project(tmp_path, root):
    """Two notebooks that print a random number and write it into the run folder: a copy of a
    rendering shows the same numbers, an execution new ones."""
    body = (
        "import pathlib, random\n"
        "value = random.random()\n"
        "out = pathlib.Path('reports') / run_name / 'drawn' / f'{notebook}.txt'\n"
        "out.parent.mkdir(parents=True, exist_ok=True)\n"
        "out.write_text(str(value))\n"
        "print(value)"
    )
    return mini_project(tmp_path, root, [[body], [body]])


def drawn(proj, run_name: str) -> list[str]:
    run_dir = proj / "reports" / run_name
    return [(run_dir / "drawn" / f"0{i}_step.txt").read_text() for i in (1, 2)]


def test_a_new_run_name_copies_the_rendering_instead_of_executing_it(tmp_path, root):
    proj = writing_project(tmp_path, root)
    assert run(proj, "params/default.yaml", "first", None, out=io.StringIO()) == 0
    (proj / "reports" / "second" / "drawn").mkdir(parents=True)
    (proj / "reports" / "second" / "drawn" / "left-over.txt").write_text("from an earlier rendering")
    out = io.StringIO()
    assert run(proj, "params/default.yaml", "second", None, out=out) == 0
    assert out.getvalue().count("the same rendering as an earlier run") == 2 and "rendered in" not in out.getvalue()
    assert drawn(proj, "second") == drawn(proj, "first")  # copied, not executed again
    assert not (proj / "reports" / "second" / "drawn" / "left-over.txt").exists()  # the folder holds this rendering only
    first, second = (proj / "reports" / name for name in ("first", "second"))
    for i in (1, 2):
        a, b = ((d / f"0{i}_step.ipynb").read_text() for d in (first, second))
        assert 'run_name = \\"second\\"' in b and b == a.replace('run_name = \\"first\\"', 'run_name = \\"second\\"')
        assert "second" in (second / f"0{i}_step.html").read_text()
    # an edited notebook is executed again under any name; the one before it is still copied
    nb = nbformat.read(proj / "notebooks" / "02_step.ipynb", as_version=4)
    nb.cells[1].source += "\nprint('edited')"
    nbformat.write(nb, proj / "notebooks" / "02_step.ipynb")
    out = io.StringIO()
    assert run(proj, "params/default.yaml", "third", None, out=out) == 0
    assert "02_step: rendered" in out.getvalue() and "edited" in (proj / "reports" / "third" / "02_step.ipynb").read_text()


def test_an_executed_notebook_depends_only_on_its_inputs(tmp_path, root):
    """Rendered twice from scratch (no rendering kept), a notebook is the same bytes but for its
    run's name: papermill's timestamps and the random id of the cell it injects are scrubbed."""
    proj = mini_project(tmp_path, root, [["print('same')"]])
    assert run(proj, "params/default.yaml", "one", None, out=io.StringIO()) == 0
    shutil.rmtree(proj / "reports" / "store" / "renders")
    assert run(proj, "params/default.yaml", "two", None, out=io.StringIO()) == 0
    one, two = ((proj / "reports" / n / "01_step.ipynb").read_text() for n in ("one", "two"))
    assert two == one.replace('run_name = \\"one\\"', 'run_name = \\"two\\"') and '"id": "injected-parameters"' in one


def test_a_kept_rendering_shares_the_files_bytes_and_a_damaged_one_is_rendered_again(tmp_path, root):
    proj = writing_project(tmp_path, root)
    assert run(proj, "params/default.yaml", "first", None, out=io.StringIO()) == 0
    (kept,) = (proj / "reports" / "store" / "renders").iterdir()
    written = proj / "reports" / "first" / "drawn" / "01_step.txt"
    assert (kept / "drawn" / "01_step.txt").stat().st_ino == written.stat().st_ino  # a hard link, not a second copy
    (kept / "drawn" / "02_step.txt").write_text("changed after it was kept")
    out = io.StringIO()
    assert run(proj, "params/default.yaml", "second", None, out=out) == 0
    assert "could not reuse the kept rendering (DamagedRendering" in out.getvalue() and "02_step: rendered" in out.getvalue()
    assert drawn(proj, "second") != drawn(proj, "first")
    assert drawn(proj, "second") == [(kept / "drawn" / f"0{i}_step.txt").read_text() for i in (1, 2)]  # kept anew
    for nb in kept.glob("notebooks/*.ipynb"):  # damaged in another way: still rendered, never a crash
        nb.write_text("not a notebook")
    shutil.rmtree(proj / "reports" / "third", ignore_errors=True)
    (kept / "drawn" / "02_step.txt").unlink()
    out = io.StringIO()
    assert run(proj, "params/default.yaml", "third", None, out=out) == 0 and "could not reuse the kept rendering" in out.getvalue()


def test_a_notebook_waits_for_the_stages_it_reads_and_no_longer(root):
    from qspace_frames.report.runner import StagesDone, notebook_needs

    nbs = {p.stem: p for p in (root / "notebooks").glob("0*.ipynb")}
    assert notebook_needs(nbs["01_corpus"]) == ("corpus",)
    assert notebook_needs(nbs["03_affordances"]) == ("corpus", "structure", "fragments", "affordances")
    assert notebook_needs(nbs["06_trees"])[-1] == "trees" and "evaluation" not in notebook_needs(nbs["06_trees"])
    assert notebook_needs(nbs["08_ask"])[-1] == "trees"  # ask reads the trees, not the evaluation
    assert notebook_needs(nbs["07_evaluation"]) is None and notebook_needs(nbs["09_report"]) is None  # the whole computation
    gate, seen = StagesDone(), []
    waiter = threading.Thread(target=lambda: seen.append(gate.wait(("corpus", "fragments"))))
    waiter.start()
    gate.add("corpus")
    waiter.join(0.2)
    assert waiter.is_alive()  # still waiting for fragments
    gate.add("fragments")
    waiter.join(5)
    assert seen == [True]
    gate.finish("stage trees: ValueError: boom")
    assert gate.wait(("corpus",)) is False and gate.wait(None) is False  # the run stopped: nothing more starts


def test_a_small_corpus_is_computed_without_a_pool_and_a_larger_one_with_the_cores(tmp_path, root, monkeypatch):
    from qspace_frames.report.runner import workbench
    from qspace_frames.runtime.workers import POOL_MIN_BYTES

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert workbench(root, "params/default.yaml", "t", str(root / "sample_corpus"), None).workers == 1  # 0.1 MB
    big = tmp_path / "big"
    big.mkdir()
    (big / "a.txt").write_text("Termination. Either party may end this agreement.\n" * (POOL_MIN_BYTES // 50 + 1))
    assert workbench(root, "params/default.yaml", "t", str(big), None).workers == 2
    assert workbench(root, "params/default.yaml", "t", str(tmp_path / "missing"), None) is None


def test_sweep_checks_its_gold_file_before_any_work(tmp_path, capsys):
    bad = tmp_path / "gold.jsonl"
    bad.write_text('{"question": "What?"}\n')
    assert main(["sweep", "params/weights/default.yaml", "--gold", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "gold.jsonl:1" in err and "id" in err


def test_sweep_checks_its_corpus_and_weight_file_names_before_any_work(tmp_path, capsys):
    """Found by a helper: a missing --corpus failed in notebook 06 under a rewritten path, and two
    weight files of one name ran into one run folder, the first's results lost."""
    assert main(["sweep", "params/weights/default.yaml", "--corpus", str(tmp_path / "nope")]) == 2
    assert "corpus folder not found" in capsys.readouterr().err
    (tmp_path / "w1").mkdir(), (tmp_path / "w2").mkdir()
    for folder, lam in (("w1", 0.3), ("w2", 0.9)):
        (tmp_path / folder / "a.yaml").write_text(f"trees:\n  lam: {lam}\n")
    assert main(["sweep", str(tmp_path / "w1" / "a.yaml"), str(tmp_path / "w2" / "a.yaml")]) == 2
    assert capsys.readouterr().err.strip() == "error: weight files share a name (a): each names its run, rename one"


@pytest.mark.parametrize("record", ["not json", "[]", "{}", '{"artifacts": {"corpus": 5}}'])
def test_a_run_record_that_cannot_be_read_is_an_error_not_a_traceback(tmp_path, monkeypatch, capsys, record):
    """Found by a helper: a truncated or edited reports/RUN/artifacts.json gave tracebacks in ask,
    report and gc (with "{}", ask answered from another corpus). Each says which file and what to do;
    gc collects nothing, since the record cannot say what its run keeps."""
    monkeypatch.setenv("QSPACE_REPORTS", str(tmp_path / "reports"))
    run = tmp_path / "reports" / "bad"
    run.mkdir(parents=True)
    (run / "artifacts.json").write_text(record)
    said = f"{run / 'artifacts.json'}: not a run record ("
    for argv in (["ask", "--run", "bad", "What is the fee?"], ["report", "--run", "bad"], ["gc", "--dry-run"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert said in err and "run `qspace run --name bad` again" in err, (argv, err)


def test_a_command_started_outside_the_project_says_where_to_run_it(tmp_path):
    """Found by a helper: `qspace eval` started in another folder wrote its run under that folder,
    printed "Report: ..." and exited 0 with no metrics written."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Purchases over $25,000 need the CFO's approval.\n")
    cli = subprocess.run(
        [sys.executable, "-m", "qspace_frames.cli", "run", "--corpus", "docs"], cwd=tmp_path, capture_output=True, text=True
    )
    assert cli.returncode == 2 and "is not in a qspace-frames project" in cli.stderr and "run qspace from the project folder" in cli.stderr
    assert not (tmp_path / "reports").exists()

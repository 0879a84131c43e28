"""Execute the pipeline notebooks in order with papermill and publish them as a report.

reports/<run>/ receives each executed notebook, its HTML, and index.html linking them. The
stage log each notebook appends to says which artifacts were reused and which computed.
"""

from __future__ import annotations

import html
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..ids import canonical_json, sha256_hex
from ..params import load_params
from ..runtime import workers
from ..runtime.paths import RUN_RECORD, reports_root, shown, store_root
from . import renders
from .kernels import KERNELS, WarmKernel, kernel_name, without_iri_grammar


def notebooks(root: Path) -> list[Path]:
    return sorted(p for p in (root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def named(path: Path, only: list[str] | None) -> bool:
    """Whether `only` (--only) takes this notebook: by its stem or its number, or when it is empty."""
    return not only or path.stem in only or path.stem[:2] in only


def unnamed(paths: list[Path], only: list[str] | None) -> list[str]:
    """The entries of `only` that name none of `paths`."""
    return [o for o in only or [] if not any(named(p, [o]) for p in paths)]


def scrub(nb) -> None:
    """Drop timing metadata (papermill's start/end times, execution timestamps) and the random id
    papermill gives the cell it injects, so that an executed notebook depends only on its inputs."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if "id" in cell and INJECTED in cell.metadata.get("tags", []):
            cell.id = INJECTED


INJECTED = "injected-parameters"  # papermill's tag of the cell holding a run's parameters


_exporter: list = []  # the run's one HTML exporter: its import and templates cost ~2 s once
_exporter_lock = threading.Lock()


def html_exporter():
    """The HTML exporter. Our template: the lab look without CDN scripts, under a policy that runs
    no script (tables and printed text arrive escaped; the policy covers raw HTML an output might
    still carry). A run warms it (import, templates compiled by one small page) while the library
    computes."""
    with _exporter_lock:
        if not _exporter:
            import nbformat

            from .page_exporter import PageExporter

            exporter = PageExporter(template_name="offline", extra_template_basedirs=[str(Path(__file__).parent / "templates")])
            exporter.from_notebook_node(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]))
            _exporter.append(exporter)
        return _exporter[0]


def to_html(ipynb: Path, nb=None) -> Path:
    """Scrub the executed notebook (read from `ipynb`, unless the caller holds it as `nb`), write
    it to `ipynb` and export it as HTML beside it."""
    import nbformat

    nb = nb if nb is not None else nbformat.read(ipynb, as_version=4)
    scrub(nb)
    nbformat.write(nb, ipynb)
    exporter = html_exporter()
    with _exporter_lock:  # one exporter, one page at a time
        body, _ = exporter.from_notebook_node(nb)
    out = ipynb.with_suffix(".html")
    out.write_text(body, encoding="utf-8")
    return out


def write_index(run_dir: Path, run_name: str, pages: list[Path], failed: Path | None = None, error: str = "") -> Path:
    """index.html over the executed notebooks; a run that stopped names the notebook and the error
    and links its executed copy (with the traceback) after the ones that completed."""

    def link(p: Path) -> str:
        html_page = p.with_suffix(".html")
        name = f'<a href="{html.escape(html_page.name)}">{html.escape(p.stem)}</a>' if html_page.is_file() else html.escape(p.stem)
        return f'<li>{name} (<a href="{html.escape(p.name)}">ipynb</a>)</li>'

    items = "\n".join(link(p) for p in pages)
    if failed is not None:
        items += f"\n<li><strong>failed here:</strong> {link(failed)[4:-5]}</li>"
    where = f"in {failed.stem}" if failed is not None else "before its notebooks"
    stopped = (
        (
            f"<p><strong>This run stopped {html.escape(where)}</strong>: {html.escape(error)}. "
            "The notebooks listed completed; a failed one is linked with its traceback.</p>"
        )
        if error
        else ""
    )
    extras = sorted(f.name for f in run_dir.iterdir() if f.suffix in {".csv", ".jsonl", ".json", ".md"})
    files = "\n".join(f'<li><a href="{html.escape(n)}">{html.escape(n)}</a></li>' for n in extras)
    dash = (
        '<p><a href="dashboard.html">Dashboard</a>: the run in numbers, the baseline comparison and every chart.</p>'
        if (run_dir / "dashboard.html").is_file()
        else ""
    )
    doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>qspace-frames run {html.escape(run_name)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;line-height:1.5}}</style></head>
<body><h1>qspace-frames run <code>{html.escape(run_name)}</code></h1>
{stopped}
{dash}
<h2>Notebooks, in run order</h2><ol>
{items}
</ol><h2>Exports</h2><ul>
{files}
</ul></body></html>
"""
    out = run_dir / "index.html"
    out.write_text(doc, encoding="utf-8")
    return out


def _record_time(run_dir: Path, notebook: str, seconds: float) -> None:
    """reports/<run>/timings.json: wall seconds of each notebook's last execution (run metadata,
    kept out of the notebooks themselves so their outputs stay byte-stable)."""
    path = run_dir / "timings.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data[notebook] = round(seconds, 1)
    _write_json(path, dict(sorted(data.items())))


def publish(root: Path, run_dir: Path, executed: list[Path] | None = None, failed: Path | None = None, error: str = "") -> Path:
    """The report of a finished run: dashboard and markdown reports rebuilt from its artifacts
    (when it has any), and index.html over its executed notebooks. Nothing is recomputed."""
    from . import dashboard as report

    if (run_dir / RUN_RECORD).is_file():
        report.build(run_dir, root)
    pages = executed if executed is not None else sorted(run_dir.glob("[0-9][0-9]_*.ipynb"))
    return write_index(run_dir, run_dir.name, pages, failed, error)


def _publish_stopped(root: Path, run_dir: Path, executed: list[Path], failed: Path | None, error: str, later: list[Path], out) -> None:
    """What a stopped run leaves: index.html and the dashboard over what completed, plus the failed
    notebook's executed copy (none when a stage failed); copies of notebooks this run did not
    complete, left by an earlier run, are removed, so the report shows this run only."""
    for nb in later:
        for f in (run_dir / nb.name, (run_dir / nb.name).with_suffix(".html")):
            f.unlink(missing_ok=True)
    try:
        failed = failed if failed is not None and failed.is_file() else None
        if failed is not None:
            to_html(failed)
        index = publish(root, run_dir, executed, failed, error)
        print(f"Partial report: {shown(index, root)}", file=out)
    except Exception as e:  # the report of a stopped run must not hide why it stopped
        print(f"  (no partial report: {type(e).__name__}: {e})", file=out)


def stage_log(run_dir: Path) -> list[dict]:
    path = run_dir / "stage_log.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []


def summarize_log(entries: list[dict], notebook: str | None = None) -> tuple[int, int]:
    """(reused, computed) distinct artifacts; one computed anywhere in the run counts as computed."""
    acts: dict[tuple, set] = {}
    for e in entries:
        if notebook is None or e.get("notebook") == notebook:
            acts.setdefault((e["stage"], e["artifact_id"]), set()).add(e["action"])
    computed = sum("computed" in a for a in acts.values())
    return len(acts) - computed, computed


def code_hash() -> str:
    """Hash of the package's source: a notebook run with other code is not the same run."""
    pkg = Path(__file__).parents[1]
    return sha256_hex("".join(f"{p.relative_to(pkg).as_posix()}\n{p.read_text(encoding='utf-8')}" for p in sorted(pkg.rglob("*.py"))))


def _notebook_key(nb: Path, base: str, previous: str) -> str:
    return sha256_hex(canonical_json({"notebook": sha256_hex(nb.read_bytes()), "base": base, "previous": previous}))


def _run_base(root: Path, params, values: dict, wb) -> str:
    """What every notebook of the run depends on: parameters, the corpus's bytes (`wb` is the
    run's Workbench, None without a corpus), the gold questions, the expert dictionary, the code,
    and the values given to the notebooks but the run's name, which no output shows (so a
    rendering is reused under any name: `renders`)."""
    from ..ask.dictionary import dictionary_fingerprint

    fp = wb.source("files")[0] if wb else None  # the corpus stage's own input id

    def fingerprint(f: str | None) -> str | None:
        path = Path(f) if f else None
        path = path if path is None or path.is_absolute() else root / path
        return sha256_hex(path.read_bytes()) if path is not None and path.is_file() else None

    gold_fp = fingerprint(values["gold"])
    dictionary = dictionary_fingerprint(root / "params" / "dictionary")  # notebooks 07 and 08 answer with it
    return sha256_hex(
        canonical_json(
            {
                "params": params.hash(),
                "corpus": fp,
                "gold": gold_fp,
                "dictionary": dictionary,
                "code": code_hash(),
                "values": {k: v for k, v in values.items() if k != "run_name"},
                "contractnli": fingerprint(values["contractnli"]),
            }
        )
    )


def declared_parameters(nb: Path) -> set[str]:
    """The names a notebook's `parameters` cell assigns."""
    import ast

    from ..runtime.stage import syntax_tree

    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    src = next(("".join(c["source"]) for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), "")
    return {
        t.id
        for node in syntax_tree(src).body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    }


def notebook_parameters(nb: Path, run: dict) -> dict:
    """The run's papermill parameters that the notebook declares."""
    declared = declared_parameters(nb)
    return {k: v for k, v in run.items() if k in declared}


def _artifacts_present(root: Path, params, entry: dict) -> bool:
    store = store_root(root, params)
    return all((store / a / "manifest.json").is_file() for a in entry.get("artifacts", []))


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def run(
    root: Path,
    params_file: str,
    run_name: str,
    corpus: str | None,
    only: list[str] | None = None,
    out=sys.stdout,
    gold: str | None = None,
    kernels: list[WarmKernel] | None = None,
    contractnli: str = "",
) -> int:
    """Compute, then render: every artifact through the library first (one process and its pool),
    then the notebooks (or those named in `only`), which only read the store, on warm kernels side
    by side (one per core); the last notebook, the report, after the others. A notebook whose
    inputs, code and parameters are unchanged keeps its executed copy. Returns an exit code.

    Runs in a row (a sweep, the tests) may pass their `kernels`, which are then left running.
    `contractnli` (a ContractNLI split, e.g. pipeline.CONTRACTNLI) is evaluated beside the run, as the
    stored notebooks show it; a user's run does not evaluate an unrelated data set by default."""
    params = load_params(root / params_file if not Path(params_file).is_absolute() else Path(params_file))  # fail before any work
    without_iri_grammar()
    progress = Progress(out)
    run_dir = reports_root(root) / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "stage_log.jsonl").unlink(missing_ok=True)
    nbs = [n for n in notebooks(root) if named(n, only)]
    wb = workbench(root, params_file, run_name, corpus, gold)
    values = {"params_file": params_file, "run_name": run_name, "corpus": corpus or "", "gold": gold or "", "contractnli": contractnli}
    base = _run_base(root, params, values, wb)
    keys_path = run_dir / "notebook_keys.json"
    keys = json.loads(keys_path.read_text(encoding="utf-8")) if keys_path.is_file() else {}
    plan, previous = [], ""
    for nb in nbs:  # a notebook's key chains the one before it: an edit re-renders it and all after
        previous = _notebook_key(nb, base, previous)
        kept = (
            keys.get(nb.stem, {}).get("key") == previous
            and (run_dir / nb.name).is_file()
            and _artifacts_present(root, params, keys[nb.stem])
        )
        plan.append((nb, previous, kept))
    todo = [(nb, key) for nb, key, kept in plan if not kept]
    for nb, _, kept in plan:
        if kept:
            progress.line(f"{nb.stem}: unchanged (same notebook, inputs, parameters and code): kept the executed copy")
    store, whole = store_root(root, params), plan[-1][1] if plan and not only else ""  # the key of the whole rendering
    kept_render = _kept_rendering(root, params, store, whole, progress) if todo and whole else None
    pool = kernels or [WarmKernel(kernel_name(), root) for _ in range(0 if kept_render else min(len(todo), KERNELS))]
    # the library keeps one core while it computes (its pool and this process use ~1.9 of 2 on CUAD):
    # one kernel a core fewer until then renders as soon, for 3 s of CPU less on 50 contracts
    spare = () if kernels else tuple(pool[max(1, len(pool) - 1) :])
    failed = None
    try:
        if todo:
            for k in pool:
                if k not in spare:
                    k.start()  # kernels start and import while the library computes, and so does nbconvert
            threading.Thread(target=html_exporter, daemon=True).start()
            gate, rendering = StagesDone(), None
            with ThreadPoolExecutor(max_workers=1) as renderer:
                if not kept_render:  # each notebook renders as soon as its stages are done
                    if whole and len(todo) == len(plan):  # every notebook renders: nothing an earlier rendering wrote stays
                        renders.clear(run_dir, [nb.stem for nb, _, _ in plan])
                    rendering = renderer.submit(_render, root, run_dir, todo, pool, keys, keys_path, progress, values, gate, spare)
                error = compute(root, wb, params_file, run_name, progress, contractnli, gate)
            failed = rendering.result() if rendering else None
            if error:
                done = [run_dir / nb.name for nb, _ in todo if nb.stem in keys]
                _publish_stopped(root, run_dir, done, None, error, [nb for nb, _ in todo if nb.stem not in keys], out)
                return 1
        if kept_render:
            _restore(root, store, whole, kept_render, run_dir, keys, keys_path, progress, values)
    finally:
        if kernels is None:
            for k in pool:
                k.close()
    executed = [run_dir / nb.name for nb, _, _ in plan if (run_dir / nb.name).is_file() and nb.stem in keys]
    if failed:
        nb, error = failed
        done = {p.name for p in executed}
        _publish_stopped(root, run_dir, executed, run_dir / nb.name, error, [n for n, _ in todo if n.name not in done and n != nb], out)
        return 1
    if whole and all(nb.stem in keys for nb, _, _ in plan):
        renders.keep(store, whole, run_dir, {nb.stem: keys[nb.stem] for nb, _, _ in plan})
    total_reused, total_computed = summarize_log(stage_log(run_dir))
    index = publish(root, run_dir, executed)
    progress.close()
    if total_computed == 0:
        n_kept = len(plan) - len(todo)
        kept = f"; {n_kept} unchanged notebook(s) kept" if n_kept else ""
        print(f"Nothing recomputed: {total_reused} artifact(s) read from the store{kept}.", file=out)
    else:
        print(f"{total_computed} artifact(s) computed, {total_reused} reused.", file=out)
    print(f"Report: {shown(index, root)}", file=out)
    return 0


def _kept_rendering(root: Path, params, store: Path, key: str, progress: "Progress") -> dict | None:
    """The manifest of the rendering kept under `key` when every artifact it read is still in the
    store; a damaged one is said, dropped (the run renders and keeps anew) and gives None."""
    try:
        manifest = renders.find(store, key)
    except renders.DamagedRendering as e:
        progress.line(f"could not reuse the kept rendering ({type(e).__name__}: {e}): rendering the notebooks")
        renders.discard(store, key)
        return None
    return manifest if manifest and all(_artifacts_present(root, params, e) for e in manifest["notebooks"].values()) else None


def workbench(root: Path, params_file: str, run_name: str, corpus: str | None, gold: str | None):
    """The run's Workbench, with the pool (`workers` = the cores, as `qspace bench` runs the
    stages) unless the corpus is too small to pay for it; None when there is no corpus folder
    (the notebooks say so themselves)."""
    from ..pipeline import Workbench

    try:
        wb = Workbench(params_file=params_file, corpus_arg=corpus, run_name=run_name, project_root=root, gold=gold)
    except FileNotFoundError:
        return None
    wb.workers = workers.for_corpus(os.cpu_count() or 1, wb.files()["bytes"].sum() or 0)
    return wb


def compute(root: Path, wb, params_file: str, run_name: str, progress: "Progress", contractnli: str = "", gate=None) -> str:
    """Every stage of the run's Workbench `wb` in registry order, and the ContractNLI evaluation
    notebook 07 shows when `contractnli` names a split; each stage done is told to `gate` (a
    StagesDone). Returns "" or the error that stopped it."""
    from ..pipeline import STAGES, contractnli_workbench

    gate = gate or StagesDone()
    if wb is None:
        gate.finish("")
        return ""
    stage, error = "setup", ""
    try:
        runs = [("", wb, list(STAGES))]
        if contractnli:
            other = contractnli_workbench(root, contractnli, params_file, run_name, workers=os.cpu_count() or 1)
            runs += [("contractnli ", other, ["evaluation"])] if other is not None else []  # what notebook 07 reads
        for label, w, stages in runs:
            for stage in stages:
                t0 = time.perf_counter()
                art = w.artifact(stage)
                rows = ", ".join(f"{t} {v['rows']:,}" for t, v in sorted(art.manifest["tables"].items()))
                progress.line(f"{label}{stage}: {w.last_action(stage)} in {time.perf_counter() - t0:.1f}s ({rows})")
                if stage == "corpus" and w.changes_line():
                    progress.line(f"{label}{w.changes_line()}")
                if not label:
                    gate.add(stage)
    except Exception as e:  # a stage's own error: say which, as a notebook would
        progress.line(f"FAILED: stage {stage}: {type(e).__name__}: {e}")
        error = f"stage {stage}: {type(e).__name__}: {e}"
    finally:
        workers.shutdown()  # the notebooks only read the store: the pool's memory goes back before the last ones render
        gate.finish(error)
    return error


class StagesDone:
    """The stages computed so far in a run, for the notebooks that wait on them: a notebook whose
    stages are done renders while the library computes the later ones."""

    def __init__(self):
        self.done: set[str] = set()
        self.finished, self.error = False, ""
        self.cond = threading.Condition()

    def add(self, stage: str) -> None:
        with self.cond:
            self.done.add(stage)
            self.cond.notify_all()

    def finish(self, error: str) -> None:
        with self.cond:
            self.finished, self.error = True, error
            self.cond.notify_all()

    def wait(self, stages: tuple[str, ...] | None) -> bool:
        """Wait until `stages` (None: every stage and the rest of the computation) are done;
        False when the computation stopped first."""
        with self.cond:
            self.cond.wait_for(lambda: self.finished or (stages is not None and set(stages) <= self.done))
            return not self.error and (self.finished or set(stages or ()) <= self.done)


def notebook_needs(nb: Path) -> tuple[str, ...] | None:
    """The stages a pipeline notebook reads (those its exports step writes from, or `ask` reads
    for 08_ask, and every stage before them: a notebook may show an earlier step's tables); None,
    the whole computation, for any other notebook, and for 07_evaluation (it may show the
    ContractNLI benchmark)."""
    from ..pipeline import STAGES
    from ..pipeline.workbench import ASK_TABLES
    from .exports import STEPS

    reads = {step: stages for step, (stages, _) in STEPS.items() if step != "evaluation"}
    reads["ask"] = tuple(ref.split("/")[0] for ref in ASK_TABLES)
    step = nb.stem[3:]
    if step not in reads:
        return None
    order = list(STAGES)
    last = max(order.index(s) for s in reads[step])
    return tuple(order[: last + 1])


def _render(
    root: Path,
    run_dir: Path,
    todo: list,
    pool: list[WarmKernel],
    keys: dict,
    keys_path: Path,
    progress: "Progress",
    values: dict,
    gate: StagesDone | None = None,
    spare: tuple[WarmKernel, ...] = (),
) -> tuple[Path, str] | None:
    """Execute the notebooks in `todo` on the kernels of `pool` side by side, each once the stages
    it reads are done (`gate`), the last one after all others, each with its HTML; returns
    (notebook, error) for the first that failed. A notebook whose stages the computation never
    reached (it stopped) is not started. The `spare` kernels of the pool (not started) join once
    the computation is done, if three notebooks besides the report are still waiting for a kernel."""
    if not todo:
        return None
    import queue

    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    free: queue.Queue = queue.Queue()
    for k in pool:
        if k not in spare:
            free.put(k)
    lock, failed = threading.Lock(), []
    done, waiting = [0], [len(todo)]  # notebooks rendered, notebooks without a kernel yet

    def join_spares() -> None:
        if gate is not None:
            gate.wait(None)
        if waiting[0] >= 4:  # enough left for a kernel that takes one notebook's time to start: three, and the report
            for k in spare:
                k.start()
                free.put(k)

    spares = threading.Thread(target=join_spares, daemon=True)
    if spare:
        spares.start()

    def execute(nb: Path, key: str) -> None:
        try:
            if gate is not None and not gate.wait(notebook_needs(nb)):
                return  # the computation stopped before this notebook's stages
            if failed:
                return  # a notebook failed: start no other
            target, t0 = run_dir / nb.name, time.perf_counter()
            warm = free.get()
        finally:
            with lock:
                waiting[0] -= 1
        try:
            pm.execute_notebook(
                str(nb),
                str(target),
                kernel_name=warm.kernel_name,
                language="python",
                # no cwd: the warm kernel already runs in root, and papermill's chdir is the whole
                # process's: notebooks rendered side by side left it in root, not where it was
                cwd=None,
                progress_bar=False,
                log_output=False,
                request_save_on_cell_execute=False,  # papermill would write the whole notebook twice per cell
                **warm.fresh(),
                parameters=notebook_parameters(nb, {**values, "notebook": nb.stem}),
            )
        except Exception as e:  # a cell raised (papermill's error), or the kernel died, notebook unreadable, ...
            if isinstance(e, PapermillExecutionError):
                first = (e.source or "").strip().splitlines()[:1]
                error = f"cell [{e.exec_count}] {first[0][:60] if first else ''!r}: {e.ename}: {e.evalue}"
            else:
                error = f"{type(e).__name__}: {e}"
            with lock:
                failed.append((nb, error))
                keys.pop(nb.stem, None)
                _write_json(keys_path, keys)
            progress.line(f"FAILED: notebook {nb.name}, {error}")
            progress.line(f"  executed copy with the traceback: {target}")
            return
        finally:
            free.put(warm)
        to_html(target)
        with lock:
            log = [e for e in stage_log(run_dir) if e.get("notebook") == nb.stem]
            reused, computed = summarize_log(log)
            _record_time(run_dir, nb.stem, time.perf_counter() - t0)
            keys[nb.stem] = {"key": key, "artifacts": sorted({f"{e['stage']}/{e['artifact_id']}" for e in log})}
            _write_json(keys_path, keys)
            done[0] += 1
        progress.line(
            f"{nb.stem}: rendered in {time.perf_counter() - t0:.1f}s "
            f"({done[0]}/{len(todo)}; {reused} artifact(s) read, {computed} computed)"
        )

    for nb, _ in todo:  # copies of this run's notebooks that will be rendered again are not the report any more
        keys.pop(nb.stem, None)
    with ThreadPoolExecutor(max_workers=len(pool)) as ex:
        for f in [ex.submit(execute, nb, key) for nb, key in todo[:-1]]:
            f.result()
    execute(*todo[-1])  # the report gathers what the others wrote (charts, exports)
    if spare:
        spares.join()  # a spare kernel is started before the run closes its kernels, or not at all
    return failed[0] if failed else None


def _restore(
    root: Path, store: Path, key: str, manifest: dict, run_dir: Path, keys: dict, keys_path: Path, progress: "Progress", values: dict
) -> None:
    """The rendering kept under `key` (by a run under another name; `manifest` from renders.find)
    put into the run folder, each notebook with this run's parameters cell and its HTML page: no
    kernel, no cell run."""
    kernel = kernel_name()
    for target in renders.restore(store, key, run_dir, manifest):
        t0, name = time.perf_counter(), target.stem
        source = root / "notebooks" / target.name
        to_html(target, with_parameters(target, source, notebook_parameters(source, {**values, "notebook": name}), kernel))
        keys[name] = manifest["notebooks"][name]
        _record_time(run_dir, name, time.perf_counter() - t0)
        progress.line(f"{name}: the same rendering as an earlier run (same notebook, inputs, parameters and code): copied")
    _write_json(keys_path, keys)


def with_parameters(executed: Path, source: Path, parameters: dict, kernel: str):
    """The executed notebook with the parameters cell papermill injects for `parameters`."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    nb = nbformat.read(executed, as_version=4)
    fresh = parameterize_notebook(load_notebook_node(str(source)), parameters, kernel_name=kernel, language="python")
    injected = [c.source for c in fresh.cells if INJECTED in c.metadata.get("tags", [])]
    for cell in nb.cells:
        if injected and INJECTED in cell.metadata.get("tags", []):
            cell.source = injected[0]
    return nb


class Progress:
    """What a run says as it goes: each stage and notebook on a line with the time so far; on a
    terminal, a live line (tqdm) below them with the elapsed time."""

    def __init__(self, out):
        self.out, self.t0 = out, time.perf_counter()
        self.bar = None
        if getattr(out, "isatty", lambda: False)():
            from tqdm import tqdm

            self.bar = tqdm(file=out, bar_format="{desc} {elapsed}", desc="qspace run", leave=False)

    def line(self, text: str) -> None:
        stamped = f"[{time.perf_counter() - self.t0:6.1f}s] {text}"
        if self.bar is not None:
            self.bar.write(stamped, file=self.out)
            self.bar.set_description_str(text[:60])
        else:
            print(stamped, file=self.out, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def refreshed(root: Path) -> list[Path]:
    """The notebooks `refresh_notebooks` re-executes in place: the steps and the sweep comparison."""
    return [*notebooks(root), root / "notebooks" / SWEEP_NOTEBOOK]


def refresh_notebooks(root: Path, only: list[str] | None = None, out=sys.stdout) -> int:
    """Re-execute notebooks/ in place with their default parameters: the stored outputs that
    readers see on the repository and that nbval compares against."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    for nb_path in refreshed(root):
        if not named(nb_path, only):
            continue
        print(f"refreshing {nb_path.name} ...", file=out, flush=True)
        nb = nbformat.read(nb_path, as_version=4)
        client = NotebookClient(
            nb, kernel_name=kernel_name(), timeout=1800, record_timing=False, resources={"metadata": {"path": str(nb_path.parent)}}
        )
        try:
            client.execute()
        except CellExecutionError as e:
            print(f"FAILED: notebook {nb_path.name}: {str(e).splitlines()[0] if str(e) else e}", file=out)
            return 1
        scrub(nb)
        nbformat.write(nb, nb_path)
    return 0


TREE_STAGES = ("trees", "simulation", "evaluation")
SWEEP_NOTEBOOK = "sweep.ipynb"


def sweep(root: Path, weight_files: list[str], corpus: str | None, name: str = "sweep", out=sys.stdout, gold: str | None = None) -> int:
    """Run the tree and evaluation notebooks once per weights file (everything upstream comes from
    the store), then the sweep notebook that compares the weight sets (on the `gold` questions
    when given, else on silver ones)."""
    import papermill as pm

    for f in weight_files:  # every file is validated before any work
        load_params(Path(f) if Path(f).is_absolute() else root / f)
    pool = [WarmKernel(kernel_name(), root) for _ in range(KERNELS)]  # the kernels of every run of the sweep
    try:
        for f in weight_files:
            run_name = f"{name}-{Path(f).stem}"
            print(f"== weights {f} -> reports/{run_name}/", file=out, flush=True)
            code = run(root, f, run_name, corpus, only=["06", "07"], out=out, gold=gold, kernels=pool)
            if code:
                return code
            log = stage_log(reports_root(root) / run_name)
            up = summarize_log([e for e in log if e["stage"] not in TREE_STAGES])
            down = summarize_log([e for e in log if e["stage"] in TREE_STAGES])
            print(
                f"   upstream stages: {up[0]} reused, {up[1]} recomputed; tree/simulation/evaluation: {down[0]} reused, {down[1]} computed",
                file=out,
                flush=True,
            )
        run_dir = reports_root(root) / name
        run_dir.mkdir(parents=True, exist_ok=True)
        target = run_dir / SWEEP_NOTEBOOK
        print(f"== comparing {len(weight_files)} weight sets -> {shown(target, root)}", file=out, flush=True)
        pm.execute_notebook(
            str(root / "notebooks" / SWEEP_NOTEBOOK),
            str(target),
            kernel_name=pool[0].kernel_name,
            language="python",
            cwd=str(root),
            progress_bar=False,
            log_output=False,
            **pool[0].fresh(),
            parameters={"weights": list(weight_files), "corpus": corpus or "", "gold": gold or "", "run_name": name},
        )
    finally:
        for k in pool:
            k.close()
    to_html(target)
    index = write_index(run_dir, name, [target])
    print(f"Report: {shown(index, root)}", file=out)
    return 0

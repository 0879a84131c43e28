"""Execute the pipeline notebooks in order with papermill and publish them as a report.

reports/<run>/ receives each executed notebook, its HTML, and index.html linking them. The
stage log each notebook appends to says which artifacts were reused and which computed.
"""
from __future__ import annotations

import html
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .ids import canonical_json, sha256_hex
from .params import load_params

KERNEL = "qspace-frames"


def notebooks(root: Path) -> list[Path]:
    return sorted(p for p in (root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


# Run before each notebook in the run's one kernel: what a fresh kernel would have (an empty
# namespace, Polars' default display settings, cell numbers from 1), so a notebook's outputs do
# not depend on the notebooks run before it in the same kernel.
RESET = """get_ipython().reset(new_session=True)
import polars as _pl
_pl.Config.restore_defaults()
del _pl
"""


class WarmKernel:
    """One kernel for a whole run, started when the first notebook needs it and reset before each:
    a notebook then costs its own cells, not a kernel start and the imports (~5 s) every time."""

    def __init__(self, kernel_name: str, cwd: Path):
        self.kernel_name, self.cwd, self.km = kernel_name, cwd, None

    def fresh(self) -> dict:
        """papermill's keyword arguments for the next notebook: the kernel, reset. The reset goes
        through a new client: a client's sockets are tied to the event loop that was current when
        it was made, and nbclient runs each notebook in a loop of its own."""
        if self.km is None or not self.km.is_alive():
            self.close()
            self.km = _TrackedKernel(kernel_name=self.kernel_name)
            self.km.start_kernel(cwd=str(self.cwd))
        self.km.drop_clients()  # the previous notebook's: nbclient leaves a client it did not start the kernel for running
        control = self.km.client()
        control.start_channels()
        # only the shell reply is read (queued until the socket connects), so no wait for IOPub
        msg_id = control.execute(RESET, silent=True, store_history=False)
        while (reply := control.get_shell_msg(timeout=120))["parent_header"].get("msg_id") != msg_id:
            pass
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"kernel reset failed: {reply['content'].get('evalue', '')}")
        return {"km": self.km}

    def close(self) -> None:
        if self.km is not None:
            self.km.drop_clients()
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)
        self.km = None


def _tracked_kernel_class():
    from jupyter_client.manager import KernelManager

    class TrackedKernel(KernelManager):
        """A kernel manager that remembers the clients it made, so the run can stop them (each
        runs a heartbeat thread)."""

        def client(self, **kwargs):
            c = super().client(**kwargs)
            self.__dict__.setdefault("_clients", []).append(c)
            return c

        def drop_clients(self) -> None:
            for c in self.__dict__.pop("_clients", []):
                c.stop_channels()

    return TrackedKernel


def _TrackedKernel(**kwargs):
    return _tracked_kernel_class()(**kwargs)


def _kernel_name() -> str:
    """The project's kernel when registered; otherwise the running interpreter's default."""
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL if KERNEL in KernelSpecManager().find_kernel_specs() else "python3"


def scrub(nb) -> None:
    """Drop timing metadata (papermill's start/end times, execution timestamps) so that an
    executed notebook depends only on its inputs."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)


def to_html(ipynb: Path) -> Path:
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(ipynb, as_version=4)
    scrub(nb)
    nbformat.write(nb, ipynb)
    # our template: the lab look without CDN scripts, under a policy that runs no script (tables and
    # printed text arrive escaped; the policy covers raw HTML an output might still carry)
    exporter = HTMLExporter(template_name="offline", extra_template_basedirs=[str(Path(__file__).parent / "templates")])
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
        items += f'\n<li><strong>failed here:</strong> {link(failed)[4:-5]}</li>'
    stopped = (f'<p><strong>This run stopped in {html.escape(failed.stem)}</strong>: {html.escape(error)}. '
               'The notebooks before it completed; the failed one is linked with its traceback.</p>') if failed is not None else ""
    extras = sorted(f.name for f in run_dir.iterdir() if f.suffix in {".csv", ".jsonl", ".json", ".md"})
    files = "\n".join(f'<li><a href="{html.escape(n)}">{html.escape(n)}</a></li>' for n in extras)
    dash = '<p><a href="dashboard.html">Dashboard</a>: the run in numbers, the baseline comparison and every chart.</p>' \
        if (run_dir / "dashboard.html").is_file() else ""
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
    from . import report

    if (run_dir / "artifacts.json").is_file():
        report.build(run_dir, root)
    pages = executed if executed is not None else sorted(run_dir.glob("[0-9][0-9]_*.ipynb"))
    return write_index(run_dir, run_dir.name, pages, failed, error)


def _finish(pending: list) -> None:
    """Wait for the HTML exports still being written; an export's error is raised here."""
    for f in pending:
        f.result()


def _publish_stopped(root: Path, run_dir: Path, executed: list[Path], failed: Path, error: str, later: list[Path], out) -> None:
    """What a stopped run leaves: index.html and the dashboard over what completed, plus the failed
    notebook's executed copy; copies of later notebooks from an earlier run are removed, so the
    report shows this run only."""
    for nb in later:
        for f in (run_dir / nb.name, (run_dir / nb.name).with_suffix(".html")):
            f.unlink(missing_ok=True)
    try:
        if failed.is_file():
            to_html(failed)
        index = publish(root, run_dir, executed, failed if failed.is_file() else None, error)
        print(f"Partial report: {index.relative_to(root) if index.is_relative_to(root) else index}", file=out)
    except Exception as e:  # the report of a stopped run must not hide why it stopped
        print(f"  (no partial report: {type(e).__name__}: {e})", file=out)


def stage_log(run_dir: Path) -> list[dict]:
    path = run_dir / "stage_log.jsonl"
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []


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
    pkg = Path(__file__).parent
    return sha256_hex("".join(f"{p.name}\n{p.read_text(encoding='utf-8')}" for p in sorted(pkg.glob("*.py"))))


def _notebook_key(nb: Path, base: str, previous: str) -> str:
    return sha256_hex(canonical_json({"notebook": sha256_hex(nb.read_bytes()), "base": base, "previous": previous}))


def _run_base(root: Path, params_file: str, params, run_name: str, corpus: str | None, gold: str | None = None) -> tuple[str, Path | None]:
    """What every notebook of the run depends on (parameters, the corpus's bytes, the gold
    questions, the expert dictionary, the code), and the corpus folder the run reads."""
    from .pipeline import Workbench
    from .questions import dictionary_fingerprint

    try:
        wb = Workbench(params_file=params_file, corpus_arg=corpus, run_name=run_name, project_root=root)
        fp = sha256_hex(canonical_json(wb.files().select("path", "bytes", "sha256", "discover_error").rows()))
        folder = wb.corpus
    except FileNotFoundError:  # no corpus: the notebooks will say so themselves
        fp, folder = None, None
    g = Path(gold) if gold else None
    g = g if g is None or g.is_absolute() else root / g
    gold_fp = sha256_hex(g.read_bytes()) if g is not None and g.is_file() else None
    dictionary = dictionary_fingerprint(root / "params" / "dictionary")  # notebooks 07 and 08 answer with it
    return sha256_hex(canonical_json({"params": params.hash(), "corpus": fp, "gold": gold_fp, "dictionary": dictionary,
                                      "code": code_hash(), "run": run_name})), folder


SAMPLE_CORPUS = "sample_corpus"


def declared_parameters(nb: Path) -> set[str]:
    """The names a notebook's `parameters` cell assigns."""
    import ast

    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    src = next(("".join(c["source"]) for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), "")
    return {t.id for node in ast.parse(src).body if isinstance(node, (ast.Assign, ast.AnnAssign))
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}


def notebook_parameters(nb: Path, run: dict, folder: Path | None, root: Path) -> dict:
    """The papermill parameters a notebook declares, from the run's. The ContractNLI benchmark
    belongs to the sample corpus's run (the stored notebooks): a run of another folder passes an
    empty path, and notebook 07 skips it."""
    declared = declared_parameters(nb)
    sample = folder is not None and folder.resolve() == (root / SAMPLE_CORPUS).resolve()
    values = {**run, **({} if sample else {"contractnli": ""})}
    return {k: v for k, v in values.items() if k in declared}


def _artifacts_present(root: Path, params, entry: dict) -> bool:
    store = Path(params.store.root)
    store = store if store.is_absolute() else root / store
    return all((store / a / "manifest.json").is_file() for a in entry.get("artifacts", []))


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def run(root: Path, params_file: str, run_name: str, corpus: str | None, only: list[str] | None = None,
        out=sys.stdout, gold: str | None = None, kernel: WarmKernel | None = None) -> int:
    """Run every notebook (or those named in `only`) in order. Returns a process exit code.

    The notebooks share one kernel, reset before each; several runs in a row (a sweep, the
    tests) may pass theirs as `kernel`, which is then left running."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    params = load_params(root / params_file if not Path(params_file).is_absolute() else Path(params_file))  # fail before any work
    run_dir = root / "reports" / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "stage_log.jsonl").unlink(missing_ok=True)
    nbs = [n for n in notebooks(root) if not only or n.stem in only or n.stem[:2] in only]
    base, folder = _run_base(root, params_file, params, run_name, corpus, gold)
    keys_path = run_dir / "notebook_keys.json"
    keys = json.loads(keys_path.read_text(encoding="utf-8")) if keys_path.is_file() else {}
    executed, previous, n_kept = [], "", 0
    warm = kernel or WarmKernel(_kernel_name(), root)  # started by the first notebook that is executed
    # a notebook's HTML is written while the kernel runs the next one (the main process only waits on it)
    exports, pending = ThreadPoolExecutor(max_workers=1), []
    try:
        for i, nb in enumerate(nbs, 1):
            target = run_dir / nb.name
            t0 = time.perf_counter()
            key = _notebook_key(nb, base, previous)
            previous = key
            print(f"[{i}/{len(nbs)}] {nb.stem} ...", file=out, flush=True)
            if keys.get(nb.stem, {}).get("key") == key and target.is_file() and _artifacts_present(root, params, keys[nb.stem]):
                executed.append(target)
                n_kept += 1
                print("      unchanged (same notebook, inputs, parameters and code): kept the executed copy", file=out, flush=True)
                continue
            try:
                pm.execute_notebook(
                    str(nb), str(target), kernel_name=warm.kernel_name, language="python", cwd=str(root), progress_bar=False, log_output=False,
                    **warm.fresh(),
                    parameters=notebook_parameters(nb, {"params_file": params_file, "run_name": run_name, "corpus": corpus or "",
                                                        "gold": gold or "", "notebook": nb.stem}, folder, root),
                )
            except Exception as e:  # a cell raised (papermill's error), or the kernel died, notebook unreadable, ...
                if isinstance(e, PapermillExecutionError):
                    first = (e.source or "").strip().splitlines()[:1]
                    error = f"cell [{e.exec_count}] {first[0][:60] if first else ''!r}: {e.ename}: {e.evalue}"
                else:
                    error = f"{type(e).__name__}: {e}"
                print(f"FAILED: notebook {nb.name}, {error}", file=out, flush=True)
                print(f"  executed copy with the traceback: {target}", file=out)
                later = nbs[i:]
                for n in [nb, *later]:
                    keys.pop(n.stem, None)
                _write_json(keys_path, keys)
                _finish(pending)
                _publish_stopped(root, run_dir, executed, target, error, later, out)
                return 1
            log = stage_log(run_dir)
            reused, computed = summarize_log(log, nb.stem)
            _record_time(run_dir, nb.stem, time.perf_counter() - t0)
            pending.append(exports.submit(to_html, target))
            executed.append(target)
            keys[nb.stem] = {"key": key, "artifacts": sorted({f"{e['stage']}/{e['artifact_id']}" for e in log if e.get("notebook") == nb.stem})}
            _write_json(keys_path, keys)
            print(f"      done in {time.perf_counter() - t0:.1f}s: {reused} artifact(s) reused, {computed} computed", file=out, flush=True)
        _finish(pending)
    finally:
        exports.shutdown(wait=True)
        if kernel is None:
            warm.close()
    total_reused, total_computed = summarize_log(stage_log(run_dir))
    index = publish(root, run_dir, executed)
    if total_computed == 0:
        kept = f"; {n_kept} unchanged notebook(s) kept" if n_kept else ""
        print(f"Nothing recomputed: {total_reused} artifact(s) read from the store{kept}.", file=out)
    else:
        print(f"{total_computed} artifact(s) computed, {total_reused} reused.", file=out)
    print(f"Report: {index.relative_to(root) if index.is_relative_to(root) else index}", file=out)
    return 0


def refresh_notebooks(root: Path, only: list[str] | None = None, out=sys.stdout) -> int:
    """Re-execute notebooks/ in place with their default parameters: the stored outputs that
    readers see on the repository and that nbval compares against."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    for nb_path in [*notebooks(root), root / "notebooks" / SWEEP_NOTEBOOK]:
        if only and nb_path.stem not in only and nb_path.stem[:2] not in only:
            continue
        print(f"refreshing {nb_path.name} ...", file=out, flush=True)
        nb = nbformat.read(nb_path, as_version=4)
        client = NotebookClient(nb, kernel_name=_kernel_name(), timeout=1800, record_timing=False,
                                resources={"metadata": {"path": str(nb_path.parent)}})
        try:
            client.execute()
        except CellExecutionError as e:
            print(f"FAILED: notebook {nb_path.name}: {str(e).splitlines()[0] if str(e) else e}", file=out)
            return 1
        scrub(nb)
        nbformat.write(nb, nb_path)
    return 0


def install_kernel() -> Path:
    """Register the project's Jupyter kernel inside the running environment (sys.prefix).

    Same as `ipykernel install --sys-prefix`, plus a log level that keeps the kernel's routine
    warnings (plain-TCP transport on localhost) out of every run's output.
    """
    import json as _json

    d = Path(sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL
    d.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--IPKernelApp.log_level=ERROR"],
        "display_name": "qspace-frames",
        "language": "python",
        "metadata": {"debugger": True},
    }
    (d / "kernel.json").write_text(_json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    return d


TREE_STAGES = ("trees", "simulation", "evaluation")
SWEEP_NOTEBOOK = "sweep.ipynb"


def sweep(root: Path, weight_files: list[str], corpus: str | None, name: str = "sweep", out=sys.stdout) -> int:
    """Run the tree and evaluation notebooks once per weights file (everything upstream comes from
    the store), then the sweep notebook that compares the weight sets."""
    import papermill as pm

    for f in weight_files:  # every file is validated before any work
        load_params(Path(f) if Path(f).is_absolute() else root / f)
    warm = WarmKernel(_kernel_name(), root)  # one kernel for every run of the sweep and the comparison
    try:
        for f in weight_files:
            run_name = f"{name}-{Path(f).stem}"
            print(f"== weights {f} -> reports/{run_name}/", file=out, flush=True)
            code = run(root, f, run_name, corpus, only=["06", "07"], out=out, kernel=warm)
            if code:
                return code
            log = stage_log(root / "reports" / run_name)
            up = summarize_log([e for e in log if e["stage"] not in TREE_STAGES])
            down = summarize_log([e for e in log if e["stage"] in TREE_STAGES])
            print(f"   upstream stages: {up[0]} reused, {up[1]} recomputed; tree/simulation/evaluation: {down[0]} reused, {down[1]} computed",
                  file=out, flush=True)
        run_dir = root / "reports" / name
        run_dir.mkdir(parents=True, exist_ok=True)
        target = run_dir / SWEEP_NOTEBOOK
        print(f"== comparing {len(weight_files)} weight sets -> {target.relative_to(root)}", file=out, flush=True)
        pm.execute_notebook(str(root / "notebooks" / SWEEP_NOTEBOOK), str(target), kernel_name=warm.kernel_name, language="python",
                            cwd=str(root), progress_bar=False, log_output=False, **warm.fresh(),
                            parameters={"weights": list(weight_files), "corpus": corpus or "", "run_name": name})
    finally:
        warm.close()
    to_html(target)
    index = write_index(run_dir, name, [target])
    print(f"Report: {index.relative_to(root)}", file=out)
    return 0

"""Execute the pipeline notebooks in order with papermill and publish them as a report.

reports/<run>/ receives each executed notebook, its HTML, and index.html linking them. The
stage log each notebook appends to says which artifacts were reused and which computed.
"""
from __future__ import annotations

import html
import json
import sys
import time
from pathlib import Path

from .params import load_params

KERNEL = "qspace-frames"


def notebooks(root: Path) -> list[Path]:
    return sorted(p for p in (root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


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
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    out = ipynb.with_suffix(".html")
    out.write_text(body, encoding="utf-8")
    return out


def write_index(run_dir: Path, run_name: str, pages: list[Path]) -> Path:
    items = "\n".join(
        f'<li><a href="{html.escape(p.with_suffix(".html").name)}">{html.escape(p.stem)}</a> '
        f'(<a href="{html.escape(p.name)}">ipynb</a>)</li>'
        for p in pages
    )
    extras = sorted(f.name for f in run_dir.iterdir() if f.suffix in {".csv", ".jsonl", ".json", ".md"})
    files = "\n".join(f'<li><a href="{html.escape(n)}">{html.escape(n)}</a></li>' for n in extras)
    doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>qspace-frames run {html.escape(run_name)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;line-height:1.5}}</style></head>
<body><h1>qspace-frames run <code>{html.escape(run_name)}</code></h1>
<h2>Notebooks, in run order</h2><ol>
{items}
</ol><h2>Exports</h2><ul>
{files}
</ul></body></html>
"""
    out = run_dir / "index.html"
    out.write_text(doc, encoding="utf-8")
    return out


def summarize_log(run_dir: Path, notebook: str) -> tuple[int, int]:
    path = run_dir / "stage_log.jsonl"
    entries = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []
    mine = {(e["stage"], e["artifact_id"]): e["action"] for e in entries if e.get("notebook") == notebook}
    return sum(a == "reused" for a in mine.values()), sum(a == "computed" for a in mine.values())


def run(root: Path, params_file: str, run_name: str, corpus: str | None, only: list[str] | None = None,
        out=sys.stdout) -> int:
    """Run every notebook (or those named in `only`) in order. Returns a process exit code."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    load_params(root / params_file if not Path(params_file).is_absolute() else Path(params_file))  # fail before any work
    run_dir = root / "reports" / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "stage_log.jsonl").unlink(missing_ok=True)
    kernel = _kernel_name()
    nbs = [n for n in notebooks(root) if not only or n.stem in only or n.stem[:2] in only]
    total_reused = total_computed = 0
    executed = []
    for i, nb in enumerate(nbs, 1):
        target = run_dir / nb.name
        t0 = time.perf_counter()
        print(f"[{i}/{len(nbs)}] {nb.stem} ...", file=out, flush=True)
        try:
            pm.execute_notebook(
                str(nb), str(target), kernel_name=kernel, language="python", cwd=str(root), progress_bar=False, log_output=False,
                parameters={"params_file": params_file, "run_name": run_name, "corpus": corpus or "",
                            "notebook": nb.stem},
            )
        except PapermillExecutionError as e:
            first = (e.source or "").strip().splitlines()[:1]
            print(f"FAILED: notebook {nb.name}, cell [{e.exec_count}] {first[0][:60] if first else ''!r}: "
                  f"{e.ename}: {e.evalue}", file=out, flush=True)
            print(f"  executed copy with the traceback: {target}", file=out)
            return 1
        except Exception as e:  # kernel died, notebook unreadable, ...
            print(f"FAILED: notebook {nb.name}: {type(e).__name__}: {e}", file=out, flush=True)
            return 1
        reused, computed = summarize_log(run_dir, nb.stem)
        total_reused += reused
        total_computed += computed
        to_html(target)
        executed.append(target)
        print(f"      done in {time.perf_counter() - t0:.1f}s: {reused} artifact(s) reused, {computed} computed", file=out, flush=True)
    index = write_index(run_dir, run_name, executed)
    if total_computed == 0:
        print(f"Nothing recomputed: all {total_reused} artifact(s) came from the store.", file=out)
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

    for nb_path in notebooks(root):
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

"""Command line: `qspace run`, `qspace notebooks`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .params import ParamsError, load_params
from .pipeline import find_project_root


def _run(args) -> int:
    from .runner import run

    root = find_project_root()
    try:
        load_params(Path(args.params) if Path(args.params).is_absolute() else root / args.params)
    except ParamsError as e:
        print(f"error: bad parameters:\n{e}", file=sys.stderr)
        return 2
    if args.corpus and not Path(args.corpus).expanduser().is_dir() and not (root / args.corpus).is_dir():
        print(f"error: corpus folder not found: {args.corpus}", file=sys.stderr)
        return 2
    corpus = None
    if args.corpus:  # relative to the project when possible: no absolute paths in stored notebooks
        import os
        given = Path(args.corpus).expanduser()
        corpus = os.path.relpath((given if given.is_dir() else root / args.corpus).resolve(), root)
    return run(root, args.params, args.name, corpus, only=args.only)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="qspace", description="qspace-frames: an offline, deterministic document-intelligence workbench.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser(
        "run",
        help="run the pipeline notebooks on a corpus",
        description="Execute notebooks/NN_*.ipynb in order with papermill into reports/NAME/ "
        "(executed .ipynb, HTML, index.html, CSV/JSONL exports). Artifacts already in the store "
        "(same input bytes and parameters) are reused, not recomputed. Exits non-zero naming the "
        "failing notebook and cell.",
    )
    r.add_argument("--corpus", help="folder of documents (default: the project folder holding the most documents)")
    r.add_argument("--params", default="params/default.yaml", help="parameters file (an overlay over params/default.yaml)")
    r.add_argument("--name", default="default", help="run name: the report goes to reports/NAME/")
    r.add_argument("--only", nargs="*", help="run only these notebooks (by number or stem), e.g. --only 01 02")
    r.set_defaults(func=_run)
    n = sub.add_parser("notebooks", help="re-execute notebooks/ in place (the stored default-run outputs)",
                       description="Execute notebooks/NN_*.ipynb in place with their default parameters, so the "
                       "repository shows the outputs of the default run and nbval compares against them.")
    n.add_argument("--only", nargs="*", help="only these notebooks (by number or stem)")
    n.set_defaults(func=lambda a: __import__("qspace_frames.runner", fromlist=["x"]).refresh_notebooks(find_project_root(), a.only))
    k = sub.add_parser("kernel", help="register the project's Jupyter kernel in this environment",
                       description="Write the qspace-frames kernelspec under sys.prefix (used by make's bootstrap).")
    k.set_defaults(func=lambda a: print(f"kernel registered: {__import__('qspace_frames.runner', fromlist=['x']).install_kernel()}") or 0)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

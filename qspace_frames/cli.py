"""Command line: `qspace run`, `qspace notebooks`, `qspace bench`, ..."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from pathlib import Path

from .params import ParamsError, load_params
from .pipeline import CONTRACTNLI, find_project_root, is_project_root
from .runtime.paths import RUN_RECORD, RunRecordError, read_run_record, reports_root, shown

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
RESERVED_NAMES = ("store",)  # reports/store/ is the artifact store's default folder


def run_name(value: str) -> str:
    """A run name as --name and --run take it: one folder under reports/, never a path out of it."""
    if not RUN_NAME.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a run name: up to 100 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (it names reports/NAME/)"
        )
    if value in RESERVED_NAMES:
        raise argparse.ArgumentTypeError(f"{value!r} is reserved: reports/{value}/ holds the artifact store")
    return value


def _unknown_notebooks(paths: list[Path], only: list[str] | None) -> bool:
    """Whether --only names none of the notebooks `paths` (by stem or number); print which if so."""
    from .report.runner import unnamed

    unknown = unnamed(paths, only)
    if unknown:
        stems = ", ".join(p.stem for p in paths)
        print(f"error: --only: no notebook {', '.join(map(repr, unknown))} (the notebooks: {stems})", file=sys.stderr)
    return bool(unknown)


def _bad_params(root: Path, *files: str) -> bool:
    """Validate parameter files before any work; print the file/key/rule message on failure."""
    from .runtime.paths import store_root

    try:
        for f in files:
            path = Path(f) if Path(f).is_absolute() else root / f
            params = load_params(path)
            try:  # the store a folder, too
                store_root(root, params)
            except ParamsError as e:
                raise ParamsError(f"{f}: {e}") from None
    except ParamsError as e:
        print(f"error: bad parameters:\n{e}", file=sys.stderr)
        return True
    return False


def _run(args) -> int:
    from .report.runner import notebooks, run

    root = find_project_root()
    if _bad_params(root, args.params) or _unknown_notebooks(notebooks(root), args.only):
        return 2
    if args.corpus and _not_a_folder(root, args.corpus):
        return 2
    if args.contractnli and _not_a_split(root / Path(args.contractnli).expanduser(), args.contractnli):  # an absolute path stays itself
        return 2
    corpus = _rel(root, args.corpus) if args.corpus else None  # no absolute paths in stored notebooks
    if args.engine != "local":  # the notebooks' Workbench reads it (the engine changes no artifact)
        os.environ["QSPACE_ENGINE"] = args.engine
    return run(root, args.params, args.name, corpus, only=args.only, contractnli=args.contractnli or "")


def _not_a_split(path: Path, given: str) -> bool:
    """Whether --contractnli names no ContractNLI split: no file, or not JSON (said on standard error)."""
    import json

    try:
        json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(f"error: --contractnli: {given}: no such file (a ContractNLI split, e.g. dev.json)", file=sys.stderr)
        return True
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        print(f"error: --contractnli: {given}: not a ContractNLI split ({e})", file=sys.stderr)
        return True
    return False


def _not_a_folder(root: Path, corpus: str) -> bool:
    """Whether --corpus names no folder (said on standard error: what it is instead)."""
    given = Path(corpus).expanduser()
    if given.is_dir() or (root / corpus).is_dir():
        return False
    from .pipeline.workbench import not_a_folder

    print(f"error: {not_a_folder(given if given.is_absolute() or given.exists() else root / given, corpus)}", file=sys.stderr)
    return True


def _rel(root: Path, given: str) -> str:
    """A path as the notebooks should see it: relative to the project when possible."""
    p = Path(given).expanduser()
    return os.path.relpath((p if p.exists() else root / given).resolve(), root)


def _notebooks(args) -> int:
    from .report.runner import refresh_notebooks, refreshed

    root = find_project_root()
    return 2 if _unknown_notebooks(refreshed(root), args.only) else refresh_notebooks(root, args.only)


def _bench(args) -> int:
    from .bench import bench

    return bench(args)


def _kernel(args) -> int:
    from .report.kernels import install_kernel

    print(f"kernel registered: {install_kernel()}")
    return 0


def _sweep(args) -> int:
    from .report.runner import sweep

    root = find_project_root()
    if _bad_params(root, *args.files) or (args.corpus and _not_a_folder(root, args.corpus)):
        return 2
    # each weight set's run is named after its file: two files of one name would share a run
    stems = [Path(f).stem for f in args.files]
    same = sorted({s for s in stems if stems.count(s) > 1})
    if same:
        print(f"error: weight files share a name ({', '.join(same)}): each names its run, rename one", file=sys.stderr)
        return 2
    if args.gold:
        from .evaluation.gold import read_gold

        try:
            read_gold(args.gold)
        except (ValueError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    gold = _rel(root, args.gold) if args.gold else None
    return sweep(root, [_rel(root, f) for f in args.files], _rel(root, args.corpus), args.name, gold=gold)


def _eval(args) -> int:
    from .evaluation.gold import read_gold
    from .report.runner import run

    root = find_project_root()
    if _bad_params(root, args.params):
        return 2
    try:
        gold = read_gold(args.gold)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if gold.is_empty():
        print(f"error: {args.gold}: no gold question (every line is blank)", file=sys.stderr)
        return 2
    code = run(root, _rel(root, args.params), args.name, _rel(root, args.corpus), gold=_rel(root, args.gold))
    if code == 0:
        print(f"Metrics: reports/{args.name}/evaluation/metrics.json")
        _unevaluated_note(root, args.name)
    return code


def _unevaluated_note(root: Path, run: str) -> None:
    """When no gold question of an evaluation could be evaluated (its document unknown or not
    loaded, its span out of range), say why on standard error: metrics.json is then empty, and the
    reasons were only in the notebooks."""
    from .report.dashboard import Run

    gold = Run.open(reports_root(root) / run, root).artifact("evaluation").read("gold")
    if (gold["status"] == "ok").any():
        return
    why = ", ".join(f"{n} {s}" for s, n in gold.group_by("status").len().sort("status").iter_rows())
    print(f"note: none of the {gold.height:,} gold questions could be evaluated ({why}); notebook 07 lists them", file=sys.stderr)


def _finished_run(root: Path, name: str) -> Path | None:
    """reports/NAME when it holds a finished run's record; otherwise say so and return None."""
    run_dir = reports_root(root) / name
    if (run_dir / RUN_RECORD).is_file():
        return run_dir
    print(
        f"error: no finished run named {name!r} (reports/{name}/artifacts.json not found); "
        f"run `qspace run --corpus FOLDER --name {name}` first",
        file=sys.stderr,
    )
    return None


def _ask(args) -> int:
    import json

    from .ask.accuracy import ask_set
    from .ask.answer import ScopeError, to_json, to_text
    from .pipeline import Workbench

    root = find_project_root()
    run = args.run or ("ask" if args.corpus else "default")
    if args.corpus:  # a folder asked directly: what ask reads is computed (or reused) and recorded as the run
        if _not_a_folder(root, args.corpus) or _bad_params(root, args.params):
            return 2
        corpus, params = _rel(root, args.corpus), args.params
    elif run == "default" and not (reports_root(root) / run / RUN_RECORD).is_file():
        corpus, params = "sample_corpus", "params/default.yaml"  # computed on first use
    elif (run_dir := _finished_run(root, run)) is not None:
        try:
            rec = read_run_record(run_dir)
        except RunRecordError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        corpus, params = rec.get("corpus"), rec.get("params_file") or "params/default.yaml"
    else:
        return 2
    if bool(args.questions) == bool(args.question_set):
        print("error: give questions or --questions FILE (one of the two)", file=sys.stderr)
        return 2
    asked = None
    if args.question_set:
        from .ask.accuracy import QuestionSetError, read_question_set

        try:
            asked = read_question_set(args.question_set)
        except (OSError, QuestionSetError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if asked.is_empty():
            print(f"error: {args.question_set}: no question (every line is blank)", file=sys.stderr)
            return 2
    wb = Workbench(params_file=params, corpus_arg=corpus, run_name=run)
    ask = wb.asker()
    try:
        if asked is not None:
            got = ask_set(lambda questions, scope: ask(questions, scope or args.within), asked)
        else:
            got = ask(args.questions, args.within)
    except ScopeError as e:
        print(f"error: --within: {e}" if args.within else f"error: {args.question_set}: scope: {e}", file=sys.stderr)
        return 2
    if asked is not None:
        return _print_scores(asked, got, args.json)
    print(json.dumps(to_json(got), indent=2, ensure_ascii=False) if args.json else to_text(got))
    if (got["status"] == "no_answer").any():
        _unread_note(wb.read("corpus", "inventory"))
    return 0


def _unread_note(inv) -> None:
    """When a question found no answer, whether some of the corpus's files were never read (an
    unsupported format, an error, an empty file): their text cannot answer it. On standard error,
    so that --json stays one document."""
    import polars as pl

    from .corpus.inventory import load_outcome

    unread = inv.filter(~pl.col("load_status").is_in(["loaded", "duplicate"]))
    if inv.is_empty():
        print("note: the corpus holds no file; there is nothing to answer from", file=sys.stderr)
    elif unread.height:
        print(
            f"note: {unread.height:,} of the corpus's {inv.height:,} files were not read ({load_outcome(unread)}); "
            "an answer in them cannot be found (notebook 01 lists them)",
            file=sys.stderr,
        )


def _print_scores(asked, got, as_json: bool) -> int:
    """A question set's answers scored: right answers by kind and split, then each miss."""
    import json

    import polars as pl

    from .ask.accuracy import by_kind, score

    scored = score(asked, got)
    if as_json:
        print(json.dumps(scored.to_dicts(), indent=2, ensure_ascii=False))
        return 0
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, tbl_width_chars=160, fmt_str_lengths=90):
        print(by_kind(scored))
        misses = scored.filter(~pl.col("right")).join(asked.select("id", "question"), on="id")
        if misses.height:
            print(f"\n{misses.height} missed:")
            print(misses.select("id", "kind", "outcome", "question", "quote"))
    return 0


def _report(args) -> int:
    from .report import exports
    from .report.dashboard import ReportError, Run
    from .report.runner import publish, to_html

    root = find_project_root()
    run_dir = _finished_run(root, args.run)
    if run_dir is None:
        return 2
    executed = sorted(run_dir.glob("[0-9][0-9]_*.ipynb"))
    for nb in executed:
        to_html(nb)
    try:
        run = Run.open(run_dir, root)
        steps = exports.steps_of(run)
        written = (exports.write(run, *steps) if steps else []) + exports.write_charts(run)
        index = publish(root, run_dir, executed)
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(
        f"Report rebuilt from stored artifacts ({len(executed)} notebook(s) exported, {len(written)} files written): "
        f"{shown(index, root)}, {shown(run_dir / 'dashboard.html', root)}"
    )
    return 0


def _gc(args) -> int:
    from .runtime import gc
    from .runtime.paths import store_root

    root = find_project_root()
    if _bad_params(root, args.params):
        return 2
    store = store_root(root, load_params(root / args.params))  # an absolute --params stays itself
    records = []
    for rec in sorted(reports_root(root).glob(f"*/{RUN_RECORD}")):  # the kept runs whose store this is
        try:  # a record that cannot be read keeps what it cannot say: nothing is collected
            data = read_run_record(rec.parent)
        except RunRecordError as e:
            print(f"error: {e}; nothing collected", file=sys.stderr)
            return 2
        pf = data.get("params_file") or "params/default.yaml"
        with contextlib.suppress(Exception):  # a run whose parameters file is gone keeps nothing of this store
            if store_root(root, load_params(root / pf)).resolve() == store.resolve():
                records.append(data)
    g = gc.garbage(store, records, keep_recent=args.keep_recent)
    verb = "would remove" if args.dry_run else "removed"
    for p in g.paths() if args.dry_run else []:
        print(f"  {shown(p, root)}")
    freed = g.bytes if args.dry_run else gc.collect(g)
    print(
        f"{len(records)} kept run(s); {verb} {len(g.artifacts)} artifact(s), {len(g.parts)} part(s) and "
        f"{len(g.leftovers)} leftover(s) of dead writers: {freed / 1e6:,.1f} MB{' (dry run: nothing removed)' if args.dry_run else ''}"
    )
    return 0


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
    r.add_argument("--name", default="default", type=run_name, help="run name: the report goes to reports/NAME/")
    r.add_argument("--only", nargs="*", help="run only these notebooks (by number or stem), e.g. --only 01 02")
    r.add_argument(
        "--contractnli",
        metavar="FILE",
        nargs="?",
        const=CONTRACTNLI,
        help="also evaluate a ContractNLI split beside the run, as the stored notebooks do (default file: the "
        "dev split in ../shared/corpora); off by default: a run does not evaluate an unrelated data set",
    )
    r.add_argument(
        "--engine",
        default="local",
        choices=["local", "ray"],
        help="where the per-document stages (load, fragment, detect) run: this process (local) or Ray Data "
        "map_batches on a local Ray instance (needs the `ray` extra); artifacts are byte-identical either way",
    )
    r.set_defaults(func=_run)
    from .bench import parser as bench_parser

    b = sub.add_parser(
        "bench",
        help="measure throughput and peak memory of the pipeline on CUAD, scaled copies and PDFs",
        description="Run the pipeline through the library (no notebooks) on the CUAD contracts as text (x1), scaled "
        "copies of them (x4, x16, generated into --scratch) and the 100 CUAD PDFs, each in a fresh subprocess with a "
        "fresh store. Writes per-stage seconds, documents/s, MB/s and peak RSS to --out (runs.csv, summary.csv, "
        "summary.md) and prints the median table.",
    )
    bench_parser(b)
    b.set_defaults(func=_bench)
    n = sub.add_parser(
        "notebooks",
        help="re-execute notebooks/ in place (the stored default-run outputs)",
        description="Execute notebooks/NN_*.ipynb in place with their default parameters, so the "
        "repository shows the outputs of the default run and nbval compares against them.",
    )
    n.add_argument("--only", nargs="*", help="only these notebooks (by number or stem)")
    n.set_defaults(func=_notebooks)
    s = sub.add_parser(
        "sweep",
        help="compare cost-weight files: trees and evaluation once per file",
        description="Run notebooks 06 (trees) and 07 (evaluation) once per weights file with papermill into "
        "reports/NAME-<file>/, reusing every upstream artifact from the store (the log says so), then the "
        "sweep notebook comparing selected tree shapes and measured metrics across the weight sets in reports/NAME/.",
    )
    s.add_argument("files", nargs="+", help="weights files, e.g. params/weights/*.yaml")
    s.add_argument("--corpus", help="folder of documents (default: sample_corpus)", default="sample_corpus")
    s.add_argument("--gold", help="gold questions of the corpus, JSONL (as qspace eval reads them): recall measured on them")
    s.add_argument("--name", default="sweep", type=run_name, help="report folder name (default: sweep)")
    s.set_defaults(func=_sweep)
    g = sub.add_parser(
        "gc",
        help="remove the store's artifacts and per-document parts no kept run refers to",
        description="Remove from the store (that of --params) every artifact and per-document part that no kept run "
        "(a folder of reports/ with artifacts.json) needs: its artifacts, the artifacts they were computed from, and "
        "the parts they were assembled from; and the temporary files of writers that died. Anything written in the "
        "last --keep-recent seconds stays (a run may be writing it).",
    )
    g.add_argument("--dry-run", action="store_true", help="list what would be removed and the bytes freed, remove nothing")
    g.add_argument("--params", default="params/default.yaml", help="parameters file naming the store (default: params/default.yaml)")
    g.add_argument("--keep-recent", type=float, default=3600.0, metavar="SECONDS", help="never remove what was written this recently")
    g.set_defaults(func=_gc)
    e = sub.add_parser(
        "eval",
        help="run the pipeline and every strategy on a gold question file",
        description="Run every notebook on CORPUS with the gold questions of FILE.jsonl (one object per line: "
        '{"id", "question", "document" (path relative to the corpus), "gold_spans": [[start, end], ...]}, '
        "code-point offsets into the loaded text) and write reports/NAME/evaluation/metrics.json "
        "(strategy x budget x metric) plus the executed notebooks.",
    )
    e.add_argument("--corpus", required=True, help="folder of documents")
    e.add_argument("--gold", required=True, help="gold questions, JSONL")
    e.add_argument("--params", default="params/default.yaml", help="parameters file")
    e.add_argument("--name", required=True, type=run_name, help="run name: the report goes to reports/NAME/")
    e.set_defaults(func=_eval)
    a = sub.add_parser(
        "ask",
        help="answer questions from a run's question space, with cited verbatim quotes",
        description="Parse each question into typed columns (keywords, intents, answer shape and type, scope, "
        "decomposition, clarification) and answer it from the corpus of a finished run: the answer is a verbatim "
        "quote with its document, page, section and character offsets, confirmed by the answer type's pattern on "
        "the same line as a keyword. Unconfirmed: 'no answer found'. Vague: a clarification. Compound: one answer "
        "per sub-question. --json prints a list validated by qspace_frames.ask.answer.ANSWER_JSON_SCHEMA.",
    )
    a.add_argument("questions", nargs="*", help="one or more questions (quote each)")
    a.add_argument(
        "--questions",
        dest="question_set",
        metavar="FILE",
        help="a JSONL question set (id, question, kind, answers: see qspace_frames/ask/accuracy.py): every question "
        "is asked, and scored against its expected answers: right answers by kind, then each miss and why",
    )
    a.add_argument(
        "--run",
        type=run_name,
        help="answer from this run's corpus and parameters (reports/RUN/artifacts.json; default: the run 'default', "
        "or 'ask' with --corpus)",
    )
    a.add_argument(
        "--corpus",
        metavar="FOLDER",
        help="answer from this folder instead of a finished run's: what ask reads is computed on first use (no "
        "notebooks) and recorded as the run --run names",
    )
    a.add_argument("--params", default="params/default.yaml", help="parameters file, with --corpus")
    a.add_argument(
        "--within",
        action="append",
        metavar="GLOB",
        help="answer only from the documents whose path in the corpus or file name matches (repeatable; "
        "e.g. --within 'policies/*.md'); a question set's own `scope` comes first",
    )
    a.add_argument("--json", action="store_true", help="print JSON instead of text")
    a.set_defaults(func=_ask)
    rp = sub.add_parser(
        "report",
        help="rebuild the report of a finished run without recomputing it",
        description="From reports/RUN/artifacts.json and the artifact store: export every executed notebook of "
        "the run to HTML (no network needed to read it), and write index.html, dashboard.html, final_report.md, "
        "run_summary.md and run_metadata.json. Nothing is recomputed; a missing artifact is an error naming it.",
    )
    rp.add_argument("--run", default="default", type=run_name, help="the run's name (its folder under reports/)")
    rp.set_defaults(func=_report)
    k = sub.add_parser(
        "kernel",
        help="register the project's Jupyter kernel in this environment",
        description="Write the qspace-frames kernelspec under sys.prefix (used by make's bootstrap).",
    )
    k.set_defaults(func=_kernel)
    args = ap.parse_args(argv)
    if args.func is not _kernel and not _in_project():
        return 2
    return args.func(args)


def _in_project() -> bool:
    """Whether this folder is in a qspace-frames project (pyproject.toml and params/ here or above):
    started elsewhere, a command wrote its run under the current folder and said it had succeeded."""
    if is_project_root(find_project_root()):
        return True
    here = Path(__file__).resolve().parent.parent
    print(
        f"error: {Path.cwd()} is not in a qspace-frames project (no pyproject.toml and params/ here or above); "
        f"run qspace from the project folder, e.g. cd {here}",
        file=sys.stderr,
    )
    return False


if __name__ == "__main__":
    sys.exit(main())

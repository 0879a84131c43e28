"""`qspace bench`: throughput and peak memory of the pipeline, measured through the library.

The benchmark runs the stages with a `Workbench` (no notebook kernels) on real documents:

- `x1`: the 510 CUAD contracts as text (../shared/corpora/contracts-cuad/txt, 27 MB);
- `x4`, `x16`: scaled copies of it, generated once into a scratch folder (default
  reports/bench/corpora, git-ignored): copy 0 is the corpus unchanged, copy i > 0 has a distinct
  first line, so every copy is a new document with new ids and nothing is deduplicated;
- `pdf`: the 100 CUAD PDFs (../shared/corpora/contracts-cuad/pdf), with the pool of `workers`
  processes; `pdf-w1`: the same load (corpus stage) in one process, for the pool's speed-up;
- `cnli-dev`, `pqa-dev`: the ContractNLI and PolicyQA development splits converted into a corpus
  and a gold file, run through evaluation: each strategy's evidence recall at every budget
  beside the seconds (quality and speed from the same run).

Each measurement runs in a fresh subprocess with a fresh artifact store, so its peak RSS
(`ru_maxrss` of the child, from `os.wait4`: the largest single process of the run and its pool)
is its own; the peak of the run and its pool together is sampled from /proc as well. The child reports the seconds of
discovery and of each stage (from the Workbench's stage_log.jsonl), so a run's end-to-end time
is discovery + every stage, without interpreter start-up. A measurement repeated N times
reports the median of each column. Results go to reports/bench/: `runs.csv` (every run),
`summary.csv` and `summary.md` (medians), read by notebooks/bench.ipynb.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .runtime.paths import reports_root
from .runtime.workers import shipped_bytes

CUAD = Path("..") / "shared" / "corpora" / "contracts-cuad"
SCALES = {"x1": 1, "x4": 4, "x16": 16}
# `<corpus>-run`: `qspace run` through the notebooks on that corpus, beside its library row; then
# the same run again (every notebook kept) and a new run name (every artifact stored)
RUNS = ("sample-run", "cuad50-run", "x1-run")
# the development splits of two real gold sets, converted into a corpus and a gold file and run
# through evaluation: retrieval quality reported beside speed (`<name>_r<budget>` per strategy)
GOLD_SETS = {"cnli-dev": ("qa-contractnli-dev", "contractnli"), "pqa-dev": ("qa-policyqa-dev", "policyqa")}
QUALITY = ("qspace", "ask", "bm25_chunks")  # the strategies whose recall the evaluation rows report
# `x1-inc`: incremental updates of x1 (issue 24): the full run, then one contract added, then one
# changed, then nothing changed, each a new Workbench over the same store (`added_s`, `changed_s`, `unchanged_s`)
INCREMENTAL = "x1-inc"
DEFAULT_CORPORA = ("x1", "x4", "x16", "pdf", "pdf-w1", "sample", "cuad50", *RUNS, *GOLD_SETS, INCREMENTAL)
CUAD50 = 50  # the first contracts of CUAD txt: the subset the report's cost was first measured on
DEFAULT_REPEAT = {"x1": 3}  # every other corpus: 1 (x16 alone takes minutes)
PER_DOC = ("corpus", "structure", "fragments", "affordances")
MB = 1e6  # megabytes are 10^6 bytes of document files


@dataclass(frozen=True)
class Spec:
    name: str
    corpus: Path
    upto: str  # last stage run
    workers: int
    engine: str
    mode: str = "library"  # or "notebooks": `qspace run`; "gold": the library with a gold set (`corpus`: its split file)


def subset(src: Path, n: int, dest: Path) -> Path:
    """The first n files of src (path order), copied once into dest."""
    files = sorted(f for f in src.rglob("*") if f.is_file() and not f.name.startswith("."))[:n]
    if not (dest / ".complete").is_file():
        shutil.rmtree(dest, ignore_errors=True)
        for f in files:
            (dest / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest / f.relative_to(src))
        (dest / ".complete").write_text(str(n), encoding="utf-8")
    return dest


def scaled_corpus(src: Path, k: int, dest: Path) -> Path:
    """`k` copies of the files under src in dest/copyNN/: copy 0 unchanged, copy i > 0 with a
    distinct first line (so its bytes, doc_id and every later id differ). Made once: reused when
    dest/.complete matches the source listing."""
    files = sorted(f for f in src.rglob("*") if f.is_file() and not f.name.startswith("."))
    stamp = json.dumps({"k": k, "src": str(src.resolve()), "files": [[f.relative_to(src).as_posix(), f.stat().st_size] for f in files]})
    done = dest / ".complete"
    if done.is_file() and done.read_text(encoding="utf-8") == stamp:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    for i in range(k):
        for f in files:
            out = dest / f"copy{i:02d}" / f.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            data = f.read_bytes()
            out.write_bytes(data if i == 0 else f"Benchmark copy {i} of {f.name}\n".encode("utf-8") + data)
    done.write_text(stamp, encoding="utf-8")
    return dest


def specs(root: Path, names: list[str], scratch: Path, workers: int, engine: str, upto: str) -> list[Spec]:
    cuad = (root / CUAD).resolve()
    out = []
    for name in names:
        if name in SCALES:
            k = SCALES[name]
            corpus = cuad / "txt" if k == 1 else scaled_corpus(cuad / "txt", k, scratch / f"cuad-txt-{name}")
            out.append(Spec(name, corpus, upto, workers, engine))
        elif name == "pdf":
            out.append(Spec(name, cuad / "pdf", upto, workers, engine))
        elif name == "pdf-w1":
            out.append(Spec(name, cuad / "pdf", "corpus", 1, "local"))
        elif name.removesuffix("-run") in ("sample", "cuad50", "x1"):
            base = name.removesuffix("-run")
            corpus = {"sample": root / "sample_corpus", "x1": cuad / "txt"}.get(base) or subset(
                cuad / "txt", CUAD50, scratch / "cuad-txt-50"
            )
            out.append(Spec(name, corpus, upto, workers, engine, "notebooks" if name.endswith("-run") else "library"))
        elif name == INCREMENTAL:
            out.append(Spec(name, cuad / "txt", upto, workers, engine, "incremental"))
        elif name in GOLD_SETS:
            folder, _ = GOLD_SETS[name]
            out.append(Spec(name, (root / CUAD).parent.resolve() / folder / "dev.json", upto, workers, engine, "gold"))
        else:
            raise ValueError(f"unknown bench corpus {name!r}: choose from {', '.join(DEFAULT_CORPORA)}")
    return out


# ---- one measurement, in a fresh process ----------------------------------------------------------


def child_run(spec: dict) -> dict:
    """`qspace run` through the notebooks with a fresh store, then the same run again (nothing
    changed: every notebook kept), then under a new run name (every artifact stored); seconds of
    each (runs in the child)."""
    import io

    from .corpus.inventory import discover
    from .params import load_params
    from .report.runner import run

    tmp, root = Path(spec["tmp"]), Path(spec["root"])
    params = tmp / "params.yaml"
    params.write_text(f"store:\n  root: {tmp / 'store'}\n", encoding="utf-8")
    names = [f"bench-{Path(spec['tmp']).name}-{i}" for i in (1, 2)]
    seconds = []
    try:
        for name in (names[0], names[0], names[1]):
            t0, out = time.perf_counter(), io.StringIO()
            if run(root, str(params), name, spec["corpus"], out=out) != 0:
                raise RuntimeError(f"qspace run failed on {spec['corpus']}:\n{out.getvalue()[-3000:]}")
            seconds.append(time.perf_counter() - t0)
        files = discover(spec["corpus"], load_params(params).corpus)
    finally:
        for name in names:
            shutil.rmtree(reports_root(root) / name, ignore_errors=True)
    return {
        "files": files.height,
        "mb": (files["bytes"].sum() or 0) / MB,
        "discovery_s": 0.0,
        "stages": {},
        "run_s": seconds[0],
        "rerun_s": seconds[1],
        "new_name_s": seconds[2],
        "total_s": seconds[0],
        "cpu_s": time.process_time() + _children_cpu(),
    }


def child_incremental(spec: dict) -> dict:
    """The corpus copied into the scratch folder and run up to spec['upto'] with a fresh store; then
    one contract added (a copy of the first with a distinct first line), one changed (a sentence
    appended to the second), and nothing changed, each run by a new Workbench over the same store:
    the seconds of each and the documents its per-document stages computed (runs in the child)."""
    from .pipeline import STAGES, Workbench

    tmp = Path(spec["tmp"])
    corpus = tmp / "corpus"
    shutil.copytree(spec["corpus"], corpus)
    params = tmp / "params.yaml"
    params.write_text(f"store:\n  root: {tmp / 'store'}\n", encoding="utf-8")
    files = sorted(f for f in corpus.rglob("*") if f.is_file())
    names = list(STAGES)[: list(STAGES).index(spec["upto"]) + 1]

    def added():
        (corpus / "added.txt").write_bytes(b"An added contract\n" + files[0].read_bytes())

    def changed():
        with open(files[1], "ab") as fh:
            fh.write(b"\nThis sentence was added to change the contract.\n")

    out = {"files": len(files), "mb": sum(f.stat().st_size for f in files) / MB, "discovery_s": 0.0, "stages": {}}
    for step, edit in (("full", None), ("added", added), ("changed", changed), ("unchanged", None)):
        if edit:
            edit()
        t0 = time.perf_counter()
        wb = Workbench(
            params_file=str(params),
            corpus_arg=str(corpus),
            run_name="bench",
            project_root=Path(spec["root"]),
            reports_dir=tmp / "reports",
            workers=spec["workers"],
            engine=spec["engine"],
        )
        for stage in names:
            wb.artifact(stage)
        out[f"{step}_s"] = time.perf_counter() - t0
        out[f"{step}_docs_computed"] = wb.documents().get("corpus", {}).get("computed", 0)
        log = [json.loads(line) for line in (wb.run_dir / "stage_log.jsonl").read_text(encoding="utf-8").splitlines()]
        mine = [e for e in log[-len(names) :] if e["action"] == "computed"]  # this step's entries
        out[f"{step}_per_doc_s"] = sum(e["seconds"] for e in mine if e["stage"] in (*PER_DOC, "chunks"))
        out[f"{step}_global_s"] = sum(e["seconds"] for e in mine if e["stage"] not in (*PER_DOC, "chunks"))
    out["total_s"] = out["full_s"]
    out["cpu_s"] = time.process_time() + _children_cpu()
    return out


def child(spec: dict) -> dict:
    """Run the stages up to spec['upto'] with a fresh store; return the timings (runs in the child)."""
    from .pipeline import STAGES, Workbench

    if spec.get("mode") == "notebooks":
        return child_run(spec)
    if spec.get("mode") == "incremental":
        return child_incremental(spec)

    tmp = Path(spec["tmp"])
    params = tmp / "params.yaml"
    params.write_text(f"store:\n  root: {tmp / 'store'}\n", encoding="utf-8")
    corpus, gold = spec["corpus"], None
    if spec.get("mode") == "gold":  # the split converted first, outside the timing
        from .evaluation import gold_sets

        convert = {"contractnli": gold_sets.contractnli_to_gold, "policyqa": gold_sets.policyqa_to_gold}[GOLD_SETS[spec["name"]][1]]
        gold = str(convert(corpus, tmp / "gold-set"))
        corpus = str(tmp / "gold-set" / "docs")
    t0 = time.perf_counter()
    wb = Workbench(
        params_file=str(params),
        corpus_arg=corpus,
        gold=gold,
        run_name="bench",
        project_root=Path(spec["root"]),
        reports_dir=tmp / "reports",
        workers=spec["workers"],
        engine=spec["engine"],
    )
    files = wb.files()
    discovery = time.perf_counter() - t0
    names, peaks = list(STAGES), {}
    for stage in names[: names.index(spec["upto"]) + 1]:
        # which stage holds the most (this process and its pool together)
        sampler = TreeSampler(os.getpid())
        wb.artifact(stage)
        peaks[f"{stage}_peak_mb"] = sampler.stop()
    total = time.perf_counter() - t0
    log = [json.loads(line) for line in (wb.run_dir / "stage_log.jsonl").read_text(encoding="utf-8").splitlines()]
    inv = wb.read("corpus", "inventory")
    quality = {}
    if gold is not None and spec["upto"] == "evaluation":
        recall = wb.read("evaluation", "metrics").filter((pl.col("metric") == "evidence_recall") & pl.col("strategy").is_in(QUALITY))
        quality = {f"{r['strategy']}_r{r['budget']}": r["value"] for r in recall.iter_rows(named=True)}
        quality["questions"] = wb.read("evaluation", "gold").filter(pl.col("status") == "ok").height
    return {
        "files": files.height,
        "mb": (files["bytes"].sum() or 0) / MB,
        "loaded": int((inv["load_status"] == "loaded").sum()),
        "discovery_s": discovery,
        "stages": {e["stage"]: e["seconds"] for e in log if e["action"] == "computed"},
        "total_s": total,
        "cpu_s": time.process_time() + _children_cpu(),
        **peaks,
        **quality,
    }


def _children_cpu() -> float:
    """CPU seconds of the finished pool processes (they are waited for when a pool shuts down)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _tree_rss_mb(pid: int) -> float:
    """RSS summed over a process and all its descendants (from /proc), plus the frames in transit
    between the process and its pool (files in shared memory), MB; 0 where /proc is missing."""
    parents: dict[int, list[int]] = {}
    for d in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", encoding="utf-8") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(d))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        todo += parents.get(p, [])
        try:
            with open(f"/proc/{p}/statm", encoding="utf-8") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except (OSError, ValueError, IndexError):
            pass
    return total + shipped_bytes(pid) / 2**20


class TreeSampler:
    """Peak of the RSS summed over a process tree (the run and its worker pool at the same moment),
    sampled every `every` seconds in a thread: ru_maxrss only gives the largest single process."""

    def __init__(self, pid: int, every: float = 0.2):
        import threading

        self.pid, self.every, self.peak = pid, every, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss_mb(self.pid))
            self._stop.wait(self.every)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def measure(spec: Spec, root: Path) -> dict:
    """One fresh subprocess: its report plus its peak RSS (ru_maxrss of the child and its pool)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"qspace-bench-{spec.name}-"))
    try:
        payload = json.dumps(
            {
                "corpus": str(spec.corpus),
                "upto": spec.upto,
                "workers": spec.workers,
                "engine": spec.engine,
                "tmp": str(tmp),
                "root": str(root),
                "mode": spec.mode,
                "name": spec.name,
            }
        )
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "qspace_frames.bench", "--child", payload], cwd=root, stdout=subprocess.PIPE, env=env
        )
        sampler = TreeSampler(proc.pid)
        out = proc.stdout.read()
        tree_peak = sampler.stop()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"bench run {spec.name} failed with exit code {proc.returncode}")
        rep = json.loads(out.decode("utf-8").strip().splitlines()[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    st = rep.pop("stages")
    e2e = rep.get("run_s") or rep.get("full_s") or rep["discovery_s"] + sum(st.values())  # `qspace run`, x1-inc: its whole wall time
    row = {
        "corpus": spec.name,
        "engine": spec.engine,
        "workers": spec.workers,
        "upto": spec.upto,
        **rep,
        **{f"{s}_s": v for s, v in st.items()},
        "per_doc_s": rep["discovery_s"] + sum(st.get(s, 0.0) for s in PER_DOC),
        "global_s": sum(v for s, v in st.items() if s not in PER_DOC),
        "e2e_s": e2e,
        "wall_s": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        # the run's process and its pool together (sampled): what the machine must hold at once
        "peak_tree_rss_mb": tree_peak,
        # the machine's 1-minute load average before and after: other work competing for the cores
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }
    row["docs_per_s"] = row["files"] / e2e
    row["mb_per_s"] = row["mb"] / e2e
    return row


# ---- the bench ------------------------------------------------------------------------------------


def summarise(runs: pl.DataFrame) -> pl.DataFrame:
    """Median of every measured column per corpus (in run order), with the repeat count."""
    num = [c for c, t in runs.schema.items() if t.is_numeric() and c not in ("workers", "repeat")]
    return runs.group_by("corpus", "engine", "workers", "upto", maintain_order=True).agg(
        pl.len().alias("repeats"), *[pl.col(c).median() for c in num]
    )


def targets(summary: pl.DataFrame) -> dict:
    """The issue's targets, from the medians: MB/s end to end on x1, x16/x1 time, x16 peak RSS, PDF
    pool speed-up. Only like is compared with like: x16 and x1 measured up to the same stage, the
    pooled PDF loading against the one-process loading."""
    rows = list(summary.iter_rows(named=True))

    def pick(corpus: str, upto: str | None = None) -> dict | None:
        got = [r for r in rows if r["corpus"] == corpus and (upto is None or r["upto"] == upto)]
        return next((r for r in got if r["upto"] == "evaluation"), got[0] if got else None)

    def span(upto: str) -> str:
        return "end to end" if upto == "evaluation" else f"discovery to {upto}"

    out = {}
    x1 = pick("x1")
    if x1:
        out[f"x1 MB/s, {span(x1['upto'])} (target >= 2 end to end)"] = x1["mb_per_s"]
    for upto in ("evaluation", "affordances", "fragments", "corpus"):
        a, b = pick("x1", upto), pick("x16", upto)
        if a and b and a["upto"] == b["upto"] == upto:
            out[f"time x16 / x1, {span(upto)} (target <= 18)"] = b["e2e_s"] / a["e2e_s"]
            out[f"x16 peak RSS MB, {span(upto)} (target <= 2048)"] = b["peak_rss_mb"]
            if b.get("peak_tree_rss_mb") is not None:
                out[f"x16 peak RSS of the run and its pool together MB, {span(upto)}"] = b["peak_tree_rss_mb"]
            break
    for name in ("sample", "cuad50", "x1"):  # the report's cost: `qspace run` against the library path
        lib, nb = pick(name), pick(f"{name}-run")
        if nb and lib:
            out[f"{name}: qspace run s / (1.5 x library s + 6) (target <= 1)"] = nb["e2e_s"] / (1.5 * lib["e2e_s"] + 6)
            out[f"{name}: qspace run peak RSS of the process tree MB - library's (target <= 1024)"] = (
                nb["peak_tree_rss_mb"] - lib["peak_tree_rss_mb"]
            )
        if nb:
            out[f"{name}: qspace run, every artifact stored, new run name s" + (" (target < 8)" if name == "sample" else "")] = nb[
                "new_name_s"
            ]
            out[f"{name}: qspace run again, nothing changed s (target < 3)"] = nb["rerun_s"]
        if nb and name == "sample":
            out["sample: qspace run from an empty store s (target < 20)"] = nb["e2e_s"]
    inc = pick(INCREMENTAL)
    if inc and inc.get("full_s"):
        for step in ("added", "changed", "unchanged"):
            out[
                f"x1: {step} one contract, rerun / full run (target <= 0.25)" if step != "unchanged" else "x1: nothing changed, rerun s"
            ] = inc[f"{step}_s"] / inc["full_s"] if step != "unchanged" else inc["unchanged_s"]
    one, pool = pick("pdf-w1", "corpus"), pick("pdf", "corpus") or pick("pdf")
    if one and pool and pool.get("corpus_s"):
        out[f"PDF load speed-up, {pool['workers']} workers vs 1 (target >= 1.8)"] = one["corpus_s"] / pool["corpus_s"]
    return out


def markdown(summary: pl.DataFrame) -> str:
    cols = [
        ("corpus", "corpus", "{}"),
        ("upto", "up to", "{}"),
        ("workers", "workers", "{}"),
        ("files", "files", "{:.0f}"),
        ("mb", "MB", "{:.1f}"),
        ("repeats", "runs", "{}"),
        ("discovery_s", "discover s", "{:.1f}"),
        ("corpus_s", "load s", "{:.1f}"),
        ("fragments_s", "fragment s", "{:.1f}"),
        ("affordances_s", "detect s", "{:.1f}"),
        ("global_s", "global stages s", "{:.1f}"),
        ("e2e_s", "end to end s", "{:.1f}"),
        ("docs_per_s", "docs/s", "{:.1f}"),
        ("mb_per_s", "MB/s", "{:.2f}"),
        ("peak_rss_mb", "peak RSS MB", "{:.0f}"),
        ("peak_tree_rss_mb", "peak RSS with pool MB", "{:.0f}"),
        ("rerun_s", "rerun, nothing changed s", "{:.1f}"),
        ("new_name_s", "new run name s", "{:.1f}"),
        ("added_s", "one added s", "{:.1f}"),
        ("changed_s", "one changed s", "{:.1f}"),
        ("unchanged_s", "none changed s", "{:.1f}"),
        ("load_before", "load avg", "{:.1f}"),
    ]
    cols = [c for c in cols if c[0] in summary.columns]
    lines = ["| " + " | ".join(h for _, h, _ in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in summary.iter_rows(named=True):
        cells = []
        for c, _, f in cols:
            v = r.get(c)
            cells.append("" if v is None else f.format(v))
        lines.append("| " + " | ".join(cells) + " |")
    q = quality(summary)
    if q.height:
        lines += ["", "Evidence recall on the development gold sets (share of gold characters loaded within B tokens):", ""]
        lines += ["| " + " | ".join(q.columns) + " |", "|" + "|".join("---" for _ in q.columns) + "|"]
        lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in q.rows()]
    t = targets(summary)
    if t:
        lines += [""] + [f"- {k}: {v:.2f}" for k, v in t.items()]
    return "\n".join(lines) + "\n"


def quality(summary: pl.DataFrame) -> pl.DataFrame:
    """The gold-set rows: questions, seconds end to end and each QUALITY strategy's recall at every
    budget (columns `<strategy> @<budget>`); no rows when no gold set was measured."""
    recall = [c for c in summary.columns if any(c.startswith(f"{q}_r") for q in QUALITY)]
    if not recall or "questions" not in summary.columns:
        return pl.DataFrame()
    return summary.filter(pl.col("questions").is_not_null()).select(
        pl.col("corpus").alias("set"),
        pl.col("questions").cast(pl.Int64),
        pl.col("e2e_s").round(1).alias("end to end s"),
        *[pl.col(c).round(3).alias(c.replace("_r", " @")) for c in recall],
    )


def run_bench(
    root: Path, names: list[str], repeat: int | None, workers: int, engine: str, upto: str, out: Path, scratch: Path, notebook: bool = True
) -> pl.DataFrame:
    t0 = time.perf_counter()
    rows = []
    todo = [(spec, repeat or DEFAULT_REPEAT.get(spec.name, 1)) for spec in specs(root, names, scratch, workers, engine, upto)]
    # repeats interleaved (round 1 of every corpus, then round 2, ...): a burst of other work on a
    # shared machine then spreads over the corpora instead of skewing one of them
    for i in range(max(n for _, n in todo) if todo else 0):
        for spec, n in todo:
            if i >= n:
                continue
            print(f"bench {spec.name} ({spec.engine}, workers={spec.workers}, up to {spec.upto}) run {i + 1}/{n} ...", flush=True)
            row = measure(spec, root)
            rows.append({"repeat": i + 1, **row})
            top = max((c for c in row if c.endswith("_peak_mb")), key=lambda c: row[c], default=None)
            where = f"; the most in {top.removesuffix('_peak_mb')}: {row[top]:.0f} MB" if top else ""
            again = f"; again {row['rerun_s']:.1f} s, new run name {row['new_name_s']:.1f} s" if "rerun_s" in row else ""
            print(
                f"  {row['e2e_s']:.1f} s end to end{again}, {row['mb_per_s']:.2f} MB/s, peak RSS {row['peak_rss_mb']:.0f} MB "
                f"({row['peak_tree_rss_mb']:.0f} MB with the pool{where})",
                flush=True,
            )
    order = {spec.name: k for k, (spec, _) in enumerate(todo)}
    rows.sort(key=lambda r: (order[r["corpus"]], r["repeat"]))
    runs = pl.DataFrame(rows, infer_schema_length=None)
    stage_cols = sorted((c for c in runs.columns if c.endswith("_s")), key=lambda c: c)
    runs = runs.select([c for c in runs.columns if c not in stage_cols] + stage_cols)
    summary = summarise(runs)
    out.mkdir(parents=True, exist_ok=True)
    runs.write_csv(out / "runs.csv")
    summary.write_csv(out / "summary.csv")
    md = markdown(summary)
    (out / "summary.md").write_text(md, encoding="utf-8")
    print()
    print(md)
    if notebook:
        report = execute_notebook(root, out)
        print(f"notebook: {report}")
    print(f"bench wall time {time.perf_counter() - t0:.0f} s; results in {out}")
    return summary


def execute_notebook(root: Path, out: Path) -> Path:
    """notebooks/bench.ipynb executed on the results into out/bench.ipynb (and .html)."""
    import papermill as pm

    from .report.kernels import kernel_name
    from .report.runner import to_html

    target = out / "bench.ipynb"
    pm.execute_notebook(
        str(root / "notebooks" / "bench.ipynb"),
        str(target),
        kernel_name=kernel_name(),
        language="python",
        cwd=str(root),
        progress_bar=False,
        log_output=False,
        parameters={"results": os.path.relpath(out, root)},
    )
    to_html(target)
    return target


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        print(json.dumps(child(json.loads(argv[1]))), flush=True)
        return 0
    args = parser().parse_args(argv)
    return bench(args)


def parser(ap: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    from .pipeline import STAGES

    ap = ap or argparse.ArgumentParser(prog="qspace bench")
    ap.add_argument(
        "--corpora",
        nargs="+",
        default=list(DEFAULT_CORPORA),
        choices=DEFAULT_CORPORA,
        help="what to measure (default: all): x1 = CUAD txt, x4 and x16 scaled copies, pdf = the 100 CUAD PDFs "
        "with the pool, pdf-w1 = their loading in one process, sample = the sample corpus, cuad50 = the first 50 "
        "CUAD contracts; NAME-run = `qspace run` through the notebooks on NAME (then again, then under a new name); "
        "cnli-dev, pqa-dev = the ContractNLI and PolicyQA development splits through evaluation, with each strategy's recall",
    )
    ap.add_argument(
        "--repeat", type=int, default=None, help="runs per corpus, the median is reported (default: 3 for x1, 1 for the others)"
    )
    ap.add_argument("--workers", type=int, default=2, help="processes for the per-document stages (default 2)")
    ap.add_argument("--engine", default="local", choices=["local", "ray"], help="engine of the per-document stages")
    ap.add_argument("--upto", default="evaluation", choices=list(STAGES), help="last stage measured (default: evaluation, end to end)")
    ap.add_argument("--out", default="reports/bench", help="results folder (default reports/bench)")
    ap.add_argument("--scratch", default="reports/bench/corpora", help="where the scaled corpora are generated")
    ap.add_argument(
        "--no-notebook", dest="notebook", action="store_false", help="do not execute notebooks/bench.ipynb into the results folder"
    )
    return ap


def bench(args) -> int:
    from .pipeline import find_project_root

    root = find_project_root()
    if not (root / CUAD).is_dir():
        print(f"error: the CUAD corpus is missing: expected {root / CUAD}", file=sys.stderr)
        return 2
    if args.repeat is not None and args.repeat < 1:
        print("error: --repeat must be at least 1", file=sys.stderr)
        return 2
    out, scratch = Path(args.out), Path(args.scratch)
    run_bench(
        root,
        args.corpora,
        args.repeat,
        args.workers,
        args.engine,
        args.upto,
        out if out.is_absolute() else root / out,
        scratch if scratch.is_absolute() else root / scratch,
        args.notebook,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())


# ---- charts for notebooks/bench.ipynb (one bar per corpus and stage: the size never grows) ----------


def read_results(folder: str | Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(runs, summary) written by the bench."""
    folder = Path(folder)
    return pl.read_csv(folder / "runs.csv"), pl.read_csv(folder / "summary.csv")


def with_run(summary: pl.DataFrame) -> pl.DataFrame:
    """A label per measurement: the corpus and the last stage measured, e.g. 'x16 to affordances'."""
    return summary.with_columns((pl.col("corpus") + pl.lit(" to ") + pl.col("upto")).alias("run"))


def stage_seconds(summary: pl.DataFrame) -> pl.DataFrame:
    """Median seconds per corpus and stage (discovery first, then the stages in pipeline order)."""
    from .pipeline import STAGES

    order = ["discovery", *STAGES]
    cols = [f"{s}_s" for s in order if f"{s}_s" in summary.columns]
    return (
        with_run(summary)
        .select("run", *cols)
        .unpivot(index="run", variable_name="stage", value_name="seconds")
        .drop_nulls("seconds")
        .with_columns(pl.col("stage").str.strip_suffix("_s"))
        .with_columns(pl.col("stage").replace_strict({s: i for i, s in enumerate(order)}, return_dtype=pl.Int64).alias("order"))
    )


def stage_chart(summary: pl.DataFrame):
    import altair as alt

    df = stage_seconds(summary)
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("seconds:Q", title="median seconds"),
            y=alt.Y("run:N", sort=list(with_run(summary)["run"])),
            color=alt.Color("stage:N", sort=alt.SortField("order")),
            order=alt.Order("order:Q"),
            tooltip=["run", "stage", alt.Tooltip("seconds:Q", format=".2f")],
        )
        .properties(title="Where the time goes: seconds per stage (median)", width=420)
    )


def throughput_chart(summary: pl.DataFrame):
    import altair as alt

    df = summary.filter(pl.col("upto") == "evaluation").select("corpus", "mb_per_s", "docs_per_s")
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("mb_per_s:Q", title="MB of documents per second, end to end"),
            y=alt.Y("corpus:N", sort=list(df["corpus"])),
            tooltip=["corpus", alt.Tooltip("mb_per_s:Q", format=".2f"), alt.Tooltip("docs_per_s:Q", format=".1f")],
        )
    )
    target = alt.Chart(pl.DataFrame({"target": [2.0]})).mark_rule(color="firebrick", strokeDash=[4, 3]).encode(x="target:Q")
    return (bars + target).properties(title="End-to-end throughput (dashed: the 2 MB/s target)", width=420)


def memory_chart(summary: pl.DataFrame):
    import altair as alt

    names = {"peak_rss_mb": "largest process", "peak_tree_rss_mb": "run and pool together"}
    df = (
        with_run(summary)
        .select("run", *[c for c in names if c in summary.columns])
        .unpivot(index="run", variable_name="measure", value_name="MB")
        .drop_nulls("MB")
        .with_columns(pl.col("measure").replace_strict(names, return_dtype=pl.String))
    )
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("MB:Q", title="peak RSS, MB"),
            y=alt.Y("measure:N", title=None),
            row=alt.Row("run:N", sort=list(with_run(summary)["run"])),
            color="measure:N",
            tooltip=["run", "measure", alt.Tooltip("MB:Q", format=".0f")],
        )
    )
    return bars.properties(title="Peak memory (the target: 2 GB at x16)", width=420)


def scaling_chart(summary: pl.DataFrame):
    """End-to-end and per-document seconds against the corpus scale, with linear scaling from x1."""
    import altair as alt

    df = summary.filter(pl.col("corpus").is_in(list(SCALES)))
    # one measurement per scale: the stage span the largest scale was measured to
    if df.height:
        span = df.sort(pl.col("corpus").replace_strict(SCALES, return_dtype=pl.Int64))["upto"][-1]
        df = df.filter(pl.col("upto") == span)
    df = df.with_columns(pl.col("corpus").replace_strict(SCALES, return_dtype=pl.Int64).alias("scale"))
    if df.is_empty():
        return alt.Chart(pl.DataFrame({"x": []})).mark_point()
    x1 = df.filter(pl.col("scale") == 1)
    long = df.select("scale", pl.col("e2e_s").alias("measured"), pl.col("per_doc_s").alias("per-document stages")).unpivot(
        index="scale", variable_name="measure", value_name="seconds"
    )
    if x1.height:
        lin = pl.DataFrame({"scale": df["scale"], "measure": ["linear from x1"] * df.height, "seconds": df["scale"] * x1["e2e_s"][0]})
        long = pl.concat([long, lin.with_columns(pl.col("seconds").cast(pl.Float64))])
    return (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x=alt.X("scale:Q", title="corpus scale (copies of CUAD txt)", scale=alt.Scale(type="log", base=2)),
            y=alt.Y("seconds:Q", scale=alt.Scale(type="log")),
            color="measure:N",
            tooltip=["scale", "measure", alt.Tooltip("seconds:Q", format=".1f")],
        )
        .properties(title="Scaling: seconds against corpus size (log-log)", width=420)
    )

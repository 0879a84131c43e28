#!/usr/bin/env python3
"""Score `ask` on a question set over the real corpora, corpus by corpus, as `qspace ask --questions` does.

Each question names its corpus folder (`corpus`): a folder of ../shared/corpora, `sample_corpus`, or
`qa-policyqa-dev` (converted into a corpus folder first, as `qspace eval` would). The stages `ask`
reads are computed once into the store (reports/store by default, reused on the next call), then
every question of the corpus is asked through `Workbench.ask` and scored (`ask.accuracy`).

    .venv/bin/python scripts/ask_dev.py                       # tests/data/ask_dev/*.jsonl
    .venv/bin/python scripts/ask_dev.py my_set.jsonl --out reports/ask_dev.json --misses
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import polars as pl

from qspace_frames.ask.accuracy import ask_set, by_kind, read_question_set, score, verdicts
from qspace_frames.evaluation.gold_sets import policyqa_to_gold
from qspace_frames.pipeline import Workbench
from qspace_frames.pipeline.workbench import ASK_TABLES
from qspace_frames.runtime.paths import reports_root

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"


def corpus_folder(name: str) -> Path:
    """The folder a question set's `corpus` names."""
    if name == "sample_corpus":
        return ROOT / "sample_corpus"
    if name.startswith("unseen/"):  # a folder scripts/unseen_corpora.py fetches
        return reports_root(ROOT) / name
    if name == "qa-policyqa-dev":  # a gold set: its policies become a corpus folder
        out = reports_root(ROOT) / "policyqa-dev"
        policyqa_to_gold(CORPORA / name / "dev.json", out)
        return out / "docs"
    return CORPORA / name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", help="question set JSONL files (default: tests/data/ask_dev/*.jsonl)")
    ap.add_argument("--out", help="write every question's outcome and quote here (JSON)")
    ap.add_argument("--misses", action="store_true", help="print each miss")
    ap.add_argument("--corpus", action="append", help="only the questions of this corpus (repeatable)")
    ap.add_argument("--params", default="params/default.yaml", help="parameters file (default: params/default.yaml)")
    args = ap.parse_args(argv)
    sets = args.sets or sorted(str(p) for p in (ROOT / "tests" / "data" / "ask_dev").glob("*.jsonl"))
    qs = read_question_set(*sets)
    if args.corpus:
        qs = qs.filter(pl.col("corpus").is_in(args.corpus))
    scored = []
    for corpus in sorted(qs["corpus"].unique().to_list()):
        part = qs.filter(pl.col("corpus") == corpus)
        t0 = time.perf_counter()
        wb = Workbench(params_file=args.params, corpus_arg=str(corpus_folder(corpus)), run_name=f"askdev-{corpus}", project_root=ROOT)
        for ref in ASK_TABLES:
            wb.artifact(ref.split("/")[0])
        t1 = time.perf_counter()
        got = ask_set(wb.asker(), part)
        t2 = time.perf_counter()
        s = score(part, got).with_columns(pl.lit(corpus).alias("corpus"))
        print(f"{corpus}: {s['right'].sum()} of {s.height} right (stages {t1 - t0:.1f} s, ask {t2 - t1:.1f} s)", file=sys.stderr)
        scored.append(s.join(part.select("id", "question", "answers"), on="id"))
    allq = pl.concat(scored)
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, tbl_width_chars=200, fmt_str_lengths=120):
        for split in ("dev", "holdout"):
            print(f"\n== {split}")
            print(by_kind(allq.filter(pl.col("split") == split)))
        print("\nyes/no verdicts")
        print(verdicts(allq))
        if args.misses:
            print(allq.filter(~pl.col("right")).select("id", "kind", "outcome", "question", "answers", "quote"))
    if args.out:
        Path(args.out).write_text(json.dumps(allq.to_dicts(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

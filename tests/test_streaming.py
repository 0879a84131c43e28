"""Streaming machinery: tables written batch by batch, shards cut from batches, the external sort.

A stage that streams must give the same artifact as one that returns whole frames, whatever the
batch boundaries: these tests cut real rows (the sample corpus's pages and fragments) at many
different places and check bytes, hashes, order and coverage.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT

from qspace_frames.corpus.inventory import discover
from qspace_frames.fragments import fragments
from qspace_frames.params import CorpusParams, FragmentParams
from qspace_frames.pipeline.per_document import load_documents
from qspace_frames.runtime import store as store_mod
from qspace_frames.runtime.shards import SortSpill, doc_shards, key_shards
from qspace_frames.runtime.store import Store, TableWriter, frame_hash

SAMPLE = ROOT / "sample_corpus"


@pytest.fixture(scope="module")
def sample():
    _, pages = load_documents(discover(SAMPLE, CorpusParams()), SAMPLE, CorpusParams())
    return pages, fragments(pages.lazy(), FragmentParams()).collect()


def cuts(df: pl.DataFrame, seed: int, n: int) -> list[pl.DataFrame]:
    """df cut into n + 1 batches at random rows (some empty)."""
    rng = random.Random(seed)
    at = sorted(rng.randint(0, df.height) for _ in range(n))
    return [df.slice(a, b - a) for a, b in zip([0, *at], [*at, df.height])]


def test_a_table_written_in_any_batches_has_the_same_bytes_and_hash(tmp_path, sample, monkeypatch):
    _, fr = sample
    monkeypatch.setattr(store_mod, "GROUP_ROWS", 97)  # many row groups, cut across batch edges
    monkeypatch.setattr(store_mod, "GROUP_BYTES", 20_000)
    files = []
    for i, batches in enumerate([[fr], cuts(fr, 1, 5), cuts(fr, 2, 40), [fr.slice(k, 1) for k in range(fr.height)]]):
        w = TableWriter(tmp_path / f"t{i}.parquet")
        for b in batches:
            w.write(b)
        info = w.close()
        assert info["rows"] == fr.height and info["content_hash"] == frame_hash(fr)
        files.append((tmp_path / f"t{i}.parquet").read_bytes())
    assert len(set(files)) == 1
    back = pl.read_parquet(tmp_path / "t0.parquet")
    assert back.equals(fr)
    import pyarrow.parquet as pq

    groups = pq.ParquetFile(tmp_path / "t0.parquet")
    sizes = [groups.metadata.row_group(i).num_rows for i in range(groups.num_row_groups)]
    assert sum(sizes) == fr.height and max(sizes) <= 97 and len(sizes) > fr.height // 97


def test_streamed_artifact_reads_back_batch_by_batch(tmp_path, sample, monkeypatch):
    pages, fr = sample
    monkeypatch.setattr(store_mod, "GROUP_ROWS", 50)
    st = Store(tmp_path)
    art = st.put("s", "art_1", (("fragments", b) for b in cuts(fr, 3, 7)), {}, schemas={"fragments": fr.schema, "pages": pages.schema})
    assert art.manifest["tables"]["fragments"]["rows"] == fr.height
    assert art.manifest["tables"]["pages"]["rows"] == 0 and art.read("pages").schema == pages.schema
    got = list(art.batches("fragments"))
    assert len(got) > 1 and pl.concat(got).equals(fr)


def test_a_batch_that_changes_schema_is_refused_and_nothing_is_published(tmp_path, sample):
    _, fr = sample
    with pytest.raises(ValueError, match="schema"):
        Store(tmp_path).put("s", "art_1", [("t", fr), ("u", fr), ("t", fr.drop("text"))], {})
    assert not (tmp_path / "s" / "art_1").exists()


@pytest.mark.parametrize("seed", range(6))
def test_doc_shards_keep_documents_whole_and_in_order(sample, seed):
    pages, _ = sample
    shards = list(doc_shards(cuts(pages, seed, 6), max_docs=1 + seed, max_chars=2_000 * (1 + seed)))
    assert pl.concat(shards).equals(pages)
    docs = [set(s["doc_id"]) for s in shards]
    assert all(not (a & b) for i, a in enumerate(docs) for b in docs[i + 1 :])  # no document in two shards
    assert all(len(d) <= 1 + seed for d in docs)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("key", ["doc_id", "fragment_id"])
def test_key_shards_never_split_a_key(sample, seed, key):
    _, fr = sample
    rows = fr.sort(key, maintain_order=True)
    shards = list(key_shards(cuts(rows, seed, 8), key, rows=3 + 10 * seed))
    assert pl.concat(shards).equals(rows)
    keys = [set(s[key]) for s in shards]
    assert all(not (a & b) for i, a in enumerate(keys) for b in keys[i + 1 :])
    if key == "fragment_id":  # one row per key: every shard is at most `rows` long
        assert all(s.height <= 3 + 10 * seed for s in shards)


@pytest.mark.parametrize("width,read_rows,hold", [(1, 1, 0), (2, 1, 0), (2, 50, 0), (2, 10**9, 0), (2, 50, 20_000), (2, 50, 10**12)])
def test_sort_spill_gives_the_order_of_one_sort(sample, monkeypatch, width, read_rows, hold):
    """Spilled at every batch (hold 0), every few batches, or never (all held in memory): the
    order of one sort, in runs of whole buckets when spilled."""
    from qspace_frames.runtime import shards

    _, fr = sample
    monkeypatch.setattr(shards, "SPILL_READ_ROWS", read_rows)
    monkeypatch.setattr(shards, "SPILL_HOLD_BYTES", hold)
    spill = SortSpill("fragment_id", ["fragment_id"], skip=len("frag_"), width=width)
    batches = cuts(fr.sample(fraction=1.0, shuffle=True, seed=7), 4, 9)
    assert sum(b.estimated_size() for b in batches) > 3 * 20_000  # the middle case spills more than once
    for b in batches:
        spill.add(b)
    files = len(spill._files)
    if hold == 0:  # each batch with rows is spilled as it comes
        assert files == sum(b.height > 0 for b in batches)
    elif hold > fr.estimated_size():
        assert files == 0
    else:
        assert 1 < files < len(batches)
    got = list(spill.sorted())
    assert pl.concat(got).equals(fr.sort("fragment_id"))
    assert not Path(spill._dir.name).exists()
    # runs of whole buckets of about `read_rows` rows: one run when it is large, one per bucket when tiny
    buckets = fr["fragment_id"].str.slice(len("frag_"), width).n_unique()
    if hold > fr.estimated_size() or read_rows > fr.height:
        assert len(got) == 1
    elif read_rows == 1:
        assert len(got) == buckets
    else:
        assert len(got) > 1 and all(g.height >= read_rows for g in got[:-1])


def test_tiny_shards_give_the_same_artifacts_as_one_pass(tmp_path, monkeypatch):
    """Every streamed stage on the sample corpus, once with the default shard sizes (one shard
    each) and once with shards of a few rows (dozens of shards, external sorts over many files):
    the same tables, byte for byte."""
    from qspace_frames.pipeline import STAGES, Workbench, stages
    from qspace_frames.runtime import shards

    def run(name: str) -> dict:
        params = tmp_path / f"{name}.yaml"
        params.write_text(f"store:\n  root: {tmp_path / name}\n")
        wb = Workbench(
            params_file=str(params),
            corpus_arg=str(SAMPLE),
            run_name=name,
            project_root=ROOT,
            reports_dir=tmp_path / "reports",
            workers=2 if name == "tiny" else 1,
        )
        out = {}
        for stage in list(STAGES)[: list(STAGES).index("simulation") + 1]:
            art = wb.artifact(stage)
            out.update({f"{stage}/{t}": (art.path / f"{t}.parquet").read_bytes() for t in art.tables})
        return out

    whole = run("whole")
    for mod, name, value in [
        (shards, "SHARD_DOCS", 2),
        (shards, "SHARD_CHARS", 5_000),
        (stages, "AFFORDANCE_SHARD_ROWS", 7),
        (stages, "TREE_SHARD_UNITS", 5),
        (stages, "SIMULATION_SHARD_NODES", 40),
        (shards, "SPILL_READ_ROWS", 20),
        (shards, "SPILL_HOLD_BYTES", 0),
    ]:
        monkeypatch.setattr(mod, name, value)
    tiny = run("tiny")
    assert whole.keys() == tiny.keys() and len(whole) >= 14
    assert [k for k in whole if whole[k] != tiny[k]] == ["trees/tree_scores"]
    # known limit: a tree's expected costs can differ in their last bit with the trees it was
    # compiled beside (as before streaming); the rows, the integers and the chosen trees cannot
    import io

    a, b = (pl.read_parquet(io.BytesIO(x["trees/tree_scores"])) for x in (whole, tiny))
    floats = [c for c, t in a.schema.items() if t == pl.Float64]
    assert a.drop(floats).equals(b.drop(floats))
    assert all(((a[c] - b[c]).abs() <= 1e-12).all() for c in floats)


def test_chunks_and_evaluation_in_the_pool_equal_one_process(tmp_path, monkeypatch):
    """The BM25 chunks cut in the pool in shards of two documents, and the evaluation with Qspace
    and ask in the workers while this process runs the baselines, give the frames one process
    gives with the corpus in one shard."""
    from qspace_frames.pipeline import Workbench
    from qspace_frames.runtime import shards

    params = tmp_path / "p.yaml"
    params.write_text(f"store:\n  root: {tmp_path / 'store'}\n")

    def evaluation(workers: int) -> dict:
        wb = Workbench(
            params_file=str(params),
            corpus_arg=str(SAMPLE),
            run_name=f"w{workers}",
            project_root=ROOT,
            reports_dir=tmp_path / "reports",
            workers=workers,
        )
        return {**wb.compute("chunks"), **wb.compute("evaluation")}

    one = evaluation(1)
    monkeypatch.setattr(shards, "SHARD_DOCS", 2)
    pooled = evaluation(2)
    assert one.keys() == pooled.keys() == {"chunks", "gold", "retrievals", "per_query", "metrics", "misses", "tree_ablation"}
    assert one["chunks"]["doc_id"].n_unique() > 2  # more than one shard was cut
    assert set(one["retrievals"]["strategy"]) >= {"bm25_chunks", "source_order", "heading_tree", "qspace", "ask"}
    for k in one:
        assert one[k].equals(pooled[k]), k


def test_a_crashed_worker_fails_its_call_and_the_next_call_gets_a_new_pool():
    """A worker that dies raises BrokenProcessPool where its result is awaited (`imap` or
    `started`), and the broken pool is dropped: the next call in the same process works."""
    import os
    from concurrent.futures.process import BrokenProcessPool

    from qspace_frames.runtime import workers

    with pytest.raises(BrokenProcessPool):
        [result() for result in workers.started(os._exit, [(3,)], 2)]
    assert list(workers.imap(abs, [(-1,), (-2,)], 2)) == [1, 2]
    with pytest.raises(BrokenProcessPool):
        list(workers.imap(os._exit, [(3,), (4,)], 2))
    assert [result() for result in workers.started(abs, [(-5,)], 2)] == [5]


NESTED = """
from qspace_frames.runtime import workers

def square(x):
    return x * x

def nested(n):  # a pool task that itself asks for the pool
    return list(workers.imap(square, [(i,) for i in range(n)], 2)) + [f() for f in workers.started(square, [(n,)], 2)]

if __name__ == "__main__":
    print([f() for f in workers.started(nested, [(3,), (4,)], 2)])
"""


def test_a_task_that_asks_for_the_pool_runs_its_work_itself_and_the_run_exits(tmp_path):
    """A worker that started a pool of its own would wait for it at exit, and so would the run
    (a stage computed inside a pool task does this): inside a worker, work runs in the worker."""
    import os
    import subprocess
    import sys

    (tmp_path / "nested_task.py").write_text(NESTED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = subprocess.run([sys.executable, "nested_task.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[[0, 1, 4, 9], [0, 1, 4, 9, 16]]"


def _doubled(df: pl.DataFrame, label: str) -> dict:
    """A pool task returning frames inside a dict and a tuple (module level: the pool imports it)."""
    return {"label": label, "frames": (df.with_columns(pl.col("x") * 2), df.head(3))}


def test_frames_cross_the_pool_through_shared_memory_and_leave_no_file_behind():
    """Large frames go to and from the workers as files in the pool's folder (small ones through
    the pipe); every file is removed once read, also for tasks whose results nobody reads."""
    from qspace_frames.runtime import workers

    big = pl.DataFrame({"x": range(300_000), "s": [f"row {i}" for i in range(300_000)]})
    assert big.estimated_size() >= workers.SHIP_BYTES > big.head(3).estimated_size()
    out = list(workers.imap(_doubled, [(big, "a"), (big.head(10), "b")], 2))
    assert out[0]["label"] == "a" and out[0]["frames"][0].equals(big.with_columns(pl.col("x") * 2))
    assert out[0]["frames"][1].equals(big.head(3)) and out[1]["frames"][0]["x"].to_list() == list(range(0, 20, 2))
    ship = workers._pools[2][1]
    assert ship.is_dir() and not any(ship.iterdir())
    # a consumer that stops early: the inputs of tasks never run and the results of tasks running are removed
    gen = workers.imap(_doubled, [(big, str(i)) for i in range(8)], 2)
    assert next(gen)["label"] == "0"
    gen.close()
    workers.pool(2).submit(abs, 0).result()  # the tasks already running have finished
    for _ in range(50):
        if not any(ship.iterdir()):
            break
        time.sleep(0.1)
    assert not any(ship.iterdir())
    assert [f()["frames"][0].height for f in workers.started(_doubled, [(big, "c")], 2)] == [300_000]
    assert not any(ship.iterdir())


def test_the_ship_folders_of_dead_runs_are_swept_and_live_ones_kept(tmp_path):
    from qspace_frames.runtime import workers

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    (tmp_path / f"qspace-ship-{dead}-abc").mkdir()
    (tmp_path / f"qspace-ship-{dead}-abc" / "x.arrow").write_bytes(b"x")
    (tmp_path / f"qspace-ship-{os.getpid()}-def").mkdir()
    workers._sweep(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"qspace-ship-{os.getpid()}-def"]


def test_ship_writes_large_frames_to_files_and_land_reads_them_back_and_removes_them(tmp_path):
    from qspace_frames.runtime import workers

    big = pl.DataFrame({"x": range(300_000), "s": [f"row {i}" for i in range(300_000)]})
    small = big.head(3)
    shipped = workers._ship({"a": (big, small, 7)}, tmp_path)
    assert isinstance(shipped["a"][0], workers._Shipped) and shipped["a"][1] is small and shipped["a"][2] == 7
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(shipped["a"][0].path)]
    landed = workers._land(shipped)
    assert landed["a"][0].equals(big) and landed["a"][1:] == (small, 7)
    assert not any(tmp_path.iterdir())
    workers._land(workers._ship([big], tmp_path), keep=False)
    assert not any(tmp_path.iterdir())


def test_shipped_bytes_counts_the_frames_in_transit_of_one_process(tmp_path, monkeypatch):
    """The bench adds them to the process tree's RSS: a file in shared memory is in no process's RSS."""
    from qspace_frames.runtime import workers

    monkeypatch.setattr(workers, "SHM", tmp_path)
    for pid, size in [(os.getpid(), 1234), (os.getpid(), 66), (os.getpid() + 1, 999)]:
        d = tmp_path / f"qspace-ship-{pid}-{size}"
        d.mkdir()
        (d / "a.arrow").write_bytes(b"x" * size)
    assert workers.shipped_bytes(os.getpid()) == 1300


def _polars_threads() -> int:
    return pl.thread_pool_size()


def test_each_worker_runs_polars_on_its_share_of_the_cores(monkeypatch):
    """Two workers on two cores run one Polars thread each (the processes are the parallelism);
    a POLARS_MAX_THREADS the user set is passed on as it is."""
    from qspace_frames.runtime import workers

    share = max(1, workers._cores() // 2)
    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    workers.shutdown()
    assert [f() for f in workers.started(_polars_threads, [(), ()], 2)] == [share, share]
    assert "POLARS_MAX_THREADS" not in os.environ
    workers.shutdown()
    monkeypatch.setenv("POLARS_MAX_THREADS", "3")
    assert [f() for f in workers.started(_polars_threads, [(), ()], 2)] == [3, 3]
    workers.shutdown()


def test_plain_text_loads_here_the_rest_in_the_pool_and_the_documents_are_the_same(tmp_path):
    """With a pool, the parsed formats (PDF, office, HTML) go to the workers and the plain-text ones
    are read in this process between them: the same documents, in the same order, as one process."""
    from qspace_frames.corpus.loaders import FORMATS

    files = discover(SAMPLE, CorpusParams())
    exts = set(files["ext"])
    in_process = {e for e, f in FORMATS.items() if f.in_process}
    assert exts & in_process and exts - in_process  # both kinds, interleaved by doc_id
    one = load_documents(files, SAMPLE, CorpusParams(), workers=1)
    pooled = load_documents(files, SAMPLE, CorpusParams(), workers=2)
    assert one[0].equals(pooled[0]) and one[1].equals(pooled[1])
    assert set(one[0]["load_status"]) == {"loaded"}


def test_warm_starts_every_worker_of_the_pool_at_once():
    from qspace_frames.runtime import workers

    workers.shutdown()
    workers.warm(2)
    assert len(workers.pool(2)._processes) == 2  # both started, neither waited for
    assert list(workers.imap(abs, [(-1,), (-2,)], 2)) == [1, 2]


def test_content_hash_sees_every_value_and_only_the_values(tmp_path):
    """The hash is a function of the rows: the same for any batching (and the bytes Polars leaves
    in the slots of null strings do not count), and different when any one value differs, a null
    from an empty string or a zero, one NaN from another only if they are not both NaN."""
    import datetime as dt

    base = pl.DataFrame(
        {
            "s": ["a", None, "", "ccc", None, "dd"],
            "b": [b"x", None, b"", b"yy", b"z", None],
            "i": [1, None, 0, 3, -4, 5],
            "f": [0.5, float("nan"), None, -0.0, 2.0, 1e300],
            "t": [True, None, False, True, False, True],
            "d": [dt.date(2020, 1, 1), None, dt.date(1970, 1, 1), dt.date(2030, 5, 6), dt.date(2000, 2, 29), None],
            "ts": [dt.datetime(2020, 1, 1, 12), None, dt.datetime(1970, 1, 1), dt.datetime(2030, 5, 6), None, dt.datetime(2001, 1, 1)],
            "l": [["x"], None, [], ["a", None], ["b"], ["c", "d"]],
            "n": pl.Series([None] * 6, dtype=pl.Null),
            "c": pl.Series(["u", "v", None, "u", "w", "v"], dtype=pl.Categorical),
        }
    )
    h = frame_hash(base)
    # the same rows in other batchings, and after operations that leave bytes behind null slots
    for parts in ([base.slice(0, 1), base.slice(1, 4), base.slice(5)], [base.slice(k, 1) for k in range(6)]):
        hasher = store_mod.FrameHasher(base.schema)
        for part in parts:
            hasher.update(part)
        assert hasher.hexdigest() == h
    # a null made by masking keeps the text's bytes behind its slot in Arrow: they do not count
    long = pl.DataFrame({"s": ["alpha-long-string-here", "beta-long-string-here-too", "c"]})
    masked = long.with_columns(pl.when(pl.col("s") != "beta-long-string-here-too").then(pl.col("s")))
    arr = masked.to_arrow().column("s").chunks[0]
    assert (
        arr.buffers()[1].size and int.from_bytes(arr.buffers()[1].to_pybytes()[16:24], "little") == 22 + 25
    )  # the null's slot holds 25 bytes
    assert frame_hash(masked) == frame_hash(pl.DataFrame({"s": ["alpha-long-string-here", None, "c"]}))
    # an empty table: the same hash written with no batch, with an empty batch, or hashed whole
    w = TableWriter(tmp_path / "e.parquet")
    empty_info = w.close(schema=dict(base.schema))
    assert empty_info["content_hash"] == frame_hash(base.clear()) == frame_hash(base.head(0))
    assert frame_hash(base.with_columns(pl.col("f").fill_nan(float("nan")))) == h
    changes = [
        pl.col("s").fill_null(""),
        pl.col("s").str.replace("ccc", "ccd"),
        pl.col("b").fill_null(b""),
        pl.col("i").fill_null(0),
        pl.col("f").fill_null(0.0),
        pl.col("f").abs(),
        pl.col("t").fill_null(False),
        pl.col("d").fill_null(dt.date(1970, 1, 1)),
        pl.col("ts").dt.offset_by("1us"),
        pl.col("l").list.reverse(),
        pl.col("c").cast(pl.String).str.replace("w", "x").cast(pl.Categorical),
    ]
    hashes = {frame_hash(base.with_columns(e)) for e in changes}
    assert h not in hashes and len(hashes) == len(changes)
    # the lengths of text count, not only its bytes: ("ab", "") differs from ("a", "b")
    assert frame_hash(pl.DataFrame({"s": ["ab", ""]})) != frame_hash(pl.DataFrame({"s": ["a", "b"]}))


def test_a_full_ship_folder_sends_the_frame_through_the_pipe(tmp_path, monkeypatch):
    """Writing a frame to shared memory can fail (a container's /dev/shm holds 64 MB): the frame is
    then returned as it is, and no partial file stays behind."""
    from qspace_frames.runtime import workers

    big = pl.DataFrame({"x": range(300_000)})

    def full(self, path, **kw):
        Path(path).write_bytes(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_ipc", full)
    assert workers._ship((big, 1), tmp_path)[0] is big
    assert not any(tmp_path.iterdir())
    # a /dev/shm with too little room is not used at all
    monkeypatch.setattr(workers, "SHM_FREE", 1 << 62)
    assert workers._ship_root() != workers.SHM

"""One process pool per `workers` count, kept for the life of the process.

The per-document stages (load, fragment, detect) each used to start their own pool; a spawned
worker pays about a second to import Polars, tiktoken and the package, three times a run. The
pool is spawned, not forked: forking a process whose Polars thread pool is running can deadlock.

Each worker runs Polars on its share of the cores (one thread each with two workers on two
cores): the processes are the parallelism, and every worker spinning up a thread per core
oversubscribed the machine (the affordances stage took 15% more time that way).

A task's frames go in and come back through files in shared memory (Arrow IPC, read back
without a copy) instead of the pickle pipe, which copies every byte several times: the trees'
nodes alone cost the run a second of kernel time that way.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.ipc  # noqa: F401  (pa.ipc)

from .store import remove_dead

_pools: dict[int, tuple[ProcessPoolExecutor, Path]] = {}
_in_worker = False  # set in the pool's own workers: their tasks run what they start in themselves
_ship_dir: Path | None = None  # in a worker: where its result frames are written
SHIP_BYTES = 1 << 20  # frames smaller than this go through the pipe: a file is not worth it
SHM = Path("/dev/shm")  # memory, not disk; elsewhere (no /dev/shm) the temporary folder


PRELOAD: list[str] = []  # modules every worker imports on start (the pipeline names its stages' code)


def _warm(ship_dir: str, modules: tuple[str, ...]) -> None:
    """Import what every task needs once per worker, while the parent is still preparing work."""
    import importlib

    global _in_worker, _ship_dir
    _in_worker, _ship_dir = True, Path(ship_dir)
    for name in modules:
        importlib.import_module(name)


@dataclass(frozen=True)
class _Shipped:
    """A frame written to `path` by one side of the pool; the other side reads it and deletes the file."""

    path: str


def _each(obj, fn):
    """`obj` with `fn` applied to every value inside its tuples, lists and dicts (and to obj itself)."""
    if isinstance(obj, (tuple, list)):
        return type(obj)(_each(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: _each(v, fn) for k, v in obj.items()}
    return fn(obj)


def _ship(obj, folder: Path):
    """`obj` with its large frames (also inside tuples, lists and dicts) written to files in `folder`."""

    def one(x):
        if not (isinstance(x, pl.DataFrame) and x.estimated_size() >= SHIP_BYTES):
            return x
        fd, path = tempfile.mkstemp(dir=folder, suffix=".arrow")
        os.close(fd)
        try:
            x.write_ipc(path, compression="uncompressed")
        except OSError:  # the folder is full (a small /dev/shm): this frame goes through the pipe
            os.unlink(path)
            return x
        return _Shipped(path)

    return _each(obj, one)


def _land(obj, keep: bool = True):
    """The inverse of `_ship`: each frame maps its file without a copy (Arrow's memory map; Polars'
    own reader copies), and the file's name is removed at once: the mapping keeps its pages until
    the frame is dropped. `keep=False` only removes the files."""

    def one(x):
        if not isinstance(x, _Shipped):
            return x
        try:
            if not keep:
                return None
            with pa.memory_map(x.path) as src:
                return pl.from_arrow(pa.ipc.open_file(src).read_all())
        finally:
            os.unlink(x.path)

    return _each(obj, one)


def _call(fn, task: tuple):
    """A task as a worker runs it: frames in and out through shared memory."""
    return _ship(fn(*_land(task)), _ship_dir)


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    """A spawned worker whose Polars gets its share of the cores: the thread count is read from the
    environment when Polars is imported, so it is set for the moment the process starts."""

    @staticmethod
    def _Popen(process_obj):
        old = os.environ.get("POLARS_MAX_THREADS")
        os.environ["POLARS_MAX_THREADS"] = old or _worker_threads  # a user's own setting wins
        try:
            return multiprocessing.context.SpawnProcess._Popen(process_obj)
        finally:
            if old is None:
                del os.environ["POLARS_MAX_THREADS"]
            else:
                os.environ["POLARS_MAX_THREADS"] = old


class _WorkerContext(multiprocessing.context.SpawnContext):
    Process = _WorkerProcess


_worker_threads = "1"  # Polars threads per worker: the cores over the latest pool's size


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


SHM_FREE = 1 << 30  # /dev/shm is used when it has this much room (a container's may have 64 MB)


def _ship_root() -> Path:
    try:
        st = os.statvfs(SHM)
        if os.access(SHM, os.W_OK) and st.f_bavail * st.f_frsize >= SHM_FREE:
            return SHM
    except OSError:
        pass
    return Path(tempfile.gettempdir())


def _sweep(root: Path) -> None:
    """Remove the ship folders of runs that died: shared memory is freed only by deleting."""
    remove_dead(root.glob("qspace-ship-*-*"), lambda name: name.rsplit("-", 2)[-2])


def shipped_bytes(pid: int) -> int:
    """Bytes of the frames in transit between the process `pid` and its pool: memory no process's
    RSS shows until a frame is read."""
    total = 0
    roots = {SHM, Path(tempfile.gettempdir())}
    for d in (d for root in roots if root.is_dir() for d in root.glob(f"qspace-ship-{pid}-*")):
        with contextlib.suppress(OSError):  # a folder or frame removed while it is counted: gone, no bytes
            for f in d.iterdir():
                with contextlib.suppress(OSError):
                    total += f.stat().st_size
    return total


def _pool(workers: int) -> tuple[ProcessPoolExecutor, Path]:
    ex, ship = _pools.get(workers, (None, None))
    # a pool whose worker crashed is replaced: one crashed task must not fail every later stage
    if ex is None or getattr(ex, "_broken", False):
        if ship is not None:
            shutil.rmtree(ship, ignore_errors=True)
        global _worker_threads
        _worker_threads = str(max(1, _cores() // workers))
        root = _ship_root()
        _sweep(root)
        ship = Path(tempfile.mkdtemp(prefix=f"qspace-ship-{os.getpid()}-", dir=root))
        ex = ProcessPoolExecutor(max_workers=workers, mp_context=_WorkerContext(), initializer=_warm, initargs=(str(ship), tuple(PRELOAD)))
        _pools[workers] = ex, ship
    return ex, ship


def pool(workers: int) -> ProcessPoolExecutor:
    return _pool(workers)[0]


# Below this many bytes of files a corpus's per-document work costs about what starting the pool's
# workers does, while the run's kernels start on the same cores (sample corpus, 0.1 MB: `qspace run`
# 18.5-18.9 s with a pool of 2, 17.6-17.9 s in one process).
POOL_MIN_BYTES = 1 << 20


def for_corpus(cores: int, nbytes: int) -> int:
    """The workers worth starting for a corpus of `nbytes`: the cores, or 1 (no pool) for a small one."""
    return cores if nbytes >= POOL_MIN_BYTES else 1


def warm(workers: int) -> None:
    """Start the pool's workers now, without waiting for them: a worker takes about half a second
    to import what it needs, which this process can spend on its own work."""
    if workers > 1 and not _in_worker:
        ex = pool(workers)
        for _ in range(workers):  # each submit finds no idle worker yet, so each starts one
            ex.submit(os.getpid)


def shutdown() -> None:
    while _pools:
        ex, ship = _pools.popitem()[1]
        ex.shutdown(cancel_futures=True)
        shutil.rmtree(ship, ignore_errors=True)


def _submit(workers: int, fn, task: tuple):
    ex, ship = _pool(workers)
    task = _ship(task, ship)
    return ex.submit(_call, fn, task), task


def imap(fn, tasks, workers: int, ahead: int | None = None):
    """`fn(*task)` for each task tuple, in the pool, results yielded in task order. At most `ahead`
    tasks (default 2 per worker) are in flight, so a lazy `tasks` iterator is read only as fast as
    the results are consumed: inputs and outputs held at once stay bounded by a few shards."""
    from collections import deque

    if _in_worker:  # a pool inside a worker outlives it: the worker's exit would wait on it for ever
        yield from (fn(*task) for task in tasks)
        return
    pending = deque()
    try:
        for task in tasks:
            pending.append(_submit(workers, fn, task))
            if len(pending) >= (ahead or 2 * workers):
                yield _land(pending.popleft()[0].result())
        while pending:
            yield _land(pending.popleft()[0].result())
    finally:  # tasks nobody will read: a cancelled one's inputs, a running one's result, are removed
        for future, task in pending:
            if future.cancel():
                _land(task, keep=False)
            else:
                future.add_done_callback(_discard)


def _discard(future) -> None:
    if not future.cancelled() and future.exception() is None:
        _land(future.result(), keep=False)


def started(fn, tasks, workers: int) -> list:
    """`fn(*task)` for each task, started now in the pool while this process goes on with its own
    work; returns, per task, a function that waits for its result. With one worker a task runs in
    this process when its result is asked for."""
    if workers <= 1 or _in_worker:
        return [partial(fn, *task) for task in tasks]
    return [partial(_result, _submit(workers, fn, task)[0]) for task in tasks]


def _result(future):
    return _land(future.result())


atexit.register(shutdown)

"""One process pool per `workers` count, kept for the life of the process.

The per-document stages (load, fragment, detect) each used to start their own pool; a spawned
worker pays about a second to import Polars, tiktoken and the package, three times a run. The
pool is spawned, not forked: forking a process whose Polars thread pool is running can deadlock.
"""
from __future__ import annotations

import atexit
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from functools import partial

_pools: dict[int, ProcessPoolExecutor] = {}
_in_worker = False  # set in the pool's own workers: their tasks run what they start in themselves


def _warm() -> None:
    """Import what every task needs once per worker, while the parent is still preparing work."""
    global _in_worker
    _in_worker = True
    from . import affordances, fragments, loaders  # noqa: F401


def pool(workers: int) -> ProcessPoolExecutor:
    ex = _pools.get(workers)
    # a pool whose worker crashed is replaced: one crashed task must not fail every later stage
    if ex is None or getattr(ex, "_broken", False):
        ex = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_warm)
        _pools[workers] = ex
    return ex


def shutdown() -> None:
    while _pools:
        _pools.popitem()[1].shutdown(cancel_futures=True)


def imap(fn, tasks, workers: int, ahead: int | None = None):
    """`fn(*task)` for each task tuple, in the pool, results yielded in task order. At most `ahead`
    tasks (default 2 per worker) are in flight, so a lazy `tasks` iterator is read only as fast as
    the results are consumed: inputs and outputs held at once stay bounded by a few shards."""
    from collections import deque

    if _in_worker:  # a pool inside a worker outlives it: the worker's exit would wait on it for ever
        yield from (fn(*task) for task in tasks)
        return
    ex, pending = pool(workers), deque()
    try:
        for task in tasks:
            pending.append(ex.submit(fn, *task))
            if len(pending) >= (ahead or 2 * workers):
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for f in pending:
            f.cancel()


def started(fn, tasks, workers: int) -> list:
    """`fn(*task)` for each task, started now in the pool while this process goes on with its own
    work; returns, per task, a function that waits for its result. With one worker a task runs in
    this process when its result is asked for."""
    if workers <= 1 or _in_worker:
        return [partial(fn, *task) for task in tasks]
    ex = pool(workers)
    return [ex.submit(fn, *task).result for task in tasks]


atexit.register(shutdown)

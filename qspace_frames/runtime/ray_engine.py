"""The Ray engine: a stage's whole-document rows mapped in Arrow batches by Ray Data.

A document travels as one row with its rows nested (`nest`), so however Ray cuts the batches a
document is never split; the outputs come back in order and are merged as the local engine's.
"""

from __future__ import annotations

import os
from typing import Callable

import polars as pl


def nest(df: pl.DataFrame, name: str, cols: list[str]) -> pl.DataFrame:
    """One row per document with its rows nested as a list of structs (in their current order)."""
    return df.group_by("doc_id", maintain_order=True).agg(pl.struct(cols).alias(name))


def unnest(docs: pl.DataFrame, name: str) -> pl.DataFrame:
    return docs.select("doc_id", name).explode(name).filter(pl.col(name).is_not_null()).unnest(name)


def ray_init(workers: int = 2) -> None:
    """A local Ray instance for this process (offline: no dashboard, no usage stats)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    import ray

    for attempt in range(3):  # Ray gives its raylet 30 s to register: a loaded machine can miss that
        if ray.is_initialized():
            return
        try:
            ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False, logging_level="ERROR", configure_logging=False)
        except Exception:
            ray.shutdown()
            if attempt == 2:
                raise


def ray_map(docs: pl.DataFrame, fn: Callable, rows_per_batch: int, workers: int) -> pl.DataFrame:
    """`fn` over Arrow batches of whole-document rows with Ray Data; the outputs concatenated."""
    import pyarrow as pa
    import ray
    import ray.data

    if docs.height == 0:
        return pl.DataFrame()
    ray_init(workers)
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    ds = ray.data.from_arrow(docs.to_arrow()).map_batches(fn, batch_size=rows_per_batch, batch_format="pyarrow")
    tables = [t for t in ray.get(ds.to_arrow_refs()) if t.num_rows]
    return pl.from_arrow(pa.concat_tables(tables, promote_options="permissive")) if tables else pl.DataFrame()

"""The per-document stages on Ray Data give the local engine's artifacts, byte for byte.

A local Ray instance (2 CPUs, no dashboard, no usage stats: offline) runs load, fragment and
detect as `map_batches` over Arrow batches of documents; the store must end up with the same
artifact ids, manifests and Parquet bytes as the local engine, on the sample corpus (every
format) and on a slice of the CUAD contracts.
"""

from __future__ import annotations

import os
import shutil

import pytest

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import ray  # noqa: E402  (the `ray` extra; the `test` extra installs it)

from qspace_frames.pipeline import Workbench  # noqa: E402
from qspace_frames.runtime import shards  # noqa: E402
from qspace_frames.runtime.ray_engine import ray_init  # noqa: E402

PER_DOC = ("corpus", "fragments", "affordances")


@pytest.fixture(scope="module")
def local_ray():
    ray_init(workers=2)
    yield
    ray.shutdown()


def _artifacts(root, tmp_path, corpus, engine, workers):
    d = tmp_path / engine
    d.mkdir()
    params = d / "p.yaml"
    params.write_text(f"store:\n  root: {d / 'store'}\n")
    wb = Workbench(
        params_file=str(params),
        corpus_arg=str(corpus),
        run_name=engine,
        project_root=root,
        reports_dir=d / "reports",
        workers=workers,
        engine=engine,
    )
    return {stage: wb.artifact(stage) for stage in PER_DOC}


def _assert_identical(local, on_ray):
    for stage in PER_DOC:
        a, b = local[stage], on_ray[stage]
        assert a.artifact_id == b.artifact_id, stage
        # the same manifest, but for the local run's record of the per-document parts it was
        # assembled from (`runtime.parts`), which Ray, computing every document, does not keep
        assert {k: v for k, v in a.manifest.items() if k != "parts"} == b.manifest, stage
        assert "parts" in a.manifest and "parts" not in b.manifest, stage
        for table in a.tables:
            assert (a.path / f"{table}.parquet").read_bytes() == (b.path / f"{table}.parquet").read_bytes(), (stage, table)


def test_ray_engine_is_byte_identical_on_the_sample_corpus(root, tmp_path, local_ray):
    local = _artifacts(root, tmp_path, root / "sample_corpus", "local", 1)
    on_ray = _artifacts(root, tmp_path, root / "sample_corpus", "ray", 2)
    _assert_identical(local, on_ray)
    assert on_ray["affordances"].manifest["tables"]["affordances"]["rows"] > 0


def test_ray_engine_is_byte_identical_on_cuad_contracts(root, tmp_path, corpora, local_ray, monkeypatch):
    """80 contracts in 40-document shards: several shards locally (in a pool) and several Ray batches."""
    monkeypatch.setattr(shards, "SHARD_DOCS", 40)
    src = sorted((corpora / "contracts-cuad" / "txt").glob("*.txt"))[:80]
    corpus = tmp_path / "cuad"
    corpus.mkdir()
    for f in src:
        shutil.copyfile(f, corpus / f.name)
    local = _artifacts(root, tmp_path, corpus, "local", 2)
    on_ray = _artifacts(root, tmp_path, corpus, "ray", 2)
    _assert_identical(local, on_ray)
    assert on_ray["fragments"].manifest["tables"]["fragments"]["rows"] > 1000


def test_unknown_engine_fails_clearly(root, tmp_path):
    with pytest.raises(ValueError, match="engine"):
        Workbench(
            params_file=None, corpus_arg=str(root / "sample_corpus"), project_root=root, reports_dir=tmp_path / "reports", engine="spark"
        )

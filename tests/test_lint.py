"""The code stays readable: ruff's checks (pyflakes, pycodestyle, import order) and its format
pass on the package, the tests and the scripts (configuration in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

RUFF = Path(sys.executable).with_name("ruff")


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff(root, command):
    out = subprocess.run([str(RUFF), *command, "qspace_frames", "tests", "scripts"], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr

"""Input never executes (DESIGN.md section 10): no code path that runs, unpickles or fetches.

1. The package source is scanned (ast, not grep: comments and `.list.eval` do not count) for the
   calls and imports that turn data into code or reach the network.
2. A parameters file carrying a YAML python tag is refused, naming the file, and runs nothing.
3. Script and event-handler markup in documents comes out of the HTML loader as plain text only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from qspace_frames.corpus.loaders import load_file
from qspace_frames.params import CorpusParams, ParamsError, load_params

PACKAGE = Path(__file__).resolve().parents[1] / "qspace_frames"

BANNED_MODULES = {  # deserialisers that run code, and network clients
    "pickle",
    "cPickle",
    "_pickle",
    "dill",
    "cloudpickle",
    "joblib",
    "marshal",
    "shelve",
    "urllib.request",
    "http.client",
    "requests",
    "httpx",
    "aiohttp",
    "ftplib",
    "socket",
    "telnetlib",
}
BANNED_BUILTINS = {"eval", "exec", "compile", "__import__"}
BANNED_ATTRS = {  # (module alias or object, attribute) pairs that execute or unpickle
    ("yaml", "unsafe_load"),
    ("yaml", "unsafe_load_all"),
    ("yaml", "full_load"),
    ("yaml", "full_load_all"),
    ("os", "system"),
    ("os", "popen"),
    ("os", "execv"),
    ("os", "execve"),
    ("os", "execvp"),
    ("os", "spawnv"),
    ("pd", "read_pickle"),
    ("pandas", "read_pickle"),
    ("torch", "load"),
}
UNSAFE_LOADERS = {"Loader", "UnsafeLoader", "FullLoader", "CLoader", "CUnsafeLoader", "CFullLoader"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def findings(source: str, name: str) -> list[str]:
    """Every construct of `source` that could turn input into code, as 'file:line: what'."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            out += [f"{where}: import {a.name}" for a in node.names if a.name in BANNED_MODULES or a.name.split(".")[0] in BANNED_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            mod = node.module
            if mod in BANNED_MODULES or mod.split(".")[0] in BANNED_MODULES:
                out.append(f"{where}: from {mod} import ...")
            if mod == "yaml" and any(a.name in UNSAFE_LOADERS | {"unsafe_load", "full_load", "load"} for a in node.names):
                out.append(f"{where}: from yaml import {', '.join(a.name for a in node.names)}")
            if mod == "os" and any(a.name in {"system", "popen"} for a in node.names):
                out.append(f"{where}: from os import system/popen")
        elif isinstance(node, ast.Call):
            func = _dotted(node.func)
            kwargs = {k.arg: k.value for k in node.keywords if k.arg}
            if isinstance(node.func, ast.Name) and node.func.id in BANNED_BUILTINS:
                out.append(f"{where}: {node.func.id}()")
            if func in {"builtins.eval", "builtins.exec"}:
                out.append(f"{where}: {func}()")
            if tuple(func.rsplit(".", 1)) in BANNED_ATTRS:
                out.append(f"{where}: {func}()")
            if func in {"yaml.load", "yaml.load_all"}:
                loader = kwargs.get("Loader") or (node.args[1] if len(node.args) > 1 else None)
                if loader is None or _dotted(loader).rsplit(".", 1)[-1] not in {"SafeLoader", "CSafeLoader"}:
                    out.append(f"{where}: {func}() without SafeLoader")
            if func.startswith("subprocess.") or func in {"Popen", "run", "call", "check_call", "check_output"}:
                shell = kwargs.get("shell")
                if shell is not None and not (isinstance(shell, ast.Constant) and shell.value is False):
                    out.append(f"{where}: {func}(shell=...)")
            if "allow_pickle" in kwargs and not (
                isinstance(kwargs["allow_pickle"], ast.Constant) and kwargs["allow_pickle"].value is False
            ):
                out.append(f"{where}: allow_pickle")
    return out


def test_the_scanner_catches_what_it_looks_for():
    bad = """
import pickle
import marshal as m
from yaml import unsafe_load
import yaml, subprocess, os
x = eval("1")
exec("y = 2")
yaml.load(open("f"))
yaml.load(open("f"), Loader=yaml.Loader)
yaml.unsafe_load("a: 1")
subprocess.run("ls", shell=True)
os.system("echo")
np.load("a.npy", allow_pickle=True)
"""
    got = findings(bad, "bad.py")
    assert sorted({int(f.split(":")[1]) for f in got}) == [2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13], got  # every line but the import
    good = """
import yaml, subprocess, re
yaml.safe_load("a: 1")
yaml.load("a: 1", Loader=yaml.SafeLoader)
subprocess.run(["ls"], shell=False)
subprocess.Popen([sys.executable, "-m", "x"])
re.compile("x")
df.list.eval(pl.element())  # a Polars expression, not the builtin
"""
    assert findings(good, "good.py") == []


def test_package_source_never_executes_or_unpickles_input():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    problems = [f for path in files for f in findings(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE.parent).as_posix())]
    assert problems == [], "\n".join(problems)


# --------------------------------------------------------------------------- YAML tags


@pytest.mark.parametrize(
    "body",
    [
        'store: !!python/object/apply:os.system ["echo hi"]\n',
        'store:\n  root: !!python/object/apply:os.mkdir ["{pwned}"]\n',
        'corpus: !!python/object/new:subprocess.Popen [["touch", "{pwned}"]]\n',
        "!!python/name:os.system\n",
    ],
)
def test_params_yaml_with_a_python_tag_is_refused(tmp_path, capfd, body):
    pwned = tmp_path / "pwned"
    path = tmp_path / "evil.yaml"
    path.write_text(body.format(pwned=pwned), encoding="utf-8")
    with pytest.raises(ParamsError) as e:
        load_params(path)
    message = str(e.value)
    assert message.startswith(f"{path}: invalid YAML:"), message
    assert "python/" in message  # the tag that was refused is named
    assert not pwned.exists()  # nothing ran
    assert "hi" not in capfd.readouterr().out


# --------------------------------------------------------------------------- HTML


def _html(tmp_path: Path, body: str):
    path = tmp_path / "x.html"
    path.write_text(body, encoding="utf-8")
    return load_file(path, "html", CorpusParams())


def test_script_and_event_handlers_are_not_text(tmp_path):
    r = _html(
        tmp_path,
        "<html><head><title>T</title><script>alert(1)</script></head><body>"
        "<p>Before <script>alert(1)</script>after.</p>"
        "<p><img src=x onerror=alert(1)>Image caption.</p>"
        '<p onclick="alert(1)">Click <a href="javascript:alert(1)">here</a>.</p>'
        "<noscript><img src=x onerror=alert(1)></noscript><style>p{}</style></body></html>",
    )
    assert r.status == "loaded"
    text = r.pages[0][1]
    assert text == "# T\n\nBefore after.\n\nImage caption.\n\nClick here."
    assert "alert" not in text and "<" not in text and "onerror" not in text and "javascript:" not in text


def test_markup_shown_as_text_stays_inert_text(tmp_path):
    """Escaped markup is content (a page about XSS): it comes out as the characters it shows,
    plain text that every report must escape, never as a tag."""
    r = _html(tmp_path, "<p>Never paste &lt;script&gt;alert(1)&lt;/script&gt; or &lt;img src=x onerror=alert(1)&gt; into a form.</p>")
    assert r.status == "loaded"
    assert r.pages == [(None, "Never paste <script>alert(1)</script> or <img src=x onerror=alert(1)> into a form.")]


@pytest.mark.parametrize("ext", ["txt", "md"])
def test_markup_in_plain_text_is_kept_verbatim(tmp_path, ext):
    text = "Policy text. <script>alert(1)</script> <img src=x onerror=alert(1)>\n"
    path = tmp_path / f"x.{ext}"
    path.write_text(text, encoding="utf-8")
    r = load_file(path, ext, CorpusParams())
    assert r.status == "loaded" and r.pages == [(None, text)]

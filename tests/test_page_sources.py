"""The page's sources keep each language in its own files (issue 13): no Python source inside a
.js/.mjs string and no runPython(...), no JavaScript inside build_wasm.py's strings, and the
page's Python and JavaScript pass their linters (ruff, node --check).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT, missing

JS_FILES = sorted(
    [
        *(ROOT / "web").glob("**/*.js"),
        *(ROOT / "web").glob("**/*.mjs"),
        *(ROOT / "scripts").glob("*.mjs"),
        *(ROOT / "tests").glob("**/*.mjs"),
    ]
)
JS_FILES = [p for p in JS_FILES if "dist" not in p.relative_to(ROOT).parts]
PYTHON_LINE = re.compile(r"^\s*(def \w+\(|class \w+|import \w+|from [\w.]+ import )", re.M)
JS_LINE = re.compile(r"^\s*(import \{|const \w+ =|let \w+ =|await |export )|runPython\(", re.M)
TEMPLATE = re.compile(r"`(?:[^`\\]|\\.)*`", re.S)


@pytest.mark.parametrize("path", JS_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_python_source_inside_javascript(path):
    source = path.read_text(encoding="utf-8")
    assert not re.search(r"\brunPython(Async)?\s*\(", source), "run Python modules with pyimport"
    for template in TEMPLATE.findall(source):
        assert not PYTHON_LINE.search(template), f"Python source in a template string: {template[:80]!r}"


def test_no_javascript_inside_the_build_script():
    tree = ast.parse((ROOT / "build_wasm.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not JS_LINE.search(node.value), f"JavaScript in a Python string: {node.value[:80]!r}"


NEW_PYTHON = [  # the page's Python, its build script and their tests
    "tokenizer/web",
    "build_wasm.py",
    "tests/test_bridge.py",
    "tests/test_bridge_files.py",
    "tests/test_bridge_analysis.py",
    "tests/test_page_sources.py",
]
NEW_JS = ["web/worker.js", "scripts/pyodide_snapshot.mjs", "tests/browser/pyodide_runner.mjs"]


def test_ruff_passes_on_the_pages_python():
    for args in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *args, *NEW_PYTHON], cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_node_check_passes_on_the_worker_and_the_scripts():
    node = shutil.which("node")
    if not node:
        missing("node is not installed")
    for path in NEW_JS:
        done = subprocess.run([node, "--check", path], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, f"{path}: {done.stderr}"

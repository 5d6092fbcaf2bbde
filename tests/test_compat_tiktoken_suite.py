"""tiktoken's own test suite passes with `import tiktoken` resolving to tokenizer.compat.

The suite is the tests/ folder of tiktoken's sdist for the installed tiktoken version, which
`make tiktoken-sdist` (a prerequisite of `make test`) downloads once into .cache/tiktoken-sdist;
nothing of tiktoken's is committed here and nothing is fetched at test time. It runs in a
subprocess whose PYTHONPATH starts with tests/data/tiktoken_shim, where `tiktoken` is a
package re-exporting tokenizer.compat. The shim's pytest plugin (`tiktoken_suite_guard`)
refuses to start if `tiktoken` is anything else and fails any test that opens a network
connection. Every test of the suite runs: none is deselected or skipped, none needs the
network (the encodings come from our shipped ranks) or tiktoken's Rust internals.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

from tests.helpers import DATA, ROOT, missing

SDIST_DIR = ROOT / ".cache" / "tiktoken-sdist"
SHIM = DATA / "tiktoken_shim"
SUITE_TIMEOUT = 900  # seconds; the suite takes about a minute here (1 MB of "x" in o200k_base is most)


def extract_suite(dest: Path) -> Path:
    """The sdist's tests/ folder, extracted under `dest`; skip (fail on CI) without the sdist."""
    version = importlib.metadata.version("tiktoken")
    sdist = SDIST_DIR / f"tiktoken-{version}.tar.gz"
    if not sdist.is_file():
        missing(f"tiktoken's sdist is missing ({sdist}): run `make tiktoken-sdist`")
    prefix = f"tiktoken-{version}/tests/"
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix)]
        archive.extractall(dest, members=members, filter="data")
    suite = dest / prefix
    assert (suite / "test_encoding.py").is_file(), f"{sdist} has no tests/test_encoding.py"
    return suite


def test_tiktoken_suite_passes_against_compat(tmp_path):
    suite = extract_suite(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SHIM), str(ROOT)])}
    env.pop("PYTEST_ADDOPTS", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tiktoken_suite_guard",
            "tests",
        ],
        cwd=suite.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"tiktoken's suite failed against tokenizer.compat:\n{output[-6000:]}"
    summary = re.search(r"^=*\s*(\d+) passed in [\d.]+s", output, re.MULTILINE)
    assert summary, f"expected only passed tests in the summary:\n{output[-3000:]}"
    assert int(summary.group(1)) >= 30, output[-3000:]  # 0.14.0 has 33 tests; none may vanish unseen


def test_the_suite_draws_no_text_from_our_library():
    """Hypothesis draws st.text() examples from the string literals of local (not installed)
    modules: tiktoken's test_hyp_roundtrip drew our '<|endoftext|>' and failed, as it would
    against real tiktoken given that text. Under the shim's plugin our library counts as
    installed code, as real tiktoken is."""
    probe = (
        "import tiktoken_suite_guard as guard; guard._library_counts_as_installed(); "
        "import tokenizer.compat; from hypothesis.internal.conjecture import providers; "
        "print('<|endoftext|>' in set(providers._get_local_constants().strings))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SHIM), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "False", result.stdout + result.stderr

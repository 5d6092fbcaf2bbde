"""Paths and small helpers shared by the test files (no test file imports another).

CORPORA is the real text of `../shared/corpora` (see its README); tests read it, never copy it.
"""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest

from tokenizer.patterns import compile_pattern

ROOT = Path(__file__).resolve().parents[1]
# The shared corpora sit next to the checkout (../shared/corpora); BPE_CORPORA names them when
# the checkout lives elsewhere (e.g. a clone in a temporary folder).
CORPORA = Path(os.environ.get("BPE_CORPORA") or ROOT.parent / "shared" / "corpora")
DATA = Path(__file__).resolve().parent / "data"


def corpus_text(name: str, limit: int | None = None) -> str:
    """A corpus file's text (its first `limit` characters), read as UTF-8."""
    text = (CORPORA / name).read_text(encoding="utf-8")
    return text if limit is None else text[:limit]


def missing(what: str) -> None:
    """Skip locally, but fail on CI: there a missing browser or node must not pass silently."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (required when CI is set)")
    pytest.skip(what)


def added_token(token_id: int, content: str, **options: bool) -> dict:
    """A tokenizer.json `added_tokens` entry with all seven fields, as `tokenizers` requires them
    (it refuses a file whose entry lacks one): a special token without options, unless `options`
    say otherwise."""
    fields = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
    return {"id": token_id, "content": content, **fields, **options}


# ----- the trainer's tests (test_train*.py) -------------------------------------------------

PATTERNS = ["gpt2", "gpt4", "o200k", "none"]  # the named split patterns the trainer is checked with


def corpus(name: str, limit: int | None = None) -> str:
    """A corpus file's text (its first `limit` characters); the test is skipped where it is missing."""
    path = CORPORA / name
    if not path.exists():
        pytest.skip(f"corpus {name} not found at {path}")
    return path.read_text(encoding="utf-8")[:limit]


def chunks_of(text: str, pattern: str) -> list[str]:
    """`text` split by the named `pattern` ("none": the whole text, one chunk), as train splits it."""
    if pattern == "none":
        return [text] if text else []
    return compile_pattern(pattern).findall(text)


# ----- the worker's Python side (tokenizer.web.bridge) in CPython (test_bridge*.py) ----------
# JavaScript arguments reach the bridge as Pyodide proxies; the fakes below have the two methods
# the bridge may call on them, and fail if it iterates them instead (element by element across
# the JS boundary, ~100x slower than one copy).

BRIDGE_ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")  # loaded into the bridge for its tests


class JsUint8Array:
    """What Python gets for a JS Uint8Array under Pyodide: a proxy with to_bytes()."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def to_bytes(self) -> bytes:
        return bytes(self.data)

    def __iter__(self):
        raise AssertionError("the bridge iterated a JS buffer instead of copying it with to_bytes()")


class JsArray:
    """What Python gets for a JS Array under Pyodide: a proxy with to_py()."""

    def __init__(self, values: list) -> None:
        self.values = values

    def to_py(self) -> list:
        return list(self.values)


class JsTypedArray:
    """What Python gets for a JS typed array under Pyodide: to_py() is a memoryview of it."""

    def __init__(self, values: array) -> None:
        self.values = values

    def to_py(self) -> memoryview:
        return memoryview(self.values)

    def __iter__(self):
        raise AssertionError("the bridge iterated a JS array instead of converting it with to_py()")


def int32s(data: bytes) -> list[int]:
    """The int32 values of a buffer the bridge returns (ids, lengths, offsets), as a list."""
    return array("i", data).tolist()

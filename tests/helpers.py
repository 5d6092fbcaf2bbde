"""Paths and small helpers shared by the test files (no test file imports another).

CORPORA is the real text of `../shared/corpora` (see its README); tests read it, never copy it.
"""

from __future__ import annotations

import os
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

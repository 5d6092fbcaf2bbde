"""One validated loader for every tokenizer file, and one way to name a tokenizer anywhere.

The files are read and checked by readers.py (the one reader: our STEM.json/STEM.tiktoken pair,
a Hugging Face tokenizer.json, a minbpe .model) and built by `Tokenizer.from_parts`; the
functions here are the ways in: `load_file(path)` (the CLI, the server, `Tokenizer.load`),
`from_texts` (the page, which reads the files in JavaScript) and `from_hf_json` (a parsed
tokenizer.json), so a bad file gets the same message everywhere.

`load_any(spec)` adds the reference encodings: a spec is, in this order of precedence,
  * a reference encoding name (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base), unless a
    file or saved stem of that name exists in the current folder;
  * anything `load_file` reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import readers
from .core import Tokenizer
from .encodings import get_encoding, list_encodings
from .formats import SAVED_SUFFIXES
from .patterns import DEFAULT_PATTERN
from .readers import MINBPE_SUFFIX


def load_any(spec: str) -> Tokenizer:
    """The tokenizer `spec` names (see the module docstring)."""
    readers.check_names_a_file(spec)
    path = Path(spec)
    saved = [path, path.with_name(path.name + ".json"), path.with_name(path.name + ".tiktoken")]
    if spec in list_encodings() and not any(p.exists() for p in saved):
        return get_encoding(spec)
    if any(p.exists() or p.is_symlink() for p in saved) or path.suffix in (*SAVED_SUFFIXES, MINBPE_SUFFIX):
        return load_file(path)
    if os.sep in spec or (os.altsep and os.altsep in spec):  # meant as a path: say what is missing there
        return load_file(path)
    raise ValueError(
        f"unknown tokenizer {spec!r}: give a reference encoding ({', '.join(list_encodings())}), "
        "a saved tokenizer (STEM, STEM.json, STEM.tiktoken), a minbpe .model or a Hugging Face tokenizer.json"
    )


def load_file(path: str | os.PathLike, *, pattern: str = DEFAULT_PATTERN) -> Tokenizer:
    """A tokenizer from its file(s); `pattern` is the split of a bare `.tiktoken` file."""
    return Tokenizer.load(path, pattern=pattern)


def from_texts(
    tiktoken_text: str | None,
    json_text: str | None,
    hf_text: str | None,
    source: str,
    *,
    tiktoken_source: str | None = None,
) -> Tokenizer:
    """The same loader on files' contents (the page reads them in JavaScript): a .tiktoken and/or
    our .json, a tokenizer.json (also when given as json_text), or a minbpe .model's text;
    `source` and `tiktoken_source` name the files in messages (readers.read_texts)."""
    parts = readers.read_texts(tiktoken_text, json_text, hf_text, source, tiktoken_source=tiktoken_source)
    return Tokenizer.from_parts(parts)


def from_hf_json(obj: dict[str, Any], source: str = "tokenizer.json") -> Tokenizer:
    """A byte-level BPE `tokenizer.json` (as a dict) -> Tokenizer with the same ids as HF."""
    return Tokenizer.from_parts(readers.hf_parts(obj, source))

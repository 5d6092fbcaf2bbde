"""One way to name a tokenizer anywhere: `load_any("cl100k_base")`, `load_any("my_tok")`, ...

A spec is, in this order of precedence:
  * a reference encoding name (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base), unless a
    file or saved stem of that name exists in the current folder;
  * a Hugging Face `tokenizer.json` (any `.json` whose top level has a "model"): imported
    through tokenizer.hf_export (byte-level BPE only);
  * a saved tokenizer: STEM, STEM.json or STEM.tiktoken (a bare `.tiktoken` without its
    `.json` splits with the GPT-4 pattern, as Tokenizer.load does).
Anything else is a ValueError that lists what a spec may be.
"""

from __future__ import annotations

from pathlib import Path

from . import formats
from .core import Tokenizer
from .encodings import get_encoding, list_encodings
from .hf_export import from_hf_json


def load_any(spec: str) -> Tokenizer:
    """The tokenizer `spec` names (see the module docstring)."""
    path = Path(spec)
    saved = [path, path.with_name(path.name + ".json"), path.with_name(path.name + ".tiktoken")]
    if spec in list_encodings() and not any(p.exists() for p in saved):
        return get_encoding(spec)
    if path.suffix == ".json" and path.is_file():
        meta = formats.read_json(path)
        if "model" in meta:
            return from_hf_json(meta, source=str(path))
    if any(p.is_file() for p in saved) or path.suffix in (".json", ".tiktoken"):
        return Tokenizer.load(path)
    raise ValueError(
        f"unknown tokenizer {spec!r}: give a reference encoding ({', '.join(list_encodings())}), "
        "a saved tokenizer (STEM, STEM.json, STEM.tiktoken) or a Hugging Face tokenizer.json"
    )

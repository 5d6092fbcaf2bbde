"""One validated loader for every tokenizer file, and one way to name a tokenizer anywhere.

`load_file(path)` reads any tokenizer file; the CLI, the server, `Tokenizer.load` and the page
(through `from_texts`, which takes the files' contents) all go through it, so a bad file gets
the same message everywhere: the file, the line or key, and the fix (checks in validate.py):

  * STEM, STEM.json, STEM.tiktoken: our pair (a bare `.tiktoken` splits with `pattern`,
    GPT-4's by default); a `.json` whose top level has "model" is a Hugging Face
    tokenizer.json (hf_import.py: byte-level BPE only, anything else refused by name);
  * X.model: karpathy/minbpe's format (formats.parse_minbpe).

`load_any(spec)` adds the reference encodings: a spec is, in this order of precedence,
  * a reference encoding name (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base), unless a
    file or saved stem of that name exists in the current folder;
  * anything `load_file` reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import formats
from .core import Tokenizer
from .encodings import get_encoding, list_encodings
from .hf_import import from_hf_json
from .patterns import NO_SPLIT, PATTERNS, is_named
from .regex_check import check_split_regex
from .validate import TokenizerFileError, check_disjoint, check_merges, check_special_tokens, check_type

SAVED_SUFFIXES = (".json", ".tiktoken")
MINBPE_SUFFIX = ".model"


def load_any(spec: str) -> Tokenizer:
    """The tokenizer `spec` names (see the module docstring)."""
    path = Path(spec)
    saved = [path, path.with_name(path.name + ".json"), path.with_name(path.name + ".tiktoken")]
    if spec in list_encodings() and not any(p.exists() for p in saved):
        return get_encoding(spec)
    if any(p.exists() for p in saved) or path.suffix in (*SAVED_SUFFIXES, MINBPE_SUFFIX):
        return load_file(path)
    raise ValueError(
        f"unknown tokenizer {spec!r}: give a reference encoding ({', '.join(list_encodings())}), "
        "a saved tokenizer (STEM, STEM.json, STEM.tiktoken), a minbpe .model or a Hugging Face tokenizer.json"
    )


def load_file(path: str | os.PathLike, *, pattern: str = "gpt4") -> Tokenizer:
    """A tokenizer from its file(s); `pattern` is the split of a bare `.tiktoken` file."""
    path = Path(path)
    if path.suffix == MINBPE_SUFFIX:
        return from_minbpe(formats.decode_utf8(formats.read_bytes(path), str(path)), str(path))
    stem = path.with_suffix("") if path.suffix in SAVED_SUFFIXES else path
    json_path = stem.with_name(stem.name + ".json")
    tiktoken_path = stem.with_name(stem.name + ".tiktoken")
    if not json_path.exists() and not tiktoken_path.exists():
        raise FileNotFoundError(
            f"no tokenizer at {path} (looked for {json_path.name} and {tiktoken_path.name})"
        )
    meta = formats.read_json(json_path) if json_path.exists() else None
    if meta is not None and "model" in meta and "merges" not in meta:
        return from_hf_json(meta, str(json_path))
    ranks = formats.read_tiktoken(tiktoken_path) if tiktoken_path.exists() else None
    if meta is None:
        return from_ranks(ranks, pattern, str(tiktoken_path), name=stem.name)  # type: ignore[arg-type]
    return from_saved_json(meta, ranks, str(json_path), tiktoken_source=str(tiktoken_path))


def from_texts(
    tiktoken_text: str | None, json_text: str | None, hf_text: str | None, source: str
) -> Tokenizer:
    """The same loader on files' contents (the page reads them in JavaScript): a .tiktoken and/or
    our .json, a tokenizer.json (also when given as json_text), or a minbpe .model's text."""
    if hf_text:
        return from_hf_json(formats.parse_json(hf_text, source), source)
    if json_text and source.endswith(MINBPE_SUFFIX):
        return from_minbpe(json_text, source)
    ranks = formats.parse_tiktoken(tiktoken_text, source) if tiktoken_text else None
    if json_text:
        meta = formats.parse_json(json_text, source)
        if "model" in meta and "merges" not in meta:
            return from_hf_json(meta, source)
        return from_saved_json(meta, ranks, source)
    if ranks is not None:
        return from_ranks(ranks, "gpt4", source, name=source.rsplit(".", 1)[0])
    raise ValueError("no file given")


def from_ranks(ranks: dict[bytes, int], pattern: str, source: str, *, name: str) -> Tokenizer:
    try:
        return Tokenizer(ranks, pattern, name=name)
    except ValueError as e:
        raise TokenizerFileError(f"{source}: {e}") from None


def from_minbpe(text: str, source: str) -> Tokenizer:
    """A minbpe `.model`: ids as minbpe's load() builds them (bytes 0..255, merge i -> 256 + i)."""
    regex, special, merges = formats.parse_minbpe(text, source)
    pattern = _file_pattern(regex or NO_SPLIT, source, "line 2 (the pattern)")
    check_special_tokens(special, source, "special tokens")
    check_disjoint(special, range(256 + len(merges)), source, "special tokens")
    return _build(merges, pattern, special, source, name=Path(source).stem, metadata={})


def from_saved_json(
    meta: dict[str, Any], ranks: dict[bytes, int] | None, source: str, *, tiktoken_source: str = ".tiktoken"
) -> Tokenizer:
    """Our STEM.json (+ the ranks of STEM.tiktoken), every field checked."""
    name = check_type(meta.get("name", "custom"), str, source, "name", "a string")
    pattern = _saved_pattern(meta, source)
    special = check_special_tokens(meta.get("special_tokens"), source)
    metadata = meta.get("metadata")
    if metadata is not None:
        check_type(metadata, dict, source, "metadata", "an object (or absent)")
    if meta.get("merges") is None:
        if ranks is None:
            raise TokenizerFileError(f"{source}: has no merges and there is no .tiktoken file next to it")
        check_disjoint(special, set(ranks.values()), source)
        try:
            return Tokenizer(ranks, pattern, special, name=name, metadata=metadata)
        except ValueError as e:
            raise TokenizerFileError(f"{tiktoken_source}: {e}") from None
    merges = check_merges(meta["merges"], source)
    check_disjoint(special, range(256 + len(merges)), source)
    tok = _build(merges, pattern, special, source, name=name, metadata=metadata)
    if ranks is not None and ranks != tok.mergeable_ranks:
        raise TokenizerFileError(
            f"{tiktoken_source}: its ranks disagree with the merges in {source}; the two files "
            "belong to different tokenizers (save them again together, or remove one)"
        )
    return tok


def _build(merges, pattern, special, source, *, name, metadata) -> Tokenizer:
    try:
        return Tokenizer.from_merges(merges, pattern, special, name=name, metadata=metadata)
    except ValueError as e:
        raise TokenizerFileError(f"{source}: {e}") from None


def _saved_pattern(meta: dict[str, Any], source: str) -> str:
    """ "pattern" (a name or a regex) and "pattern_regex" (its regex): the name when known."""
    pattern = meta.get("pattern")
    regex = meta.get("pattern_regex")
    if pattern is not None:
        check_type(pattern, str, source, "pattern", "a pattern name (gpt2, gpt4, o200k, none) or a regex")
    if regex is not None:
        check_type(regex, str, source, "pattern_regex", "a regex string")
    if pattern in PATTERNS or pattern == NO_SPLIT:
        return pattern
    return _file_pattern(regex or pattern or "gpt4", source, "key 'pattern'")


def _file_pattern(pattern: str, source: str, where: str) -> str:
    """A pattern read from a file: a name or a named pattern's string as is, a custom regex checked."""
    if pattern == NO_SPLIT or is_named(pattern):
        return next((name for name, r in PATTERNS.items() if r == pattern), pattern)
    try:
        check_split_regex(pattern)
    except ValueError as e:
        raise TokenizerFileError(f"{source}: {where}: {e}") from None
    return pattern

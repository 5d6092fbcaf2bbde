"""Read any tokenizer file into checked parts: the one validated reader under every loader.

`read_file(path)` reads every kind of tokenizer file; `Tokenizer.load` builds from what it
returns (Tokenizer.from_parts), and the CLI, the server and the page (through `read_texts`,
which takes the files' contents) all go through `loading.py` onto the same two functions, so a
bad file gets the same message everywhere: the file, the line or key, and the fix (checks in
validate.py):

  * STEM, STEM.json, STEM.tiktoken: our pair (a bare `.tiktoken` splits with `pattern`,
    GPT-4's by default); a `.json` whose top level has "model" is a Hugging Face
    tokenizer.json (hf_import.py: byte-level BPE only, anything else refused by name);
  * X.model: karpathy/minbpe's format (formats.parse_minbpe).

The readers return plain data (TokenizerParts), never a Tokenizer: core.py imports this module
for `Tokenizer.load`, so nothing here may import core (tests/test_layers.py forbids cycles).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import formats
from .added_tokens import AddedMatching
from .hf_import import parse_hf
from .patterns import (
    DEFAULT_PATTERN,
    NO_SPLIT,
    NO_SPLIT_REGEX,
    PATTERNS,
    TIKTOKEN,
    UNICODE_FLAVOURS,
    is_named,
    resolve_pattern,
)
from .preparation import Preparation, check_step_count
from .regex_check import check_backtracking, check_pre_split, check_split_regex
from .validate import (
    TokenizerFileError,
    check_disjoint,
    check_merges,
    check_special_tokens,
    check_type,
    is_id,
)

# top-level keys of a Hugging Face tokenizer.json that our .json never has: such a file without
# "model" is a damaged tokenizer.json, not one of ours
HF_ONLY_KEYS = (
    "added_tokens",
    "normalizer",
    "pre_tokenizer",
    "post_processor",
    "decoder",
    "truncation",
    "padding",
)
MINBPE_SUFFIX = ".model"


@dataclass(frozen=True)
class TokenizerParts:
    """What a tokenizer file says, every field checked; `Tokenizer.from_parts` builds it.

    `merges` (bytes are ids 0..255, merge i is id 256 + i) or `ranks`, or both when our .json
    has its .tiktoken next to it (from_parts checks that the two agree). An error while
    building names `source` (the file of the merges and the other fields) or `ranks_source`
    (the file of the ranks, when another).
    """

    source: str
    name: str
    pattern: str
    special_tokens: dict[str, int]
    metadata: dict[str, Any] | None = None
    merges: list[tuple[int, int]] | None = None
    ranks: dict[bytes, int] | None = None
    ranks_source: str = ""
    preparation: Preparation | None = None  # preparation.py: normalization, HF's prefix space
    chunk_lookup: bool = True  # False: HF's ignore_merges=false (see core.py)
    unicode: str | None = None  # the pattern's Unicode tables (patterns.py); None: its default
    decoder: dict[int, bytes] | None = None  # with ranks only: theirs plus later ids of repeated bytes


def _nothing_at(path: Path, json_path: Path, tiktoken_path: Path) -> str:
    """Why no tokenizer is at `path`. A folder is a Hugging Face model's (tokenizer.json in it,
    beside the weights) more often than a typo: name the file to give."""
    if path.is_dir():
        inner = path / "tokenizer.json"
        fix = (
            f"give {inner}"
            if inner.is_file()
            else "give a tokenizer file in it (STEM.json, tokenizer.json, ...)"
        )
        return f"{path} is a folder, not a tokenizer: {fix}"
    if path.exists():  # /dev/null, a FIFO, a file of another suffix
        kind = "a regular file" if path.is_file() else "a device, pipe or socket"
        return (
            f"{path} is {kind} that no tokenizer reader takes: give a saved tokenizer (STEM, STEM.json, "
            "STEM.tiktoken), a minbpe .model or a Hugging Face tokenizer.json"
        )
    return (
        f"no tokenizer at {path} (looked for {json_path.name} and {tiktoken_path.name}): give a saved "
        "tokenizer (STEM, STEM.json, STEM.tiktoken), a minbpe .model or a Hugging Face tokenizer.json"
    )


def read_file(path: str | os.PathLike, *, pattern: str = DEFAULT_PATTERN) -> TokenizerParts:
    """A tokenizer's file(s); `pattern` is the split of a bare `.tiktoken` file."""
    check_names_a_file(path)
    path = Path(path)
    check_not_broken_link(path)
    if path.suffix == MINBPE_SUFFIX:
        return minbpe_parts(formats.decode_utf8(formats.read_bytes(path), str(path)), str(path))
    stem = formats.saved_stem(path)
    json_path = stem.with_name(stem.name + ".json")
    tiktoken_path = stem.with_name(stem.name + ".tiktoken")
    if not json_path.exists() and not tiktoken_path.exists():
        for file in (json_path, tiktoken_path):
            check_not_broken_link(file)
        raise FileNotFoundError(_nothing_at(path, json_path, tiktoken_path))
    meta = formats.read_json(json_path) if json_path.exists() else None
    if meta is not None and "model" in meta and "merges" not in meta:
        return hf_parts(meta, str(json_path))
    ranks = formats.read_tiktoken(tiktoken_path) if tiktoken_path.exists() else None
    if meta is None:
        pattern = _file_pattern(pattern, str(tiktoken_path), "its split pattern")  # a custom one is checked
        return TokenizerParts(str(tiktoken_path), formats.name_of_file(stem.name), pattern, {}, ranks=ranks)
    return saved_json_parts(meta, ranks, str(json_path), tiktoken_source=str(tiktoken_path))


def check_not_broken_link(path: Path) -> None:
    """A symbolic link whose target is gone (or a loop of links) is named as one: it said "no
    tokenizer at x.tiktoken", though `ls` shows x.tiktoken right there."""
    if path.is_symlink() and not path.exists():
        raise FileNotFoundError(
            f"{path} is a symbolic link to {os.readlink(path)}, which does not exist (or is a loop "
            "of links): fix the link, or give the file itself"
        )


def check_names_a_file(spec: str | os.PathLike) -> None:
    """'' , '.', '/' or 'folder/' name no file (Path('.').with_name said "PosixPath('.') has an
    empty name")."""
    if not str(spec).strip() or str(spec).endswith(("/", os.sep)) or Path(spec).name in ("", ".", ".."):
        raise TokenizerFileError(
            f"{str(spec)!r} names no tokenizer file: give a saved tokenizer (STEM, STEM.json, "
            "STEM.tiktoken), a minbpe .model or a Hugging Face tokenizer.json"
        )


def read_texts(
    tiktoken_text: str | None,
    json_text: str | None,
    hf_text: str | None,
    source: str,
    *,
    tiktoken_source: str | None = None,
) -> TokenizerParts:
    """The same reader on files' contents (the page reads them in JavaScript): a .tiktoken and/or
    our .json, a tokenizer.json (also when given as json_text), or a minbpe .model's text.

    `source` names the file of json_text (or hf_text), `tiktoken_source` the .tiktoken's (default
    `source`), so that an error names the file it is in. An empty text is an empty file, read
    (and refused) as such; None is no file."""
    tiktoken_source = tiktoken_source or source
    if hf_text is not None:
        return hf_parts(formats.parse_json(hf_text, source), source)
    if json_text is not None and source.endswith(MINBPE_SUFFIX):
        return minbpe_parts(json_text, source)
    ranks = formats.parse_tiktoken(tiktoken_text, tiktoken_source) if tiktoken_text is not None else None
    if json_text is not None:
        meta = formats.parse_json(json_text, source)
        if "model" in meta and "merges" not in meta:
            return hf_parts(meta, source)
        return saved_json_parts(meta, ranks, source, tiktoken_source=tiktoken_source)
    if ranks is not None:
        return TokenizerParts(
            tiktoken_source, tiktoken_source.rsplit(".", 1)[0], DEFAULT_PATTERN, {}, ranks=ranks
        )
    raise ValueError("no file given")


def hf_parts(obj: Any, source: str = "tokenizer.json") -> TokenizerParts:
    """A Hugging Face tokenizer.json (as a dict; hf_import.py says what loads and why)."""
    hf = parse_hf(obj, source)
    pre_splits = hf.preparation.pre_splits if hf.preparation is not None else ()
    for pattern in (*pre_splits, hf.pattern):
        if pattern != NO_SPLIT and not is_named(pattern):
            try:
                check_backtracking(pattern)
            except ValueError as e:
                raise TokenizerFileError(f"{source}: pre_tokenizer Split: {e}") from None
    return TokenizerParts(
        source,
        formats.name_of_file(Path(source).stem),
        hf.pattern,
        hf.special_tokens,
        ranks=hf.ranks,
        preparation=hf.preparation,
        chunk_lookup=hf.chunk_lookup,
        unicode=TIKTOKEN,  # Oniguruma's Unicode (16.0), also for a custom Split regex
    )


def minbpe_parts(text: str, source: str) -> TokenizerParts:
    """A minbpe `.model`: ids as minbpe's load() builds them (bytes 0..255, merge i -> 256 + i)."""
    regex, special, merges = formats.parse_minbpe(text, source)
    pattern = _file_pattern(regex or NO_SPLIT, source, "line 2 (the pattern)")
    check_special_tokens(special, source, "special tokens")
    check_disjoint(special, range(256 + len(merges)), source, "special tokens")
    name = formats.name_of_file(Path(source).stem)
    return TokenizerParts(source, name, pattern, special, metadata={}, merges=merges)


def saved_json_parts(
    meta: dict[str, Any], ranks: dict[bytes, int] | None, source: str, *, tiktoken_source: str = ".tiktoken"
) -> TokenizerParts:
    """Our STEM.json (+ the ranks of STEM.tiktoken), every field checked."""
    _check_format(meta, source)
    name = check_type(meta.get("name", "custom"), str, source, "name", "a string")
    pattern = _saved_pattern(meta, source)
    special = check_special_tokens(meta.get("special_tokens"), source)
    metadata = meta.get("metadata")
    if metadata is not None:
        check_type(metadata, dict, source, "metadata", "an object (or absent)")
    options = {
        "preparation": _saved_preparation(meta.get("preparation"), source, special),
        "chunk_lookup": meta.get("chunk_lookup", True),
        "unicode": meta.get("unicode"),
    }
    if not isinstance(options["chunk_lookup"], bool):
        raise TokenizerFileError(f"{source}: key 'chunk_lookup' must be true or false")
    if options["unicode"] not in (None, *UNICODE_FLAVOURS):
        raise TokenizerFileError(
            f"{source}: key 'unicode' must be one of {', '.join(UNICODE_FLAVOURS)} (or absent), "
            f"not {options['unicode']!r}"
        )
    if meta.get("merges") is None:
        if ranks is None:
            raise TokenizerFileError(f"{source}: has no merges and there is no .tiktoken file next to it")
        decoder = _saved_duplicates(meta.get("duplicate_ids"), ranks, source)
        check_disjoint(special, set(decoder or ranks.values()), source)
        _check_vocab_size(meta, max(decoder or ranks.values()), special, source)
        return TokenizerParts(
            source,
            name,
            pattern,
            special,
            metadata,
            ranks=ranks,
            ranks_source=tiktoken_source,
            decoder=decoder,
            **options,
        )
    merges = check_merges(meta["merges"], source)
    check_disjoint(special, range(256 + len(merges)), source)
    _check_vocab_size(meta, 255 + len(merges), special, source)
    return TokenizerParts(
        source,
        name,
        pattern,
        special,
        metadata,
        merges=merges,
        ranks=ranks,
        ranks_source=tiktoken_source,
        **options,
    )


def _check_vocab_size(meta: dict[str, Any], largest: int, special: dict[str, int], source: str) -> None:
    """The saved vocab_size (n_vocab when saved: one more than the largest id) must still be
    that: a .json edited by hand said 5 for 270 tokens, and loaded without a word."""
    if "vocab_size" not in meta:
        return
    n_vocab = max([largest, *special.values()]) + 1
    if type(meta["vocab_size"]) is not int or meta["vocab_size"] != n_vocab:
        raise TokenizerFileError(
            f"{source}: key 'vocab_size' is {meta['vocab_size']!r}, but the tokenizer's ids go up to "
            f"{n_vocab - 1:,}: the file was edited or is damaged; set it to {n_vocab}, or remove the key"
        )


def _saved_duplicates(value: Any, ranks: dict[bytes, int], source: str) -> dict[int, bytes] | None:
    """ "duplicate_ids": {"259": 258, ...}: ids that decode to an earlier token's bytes, which the
    .tiktoken cannot hold (an extension of a base with repeated merges saves them so) -> the
    decoder: the ranks' ids plus these."""
    if value is None:
        return None
    check_type(value, dict, source, "duplicate_ids", 'an object {"later id": earlier id, ...}')
    decoder = {rank: token for token, rank in ranks.items()}
    for key, earlier in value.items():
        where = f"{source}: duplicate_ids[{key!r}]"
        later = int(key) if key.isascii() and key.isdigit() and len(key) < 11 else None
        if later is None or not is_id(later) or later in decoder:
            raise TokenizerFileError(f"{where}: the key must be an id that no token of the ranks has")
        if type(earlier) is not int or earlier not in ranks.values():
            raise TokenizerFileError(f"{where}: {earlier!r} is not an id of the ranks")
        decoder[later] = decoder[earlier]
    return decoder


def _saved_preparation(value: Any, source: str, special: dict[str, int]) -> Preparation | None:
    """ "preparation": {"normalizers": [...], "pre_splits": [...], "prefix_space": "segment" | "chunk" | null,
    "added": {"lstrip": [...], ...} (added_tokens.py; absent without HF's options)}."""
    if value is None:
        return None
    check_type(value, dict, source, "preparation", 'an object {"normalizers": [...], "prefix_space": ...}')
    normalizers = check_type(value.get("normalizers", []), list, source, "preparation.normalizers", "a list")
    pre_splits = check_type(value.get("pre_splits", []), list, source, "preparation.pre_splits", "a list")
    check_step_count(len(normalizers), source, "preparation.normalizers")
    check_step_count(len(pre_splits), source, "preparation.pre_splits")
    for i, pattern in enumerate(pre_splits):
        if isinstance(pattern, str) and pattern != NO_SPLIT and not is_named(pattern):
            try:
                check_pre_split(pattern)
            except ValueError as e:
                raise TokenizerFileError(f"{source}: preparation.pre_splits[{i}]: {e}") from None
    try:
        added = AddedMatching.from_json(value["added"], "added") if "added" in value else None
        unknown = sorted(added.tokens() - set(special)) if added else []
        if unknown:
            raise ValueError(f"added names {unknown[0]!r}, which is not one of special_tokens")
        return (
            Preparation(tuple(normalizers), value.get("prefix_space"), tuple(pre_splits), added or None)
            or None
        )
    except (ValueError, TypeError) as e:
        raise TokenizerFileError(f"{source}: preparation: {e}") from None


def _check_format(meta: dict[str, Any], source: str) -> None:
    """ "format" and "version", when there (files of early versions lack them): another format,
    or a later version whose fields may mean something else, is refused, not read as ours."""
    hf_keys = [key for key in HF_ONLY_KEYS if key in meta]
    if "format" not in meta and hf_keys:  # else "format version '1.0' ... a newer bpe-playground wrote it"
        raise TokenizerFileError(
            f"{source}: has {' and '.join(map(repr, hf_keys[:2]))} as a Hugging Face tokenizer.json does, but no "
            "'model' (the BPE vocabulary and merges); the file is damaged or not a tokenizer"
        )
    if "format" not in meta and len(meta) >= 256 and all(type(v) is int for v in meta.values()):
        raise TokenizerFileError(  # else "has no merges and there is no .tiktoken file next to it"
            f"{source}: maps {len(meta):,} tokens to ids, as GPT-2's vocab.json does; that vocabulary "
            "without its merges.txt is not a tokenizer, and the pair is not read here: load the "
            "tokenizer.json that Hugging Face tokenizers saves for it"
        )
    kind, version = meta.get("format", formats.FORMAT_NAME), meta.get("version", formats.FORMAT_VERSION)
    if kind != formats.FORMAT_NAME:
        raise TokenizerFileError(
            f"{source}: key 'format' is {_short_value(kind)}, not {formats.FORMAT_NAME!r}: not a file "
            "this library wrote (a Hugging Face tokenizer.json has a 'model' key instead)"
        )
    if type(version) is not int or not 1 <= version <= formats.FORMAT_VERSION:
        raise TokenizerFileError(
            f"{source}: format version {_short_value(version)} is not one this version reads (1 to "
            f"{formats.FORMAT_VERSION}); a newer bpe-playground wrote it: upgrade, or save it again there"
        )


def _short_value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _saved_pattern(meta: dict[str, Any], source: str) -> str:
    """ "pattern" (a name or a regex) and "pattern_regex" (its regex): the name when known."""
    pattern = meta.get("pattern")
    regex = meta.get("pattern_regex")
    if pattern is not None:
        check_type(pattern, str, source, "pattern", "a pattern name (gpt2, gpt4, o200k, none) or a regex")
    if regex is not None:
        check_type(regex, str, source, "pattern_regex", "a regex string")
    if pattern is None and regex == NO_SPLIT_REGEX:
        return NO_SPLIT
    if pattern in PATTERNS or pattern == NO_SPLIT:
        # NO_SPLIT's regex: "none" in files of before session 16, NO_SPLIT_REGEX since
        agrees = (
            regex in (NO_SPLIT, NO_SPLIT_REGEX) if pattern == NO_SPLIT else regex == resolve_pattern(pattern)
        )
        if regex is not None and not agrees:  # an edited file: which one is meant?
            raise ValueError(
                f"{source}: key 'pattern' names {pattern!r}, but 'pattern_regex' is another regex "
                f"({regex[:60]!r}); they must agree: remove the one you did not mean"
            )
        return pattern
    return _file_pattern(regex or pattern or DEFAULT_PATTERN, source, "key 'pattern'")


def _file_pattern(pattern: str, source: str, where: str) -> str:
    """A pattern read from a file: a name or a named pattern's string as is, a custom regex checked."""
    if pattern == NO_SPLIT or is_named(pattern):
        return next((name for name, r in PATTERNS.items() if r == pattern), pattern)
    try:
        check_split_regex(pattern)
    except ValueError as e:
        raise TokenizerFileError(f"{source}: {where}: {e}") from None
    return pattern

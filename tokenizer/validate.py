"""Checks on tokenizer files before anything is built from them.

A tokenizer file comes from anywhere (a download, an edit by hand, a drag-and-drop onto the
page), and a bad one must fail at load time with a message that names the file, the line or
key, and the fix, never later as a wrong id (a rank of 2**32 that overflows the page's int32
arrays, a special token "" that matches between every two characters) or as a crash inside
the parser (100,000 nested `[` exhaust the stack: RecursionError in CPython, a fatal error in
Pyodide). So every limit here is checked on the raw text first, and only then is it parsed:

- size: the text is at most MAX_FILE_BYTES;
- nesting: brackets outside strings are counted in one pass, at most MAX_JSON_DEPTH levels;
- types and ranges: ids are ints (not bools) in [0, 2**31), special strings are non-empty,
  merges name only ids made before them, metadata is an object, the pattern a string.

Every error is a TokenizerFileError (a ValueError), so callers that catch ValueError (the CLI's
exit code 2, the server's 400, the page's message) need nothing new.
"""

from __future__ import annotations

import json
import operator
import re
from itertools import accumulate
from typing import Any

# Numbers as people type them at a boundary (the CLI's options, the server's form and command
# line): ASCII digits and a sign; for a real, a point and an exponent too. int() and float() also
# read '٣٠٠' (Arabic-Indic), '３００' (fullwidth) and '3_00', float() 'nan' and 'inf': `train
# --vocab-size ٣٠٠` trained 300 without a word. (re.ASCII is moot for [0-9], kept explicit.)
DECIMAL = re.compile(r"[+-]?[0-9]+", re.ASCII)
REAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def plain_int(value: Any) -> Any:
    """An integer of another type (numpy's int64, an int subclass) as a plain int; anything else
    as it is, for the caller's check to refuse (bools too: True is no size). A sweep over
    np.arange gave np.int64 vocabulary sizes, refused as "must be an integer"."""
    return operator.index(value) if is_integer(value) and type(value) is not int else value


def is_integer(value: Any) -> bool:
    """An integer of any integer type (int, numpy's, an int subclass), not a bool: True is no
    count or size, and a float (1.5 merges) is none either."""
    return not isinstance(value, bool) and hasattr(type(value), "__index__")


MAX_ID = 2**31  # exclusive: the page holds ids in int32 arrays; tiktoken's largest is ~200k
# bytes: a Hugging Face tokenizer.json of a 200k vocabulary (every split of every token
# listed as a merge) is ~60 MB; four times that is still a tokenizer, more is a mistake.
MAX_FILE_BYTES = 256 * 2**20
# levels of [ and {: our .json needs 3, a tokenizer.json 5; 64 leaves room for any metadata
# and stays far below the ~1,000 levels where Python's (and Pyodide's) JSON parser recurses out.
MAX_JSON_DEPTH = 64
# digits of an integer in a tokenizer file: ids, counts and sizes are below 2**63 (19 digits);
# int() refuses 4,300+ digits with advice (sys.set_int_max_str_digits) meant for programmers
MAX_INT_DIGITS = 40
# bytes of all tokens together: a tokenizer this big could not be saved, its .tiktoken (the tokens
# in base64) would pass MAX_FILE_BYTES. Merges name ids, not bytes, so a 1 KB file can describe
# far more: [[97, 97], [256, 256], [257, 257], ...] doubles a token with each merge (2**41
# bytes after 40), which ran out of memory while loading.
MAX_TOKEN_BYTES = MAX_FILE_BYTES
# special (HF: added) tokens in one file: real tokenizers have a few to a few thousand (Llama 3:
# 256); each costs ~2 KB and a branch of the special-token regex, so 300,000 took 7 s and 500 MB
# to load, and the 10 million a 256 MiB file holds would take minutes and gigabytes.
MAX_FILE_SPECIAL_TOKENS = 65_536

# values in one tokenizer file (lines of a .tiktoken or a .model, commas outside strings in a
# JSON file): o200k_base's tokenizer.json has ~600,000, a tokenizer of MAX_VOCAB tokens saved by
# us ~3.4 million; a 256 MiB file of 10 million merges took 34 s and 3.6 GB to load.
MAX_FILE_ENTRIES = 2**22

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class TokenizerFileError(ValueError):
    """A tokenizer file that cannot be loaded; the message names the file, the place and the fix."""


def check_size(n_bytes: int, source: str) -> None:
    if n_bytes > MAX_FILE_BYTES:
        raise TokenizerFileError(
            f"{source}: {n_bytes:,} bytes is more than the {MAX_FILE_BYTES // 2**20} MiB a tokenizer "
            "file may have; is it the right file?"
        )


def check_entries(count: int, source: str, what: str) -> None:
    if count > MAX_FILE_ENTRIES:
        raise TokenizerFileError(
            f"{source}: {count:,} {what}, more than the {MAX_FILE_ENTRIES:,} a tokenizer file may "
            "have (o200k_base's has about 600,000); is it the right file?"
        )


def json_depth(text: str, *, outside: str | None = None) -> int:
    """The deepest nesting of [ and { outside strings, without parsing (no recursion).
    `outside`: the text with its strings removed, when already made."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text) if outside is None else outside)
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def parse_json(text: str, source: str) -> dict[str, Any]:
    """JSON text -> its top-level object, size, entries and depth checked before json.loads."""
    check_size(len(text), source)
    outside = _JSON_STRING.sub("", text)
    check_entries(outside.count(","), source, "JSON values")
    depth = json_depth(text, outside=outside)
    if depth > MAX_JSON_DEPTH:
        raise TokenizerFileError(
            f"{source}: JSON nested {depth} levels deep (a tokenizer file needs fewer than "
            f"{MAX_JSON_DEPTH}); the file is not a tokenizer, or it is damaged"
        )
    try:
        obj = json.loads(text, parse_constant=_not_json, parse_int=_json_int)
    except json.JSONDecodeError as e:  # e.msg alone ("Unterminated string starting at") said not where
        cut = e.msg.startswith("Unterminated") or e.pos >= len(text.rstrip())
        hint = "; the file ends before its JSON does: it was cut short, or a quote or bracket is missing"
        raise TokenizerFileError(
            f"{source}:{e.lineno}: invalid JSON: {e.msg.removesuffix(' at')} at column {e.colno}"
            f"{hint if cut else ''}"
        ) from None
    except (ValueError, RecursionError) as e:  # e.g. an integer of more than 4,300 digits
        raise TokenizerFileError(f"{source}: invalid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise TokenizerFileError(f"{source}: expected a JSON object at the top level")
    return obj


def _json_int(digits: str) -> int:
    """An integer of the file, at most MAX_INT_DIGITS long (a longer one is damage, not a value)."""
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(
            f"a number of {len(digits.lstrip('-')):,} digits ({digits[:12]}...); no field of a tokenizer "
            f"file has more than {MAX_INT_DIGITS}: the file is damaged"
        )
    return int(digits)


def _not_json(constant: str) -> None:
    """NaN and Infinity, which Python's json reads but JSON has not: the server listed such
    metadata as is, and the page's JSON.parse refused the whole list."""
    raise ValueError(f"{constant} is not a JSON value; write a number or null")


def decode_utf8(data: bytes, source: str) -> str:
    check_size(len(data), source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokenizerFileError(f"{source}: not UTF-8 text (byte offset {e.start})") from None


def is_id(value: Any) -> bool:
    return type(value) is int and 0 <= value < MAX_ID


def check_id(value: Any, where: str) -> int:
    """An id (int, not bool, in [0, 2**31)); `where` is "file: key" for the message."""
    if not is_id(value):
        raise TokenizerFileError(
            f"{where}: {_show(value)} is not a token id; ids are integers from 0 to {MAX_ID - 1}"
        )
    return value


def check_special_tokens(value: Any, source: str, key: str = "special_tokens") -> dict[str, int]:
    """{"<|end|>": 100257, ...}: non-empty strings, valid and distinct ids."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TokenizerFileError(
            f"{source}: key {key!r} must be an object mapping special tokens to ids, got {_show(value)}"
        )
    check_special_count(len(value), source, key)
    seen: dict[int, str] = {}
    for token, token_id in value.items():
        if not token:
            raise TokenizerFileError(
                f"{source}: key {key!r} has an empty special token (id {_show(token_id)}); "
                "it would match between every two characters: remove it"
            )
        check_text(token, f"{source}: {key}[{token!r}]")
        check_id(token_id, f"{source}: {key}[{token!r}]")
        if token_id in seen:
            raise TokenizerFileError(
                f"{source}: {key}: {seen[token_id]!r} and {token!r} share id {token_id}; give each its own"
            )
        seen[token_id] = token
    return dict(value)


def has_utf8(text: str) -> bool:
    """Whether `text` has UTF-8 bytes: no lone surrogate (half of a UTF-16 pair, as JSON's
    "\\ud83d" escape alone or a non-UTF-8 byte read with surrogateescape gives)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(token: str, where: str) -> None:
    """No lone surrogate (JSON's "\\ud83d" escape alone): a special token must have UTF-8 bytes."""
    if not has_utf8(token):
        raise TokenizerFileError(
            f"{where} holds a lone surrogate (half of a UTF-16 pair), which is not text and has no "
            "UTF-8 bytes: write the whole character, or remove the token"
        )


def check_special_count(count: int, source: str, key: str) -> None:
    if count > MAX_FILE_SPECIAL_TOKENS:
        raise TokenizerFileError(
            f"{source}: {key} has {count:,} tokens; at most {MAX_FILE_SPECIAL_TOKENS:,} are loaded "
            "(real tokenizers have a few thousand at most); is it the right file?"
        )


def check_merges(value: Any, source: str, key: str = "merges") -> list[tuple[int, int]]:
    """[[left, right], ...]: merge i makes id 256 + i, so it may only name ids below that."""
    if not isinstance(value, list):
        raise TokenizerFileError(f"{source}: key {key!r} must be a list of [left_id, right_id] pairs")
    merges = []
    lengths = [1] * 256  # bytes of each token so far, counted before any is built
    total = 256
    for i, pair in enumerate(value):
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(x) is int for x in pair)):
            raise TokenizerFileError(
                f"{source}: {key}[{i}] is {_show(pair)}; 'merges' must be a list of [left_id, right_id] pairs"
            )
        for x in pair:
            if not 0 <= x < 256 + i:
                raise TokenizerFileError(
                    f"{source}: {key}[{i}] names id {x}, which is not made before it (merge {i} makes "
                    f"id {256 + i}; ids 0..255 are the bytes)"
                )
        length = lengths[pair[0]] + lengths[pair[1]]
        total += length
        if total > MAX_TOKEN_BYTES:
            raise TokenizerFileError(
                f"{source}: {key}[{i}] makes a token of {length:,} bytes, and the tokens so far total "
                f"over {MAX_TOKEN_BYTES // 2**20} MiB, more than any tokenizer holds (merging a token "
                "with itself doubles it each time); is it the right file?"
            )
        lengths.append(length)
        merges.append((pair[0], pair[1]))
    return merges


def check_disjoint(special: dict[str, int], ids: Any, source: str, key: str = "special_tokens") -> None:
    """No special token may reuse the id of an ordinary (mergeable) token."""
    for token, token_id in special.items():
        if token_id in ids:
            raise TokenizerFileError(
                f"{source}: {key}[{token!r}] has id {token_id}, which an ordinary token already "
                "uses; give the special token an id after the vocabulary"
            )


def check_type(value: Any, kind: type, source: str, key: str, expected: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TokenizerFileError(f"{source}: key {key!r} must be {expected}, got {_show(value)}")
    return value


def _show(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."

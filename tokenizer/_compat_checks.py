"""tiktoken's argument checks, for compat.Encoding: what its Rust (PyO3) reads and the
TypeError/OverflowError it raises for anything else, so code that runs here runs under tiktoken.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

_U32_END = 1 << 32  # tiktoken's Rust reads token ids as u32: any other int is an OverflowError there


def _token_id(token: Any) -> int:
    """A token id as tiktoken's Rust reads it: any integer (numpy's, as encode_to_numpy gives
    them, or a bool) is its int; anything else is a TypeError, an int outside u32 an OverflowError."""
    token = operator.index(token)
    if not 0 <= token < _U32_END:
        raise OverflowError("out of range integral type conversion attempted")
    return token


def _tiktoken_ids(tokens: dict[Any, Any]) -> dict[Any, int]:
    """A token -> id dict's ids as tiktoken's Rust reads them (`_token_id`: np.int64(300) is 300,
    True is 1, -1 or 2**40 an OverflowError, 1.5 a TypeError); the dict itself when they are
    plain ints already (checked at C speed). Its keys are checked by Tokenizer (token_ids)."""
    values = tokens.values() if isinstance(tokens, dict) else ()
    if set(map(type, values)) <= {int} and 0 <= min(values, default=0) and max(values, default=0) < _U32_END:
        return tokens
    return {token: _token_id(token_id) for token, token_id in tokens.items()}


def _token_ids(tokens: Iterable[Any]) -> list[int]:
    """`_token_id` of each; a list of plain ints is checked at C speed and kept as it is."""
    if type(tokens) is not list or not set(map(type, tokens)) <= {int}:
        return list(map(_token_id, tokens))
    if tokens and not (0 <= min(tokens) and max(tokens) < _U32_END):
        raise OverflowError("out of range integral type conversion attempted")
    return tokens


def _piece_bytes(text_or_bytes: object) -> bytes:
    """A str as its UTF-8 bytes, bytes as they are (tiktoken's `encode_single_token` and
    `_encode_single_piece` take either)."""
    return text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else _require_bytes(text_or_bytes)


def _require_bytes(data: object) -> bytes:
    """`data` if it is bytes, else tiktoken's TypeError: its Rust reads `bytes` alone, so a
    bytearray or memoryview is refused there too (None or an int reached `.decode` here, an
    AttributeError, and a memoryview was taken, so code that runs here failed under tiktoken)."""
    if not isinstance(data, bytes):
        raise TypeError(f"'{type(data).__name__}' object is not an instance of 'bytes'")
    return data


def _require_sequence(tokens: object) -> None:
    """tiktoken's TypeError for ids that are not a sequence: its Rust (PyO3) reads a Vec only
    from what passes PySequence_Check (a class with __getitem__, not a dict), so a set, a dict or
    an iterator is refused there, where decode({1, 2}) gave the ids' text in the set's order."""
    if type(tokens) is not list and (isinstance(tokens, dict) or not hasattr(type(tokens), "__getitem__")):
        raise TypeError(f"'{type(tokens).__name__}' object is not an instance of 'Sequence'")


def _is_str_set(tokens: object) -> bool:
    """Whether tiktoken's Rust can read these allowed special tokens: a set or frozenset of str
    is the only shape it takes (a list, a tuple or a dict's keys are a TypeError there)."""
    return isinstance(tokens, (set, frozenset)) and all(isinstance(token, str) for token in tokens)


def _allowed_type_error(tokens: object) -> TypeError:
    return TypeError(
        f"allowed_special must be 'all' or a set of special tokens such as {{'<|endoftext|>'}} "
        f"(tiktoken reads a set or frozenset of str, no list or tuple), not {tokens!r}"
    )


def _require_utf8(text: str) -> None:
    """UnicodeEncodeError for a lone surrogate, as tiktoken's Rust raises when it receives the
    text in the calls that skip `encode`'s surrogate repair (encode_with_unstable, encode_to_numpy)."""
    if not text.isascii():
        text.encode("utf-8")

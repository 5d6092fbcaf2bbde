"""Checks on what callers hand Tokenizer's methods: text, special-token sets, token ids.

Each refuses a value that Python would otherwise take silently as something else (bytes as
text, a str as a set of its characters, True as id 1) with a TypeError that says what to pass.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping


def check_text(text: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}; decode bytes first (bytes.decode())")


def token_id_of(value: object) -> int:
    """An id as an int: any integer type (numpy's too, as ids loaded from an array are, which
    tiktoken decodes), but not a bool (True is no id 1) nor a float (5.0 no id 5)."""
    if type(value) is int:
        return value
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"token ids must be int, not {type(value).__name__} ({value!r})")
    return operator.index(value)


def disallowed_special_error(token: str) -> ValueError:
    """tiktoken's error, word for word, for text holding a special token the caller did not allow."""
    return ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def special_set(value: object, kind: str) -> set[str]:
    """A collection of special tokens; a lone str (its characters) or None is a TypeError, and so
    is a token that is not a str (disallowed_special={5} failed with "'int' object is not iterable")."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        one = f"{{{value!r}}}" if isinstance(value, str) else "{'<|endoftext|>'}"
        raise TypeError(
            f"{kind}_special must be 'all' or a set of special tokens such as {one}, not {value!r}"
        )
    tokens = set(value)
    for token in tokens:
        if not isinstance(token, str):
            raise TypeError(
                f"{kind}_special holds {token!r}, a {type(token).__name__}; special tokens are str"
            )
    return tokens


def token_ids(tokens: object, key_type: type, where: str) -> dict:
    """A token -> id dict as the Tokenizer takes it: keys of `key_type` (bytes for the ranks, str
    for special tokens), ids integers >= 0 of any integer type, given back as plain ints.

    Unchecked, a bytes special token or a str rank raised AttributeError later, and an id of
    -1, 1.5, True or np.int64(300) came out of encode as it was. The common case (plain keys and
    ints) is checked at C speed and returned as it is; anything else is checked token by token."""
    if not isinstance(tokens, Mapping):
        raise TypeError(f"{where} must be a dict of tokens to ids, not {type(tokens).__name__}")
    values = tokens.values()
    if (
        set(map(type, tokens)) <= {key_type}
        and set(map(type, values)) <= {int}
        and min(values, default=0) >= 0
    ):
        return tokens  # type: ignore[return-value]
    checked = {}
    for token, value in tokens.items():
        if not isinstance(token, key_type):
            raise TypeError(
                f"{where}: {token!r} is {type(token).__name__}; its tokens are {key_type.__name__}"
            )
        try:
            token_id = token_id_of(value)
        except TypeError as e:
            raise TypeError(f"{where}[{token!r}]: {e}") from None
        if token_id < 0:
            raise ValueError(f"{where}[{token!r}] is {token_id}; token ids are integers >= 0")
        checked[token] = token_id
    return checked


def merge_pair(pair: object, index: int) -> tuple[int, int]:
    """Merge `index` as its two ids. A pair is a tuple, a list or a numpy row of two integers:
    (0,) raised IndexError, (1.5, 2) was read as (1, 2), (0, 1, 2) as (0, 1), b"ab" as (97, 98)
    and a set {97, 98} in its own order."""
    if type(pair) in (tuple, list) and len(pair) == 2 and type(pair[0]) is int and type(pair[1]) is int:
        return pair[0], pair[1]  # the usual merge, in few steps: from_merges runs this 200k times
    if (
        isinstance(pair, (str, bytes, bytearray, set, frozenset, dict))
        or not hasattr(pair, "__len__")
        or len(pair) != 2
    ):
        raise ValueError(f"merge {index} is {pair!r:.40}; each merge is a (left_id, right_id) pair of ints")
    try:
        return token_id_of(pair[0]), token_id_of(pair[1])
    except TypeError as e:
        raise TypeError(f"merge {index} {pair!r:.40}: {e}") from None


def ids_after(tokens: list | tuple, first_id: int) -> dict:
    """Special tokens given as a list: ids from `first_id` on, in order. A repeated one took the
    later id and left the earlier unused, a gap in the ids."""
    if len(set(tokens)) != len(tokens):
        repeated = sorted({token for token in tokens if tokens.count(token) > 1}, key=repr)
        raise ValueError(f"special tokens must be unique; repeated: {', '.join(map(repr, repeated))}")
    return {token: first_id + i for i, token in enumerate(tokens)}

"""Checks on what callers hand Tokenizer's methods: text, special-token sets, token ids.

Each refuses a value that Python would otherwise take silently as something else (bytes as
text, a str as a set of its characters, True as id 1) with a TypeError that says what to pass.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable


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
    """A collection of special tokens; a lone str (its characters) or None is a TypeError."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        one = f"{{{value!r}}}" if isinstance(value, str) else "{'<|endoftext|>'}"
        raise TypeError(
            f"{kind}_special must be 'all' or a set of special tokens such as {one}, not {value!r}"
        )
    return set(value)

"""Escapes tiktoken's engine reads otherwise than the `regex` package, for `_re_translate`.

tiktoken splits with fancy-regex over Rust's regex crate, whose syntax differs from `regex`'s
in places where both accept a pattern: a digit escape is always a backreference there (Rust has
no octal escapes, so `\\141` is group 141, never "a"). Each reader here takes the pattern and
the position of the backslash and returns what `_Translator.read_escape` returns, a
(kind, value, length) triple, or raises the ValueError `error(reason)` builds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# re reads `\NN` as a backreference only with one or two digits (three are an octal escape), and
# a split regex with a hundred groups is a mistake anyway.
_MAX_BACKREFERENCE_DIGITS = 2


def read_digit_escape(pattern: str, i: int, error: Callable[[str], ValueError]) -> tuple[str, object, int]:
    """`\\1`, `\\12`: a backreference to that group, by all its digits, as fancy-regex reads it.

    `\\0`, `\\012` and `\\141` are octal escapes in `regex` (NUL, newline, "a") but backreferences
    in tiktoken's engine, which refuses `\\0` (there is no group 0) and reads `\\01` as group 1:
    they are refused here, saying how to write the character instead.
    """
    digits = re.match(r"\d+", pattern[i + 1 :]).group()
    if digits.startswith("0"):
        raise error(
            f"\\{digits} is a backreference in tiktoken's engine, which has no octal escapes: "
            f"write a character in hex, such as \\x00 or \\x{{0a}}"
        )
    if len(digits) > _MAX_BACKREFERENCE_DIGITS:
        raise error(
            f"\\{digits} is a backreference to group {digits} in tiktoken's engine (no octal escapes)"
        )
    return "backref", f"(?:\\{digits})", 1 + len(digits)

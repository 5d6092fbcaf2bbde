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


# Rust's word-boundary assertions (regex 1.10), with {w} its Unicode \w: \b{start} (also \<) is
# a non-word character or the start of the text on the left and a word character on the right,
# \b{end} (also \>) the mirror image; the half forms check only one side.
_WORD_EDGES = {
    "start": "(?:(?<!{w})(?={w}))",
    "end": "(?:(?<={w})(?!{w}))",
    "start-half": "(?<!{w})",
    "end-half": "(?!{w})",
}
_SHORT_EDGES = {"<": "start", ">": "end"}
_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")


def read_word_edge(pattern: str, i: int, error: Callable[[str], ValueError]) -> tuple[str, int] | None:
    """`\\<`, `\\>`, `\\b{start}`, `\\b{end}`, `\\b{start-half}`, `\\b{end-half}` outside a class:
    (the re template, with {w} for the \\w class, length); None for other escapes.

    `regex` reads `\\<` as a literal "<" and `\\b{end}` as a fuzzy constraint; tiktoken's engine
    reads word boundaries. `\\b{..}` and `\\B{..}` that are neither these nor a repetition count
    are refused there, and here too.
    """
    c = pattern[i + 1 : i + 2]
    if c in _SHORT_EDGES:
        return _WORD_EDGES[_SHORT_EDGES[c]], 2
    if c not in ("b", "B") or not pattern.startswith("{", i + 2) or _QUANTIFIER.match(pattern, i + 2):
        return None
    end = pattern.find("}", i + 3)
    name = pattern[i + 3 : end] if end > 0 else ""
    if c == "b" and name in _WORD_EDGES:
        return _WORD_EDGES[name], end + 1 - i
    raise error(
        f"\\{c}{{{name}...}} is no assertion of tiktoken's engine: use \\b{{start}}, \\b{{end}}, "
        f"\\b{{start-half}} or \\b{{end-half}}, or a count such as \\b{{2}}"
    )


_DOTTED_DOTLESS = "iI\u0130\u0131"


def dotted_dotless_as_rust(ranges: list[tuple[int, int]], negated: bool) -> str | None:
    """The i, I, İ, ı a case-insensitive class matches in tiktoken's engine, as an `re` alternative
    ("(?-i:[..])|", or "" for none); None when the class holds none of them (re agrees then).

    Rust folds by Unicode's simple case folding: i and I match each other, İ and ı only
    themselves. re's case-insensitive class also matches İ for i and ı for I (and i for İ), so
    the caller matches these four exactly with this and leaves the rest of the class to re.
    """
    present = {c for c in _DOTTED_DOTLESS if any(a <= ord(c) <= b for a, b in ranges)}
    if not present:
        return None
    matched = present | ({"i", "I"} if present & {"i", "I"} else set())
    if negated:
        matched = set(_DOTTED_DOTLESS) - matched
    chars = "".join(f"\\u{ord(c):04x}" for c in _DOTTED_DOTLESS if c in matched)
    return f"(?-i:[{chars}])|" if chars else ""

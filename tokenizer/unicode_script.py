"""Which writing system a token belongs to: the Unicode Script property, per token.

Python's `unicodedata` has no Script property, so the ranges come from a generated table
(`_unicode_scripts.py`, made by scripts/gen_unicode_scripts.py from `regex`'s
`\\p{Script=..}`, the same Unicode version as the split-pattern tables). A character's
script is looked up by bisection over the sorted range starts, and remembered: a
vocabulary uses a few thousand distinct characters, so the dict answers almost every time.

A token gets one label, by these rules, in order:
  * "Partial UTF-8": its bytes are not valid UTF-8 on their own (a piece of a character);
  * the one script of its characters, ignoring Common and Inherited ones (spaces,
    punctuation, ASCII digits, combining marks take the script of the letters they go
    with): " the" is Latin, "中文" is Han, "-пре" is Cyrillic;
  * "Mixed" when two or more scripts remain: "日本の" is Han + Hiragana (Unicode gives
    Japanese three scripts), "aб" is Latin + Cyrillic;
  * when no script remains: "Whitespace" if every character is White_Space, "Digits" if
    every non-space character is a decimal digit (str.isdecimal: general category Nd),
    else "Common" (punctuation, symbols, emoji, a lone combining mark).
Unassigned code points are script "Unknown" and count like a script.
"""

from __future__ import annotations

from bisect import bisect_right

from ._unicode_scripts import SCRIPTS
from ._unicode_tables import WHITE_SPACE

PARTIAL = "Partial UTF-8"
MIXED = "Mixed"
WHITESPACE = "Whitespace"
DIGITS = "Digits"
COMMON = "Common"
UNKNOWN = "Unknown"
_NEUTRAL = frozenset({"Common", "Inherited"})  # take the script of their neighbours


def _table() -> tuple[list[int], list[int], list[str]]:
    """Range starts (sorted), their ends and scripts."""
    rows = []
    for name, body in SCRIPTS:
        bounds = [int(h, 16) for h in body.split()]
        rows.extend((start, end, name) for start, end in zip(bounds[::2], bounds[1::2], strict=True))
    rows.sort()
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def _white_space() -> frozenset[str]:
    bounds = [int(h, 16) for h in WHITE_SPACE.split()]
    return frozenset(chr(c) for a, b in zip(bounds[::2], bounds[1::2], strict=True) for c in range(a, b + 1))


_STARTS, _ENDS, _NAMES = _table()
_SPACES = _white_space()
_memo: dict[str, str] = {}


def script_of(ch: str) -> str:
    """The Unicode Script (long name, e.g. "Latin", "Han", "Common") of one character."""
    name = _memo.get(ch)
    if name is None:
        cp = ord(ch)
        i = bisect_right(_STARTS, cp) - 1
        name = _NAMES[i] if i >= 0 and cp <= _ENDS[i] else UNKNOWN
        _memo[ch] = name
    return name


def token_script(token: bytes) -> str:
    """The label of one token's bytes (see the module docstring for the rules)."""
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return PARTIAL
    scripts = set(map(script_of, text)) - _NEUTRAL
    if len(scripts) == 1:
        return scripts.pop()
    if scripts:
        return MIXED
    visible = [ch for ch in text if ch not in _SPACES]
    if not visible:
        return WHITESPACE
    if all(ch.isdecimal() for ch in visible):
        return DIGITS
    return COMMON

"""Unicode sets from the generated tables, as sorted, merged, inclusive code-point ranges.

Two flavours of tables say what \\p{..}, \\s and \\w mean: "tiktoken" (`_unicode_tables_16`,
Unicode 16.0, as tiktoken's Rust regex) and "regex" (`_unicode_tables`, the installed `regex`
package's version). A flavour's module is imported on first use (no .pyc in Pyodide:
importing both would cost time for nothing).

After upgrading `regex`, run scripts/gen_unicode_tables.py; tests/test_patterns.py
checks the "regex" tables against the installed `regex`, tests/test_unicode_parity.py
the "tiktoken" ones against tiktoken, code point by code point.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

TIKTOKEN, REGEX = "tiktoken", "regex"
UNICODE_FLAVOURS = (TIKTOKEN, REGEX)
_TABLE_MODULES = {TIKTOKEN: "_unicode_tables_16", REGEX: "_unicode_tables"}


@functools.cache
def unicode_tables(flavour: str) -> ModuleType:
    """The generated tables of a flavour, imported on first use (no .pyc in Pyodide)."""
    if flavour not in UNICODE_FLAVOURS:
        raise ValueError(
            f"unknown unicode flavour {flavour!r}; expected one of {', '.join(UNICODE_FLAVOURS)}"
        )
    return importlib.import_module(f".{_TABLE_MODULES[flavour]}", __package__)


def unicode_version(flavour: str) -> str:
    """The Unicode version of a flavour's tables, e.g. "16.0.0" for "tiktoken"."""
    return unicode_tables(flavour).UNICODE_VERSION


Ranges = list[tuple[int, int]]  # (first, last) code points, sorted, not touching
MAX_CODE_POINT = 0x10FFFF
BMP_END = 0xFFFF


def parse_ranges(hexes: str) -> Ranges:
    """Parse the tables' "start end start end ..." hex strings."""
    flat = [int(x, 16) for x in hexes.split()]
    return list(zip(flat[::2], flat[1::2], strict=True))


def merge_ranges(ranges: Ranges) -> Ranges:
    out: Ranges = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def complement(ranges: Ranges) -> Ranges:
    out: Ranges = []
    start = 0
    for a, b in ranges:
        if a > start:
            out.append((start, a - 1))
        start = b + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return out


@functools.cache
def categories_ranges(categories: tuple[str, ...], flavour: str = REGEX) -> Ranges:
    table = unicode_tables(flavour).CATEGORY_RANGES
    return merge_ranges([r for cat in categories for r in parse_ranges(table[cat])])


@functools.cache
def white_space(flavour: str = REGEX) -> Ranges:
    return parse_ranges(unicode_tables(flavour).WHITE_SPACE)


@functools.cache
def word_ranges(flavour: str = REGEX) -> Ranges | None:
    """\\w of the flavour's engine, None where the tables were made without it."""
    word = getattr(unicode_tables(flavour), "WORD", None)
    return None if word is None else parse_ranges(word)


@functools.cache
def script_ranges(name: str, flavour: str = REGEX) -> Ranges | None:
    """\\p{Script} of a flavour, by long name compared loosely (case, spaces, `_` and `-`
    ignored: "old_italic" is Old_Italic); None if the flavour has no such script.

    One table serves both: `_unicode_scripts` (Script, from the `regex` package, Unicode 18).
    The "tiktoken" flavour (Unicode 16.0) keeps its code points assigned in 16.0, which gives
    exactly tiktoken's \\p{..} for each of the 170 scripts 16.0 has (every code point checked
    against tiktoken, tests/test_unicode_parity.py); a script new since 16.0 is empty there,
    and tiktoken refuses its name, so None."""
    from ._unicode_scripts import SCRIPTS  # 40 KB of tables: only when a pattern names a script

    wanted = _loose(name)
    found = next((parse_ranges(body) for script, body in SCRIPTS if _loose(script) == wanted), None)
    if found is None or flavour == REGEX:
        return found
    assigned = complement(categories_ranges(("Cn",), flavour))
    kept = _intersect(found, assigned)
    return kept or None


def _loose(name: str) -> str:
    return "".join(ch for ch in name if ch not in " _-").upper()


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    """The code points in both (sorted, merged ranges)."""
    out: Ranges = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out

"""Generate tokenizer/_unicode_tables.py: general-category and White_Space ranges.

The stdlib-`re` fallback of tokenizer.patterns needs \\p{..} and \\s as explicit
ranges. Computing them at import costs ~1 s on CPython and ~5 s in Pyodide, and
the stdlib's Unicode version differs between Pythons, so they are generated once
here from PyPI `unicodedata2` and checked, code point by code point, against the
installed `regex` package (whose Unicode version the tables must share).

Usage: python scripts/gen_unicode_tables.py [OUT]   (default tokenizer/_unicode_tables.py)
Needs: pip install unicodedata2 regex
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import regex
import unicodedata2

MAX_CODE_POINT = 0x10FFFF
ALL_CODE_POINTS = "".join(map(chr, range(MAX_CODE_POINT + 1)))
CATEGORIES = (
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn"
).split()
# Unicode White_Space (PropList.txt); stable since Unicode 6.3 removed U+180E.
WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
               (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
               (0x3000, 0x3000)]  # fmt: skip
# Code points whose simple case mapping touches ASCII letters; never stand-ins.
ASCII_CASE_PARTNERS = {0x130, 0x131, 0x17F, 0x212A}
STANDIN_CANDIDATES = 4

Ranges = list[tuple[int, int]]


def ranges_of(code_points: list[int]) -> Ranges:
    """Sorted code points -> merged inclusive (start, end) ranges."""
    out: Ranges = []
    for cp in code_points:
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def regex_ranges(pattern: str) -> Ranges:
    """The code points the installed `regex` matches with a one-char pattern, as ranges."""
    runs = regex.finditer(f"(?:{pattern})+", ALL_CODE_POINTS)
    return [(m.start(), m.end() - 1) for m in runs]


def category_ranges() -> dict[str, Ranges]:
    members: dict[str, list[int]] = {cat: [] for cat in CATEGORIES}
    for cp in range(MAX_CODE_POINT + 1):
        members[unicodedata2.category(chr(cp))].append(cp)
    return {cat: ranges_of(cps) for cat, cps in members.items()}


def union(ranges_list: list[Ranges]) -> Ranges:
    cps = sorted({cp for ranges in ranges_list for a, b in ranges for cp in range(a, b + 1)})
    return ranges_of(cps)


def gc_aliases(cats: dict[str, Ranges]) -> dict[str, tuple[str, ...]]:
    """Every general-category name `regex` accepts (normalised) -> its 2-letter categories.

    Each alias is checked against `regex` over all code points, so \\p{Letter} etc.
    mean exactly what they mean there.
    """
    name_to_value = regex._regex.get_properties()["GC"][1]
    value_to_names: dict[int, list[str]] = {}
    for name, value in name_to_value.items():
        value_to_names.setdefault(value, []).append(name)
    category_of = [unicodedata2.category(chr(cp)) for cp in range(MAX_CODE_POINT + 1)]
    aliases: dict[str, tuple[str, ...]] = {}
    for names in value_to_names.values():
        members = regex_ranges(rf"\p{{gc={names[0]}}}")
        present = {category_of[cp] for a, b in members for cp in range(a, b + 1)}
        chosen = tuple(c for c in CATEGORIES if c in present)
        if union([cats[c] for c in chosen]) != members:
            raise SystemExit(f"\\p{{{names[0]}}} is not a union of general categories")
        for name in names:
            aliases[name] = chosen
    return aliases


def standins(cats: dict[str, Ranges]) -> dict[str, tuple[int, ...]]:
    """BMP stand-ins for each category that has astral members (see patterns.py)."""
    white = {cp for a, b in WHITE_SPACE for cp in range(a, b + 1)}
    out = {}
    for cat, ranges in cats.items():
        if not any(b > 0xFFFF for a, b in ranges):
            continue
        bmp = [cp for a, b in ranges for cp in range(a, min(b, 0xFFFF) + 1)]
        ok = [cp for cp in bmp if cp >= 0x100 and cp not in white and cp not in ASCII_CASE_PARTNERS]
        if len(ok) < STANDIN_CANDIDATES:
            raise SystemExit(f"category {cat} has too few BMP stand-ins")
        out[cat] = tuple(ok[:STANDIN_CANDIDATES])
    return out


def check_against_regex(cats: dict[str, Ranges]) -> None:
    for cat in CATEGORIES:
        if regex_ranges(rf"\p{{{cat}}}") != cats[cat]:
            raise SystemExit(f"regex {regex.__version__} and unicodedata2 disagree on \\p{{{cat}}}")
    if regex_ranges(r"\s") != WHITE_SPACE:
        raise SystemExit(r"regex \s is not Unicode White_Space")
    if regex_ranges(r"\d") != cats["Nd"]:
        raise SystemExit(r"regex \d is not \p{Nd}")


def flat(ranges: Ranges, indent: str = "    ") -> str:
    """The ranges as hex "start end start end ..." string pieces, wrapped at 100 columns.

    A string, not a tuple of ints: compiling thousands of int literals takes ~0.2 s,
    paid at every Pyodide boot (no .pyc there); splitting the string takes ~2 ms.
    """
    items = [f"{x:x}" for a, b in ranges for x in (a, b)]
    lines, line = [], ""
    for item in items:
        if len(indent) + len(line) + len(item) + 8 > 100:
            lines.append(line)
            line = ""
        line += item + " "
    lines.append(line.rstrip())
    return "(\n" + "".join(f'{indent}    "{line}"\n' for line in lines) + indent + ")"


def render(
    cats: dict[str, Ranges], aliases: dict[str, tuple[str, ...]], stand: dict[str, tuple[int, ...]]
) -> str:
    lines = [
        '"""Generated by scripts/gen_unicode_tables.py; do not edit.',
        "",
        "Unicode general categories and White_Space as inclusive code-point ranges, written as",
        "hex 'start end start end ...' strings, checked code point by code point against `regex`.",
        '"""',
        "",
        "# fmt: off",
        f"UNICODE_VERSION = {unicodedata2.unidata_version!r}  # unicodedata2 {version('unicodedata2')}",
        f"REGEX_VERSION = {regex.__version__!r}  # the `regex` release that agrees on every code point",
        "",
        f"WHITE_SPACE = {flat(WHITE_SPACE, '')}",
        "",
        "# 2-letter category -> ranges",
        "CATEGORY_RANGES = {",
    ]
    lines += [f"    {cat!r}: {flat(cats[cat])}," for cat in CATEGORIES]
    lines += [
        "}",
        "",
        "# normalised name regex accepts in \\p{..} -> 2-letter categories",
        "CATEGORY_ALIASES = {",
    ]
    lines += [f"    {name!r}: {cats_!r}," for name, cats_ in sorted(aliases.items())]
    lines += [
        "}",
        "",
        "# category with astral members -> BMP code points that may stand in for them",
        "STANDINS = {",
    ]
    lines += [f"    {cat!r}: ({', '.join(f'0x{cp:X}' for cp in cps)})," for cat, cps in stand.items()]
    lines += ["}", ""]
    return "\n".join(lines).replace("'", '"')


def main() -> None:
    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).parent.parent / "tokenizer" / "_unicode_tables.py"
    )
    cats = category_ranges()
    check_against_regex(cats)
    text = render(cats, gc_aliases(cats), standins(cats))
    out.write_text(text, encoding="utf-8")
    print(
        f"wrote {out} ({len(text)} bytes): Unicode {unicodedata2.unidata_version}, regex {regex.__version__}"
    )


if __name__ == "__main__":
    main()

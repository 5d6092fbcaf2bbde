"""Generate the Unicode tables of tokenizer.patterns: general categories, White_Space, \\w.

The stdlib-`re` translation of tokenizer.patterns needs \\p{..} and \\s as explicit
ranges. Computing them at import costs ~1 s on CPython and ~5 s in Pyodide, and the
stdlib's Unicode version differs between Pythons, so they are generated here, once per
"flavour", from PyPI `unicodedata2`, and checked code point by code point against the
engine they must imitate:

* tokenizer/_unicode_tables_16.py, the "tiktoken" flavour: Unicode 16.0, what
  tiktoken's Rust regex (and HF tokenizers' Oniguruma) use. Token ids must equal
  tiktoken's, so the named patterns split with these. Built from unicodedata2==16.0.0
  (fetched with `pip download` into a temporary folder, or taken from --ucd-dir) and,
  when tiktoken is importable, checked against tiktoken's own regex engine.
* tokenizer/_unicode_tables.py, the "regex" flavour: the Unicode version of the
  installed `regex` package (custom patterns mean what they mean in `regex`). Built from
  the installed unicodedata2, which must agree with `regex` on every code point.

Usage: python scripts/gen_unicode_tables.py [--ucd-dir DIR] [--out-dir DIR]
  --ucd-dir: a folder holding unicodedata2 16.0.0 (its wheel, or the wheel unpacked)
Needs: pip install unicodedata2 regex (tiktoken optional, for the tiktoken check)
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import zipfile
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

import regex
import unicodedata2

TIKTOKEN_UNICODE = "16.0.0"
MAX_CODE_POINT = 0x10FFFF
ALL_CODE_POINTS = "".join(map(chr, range(MAX_CODE_POINT + 1)))
NO_SURROGATES = "".join(chr(cp) for cp in range(MAX_CODE_POINT + 1) if not 0xD800 <= cp <= 0xDFFF)
CATEGORIES = (
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn"
).split()
# Unicode White_Space (PropList.txt); stable since Unicode 6.3 removed U+180E. Checked
# against regex's \s and tiktoken's \s (Rust regex: \s is White_Space) below.
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


def tiktoken_ranges(pattern: str) -> Ranges:
    """The code points tiktoken's regex engine matches with a one-char pattern (no surrogates).

    An Encoding whose ranks are the 256 single bytes returns the matched text's bytes:
    text no match covers is dropped, so the decoded ids are exactly the members.
    """
    import tiktoken

    ranks = {bytes([b]): b for b in range(256)}
    enc = tiktoken.Encoding("probe", pat_str=f"(?:{pattern})+", mergeable_ranks=ranks, special_tokens={})
    return ranges_of([ord(c) for c in bytes(enc.encode_ordinary(NO_SURROGATES)).decode("utf-8")])


def tiktoken_word() -> Ranges | None:
    """tiktoken's \\w (None without tiktoken: the translation then refuses \\w and \\b)."""
    try:
        return tiktoken_ranges(r"\w")
    except ImportError:
        return None


def load_unicodedata2(ucd_dir: Path | None) -> ModuleType:
    """unicodedata2 16.0.0 loaded from a folder (not installed over the current one)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = ucd_dir
        if folder is None:
            folder = Path(tmp)
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                 "-d", str(folder), f"unicodedata2=={TIKTOKEN_UNICODE}"],
                check=True,
            )  # fmt: skip
        for wheel in sorted(folder.glob(f"unicodedata2-{TIKTOKEN_UNICODE}-*.whl")):
            with zipfile.ZipFile(wheel) as z:
                z.extractall(Path(tmp) / "unpacked")
            folder = Path(tmp) / "unpacked"
        found = sorted(folder.glob("unicodedata2*.so")) + sorted(folder.glob("unicodedata2*.pyd"))
        if not found:
            raise SystemExit(f"no unicodedata2 extension module in {folder}")
        spec = importlib.util.spec_from_file_location("unicodedata2", found[0])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    if module.unidata_version != TIKTOKEN_UNICODE:
        raise SystemExit(f"{found[0].name} is Unicode {module.unidata_version}, not {TIKTOKEN_UNICODE}")
    return module


def category_ranges(ucd: ModuleType) -> dict[str, Ranges]:
    members: dict[str, list[int]] = {cat: [] for cat in CATEGORIES}
    for cp in range(MAX_CODE_POINT + 1):
        members[ucd.category(chr(cp))].append(cp)
    return {cat: ranges_of(cps) for cat, cps in members.items()}


def union(ranges_list: list[Ranges]) -> Ranges:
    cps = sorted({cp for ranges in ranges_list for a, b in ranges for cp in range(a, b + 1)})
    return ranges_of(cps)


def gc_aliases(cats: dict[str, Ranges]) -> dict[str, tuple[str, ...]]:
    """Every general-category name `regex` accepts (normalised) -> its 2-letter categories.

    Each alias is checked against `regex` over all code points, so \\p{Letter} etc.
    mean exactly what they mean there. Which categories an alias stands for does not
    depend on the Unicode version, so both flavours share the result.
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


def check_against_tiktoken(cats: dict[str, Ranges]) -> str:
    """Every category, \\s and \\d as tiktoken's Rust regex sees them; returns what was checked."""
    try:
        import tiktoken
    except ImportError:
        print("tiktoken is not installed: the Unicode 16.0 tables are not checked against it")
        return "not checked against tiktoken (not installed)"
    for cat in CATEGORIES:
        if cat != "Cs" and tiktoken_ranges(rf"\p{{{cat}}}") != cats[cat]:
            raise SystemExit(
                f"tiktoken {tiktoken.__version__} and Unicode {TIKTOKEN_UNICODE} disagree on \\p{{{cat}}}"
            )
    if tiktoken_ranges(r"\s") != WHITE_SPACE:
        raise SystemExit(r"tiktoken's \s is not Unicode White_Space")
    if tiktoken_ranges(r"\d") != cats["Nd"]:
        raise SystemExit(r"tiktoken's \d is not \p{Nd}")
    return f"tiktoken {tiktoken.__version__}"


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
    flavour: str,
    unicode_version: str,
    source: str,
    checked: str,
    cats: dict[str, Ranges],
    aliases: dict[str, tuple[str, ...]],
    word: Ranges | None,
) -> str:
    lines = [
        '"""Generated by scripts/gen_unicode_tables.py; do not edit.',
        "",
        f"The {flavour!r} flavour of tokenizer.patterns: Unicode general categories and White_Space",
        "as inclusive code-point ranges, written as hex 'start end start end ...' strings,",
        "checked code point by code point against the engine named in CHECKED_AGAINST.",
        '"""',
        "",
        "# fmt: off",
        f"FLAVOUR = {flavour!r}",
        f"UNICODE_VERSION = {unicode_version!r}  # from {source}",
        f"CHECKED_AGAINST = {checked!r}  # agrees on every code point",
        "",
        f"WHITE_SPACE = {flat(WHITE_SPACE, '')}",
        "",
        "# \\w as the engine itself matches it (Alphabetic, marks, digits, connectors, joiners)",
        f"WORD = {flat(word, '') if word is not None else None}",
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
    lines += [
        f"    {cat!r}: ({', '.join(f'0x{cp:X}' for cp in cps)})," for cat, cps in standins(cats).items()
    ]
    lines += ["}", ""]
    return "\n".join(lines).replace("'", '"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ucd-dir", type=Path, help=f"folder with unicodedata2 {TIKTOKEN_UNICODE}")
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).parent.parent / "tokenizer")
    args = parser.parse_args()

    cats = category_ranges(unicodedata2)
    check_against_regex(cats)
    aliases = gc_aliases(cats)
    ucd16 = load_unicodedata2(args.ucd_dir)
    cats16 = category_ranges(ucd16)
    checked16 = check_against_tiktoken(cats16)
    outputs = [
        ("_unicode_tables.py", "regex", unicodedata2.unidata_version,
         f"unicodedata2 {version('unicodedata2')}", f"regex {regex.__version__}", cats, regex_ranges(r"\w")),
        ("_unicode_tables_16.py", "tiktoken", ucd16.unidata_version,
         f"unicodedata2 {TIKTOKEN_UNICODE}", checked16, cats16, tiktoken_word()),
    ]  # fmt: skip
    for filename, flavour, unicode_version, source, checked, categories, word in outputs:
        text = render(flavour, unicode_version, source, checked, categories, aliases, word)
        out = args.out_dir / filename
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out} ({len(text)} bytes): {flavour} flavour, Unicode {unicode_version}, {checked}")


if __name__ == "__main__":
    main()

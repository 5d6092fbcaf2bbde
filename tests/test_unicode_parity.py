"""The named patterns must split like tiktoken on every code point: its Unicode is 16.0.

tiktoken's Rust regex (and HF tokenizers' Oniguruma) are at Unicode 16.0, the `regex`
package is newer; with its tables thousands of code points were letters for us and not
for tiktoken. Three layers:

* the "tiktoken" tables equal tiktoken's own regex engine, category by category, on
  every code point (an Encoding whose ranks are the 256 bytes returns exactly the text
  its pattern matched);
* get_encoding(name).encode_ordinary equals tiktoken's ids on probes that put a code
  point c where its class decides the split ("A"+c+"'s", "1"+c+"2", ...), for every BMP
  code point, every code point whose category differs between the two flavours, and the
  edges and a stride of every astral run of constant categories; PARITY_FULL=1 takes
  every code point (minutes);
* the "regex" flavour differs from tiktoken exactly where a class changed after 16.0,
  so the probes are shown to see each such change.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Callable

import pytest
import regex
import tiktoken

from tests.oracles import tiktoken_reference
from tokenizer import _re_split, get_encoding
from tokenizer import _unicode as uni
from tokenizer import patterns as pt
from tokenizer._unicode_scripts import SCRIPTS

ENCODINGS = {"gpt2": "gpt2", "cl100k_base": "cl100k", "o200k_base": "o200k"}
CATEGORIES = [c for c in pt.unicode_tables(pt.TIKTOKEN).CATEGORY_RANGES if c != "Cs"]
CLASSES = [*CATEGORIES, "L", "N", "M"]  # and the unions the named patterns name
# Each part of a probe tells some classes apart (see the o200k word rule: an upper-ish run
# [Lu Lt Lm Lo M]* then a lower-ish run [Ll Lm Lo M]+, or the other way round).
# "A{c}'s": L / N or \s / other; "1{c}2": N / the rest; "ab{c}cd": lower-ish / not;
# "AB{c}CD": upper-only / Ll, Lm, Lo, M / other; "{c}Ab" splits Ll from upper-ish, but
# only right after c, which the ids cannot show (see the last test).
PROBES = {
    "gpt2": "A{c}'s 1{c}2",
    "cl100k_base": "A{c}'s 1{c}2",
    "o200k_base": "A{c}'s 1{c}2 ab{c}cd AB{c}CD {c}Ab",
}
SEPARATOR = "\n"
BATCH = 2048
FULL = os.environ.get("PARITY_FULL", "") not in ("", "0")


def category_of(flavour: str) -> list[str]:
    """Code point -> 2-letter general category, from a flavour's tables."""
    out = [""] * (uni.MAX_CODE_POINT + 1)
    for cat, hexes in pt.unicode_tables(flavour).CATEGORY_RANGES.items():
        for a, b in uni.parse_ranges(hexes):
            out[a : b + 1] = [cat] * (b - a + 1)
    return out


CAT16, CAT_REGEX = category_of(pt.TIKTOKEN), category_of(pt.REGEX)
CHANGED = [cp for cp in range(uni.MAX_CODE_POINT + 1) if CAT16[cp] != CAT_REGEX[cp]]


def sampled_code_points() -> list[int]:
    """Every BMP code point, every changed one, and the edges and a stride of astral runs."""
    if FULL:
        return [cp for cp in range(uni.MAX_CODE_POINT + 1) if CAT16[cp] != "Cs"]
    chosen = set(range(0xD800)) | set(range(0xE000, 0x10000)) | set(CHANGED)
    runs = itertools.groupby(
        range(0x10000, uni.MAX_CODE_POINT + 1), key=lambda cp: (CAT16[cp], CAT_REGEX[cp])
    )
    for _key, run in runs:
        run = list(run)
        chosen.update(run[:16] + run[-16:] + run[::257])
    return sorted(chosen)


def tiktoken_members(pattern: str) -> list[tuple[int, int]]:
    """The code points tiktoken's regex matches with a one-char pattern, as ranges."""
    ranks = {bytes([b]): b for b in range(256)}
    enc = tiktoken.Encoding("probe", pat_str=f"(?:{pattern})+", mergeable_ranks=ranks, special_tokens={})
    matched = bytes(enc.encode_ordinary(EVERY)).decode("utf-8")
    return uni.merge_ranges([(ord(c), ord(c)) for c in matched])


EVERY = "".join(chr(cp) for cp in range(uni.MAX_CODE_POINT + 1) if not 0xD800 <= cp <= 0xDFFF)


def test_word_class_is_each_engines_own():
    """\\w (and so \\b) in a custom pattern means the engine's own word class: the tiktoken
    tables' WORD is what tiktoken's regex matches, the regex tables' what `regex` matches."""
    assert uni.word_ranges(pt.TIKTOKEN) == tiktoken_members(r"\w")
    every = "".join(map(chr, range(uni.MAX_CODE_POINT + 1)))
    assert uni.merge_ranges(
        [(m.start(), m.end() - 1) for m in regex.finditer(r"\w+", every)]
    ) == uni.word_ranges(pt.REGEX)


@pytest.mark.parametrize("name", CLASSES)
def test_tiktoken_tables_equal_tiktokens_regex(name):
    categories = pt.unicode_tables(pt.TIKTOKEN).CATEGORY_ALIASES[name.upper()]
    assert uni.categories_ranges(categories, pt.TIKTOKEN) == tiktoken_members(rf"\p{{{name}}}")


@pytest.mark.parametrize("name", [name for name, _ in SCRIPTS])
def test_scripts_equal_tiktokens_regex(name):
    """\\p{Script} for the "tiktoken" flavour: the Unicode 18 table cut to 16.0's assigned code
    points is tiktoken's, on every code point; a script new since 16.0 is refused by both."""
    ours = uni.script_ranges(name, pt.TIKTOKEN)
    try:
        theirs = tiktoken_members(rf"\p{{{name}}}")
    except ValueError:  # tiktoken's Rust regex does not know the name
        assert ours is None
        return
    assert ours is not None and uni.merge_ranges(ours) == theirs


@pytest.mark.parametrize("name", ["Han", "Greek", "Latin", "Common", "Inherited", "Sidetic", "Hiragana"])
def test_scripts_equal_the_regex_packages(name):
    every = "".join(map(chr, range(uni.MAX_CODE_POINT + 1)))
    expected = uni.merge_ranges([(m.start(), m.end() - 1) for m in regex.finditer(rf"\p{{{name}}}+", every)])
    assert uni.merge_ranges(uni.script_ranges(name, pt.REGEX)) == expected


def test_white_space_is_the_same_everywhere():
    """tiktoken's \\s (Rust regex: White_Space) = regex's = both tables'; \\d is Nd."""
    expected = uni.white_space(pt.TIKTOKEN)
    assert tiktoken_members(r"\s") == expected == uni.white_space(pt.REGEX)
    every = "".join(map(chr, range(uni.MAX_CODE_POINT + 1)))
    assert uni.merge_ranges([(m.start(), m.end() - 1) for m in regex.finditer(r"\s+", every)]) == expected
    assert tiktoken_members(r"\d") == uni.categories_ranges(("Nd",), pt.TIKTOKEN)


def test_versions_and_the_known_changes():
    assert pt.unicode_version(pt.TIKTOKEN) == "16.0.0"
    assert pt.unicode_version(pt.REGEX) != "16.0.0"
    assert pt.unicode_tables(pt.TIKTOKEN).CATEGORY_ALIASES == pt.unicode_tables(pt.REGEX).CATEGORY_ALIASES
    for cp in (0x088F, 0x0C5C, 0xA7CE):  # letters since 17.0, not for tiktoken
        assert CAT16[cp] == "Cn" and CAT_REGEX[cp].startswith("L")
    assert len(CHANGED) > 4000


def test_standins_stand_for_their_tiktoken_category():
    """The astral stand-in of the fast re path has the code point's 16.0 category."""
    tables = pt.unicode_tables(pt.TIKTOKEN)
    standin_map = _re_split._StandinMap(
        {cat: chr(cps[0]) for cat, cps in tables.STANDINS.items()}, pt.TIKTOKEN
    )
    for cat, hexes in tables.CATEGORY_RANGES.items():
        for a, b in uni.parse_ranges(hexes):
            for cp in {max(a, 0x10000), b} if b > 0xFFFF else ():
                assert CAT16[ord(standin_map[chr(cp)])] == cat, hex(cp)


def mismatches(
    encode: Callable[[str], list[int]], ref: tiktoken.Encoding, probe: str, cps: list[int]
) -> list[int]:
    """The code points whose probe encodes differently; batches, bisected on a mismatch."""
    text = SEPARATOR.join(probe.replace("{c}", chr(cp)) for cp in cps)
    if encode(text) == ref.encode_ordinary(text):
        return []
    if len(cps) == 1:
        return cps
    half = len(cps) // 2
    return mismatches(encode, ref, probe, cps[:half]) + mismatches(encode, ref, probe, cps[half:])


@pytest.fixture(scope="module")
def sample() -> list[int]:
    return sampled_code_points()


@pytest.mark.parametrize("name", ENCODINGS)
def test_ids_equal_tiktoken_on_every_code_point(name, sample):
    ours, ref = get_encoding(name), tiktoken_reference(name)
    assert isinstance(ours._splitter, pt.ReSplitter) and ours._splitter.unicode == pt.TIKTOKEN
    bad = []
    for i in range(0, len(sample), BATCH):
        bad += mismatches(ours.encode_ordinary, ref, PROBES[name], sample[i : i + BATCH])
    assert not bad, f"{len(bad)} code points differ from tiktoken, e.g. {[hex(cp) for cp in bad[:20]]}"


def signature(cp: int, cats: list[str], name: str) -> tuple[bool, ...]:
    """What decides how the named pattern `name` splits around cp (given its classes)."""
    cat = cats[cp]
    letter, number, space = cat[0] == "L", cat[0] == "N", any(a <= cp <= b for a, b in uni.white_space())
    if name != "o200k_base":
        return letter, number, space
    return cat in ("Lu", "Lt"), cat == "Ll", cat in ("Lm", "Lo") or cat[0] == "M", number, space


@pytest.mark.parametrize("name", ENCODINGS)
def test_regex_flavour_differs_exactly_where_a_class_changed(name):
    """The probes see every change after 16.0: the regex flavour (and `regex` itself) split
    differently from tiktoken on exactly the changed code points whose class changed."""
    ref = tiktoken_reference(name)
    newer = copy.copy(get_encoding(name))
    newer._splitter, newer._cache = pt.compile_pattern(ENCODINGS[name], engine="re", unicode=pt.REGEX), {}
    default = pt.compile_pattern(ENCODINGS[name])
    pattern = regex.compile(pt.PATTERNS[ENCODINGS[name]])
    expected = {cp for cp in CHANGED if signature(cp, CAT16, name) != signature(cp, CAT_REGEX, name)}
    assert 0x088F in expected and len(expected) > 4000
    probes = {cp: PROBES[name].replace("{c}", chr(cp)) for cp in CHANGED}
    regex_differs = {cp for cp, text in probes.items() if default.findall(text) != pattern.findall(text)}
    assert regex_differs == expected
    newer_differs = {
        cp for cp, text in probes.items() if newer.encode_ordinary(text) != ref.encode_ordinary(text)
    }
    assert newer_differs <= expected
    # Ll <-> Lo (U+0295 in 17.0) only decides whether c joins a following upper-case run
    # in o200k: the cut right after c moves, and no token spans c and its neighbour, so
    # the ids stay the same (the split differs, as checked above).
    lowerish = {"Ll", "Lm", "Lo", "Mn", "Mc", "Me"}
    missed = expected - newer_differs
    assert all(CAT16[cp] in lowerish and CAT_REGEX[cp] in lowerish for cp in missed), sorted(missed)[:10]
    assert len(missed) <= 2
    ours = get_encoding(name)
    assert all(ours.encode_ordinary(text) == ref.encode_ordinary(text) for text in probes.values())

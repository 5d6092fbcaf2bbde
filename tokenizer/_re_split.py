"""The re splitter: a `regex` pattern run by stdlib `re` (what Pyodide has), astral stand-ins.

`_re_translate` writes the `re` source of a pattern; this runs it. For speed the translation
keeps only BMP ranges (sre scans astral ranges linearly): text with astral characters has each
one replaced by a BMP stand-in of the same general category, is matched, and the original text
is sliced at the match offsets, which the one-for-one substitution leaves unchanged. The
stand-in is exact because every construct the translation admits on the fast path decides an
astral character by its general category alone (`Translation.standin_safe` says when not).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re

from ._re_empty import EMPTY_MATCH_REASON, can_match_empty
from ._re_translate import invalid_pattern, translate
from ._unicode import BMP_END, Ranges, parse_ranges, unicode_tables

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _has_astral(text: str) -> bool:
    """Whether `text` holds a code point above U+FFFF: exactly those take 4 bytes in UTF-16
    (lone surrogates take 2, like any BMP code point). A C-speed copy, ~6x fewer instructions
    than scanning with `_ASTRAL` on text that has none (the usual case)."""
    return len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)


@functools.cache
def _astral_table(flavour: str) -> tuple[list[int], list[str]]:
    """Starts of the astral category ranges and their category, for bisect."""
    entries = sorted(
        (max(a, 0x10000), cat)
        for cat, flat in unicode_tables(flavour).CATEGORY_RANGES.items()
        for a, b in parse_ranges(flat)
        if b > BMP_END
    )
    return [start for start, _ in entries], [cat for _, cat in entries]


class _StandinMap(dict):
    """astral char -> the BMP stand-in of its general category, filled on first use."""

    def __init__(self, standins: dict[str, str], flavour: str):
        super().__init__()
        self.standins = standins
        self.flavour = flavour

    def __missing__(self, char: str) -> str:
        starts, categories = _astral_table(self.flavour)
        standin = self.standins[categories[bisect.bisect_right(starts, ord(char)) - 1]]
        self[char] = standin
        return standin


def _choose_standins(literals: Ranges, flavour: str) -> dict[str, str] | None:
    """A BMP stand-in per category that no literal of the pattern names; None if impossible."""
    chosen = {}
    for cat, candidates in unicode_tables(flavour).STANDINS.items():
        free = [cp for cp in candidates if not any(a <= cp <= b for a, b in literals)]
        if not free:
            return None
        chosen[cat] = chr(free[0])
    return chosen


def _restore_astral(text: str, chunks: list[str], ends: list[int], astral_at: list[int]) -> list[str]:
    """Re-slice from `text` each chunk that covers an astral position (in place)."""
    end = -1
    for pos in astral_at:
        if pos < end:
            continue  # same chunk as the previous astral character
        i = bisect.bisect_right(ends, pos)
        end = ends[i]
        chunks[i] = text[ends[i - 1] if i else 0 : end]
    return chunks


class ReSplitter:
    """A `regex` pattern run by stdlib `re`: findall gives what `regex` would with the
    Unicode tables of the flavour ("tiktoken" or "regex")."""

    def __init__(self, pattern: str, bmp_fast_path: bool = True, *, unicode: str):
        self.pattern = pattern
        self.unicode = unicode
        bmp = translate(pattern, bmp_only=True, unicode=unicode)
        standins = _choose_standins(bmp.literals, unicode) if bmp.standin_safe and bmp_fast_path else None
        source = bmp.source if standins is not None else translate(pattern, unicode=unicode).source
        try:
            self._compiled = re.compile(source)
        except re.error as e:
            raise invalid_pattern(pattern, e) from None
        except (OverflowError, RecursionError) as e:
            raise invalid_pattern(pattern, e) from None
        if can_match_empty(bmp.skeleton):
            raise invalid_pattern(pattern, EMPTY_MATCH_REASON)
        self._standin_map = None if standins is None else _StandinMap(standins, unicode)
        self._groups = self._compiled.groups

    def findall(self, text: str) -> list:
        if self._standin_map is None or text.isascii() or not _has_astral(text):
            return self._compiled.findall(text)
        astral_at: list[int] = []
        standin_map = self._standin_map

        def standin(match: re.Match, note=astral_at.append) -> str:
            note(match.start())
            return standin_map[match.group()]

        substituted = _ASTRAL.sub(standin, text)
        if self._groups == 0:
            chunks = self._compiled.findall(substituted)
            ends = list(itertools.accumulate(map(len, chunks)))
            if ends and ends[-1] == len(text):  # the chunks tile the text (the named patterns do)
                return _restore_astral(text, chunks, ends, astral_at)
            return [text[m.start() : m.end()] for m in self._compiled.finditer(substituted)]
        return [self._groups_of(text, m) for m in self._compiled.finditer(substituted)]

    def whole_matches(self, text: str) -> list[str]:
        """Each match's whole text, whatever its groups: what tiktoken's and HF's splits keep."""
        if self._groups == 0:
            return self.findall(text)
        if self._standin_map is not None and not text.isascii() and _has_astral(text):
            substituted = _ASTRAL.sub(lambda m: self._standin_map[m.group()], text)  # one for one
            return [text[m.start() : m.end()] for m in self._compiled.finditer(substituted)]
        return [m.group() for m in self._compiled.finditer(text)]

    def _groups_of(self, text: str, match: re.Match):
        """What findall returns for a match of a pattern with groups, sliced from `text`."""
        parts = tuple(text[s:e] if s >= 0 else "" for s, e in map(match.span, range(1, self._groups + 1)))
        return parts[0] if self._groups == 1 else parts

    def __repr__(self) -> str:
        return f"ReSplitter({self.pattern!r}, unicode={self.unicode!r})"

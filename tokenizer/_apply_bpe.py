"""subword-nmt `apply-bpe`'s options beyond the merges, ported: glossaries (words never split)
and the vocabulary filter (units rarer than a threshold split back).

classic.Segmenter applies the merges; this module holds what subword-nmt (0.3.8,
`apply_bpe.py`, MIT licence, Rico Sennrich) does around them, kept as close to its code as
the output requires, because its corners are part of what users get:

- a glossary is a Python regex, matched with `re` as subword-nmt writes the calls: a word
  that is not a whole match but contains a match is cut around every match (`USA` in
  `1934USABUSA` gives `1934`, `USA`, `B`, `USA`), then each piece is segmented alone;
  `re.split` also returns a glossary's capturing groups, so `(a)(b)` repeats `a` and `b`
  after `ab`, and `^a|b$` binds as `(^a)|(b$)`: subword-nmt's output, so ours;
- a vocabulary (`subword-nmt get-vocab`'s `unit count` lines, non-final units carrying the
  separator) keeps the units counted at least `threshold` times; any other unit of a
  segmented word is split back into the two units its merge joined, recursively, until
  each is known or is a single character (check_vocab_and_split). Which merge made a unit
  is subword-nmt's reverse table, built its way: where two merges make one string
  (`a`+`bc`, `ab`+`c`) the one whose last listing comes first wins. An empty vocabulary
  (nothing at the threshold) checks nothing: subword-nmt tests `if vocab:`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from pathlib import Path

from .streaming import not_utf8

Pair = tuple[str, str]
END_OF_WORD = "</w>"  # the marker classic BPE appends to every word (classic.END_OF_WORD)


def compile_glossaries(glossaries: Iterable[str] | None) -> tuple[list[str], re.Pattern[str] | None]:
    """The glossaries and the whole-segment regex subword-nmt builds from them (None: none).

    Each glossary is compiled here in every form subword-nmt uses it, so a glossary that is
    no regex is a ValueError up front, where subword-nmt stops with re.error's traceback.
    """
    listed = list(glossaries or [])
    for glossary in listed:
        if not isinstance(glossary, str):
            raise ValueError(f"glossary {glossary!r} is not a string")
        for form in (glossary, f"^{glossary}$", f"({glossary})"):
            _compile(form, glossary)
    if not listed:
        return [], None
    return listed, _compile("^({})$".format("|".join(listed)), " ".join(listed))


def _compile(pattern: str, glossary: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ValueError(
            f"glossary {glossary!r} is not a Python regular expression ({e}); subword-nmt reads "
            f"each glossary as one: escape what should match literally, e.g. {re.escape(glossary)!r}"
        ) from None


def isolate_glossaries(word: str, glossaries: Sequence[str]) -> list[str]:
    """The pieces of `word` after cutting around each glossary in turn (_isolate_glossaries)."""
    segments = [word]
    for glossary in glossaries:
        segments = [piece for segment in segments for piece in isolate_glossary(segment, glossary)]
    return segments


def isolate_glossary(word: str, glossary: str) -> list[str]:
    """subword-nmt's isolate_glossary, call for call (`re` caches the compiled patterns)."""
    if re.match("^" + glossary + "$", word) or not re.search(glossary, word):
        return [word]
    segments = re.split(f"({glossary})", word)
    segments, ending = segments[:-1], segments[-1]
    segments = [segment for segment in segments if segment]  # its filter(None, ...)
    return [*segments, ending.strip("\r\n ")] if ending != "" else segments


# ----- vocabulary --------------------------------------------------------------------------


def count_units(text: str) -> list[tuple[str, int]]:
    """subword-nmt get-vocab: each space-separated unit of a (segmented) text with its count,
    most frequent first, ties in order of first occurrence (a stable sort of a Counter); lines
    split as its codecs reader splits them, each stripped of "\r", "\n" and spaces only."""
    counts: Counter[str] = Counter()
    for line in text.splitlines(keepends=True):
        counts.update(unit for unit in line.strip("\r\n ").split(" ") if unit)
    return sorted(counts.items(), key=itemgetter(1), reverse=True)


def format_vocabulary(units: Iterable[tuple[str, int]]) -> str:
    """get-vocab's output: a 'unit count' line per unit (what --vocabulary reads)."""
    return "".join(f"{unit} {count}\n" for unit, count in units)


def parse_vocabulary(text: str, threshold: int | None = None, source: str = "<string>") -> set[str]:
    """The units of a vocabulary text counted at least `threshold` times (None: all), as
    subword-nmt's read_vocabulary keeps them; lines split as its codecs reader splits them."""
    units: set[str] = set()
    for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
        parts = line.strip("\r\n ").split(" ")
        if len(parts) != 2:
            raise ValueError(
                f"{source}:{lineno}: expected 'unit count' (subword-nmt get-vocab's format: a unit, "
                f"one space, its count), got {line.rstrip(chr(10) + chr(13))!r}"
            )
        unit, count = parts
        try:
            frequency = int(count)
        except ValueError:
            raise ValueError(f"{source}:{lineno}: count {count!r} is not an integer") from None
        if threshold is None or frequency >= threshold:
            units.add(unit)
    return units


def read_vocabulary(path: str | Path, threshold: int | None = None) -> set[str]:
    """parse_vocabulary of a UTF-8 file."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise not_utf8(path, e.start, data[e.start : e.start + 4]) from None
    return parse_vocabulary(text, threshold, str(path))


def reverse_merges(merges: Sequence[Pair]) -> dict[str, Pair]:
    """Unit -> the merge that made it, built as subword-nmt builds bpe_codes_reverse (its
    codes dict filled from the last merge to the first, then read in that dict's order)."""
    its_order = dict.fromkeys(reversed(merges))  # each merge where its last listing is
    return {left + right: (left, right) for left, right in its_order}  # a later one wins


def split_to_vocabulary(
    units: Sequence[str], made_by: Mapping[str, Pair], vocabulary: Collection[str], separator: str
) -> tuple[str, ...]:
    """check_vocab_and_split: each unit not in `vocabulary` (a non-final one looked up with
    the separator, as get-vocab counts it) is split back by recursive_split."""
    out: list[str] = []
    for index, unit in enumerate(units):
        final = index == len(units) - 1
        if (unit if final else unit + separator) in vocabulary:
            out.append(unit)
        else:
            out.extend(_split_back(unit, final, made_by, vocabulary, separator))
    return tuple(out)


def _split_back(
    unit: str, final: bool, made_by: Mapping[str, Pair], vocabulary: Collection[str], separator: str
) -> Iterator[str]:
    """recursive_split with a stack instead of recursion (a long unit made by a long chain of
    merges would reach Python's recursion limit): the same units in the same order."""
    stack: list[tuple[str, bool, bool]] = [(unit, final, False)]  # (unit, final, known)
    while stack:
        unit, final, known = stack.pop()
        pair = made_by.get(unit + END_OF_WORD if final else unit)
        if known or pair is None:
            yield unit  # in the vocabulary, or made by no merge: cannot be split further
            continue
        left, right = pair
        if final:
            right = right[: -len(END_OF_WORD)]
        right_known = (right if final else right + separator) in vocabulary
        stack.append((right, final, right_known))
        stack.append((left, False, left + separator in vocabulary))

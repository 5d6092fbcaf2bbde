"""subword-nmt `apply-bpe`'s options beyond the merges, ported: glossaries (words never split).

classic.Segmenter applies the merges; this module holds what subword-nmt (0.3.8,
`apply_bpe.py`, MIT licence, Rico Sennrich) does around them, kept as close to its code as
the output requires, because its corners are part of what users get:

- a glossary is a Python regex, matched with `re` as subword-nmt writes the calls: a word
  that is not a whole match but contains a match is cut around every match (`USA` in
  `1934USABUSA` gives `1934`, `USA`, `B`, `USA`), then each piece is segmented alone;
  `re.split` also returns a glossary's capturing groups, so `(a)(b)` repeats `a` and `b`
  after `ab`, and `^a|b$` binds as `(^a)|(b$)`: subword-nmt's output, so ours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence


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

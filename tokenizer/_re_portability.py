"""Where else a custom split regex runs: warnings for the page and for tiktoken.

A tokenizer trained with a custom split regex encodes here with the `regex` package's reading
of it. Two other readers meet the same regex later, and each may refuse it or read it
otherwise, which nobody would notice until the ids differ:

- the page's worker runs Python's stdlib `re` (Pyodide has no `regex`), to which \\X, \\h, \\R,
  POSIX classes and properties such as \\p{Emoji} do not translate: the page refuses the
  tokenizer when it is loaded;
- tiktoken, given the saved `pattern_regex` as its pat_str, runs Rust's regex rules (compat's
  "tiktoken" reading, `_re_translate`): `$` is the end of the text only (not before a final
  newline), `\\h` is a hex digit, case folding is simple, the Unicode tables are 16.0's. Where its
  chunks differ, tiktoken gives other ids for the same text. What that reading refuses,
  tiktoken may refuse too or read in a way we do not reproduce (binary properties such as
  \\p{Emoji}): said as such, not as a certain refusal.

Both are said when training starts (regex_check.check_split_regex), not found out later. The
tiktoken comparison splits a slice of the corpus both ways: a difference is shown with where
it is; an identical slice proves nothing about the rest, so no warning is no promise.
"""

from __future__ import annotations

import re
from itertools import accumulate

from ._unicode import TIKTOKEN
from .patterns import compile_pattern, compile_split, regex_importable

# characters compared between our split and tiktoken's reading: Rust's reading runs in stdlib
# `re`, which cannot be stopped, so a slice that a merely quadratic regex still splits in about a
# second (the backtracking gate has refused the exponential ones by then)
TIKTOKEN_SAMPLE_CHARS = 16 * 1024
_COMPILE_ERRORS = (ValueError, TypeError, OverflowError, RecursionError)


def page_warnings(source: str) -> list[str]:
    """A warning when the `regex` package runs the regex but the page's stdlib `re` cannot."""
    if not regex_importable():  # here the stdlib translation is what runs: it compiled already
        return []
    try:
        compile_pattern(source, engine="re")
    except _COMPILE_ERRORS as e:
        return [
            f"the playground page cannot run this split regex ({_reason(e)}): its encoder runs Python's "
            "re in the browser; the tokenizer works in Python and on the command line"
        ]
    return []


def tiktoken_warnings(source: str, ours, sample: str) -> list[str]:
    """A warning when tiktoken would refuse `source` as its pat_str, or split the start of
    `sample` otherwise than `ours` (the compiled regex training uses) does."""
    try:
        theirs = compile_split(source, unicode=TIKTOKEN, engine="re")  # compat's reading, always `re`
    except _COMPILE_ERRORS as e:
        return [
            f"tiktoken may refuse this split regex as its pat_str, or read it otherwise: our reading "
            f"of Rust's regex rules stops at it ({_reason(e)}); check a saved tokenizer in tiktoken "
            "before relying on its ids there (here, in the page and in Hugging Face tokenizers it works)"
        ]
    text = sample[:TIKTOKEN_SAMPLE_CHARS]
    where = first_difference(ours.findall(text), theirs.findall(text))
    if where is None:
        return []
    at, here, there = where
    return [
        f"tiktoken reads this split regex otherwise (Rust's regex rules): at character {at} of the "
        f"sample it splits off {there!r} where training splits off {here!r}, so a tokenizer trained "
        "with it gives other ids when its files are loaded in tiktoken"
    ]


def first_difference(ours: list[str], theirs: list[str]) -> tuple[int, str, str] | None:
    """Where two splits of one text first differ: (character offset, our chunk there, theirs),
    None when they are the same. A chunk missing on one side (text a regex skips) shows as ''."""
    i = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
    if i is None:
        if len(ours) == len(theirs):
            return None
        i = min(len(ours), len(theirs))
    offset = ([0, *accumulate(map(len, ours))])[i]
    return offset, ours[i] if i < len(ours) else "", theirs[i] if i < len(theirs) else ""


def _reason(error: Exception) -> str:
    return re.sub(r"^invalid split pattern .*?: ", "", str(error), count=1, flags=re.S)

"""What byte-level Hugging Face files write differently from us, shared by import and export.

- GPT-2's byte alphabet: a tokenizer.json's vocabulary holds strings, one printable character
  per byte (space is 'Ġ'), where we hold the bytes themselves;
- Oniguruma's regex dialect (HF's engine): a possessive counted repetition `X{1,3}+` is written
  `(?>X{1,3})` there, and read back.

Its own module so that reading a tokenizer.json (hf_import.py, under Tokenizer.load) does not
need the exporter, which builds on the Tokenizer.
"""

from __future__ import annotations

import re
from functools import cache


@cache
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (space is 'Ġ'), which byte-level HF uses."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


# A single atom (\p{..}, an escape, a class without nested brackets, a character) followed by
# a possessive counted repetition.
_POSSESSIVE_COUNT = re.compile(r"(\\[pP]\{[^}]*\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()|])(\{\d+(?:,\d*)?\})\+")


def oniguruma_regex(regex: str) -> str:
    """Rewrite what Oniguruma reads differently: `X{1,3}+` is possessive in `regex` but
    "X{1,3}, one or more times" in Oniguruma's Ruby syntax, so it becomes `(?>X{1,3})`."""
    return _POSSESSIVE_COUNT.sub(r"(?>\1\2)", regex)


_ATOMIC_COUNT = re.compile(r"\(\?>(\\[pP]\{[^}]*\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()|])(\{\d+(?:,\d*)?\})\)")


def regex_from_oniguruma(regex: str) -> str:
    """Undo `oniguruma_regex`: `(?>X{1,3})` back to the possessive `X{1,3}+`."""
    return _ATOMIC_COUNT.sub(r"\1\2+", regex)

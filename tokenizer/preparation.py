"""Text preparation: what a tokenizer does to the text before BPE, beyond splitting it.

A Hugging Face tokenizer.json may change the text before its split pattern sees it; two such
changes are reproduced exactly here (hf_import.py refuses every other one by name):

- **Unicode normalization** (`normalizers`: NFC, NFD, NFKC, NFKD, applied in order), HF's
  normalizer of that name. HF's tables are older than Python's `unicodedata`: a code point that
  HF does not know is, to HF, an unassigned one (combining class 0, no decomposition, composes
  with nothing). Such a code point is a starter that blocks reordering and composition, so the
  text on either side of it normalizes on its own; `unicodedata` normalizes those pieces exactly
  as HF does (Unicode's stability policy: text of code points both know normalizes alike in
  every version), and the unknown code point is kept as it is. `_hf_normalization.HF_UNKNOWN`
  lists them (scripts/gen_hf_normalization.py; tests/test_preparation.py checks every code point,
  alone and decomposed, and random text, against `tokenizers`).
- **A space before the text** (`prefix_space`), HF's `ByteLevel(add_prefix_space=true)`: a
  piece of text that does not start with " " gets one, an empty piece stays empty. Which pieces
  depends on where ByteLevel stands: alone, it sees each stretch of text between special tokens
  (SEGMENT: the space goes before the text, then the pattern splits it); after a `Split` or
  `Digits` step, it sees each chunk that step made (CHUNK: every chunk gets its space).

Normalization comes first, then the space, then (SEGMENT) the split: HF's order. The result is
what `Tokenizer.split` returns, the chunks that are then merged; they concatenate to the prepared
text, not to the text given.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ._hf_normalization import CHECKED_UNICODE, HF_UNKNOWN

NORMALIZATIONS = ("NFC", "NFD", "NFKC", "NFKD")
SEGMENT, CHUNK = "segment", "chunk"  # where prefix_space puts its space (see the docstring)
PREFIX_SPACE_PLACES = (SEGMENT, CHUNK)
_UNKNOWN = re.compile("([" + "".join(f"{chr(a)}-{chr(b)}" for a, b in HF_UNKNOWN) + "])")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


UNICODE_CHECKED = _version(unicodedata.unidata_version) <= _version(CHECKED_UNICODE)


@dataclass(frozen=True)
class Preparation:
    """Normalizations (applied in order) and where a space goes before the text (or None)."""

    normalizers: tuple[str, ...] = ()
    prefix_space: str | None = None

    def __post_init__(self) -> None:
        unknown = [n for n in self.normalizers if n not in NORMALIZATIONS]
        if unknown:
            raise ValueError(
                f"unknown normalization {unknown[0]!r}; expected one of {', '.join(NORMALIZATIONS)}"
            )
        if self.prefix_space not in (None, *PREFIX_SPACE_PLACES):
            raise ValueError(
                f"prefix_space must be {SEGMENT!r}, {CHUNK!r} or absent, not {self.prefix_space!r}"
            )

    def __bool__(self) -> bool:
        return bool(self.normalizers or self.prefix_space)

    def normalize(self, text: str) -> str:
        """`text` as HF's normalizers leave it (see the module docstring)."""
        for form in self.normalizers:
            text = normalize(form, text)
        return text

    def to_json(self) -> dict[str, Any]:
        return {"normalizers": list(self.normalizers), "prefix_space": self.prefix_space}

    def describe(self) -> str:
        """What a format that cannot carry the preparation is told it would lose."""
        parts = [f"normalizes the text ({', '.join(self.normalizers)})"] if self.normalizers else []
        if self.prefix_space:
            parts.append(f"puts a space before each {self.prefix_space} (HF's add_prefix_space)")
        return " and ".join(parts)


def normalize(form: str, text: str) -> str:
    """unicodedata.normalize as HF's tables do it: code points HF does not know stay as they are
    and cut the text into pieces normalized alone."""
    if _UNKNOWN.search(text) is None:
        return unicodedata.normalize(form, text)
    parts = _UNKNOWN.split(text)  # the unknown code points are the odd items
    parts[::2] = [unicodedata.normalize(form, part) for part in parts[::2]]
    return "".join(parts)


def with_space(text: str) -> str:
    """HF's add_prefix_space on one piece: a space first unless it has one (or is empty)."""
    return text if not text or text[0] == " " else " " + text

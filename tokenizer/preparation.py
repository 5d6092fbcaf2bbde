"""Text preparation: what a tokenizer does to the text before BPE, beyond splitting it.

A Hugging Face tokenizer.json may change the text before its split pattern sees it; four such
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
  HF finds an added token with `normalized: true` in the normalized text, we in the text as
  given: the two agree for a token that normalization leaves alone (`keeps`): each character
  decomposes to itself, has combining class 0 and is part of no other's decomposition (any
  decomposition for NFKC/NFKD) nor of Hangul's. Such a character is a starter that nothing
  composes with, so the text normalizes piece by piece around it, it is never moved, changed
  or removed, and normalization never makes it: the token's occurrences are the same before
  and after, and so is the text between them (GPT-NeoX's runs of spaces under NFC).
- **Splits before the split** (`pre_splits`): HF's pre-tokenizer steps run one after the other,
  each on every piece the previous one made (StarCoder's `Digits` then `ByteLevel`'s own gpt2
  split). Each pre-split is a pattern whose `findall` gives the pieces (hf_import.py says which
  HF steps are one); the tokenizer's own pattern then splits each piece. Its \\p{..} and \\s
  mean what they mean in HF's Oniguruma, at Unicode 16 (the "tiktoken" tables, patterns.py),
  not in the newer `regex` package's (17,811 code points differ in category).
- **A space before the text** (`prefix_space`), HF's `ByteLevel(add_prefix_space=true)`: a
  piece of text that does not start with " " gets one, an empty piece stays empty. Which pieces
  depends on where ByteLevel stands: before its own split (use_regex), or alone, it sees each
  stretch of text between special tokens, or each piece of the steps before it (SEGMENT: the
  space goes before each such piece, then the pattern splits it); after a `Split` or `Digits`
  step that is our pattern, it sees each chunk that step made (CHUNK: every chunk gets a space).

- **Added tokens' options** (`added`, added_tokens.py): HF's lstrip, rstrip and single_word
  change which text a special token's match covers (and the two passes in which HF finds
  `normalized: false` tokens, then the others); a `TokenMatcher` finds them (core.py's
  special_regex), the text between the matches is prepared as above.

HF's order: normalization, the pre-splits, the SEGMENT space, the pattern, the CHUNK space.
The result is what `Tokenizer.split` returns, the chunks that are then merged; they concatenate
to the prepared text, not to the text given.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Any

from .added_tokens import AddedMatching
from .patterns import NO_SPLIT, TIKTOKEN, Splitter, compile_pattern
from .validate import TokenizerFileError

NORMALIZATIONS = ("NFC", "NFD", "NFKC", "NFKD")
SEGMENT, CHUNK = "segment", "chunk"  # where prefix_space puts its space (see the docstring)
PREFIX_SPACE_PLACES = (SEGMENT, CHUNK)
HANGUL = [(0x1100, 0x11FF), (0xAC00, 0xD7A3)]  # jamo and syllables: composed by rule, not by table
# steps of each kind (normalizations, pre-splits): real tokenizers have one to three, and each
# runs over the whole text at every encode (100,000 NFCs, a 1.3 MB file, took 114 s for 12 KB)
MAX_STEPS = 16


def check_step_count(count: int, source: str, where: str) -> None:
    """Refuse more than MAX_STEPS steps, before any of them is checked or compiled."""
    if count > MAX_STEPS:
        raise TokenizerFileError(
            f"{source}: {where} has {count:,} steps; at most {MAX_STEPS} are loaded (real tokenizers "
            "have one to three, and each runs over all the text at every encode)"
        )


def _tables():
    from . import _hf_normalization  # generated, long: imported when a normalizer is first used

    return _hf_normalization


def parse_ranges(table: tuple[str, ...]) -> list[tuple[int, int]]:
    """A generated table ("AAAA-BBBB" or "AAAA", hex, space-separated) as inclusive ranges."""
    out = []
    for item in "".join(table).split():
        first, _, last = item.partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return out


@functools.cache
def _unknown() -> re.Pattern[str]:
    ranges = parse_ranges(_tables().HF_UNKNOWN)
    return re.compile("([" + "".join(f"{chr(a)}-{chr(b)}" for a, b in ranges) + "])")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def unicode_checked() -> bool:
    """Whether this Python's Unicode is no newer than the one HF_UNKNOWN was made for."""
    return _version(unicodedata.unidata_version) <= _version(_tables().CHECKED_UNICODE)


@functools.cache
def _parts(compatibility: bool) -> frozenset[int]:
    tables = _tables()
    ranges = parse_ranges(tables.CANONICAL_PARTS) + HANGUL
    if compatibility:
        ranges += parse_ranges(tables.COMPATIBILITY_PARTS)
    return frozenset(cp for a, b in ranges for cp in range(a, b + 1))


def changed_char(forms: tuple[str, ...], token: str) -> str | None:
    """The first character of `token` that the normalizations may change, make or join to a
    neighbour (None: they keep every occurrence of `token`; see the module docstring)."""
    parts = _parts(any(form.startswith("NFK") for form in forms)) if forms else frozenset()
    for ch in token:
        if ord(ch) in parts or unicodedata.decomposition(ch) or unicodedata.combining(ch):
            return ch
    return None


@functools.cache
def _changed_code_points(forms: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(code point, its normalization) for every code point the normalizations change. Only one
    with a decomposition can change (Hangul's syllables, which have none here, give only jamo,
    which a token that an added token check lets through never holds: it is printable ASCII)."""
    out = []
    for cp in range(0x110000):
        ch = chr(cp)
        if unicodedata.decomposition(ch) and (made := _normalize_all(forms, ch)) != ch:
            out.append((ch, made))
    return tuple(out)


def _normalize_all(forms: tuple[str, ...], text: str) -> str:
    for form in forms:
        text = normalize(form, text)
    return text


def made_by_normalizing(forms: tuple[str, ...], token: str) -> str | None:
    """A text without `token` whose normalization holds it ("thé" for "the" under NFD: "the\\u0301"),
    or None when there is none.

    An occurrence normalization makes overlaps what some code point x became (x's normalization
    d), the rest of it being the text's own characters: d holds the token, the token holds d, or
    a proper end of one is the other's start. Each such placement of x among the token's other
    characters is normalized to see whether the token comes out (composition can undo it: NFC
    gives "é" back for "e\\u0301", so it never makes "the" from "thé"). Where several code points
    make one occurrence, one of them alone already does (the others written as what they become)."""
    wanted = set(token)
    for x, d in _changed_code_points(forms):
        if wanted.isdisjoint(d):
            continue
        for raw in _placements(token, x, d):
            if token not in raw and token in _normalize_all(forms, raw):
                return raw
    return None


def _placements(token: str, x: str, d: str) -> list[str]:
    """Texts where `x`'s normalization `d` would overlap `token` (see made_by_normalizing)."""
    out = [x] if token in d else []
    out += [token[:i] + x + token[i + len(d) :] for i in range(len(token)) if token.startswith(d, i)]
    for k in range(1, min(len(token), len(d))):
        if d.endswith(token[:k]):  # d's end starts the token
            out.append(x + token[k:])
        if d.startswith(token[-k:]):  # d's start ends the token
            out.append(token[:-k] + x)
    return out


@dataclass(frozen=True)
class Preparation:
    """Normalizations (applied in order), pre-split patterns (in order), where a space goes,
    the added tokens' options."""

    normalizers: tuple[str, ...] = ()
    prefix_space: str | None = None
    pre_splits: tuple[str, ...] = ()
    added: AddedMatching | None = None

    def __post_init__(self) -> None:
        check_step_count(len(self.normalizers), "preparation", "normalizers")
        check_step_count(len(self.pre_splits), "preparation", "pre_splits")
        unknown = [n for n in self.normalizers if n not in NORMALIZATIONS]
        if unknown:
            raise ValueError(
                f"unknown normalization {unknown[0]!r}; expected one of {', '.join(NORMALIZATIONS)}"
            )
        if self.prefix_space not in (None, *PREFIX_SPACE_PLACES):
            raise ValueError(
                f"prefix_space must be {SEGMENT!r}, {CHUNK!r} or absent, not {self.prefix_space!r}"
            )
        for pattern in self.pre_splits:
            if not isinstance(pattern, str) or pattern == NO_SPLIT:
                raise ValueError(f"a pre-split must be a split pattern, not {pattern!r}")
            compile_pattern(pattern, unicode=TIKTOKEN)  # a bad regex fails here, with its own message
        if self.added is not None and not isinstance(self.added, AddedMatching):
            raise TypeError(f"added must be an AddedMatching, not {type(self.added).__name__}")

    def __bool__(self) -> bool:
        return bool(self.normalizers or self.prefix_space or self.pre_splits or self.added)

    def chunks(self, text: str, splitter: Splitter) -> list[str]:
        """The chunks of `text` prepared and split by `splitter` (the tokenizer's pattern)."""
        pieces = [self.normalize(text)]
        for pattern in self.pre_splits:
            findall = compile_pattern(pattern, unicode=TIKTOKEN).findall
            pieces = [chunk for piece in pieces for chunk in findall(piece)]
        if self.prefix_space == SEGMENT:
            pieces = list(map(with_space, pieces))
        if len(pieces) == 1:
            chunks = splitter.findall(pieces[0])
        else:
            chunks = [chunk for piece in pieces for chunk in splitter.findall(piece)]
        return list(map(with_space, chunks)) if self.prefix_space == CHUNK else chunks

    def normalize(self, text: str) -> str:
        """`text` as HF's normalizers leave it (see the module docstring)."""
        for form in self.normalizers:
            text = normalize(form, text)
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "normalizers": list(self.normalizers),
            "pre_splits": list(self.pre_splits),
            "prefix_space": self.prefix_space,
            **({"added": self.added.to_json()} if self.added else {}),
        }

    def describe(self) -> str:
        """What a format that cannot carry the preparation is told it would lose."""
        parts = [f"normalizes the text ({', '.join(self.normalizers)})"] if self.normalizers else []
        if self.pre_splits:
            parts.append(f"splits it with {len(self.pre_splits)} more pattern(s) before its own")
        if self.prefix_space:
            parts.append(f"puts a space before each {self.prefix_space} (HF's add_prefix_space)")
        if self.added and self.added.not_special:
            parts.append("matches HF's non-special added tokens in any text")
        if self.added and replace(self.added, not_special=frozenset()):
            parts.append("matches its special tokens as HF does (lstrip/rstrip/single_word, two passes)")
        return " and ".join(parts)


def normalize(form: str, text: str) -> str:
    """unicodedata.normalize as HF's tables do it: code points HF does not know stay as they are
    and cut the text into pieces normalized alone."""
    unknown = _unknown()
    if unknown.search(text) is None:
        return unicodedata.normalize(form, text)
    parts = unknown.split(text)  # the unknown code points are the odd items
    parts[::2] = [unicodedata.normalize(form, part) for part in parts[::2]]
    return "".join(parts)


def with_space(text: str) -> str:
    """HF's add_prefix_space on one piece: a space first unless it has one (or is empty)."""
    return text if not text or text[0] == " " else " " + text

"""Whether a split can ever make a given text one chunk, in whatever text it stands.

hf_import.py asks it of an added token that is also a token of model.vocab under
`ignore_merges: true`: HF's BPE takes a pre-token found in model.vocab whole, so where
normalization makes such a token's text from other text ("<|endºftext|>" under NFKC), HF gives
its id and ours does not, unless the split never makes that text one chunk (Llama 3's split
cuts "<|endoftext|>" into "<|", "endoftext", "|>" wherever it stands). The answer must be a
proof: False only when no text has such a chunk, True whenever in doubt.

A chunk is a match of the pattern (an Isolated split's gaps are matches of its
`R|(?:(?!R)[\\s\\S])+` form, hf_import.py). The pattern's match in the text equals `text` only if
one way through the pattern spells `text` exactly, with each assertion true there. So the
pattern is loosened into one that any such way satisfies on `text` alone, and `text` is tried
against it whole (`fullmatch`); no full match, no chunk:

- a lookbehind, a positive lookahead, an anchor or \\b holds in the surrounding text or not: it
  is dropped (taken as true);
- a negative lookahead (?!X) fails wherever X matches, and X's ways that use no assertion match
  in any text around what they read: kept as (?!X') with X' those ways only (each assertion in
  X made to fail), so it fails on `text` only where it fails in every text. Where X has an
  atomic group or a possessive repeat (whose choice the text after it can change) it is dropped;
- an atomic group or possessive repeat whose inside has no assertion chooses as it does in the
  surrounding text (the ways running past `text`'s end fail on `text` alone, and the one the
  real match took is inside `text`): kept. One with an assertion inside, or a backreference
  anywhere: True, no proof attempted.
"""

from __future__ import annotations

import functools
import re
from re import _compiler as sre_compiler  # type: ignore[attr-defined]
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]

from ._re_translate import translate
from ._unicode import TIKTOKEN
from .patterns import NO_SPLIT, resolve_pattern
from .preparation import CHUNK

# characters of a text tried against a loosened pattern: real special tokens have a few dozen,
# and a loosened pattern has no proof of linear time; a longer one is taken as reachable
MAX_TEXT_CHARS = 256
_ASSERTIONS = {sre_constants.ASSERT, sre_constants.ASSERT_NOT, sre_constants.AT}
_ATOMIC = {sre_constants.ATOMIC_GROUP, sre_constants.POSSESSIVE_REPEAT}
_BACKREFERENCES = {sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS}
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}


class _NoProof(Exception):
    """The pattern has a construct the loosening does not cover (module docstring)."""


def can_be_chunk(text: str, pattern: str, prefix_space: str | None) -> bool:
    """Whether some text splits (with `pattern`, after Preparation's pre-splits and ByteLevel's
    space, `prefix_space`) into a chunk that is exactly `text`. False only when provably never."""
    if pattern == NO_SPLIT or len(text) > MAX_TEXT_CHARS:
        return True
    pieces = [text]  # the pattern's pieces that become `text`
    if prefix_space == CHUNK:  # every chunk starts with a space: " x" comes from "x" or " x"
        pieces = [text, text[1:]] if text.startswith(" ") and len(text) > 1 else []
    if not pieces:
        return False
    try:
        loose = _loosened(resolve_pattern(pattern))
    except (_NoProof, re.error, RecursionError):  # no proof: reachable
        return True
    return any(loose.fullmatch(piece) for piece in pieces)


@functools.lru_cache(maxsize=16)  # one per file, asked once per added token of model.vocab
def _loosened(pattern: str) -> re.Pattern[str]:
    parsed = sre_parser.parse(translate(pattern, unicode=TIKTOKEN).source)
    return sre_compiler.compile(_subpattern(parsed, _loose(parsed.data)))


def _subpattern(parent, items: list) -> object:
    return sre_parser.SubPattern(parent.state, items)


def _loose(items: list) -> list:
    """`items` with their assertions taken as true where that is sound (module docstring)."""
    out = []
    for op, arg in items:
        if op in _BACKREFERENCES:
            raise _NoProof
        if op is sre_constants.ASSERT_NOT and arg[0] == 1:  # (?!X)
            strict = _strict(arg[1].data, arg[1].state)
            if strict is not None:
                out.append((op, (1, _subpattern(arg[1], strict))))
        elif op in _ASSERTIONS:
            continue
        elif op in _ATOMIC:
            if _has_assertion(arg if op is sre_constants.ATOMIC_GROUP else arg[2]):
                raise _NoProof
            out.append((op, arg))
        else:
            out.append((op, _map_children(op, arg, _loose)))
    return out


def _never(state) -> tuple:
    """(?!): an empty negative lookahead, which always fails."""
    return sre_constants.ASSERT_NOT, (1, sre_parser.SubPattern(state, []))


def _strict(items: list, state) -> list | None:
    """`items` with every assertion made to fail: the ways that match in any surrounding text.
    None where an atomic group or possessive repeat makes that unsound."""
    out = []
    for op, arg in items:
        if op in _BACKREFERENCES or op in _ATOMIC:
            return None
        if op in _ASSERTIONS:
            out.append(_never(state))
            continue
        try:
            out.append((op, _map_children(op, arg, lambda sub: _strict_or_raise(sub, state))))
        except _NoProof:
            return None
    return out


def _strict_or_raise(items: list, state) -> list:
    strict = _strict(items, state)
    if strict is None:
        raise _NoProof
    return strict


def _map_children(op, arg, rewrite):
    """`arg` of an item with `rewrite` applied to its sub-patterns (groups, branches, repeats)."""
    if op is sre_constants.SUBPATTERN:
        group, add, delete, sub = arg
        return group, add, delete, _subpattern(sub, rewrite(sub.data))
    if op is sre_constants.BRANCH:
        return arg[0], [_subpattern(branch, rewrite(branch.data)) for branch in arg[1]]
    if op in _REPEATS:
        low, high, sub = arg
        return low, high, _subpattern(sub, rewrite(sub.data))
    return arg  # a character, a class: nothing inside


def _has_assertion(items) -> bool:
    for op, arg in items:
        if op in _ASSERTIONS or op in _BACKREFERENCES:
            return True
        if op is sre_constants.SUBPATTERN and _has_assertion(arg[-1]):
            return True
        if op is sre_constants.BRANCH and any(_has_assertion(branch) for branch in arg[1]):
            return True
        if op in _REPEATS and _has_assertion(arg[2]):
            return True
        if op is sre_constants.ATOMIC_GROUP and _has_assertion(arg):
            return True
    return False

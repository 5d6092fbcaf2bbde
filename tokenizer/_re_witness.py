"""Texts that a split regex's repeats consume: the long probes' runs for the regex's own words.

regex_check's long probes repeat each kind of character, and a few alternations of kinds, to
20,000 characters, because a repeat that scans the rest of a run and then fails makes every
start cost a scan: quadratic. A repeat of a word is missed by all of them: (?:foo )*bar splits
"foo foo foo ..." in 3.7 s at 40,000 characters (hours at 1 MB), while runs of 'f', of 'o' or
of "fo" fail it at once. So for every repeat of the regex, `repeat_texts` builds one text
its body matches ("foo " here; "a, " for (?:\\w+, )+; one per alternative of the body):
repeated, that is the run such a repeat eats whole before it fails.

The regex is read in its stdlib `re` translation (the page's engine; the structure is the
`regex` package's too), parsed by `re`'s own parser. A regex only the `regex` package reads
gives no witnesses: the other probes still run.
"""

from __future__ import annotations

import re
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]

from ._re_translate import translate
from .patterns import REGEX

MAX_WITNESSES = 8  # runs added to the long probes: each ~1 ms for a linear regex
MAX_WITNESS_CHARS = 64  # a longer body is cut (the run still repeats what the body starts with)
MAX_REPEAT_COPIES = 4  # copies of a counted item inside a body (x{3} gives "xxx")
# What a class of characters gives, tried in this order: letters, spaces, digits, punctuation.
CANDIDATES = "a 1.,-'\n_A\té中"
# The shorthands `re` keeps inside a class, and a character each matches.
_CATEGORY_CHARS = {
    c.CATEGORY_DIGIT: "1",
    c.CATEGORY_NOT_DIGIT: "a",
    c.CATEGORY_SPACE: " ",
    c.CATEGORY_NOT_SPACE: "a",
    c.CATEGORY_WORD: "a",
    c.CATEGORY_NOT_WORD: " ",
}
_CATEGORY_RES = {
    c.CATEGORY_DIGIT: r"\d",
    c.CATEGORY_NOT_DIGIT: r"\D",
    c.CATEGORY_SPACE: r"\s",
    c.CATEGORY_NOT_SPACE: r"\S",
    c.CATEGORY_WORD: r"\w",
    c.CATEGORY_NOT_WORD: r"\W",
}
_REPEATS = (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT)


def repeat_texts(source: str) -> tuple[list[str], list[tuple[str, str]]]:
    """What the long probes take from the regex's repeats, from one parse of `source` (a split
    regex in the `regex` flavour; nothing when `re` cannot read it), at most MAX_WITNESSES each:

    - bodies: one text per repeat that the repeat's body matches, longest first;
    - leads: (lead, body) for each repeat the regex reaches only after reading other text: `lead`
      takes a match there ("q" for q(?:xyw|x(?:yw))+z). A run of the body alone fails at once on
      the lead's first character; the slow run is the lead, then the body repeated."""
    repeats = _repeats(source)
    found = dict.fromkeys(body[:MAX_WITNESS_CHARS] for _, body in repeats)
    bodies = sorted((body for body in found if len(body) > 1), key=len, reverse=True)
    led = dict.fromkeys(
        (lead[-MAX_WITNESS_CHARS:], body[:MAX_WITNESS_CHARS]) for lead, body in repeats if lead and body
    )
    leads = sorted(led, key=lambda pair: len(pair[1]), reverse=True)
    return bodies[:MAX_WITNESSES], leads[:MAX_WITNESSES]


def _repeats(source: str) -> list[tuple[str, str]]:
    """(lead, body) of every repeat, outermost first; none when `re` cannot read the regex."""
    try:
        parsed = sre_parser.parse(translate(source, bmp_only=True, unicode=REGEX).source)
    except (ValueError, re.error, OverflowError, RecursionError):
        return []
    found: list[tuple[str, str]] = []
    _collect(parsed, found, "")
    return found


def _collect(items, found: list[tuple[str, str]], lead: str) -> None:
    """Every repeat's (lead, witness) into `found`, outermost first; `lead` is a text that brings
    a match to the start of `items` (the witnesses of what comes before, in every enclosing group)."""
    items = list(items)
    for i, (op, arg) in enumerate(items):
        here = (lead + _witness(items[:i]))[-MAX_WITNESS_CHARS:] if i else lead
        if op in _REPEATS:
            found.extend((here, _witness(alternative)) for alternative in _alternatives(arg[2]))
        for sub in _children(op, arg):
            _collect(sub, found, here)


def _alternatives(items) -> list:
    """A repeat's body as its alternatives, each a text of its own: (?:x|foo )+y eats
    "foo foo ..." whole, and its first alternative alone gives only "x"."""
    if len(items) == 1:
        op, arg = items[0]
        if op is c.BRANCH:
            return list(arg[1])
        if op is c.SUBPATTERN:
            return _alternatives(arg[-1])
        if op is c.ATOMIC_GROUP:
            return _alternatives(arg)
    return [items]


def _children(op, arg) -> list:
    """The item lists nested in one parsed item."""
    if op in _REPEATS:
        return [arg[2]]
    if op is c.SUBPATTERN:
        return [arg[-1]]
    if op is c.ATOMIC_GROUP:
        return [arg]
    if op is c.BRANCH:
        return list(arg[1])
    if op in (c.ASSERT, c.ASSERT_NOT):
        return [arg[1]]
    if op is c.GROUPREF_EXISTS:
        return [branch for branch in arg[1:] if branch is not None]
    return []


def _witness(items) -> str:
    """A text the item list matches (its first alternative, each repeat at its least count but
    once): lookarounds, anchors and backreferences give nothing."""
    out = []
    for op, arg in items:
        if op is c.LITERAL:
            out.append(chr(arg))
        elif op is c.NOT_LITERAL:
            out.append("a" if arg != ord("a") else "b")
        elif op is c.ANY:
            out.append("a")
        elif op is c.IN:
            out.append(_class_char(arg))
        elif op in _REPEATS:
            out.append(_witness(arg[2]) * min(max(arg[0], 1), MAX_REPEAT_COPIES))
        elif op is c.BRANCH:
            out.append(_witness(arg[1][0]))
        elif op is c.SUBPATTERN:
            out.append(_witness(arg[-1]))
        elif op is c.ATOMIC_GROUP:
            out.append(_witness(arg))
        if sum(map(len, out)) > MAX_WITNESS_CHARS:
            break
    return "".join(out)


def _class_char(items) -> str:
    """A character of a parsed class: its first member, or for a negated class the first of
    CANDIDATES outside it ('' when every candidate is in it)."""
    if items and items[0][0] is c.NEGATE:
        return next((ch for ch in CANDIDATES if not _in_class(ch, items[1:])), "")
    op, arg = items[0]
    if op is c.LITERAL:
        return chr(arg)
    if op is c.RANGE:
        return chr(arg[0])
    if op is c.CATEGORY:
        return _CATEGORY_CHARS.get(arg, "a")
    return "a"


def _in_class(ch: str, items) -> bool:
    for op, arg in items:
        if op is c.LITERAL and ch == chr(arg):
            return True
        if op is c.RANGE and arg[0] <= ord(ch) <= arg[1]:
            return True
        if op is c.CATEGORY and re.fullmatch(_CATEGORY_RES.get(arg, r"[^\s\S]"), ch):
            return True
    return False

"""Whether a split regex can match the empty string, decided on its `re` parse tree.

An empty match would make an empty chunk (or, in tiktoken, a panic), so every split pattern that
can match "" is refused. The check runs on `_re_translate`'s skeleton of the pattern (each class
a single character: cheap to parse) and assumes every assertion can pass.
"""

from __future__ import annotations

from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]

EMPTY_MATCH_REASON = "it can match the empty string, which would make empty chunks"


def can_match_empty(re_source: str) -> bool:
    """Whether an `re` pattern can match "" somewhere (assertions are assumed to pass)."""
    return _nullable(sre_parser.parse(re_source))


_ONE_CHAR_OPS = {
    sre_constants.LITERAL,
    sre_constants.NOT_LITERAL,
    sre_constants.ANY,
    sre_constants.IN,
    sre_constants.RANGE,
    sre_constants.CATEGORY,
}
_REPEAT_OPS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}


def _nullable(items) -> bool:
    return all(_item_nullable(op, arg) for op, arg in items)


def _item_nullable(op, arg) -> bool:
    if op in _ONE_CHAR_OPS:
        return False
    if op in _REPEAT_OPS:
        low, _high, item = arg
        return low == 0 or _nullable(item)
    if op is sre_constants.SUBPATTERN:
        return _nullable(arg[-1])
    if op is sre_constants.ATOMIC_GROUP:
        return _nullable(arg)
    if op is sre_constants.BRANCH:
        return any(_nullable(branch) for branch in arg[1])
    if op is sre_constants.GROUPREF_EXISTS:
        _group, yes, no = arg
        return _nullable(yes) or no is None or _nullable(no)
    return True  # anchors, lookarounds, backreferences: zero-width or possibly empty

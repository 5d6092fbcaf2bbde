"""Hugging Face's added-token options (lstrip, rstrip, single_word) and its two passes.

A Tokenizer finds its special tokens in the text leftmost-longest, without overlaps
(`literal_regex`): tiktoken's choice whenever no two special tokens start alike, and HF's in
every case. (Of two that start at the same place, tiktoken takes whichever its Rust hash map
lists first, an order unrelated to the tokens; the README says so.) A HF tokenizer.json's added tokens may carry options that change what a
match covers; `AddedMatching` (a part of the Preparation, preparation.py) holds them, and
`TokenMatcher` finds the tokens as HF's `AddedVocabulary::find_matches` does, every rule pinned
with `tokenizers` itself (tests/test_hf_import_added_tokens.py):

- the matches are found as ours are (an Aho-Corasick LeftmostLongest scan), then each is taken
  or dropped in text order; the scan never looks again inside a dropped match.
- single_word: a match with a word character just before or after it is dropped (its text is
  ordinary text). A word character is Rust regex's Unicode \\w (Alphabetic, marks, decimal
  digits, connector punctuation, joiners): the "tiktoken" tables' WORD, equal to HF's (0.23)
  on every code point; the tests check the BMP and each code point our two tables differ on.
- lstrip: the match takes in the run of White_Space before it (\\t-\\r, space, \\x85, \\xa0,
  \\u1680, \\u2000-\\u200a, \\u2028, \\u2029, \\u202f, \\u205f, \\u3000; not \\x1c-\\x1f nor
  \\u200b), but not past the end of the match taken before it.
- rstrip: the match takes in the run of White_Space after it. The scan's next match may start
  inside that run (a token starting with whitespace); it is taken from its own start, and the
  text after it is ordinary text again ("<m> \\n x", rstrip "<m>" and "\\n": <m>, \\n, " x").
- the whitespace a match takes in gives no ids: the token's id stands for it.
- two passes: HF finds the `normalized: false` tokens first (`first`), then the others in each
  stretch of text between them, each stretch on its own: its ends are the text's ends to
  single_word, and no strip crosses them.
- not special (`not_special`, `"special": false` in the tokenizer.json: Phi-2's runs of spaces,
  a model's new domain words): HF matches them in any text, as part of the vocabulary, where a
  special token is a control token the caller allows. The Tokenizer keeps them with its special
  tokens (one id each, found by the same scan), but `encode` always allows them and
  `encode_ordinary` matches them too (core.py); only their `special` flag differs. Where
  the options apply, encode's check for a disallowed special token looks at HF's scan of every
  token (`find_disallowed`): a single_word match HF drops is text, one its second pass sees at
  a stretch's start is a token.

An lstrip token made of whitespace alone, found inside a run an rstrip token took in, ends
before it starts: HF panics ("AddedVocabulary bad split"), and so encode raises ValueError;
found at the run's end it is empty, and HF drops it, id and all ("<m> \\nx": <m>, x).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, fields, replace
from typing import Any

from ._unicode import TIKTOKEN, white_space, word_ranges

OPTIONS = ("lstrip", "rstrip", "single_word")  # HF's names, the fields of AddedMatching
_END = ""  # a trie node's key for "a token ends here" (no token character is the empty string)
# characters of the trie written as nested groups (at most one group each): stdlib re's parser
# recurses per group (RecursionError near 500 levels); below this depth a subtree is written as a
# flat alternation of its suffixes, longest first (only tokens longer than 64 characters get there)
MAX_TRIE_DEPTH = 64
_BAD_SPLIT = (
    "Hugging Face tokenizers fails on this text (a panic: 'AddedVocabulary bad split'), so it has no "
    "ids to match: the lstrip token {token!r} at character {at} lies inside the whitespace an rstrip "
    "token just before it took in; change that whitespace, or drop one of the two options"
)


@dataclass(frozen=True)
class AddedMatching:
    """The special tokens with each of HF's options, and those HF finds in its first pass."""

    lstrip: frozenset[str] = frozenset()
    rstrip: frozenset[str] = frozenset()
    single_word: frozenset[str] = frozenset()
    first: frozenset[str] = frozenset()  # normalized=false in the tokenizer.json
    not_special: frozenset[str] = frozenset()  # special=false: matched in any text (docstring)

    def __bool__(self) -> bool:
        """Whether it changes what matches: an option, HF's two passes (hf_import.py sets
        `first` without options only where the passes find other tokens than one scan), or
        tokens matched whatever the caller allows."""
        return bool(self.lstrip or self.rstrip or self.single_word or self.first or self.not_special)

    def tokens(self) -> frozenset[str]:
        return frozenset().union(*(getattr(self, f.name) for f in fields(self)))

    def options(self, token: str) -> list[str]:
        """The options `token` has, by HF's names."""
        return [option for option in OPTIONS if token in getattr(self, option)]

    def to_json(self) -> dict[str, Any]:
        """Every list; `not_special` only when it has tokens (files saved before it stay the same)."""
        return {
            f.name: sorted(getattr(self, f.name))
            for f in fields(self)
            if f.name != "not_special" or self.not_special
        }

    @classmethod
    def from_json(cls, value: Any, where: str) -> AddedMatching:
        """{"lstrip": [token, ...], "rstrip": [...], "single_word": [...], "first": [...]} and, when
        some are, "not_special": [...]; ValueError naming `where`."""
        if not isinstance(value, dict) or set(value) - {f.name for f in fields(cls)}:
            raise ValueError(
                f"{where} must be an object with the lists {', '.join(f.name for f in fields(cls))}"
            )
        sets = {}
        for key, tokens in value.items():
            if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
                raise ValueError(f"{where}.{key} must be a list of special tokens (non-empty strings)")
            sets[key] = frozenset(tokens)
        return cls(**sets)


def hidden_by_dropped(token: str, dropped: str) -> bool:
    """Whether `token` can start inside a match of `dropped` (a single_word token) that HF drops:
    its text is then ordinary text to HF's BPE, the scan past it, so an added token that is also
    in model.vocab can come out of the BPE there ("cxab", "xa" single_word, "ab": c, x, ab)."""
    tails = (dropped[k:] for k in range(len(dropped)))
    return any(tail.startswith(token) or token.startswith(tail) for tail in tails)


def literal_regex(tokens: Collection[str]) -> re.Pattern[str]:
    """A regex matching any of `tokens`, leftmost and then longest.

    Shaped as the tokens' trie (`_trie_regex`): at each character the engine tries only the
    branches that start with it. A flat alternation tried every token at every position
    holding a first character of one: 65,536 special tokens "<tN>" took 75 us per "<" of the
    text, 70 s for a megabyte of "<t1<t1...". At each node the longer branches come before
    the token that ends there, so the longest token at a position wins (see the docstring above)."""
    trie: dict[str, Any] = {}
    for token in tokens:
        node = trie
        for ch in token:
            node = node.setdefault(ch, {})
        node[_END] = True
    return re.compile(_trie_regex(trie, 0))


def _trie_regex(node: dict[str, Any], depth: int) -> str:
    """The regex of a trie node: each child's character and subtree, then the empty match if a
    token ends here (tried last: longest first). Chains of one child need no group."""
    if depth >= MAX_TRIE_DEPTH:
        suffixes = sorted(_suffixes(node), key=lambda s: (-len(s), s))
        return "(?:" + "|".join(map(re.escape, suffixes)) + ")"
    branches = [re.escape(ch) + _trie_regex(child, depth + 1) for ch, child in node.items() if ch]
    if _END in node:
        branches.append("")
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"


def _suffixes(node: dict[str, Any]) -> list[str]:
    """Every token ending below `node`, as the text after it (iterative: a chain may be long)."""
    out, stack = [], [("", node)]
    while stack:
        prefix, at = stack.pop()
        out.extend(prefix for ch in at if not ch)
        stack.extend((prefix + ch, child) for ch, child in at.items() if ch)
    return out


def token_regex(tokens: frozenset[str], matching: AddedMatching | None) -> Any:
    """What core's special_regex returns: the regex, or a TokenMatcher where HF's options apply."""
    if tokens and matching and replace(matching, not_special=frozenset()):  # an option or two passes
        return TokenMatcher(tokens, matching)
    return literal_regex(tokens)


def find_disallowed(
    regex_of: Callable[[Collection[str]], Any], every: Collection[str], disallowed: Collection[str], text: str
) -> Any:
    """The first disallowed special token in `text` (a match, or None); `regex_of` gives a set of
    tokens' regex (core's special_regex), `every` is all the special tokens. Where HF's options
    apply (a TokenMatcher), the first HF's scan of them all finds: a single_word match it drops,
    or passes by, is text there, and a match it takes hides what starts inside it (a scan of the
    disallowed alone found and dropped others). Else the first of `disallowed`, as tiktoken."""
    scan = regex_of(every)
    if isinstance(scan, TokenMatcher):
        return next((span for span in scan.finditer(text) if span.group() in disallowed), None)
    return regex_of(disallowed).search(text)


@functools.cache
def _word() -> re.Pattern[str]:
    ranges = word_ranges(TIKTOKEN) or []
    return re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges) + "]")


@functools.cache
def whitespace() -> str:
    """Rust's char::is_whitespace (White_Space), the characters lstrip and rstrip take in."""
    return "".join(chr(cp) for a, b in white_space(TIKTOKEN) for cp in range(a, b + 1))


class Span:
    """One token found: start(), end() and group() (the token) as a re.Match's."""

    __slots__ = ("_end", "_start", "_token")

    def __init__(self, start: int, end: int, token: str) -> None:
        self._start, self._end, self._token = start, end, token

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end

    def group(self) -> str:
        return self._token

    def __repr__(self) -> str:
        return f"Span({self._start}, {self._end}, {self._token!r})"


class TokenMatcher:
    """`finditer` and `search` as a regex's, finding `tokens` as HF does (module docstring)."""

    def __init__(self, tokens: frozenset[str], matching: AddedMatching) -> None:
        first = tokens & matching.first
        passes = [first, tokens - first] if first and first != tokens else [tokens]
        self._passes = [literal_regex(p) for p in passes]
        self._matching = matching

    def finditer(self, text: str) -> Iterator[Span]:
        return iter(self._find(text))

    def search(self, text: str) -> Span | None:
        spans = self._find(text)
        return spans[0] if spans else None

    def _find(self, text: str) -> list[Span]:
        found = self._pass(text, 0, len(text), self._passes[0])
        if len(self._passes) == 1:
            return found
        spans: list[Span] = []
        pos = 0  # HF's second pass sees each stretch of text the first left, alone
        for span in found:
            if pos < span.start():
                spans += self._pass(text, pos, span.start(), self._passes[1])
            spans.append(span)
            pos = span.end()
        if pos < len(text):
            spans += self._pass(text, pos, len(text), self._passes[1])
        return spans

    def _pass(self, text: str, lo: int, hi: int, regex: re.Pattern[str]) -> list[Span]:
        """HF's find_matches on text[lo:hi] (offsets in `text`)."""
        m, word, space = self._matching, _word(), whitespace()
        spans: list[Span] = []
        taken = lo  # the end of the last match taken (HF's start_offset)
        run = (lo, lo)  # a stretch of whitespace that ends where its run ends: rstrip's answer for it
        for match in regex.finditer(text, lo, hi):
            start, stop, token = match.start(), match.end(), match.group()
            if token in m.single_word and (
                (start > lo and word.match(text, start - 1)) or (stop < hi and word.match(text, stop))
            ):
                continue
            if token in m.lstrip:
                while start > taken and text[start - 1] in space:
                    start -= 1
                start = max(start, taken)
            if token in m.rstrip:  # a run is scanned once (rstrip tokens of spaces in 40k spaces took 56 s)
                if not run[0] <= stop <= run[1]:
                    end = stop
                    while end < hi and text[end] in space:
                        end += 1
                    run = (stop, end)
                stop = run[1]
            if start > stop:
                raise ValueError(_BAD_SPLIT.format(token=token, at=match.start() + 1))
            if start < stop:  # HF drops an empty piece, token and all
                spans.append(Span(start, stop, token))
            taken = stop
        return spans

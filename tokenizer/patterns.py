"""Named split patterns (tiktoken's current strings) and a compiler for them.

Two Unicode "flavours" decide what \\p{..} and \\s mean:

* "tiktoken" (Unicode 16.0, `_unicode_tables_16`): the default for the named patterns
  (gpt2/r50k/p50k, cl100k/gpt4, o200k/gpt4o, by name or by their exact strings). Token
  ids must equal tiktoken's, and tiktoken's Rust regex is at Unicode 16.0 (so is HF
  tokenizers' Oniguruma, and Pyodide's stdlib). With the `regex` package's newer tables
  thousands of code points (U+088F, U+0C5C, U+A7CE, ...) would be letters for us and
  not for tiktoken, and the ids would differ; tests/test_unicode_parity.py compares
  with tiktoken on every code point. Only the `re` translation can use these tables, so
  a named pattern always compiles to it (it is also faster than `regex` there).
* "regex" (`_unicode_tables`, the installed `regex` package's Unicode version): the
  default for custom patterns, which mean what they mean in `regex`. They compile with
  `regex` when it is importable, else (Pyodide) with the `re` translation of this flavour.

The `re` translation of a pattern and its Unicode tables are in _re_translate.py; the
splitter that runs it, with the astral stand-ins that keep it fast, in _re_split.py.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Protocol

from ._re_empty import EMPTY_MATCH_REASON, can_match_empty
from ._re_split import ReSplitter
from ._re_translate import invalid_pattern, translate
from ._unicode import REGEX, TIKTOKEN, UNICODE_FLAVOURS, unicode_tables, unicode_version

__all__ = [  # what this module defines, and the re translation's public names, importable from here
    "CL100K_PATTERN",
    "ENGINE",
    "DEFAULT_PATTERN",
    "NO_SPLIT",
    "NO_SPLIT_REGEX",
    "O200K_PATTERN",
    "PATTERNS",
    "PATTERN_NAMES",
    "R50K_PATTERN",
    "REGEX",
    "REGEX_ENGINES",
    "TIKTOKEN",
    "UNICODE_FLAVOURS",
    "NoSplit",
    "ReSplitter",
    "Splitter",
    "WholeMatches",
    "compile_pattern",
    "compile_split",
    "default_engine",
    "default_unicode",
    "is_named",
    "regex_importable",
    "resolve_pattern",
    "translate",
    "unicode_tables",
    "unicode_version",
]

R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# o200k's pattern rewritten so that stdlib `re` runs it with less backtracking (~10 % fewer
# split instructions on English text, and +3 % to compile); `re` splits with this form, which
# matches exactly what O200K_PATTERN matches at every position, under any Unicode tables. Why,
# with P = [^\r\n\p{L}\p{N}], U = [Lu Lt Lm Lo M], L = [Ll Lm Lo M], A = U*L+, B = U+L* and
# the suffix S = (?i:'s|...)? (never fails, so every repeat before it may be possessive):
# * A = U+L++ | L++ (A with U* taking at least one character, tried first; else U* empty)
#   and B = U++L*+.
# * P?A S | P?B S (the original two branches) = P'?+(A|B)S with P' = P minus the marks M: a
#   character of P' is in neither U nor L, so when P? took it and A (or B) failed after it,
#   A (or B) also fails at it; a mark m is in P, U and L: A (or B) from m has the same
#   maximal U run as from the character after m, plus m, so it succeeds with the same end
#   whenever it succeeds after m, and otherwise the original falls back to starting at m,
#   which is what the rewrite does directly (P' never takes m).
# * ' ?Q+' = ' ?+Q+' (a space is in \s, so Q+ cannot start at it), and every last repeat of
#   an alternative is possessive (nothing after it can fail).
_U = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_L = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
O200K_SPLIT_FORM = "|".join(
    [
        rf"""[^\r\n\p{{L}}\p{{N}}\p{{M}}]?+(?:{_U}+{_L}++|{_L}++|{_U}++{_L}*+)(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}+""",
        r"""\x20?+[^\s\p{L}\p{N}]++[\r\n/]*+""",
        r"""\s*[\r\n]++""",
        r"""\s+(?!\S)""",
        r"""\s++""",
    ]
)
_RE_SPLIT_FORMS = {O200K_PATTERN: O200K_SPLIT_FORM}  # pattern -> the equivalent form `re` runs

PATTERNS: dict[str, str] = {
    "gpt2": R50K_PATTERN,
    "r50k": R50K_PATTERN,
    "p50k": R50K_PATTERN,
    "cl100k": CL100K_PATTERN,
    "gpt4": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "gpt4o": O200K_PATTERN,
    # tiktoken's encoding names name their patterns too: Tokenizer(ranks, "cl100k_base") must not
    # take the name for a regex, which would match only the literal text "cl100k_base" and
    # silently encode everything else to nothing
    "r50k_base": R50K_PATTERN,
    "p50k_base": R50K_PATTERN,
    "cl100k_base": CL100K_PATTERN,
    "o200k_base": O200K_PATTERN,
}
NO_SPLIT = "none"  # the name for "no pre-tokenization": the whole text is one chunk
# The regex a reader that needs one (tiktoken's pat_str) splits with as NO_SPLIT does: each
# stretch of text between special tokens is one chunk, and no text gives no chunk. Saved files
# write it as "pattern_regex"; "none" there would be a regex matching only the word "none".
NO_SPLIT_REGEX = r"[\s\S]+"
DEFAULT_PATTERN = "gpt4"  # cl100k's split: what Tokenizer, train and counting use unless told
PATTERN_NAMES = ("gpt2", "gpt4", "o200k", NO_SPLIT)  # the names the page and the server offer, in order
REGEX_ENGINES = ("auto", "regex", "re")  # what compile_pattern(engine=...) accepts
_NAMED_STRINGS = frozenset(PATTERNS.values())
_LOWER_NAMES = frozenset(n.lower() for n in (*PATTERNS, NO_SPLIT))


def resolve_pattern(name_or_regex: str) -> str:
    """A pattern name (gpt2, gpt4, o200k, none, ...) -> its regex; anything else is taken as a regex."""
    if not isinstance(name_or_regex, str):
        raise TypeError(f"split pattern must be a str, not {type(name_or_regex).__name__}")
    return PATTERNS.get(name_or_regex, name_or_regex)


def looks_like_a_name(pattern: str) -> bool:
    """A bare word ('gpt5', 'GPT4', 'cl100k-base'): meant as a pattern name, a typo when it names
    none, never a regex (as one it matches only that word: every other character dropped)."""
    return re.fullmatch(r"[\w.-]+", pattern) is not None


def mistaken_name(name_or_regex: str) -> bool:
    """A bare word that is no pattern's name but reads as one: it has a digit ('gtp4', 'gpt5',
    'cl100k-base') or is a name in other letter case ('GPT4', 'None'). As a regex it would match
    only that text, and a tokenizer would encode everything else to nothing, silently. Other
    bare words ('ab') stay regexes: a training may ask for exactly that (regex=)."""
    if name_or_regex in PATTERNS or name_or_regex == NO_SPLIT or not looks_like_a_name(name_or_regex):
        return False
    return any(c in "0123456789" for c in name_or_regex) or name_or_regex.lower() in _LOWER_NAMES


def check_pattern_name(name_or_regex: str) -> None:
    """ValueError for a mistaken_name: Tokenizer(ranks, "gtp4") would take it as a regex."""
    if isinstance(name_or_regex, str) and mistaken_name(name_or_regex):
        raise ValueError(
            f"unknown pattern name {name_or_regex!r}; choose one of {', '.join(PATTERN_NAMES)} (aliases: "
            f"{', '.join(n for n in PATTERNS if n not in PATTERN_NAMES)}), or give a split regex; to "
            f"match only the literal text, write (?:{name_or_regex})"
        )


def is_named(name_or_regex: str) -> bool:
    """A pattern name, or the exact string of a named pattern (tiktoken's own strings)."""
    return name_or_regex in PATTERNS or name_or_regex in _NAMED_STRINGS


def default_unicode(name_or_regex: str) -> str:
    """The flavour unicode=None picks: "tiktoken" for the named patterns, else "regex"."""
    return TIKTOKEN if is_named(name_or_regex) else REGEX


@functools.cache
def regex_importable() -> bool:
    try:
        import regex  # noqa: F401
    except ImportError:
        return False
    return True


def default_engine(name_or_regex: str | None = None, unicode: str | None = None) -> str:
    """The engine "auto" picks.

    The named patterns always use the `re` translation: only it has tiktoken's Unicode
    16.0 tables, with BMP-only classes it is faster than `regex` (bench/split.py), and it is what
    the browser runs. So does unicode="tiktoken". A custom regex uses `regex` when
    importable (the `re` translation rejects some of its syntax), unless
    TOKENIZER_NO_REGEX=1 asks for `re`.
    """
    if unicode == TIKTOKEN or (name_or_regex is not None and is_named(name_or_regex)):
        return "re"
    if os.environ.get("TOKENIZER_NO_REGEX", "") not in ("", "0"):
        return "re"
    return "regex" if regex_importable() else "re"


ENGINE = default_engine()  # what "auto" picks for a custom regex (named patterns: always "re")


class Splitter(Protocol):
    """What compile_pattern returns: a `regex.Pattern`, a ReSplitter or NoSplit."""

    def findall(self, text: str) -> list: ...


def compile_pattern(name_or_regex: str, engine: str = "auto", unicode: str | None = None) -> Splitter:
    """Compile a split pattern (name or regex); the result has .findall(text) -> list[str].

    engine: "regex", "re" (the stdlib translation), or "auto" (see default_engine).
    unicode: the tables \\p{..} and \\s use: "tiktoken" (Unicode 16.0), "regex" (the
    `regex` package's), or None: "tiktoken" for the named patterns, "regex" for custom
    ones, and "regex" whenever engine="regex" (that package has only its own tables).
    Raises ValueError for an invalid pattern, one that can match the empty string, or
    engine="regex" with unicode="tiktoken".
    """
    if engine not in REGEX_ENGINES:
        raise ValueError(f"unknown regex engine {engine!r}; expected one of {', '.join(REGEX_ENGINES)}")
    if unicode is not None and unicode not in UNICODE_FLAVOURS:
        raise ValueError(
            f"unknown unicode flavour {unicode!r}; expected one of {', '.join(UNICODE_FLAVOURS)}"
        )
    resolve_pattern(name_or_regex)  # type check before hashing
    if engine == "auto":
        engine = default_engine(name_or_regex, unicode)
    if engine == "regex":
        if unicode == TIKTOKEN:
            raise ValueError(
                "engine 'regex' has only its own Unicode tables; unicode='tiktoken' "
                f"(Unicode {unicode_version(TIKTOKEN)}) needs engine 're' or 'auto'"
            )
        unicode = REGEX
    return _compile(name_or_regex, engine, unicode or default_unicode(name_or_regex))


@functools.lru_cache(maxsize=64)
def _compile(name_or_regex: str, engine: str, unicode: str) -> Splitter:
    if name_or_regex == NO_SPLIT:
        return NoSplit()
    pattern = resolve_pattern(name_or_regex)
    if engine == "regex":
        return _compile_with_regex(pattern)
    try:
        return ReSplitter(_RE_SPLIT_FORMS.get(pattern, pattern), unicode=unicode)
    except re.error as e:  # the translation is valid to our parser, not to re's ('\\b+')
        raise invalid_pattern(pattern, e) from None


def compile_split(name_or_regex: str, unicode: str | None = None, engine: str = "auto") -> Splitter:
    """compile_pattern for an encoder: a pattern with capturing groups splits into whole matches,
    as tiktoken's and HF's splits do (findall would give the groups' text and drop the rest)."""
    splitter = compile_pattern(name_or_regex, engine, unicode)
    if getattr(splitter, "groups", 0) or getattr(splitter, "_groups", 0):
        return WholeMatches(splitter)
    return splitter


class WholeMatches:
    """A compiled pattern with capturing groups whose findall gives each match's whole text."""

    def __init__(self, splitter: Splitter) -> None:
        self.splitter = splitter

    def findall(self, text: str) -> list[str]:
        if isinstance(self.splitter, ReSplitter):
            return self.splitter.whole_matches(text)
        return [m.group() for m in self.splitter.finditer(text)]  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"WholeMatches({self.splitter!r})"


class NoSplit:
    """The "none" pattern: the whole text is a single chunk."""

    pattern = NO_SPLIT

    def findall(self, text: str) -> list[str]:
        return [text] if text else []

    def __repr__(self) -> str:
        return "NoSplit()"


def _compile_with_regex(pattern: str) -> Splitter:
    if not regex_importable():
        raise ValueError("engine 'regex' was asked for but the regex package is not installed")
    import regex

    try:
        compiled = regex.compile(pattern)
    except regex.error as e:
        raise invalid_pattern(pattern, e) from None
    except (TypeError, ValueError, OverflowError, RecursionError, MemoryError) as e:  # regex's own bugs:
        raise invalid_pattern(pattern, e) from None  # \N{named sequence} is a TypeError there
    if pattern in PATTERNS.values():
        return compiled  # known never to match "" (tests/test_patterns.py checks it)
    call = _recursive_call(pattern)
    if call:
        raise invalid_pattern(
            pattern,
            f"recursion ({call}) is not supported: the regex package can run out of memory on it "
            "while splitting (a MemoryError on some text), and the re engine has none",
        )
    try:  # decide emptiness on the re translation where there is one, so both engines agree
        can_be_empty = can_match_empty(translate(pattern, bmp_only=True, unicode=REGEX).skeleton)
    except (ValueError, re.error):
        can_be_empty = compiled.search("") is not None or any(
            m.start() == m.end() for m in compiled.finditer(_EMPTY_MATCH_PROBE)
        )
    if can_be_empty:
        raise invalid_pattern(pattern, EMPTY_MATCH_REASON)
    return compiled


# a recursive call of `regex` ((?R), (?1), (?-1), (?&name), (?P>name)) outside a class; escapes
# and classes are skipped whole (a class that ends early only makes more of the pattern scanned)
_RECURSION_CALL = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]?|(\(\?(?:R|[+-]?\d+|&\w+|P>\w+)\))", re.DOTALL)


def _recursive_call(pattern: str) -> str | None:
    """The first recursive call in a `regex` pattern, if any."""
    return next((m.group(1) for m in _RECURSION_CALL.finditer(pattern) if m.group(1)), None)


_EMPTY_MATCH_PROBE = "Hi, DON'T 'll 42 \u0661\u0662 \t\r\n  x\xa0y \u4e16\u754c \U0001f642\u200d! _-+"

"""`regex` patterns as stdlib `re` sources: the translator and its Unicode tables.

Pyodide has no `regex` package, and tiktoken's Unicode 16.0 can only be had through
tables of our own, so every named pattern runs on `re` (patterns.py decides when). The
translation makes \\p{..}, \\s and \\d explicit ranges from a flavour's generated tables
("tiktoken": `_unicode_tables_16`, Unicode 16.0; "regex": `_unicode_tables`, the installed
`regex` package's), imported on first use. Syntax whose meaning differs between the two
engines and cannot be rewritten exactly raises ValueError rather than splitting differently.
The "tiktoken" flavour also takes Rust's syntax (tiktoken's engine): `$` is the end of the text
(`\\Z`; re's `$` also matches before a final newline), and a class's `[`, `&&`, `--` and `~~`
(Rust's nested classes and set operations) are refused.

With bmp_only it keeps only BMP ranges (sre scans astral ranges linearly): `_re_split` runs
such a source on text whose astral characters are replaced by BMP stand-ins.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from ._re_rust import dotted_dotless_as_rust, read_digit_escape, read_word_edge
from ._unicode import (
    BMP_END,
    MAX_CODE_POINT,
    TIKTOKEN,
    UNICODE_FLAVOURS,
    Ranges,
    categories_ranges,
    complement,
    merge_ranges,
    script_ranges,
    unicode_tables,
    white_space,
    word_ranges,
)


def invalid_pattern(pattern: str, reason: object) -> ValueError:
    return ValueError(f"invalid split pattern {pattern!r}: {reason}")


def _escape_code_point(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp <= BMP_END:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _class_body(ranges: Ranges) -> str:
    parts = []
    for a, b in ranges:
        parts.append(_escape_code_point(a) if a == b else f"{_escape_code_point(a)}-{_escape_code_point(b)}")
    return "".join(parts)


def _clip_to_bmp(ranges: Ranges) -> Ranges:
    return [(a, min(b, BMP_END)) for a, b in ranges if a <= BMP_END]


# ---------------------------------------------------------------------------
# regex syntax -> re syntax


@dataclass(frozen=True)
class Translation:
    """The `re` source for a `regex` pattern, plus what the astral stand-in trick needs."""

    source: str
    skeleton: str  # the same with each class as [\x00]: cheap to parse for the empty-match check
    literals: Ranges  # code points the pattern names explicitly (stand-ins must avoid them)
    standin_safe: bool  # no astral literals, no backreferences


def _normalize_property_name(name: str) -> str:
    return re.sub(r"[\s_-]", "", name).upper()


# i and I are the only ASCII letters whose case-insensitive matches differ (dotted/dotless I).
_IGNORECASE_I = {"i": r"(?-i:[iI\u0130])", "I": r"(?-i:[iI\u0131])"}
# tiktoken's engine folds by Unicode's simple case folding alone: i and I only match each other
_RUST_IGNORECASE_I = {"i": "(?-i:[iI])", "I": "(?-i:[iI])"}
_SIMPLE_ESCAPES = {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")
_COMMENTS = re.compile(r"(?:\(\?#[^)]*\))*")  # (?#...) comments, none or more
_FUZZY_START = re.compile(r"\d*[deis]|\d+<")  # how a brace `regex` reads as fuzzy begins
_RUST_ESCAPES = "zehHNxuU"  # escapes tiktoken's engine reads otherwise than regex (read_rust_escape)
_HEX_DIGIT = [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)]  # fancy-regex's \h
_NOT_HEX_DIGIT = complement(_HEX_DIGIT)
_NOT_NEWLINE = complement([(0x0A, 0x0A)])  # Rust's \N
_PROPERTY_HINT = (  # binary properties and Script_Extensions have no tables here
    ": use general categories such as \\p{L} or \\p{Lu}, scripts by long name such as \\p{Han} or "
    "\\p{Greek}, or code points as a class such as [\\u4e00-\\u9fff]"
)
# general category aliases of the tables that Rust's regex (tiktoken's engine) does not know
_NOT_RUST_CATEGORIES = frozenset({"L&", "SURROGATE"})
_RUST_PROPERTIES = {"ANY": [(0, MAX_CODE_POINT)], "ASCII": [(0, 0x7F)]}  # \p{Any}, \p{ASCII}


class _Translator:
    """A one-pass scanner over a `regex` (V0) pattern that writes the equivalent `re` pattern.

    Unicode-dependent constructs are rewritten with the generated tables; regex-only
    or table-dependent syntax we cannot reproduce exactly raises ValueError.
    """

    def __init__(self, pattern: str, bmp_only: bool, flavour: str):
        self.pattern = pattern
        self.bmp_only = bmp_only
        self.flavour = flavour
        self.pos = 0
        self.out: list[str] = []
        self.skeleton: list[str] = []
        self.literals: Ranges = []
        self.standin_safe = True
        self.ignorecase = [False]  # one entry per open group
        self.groups: list[tuple[str, int, int]] = []  # open groups: kind, "(" position, content start
        self.lookaround_span: tuple[int, int] | None = None  # the last group that is only a lookaround

    def error(self, reason: str) -> ValueError:
        return invalid_pattern(self.pattern, f"{reason} (at position {self.pos}; re engine)")

    def translate(self) -> Translation:
        while self.pos < len(self.pattern):
            self.outside_class()
        return Translation(
            "".join(self.out), "".join(self.skeleton), merge_ranges(self.literals), self.standin_safe
        )

    def peek(self, n: int = 1) -> str:
        return self.pattern[self.pos : self.pos + n]

    # -- outside a character class -------------------------------------------------

    def outside_class(self) -> None:
        ch = self.pattern[self.pos]
        if ch == "\\":
            self.escape_outside()
        elif ch == "[":
            self.character_class()
        elif ch == "(":
            self.group_open()
        elif ch == ")":
            if len(self.ignorecase) > 1:
                self.ignorecase.pop()
            self.close_group()
        elif ch == "{":
            self.brace()
        elif ch == "$" and self.flavour == TIKTOKEN:
            self.dollar()
        elif ch in ".^$|*+?":
            self.emit(ch)
        else:
            self.literal(ord(ch), 1)

    def dollar(self) -> None:
        """Rust's `$` (tiktoken's engine) is the end of the text, re's also before a final newline."""
        if re.search(r"\(\?[a-zA-Z]*m", self.pattern):
            raise self.error("the multi-line flag (?m) is not supported with tiktoken's tables")
        self.advance_emit(1, "\\Z", "$")

    def emit(self, text: str) -> None:
        self.advance_emit(len(text), text)

    def advance_emit(self, consumed: int, text: str, skeleton: str | None = None) -> None:
        self.out.append(text)
        self.skeleton.append(text if skeleton is None else skeleton)
        self.pos += consumed

    def literal(self, cp: int, consumed: int) -> None:
        """A single literal code point outside a class, spelled with `consumed` pattern chars."""
        self.note_literal(cp, cp)
        if self.ignorecase[-1] and chr(cp) in _IGNORECASE_I:
            self.advance_emit(
                consumed, (_RUST_IGNORECASE_I if self.flavour == TIKTOKEN else _IGNORECASE_I)[chr(cp)]
            )
        elif chr(cp).isascii() and chr(cp).isalnum():
            self.advance_emit(consumed, chr(cp))
        else:
            self.advance_emit(consumed, _escape_code_point(cp))

    def note_literal(self, a: int, b: int) -> None:
        if self.ignorecase[-1] and b > 0x7F:
            raise self.error("case-insensitive matching of non-ASCII characters differs between re and regex")
        if b > BMP_END:
            self.standin_safe = False
        self.literals.append((a, b))

    def escape_outside(self) -> None:
        start = self.pos
        edge = read_word_edge(self.pattern, start, self.error) if self.flavour == TIKTOKEN else None
        if edge is not None:  # Rust's \< \> \b{start} ...: lookarounds on the engine's own \w
            template, consumed = edge
            w = self.render_set(self.word_class("b"))
            self.advance_emit(consumed, template.replace("{w}", w), template.replace("{w}", "[\\x00]"))
            return
        kind, value, consumed = self.read_escape()
        if kind == "set":
            self.advance_emit(consumed, self.render_set(value), "[\\x00]")
        elif kind == "boundary":  # \b, \B: lookarounds on the engine's own \w
            w = self.render_set(value)
            if self.pattern[start + 1] == "b":
                text = f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))"
            else:
                text = f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))"
            self.advance_emit(consumed, text, "\\b")
        elif kind == "char":
            self.literal(value, consumed)
        elif kind == "rewrite":  # an anchor spelt otherwise in re
            self.advance_emit(consumed, value)
        else:  # anchors, backreferences and anything re should judge itself
            if kind == "backref":
                self.standin_safe = False
            self.advance_emit(consumed, value or self.pattern[start : start + consumed])

    def word_class(self, c: str) -> Ranges:
        """The engine's \\w ranges, for \\w, \\W, \\b, \\B (c) or a Rust word edge."""
        ranges = word_ranges(self.flavour)
        if ranges is None:
            raise self.error(f"\\{c} needs the engine's \\w table, missing from these tables")
        if self.ignorecase[-1]:
            raise self.error(f"case-insensitive \\{c} differs between re and regex")
        self.standin_safe = False  # \w is not decided by general category alone
        return ranges

    def render_set(self, ranges: Ranges) -> str:
        if self.bmp_only:
            ranges = _clip_to_bmp(ranges)
        if not ranges:
            return "[^\\x00-\\U0010ffff]"  # matches nothing
        return f"[{_class_body(ranges)}]"

    def read_escape(self) -> tuple[str, object, int]:
        """Read the escape at self.pos -> (kind, value, length) without moving.

        kinds: "set" (ranges), "char" (a code point), "boundary" (\\b or \\B: the \\w ranges),
        "backref", "other" (copied as is).
        """
        p, i = self.pattern, self.pos
        if i + 1 >= len(p):
            return "other", None, 1  # trailing backslash: re reports it
        c = p[i + 1]
        rust = self.read_rust_escape(c) if self.flavour == TIKTOKEN and c in _RUST_ESCAPES else None
        if rust is not None:
            return rust
        if c in "pP":
            return self.read_property(c == "P")
        if c in "sS":
            ranges = white_space(self.flavour)
            return "set", (complement(ranges) if c == "S" else ranges), 2
        if c in "dD":
            ranges = categories_ranges(("Nd",), self.flavour)
            return "set", (complement(ranges) if c == "D" else ranges), 2
        if c in "wWbB":
            ranges = self.word_class(c)
            if c in "bB":
                return "boundary", ranges, 2
            return "set", (complement(ranges) if c == "W" else ranges), 2
        if c in _SIMPLE_ESCAPES:
            return "char", _SIMPLE_ESCAPES[c], 2
        if c in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[c]
            digits = p[i + 2 : i + 2 + width]
            if len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
                cp = int(digits, 16)
                if cp <= MAX_CODE_POINT:
                    return "char", cp, 2 + width
            return "other", None, 2  # malformed: re reports it
        if c == "N" and p.startswith("{", i + 2) and "}" in p[i + 3 :]:
            end = p.index("}", i + 3)
            try:
                named = unicodedata.lookup(p[i + 3 : end])
            except KeyError:
                raise self.error(f"unknown character name {p[i + 3 : end]!r}") from None
            if len(named) != 1:  # a named sequence, such as "LATIN CAPITAL LETTER A WITH MACRON AND GRAVE"
                raise self.error(f"{p[i + 3 : end]!r} names {len(named)} characters; \\N{{...}} takes one")
            return "char", ord(named), end + 1 - i
        if c in "0123456789" and self.flavour == TIKTOKEN:
            return read_digit_escape(p, i, self.error)
        if c == "0":
            digits = re.match(r"[0-7]{0,2}", p[i + 2 :]).group()
            return "char", int("0" + digits, 8), 2 + len(digits)
        if c in "123456789":
            octal = re.match(r"[0-7]{3}", p[i + 1 :])
            if octal and c in "1234567" and int(octal.group(), 8) <= 0o377:
                return "char", int(octal.group(), 8), 4
            digits = re.match(r"\d{1,2}", p[i + 1 :]).group()
            return "backref", None, 1 + len(digits)
        if c.isascii() and c.isalnum():
            return "other", None, 2  # \A, \Z and letters re rejects (regex-only \X, \G, ...)
        return "char", ord(c), 2  # an escaped symbol stands for itself

    def read_rust_escape(self, c: str) -> tuple[str, object, int]:
        """An escape whose meaning in tiktoken's engine (Rust's regex, by fancy-regex) is not
        `regex`'s: \\z (end of text), \\e (ESC), \\h / \\H (hex digit or not: fancy-regex),
        \\N (any character but a newline; `regex` reads \\N{NAME} as a named character, which
        tiktoken does not) and \\x{..} / \\u{..} / \\U{..} (a code point in hex)."""
        p, i = self.pattern, self.pos
        if c == "z":
            return "rewrite", "\\Z", 2
        if c == "e":
            return "char", 0x1B, 2
        if c in "hH":
            for a, b in _HEX_DIGIT:  # literals: the astral stand-ins must not be hex digits
                self.note_literal(a, b)
            return "set", (_NOT_HEX_DIGIT if c == "H" else _HEX_DIGIT), 2
        if c == "N":
            if p.startswith("{", i + 2) and not _QUANTIFIER.match(p, i + 2):
                raise self.error(
                    "\\N{...} is no character name in tiktoken's engine (\\N is any character but \\n there)"
                )
            return "set", _NOT_NEWLINE, 2
        if not p.startswith("{", i + 2):  # \x41, \u0041, \U00000041: as in regex
            return None
        end = p.find("}", i + 3)
        digits = p[i + 3 : end] if end > 0 else ""
        if not (1 <= len(digits) <= 8 and all(d in "0123456789abcdefABCDEF" for d in digits)):
            raise self.error(f"\\{c}{{...}} needs 1 to 8 hex digits and a closing }}")
        cp = int(digits, 16)
        if cp > MAX_CODE_POINT or 0xD800 <= cp <= 0xDFFF:
            raise self.error(f"\\{c}{{{digits}}} is not a Unicode scalar value")
        return "char", cp, end + 1 - i

    def read_property(self, negated: bool) -> tuple[str, Ranges | int, int]:
        p, i = self.pattern, self.pos
        if (
            self.flavour != TIKTOKEN
            and not p.startswith("{", i + 2)
            and p[i + 2 : i + 3] not in tuple("CLMNPSZ")
        ):
            return "char", ord(p[i + 1]), 2  # `regex`: \pl is no property but the text "pl"
        if self.ignorecase[-1]:
            raise self.error("case-insensitive \\p{..} classes differ between re and regex")
        if p.startswith("{", i + 2):
            end = p.find("}", i + 3)
            if end < 0:
                raise self.error("missing } after \\p{")
            name, consumed = p[i + 3 : end], end + 1 - i
        elif i + 2 < len(p):
            name, consumed = p[i + 2], 3
        else:
            raise self.error("missing property name after \\p")
        name = name.strip()
        if name.startswith("^"):
            negated, name = not negated, name[1:]
        key, sep, value = (
            re.split(r"([=:])", name, maxsplit=1) if re.search(r"[=:]", name) else ("", "", name)
        )
        if self.flavour == TIKTOKEN and _normalize_property_name(value) in _NOT_RUST_CATEGORIES:
            raise self.error(f"tiktoken's engine has no property {name!r}{_PROPERTY_HINT}")
        special = _RUST_PROPERTIES.get(_normalize_property_name(name)) if self.flavour == TIKTOKEN else None
        if special is not None:
            if special is _RUST_PROPERTIES["ASCII"]:  # literals: the astral stand-ins must not be ASCII
                self.note_literal(0, 0x7F)
            return "set", (complement(special) if negated else special), consumed
        kind = _normalize_property_name(key) if sep else ""
        if kind not in ("", "GC", "GENERALCATEGORY", "SC", "SCRIPT"):
            raise self.error(
                f"only general categories and scripts are supported, not {name!r}{_PROPERTY_HINT}"
            )
        categories = unicode_tables(self.flavour).CATEGORY_ALIASES.get(_normalize_property_name(value))
        if categories is not None and kind not in ("SC", "SCRIPT"):
            ranges = categories_ranges(categories, self.flavour)
        elif kind in ("", "SC", "SCRIPT") and (ranges := script_ranges(value, self.flavour)) is not None:
            self.standin_safe = False  # a script is not decided by the general category
        else:
            raise self.error(f"unknown or unsupported property {name!r}{_PROPERTY_HINT}")
        return "set", (complement(ranges) if negated else ranges), consumed

    # -- groups, flags, braces ---------------------------------------------------------

    def group_open(self) -> None:
        p, i = self.pattern, self.pos
        ignorecase = self.ignorecase[-1]
        flags = re.match(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])", p[i:])
        if flags and (flags.group(1) or flags.group(2) is not None):
            on, off = flags.group(1), flags.group(2) or ""
            for letter in on + off:
                if letter in "axL":
                    name = {"a": "ASCII", "x": "VERBOSE", "L": "LOCALE"}[letter]
                    raise self.error(f"the {name} flag (?{letter}) is not supported")
            if "i" in on:
                ignorecase = True
            if "i" in off:
                ignorecase = False
            if flags.group(3) == ")":  # global flags: they apply from here on
                self.ignorecase[-1] = ignorecase
                self.advance_emit(flags.end(), flags.group())
                return
            self.ignorecase.append(ignorecase)
            self.groups.append(("plain", i, i + flags.end()))
            self.advance_emit(flags.end(), flags.group())
            return
        if p.startswith("(?#", i):  # comment: copy through the closing parenthesis
            end = p.find(")", i)
            end = len(p) if end < 0 else end + 1
            self.advance_emit(end - i, p[i:end])
            return
        if p.startswith("(?P=", i) or p.startswith("(?(", i):
            self.standin_safe = False
        named = re.match(r"\(\?P?<(?![=!])[^>]*>|\(\?P=[^)]*|\(\?[:=!>]|\(\?<[=!]|\(\?\(\w*\)|\(\?|\(", p[i:])
        self.ignorecase.append(ignorecase)
        group = named.group()
        kind = "look" if re.fullmatch(r"\(\?<?[=!]", group) else "plain" if group == "(?:" else "other"
        self.groups.append((kind, i, i + named.end()))
        if re.match(r"\(\?<[^=!]", group):  # (?<name>: re before 3.12 wants (?P<name>
            group = "(?P<" + group[3:]
        self.advance_emit(named.end(), group)

    def close_group(self) -> None:
        """Emit the `)` at self.pos; tiktoken's engine refuses a quantifier on a lookaround.

        fancy-regex: "Target of repeat operator is invalid" for (?=a)+, (?!a){2}, (?:(?<=a))?,
        where `regex` and re repeat the assertion. A group that holds only a lookaround is one.
        """
        if self.groups:
            kind, opened, content = self.groups.pop()
            only_lookaround = kind == "look" or (kind == "plain" and self.holds_only_lookaround(content))
            self.lookaround_span = (opened, self.pos + 1) if only_lookaround else None
        self.emit(")")
        repeated = self.peek() in ("?", "*", "+") or _QUANTIFIER.match(self.pattern, self.pos)
        if (
            self.flavour == TIKTOKEN
            and repeated
            and self.lookaround_span
            and self.lookaround_span[1] == self.pos
        ):
            raise self.error("a quantifier on a lookaround, such as (?=a)+ (tiktoken's engine refuses it)")

    def holds_only_lookaround(self, content: int) -> bool:
        """Whether the group content from `content` to self.pos is a lookaround, comments aside."""
        if self.lookaround_span is None:
            return False
        start, end = self.lookaround_span
        return all(_COMMENTS.fullmatch(self.pattern, a, b) for a, b in ((content, start), (end, self.pos)))

    def brace(self) -> None:
        quantifier = _QUANTIFIER.match(self.pattern, self.pos)
        if quantifier:
            self.advance_emit(quantifier.end() - self.pos, quantifier.group())
            return
        end = self.pattern.find("}", self.pos)
        body = self.pattern[self.pos + 1 : end] if end >= 0 else ""
        # `regex` reads a brace that starts as a fuzzy constraint ("e", "s<=2", "1<e", "2i+...") as
        # one, or fails on it ({start}: "expected }"); only the rest is a literal "{" there.
        fuzzy_start = self.flavour != TIKTOKEN and _FUZZY_START.match(self.pattern, self.pos + 1)
        if fuzzy_start or re.search(r"[<=]", body) or body.strip() in ("e", "i", "d", "s"):
            raise self.error("fuzzy matching {...} is regex-only")
        self.literal(ord("{"), 1)

    # -- character classes -------------------------------------------------------------

    def character_class(self) -> None:
        p = self.pattern
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges: Ranges = []
        first = True
        while True:
            if self.pos >= len(p):
                raise self.error("unterminated character set")
            ch = p[self.pos]
            if ch == "]" and not first:
                self.pos += 1
                break
            first = False
            if self.flavour == TIKTOKEN and (ch == "[" or p.startswith(("&&", "--", "~~"), self.pos)):
                raise self.error(
                    f"{'[' if ch == '[' else p[self.pos : self.pos + 2]!r} in a class (Rust's set syntax)"
                )
            item = self.class_item()
            if isinstance(item, list):  # a set escape such as \p{L} or \s
                if (
                    self.flavour == TIKTOKEN
                    and self.peek() == "-"
                    and p[self.pos + 1 : self.pos + 2] not in ("]", "")
                ):
                    raise self.error("a range from a class escape, such as [\\w-~] (Rust refuses it)")
                ranges.extend(item)
                continue
            low = item
            if self.flavour == TIKTOKEN and p.startswith("--", self.pos):  # [a--b]: a minus b, no range
                raise self.error("'--' in a class (Rust's set syntax)")
            if self.peek() == "-" and self.pattern[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                high = self.class_item()
                if isinstance(high, list) or high < low:
                    raise self.error("bad character range")
                self.note_literal(low, high)
                ranges.append((low, high))
            else:
                self.note_literal(low, low)
                ranges.append((low, low))
        ranges = merge_ranges(ranges)
        if negated and self.flavour != TIKTOKEN and ranges == [(0, MAX_CODE_POINT)]:
            raise self.error(  # `regex` reads \s\S (X and not X) in [^..] as any character
                "a negated class of every character, such as [^\\s\\S], matches every character in the "
                "regex package and none in re: write [\\s\\S] for any character, or drop it"
            )
        rust_ignorecase = self.ignorecase[-1] and self.flavour == TIKTOKEN
        overmatched = self.dotted_dotless_fix(ranges) if self.ignorecase[-1] and not rust_ignorecase else None
        dotted_dotless = dotted_dotless_as_rust(ranges, negated) if rust_ignorecase else None
        if self.bmp_only:
            ranges = _clip_to_bmp(ranges)
        if not ranges:
            top = BMP_END if self.bmp_only else MAX_CODE_POINT
            body = f"[\\x00-{_escape_code_point(top)}]" if negated else "[^\\x00-\\U0010ffff]"
        else:
            body = f"[{'^' if negated else ''}{_class_body(ranges)}]"
        if overmatched and negated:  # re's [^..] misses what its [..] wrongly matches
            body = f"(?:(?-i:{overmatched})|{body})"
        elif overmatched:
            body = f"(?:(?-i:(?!{overmatched})){body})"
        if dotted_dotless is not None:  # i, I, İ and ı as tiktoken's engine matches them, the rest as re does
            body = f"(?:{dotted_dotless}(?-i:(?![iI\u0130\u0131])){body})"
        self.advance_emit(0, body, "[\\x00]")

    def dotted_dotless_fix(self, ranges: Ranges) -> str | None:
        """The char re's case-insensitive class matches but regex's doesn't, if any.

        With i but not I in a class, re also matches dotless ı; with I but not i, dotted İ
        (regex follows simple case folding). Other ASCII letters agree.
        """
        present = "".join(c for c in "iI\u0131\u0130" if any(a <= ord(c) <= b for a, b in ranges))
        if present in ("i", "i\u0130"):
            return "\\u0131"
        if present in ("I", "I\u0131"):
            return "\\u0130"
        if present in ("\u0131", "\u0130"):
            raise self.error("case-insensitive matching of non-ASCII characters differs between re and regex")
        return None

    def class_item(self) -> int | Ranges:
        """One class member at self.pos: a code point, or ranges for a set escape."""
        p, i = self.pattern, self.pos
        ch = p[i]
        if ch == "\\":
            if p[i + 1 : i + 2] == "b":
                self.pos += 2
                return 8  # backspace inside a class
            if self.flavour == TIKTOKEN and p[i + 1 : i + 2] == "N":
                raise self.error("\\N (any character but \\n) cannot stand in a class in tiktoken's engine")
            kind, value, consumed = self.read_escape()
            if kind not in ("set", "char"):
                raise self.error(f"bad escape {p[i : i + consumed]!r} in a character class")
            self.pos += consumed
            return value
        if ch == "[" and p.startswith(":", i + 1) and re.match(r"\[:\^?\w+:\]", p[i:]):
            raise self.error("POSIX classes [:name:] are regex-only")
        self.pos += 1
        return ord(ch)


def translate(pattern: str, bmp_only: bool = False, *, unicode: str) -> Translation:
    """Translate a `regex` pattern to an equivalent stdlib `re` pattern.

    bmp_only drops astral code points from the classes; only text without astral
    characters (or with them replaced by stand-ins) may be matched with the result.
    unicode: the flavour of the tables, "tiktoken" or "regex" (patterns.default_unicode
    picks the one a pattern means).
    """
    if unicode not in UNICODE_FLAVOURS:
        raise ValueError(
            f"unknown unicode flavour {unicode!r}; expected one of {', '.join(UNICODE_FLAVOURS)}"
        )
    return _translate(pattern, bmp_only, unicode)


@functools.lru_cache(maxsize=64)
def _translate(pattern: str, bmp_only: bool, flavour: str) -> Translation:
    return _Translator(pattern, bmp_only, flavour).translate()

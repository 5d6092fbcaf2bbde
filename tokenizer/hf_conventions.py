"""What byte-level Hugging Face files write differently from us, shared by import and export.

- GPT-2's byte alphabet: a tokenizer.json's vocabulary holds strings, one printable character
  per byte (space is 'Ġ'), where we hold the bytes themselves;
- Oniguruma's regex dialect (HF's engine): a possessive counted repetition `X{1,3}+` is written
  `(?>X{1,3})` there, and read back; its \\w (and so \\W, \\b, \\B) is another set of
  characters than ours, so a Split's are written out as that set when read.
- Oniguruma's hex escapes: \\x{H...} is a code point and \\xH one hex digit there, which ours
  do not read; a Split's are written as characters when read.

Its own module so that reading a tokenizer.json (hf_import.py, under Tokenizer.load) does not
need the exporter, which builds on the Tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import NoReturn


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
    "X{1,3}, one or more times" in Oniguruma's Ruby syntax, so it becomes `(?>X{1,3})`; our
    \\w, \\W, \\b, \\B become Oniguruma's forms of them (`_OURS_IN_ONIGURUMA`)."""
    return _scan_words(_POSSESSIVE_COUNT.sub(r"(?>\1\2)", regex), _OURS_IN_ONIGURUMA, _ours_class)


_ATOMIC_COUNT = re.compile(r"\(\?>(\\[pP]\{[^}]*\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()|])(\{\d+(?:,\d*)?\})\)")


def regex_from_oniguruma(regex: str) -> str:
    """Undo `oniguruma_regex`: `(?>X{1,3})` back to the possessive `X{1,3}+`."""
    return _ATOMIC_COUNT.sub(r"\1\2+", regex)


# Oniguruma's hexadecimal escapes (HF's Split regexes): \x{H...} is a code point (1 to 8 digits),
# \xH and \xHH one or two digits; ours reads only \xHH. Below 0x80 \xHH is that character; from
# 0x80 it is a byte of UTF-8 there (a lone one fails, "\xc3\xa9" is "é"), not a code point.
_HEX_ESCAPE = re.compile(r"\\x(?:\{([0-9A-Fa-f]{1,8})\}|([0-9A-Fa-f]{1,2}))")
_META = set("\\^$.|?*+()[]{}#-&~")  # written escaped: special to one engine or the other, or in (?x)
_HEX_FIX = "write the character itself, or its code point as \\x{HHHH} (1 to 8 hex digits) or \\uHHHH"


def hex_escapes_from_oniguruma(regex: str) -> str:
    """`regex` with Oniguruma's \\x{H...}, \\xH and \\xHH written as characters both engines read
    alike: the character itself (a letter stays visible to multi_char_fold), else \\xHH below 0x80
    and \\uHHHH in the BMP. ValueError for the forms HF reads that ours would read otherwise:
    \\xHH from 0x80 (a UTF-8 byte there), \\x{...} with spaces (a sequence) or out of Unicode's
    range (matches nothing there), \\x without digits."""
    out, i = [], 0
    while i < len(regex):
        if regex[i] != "\\" or i + 1 >= len(regex):
            out.append(regex[i])
            i += 1
        elif regex[i + 1] != "x":
            out.append(regex[i : i + 2])
            i += 2
        else:
            match = _HEX_ESCAPE.match(regex, i)
            if match is None and regex.startswith("{", i + 2):
                braced = regex[i : regex.find("}", i) + 1 or i + 12]
                _refuse_hex(braced, "braces hold 1 to 8 hex digits here; HF reads spaces as a sequence")
            if match is None:
                _refuse_hex(regex[i : i + 3], "\\x without hex digits")
            braced, short = match.groups()
            value = int(braced or short, 16)
            if short is not None and value >= 0x80:
                _refuse_hex(
                    match.group(), f"the byte 0x{value:02X} of UTF-8 there, not the code point U+{value:04X}"
                )
            if value > 0x10FFFF or 0xD800 <= value < 0xE000:
                _refuse_hex(match.group(), "not a Unicode scalar value: HF matches nothing there")
            out.append(_written(chr(value)))
            i = match.end()
    return "".join(out)


def _written(ch: str) -> str:
    if ch.isalnum() or (ch.isprintable() and not ch.isspace() and ch not in _META):
        return ch
    cp = ord(ch)
    return f"\\x{cp:02x}" if cp < 0x80 else f"\\u{cp:04x}" if cp <= 0xFFFF else ch


def _refuse_hex(escape: str, why: str) -> NoReturn:
    raise ValueError(
        f"{escape!r} is valid for Hugging Face (Oniguruma) but is read here otherwise or not at all "
        f"({why}); {_HEX_FIX}"
    )


# Oniguruma's \w (HF's Split regexes) is not ours (Rust's, tiktoken's), checked on every code point
# with `tokenizers` 0.23: it lacks the joiners ZWNJ and ZWJ, and outside a class it also has
# "²³¹¼½¾" (Latin-1's numbers that are not Nd). Written as a class both engines read alike (the
# circled and squared letters are Alphabetic, So; written as characters, as `\x{..}` is not
# ours), it stays valid in a look-behind, which Oniguruma requires to be plain. \b and \B look
# at the \w outside a class.
WORD_IN_CLASS = "\\p{L}\\p{M}\\p{Nd}\\p{Nl}\\p{Pc}\u24b6-\u24e9\U0001f130-\U0001f149\U0001f150-\U0001f169\U0001f170-\U0001f189"
_WORD = f"[{WORD_IN_CLASS}\xb2\xb3\xb9\xbc-\xbe]"
_NOT_WORD = "[^" + _WORD[1:]
_IN_CLASS = {"\\w": WORD_IN_CLASS, "\\w\\u200c\\u200d": "\\w"}
_WORD_ESCAPES = {
    "w": _WORD,
    "W": _NOT_WORD,
    "b": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "B": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
}


# Our \\w is Oniguruma's \\w in a class with the joiners: how the export writes ours, and the
# forms the import reads back as ours (a round trip keeps the pattern's text).
_OURS_WORD = r"[\w\u200c\u200d]"
_OURS_IN_ONIGURUMA = {
    "w": _OURS_WORD,
    "W": r"[^\w\u200c\u200d]",
    "b": f"(?:(?<={_OURS_WORD})(?!{_OURS_WORD})|(?<!{_OURS_WORD})(?={_OURS_WORD}))",
    "B": f"(?:(?<={_OURS_WORD})(?={_OURS_WORD})|(?<!{_OURS_WORD})(?!{_OURS_WORD}))",
}


def word_escapes_from_oniguruma(regex: str) -> str:
    """`regex` with Oniguruma's \\w, \\W, \\b and \\B written as the classes they match there, in
    a syntax both engines read alike (the export's forms of ours back as ours). ValueError where a
    class cannot hold that: \\W beside other characters, \\b or \\B ([\\b] is a backspace there)."""
    ours = {written: "\\" + short for short, written in _OURS_IN_ONIGURUMA.items()}
    return _scan_words(regex, _WORD_ESCAPES, _class, ours)


def _scan_words(
    regex: str, escapes: dict[str, str], in_class: Callable[[str], str], kept: dict[str, str] | None = None
) -> str:
    """`regex` with each escape outside a class replaced by `escapes`, each class by `in_class`,
    each text of `kept` (longest first) by its value, as is."""
    kept_texts = sorted(kept or {}, key=len, reverse=True)
    out, i = [], 0
    while i < len(regex):
        text = next((t for t in kept_texts if regex.startswith(t, i)), None)
        if text is not None:
            out.append(kept[text])  # type: ignore[index]
            i += len(text)
        elif regex[i] == "\\" and i + 1 < len(regex):
            out.append(escapes.get(regex[i + 1], regex[i : i + 2]))
            i += 2
        elif regex[i] == "[":
            end = _class_end(regex, i)
            out.append(in_class(regex[i:end]))
            i = end
        else:
            out.append(regex[i])
            i += 1
    return "".join(out)


def _class_end(regex: str, start: int) -> int:
    """The index after the class opening at `start` (no nested classes: hf_import refuses them)."""
    i = start + (2 if regex.startswith("[^", start) else 1)
    i += regex[i : i + 1] == "]"  # a ] first in a class is a literal
    while i < len(regex) and regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i + 1


def _class(cls: str) -> str:
    """A class with Oniguruma's \\w inside it (no ²³¹¼½¾ there) written out; [\\W] and [^\\W]."""
    if cls in (r"[\W]", r"[^\W]"):
        return ("[" if cls.startswith("[^") else "[^") + WORD_IN_CLASS + "]"
    escapes = re.findall(r"\\(.)", cls)
    if "W" in escapes or "b" in escapes or "B" in escapes:
        what = "\\W beside other characters" if "W" in escapes else "\\b (a backspace there)"
        raise ValueError(
            f"{what} in the character class {cls[:40]!r} is read differently by Oniguruma; write "
            f"the characters out (its \\w in a class is [{WORD_IN_CLASS}])"
        )
    # \w with both joiners (how the export writes ours) is our \w, which has them: kept as ours
    return re.sub(r"\\w\\u200c\\u200d|\\(.)", lambda m: _IN_CLASS.get(m.group(), m.group()), cls)


def _ours_class(cls: str) -> str:
    """One of our classes as Oniguruma reads it: \\w with the joiners; [\\W] and [^\\W].
    ValueError for \\W beside other characters (Oniguruma's lets the joiners in)."""
    if cls in (r"[\W]", r"[^\W]"):
        return _OURS_IN_ONIGURUMA["w" if cls == r"[^\W]" else "W"]
    escapes = re.findall(r"\\(.)", cls)
    if "W" in escapes:
        raise ValueError(
            f"the character class {cls[:40]!r} holds \\W beside other characters, which Oniguruma "
            "(HF's regex engine) reads with the joiners U+200C, U+200D: write the characters out"
        )
    return re.sub(r"\\(.)", lambda m: r"\w\u200c\u200d" if m.group(1) == "w" else m.group(), cls)


# ASCII letter pairs that some single character case-folds to (Unicode's full folding: ß and ẞ to
# "ss", ﬅ and ﬆ to "st", the ligatures ﬀ ﬁ ﬂ ﬃ ﬄ): Oniguruma's case-insensitive match of the pair
# takes that character too, ours does not (non-ASCII ones in (?i) are refused by our engine).
_FOLDED_PAIRS = re.compile(r"(?i:ss|st|ff|fi|fl)")
_CASELESS = re.compile(r"\(\?[a-z]*i[a-z-]*([:)])")


def multi_char_fold(regex: str) -> str | None:
    """The first case-insensitive part of `regex` (`(?i:...)`, or all after `(?i)`) where a pair
    of letters (groups aside) may match one character in Oniguruma: "(?i:ss)" matches "ß"."""
    for flag in _CASELESS.finditer(regex):
        start, depth, i = flag.end(), 1, flag.end()
        while i < len(regex) and (depth or flag.group(1) == ")"):
            depth += {"(": 1, ")": -1}.get(regex[i], 0) if regex[i - 1] != "\\" else 0
            if depth == 0 and flag.group(1) == ":":
                break
            i += 1
        part = re.sub(r"\(\?:|[()]", "", regex[start:i])
        if _FOLDED_PAIRS.search(part):
            return regex[flag.start() : i + 1][:40]
    return None


def oniguruma_only(regex: str, anchors: bool = True) -> str | None:
    """The first construct whose meaning is Oniguruma's own: `^` and `$` are line anchors there
    (Ruby syntax: "x$" matches before every newline), `X{1,3}+` is `(?:X{1,3})+` (no possessive),
    `&&` in a class an intersection and `[` in a class a nested class (literals for us), and
    `(?i:ss)` also matches "ß" (multi_char_fold). The
    named patterns' `\\s++$` is safe (anchors=False): the possessive run takes every newline."""
    depth, i = 0, 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 1
        elif depth and (ch == "[" or regex.startswith("&&", i)):
            return f"{regex[i : i + 2] if ch == '&' else ch!r} in a character class"
        elif ch == "[":
            depth, i = 1, i + (2 if regex.startswith("[^", i) else 1)
            i += regex[i : i + 1] == "]"  # a ] first in a class is a literal
            continue
        elif ch == "]" and depth:
            depth = 0
        elif ch in "^$" and not depth and anchors:
            return f"the anchor {ch!r}"
        elif ch == "{" and not depth and (interval := re.match(r"\{\d*,?\d*\}\+", regex[i:])):
            return f"{interval.group()!r} (a repeated interval; a possessive one is (?>X{interval.group()[:-1]}))"
        i += 1
    folded = multi_char_fold(regex)
    return (
        folded
        and f"{folded!r} (case-insensitive letters there also match the one character they fold to, 'ß' for 'ss')"
    )

"""A custom pat_str in tokenizer.compat means what it means to tiktoken's Rust regex (through
fancy-regex): Unicode 16.0 classes, `$` as the end of the text, whole matches where the pattern
has groups, Rust's escapes (\\x{..}, \\z, \\e, \\h, \\N, scripts), word edges, look-arounds and
case-insensitive matching; what it cannot reproduce exactly is refused with a ValueError,
never split otherwise. Each is compared with tiktoken itself, on examples and with hypothesis.
"""

from __future__ import annotations

import functools

import pytest
import tiktoken
import tiktoken.model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenizer.compat as compat
from tokenizer import Tokenizer, get_encoding, train


def test_a_custom_pattern_uses_tiktokens_unicode():
    """tiktoken's Rust regex is at Unicode 16.0 for any pat_str: U+0558 (a letter since 17.0) is
    no letter there, so "a\u0558b" is three pieces and the token trained on it as one is not used."""
    pattern = r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+"
    # training (the regex package's newer tables) says so: tiktoken splits 'a' off 'a\u0558b'
    with pytest.warns(
        UserWarning, match=r"tiktoken reads this split regex otherwise .* splits off 'a' where"
    ):
        ranks = train("a\u0558b " * 50, 270, regex=pattern).mergeable_ranks
    ours = compat.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    theirs = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    for text in ("a\u0558b", "x\u05c8y 1\U00011de02 \u20c1\u20c1", "a\u0558b " * 3):
        assert ours.encode(text) == theirs.encode(text)
    assert len(ours.encode("a\u0558b")) == 4


def test_dollar_is_the_end_of_the_text_as_in_rust():
    """re's $ also matches before a final newline: "hello" alone, and the newline was dropped."""
    ranks = get_encoding("cl100k_base").mergeable_ranks
    for pattern, text in [
        (r"\w+$|\w+\s|.", "hello\n"),
        (r"[a-z]+$|\s+|[^\s]+", "ab\n"),
        (r"\s+$|\S+|\s", "a \n"),
    ]:
        ours = compat.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        theirs = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        assert ours.encode(text) == theirs.encode(text), pattern


@pytest.mark.parametrize("pattern", [r"'(s)|\S+|\s+", r"(\w)+|\s", r"(a)(b)|.", r"(\p{L})(\p{N})?|[\s\S]"])
def test_capturing_groups_split_into_whole_matches_as_in_rust(pattern):
    """findall gives a pattern's groups, not its matches: "'(s)|..." encoded "hello world's ab"
    to [] (every match's text outside its group dropped), and two groups crashed. tiktoken keeps
    whole matches; so does a Tokenizer built with such a pattern, with either Unicode tables."""
    ranks = get_encoding("cl100k_base").mergeable_ranks
    ours = compat.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    theirs = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    for text in ("hello world's ab", "a\U0001f600\U0001f600b1 \U0001d400 1 ab"):  # astral: stand-ins
        assert ours.encode(text) == theirs.encode(text)
        assert Tokenizer(ranks, pattern).encode(text) == theirs.encode(text)  # the regex package's tables


@pytest.mark.parametrize(
    "pattern",
    [
        r"[\p{L}&&\p{Ll}]+|.",
        r"[a-c--b]+|.",
        r"[a--b]+|.",
        r"[ac--b]+|.",
        r"[+--/]+|.",
        r"[a[b]]+|.",
        r"(?m)\w+$|.",
    ],
)
def test_rust_only_syntax_is_refused_not_misread(pattern):
    with pytest.raises(ValueError, match="Rust's set syntax|multi-line flag"):
        compat.Encoding(
            "t", pat_str=pattern, mergeable_ranks=get_encoding("gpt2").mergeable_ranks, special_tokens={}
        )


# Escapes tiktoken's engine (Rust's regex, through fancy-regex) reads otherwise than the `regex`
# package: each was refused, and \N{NAME} was read as a named character (tiktoken: \N is any
# character but a newline), splitting differently without a word.
RUST_ESCAPE_PATTERNS = [
    r"\x{41}+|\u{4E16}+|\U{1F642}+|\S|\s+",
    r"[\x{41}-\x{43}\u{e9}]+|\S|\s+",
    r"[a-z]+\z|\S|\s+",
    r"\e+|\S|\s+",
    r"\h+|\H+",
    r"[\h_]+|[^\h_]+",
    r"\N+|\n",
    r"\p{ASCII}+|\P{ASCII}+",
    r"\p{Any}{1,3}",
    r"(?<word>\p{L}+)|(?<rest>\P{L})",
    r"\p{Han}+|\p{Hiragana}+|\p{sc=Latin}+|\p{Script=Greek}+|\P{Han}",  # scripts: Unicode 16.0
    r"[\p{Han}\p{Greek}]+|[^\p{Han}\s]+|\s+",
]


RUST_ESCAPE_ALPHABET = (
    "AaBbCcfFgGxz09_\x1b \n\t\r\u00e9\u4e16\U0001f642\U0001d400\u3042\u03b1\u0342\U00020000\u3001\u31ef"
)


@pytest.mark.parametrize("pattern", RUST_ESCAPE_PATTERNS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=RUST_ESCAPE_ALPHABET, min_size=1, max_size=30))
def test_rust_escapes_split_as_in_tiktoken(pattern, text):
    ours, theirs = _both(pattern)
    assert ours.encode(text) == theirs.encode(text)


@functools.cache
def _refused_by_both(pattern: str, match: str) -> None:
    """tiktoken refuses the pattern, and so does compat, with a message matching `match`."""
    ranks = get_encoding("gpt2").mergeable_ranks
    with pytest.raises(ValueError):
        tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    with pytest.raises(ValueError, match=match):
        compat.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def _both(pattern: str) -> tuple[compat.Encoding, tiktoken.Encoding]:
    """Ours and tiktoken's encoding of cl100k's ranks split by `pattern` (built once: ~0.2 s)."""
    ranks = get_encoding("cl100k_base").mergeable_ranks
    return tuple(
        make("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        for make in (compat.Encoding, tiktoken.Encoding)
    )


@pytest.mark.parametrize(
    "pattern", [r"\N{LATIN SMALL LETTER A}|\S|\s+", r"\x{110000}|.", r"\u{D800}|.", r"\x{}|.", r"[^\N]|\n"]
)
def test_rust_escapes_that_would_be_misread_are_refused(pattern):
    with pytest.raises(
        ValueError,
        match=r"\\N\{\.\.\.\} is no character name|hex digits|Unicode scalar|cannot stand in a class",
    ):
        compat.Encoding(
            "t", pat_str=pattern, mergeable_ranks=get_encoding("gpt2").mergeable_ranks, special_tokens={}
        )


@pytest.mark.parametrize("pat_str", ["gpt2", "none", "cl100k_base", "gtp4", "ab"])
def test_a_pat_str_that_is_a_bare_word_is_a_regex_as_in_tiktoken(pat_str):
    """tiktoken's pat_str is always a regex: pat_str="gpt2" matches the text "gpt2". Ours took
    it for our pattern name and split every word; "gtp4" raised. Both now match as tiktoken."""
    ranks = get_encoding("gpt2").mergeable_ranks
    ours = compat.Encoding(name="x", pat_str=pat_str, mergeable_ranks=ranks, special_tokens={})
    ref = tiktoken.Encoding(name="x", pat_str=pat_str, mergeable_ranks=ranks, special_tokens={})
    text = "hello gpt2 none cl100k_base gtp4 ab world"
    assert ours.encode(text) == ref.encode(text)


@pytest.mark.parametrize("pattern", [r"\b+|.", r"\B+|.", r"\w+|\B+|."])
def test_a_repeated_assertion_is_a_value_error(pattern):
    """pat_str '\\b+|.' raised re.error (a traceback, not the ValueError every other bad pattern
    gives): our parser took it, re's did not. (tiktoken itself panics on '\\b+'.)"""
    with pytest.raises(ValueError, match="invalid split pattern"):
        compat.Encoding(
            "t", pat_str=pattern, mergeable_ranks=get_encoding("gpt2").mergeable_ranks, special_tokens={}
        )


@pytest.mark.parametrize("pattern", [r"[\w-~]+|.", r"[\D\s-&]+|.", r"[^\p{Lu}-:]+|."])
def test_a_range_from_a_class_escape_is_refused_as_tiktoken_refuses_it(pattern):
    """tiktoken's Rust regex refuses '[\\w-~]'; ours read it as \\w, '-' and '~' and encoded."""
    _refused_by_both(pattern, "a range from a class escape")


@pytest.mark.parametrize("pattern", [r"\0|.", r"\012|.", r"\141|.", r"[\0a]+|.", r"[\1]|(a)"])
def test_octal_escapes_are_refused_as_tiktoken_reads_them_as_backreferences(pattern):
    """tiktoken's Rust regex has no octal escapes: '\\141' is group 141 there, '\\0' group 0, and
    both are refused. Ours read them as `regex` does ('a', NUL) and encoded. (It also refuses
    '(a)\\01', group 1 to tiktoken: a typo for \\1 or an octal escape, so we say so.)"""
    ranks = get_encoding("gpt2").mergeable_ranks
    with pytest.raises(ValueError):
        tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    for refused in (pattern, r"(a)\01|."):
        with pytest.raises(ValueError, match="backreference|bad escape"):
            compat.Encoding("t", pat_str=refused, mergeable_ranks=ranks, special_tokens={})


@pytest.mark.parametrize("text", ["aa", "a a", "ab ba aa", "aaaa"])
def test_a_backreference_splits_as_in_tiktoken(text):
    pattern = r"(a)\1|\S|\s+"
    ranks = get_encoding("gpt2").mergeable_ranks
    theirs = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    ours = compat.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    assert ours.encode(text) == theirs.encode(text)


WORD_EDGE_PATTERNS = [
    r"\<\w|\S|\s+",
    r"\w\>|\S|\s+",
    r"\b{start}\w+|\S|\s+",
    r"\w+\b{end}|\S|\s+",
    r"\b{start-half}\w+|\S|\s+",
    r"\w+\b{end-half}|\S|\s+",
    r"\<{2}\w|\S|\s+",
    r"(?:\<\w)+|\S|\s+",
]


@pytest.mark.parametrize("pattern", WORD_EDGE_PATTERNS)
@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="ab_1 .-\u00e9\u4e16\U0001f642\u0301\n", min_size=1, max_size=20))
def test_rust_word_edges_split_as_in_tiktoken(pattern, text):
    """tiktoken's engine reads '\\<', '\\>' and '\\b{start}' (and end, start-half, end-half) as word
    boundaries; ours read a literal '<' or '>', and '\\b' then the text '{start}'."""
    ours, theirs = _both(pattern)
    assert ours.encode(text) == theirs.encode(text)


@pytest.mark.parametrize("pattern", [r"\b{wb}|.", r"\b{ start }|.", r"\B{start}|.", r"\b{Start}|."])
def test_word_edges_tiktoken_refuses_are_refused(pattern):
    _refused_by_both(pattern, "no assertion of tiktoken's engine")


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?=a)+\w|.",
        r"(?!a){2}\w|.",
        r"(?<=a)?\w|.",
        r"(?<!a)*\w|.",
        r"(?:(?=a)){1}\w|.",
        r"(?i:(?#note)(?=a)(?#note)){3,}+\w|.",
    ],
)
def test_a_repeated_lookaround_is_refused_as_tiktoken_refuses_it(pattern):
    """tiktoken's engine refuses a quantifier on a lookaround ("Target of repeat operator is
    invalid"); ours repeated the assertion, as `regex` does, and encoded."""
    _refused_by_both(pattern, "a quantifier on a lookaround")


@pytest.mark.parametrize("pattern", [r"(?:(?=a)\w)+|.", r"((?=a))+\w|.", r"(?:(?=a)|(?=b))+\w|."])
def test_a_repeated_group_around_a_lookaround_splits_as_in_tiktoken(pattern):
    ours, theirs = _both(pattern)
    for text in ("ab ba aab", "bbb a"):
        assert ours.encode(text) == theirs.encode(text)


@pytest.mark.parametrize(
    "pattern", [r"\p{L&}+|.", r"[\P{gc=L&}]+|.", r"\p{Surrogate}|.", r"[^\p{Surrogate}]+|."]
)
def test_category_names_tiktoken_does_not_know_are_refused(pattern):
    """tiktoken's Rust regex knows no general category 'L&' or 'Surrogate' (it takes LC and Cs);
    ours took the `regex` package's aliases and encoded."""
    _refused_by_both(pattern, "tiktoken's engine has no property")


@pytest.mark.parametrize(
    "pattern", [r"(?i)i+", r"(?i:I)+", r"(?i)[i]+", r"(?i)[I]+", r"(?i)[^i]+", r"(?i)[h-jI]+"]
)
def test_case_insensitive_i_matches_as_in_tiktoken(pattern):
    """tiktoken's engine folds by simple case folding: (?i)I matches I and i, never dotless ı or
    dotted İ. Ours matched them as the regex package does ('(?i-s:I{1,3})' took 'ı' in 'İı').
    Text no alternative matches is dropped, so a character matched by one side only shows."""
    ours, theirs = _both(pattern)
    for text in ("İı iI", "ıIi İiI hij", "Kk\u212a ſs"):
        assert ours.encode(text) == theirs.encode(text)


@pytest.mark.parametrize(
    "pattern", [r"(?i)[\s\S]", r"(?is)9{2}|[\s\S]", r"(?i)[\S]+", r"(?i)[^\d]+", r"(?i)[^I\d]+", r"(?i)[\H]+"]
)
def test_case_insensitive_classes_holding_dotted_and_dotless_i_match_as_in_tiktoken(pattern):
    """'(?is)9{2}|[\\s\\S]' dropped 'İ' and 'ı' (the fix for (?i)i took them out of every
    case-insensitive class that holds i, even one that holds them too)."""
    ours, theirs = _both(pattern)
    for text in ("İı iI", "Kk ſ İı iI iİı hH 12"):
        assert ours.encode(text) == theirs.encode(text)

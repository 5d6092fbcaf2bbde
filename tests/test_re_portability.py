"""_re_portability: the warnings that a custom split regex runs otherwise in tiktoken (or not at
all there), checked against tiktoken itself."""

from __future__ import annotations

import pytest

from tokenizer import Tokenizer, get_encoding, patterns
from tokenizer._re_portability import first_difference, tiktoken_warnings
from tokenizer.regex_check import check_split_regex

tiktoken = pytest.importorskip("tiktoken")

READ_OTHERWISE = "tiktoken reads this split regex otherwise"


def _tiktoken_ids(regex: str, text: str) -> list[int]:
    ranks = get_encoding("cl100k_base").mergeable_ranks
    return tiktoken.Encoding("t", pat_str=regex, mergeable_ranks=ranks, special_tokens={}).encode(text)


def _our_ids(regex: str, text: str) -> list[int]:
    return Tokenizer(get_encoding("cl100k_base").mergeable_ranks, regex).encode(text)


@pytest.mark.parametrize(
    "regex, text, here, there",
    [
        # `$` before a final newline (Python) or only at the very end (Rust)
        (r"\p{L}+|[ ]+$|\s+|\S", "ab  \n", "  ", "  \n"),
        # \h: horizontal space in the regex package, a hex digit in tiktoken's fancy-regex
        (r"\h+|\S+|\s", "log  wow", "  ", " "),
    ],
)
def test_a_regex_tiktoken_reads_otherwise_is_warned_of_with_where(regex, text, here, there):
    """Such a regex trained fine, and the saved tokenizer gave other ids in tiktoken, silently."""
    if not patterns.regex_importable():
        pytest.skip("without the regex package, training reads the regex as tiktoken does")
    assert _tiktoken_ids(regex, text) != _our_ids(regex, text)  # the peer itself disagrees
    (warning,) = [w for w in check_split_regex(regex, sample=text) if "tiktoken" in w]
    assert warning.startswith(READ_OTHERWISE)
    assert f"splits off {there!r} where training splits off {here!r}" in warning


def test_a_regex_tiktoken_reads_alike_gets_no_tiktoken_warning():
    regex = r" ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
    text = "Hello, world! It's 2024.\n\t  naïve 日本語 🙂 ÅNGSTRÖM straße\n\n"
    assert _tiktoken_ids(regex, text) == _our_ids(regex, text)
    assert not [w for w in check_split_regex(regex, sample=text) if "tiktoken" in w]


def test_a_regex_whose_tiktoken_reading_is_unknown_says_so_not_that_it_fails():
    """Binary properties: tiktoken's Rust regex knows \\p{Emoji}; we do not reproduce its table."""
    (warning,) = tiktoken_warnings(r"\p{Emoji}+|\s+|\S", None, "x")
    assert warning.startswith("tiktoken may refuse this split regex as its pat_str, or read it otherwise")
    assert "check a saved tokenizer in tiktoken" in warning


def test_first_difference():
    assert first_difference(["ab", " c"], ["ab", " c"]) is None
    assert first_difference(["ab", "  ", "\n"], ["ab", "  \n"]) == (2, "  ", "  \n")
    assert first_difference(["a", "b"], ["a"]) == (1, "b", "")  # a chunk one side skipped
    assert first_difference([], ["x"]) == (0, "", "x")

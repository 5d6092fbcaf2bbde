"""The encoder's fast paths give tiktoken's ids: long chunks cut into segments, runs of one letter.

Inputs that defeat the pattern's splitting (no spaces) become one long chunk, which the
encoder cuts at proved-safe positions (`_safe_cuts`), merges a run of one letter level by
level (`_bpe_levels`) and anything else with the heap. Every path must equal tiktoken.
"""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracles import tiktoken_reference
from tokenizer import Tokenizer, get_encoding
from tokenizer._bpe import HEAP_THRESHOLD, _bpe_heap, _bpe_levels, _bpe_long, _bpe_scan, _safe_cuts

ENCODINGS = ["cl100k_base", "o200k_base"]
_REFS = {name: tiktoken_reference(name) for name in ENCODINGS}
SIZE = 200_000  # characters: large enough for many segments, small enough for a fast test


def _adversarial(kind: str, size: int) -> str:
    rng = random.Random(kind)
    if kind == "one letter":
        return "a" * size
    if kind == "letters":
        return "".join(rng.choices(string.ascii_lowercase, k=size))
    if kind == "mixed case":
        return "".join(rng.choices(string.ascii_letters, k=size))
    if kind == "cjk":
        return "".join(map(chr, rng.choices(range(0x4E00, 0x9FA6), k=size // 3)))
    if kind == "runs":  # long runs of a few letters, then letters: level mode, cuts and heap together
        return "".join(
            rng.choice("ab") * rng.randrange(1, 3000) + rng.choice(string.ascii_lowercase) for _ in range(150)
        )
    raise ValueError(kind)


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("kind", ["one letter", "letters", "mixed case", "cjk", "runs"])
def test_adversarial_inputs_equal_tiktoken(name, kind):
    text = _adversarial(kind, SIZE)
    assert get_encoding(name).encode_ordinary(text) == _REFS[name].encode_ordinary(text)


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("length", [HEAP_THRESHOLD + 1, 1000, 4097, 65_537])
def test_runs_of_every_length_equal_tiktoken(name, length):
    """The tail of a run depends on its length modulo the longest run token."""
    for letter in "a0 -=\u00e9":
        text = letter * length
        assert get_encoding(name).encode_ordinary(text) == _REFS[name].encode_ordinary(text), letter


def test_no_english_words_without_spaces_equal_tiktoken():
    words = random.Random(1).choices(
        ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog"], k=40_000
    )
    text = "".join(words)
    for name in ENCODINGS:
        assert get_encoding(name).encode_ordinary(text) == _REFS[name].encode_ordinary(text)


_RANKS = get_encoding("cl100k_base").mergeable_ranks
_LONGEST = max(map(len, _RANKS))
_bytes = st.one_of(
    st.binary(min_size=2, max_size=400),
    st.text(alphabet="abc é中", min_size=2, max_size=300).map(str.encode),
    st.lists(st.sampled_from([b"a", b"ab", b"the", b" ", b"\xe4\xb8\xad"]), min_size=2, max_size=200).map(
        b"".join
    ),
)


@settings(max_examples=300, deadline=None)
@given(_bytes)
def test_long_chunk_paths_agree_with_the_scan(piece):
    """Each long-chunk path, forced on short random bytes, equals the plain scan."""
    expected = _bpe_scan(piece, _RANKS)
    assert _bpe_heap(piece, _RANKS) == expected
    assert _bpe_long(piece, _RANKS, _LONGEST) == expected
    levels = _bpe_levels(piece, _RANKS)
    assert levels is None or levels == expected


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=60),
    st.binary(min_size=2, max_size=300),
)
def test_long_chunk_paths_agree_on_random_merges(merges, piece):
    """Any ranks, not only trained ones: merges that make duplicate or out-of-order tokens too."""
    ranks = Tokenizer.from_merges(
        [(a % (256 + i), b % (256 + i)) for i, (a, b) in enumerate(merges)]
    ).mergeable_ranks
    expected = _bpe_scan(piece, ranks)
    assert _bpe_heap(piece, ranks) == expected
    assert _bpe_long(piece, ranks, max(map(len, ranks))) == expected
    levels = _bpe_levels(piece, ranks)
    assert levels is None or levels == expected


def test_cuts_are_found_in_text_without_spaces():
    """The segmentation must actually happen (else the long path silently degrades to the heap)."""
    piece = _adversarial("cjk", 30_000).encode()
    cuts = _safe_cuts(piece, _RANKS, _LONGEST)
    assert cuts[0] == 0 and cuts[-1] == len(piece)
    assert len(cuts) > len(piece) // 200
    assert _bpe_levels(b"a" * 5000, _RANKS) is not None


def test_a_segment_that_is_an_unreachable_token_still_merges():
    """Between two safe cuts lies a 16-byte token the merges never reach ("hi" merges before
    "gh" and "ij"): the long-chunk path must merge it as the scan does, not look it up."""
    ranks = {bytes([b]): b for b in range(256)}
    for token in [b"hi", b"ab", b"cd", b"ef", b"gh", b"ij", b"kl", b"mn", b"op", b"abcd", b"efgh"]:
        ranks[token] = len(ranks)
    for token in [b"ijkl", b"mnop", b"abcdefgh", b"ijklmnop", b"abcdefghijklmnop"]:
        ranks[token] = len(ranks)
    piece = b"z" * 32 + b"abcdefghijklmnop" + b"z" * 100
    assert len(piece) > HEAP_THRESHOLD
    expected = _bpe_scan(piece, ranks)
    assert ranks[b"abcdefghijklmnop"] not in expected
    assert _bpe_long(piece, ranks, max(map(len, ranks))) == expected

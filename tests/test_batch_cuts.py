"""Safe cuts found with numpy (`tokenizer._batch_cuts`): every cut passes the pure-Python proof
(`_bpe._cut_is_safe` between its neighbours), and long chunks encode to tiktoken's ids.

Inputs are what the pattern cannot cut: random CJK, letters, punctuation runs (o200k has
tokens longer than MATRIX_WIDTH there, checked by the Python proof), real text with its
spaces removed, and random bytes merged by tokenizers trained here.
"""

from __future__ import annotations

import random
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import corpus_text
from tests.oracles import tiktoken_reference
from tokenizer import Tokenizer, _batch, get_encoding
from tokenizer._batch_cuts import safe_cuts
from tokenizer._bpe import LongChunkHelp, _bpe_heap, _bpe_long, _cut_is_safe
from tokenizer.train import train


def _text(kind: str, size: int) -> str:
    rng = random.Random(kind)
    if kind == "cjk":
        return "".join(map(chr, rng.choices(range(0x4E00, 0x9FA6), k=size // 3)))
    if kind == "letters":
        return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=size))
    if kind == "punctuation":
        return "".join(rng.choice("=-_*#/.") * rng.randrange(1, 300) for _ in range(size // 150))
    if kind == "no spaces":
        return "".join(corpus_text("udhr_sample.txt", size).split())
    raise ValueError(kind)


def _assert_proved(piece: bytes, cuts: list[int], ranks: dict[bytes, int], longest: int) -> None:
    assert cuts[0] == 0 and cuts[-1] == len(piece) and cuts == sorted(set(cuts))
    for a, p, b in zip(cuts, cuts[1:], cuts[2:], strict=False):
        assert _cut_is_safe(piece, a, p, b, ranks, longest), (a, p, b)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("kind", ["cjk", "letters", "punctuation", "no spaces"])
def test_every_cut_passes_the_python_proof(name, kind):
    tok = get_encoding(name)
    piece = _text(kind, 60_000).encode()
    longest = tok._max_token_length()
    cuts = safe_cuts(piece, tok.mergeable_ranks, longest, tok.pair_table())
    _assert_proved(piece, cuts, tok.mergeable_ranks, longest)
    if kind in ("cjk", "no spaces"):
        assert len(cuts) > len(piece) // 100  # real cuts, not one whole segment


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("kind", ["cjk", "letters", "punctuation", "no spaces"])
def test_long_chunks_with_numpy_cuts_equal_tiktoken(name, kind, monkeypatch):
    monkeypatch.setattr(_batch, "BATCH_MIN_CHUNKS", 1)
    monkeypatch.setattr(_batch, "TABLE_BYTES_PER_RANK", 0)
    monkeypatch.delenv(_batch.PURE_PYTHON_ENV, raising=False)
    ref = get_encoding(name)
    tok = Tokenizer(ref.mergeable_ranks, ref.pattern, name=name)
    text = _text(kind, 200_000)
    assert tok.encode_ordinary(text) == tiktoken_reference(name).encode_ordinary(text)
    assert tok._pairs is not None or tok._narrow is not None  # a table found the cuts


_TRAINED: list[Tokenizer] = []


def _trained() -> Tokenizer:
    if not _TRAINED:
        text = corpus_text("udhr_sample.txt", 60_000) + corpus_text("code_python.txt", 30_000)
        _TRAINED.append(train(text, 1500, min_frequency=1, workers=1))
    return _TRAINED[0]


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=200, max_size=3000), st.sampled_from(["ab", "abc", "a b", "xyzé"]))
def test_random_bytes_cuts_are_proved_and_merge_like_the_heap(noise, alphabet):
    """Bytes of any kind (not UTF-8 either) mixed with runs of a small alphabet."""
    tok = _trained()
    ranks, longest = tok.mergeable_ranks, tok._max_token_length()
    piece = b"".join(noise[i : i + 7] + alphabet.encode() * (i % 13) for i in range(0, len(noise), 7))
    cuts = safe_cuts(piece, ranks, longest, tok.pair_table())
    _assert_proved(piece, cuts, ranks, longest)
    numpy_cuts = LongChunkHelp(
        cuts=lambda p: safe_cuts(p, ranks, longest, tok.pair_table()), merge=lambda _: None
    )
    ids = _bpe_long(piece, ranks, longest, numpy_cuts)
    assert ids == _bpe_heap(piece, ranks)


def test_segments_between_the_cuts_rejoin_the_piece():
    tok = get_encoding("o200k_base")
    piece = _text("cjk", 30_000).encode()
    cuts = safe_cuts(piece, tok.mergeable_ranks, tok._max_token_length(), tok.pair_table())
    assert b"".join(piece[a:b] for a, b in pairwise(cuts)) == piece

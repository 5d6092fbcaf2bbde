"""tokenizer.compat takes every argument tiktoken takes, in every form, and refuses the rest as
tiktoken refuses it (the same exception type): numpy arrays and integers as ids, bytes-like
arguments, allowed_special and disallowed_special as sets, lists, dicts or None, ids in the
constructor, text with lone surrogates. Code run against compat must not break under tiktoken.

The oracle is tiktoken itself (tests/oracles.py's `tiktoken_reference`).
"""

from __future__ import annotations

import numpy as np
import pytest
import tiktoken
import tiktoken.model

import tokenizer.compat as compat
from tests.oracles import tiktoken_reference


def test_encode_to_numpy():
    ours, theirs = compat.get_encoding("o200k_base"), tiktoken_reference("o200k_base")
    text = "numpy <|endoftext|> array"
    got = ours.encode_to_numpy(text, allowed_special="all")
    assert got.dtype == np.uint32
    assert got.tolist() == theirs.encode_to_numpy(text, allowed_special="all").tolist()


@pytest.mark.parametrize("call", ["encode_with_unstable", "encode_to_numpy"])
@pytest.mark.parametrize("text", ["ab\ud800cd <|endoftext|>", "\udfff hello", "x\ud800"])
def test_lone_surrogates_raise_where_tiktoken_raises(call, text):
    """encode repairs a lone surrogate; these two hand the text to tiktoken's Rust as it is."""
    ours, theirs = compat.get_encoding("cl100k_base"), tiktoken_reference("cl100k_base")
    with pytest.raises(UnicodeEncodeError) as expected:
        getattr(theirs, call)(text, allowed_special="all")
    with pytest.raises(UnicodeEncodeError) as raised:
        getattr(ours, call)(text, allowed_special="all")
    assert str(raised.value) == str(expected.value)
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")


def test_numpy_and_other_integer_ids_decode_like_tiktoken():
    """decode(encode_to_numpy(text)) raised TypeError (ids must be int, not uint32): tiktoken's Rust
    reads any integer, numpy's and bools too; an id outside u32 is an OverflowError there."""
    ours, theirs = compat.get_encoding("cl100k_base"), tiktoken_reference("cl100k_base")
    ids = ours.encode_to_numpy("hello world")
    for tokens in (ids, list(ids), ids.astype(np.int64), [True, np.int32(15339)]):
        for call in ("decode", "decode_bytes", "decode_tokens_bytes", "decode_with_offsets"):
            assert getattr(ours, call)(tokens) == getattr(theirs, call)(tokens), call
        assert ours.decode_batch([tokens]) == theirs.decode_batch([tokens])
    assert ours.decode_single_token_bytes(np.uint32(15339)) == theirs.decode_single_token_bytes(
        np.uint32(15339)
    )
    for bad, error in [
        ([-1], OverflowError),
        ([1 << 32], OverflowError),
        ([1.0], TypeError),
        (["1"], TypeError),
    ]:
        with pytest.raises(error):
            theirs.decode(bad)
        with pytest.raises(error):
            ours.decode(bad)
    with pytest.raises(OverflowError):
        ours.decode_single_token_bytes(-1)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="Unknown encoding"):
        compat.get_encoding("cl200k_base")
    with pytest.raises(ValueError, match="Expected a string"):
        compat.get_encoding(b"gpt2")  # type: ignore[arg-type]
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(ValueError, match="explicit_n_vocab"):
        compat.Encoding("x", pat_str="gpt2", mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=300)
    with pytest.raises(ValueError, match="share a rank"):
        compat.Encoding("x", pat_str="gpt2", mergeable_ranks={**ranks, b"ab": 3}, special_tokens={})
    with pytest.raises(TypeError):
        compat.get_encoding("gpt2").is_special_token("<|endoftext|>")  # type: ignore[arg-type]


@pytest.mark.parametrize("call", ["encode_single_token", "_encode_single_piece", "_encode_bytes"])
@pytest.mark.parametrize("bad", [None, 5, memoryview(b"ab"), bytearray(b"ab"), ["ab"], "ab"])
def test_bytes_arguments_refused_as_tiktoken_refuses_them(call, bad):
    """encode_single_token(None) and _encode_bytes("ab") raised AttributeError ('NoneType' object
    has no attribute 'decode'), and encode_single_token(memoryview(b"ab")) answered 370 where
    tiktoken's Rust, which reads `bytes` alone, raises TypeError; a str is text to the first two."""
    ours, theirs = compat.get_encoding("cl100k_base"), tiktoken_reference("cl100k_base")
    try:
        expected = getattr(theirs, call)(bad)
    except TypeError:
        with pytest.raises(TypeError, match="is not an instance of 'bytes'"):
            getattr(ours, call)(bad)
    else:
        assert getattr(ours, call)(bad) == expected


@pytest.mark.parametrize(
    "make",
    [
        lambda: {1, 2},
        lambda: frozenset({1}),
        lambda: {1: 0, 2: 0},
        lambda: {1: 0}.keys(),
        lambda: iter([1, 2]),
        lambda: (i for i in [1, 2]),
        lambda: [1, 2],
        lambda: (1, 2),
        lambda: range(1, 3),
        lambda: np.array([1, 2]),
        lambda: b"\x01\x02",
    ],
)
@pytest.mark.parametrize("call", ["decode", "decode_bytes", "decode_tokens_bytes", "decode_with_offsets"])
def test_ids_that_are_not_a_sequence_are_refused_where_tiktoken_refuses_them(call, make):
    """decode({1, 2}), decode({1: 0}) and decode(iter(ids)) answered where tiktoken's Rust raises
    TypeError (it reads ids only from a sequence): code run here broke under tiktoken, and a set
    decoded in its own order. decode_tokens_bytes, a Python loop in tiktoken, takes any iterable."""
    ours, theirs = compat.get_encoding("cl100k_base"), tiktoken_reference("cl100k_base")
    try:
        expected = getattr(theirs, call)(make())
    except TypeError:
        with pytest.raises(TypeError, match="is not an instance of 'Sequence'"):
            getattr(ours, call)(make())
        if call == "decode":
            with pytest.raises(TypeError):
                ours.decode_batch([make()])
    else:
        assert getattr(ours, call)(make()) == expected


ALLOWED_FORMS = [
    "all",
    set(),
    frozenset({"<|endoftext|>"}),
    {"<|endoftext|>", "not a special token"},
    [],
    (),
    ["<|endoftext|>"],
    {"<|endoftext|>": 0},
    {"<|endoftext|>": 0}.keys(),
    {5},
    {b"<|endoftext|>"},
    None,
]


DISALLOWED_FORMS = ["all", (), [], None, {"<|endoftext|>"}, frozenset({"<|fim_prefix|>"}), ["<|endoftext|>"]]


@pytest.mark.parametrize("allowed", ALLOWED_FORMS, ids=repr)
@pytest.mark.parametrize("disallowed", DISALLOWED_FORMS, ids=repr)
@pytest.mark.parametrize("text", ["hello", "hello <|endoftext|>", "<|fim_prefix|> x"])
def test_allowed_special_in_every_form_as_tiktoken_takes_it(text, allowed, disallowed):
    """encode(text, allowed_special=["<|endoftext|>"]) (a list, a tuple, a dict, a set of bytes)
    answered where tiktoken raises TypeError (its Rust reads a set of str alone), so code run
    here broke under tiktoken; the error types now come in tiktoken's order (its `set - allowed`,
    then the disallowed check's ValueError, then the set check) for encode and its variants."""
    ours, theirs = compat.get_encoding("cl100k_base"), tiktoken_reference("cl100k_base")
    kwargs = {"allowed_special": allowed, "disallowed_special": disallowed}
    for call in ("encode", "encode_to_numpy", "encode_with_unstable", "encode_batch"):
        arg = [text] if call == "encode_batch" else text
        try:
            expected = getattr(theirs, call)(arg, **kwargs)
        except (TypeError, ValueError) as e:
            with pytest.raises(type(e)):
                getattr(ours, call)(arg, **kwargs)
            continue
        got = getattr(ours, call)(arg, **kwargs)
        if call == "encode_to_numpy":
            got, expected = got.tolist(), expected.tolist()
        if call == "encode_with_unstable":
            got, expected = (got[0], sorted(got[1])), (expected[0], sorted(expected[1]))
        assert got == expected, call


@pytest.mark.parametrize(
    "ranks, special",
    [
        ({}, {"<|x|>": -1}),
        ({}, {"<|x|>": 1.5}),
        ({}, {"<|x|>": 2**40}),
        ({}, {"<|x|>": np.int64(300)}),
        ({}, {b"<|x|>": 300}),
        ({b"ab": -5}, {}),
        ({b"ab": 1.5}, {}),
        ({b"ab": 2**40}, {}),
        ({b"ab": np.int64(300)}, {}),
        ({"ab": 300}, {}),
    ],
)
def test_constructor_ids_as_tiktoken_reads_them(ranks, special):
    """Encoding(..., special_tokens={"<|x|>": -1}) was built and encode gave [97, 98, 32, -1] (1.5,
    2**40, np.int64(300) likewise), where tiktoken's Rust raises OverflowError or TypeError, or
    reads np.int64(300) as 300; a bytes special token raised AttributeError."""
    args = {
        "pat_str": r"\S+|\s+",
        "mergeable_ranks": {**{bytes([b]): b for b in range(256)}, **ranks},
        "special_tokens": special,
    }
    try:
        theirs = tiktoken.Encoding("x", **args)
    except (TypeError, OverflowError) as e:
        with pytest.raises(type(e)):
            compat.Encoding("x", **args)
        return
    ours = compat.Encoding("x", **args)
    text = "ab <|x|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert set(map(type, ours.encode(text, allowed_special="all"))) == {int}

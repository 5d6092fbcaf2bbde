"""tokenizer.compat answers exactly what real tiktoken answers: ids, bytes, offsets, errors,
pickles and the model -> encoding table, for every named encoding.

The oracle is tiktoken itself: each encoding is built by tiktoken's own constructor
(tiktoken_ext.openai_public, so its pattern and special tokens are tiktoken's), with only the
rank loaders answering from our shipped ranks instead of downloading. tiktoken's own suite
runs against compat in tests/test_compat_tiktoken_suite.py.
"""

from __future__ import annotations

import functools
import pickle
from unittest import mock

import numpy as np
import pytest
import tiktoken
import tiktoken.model
import tiktoken_ext.openai_public as openai_public
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenizer.compat as compat
from tests.helpers import corpus_text
from tokenizer import Tokenizer, get_encoding, train

NAMES = compat.list_encoding_names()
RANKS_OF = {"p50k_edit": "p50k_base", "o200k_harmony": "o200k_base"}  # encodings sharing ranks
CORPUS_SAMPLES = {  # file -> characters read: prose, code, many scripts, emoji
    "taylorswift.txt": 20_000,
    "code_python.txt": 20_000,
    "pg_multilingual.txt": 20_000,
    "udhr_sample.txt": 20_000,
    "emoji_sequences.txt": 10_000,
}
HYPOTHESIS = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])


@functools.cache
def real(name: str) -> tiktoken.Encoding:
    """tiktoken's own Encoding for `name`, its rank loaders answering with our shipped ranks."""
    ranks = get_encoding(RANKS_OF.get(name, name)).mergeable_ranks
    with mock.patch.multiple(
        openai_public,
        load_tiktoken_bpe=lambda *a, **k: ranks,
        data_gym_to_mergeable_bpe_ranks=lambda *a, **k: ranks,
    ):
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())


def specials(name: str) -> list[str]:
    return sorted(real(name)._special_tokens)


def with_specials(text: str, specials: list[str]) -> str:
    """`text` with special-token strings spliced in at a few places."""
    step = max(1, len(text) // 4)
    parts = [text[i : i + step] for i in range(0, len(text), step)]
    return "".join(p + (specials[k % len(specials)] if k < 3 else "") for k, p in enumerate(parts))


def corpus_samples():
    return [pytest.param(corpus_text(f, n), id=f) for f, n in CORPUS_SAMPLES.items()]


# ----- the encodings themselves -------------------------------------------------------------


def test_encoding_names_are_tiktokens():
    assert NAMES == list(openai_public.ENCODING_CONSTRUCTORS)


@pytest.mark.parametrize("name", NAMES)
def test_encoding_definition_is_tiktokens(name):
    ours, theirs = compat.get_encoding(name), real(name)
    assert ours is compat.get_encoding(name)  # built once
    assert (ours.name, ours._pat_str) == (theirs.name, theirs._pat_str)
    assert ours._special_tokens == theirs._special_tokens
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    assert (ours.max_token_value, ours.n_vocab) == (theirs.max_token_value, theirs.n_vocab)
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours.eot_token == theirs.eot_token
    assert ours.token_byte_values() == theirs.token_byte_values()
    assert repr(ours) == repr(theirs)
    for token in (
        0,
        255,
        theirs.max_token_value,
        theirs.max_token_value + 1,
        *theirs._special_tokens.values(),
    ):
        assert ours.is_special_token(token) == theirs.is_special_token(token)


# ----- ids, bytes and offsets on real text --------------------------------------------------


@pytest.mark.parametrize("text", corpus_samples())
@pytest.mark.parametrize("name", NAMES)
def test_real_text_ids_bytes_offsets(name, text):
    ours, theirs = compat.get_encoding(name), real(name)
    ids = theirs.encode_ordinary(text)
    assert ours.encode_ordinary(text) == ids
    assert ours.encode(text, disallowed_special=()) == ids
    assert ours._encode_only_native_bpe(text) == ids
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert ours.decode(ids) == text
    lines = text.splitlines(keepends=True)[:200]
    assert ours.encode_batch(lines) == theirs.encode_batch(lines)
    assert ours.decode_batch(theirs.encode_ordinary_batch(lines)) == lines
    spliced = with_specials(text, specials(name))
    special_ids = theirs.encode(spliced, allowed_special="all")
    assert ours.encode(spliced, allowed_special="all") == special_ids
    assert ours.decode_with_offsets(special_ids) == theirs.decode_with_offsets(special_ids)
    data = text.encode("utf-8")
    for cut in range(1, len(data), max(1, len(data) // 40)):  # cut anywhere, mid-character too
        assert ours._encode_bytes(data[:cut]) == theirs._encode_bytes(data[:cut])


# ----- hypothesis ---------------------------------------------------------------------------

texts = st.one_of(
    st.text(),
    st.text(alphabet=" \n\t\r'sdmtlvre0123456789aé日🙂\u00a0\u2028", max_size=40),
    st.lists(st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", " ", "hi", "\n"])).map(
        "".join
    ),
)


@HYPOTHESIS
@given(name=st.sampled_from(NAMES), text=texts)
def test_hyp_text_matches_tiktoken(name, text):
    ours, theirs = compat.get_encoding(name), real(name)
    for allowed in ("all", frozenset(), frozenset(specials(name)[:1])):
        expected = theirs.encode(text, allowed_special=allowed, disallowed_special=())
        assert ours.encode(text, allowed_special=allowed, disallowed_special=()) == expected
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    try:
        expected = theirs.encode(text)
    except ValueError as e:
        with pytest.raises(ValueError) as raised:
            ours.encode(text)
        assert str(raised.value) == str(e)
    else:
        assert ours.encode(text) == expected


@HYPOTHESIS
@given(
    name=st.sampled_from(NAMES), data=st.one_of(st.binary(), st.text().map(str.encode)), cut=st.integers(0)
)
def test_hyp_bytes_match_tiktoken(name, data, cut):
    ours, theirs = compat.get_encoding(name), real(name)
    data = data[: cut % (len(data) + 1)]
    assert ours._encode_bytes(data) == theirs._encode_bytes(data)
    if data:  # tiktoken's Rust panics on an empty piece; ours gives []
        assert ours._encode_single_piece(data) == theirs._encode_single_piece(data)
    else:
        assert ours._encode_single_piece(data) == []
    ids = theirs._encode_bytes(data)
    assert ours.decode_bytes(ids) == data
    try:
        expected = theirs.decode_with_offsets(ids)
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            ours.decode_with_offsets(ids)
    else:
        assert ours.decode_with_offsets(ids) == expected


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]), text=st.text(max_size=12))
def test_hyp_encode_with_unstable_matches_tiktoken(name, text):
    ours, theirs = compat.get_encoding(name), real(name)
    stable, completions = ours.encode_with_unstable(text, disallowed_special=())
    expected_stable, expected_completions = theirs.encode_with_unstable(text, disallowed_special=())
    assert stable == expected_stable
    assert sorted(map(tuple, completions)) == sorted(map(tuple, expected_completions))


@pytest.mark.parametrize(
    "text", ["hello fanta", "hello world  ", "x\n\n", "def f(x):\n    return", " 日本語"]
)
def test_encode_with_unstable_examples(text):
    ours, theirs = compat.get_encoding("cl100k_base"), real("cl100k_base")
    stable, completions = ours.encode_with_unstable(text)
    expected_stable, expected_completions = theirs.encode_with_unstable(text)
    assert stable == expected_stable
    assert sorted(map(tuple, completions)) == sorted(map(tuple, expected_completions))
    assert all(ours.decode_bytes(stable + c).startswith(text.encode()) for c in completions)


# ----- special tokens and errors ------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"disallowed_special": "all"},
        {"disallowed_special": {"<|fim_prefix|>"}},
        {"allowed_special": {"<|endoftext|>"}},
        {"allowed_special": "all", "disallowed_special": {"<|endoftext|>"}},  # disallowed wins
        {"disallowed_special": {"hello"}},  # any string may be disallowed, special or not
    ],
)
def test_disallowed_special_raises_tiktokens_error(kwargs):
    text = "<|endoftext|> hello <|fim_prefix|>"
    ours, theirs = compat.get_encoding("cl100k_base"), real("cl100k_base")
    with pytest.raises(ValueError) as expected:
        theirs.encode(text, **kwargs)
    with pytest.raises(ValueError) as raised:
        ours.encode(text, **kwargs)
    assert str(raised.value) == str(expected.value)
    with pytest.raises(ValueError):
        ours.encode_batch(["fine", text], **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_unknown_tokens_raise_tiktokens_key_errors(name):
    ours, theirs = compat.get_encoding(name), real(name)
    gap = theirs.max_token_value + 1
    for call, arg in [
        ("decode_single_token_bytes", gap),
        ("decode_bytes", [0, gap, 1]),
        ("decode", [gap]),
        ("encode_single_token", b"\xff\xfe not a token"),
        ("encode_single_token", "not a token at all"),
    ]:
        with pytest.raises(KeyError) as expected:
            getattr(theirs, call)(arg)
        with pytest.raises(KeyError) as raised:
            getattr(ours, call)(arg)
        assert raised.value.args == expected.value.args, call


@pytest.mark.parametrize("name", NAMES)
def test_single_tokens_round_trip_like_tiktoken(name):
    ours, theirs = compat.get_encoding(name), real(name)
    for token in [*range(0, ours.n_vocab, 997), *ours._special_tokens.values()]:
        try:
            token_bytes = theirs.decode_single_token_bytes(token)
        except KeyError:
            with pytest.raises(KeyError):
                ours.decode_single_token_bytes(token)
            continue
        assert ours.decode_single_token_bytes(token) == token_bytes
        assert ours.encode_single_token(token_bytes) == theirs.encode_single_token(token_bytes)


def test_shared_special_id_decodes_like_tiktoken():
    """o200k_harmony names 200018 twice; tiktoken's hash map (no random seed) picks <|endofprompt|>."""
    ours, theirs = compat.get_encoding("o200k_harmony"), real("o200k_harmony")
    for text in ("<|endofprompt|>", "<|reserved_200018|>"):
        ids = theirs.encode(text, allowed_special="all")
        assert ours.encode(text, allowed_special="all") == ids == [200018]
        assert ours.decode(ids) == theirs.decode(ids) == "<|endofprompt|>"
        assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert ours.decode_single_token_bytes(200018) == theirs.decode_single_token_bytes(200018)


def test_special_id_shared_with_a_merged_token_works_as_in_tiktoken():
    """A GPT-2 vocab.json read straight into ranks holds b"<|endoftext|>" at 50256, and code that
    builds a tiktoken Encoding from it also names <|endoftext|> 50256 as a special token: tiktoken
    accepts that (the id decodes as the merged token's bytes), so a drop-in must too."""
    base = real("gpt2")
    ranks = {**base._mergeable_ranks, b"<|endoftext|>": 50256, b"<|x|>": 50257}
    kwargs = dict(
        pat_str=base._pat_str, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256, "<|y|>": 50257}
    )
    ours, theirs = compat.Encoding("vocab", **kwargs), tiktoken.Encoding("vocab", **kwargs)
    text = "a <|endoftext|> b <|y|> <|x|>"
    for call in (
        lambda e: e.encode(text, allowed_special="all"),
        lambda e: e.encode(text, disallowed_special=()),
        lambda e: e.encode_ordinary(text),
        lambda e: e.encode_with_unstable(text + " <|y|>", allowed_special="all"),
        lambda e: e.decode_bytes([50256, 50257, 64]),
        lambda e: e.decode_with_offsets([50256, 50257, 64]),
        lambda e: e.encode_single_token("<|y|>"),
        lambda e: e.encode_single_token(b"<|x|>"),
        lambda e: (e.n_vocab, e.max_token_value, e.eot_token, e.is_special_token(50257)),
        lambda e: e.token_byte_values(),
    ):
        assert call(ours) == call(theirs)
    with pytest.raises(ValueError, match="disallowed special token '<|endoftext|>'"):
        ours.encode(text)


def test_a_custom_pattern_uses_tiktokens_unicode():
    """tiktoken's Rust regex is at Unicode 16.0 for any pat_str: U+0558 (a letter since 17.0) is
    no letter there, so "a\u0558b" is three pieces and the token trained on it as one is not used."""
    pattern = r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+"
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


def test_encode_to_numpy():
    ours, theirs = compat.get_encoding("o200k_base"), real("o200k_base")
    text = "numpy <|endoftext|> array"
    got = ours.encode_to_numpy(text, allowed_special="all")
    assert got.dtype == np.uint32
    assert got.tolist() == theirs.encode_to_numpy(text, allowed_special="all").tolist()


@pytest.mark.parametrize("call", ["encode_with_unstable", "encode_to_numpy"])
@pytest.mark.parametrize("text", ["ab\ud800cd <|endoftext|>", "\udfff hello", "x\ud800"])
def test_lone_surrogates_raise_where_tiktoken_raises(call, text):
    """encode repairs a lone surrogate; these two hand the text to tiktoken's Rust as it is."""
    ours, theirs = compat.get_encoding("cl100k_base"), real("cl100k_base")
    with pytest.raises(UnicodeEncodeError) as expected:
        getattr(theirs, call)(text, allowed_special="all")
    with pytest.raises(UnicodeEncodeError) as raised:
        getattr(ours, call)(text, allowed_special="all")
    assert str(raised.value) == str(expected.value)
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")


def test_numpy_and_other_integer_ids_decode_like_tiktoken():
    """decode(encode_to_numpy(text)) raised TypeError (ids must be int, not uint32): tiktoken's Rust
    reads any integer, numpy's and bools too; an id outside u32 is an OverflowError there."""
    ours, theirs = compat.get_encoding("cl100k_base"), real("cl100k_base")
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


# ----- pickling -----------------------------------------------------------------------------


def test_registered_encodings_pickle_by_name():
    enc = compat.get_encoding("p50k_edit")
    payload = pickle.dumps(enc)
    assert len(payload) < 200  # the name, not 50k ranks
    again = pickle.loads(payload)
    assert again.__dict__ is enc.__dict__
    assert again.encode("<|fim_prefix|>x", allowed_special="all") == [50281, 87]


def test_custom_encodings_pickle_by_value():
    base = compat.get_encoding("r50k_base")
    enc = compat.Encoding(
        "r50k_base",  # a registered name, but not the registered object: pickled by value
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={"<|pickle|>": 100_000},
    )
    again = pickle.loads(pickle.dumps(enc))
    assert again is not base and again._special_tokens == {"<|pickle|>": 100_000}
    assert again.encode("hi <|pickle|>", allowed_special="all") == enc.encode(
        "hi <|pickle|>", allowed_special="all"
    )
    assert again.encode("hi <|pickle|>", allowed_special="all")[-1] == 100_000


# ----- models -------------------------------------------------------------------------------


def test_model_tables_are_tiktokens():
    assert compat.MODEL_TO_ENCODING == tiktoken.model.MODEL_TO_ENCODING
    assert compat.MODEL_PREFIX_TO_ENCODING == tiktoken.model.MODEL_PREFIX_TO_ENCODING


def model_names() -> list[str]:
    exact = list(tiktoken.model.MODEL_TO_ENCODING)
    prefixes = list(tiktoken.model.MODEL_PREFIX_TO_ENCODING)
    suffixes = ["", "0", "-2024-05-13", "o", "o-mini:org:id", ".5-preview", "-", "x"]
    names = exact + [p + s for p in prefixes + exact for s in suffixes]
    return sorted({*names, "", "gpt", "GPT-4", "ft:", "text-davinci", "o", "gpt-oss-120b", "unknown-model"})


def test_every_model_name_maps_like_tiktoken():
    for model in model_names():
        try:
            expected = tiktoken.model.encoding_name_for_model(model)
        except KeyError as e:
            with pytest.raises(KeyError) as raised:
                compat.encoding_name_for_model(model)
            assert raised.value.args == e.args
            continue
        assert compat.encoding_name_for_model(model) == expected, model
    assert compat.encoding_for_model("text-davinci-edit-001") is compat.get_encoding("p50k_edit")
    assert compat.encoding_for_model("gpt-oss-20b").name == "o200k_harmony"


@pytest.mark.parametrize("call", ["encode_single_token", "_encode_single_piece", "_encode_bytes"])
@pytest.mark.parametrize("bad", [None, 5, memoryview(b"ab"), bytearray(b"ab"), ["ab"], "ab"])
def test_bytes_arguments_refused_as_tiktoken_refuses_them(call, bad):
    """encode_single_token(None) and _encode_bytes("ab") raised AttributeError ('NoneType' object
    has no attribute 'decode'), and encode_single_token(memoryview(b"ab")) answered 370 where
    tiktoken's Rust, which reads `bytes` alone, raises TypeError; a str is text to the first two."""
    ours, theirs = compat.get_encoding("cl100k_base"), real("cl100k_base")
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
    ours, theirs = compat.get_encoding("cl100k_base"), real("cl100k_base")
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
    ours, theirs = compat.get_encoding("cl100k_base"), real("cl100k_base")
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

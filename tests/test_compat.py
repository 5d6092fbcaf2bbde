"""tokenizer.compat answers exactly what real tiktoken answers: ids, bytes, offsets, errors,
pickles and the model -> encoding table, for every named encoding.

The oracle is tiktoken itself (tests/oracles.py's `tiktoken_reference`): each encoding is built by tiktoken's
own constructor (tiktoken_ext.openai_public, so its pattern and special tokens are tiktoken's),
with only the rank loaders answering from our shipped ranks instead of downloading. The
arguments in every form tiktoken takes or refuses are in test_compat_arguments.py, custom
patterns (tiktoken's Rust regex) in test_compat_patterns.py; tiktoken's own suite runs against
compat in tests/test_compat_tiktoken_suite.py.
"""

from __future__ import annotations

import pickle

import pytest
import tiktoken
import tiktoken.model
import tiktoken_ext.openai_public as openai_public
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenizer.compat as compat
from tests.helpers import corpus_text
from tests.oracles import tiktoken_reference

NAMES = compat.list_encoding_names()


CORPUS_SAMPLES = {  # file -> characters read: prose, code, many scripts, emoji
    "taylorswift.txt": 20_000,
    "code_python.txt": 20_000,
    "pg_multilingual.txt": 20_000,
    "udhr_sample.txt": 20_000,
    "emoji_sequences.txt": 10_000,
}


HYPOTHESIS = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])


def specials(name: str) -> list[str]:
    return sorted(tiktoken_reference(name)._special_tokens)


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
    ours, theirs = compat.get_encoding(name), tiktoken_reference(name)
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
    ours, theirs = compat.get_encoding(name), tiktoken_reference(name)
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
    ours, theirs = compat.get_encoding(name), tiktoken_reference(name)
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
    ours, theirs = compat.get_encoding(name), tiktoken_reference(name)
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
    ours, theirs = compat.get_encoding(name), tiktoken_reference(name)
    stable, completions = ours.encode_with_unstable(text, disallowed_special=())
    expected_stable, expected_completions = theirs.encode_with_unstable(text, disallowed_special=())
    assert stable == expected_stable
    assert sorted(map(tuple, completions)) == sorted(map(tuple, expected_completions))


@pytest.mark.parametrize(
    "text", ["hello fanta", "hello world  ", "x\n\n", "def f(x):\n    return", " 日本語"]
)
def test_encode_with_unstable_examples(text):
    ours, theirs = compat.get_encoding("cl100k_base"), tiktoken_reference("cl100k_base")
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
    ours, theirs = compat.get_encoding("cl100k_base"), tiktoken_reference("cl100k_base")
    with pytest.raises(ValueError) as expected:
        theirs.encode(text, **kwargs)
    with pytest.raises(ValueError) as raised:
        ours.encode(text, **kwargs)
    assert str(raised.value) == str(expected.value)
    with pytest.raises(ValueError):
        ours.encode_batch(["fine", text], **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_unknown_tokens_raise_tiktokens_key_errors(name):
    ours, theirs = compat.get_encoding(name), tiktoken_reference(name)
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
    ours, theirs = compat.get_encoding(name), tiktoken_reference(name)
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
    ours, theirs = compat.get_encoding("o200k_harmony"), tiktoken_reference("o200k_harmony")
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
    base = tiktoken_reference("gpt2")
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

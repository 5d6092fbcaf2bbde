"""The page's Python side with tokenizer.json files that prepare their text (RoBERTa, Qwen2).

Their chunks are chunks of the prepared text (a space before it, normalized), not of the text
typed: the edit-by-edit encoder must not re-split windows of the typed text, and the bytes
the page shows must be the tokens' own. Ids are compared with HF `tokenizers` itself.
"""

from __future__ import annotations

import json
import random
import unicodedata
from array import array

import pytest

from tests.helpers import corpus_text
from tokenizer.web import bridge
from tokenizer.web.incremental import IncrementalEncoder

hf = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, models, normalizers, pre_tokenizers, trainers  # noqa: E402

QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _trained(kind: str, text: str) -> hf.Tokenizer:
    tok = hf.Tokenizer(models.BPE(ignore_merges=kind == "qwen2"))
    if kind == "roberta":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    else:
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(hf.Regex(QWEN2), "isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    trainer = trainers.BpeTrainer(
        vocab_size=800,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tok.train_from_iterator([text], trainer)
    tok.add_tokens([AddedToken("hello world", normalized=False)])
    return tok


@pytest.fixture(scope="module", params=["roberta", "qwen2"])
def pair(request):
    text = corpus_text("taylorswift.txt", 30_000) + corpus_text("pg_multilingual.txt", 20_000)
    reference = _trained(request.param, text)
    info = json.loads(bridge.load_user(None, None, reference.to_str(), f"{request.param}.json"))
    return reference, info["name"]


def test_edits_give_hf_ids(pair):
    reference, name = pair
    editor = IncrementalEncoder(bridge._toks[name])
    rng = random.Random(5)
    text = (
        unicodedata.normalize("NFD", corpus_text("pg_multilingual.txt", 3000)) + " hello world<|endoftext|>x"
    )
    for _ in range(60):
        pos = rng.randrange(len(text) + 1)
        text = text[:pos] + rng.choice(["a", " ", "\n", "e\u0301", "Hi ", "\u212b"]) + text[pos:]
        editor.update(text)
        assert list(editor.ids) == reference.encode(text, add_special_tokens=False).ids


def test_the_bytes_shown_are_the_tokens_bytes(pair):
    reference, name = pair
    text = "Hello \uf900 world"  # NFC makes U+F900 U+8C48: as many bytes, other ones
    ids, lens, data, _ = bridge.encode(name, text)
    want = reference.encode(text, add_special_tokens=False).ids
    assert list(array("i", ids)) == want
    assert data == b"".join(bridge._toks[name].decode_tokens_bytes(want))
    assert sum(array("i", lens)) == len(data)

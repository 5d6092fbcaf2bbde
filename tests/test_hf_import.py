"""Importing HF tokenizer.json: every byte-level shape gives HF's ids; the rest is refused by name.

The files are built and trained with HF `tokenizers` itself (not with our exporter), one per
pre-tokenizer shape that GPT-2, Llama 3, Qwen2, GPT-NeoX and our own exports use; the ids are
compared on real text (English, code, multilingual) with `encode(text, add_special_tokens=False)`.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import corpus_text
from tokenizer import get_encoding
from tokenizer.hf_export import to_hf_json
from tokenizer.loading import from_hf_json, load_any
from tokenizer.train import train

hf = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def byte_level(use_regex: bool) -> pre_tokenizers.ByteLevel:
    return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=use_regex)


SHAPES = {
    "gpt2": lambda: byte_level(True),
    "neox": lambda: byte_level(True),  # GPT-NeoX: the same pre-tokenizer, a ByteLevel post-processor
    "llama3": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Split(hf.Regex(LLAMA3), "isolated"), byte_level(False)]
    ),
    "qwen2": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Split(hf.Regex(QWEN2), "isolated"), byte_level(False)]
    ),
    "gaps": lambda: pre_tokenizers.Sequence(  # Isolated keeps the text between matches
        [pre_tokenizers.Split(hf.Regex(r"\p{L}+"), "isolated"), byte_level(False)]
    ),
    "removed": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Split(hf.Regex(r"\p{L}+| ?\p{N}+"), "removed", invert=True), byte_level(False)]
    ),
    "literal": lambda: pre_tokenizers.Sequence([pre_tokenizers.Split(" ", "isolated"), byte_level(False)]),
    "digits": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), byte_level(False)]
    ),
    "digit-runs": lambda: pre_tokenizers.Sequence([pre_tokenizers.Digits(), byte_level(False)]),
    "no-split": lambda: byte_level(False),
}


def hf_trained(shape: str, text: str, *, vocab_size: int = 1200) -> hf.Tokenizer:
    tok = hf.Tokenizer(models.BPE())
    tok.pre_tokenizer = SHAPES[shape]()
    tok.decoder = decoders.ByteLevel()
    if shape == "neox":
        tok.post_processor = hf.processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>", "<pad>"],
        show_progress=False,
    )
    tok.train_from_iterator([text], trainer)
    tok.add_tokens(["hello world"])  # an added token that is not special
    return tok


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {
        "english": corpus_text("taylorswift.txt", 60_000),
        "code": corpus_text("code_python.txt", 40_000),
        "multilingual": corpus_text("pg_multilingual.txt", 40_000),
    }


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_byte_level_shape_gives_hf_ids(shape, texts, tmp_path):
    training = texts["english"][:30_000] + texts["code"][:10_000] + texts["multilingual"][:10_000]
    reference = hf_trained(shape, training)
    path = tmp_path / "tokenizer.json"
    reference.save(str(path))
    ours = load_any(str(path))
    assert ours.special_tokens["hello world"] == reference.token_to_id("hello world")
    for name, text in texts.items():
        text += " <|endoftext|> and hello world<pad>x 12345 ٣٤"
        want = reference.encode(text, add_special_tokens=False).ids
        assert ours.encode(text, allowed_special="all") == want, (shape, name)
        assert ours.decode(want) == reference.decode(want, skip_special_tokens=False), (shape, name)


def test_llama3_file_with_its_template_processing(texts, tmp_path):
    reference = hf_trained("llama3", texts["english"])
    reference.post_processor = hf.processors.TemplateProcessing(
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", 0)]
    )
    ours = from_hf_json(json.loads(reference.to_str()), "llama3.json")
    text = texts["code"]
    assert ours.encode(text) == reference.encode(text, add_special_tokens=False).ids


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
def test_import_of_a_trained_tokenizer(pattern, texts):
    tok = train(texts["english"][:20_000], 400, pattern="none") if pattern == "none" else None
    tok = tok or train(texts["english"][:20_000], 400, regex=pattern)
    back = from_hf_json(to_hf_json(tok))
    assert back.pattern == tok.pattern
    assert back.encode(texts["code"][:5000]) == tok.encode(texts["code"][:5000])


def hf_json(pre=None, *, normalizer=None, model=None, **extra) -> dict:
    tok = hf.Tokenizer(model or models.BPE())
    tok.pre_tokenizer = pre if pre is not None else byte_level(True)
    if normalizer is not None:
        tok.normalizer = normalizer
    obj = json.loads(tok.to_str())
    obj.update(extra)
    return obj


REFUSED = [
    # RoBERTa: HF puts a space before the text; loading it anyway gave wrong ids
    (
        lambda: hf_json(pre_tokenizers.ByteLevel(add_prefix_space=True)),
        "ByteLevel with add_prefix_space=true",
    ),
    (lambda: hf_json(pre_tokenizers.Whitespace()), "pre_tokenizer 'Whitespace'"),
    (lambda: hf_json(pre_tokenizers.Metaspace()), "pre_tokenizer 'Metaspace'"),
    (lambda: hf_json(pre_tokenizers.BertPreTokenizer()), "pre_tokenizer 'BertPreTokenizer'"),
    (lambda: hf_json(normalizer=normalizers.NFC()), "normalizer 'NFC'"),
    (
        lambda: hf_json(normalizer=normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()])),
        "normalizer 'NFD', 'Lowercase'",
    ),
    (lambda: hf_json(model=models.BPE(byte_fallback=True)), "byte_fallback"),
    (lambda: hf_json(model=models.WordPiece(unk_token="[UNK]")), "model 'WordPiece'"),
    (lambda: hf_json(model=models.Unigram()), "model 'Unigram'"),
    (
        lambda: hf_json(pre_tokenizers.Sequence([pre_tokenizers.Digits(), byte_level(True)])),
        "two splitting steps",
    ),
    (
        lambda: hf_json(
            pre_tokenizers.Sequence(
                [pre_tokenizers.Split(hf.Regex("a"), "merged_with_previous"), byte_level(False)]
            )
        ),
        "Split with behavior='MergedWithPrevious'",
    ),
    (
        lambda: hf_json(pre_tokenizers.Sequence([byte_level(False), pre_tokenizers.Digits()])),
        "must be ByteLevel",
    ),
    (
        lambda: {
            "model": {"type": "BPE", "vocab": {"ab": 0, "\u2603": 1}},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
        },
        "not in the byte-level alphabet",
    ),
    (lambda: [], "expected a JSON object"),
]


@pytest.mark.parametrize(("make", "message"), REFUSED, ids=[m for _, m in REFUSED])
def test_what_cannot_be_represented_is_refused_by_name(make, message):
    with pytest.raises(ValueError, match="^bad.json: ") as info:
        from_hf_json(make(), "bad.json")
    assert message in str(info.value)


def test_roberta_shaped_file_is_refused_not_loaded_wrong(texts):
    tok = hf.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.train_from_iterator([texts["english"]], trainers.BpeTrainer(vocab_size=600, show_progress=False))
    with pytest.raises(ValueError, match="add_prefix_space=true"):
        from_hf_json(json.loads(tok.to_str()), "roberta.json")


def test_added_token_options_that_change_matching_are_refused():
    obj = hf_json(byte_level(True))
    obj["added_tokens"] = [{"id": 5, "content": "<m>", "lstrip": True, "special": True}]
    with pytest.raises(ValueError, match=r"added_tokens\[0\] \('<m>'\) option lstrip=true"):
        from_hf_json(obj, "bad.json")

"""HF `tokenizers` set up as oracles for the tokenizer.json importer (tests/test_hf_import*.py).

One tokenizer.json shape per pre-tokenizer that GPT-2, RoBERTa, Llama 3, Qwen2, GPT-NeoX,
StarCoder, DeepSeek and our own exports use, trained by HF itself (`hf_trained`), so the files
are HF's, not our exporter's; and the small builders the refusal tests start from (`hf_json`,
`bytes_only`). Apart from tests/oracles.py so that the tests which need only tiktoken never
import `tokenizers`; importing this module skips a test module where `tokenizers` is missing,
as the importorskip in each test module did before.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import corpus_text
from tokenizer.loading import load_any

hf = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def byte_level(use_regex: bool, *, prefix: bool = False) -> pre_tokenizers.ByteLevel:
    return pre_tokenizers.ByteLevel(add_prefix_space=prefix, use_regex=use_regex)


SHAPES = {
    "gpt2": lambda: byte_level(True),
    "neox": lambda: byte_level(True),  # GPT-NeoX: the same pre-tokenizer, a ByteLevel post-processor
    "roberta": lambda: byte_level(True, prefix=True),  # and RobertaProcessing
    "llama3": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Split(hf.Regex(LLAMA3), "isolated"), byte_level(False)]
    ),
    "qwen2": lambda: pre_tokenizers.Sequence(  # and an NFC normalizer
        [pre_tokenizers.Split(hf.Regex(QWEN2), "isolated"), byte_level(False)]
    ),
    "prefix-chunks": lambda: pre_tokenizers.Sequence(  # a space before every chunk, NFKC
        [
            pre_tokenizers.Split(hf.Regex(r"\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"), "isolated"),
            byte_level(False, prefix=True),
        ]
    ),
    "prefix-no-split": lambda: byte_level(False, prefix=True),
    "starcoder": lambda: pre_tokenizers.Sequence(  # digits alone, then ByteLevel's own gpt2 split
        [pre_tokenizers.Digits(individual_digits=True), byte_level(True)]
    ),
    "splits-then-prefix": lambda: pre_tokenizers.Sequence(  # two Splits, a space before each gpt2 piece
        [
            pre_tokenizers.Split(hf.Regex(r"[\r\n]+"), "isolated"),
            pre_tokenizers.Digits(),
            byte_level(True, prefix=True),
        ]
    ),
    "three-splits": lambda: pre_tokenizers.Sequence(  # as DeepSeek's: Splits in a row, no regex
        [
            pre_tokenizers.Split(hf.Regex(r"[\r\n]"), "isolated"),
            pre_tokenizers.Split(hf.Regex(r"\p{N}{1,3}"), "isolated"),
            pre_tokenizers.Split(hf.Regex(LLAMA3), "isolated"),
            byte_level(False),
        ]
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


NORMALIZERS = {
    "qwen2": normalizers.NFC,
    "neox": normalizers.NFC,  # and runs of spaces added with normalized=true
    "prefix-chunks": normalizers.NFKC,
    "no-split": lambda: normalizers.Sequence([normalizers.NFD(), normalizers.NFC()]),
}
IGNORE_MERGES = {"llama3", "qwen2"}  # as their real files; the others have HF's default, false
POST_PROCESSORS = {
    "neox": lambda: processors.ByteLevel(trim_offsets=False),
    "roberta": lambda: processors.RobertaProcessing(("</s>", 2), ("<s>", 0), add_prefix_space=True),
    "llama3": lambda: processors.TemplateProcessing(
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", 0)]
    ),
}


def hf_trained(shape: str, text: str, *, vocab_size: int = 1200) -> hf.Tokenizer:
    """HF's tokenizer of `shape` trained on `text` by HF's own BpeTrainer, with the normalizer,
    post-processor and ignore_merges the real files of that shape have."""
    tok = hf.Tokenizer(models.BPE(ignore_merges=shape in IGNORE_MERGES))
    tok.pre_tokenizer = SHAPES[shape]()
    tok.decoder = decoders.ByteLevel()
    if shape in NORMALIZERS:
        tok.normalizer = NORMALIZERS[shape]()
    if shape in POST_PROCESSORS:
        tok.post_processor = POST_PROCESSORS[shape]()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>", "<pad>"],
        show_progress=False,
    )
    tok.train_from_iterator([text], trainer)
    # An added token that is not special (under a normalizer, saved unnormalized, as Qwen2's are).
    tok.add_tokens([AddedToken("hello world", normalized=shape not in NORMALIZERS)])
    if shape == "neox":
        tok.add_tokens([AddedToken(" " * n, normalized=True) for n in range(2, 25)])
    return tok


def bytes_only(pre) -> hf.Tokenizer:
    """A tokenizer.json of the 256 byte tokens (no merges) with the pre-tokenizer `pre`."""
    tok = hf.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=256, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(["x"], trainer)
    return tok


def _byte(ch: str) -> int:
    """The byte that a character of ByteLevel's alphabet stands for ("Ġ" -> 32)."""
    from tokenizer.hf_conventions import bytes_to_unicode

    return {v: k for k, v in bytes_to_unicode().items()}[ch]


def hf_json(pre=None, *, normalizer=None, model=None, **extra) -> dict:
    """A tokenizer.json as HF writes it (GPT-2's ByteLevel unless `pre` says otherwise), with
    the top-level keys in `extra` set: the start of each refusal test."""
    tok = hf.Tokenizer(model or models.BPE())
    tok.pre_tokenizer = pre if pre is not None else byte_level(True)
    if normalizer is not None:
        tok.normalizer = normalizer
    obj = json.loads(tok.to_str())
    obj.update(extra)
    return obj


def shape_texts() -> dict[str, str]:
    """The real texts the shapes are compared on (English, code, multilingual, decomposed)."""
    multilingual = corpus_text("pg_multilingual.txt", 40_000)
    return {
        "english": corpus_text("taylorswift.txt", 60_000),
        "code": corpus_text("code_python.txt", 40_000),
        "multilingual": multilingual,
        "udhr": corpus_text("udhr_sample.txt", 40_000),
        "decomposed": unicodedata.normalize("NFD", multilingual[:20_000]),
    }


def trained_shapes(
    texts: dict[str, str], folder: Callable[[str], Path]
) -> dict[str, tuple[hf.Tokenizer, object]]:
    """shape -> (HF's tokenizer, ours loaded from the tokenizer.json HF saved); `folder(shape)`
    gives a new empty folder (tmp_path_factory.mktemp)."""
    training = texts["english"][:30_000] + texts["code"][:10_000] + texts["multilingual"][:10_000]
    out = {}
    for shape in SHAPES:
        reference = hf_trained(shape, training)
        path = folder(shape) / "tokenizer.json"
        reference.save(str(path))
        out[shape] = reference, load_any(str(path))
    return out

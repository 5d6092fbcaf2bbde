"""Oniguruma's hexadecimal escapes in a HF Split regex: \\x{H...}, \\xH, \\xHH read as HF reads them.

HF (Oniguruma) reads \\x{41} as "A" and \\x7 as "\\x07"; ours read neither ("{41}+" was refused as
a repeated interval, "\\x7" as bad syntax). They are written as characters both engines read
alike; the forms HF reads otherwise than ours could (a UTF-8 byte, a sequence, no digits) are
refused saying so. The ids are compared with `tokenizers` itself.
"""

from __future__ import annotations

import json

import pytest

from tokenizer.loading import from_hf_json
from tokenizer.validate import TokenizerFileError

hf = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, pre_tokenizers, trainers  # noqa: E402

TEXTS = ["AAB\x07\x04g\u00e9 \U0001f600x{41}", "A-B]^ [x] a\tb\u00dfss SS \x7f", "K\u212a \u00e9\u00e9 .. ##"]


def split_tokenizer(regex: str) -> hf.Tokenizer:
    tok = hf.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(hf.Regex(regex), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(TEXTS * 5, trainer)
    return tok


@pytest.mark.parametrize(
    "regex",
    [
        r"\x{41}+|.",
        r"\x7|\x4g|.",
        r"[\x{41}-\x{5A}]+|.",
        r"\x{1F600}|\x{e9}+|.",
        r"\x{0041}\x{00000041}|\x41\x{42}|.",
        r"[\x5d\x5e\x2d]+|\x{20}+|.",
        r"\x{41}{2}|\x2e+|\x23+|.",
        r"\x{7f}|\x{9}|\x{212a}|.",
    ],
)
def test_hex_escapes_give_hf_ids(regex):
    tok = split_tokenizer(regex)
    ours = from_hf_json(json.loads(tok.to_str()))
    for text in TEXTS:
        assert ours.encode(text) == tok.encode(text).ids, (regex, text)


@pytest.mark.parametrize(
    ("regex", "message"),
    [
        (r"\xc3\xa9|.", r"'\\xc3' is valid for Hugging Face (Oniguruma) but is read here otherwise"),
        (r"\x{41 42}|.", "braces hold 1 to 8 hex digits here"),
        (r"\x{}|.", "braces hold 1 to 8 hex digits here"),
        (r"\x{D800}|.", "not a Unicode scalar value: HF matches nothing there"),
        (r"\x{110000}|.", "not a Unicode scalar value"),
        (r"\xg|.", "\\x without hex digits"),
    ],
)
def test_hex_escapes_hf_reads_otherwise_are_refused_saying_how_to_write_them(regex, message):
    tok = split_tokenizer(regex)
    with pytest.raises(TokenizerFileError) as info:
        from_hf_json(json.loads(tok.to_str()), "bad.json")
    text = str(info.value)
    assert text.startswith("bad.json: pre_tokenizer Split: ") and message in text
    assert "\\x{HHHH} (1 to 8 hex digits) or \\uHHHH" in text and "fix the syntax" not in text


def test_a_case_insensitive_escape_is_still_checked():
    """(?i:\\x{73}\\x{73}) is (?i:ss), which also matches "ß" in Oniguruma: refused as before."""
    with pytest.raises(TokenizerFileError, match="'ß' for 'ss'"):
        from_hf_json(json.loads(split_tokenizer(r"(?i:\x{73}\x73)|.").to_str()))

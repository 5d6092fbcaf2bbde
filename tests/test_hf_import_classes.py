"""Importing HF tokenizer.json: characters are read as HF reads them.

A Split regex means what it means to Oniguruma (its \\w and \\b, case folding), `Digits` splits
where Rust's `char::is_numeric` changes, and an added token's single_word and lstrip look at
Rust's word and White_Space characters: each is checked against `tokenizers` on every code
point where the Unicode tables could differ.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import corpus_text
from tests.hf_oracles import _byte, byte_level, bytes_only
from tokenizer import hf_import, patterns
from tokenizer._unicode import parse_ranges
from tokenizer.hf_export import to_hf_json
from tokenizer.loading import from_hf_json, load_any
from tokenizer.preparation import Preparation
from tokenizer.train import train
from tokenizer.validate import TokenizerFileError

hf = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, decoders, models, pre_tokenizers, trainers  # noqa: E402

# Oniguruma's \w has neither joiner (ZWNJ, ZWJ) and, outside a class, has "²³¹¼½¾"; \b and \B
# follow it. Read as ours (Rust's \w), "a²" was two pieces where HF has one.
WORD_REGEXES = [r"\W", r"\w+|[^\w\s]+", r"\b\w|\B\w", r"[^\W]|[\w\u200c]"]


@pytest.mark.parametrize("regex", WORD_REGEXES)
def test_word_escapes_mean_oniguruma_s_word_on_every_code_point(regex):
    everything = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)
    split = pre_tokenizers.Split(hf.Regex(regex), "removed", invert=True)
    ours = from_hf_json(json.loads(bytes_only(pre_tokenizers.Sequence([split, byte_level(False)])).to_str()))
    assert ours.split(everything) == [piece for piece, _ in split.pre_tokenize_str(everything)]


def test_a_split_on_word_characters_gives_hf_ids():
    text = corpus_text("taylorswift.txt", 20_000)
    tok = hf.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(hf.Regex(r"\b\w+|[^\w\s]+|\s+"), "isolated"), byte_level(False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([text + " a\u00b2 x\u00bd9 \u00b3\u00b3 b\u200dc" * 100], trainer)
    ours = from_hf_json(json.loads(tok.to_str()))
    for sample in ("a\u00b2\u00bd b\u200dc \u24b6x \u200cy x\u00b3\u00b3 \u00b9z", text[:3000]):
        assert ours.encode(sample) == tok.encode(sample).ids
        # the classes it is read as mean the same to Oniguruma (a look-behind there must be plain)
        assert hf.Tokenizer.from_str(json.dumps(to_hf_json(ours))).encode(sample).ids == ours.encode(sample)


def test_a_saved_unicode_flavour_is_checked(tmp_path):
    tok = train("hello world " * 20, 260)
    tok.save(tmp_path / "t")
    meta = json.loads((tmp_path / "t.json").read_text())
    (tmp_path / "t.json").write_text(json.dumps({**meta, "unicode": "klingon"}))
    with pytest.raises(ValueError, match="key 'unicode' must be one of tiktoken, regex"):
        load_any(str(tmp_path / "t"))


def numerals(flavour: str) -> set[int]:
    tables = patterns.unicode_tables(flavour).CATEGORY_RANGES
    return {cp for cat in ("Nd", "Nl", "No") for a, b in parse_ranges(tables[cat]) for cp in range(a, b + 1)}


@pytest.mark.parametrize("individual", [False, True])
def test_digits_split_where_rust_is_numeric_changes(individual):
    """HF's Digits is Rust's char::is_numeric, at Rust's Unicode (not Oniguruma's): every code
    point that is a numeral in one of our two tables and not the other, between letters and digits."""
    changed = numerals(patterns.TIKTOKEN) ^ numerals(patterns.REGEX)
    texts = [f"x{chr(cp)}{chr(cp)}1{chr(cp)}y" for cp in sorted(changed)]
    digits = pre_tokenizers.Digits(individual_digits=individual)
    ours = Preparation(pre_splits=(hf_import._DIGIT if individual else hf_import._DIGITS,))
    splitter = patterns.compile_pattern(patterns.NO_SPLIT)
    for text in texts:
        assert ours.chunks(text, splitter) == [piece for piece, _ in digits.pre_tokenize_str(text)], text


def test_word_and_whitespace_characters_are_hfs():
    """single_word's word characters and lstrip's whitespace, each code point of the BMP and every
    one whose \\w differs between our two Unicode tables, against HF."""
    from tokenizer._unicode import REGEX, TIKTOKEN, word_ranges
    from tokenizer.added_tokens import whitespace

    def points(flavour):
        return {cp for a, b in word_ranges(flavour) for cp in range(a, b + 1)}

    word = points(TIKTOKEN)
    changed = word ^ points(REGEX)
    cps = sorted({cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF} | changed)
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet(), key=_byte)
    reference = hf.Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(alphabet)}, merges=[]))
    reference.pre_tokenizer = byte_level(False)
    reference.add_special_tokens([AddedToken("<w>", single_word=True), AddedToken("<s>", lstrip=True)])
    ours = from_hf_json(json.loads(reference.to_str()), "probe.json")
    words = reference.encode_batch([chr(cp) + "<w>" for cp in cps], add_special_tokens=False)
    spaces = reference.encode_batch([chr(cp) + "<s>" for cp in cps], add_special_tokens=False)
    hf_words = {cp for cp, enc in zip(cps, words, strict=True) if 256 not in enc.ids}
    hf_spaces = {cp for cp, enc in zip(cps, spaces, strict=True) if enc.ids == [257]}
    assert hf_words == word.intersection(cps)
    assert hf_spaces == set(map(ord, whitespace())) and len(hf_spaces) == 25
    sample = "".join(chr(cp) + "<w>" + chr(cp) + "<s>" for cp in cps[::97])
    assert (
        ours.encode(sample, allowed_special="all") == reference.encode(sample, add_special_tokens=False).ids
    )


@pytest.mark.parametrize("regex", [r"(?i:ss)|\p{L}+|\s+", r"(?i)st|\p{L}+|\s+", r"(?i:a|(?:f)i)|\S"])
def test_a_case_insensitive_pair_that_a_ligature_folds_to_is_refused(regex):
    """Oniguruma's case-insensitive "ss" also matches "ß" and "ẞ" ("st" ﬅ and ﬆ, "fi" ﬁ, ...: full
    case folding), ours does not: "straße" split as "stra", "ß", "e" in HF and whole in ours."""
    split = pre_tokenizers.Split(hf.Regex(regex), "isolated")
    pieces = [piece for piece, _ in split.pre_tokenize_str("straße ﬆ ﬁ")]
    assert "ß" in pieces or "ﬆ" in pieces or "ﬁ" in pieces
    file = json.loads(bytes_only(pre_tokenizers.Sequence([split, byte_level(False)])).to_str())
    with pytest.raises(
        TokenizerFileError, match="case-insensitive letters there also match the one character"
    ):
        from_hf_json(file)

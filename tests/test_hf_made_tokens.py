"""Added tokens that are also tokens of model.vocab, under a normalizer: HF's ids or a refusal.

HF finds a `normalized: false` added token in the text as given, then normalizes the text between
the matches and runs its BPE over it with the whole model.vocab, the added token included. Where
normalization makes the token's text from text without it ("thé" is "the\\u0301" under NFD), HF's
BPE can give the token's id by merging; ours gives the special token's id only where the text
held it. Such a file is refused (hf_added.check_made_by_normalizer); every other one gives HF's
ids, checked here with `tokenizers` on random vocabularies, normalizers and texts.
"""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenizer.loading import from_hf_json
from tokenizer.preparation import made_by_normalizing
from tokenizer.validate import TokenizerFileError

hf = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

FORMS = {
    "NFC": normalizers.NFC,
    "NFD": normalizers.NFD,
    "NFKC": normalizers.NFKC,
    "NFKD": normalizers.NFKD,
    "NFKD+NFC": lambda: normalizers.Sequence([normalizers.NFKD(), normalizers.NFC()]),
}
# text the normalizers change into ASCII (accents, a ligature, the Kelvin sign, a fullwidth letter,
# the Greek question mark) beside the ASCII they make, and marks that combine or reorder
PIECES = ["the", "then", "fi", "file", "K", ";", "e", "n", "t", "h", " ", "é", "ñ", "ﬁ", "\u212a", "ｔ"]
PIECES += ["\u037e", "\u0301", "\u0323", "ê", "a", "ab", "b", "1", "12", "!", "!!", "\uff11", "\u2460"]


def trained(form: str, corpus: str, token: str, *, special: bool, ignore_merges: bool) -> hf.Tokenizer:
    tok = hf.Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tok.normalizer = FORMS[form]()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([corpus], trainer)
    tok.add_tokens([AddedToken(token, normalized=False, special=special)])
    return tok


def test_a_token_the_normalizer_makes_from_other_text_is_refused():
    """NFD makes "the" from "thé": HF's BPE gave "the" (id 257) + the accent, ours t, he + accent."""
    tok = trained("NFD", "the then there other " * 50, "the", special=True, ignore_merges=False)
    assert tok.encode("th\u00e9").ids[0] == tok.token_to_id("the")  # what HF gives
    with pytest.raises(TokenizerFileError) as info:
        from_hf_json(json.loads(tok.to_str()), "bad.json")
    message = str(info.value)
    assert message.startswith("bad.json: added_tokens[0] ('the'), a token of model.vocab")
    assert "NFD makes it from 'th" in message and "remove it from added_tokens" in message  # 'thè'


@pytest.mark.parametrize(
    ("forms", "token", "makes"),
    [
        (("NFC",), "the", False),  # NFC recomposes "é": it never leaves an "e" that was not one
        (("NFC",), "K1", True),  # the Kelvin sign is K under NFC too
        (("NFC",), "  ", False),  # GPT-NeoX's runs of spaces
        (("NFD",), "then", True),  # "theñ"
        (("NFD",), "<|endoftext|>", True),  # "≯" is ">" and a stroke after it
        (("NFD",), "<|endoftext|", False),  # "≮" leaves its stroke after the "<"
        (("NFKC",), "<|endoftext|>", True),
        (("NFKD",), "file", True),  # "ﬁle"
        (("NFKC",), "  ", True),  # a no-break space
        (("NFKD", "NFC"), "the", True),  # a modifier letter h
    ],
)
def test_what_normalization_makes(forms, token, makes):
    raw = made_by_normalizing(forms, token)
    assert (raw is not None) == makes
    if raw is not None:
        normalized = raw
        for form in forms:
            normalized = unicodedata.normalize(form, normalized)
        assert token not in raw and token in normalized


def test_specials_no_merge_makes_and_runs_of_spaces_still_load():
    """The narrow rule: <|endoftext|> in model.vocab with no merge making it (GPT-2's) loads under
    NFKC, which can make its text, and so do added runs of spaces (GPT-NeoX's)."""
    tok = trained("NFKC", "the then there other " * 50, "  ", special=False, ignore_merges=False)
    tok.add_special_tokens([AddedToken("<|endoftext|>", normalized=False)])
    obj = json.loads(tok.to_str())
    ours = from_hf_json(obj)
    for text in ["\ufe64|endoftext|> the  then", "<|endoftext|>thé  ﬁ"]:
        assert ours.encode(text, allowed_special="all") == tok.encode(text).ids


@settings(max_examples=60, deadline=None)
@given(
    form=st.sampled_from(sorted(FORMS)),
    corpus=st.lists(st.sampled_from(PIECES), min_size=5, max_size=40).map("".join),
    pick=st.integers(0, 10_000),
    special=st.booleans(),
    ignore_merges=st.booleans(),
    texts=st.lists(st.lists(st.sampled_from(PIECES), max_size=12).map("".join), min_size=1, max_size=8),
)
def test_a_vocabulary_token_added_unnormalized_gives_hf_ids_or_is_refused(
    form, corpus, pick, special, ignore_merges, texts
):
    """An added token picked from what the merges made, under each normalizer: refused, or HF's
    ids on text built from what normalization changes and makes."""
    probe = trained(form, corpus * 20, "<unused>", special=True, ignore_merges=ignore_merges)
    merged = sorted(t for t in probe.get_vocab() if len(t) > 1 and t.isascii() and t.isprintable())
    merged = [t for t in merged if " " not in t and t != "<unused>"]
    if not merged:
        return
    token = merged[pick % len(merged)]
    tok = trained(form, corpus * 20, token, special=special, ignore_merges=ignore_merges)
    try:
        ours = from_hf_json(json.loads(tok.to_str()))
    except TokenizerFileError as e:
        assert "makes it from" in str(e), str(e)
        return
    for text in texts:
        assert ours.encode(text, allowed_special="all") == tok.encode(text).ids, (token, text)

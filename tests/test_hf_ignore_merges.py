"""`model.ignore_merges: true` under a normalizer: a trainer's special tokens load with HF's ids.

With ignore_merges HF's BPE takes a pre-token that is in model.vocab whole, special tokens
included. Under NFKC a text without "<|endoftext|>" can normalize to it ("<|endºftext|>"), so a
file whose split could make it one pre-token would give its id where ours cannot (our BPE has no
special token): such a file is refused (hf_added.check_made_by_normalizer). A trainer writes its
special tokens into model.vocab, so every file trained with ignore_merges, NFKC and a Split was
refused, though a split like Llama 3's never makes "<|endoftext|>" one piece ("<|", "endoftext",
"|>"). Now the refusal is kept for the tokens the split can make whole, checked here with
`tokenizers` on random text.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import corpus_text
from tokenizer._chunk_reach import can_be_chunk
from tokenizer._unicode import TIKTOKEN
from tokenizer.loading import from_hf_json
from tokenizer.patterns import compile_pattern
from tokenizer.validate import TokenizerFileError

hf = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

SPECIALS = ["<|endoftext|>", "<pad>", "[MASK]", "<s>"]
LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPLITS = {
    "llama3": LLAMA3,
    "classes": r"\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+|\s+",
    "gaps": r"\p{L}+",  # Isolated keeps the text between the matches too
}
SHAPES = [*SPLITS, "prefix-classes", "gpt2"]
# text NFKC makes the special tokens' characters from: fullwidth and small forms, "º" and "ª"
RAW = ["\uff1c", "\ufe64", "\uff1e", "\uff5c", "\uff3b", "\uff3d", "\u00ba", "\u00aa", "\uff45", "\uff53"]
PIECES = [*SPECIALS, *RAW, "<|end", "oftext|>", "<", ">", "|", "[", "]", "e", "s", "pad", "MASK"]
PIECES += ["endoftext", "the", " ", "  ", "\n", "1", "123", "é", "ﬁ", "日本", "x"]


def trained(regex: str | None, *, use_regex: bool = False, prefix: bool = False) -> hf.Tokenizer:
    """Trained by tokenizers' own BpeTrainer with ignore_merges, NFKC and an Isolated Split of
    `regex` (none: ByteLevel's own split with use_regex, else no split at all); `prefix`:
    ByteLevel's add_prefix_space (after a Split, a space before every chunk)."""
    tok = hf.Tokenizer(models.BPE(ignore_merges=True))
    tok.normalizer = normalizers.NFKC()
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=prefix, use_regex=use_regex)
    steps = [pre_tokenizers.Split(hf.Regex(regex), "isolated")] if regex else []
    tok.pre_tokenizer = pre_tokenizers.Sequence([*steps, byte_level])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=SPECIALS,
        show_progress=False,
    )
    tok.train_from_iterator([corpus_text("taylorswift.txt", 30_000) + " endoftext pad MASK " * 30], trainer)
    return tok


@pytest.fixture(scope="module")
def loaded() -> dict[str, tuple[hf.Tokenizer, object]]:
    out = {}
    for name in SHAPES:
        if name == "gpt2":
            reference = trained(None, use_regex=True)
        else:
            reference = trained(SPLITS[name.removeprefix("prefix-")], prefix=name.startswith("prefix-"))
        out[name] = reference, from_hf_json(json.loads(reference.to_str()), f"{name}.json")
    return out


def test_a_trainer_s_special_tokens_load(loaded):
    """llama3.json: added_tokens[0] ('<|endoftext|>') ... with normalized=false and the normalizer
    NFKC is not supported: NFKC makes it from '<|endºftext|>' (and likewise for every shape)."""
    text = "a <|endºftext|> ＜pad＞ [MASK]<s>\uff3bMASK\uff3d x"
    for name, (reference, ours) in loaded.items():
        want = reference.encode(text, add_special_tokens=False).ids
        assert ours.encode(text, allowed_special="all") == want, name


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(PIECES), max_size=20),
    name=st.sampled_from(SHAPES),
)
def test_random_text_with_the_special_tokens_gives_hf_ids(loaded, pieces, name):
    reference, ours = loaded[name]
    text = "".join(pieces)
    assert ours.encode(text, allowed_special="all") == reference.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize(
    ("split", "raw", "token"),
    [
        (r"\S+|\s+", "\uff1cpad\uff1e", "<pad>"),  # "<pad>" is one piece: HF gives its id
        (r"[^\s\p{N}]+|\s+|\p{N}+", "[MASK\uff3d", "[MASK]"),
        (None, "<s\uff1e", "<s>"),  # no split: the whole text is the pre-token
    ],
)
def test_a_token_the_split_can_make_whole_is_still_refused(split, raw, token):
    reference = trained(split)
    assert reference.encode(raw, add_special_tokens=False).ids == [reference.token_to_id(token)]
    with pytest.raises(TokenizerFileError, match=r"NFKC makes it from '"):
        from_hf_json(json.loads(reference.to_str()), "bad.json")


ATOMS = [
    r"\p{L}+",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+",
    r"\s+(?!\S)",
    r"\s+",
    r"[<|>]+",
    r"<\|",
    r"\|>",
    r"(?<=x)y+",
    r"\bend",
    r"e(?=n)",
    r"(?:ab)++",
    r"[a-z]+$",
    r"[^\s]",
    r"(?i:'s|'t)",
    r"\p{L}++(?!\|)",
    r"x(?!n)",  # matches at the end of "ex" alone, not before an "n"
    r"n",
]
CANDIDATES = [
    "<|endoftext|>",
    "<|",
    "|>",
    "end",
    "endoftext",
    "ab",
    "abab",
    "  ",
    " x",
    "y",
    "yy",
    "e",
    "'s",
    "ex",
]
# the surroundings tried on each side: every one of these, and each pair of them
AROUND = ["", "x", "n", " ", "|", "<", ">", "ab", "e", "1", "\n", "Z", "'"]


@settings(max_examples=200, deadline=None)
@given(
    atoms=st.lists(st.sampled_from(ATOMS), min_size=1, max_size=4, unique=True),
    gaps=st.booleans(),
    text=st.sampled_from(CANDIDATES),
)
def test_a_chunk_said_to_be_out_of_reach_is_never_made(atoms, gaps, text):
    """_chunk_reach's proof, checked: where it says no text splits into a chunk `text`, the split
    of `text` in every surrounding tried has no such chunk (an Isolated split's gaps included)."""
    regex = "|".join(atoms)
    if gaps:
        regex = f"(?:{regex})|(?:(?!(?:{regex}))[\\s\\S])+"
    if can_be_chunk(text, regex, None):
        return
    findall = compile_pattern(regex, unicode=TIKTOKEN).findall
    for left in AROUND:
        for right in AROUND:
            assert text not in findall(left + text + right), (regex, left, right)


def gap_form(regex: str) -> str:
    return f"(?:{regex})|(?:(?!(?:{regex}))[\\s\\S])+"


@pytest.mark.parametrize(
    ("regex", "text", "left", "right"),
    [
        (r"(?<=x)y+|\S", "yy", "x", ""),  # a lookbehind true only in the surroundings
        (r"\Bnd|\S", "nd", "e", ""),  # \B false at the start of "nd" alone
        (r"[a-z]+$|\S", "ab", "", ""),  # $ at the end of the text
        (gap_form(r"x(?!n)|n"), "ex", "", "n"),  # x(?!n) matches at the end of "ex" alone
        (gap_form(r"(?>xyz|x)y|z"), "wxy", "", "z"),  # (?>xyz|x) takes "x" in "wxy" alone
    ],
)
def test_a_chunk_made_only_in_its_surroundings_is_reachable(regex, text, left, right):
    """Each loosening rule, on the case where `text` alone would mislead: the chunk is made in
    the surroundings, so the proof must not say it never is."""
    assert text in compile_pattern(regex, unicode=TIKTOKEN).findall(left + text + right)
    assert can_be_chunk(text, regex, None)

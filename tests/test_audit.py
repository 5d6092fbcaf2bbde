"""tokenizer.audit against tiktoken (gpt2, cl100k_base, o200k_base) and HF `tokenizers`."""

from __future__ import annotations

import pytest
import regex
import tiktoken._educational as educational
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import corpus_text
from tests.oracles import tiktoken_reference
from tokenizer import Tokenizer, get_encoding, train
from tokenizer._unicode_scripts import SCRIPTS
from tokenizer.audit import LONGEST_SHOWN, audit
from tokenizer.hf_export import bytes_to_unicode, export_hf
from tokenizer.loading import load_any
from tokenizer.unicode_script import script_of, token_script

NAMES = ["gpt2", "cl100k_base", "o200k_base"]
SCRIPT_NAMES = [name for name, _ in SCRIPTS]


@pytest.fixture(scope="module")
def audits() -> dict[str, dict]:
    return {name: audit(get_encoding(name), corpus_texts=[corpus_text("udhr_sample.txt")]) for name in NAMES}


def oracle(enc, text: str) -> dict[str, list[int]]:
    """The lists computed from tiktoken alone: its rank table, its encoder, its educational BPE."""
    ranks = enc._mergeable_ranks
    partial, unreachable = [], []
    texts = {}
    for token, rank in ranks.items():
        try:
            texts[rank] = token.decode("utf-8")
        except UnicodeDecodeError:
            partial.append(rank)
            if educational.bpe_encode(ranks, token, visualise=None) != [rank]:
                unreachable.append(rank)
    ids = sorted(texts)
    for rank, got in zip(ids, enc.encode_ordinary_batch([texts[i] for i in ids]), strict=True):
        if got != [rank]:
            unreachable.append(rank)
    longest = sorted(ranks.items(), key=lambda kv: (-len(kv[0]), kv[1]))[:LONGEST_SHOWN]
    return {
        "partial_utf8": sorted(partial),
        "unreachable": sorted(unreachable),
        "unused": sorted(set(ranks.values()) - set(enc.encode_ordinary(text))),
        "longest": [rank for _, rank in longest],
    }


@pytest.mark.parametrize("name", NAMES)
def test_every_list_equals_tiktoken(name, audits):
    enc = tiktoken_reference(name)
    got = audits[name]
    want = oracle(enc, corpus_text("udhr_sample.txt"))
    assert got["n_vocab"] == enc.n_vocab
    for key, ids in want.items():
        assert got[key] == ids, key
    assert got["duplicates"] == []
    assert sum(got["by_script"].values()) == len(enc._mergeable_ranks)
    assert list(got) == [
        "n_vocab",
        "partial_utf8",
        "unreachable",
        "unused",
        "duplicates",
        "longest",
        "by_script",
    ]


def test_o200k_has_a_dozen_unreachable_tokens_its_pattern_never_produces(audits):
    tok = get_encoding("o200k_base")
    unreachable = audits["o200k_base"]["unreachable"]
    assert len(unreachable) == 12
    for i in unreachable:
        text = tok.decode_single_token_bytes(i).decode("utf-8")
        assert len(tok.split(text)) > 1  # e.g. a newline followed by "//"


def oracle_label(text: str, script_of_char) -> str:
    """The labelling rules of tokenizer.unicode_script, written with regex's classes."""
    scripts = {script_of_char(ch) for ch in text} - {"Common", "Inherited"}
    if len(scripts) == 1:
        return scripts.pop()
    if scripts:
        return "Mixed"
    visible = regex.sub(r"\s", "", text)
    if not visible:
        return "Whitespace"
    return "Digits" if regex.fullmatch(r"\d+", visible) else "Common"


def regex_script(ch: str) -> str:
    return next((s for s in SCRIPT_NAMES if regex.match(rf"\p{{Script={s}}}", ch)), "Unknown")


def test_by_script_equals_regex_script_property_on_cl100k(audits):
    tok = get_encoding("cl100k_base")
    memo: dict[str, str] = {}

    def cached(ch: str) -> str:
        if ch not in memo:
            memo[ch] = regex_script(ch)
        return memo[ch]

    want: dict[str, int] = {}
    for token in tok.mergeable_ranks:
        try:
            label = oracle_label(token.decode("utf-8"), cached)
        except UnicodeDecodeError:
            label = "Partial UTF-8"
        want[label] = want.get(label, 0) + 1
    got = audits["cl100k_base"]["by_script"]
    assert got == want
    counts = list(got.values())
    assert counts == sorted(counts, reverse=True)


@settings(max_examples=300, deadline=None)
@given(ch=st.characters(exclude_categories=("Cs",)))
def test_script_of_matches_regex(ch):
    assert script_of(ch) == regex_script(ch)


def test_labels_of_examples():
    cases = {
        " the": "Latin",
        "中文": "Han",
        "日本の": "Mixed",
        " 123": "Digits",
        " \n\t": "Whitespace",
        "-->": "Common",
        "-пре": "Cyrillic",
        "é": "Latin",  # e + combining acute (Inherited)
    }
    for text, label in cases.items():
        assert token_script(text.encode("utf-8")) == label, text
    assert token_script("你".encode()[:2]) == "Partial UTF-8"


def test_duplicate_merges_are_listed_and_unreachable():
    # 256 = "ab", 257 = "bc", 258 = "ab"+"c", 259 = "a"+"bc": both "abc".
    tok = Tokenizer.from_merges([(97, 98), (98, 99), (256, 99), (97, 257)], "gpt4", ["<|end|>"])
    result = audit(tok, corpus_texts=["abc ab <|end|>"])
    assert result["duplicates"] == [[258, 259]]
    assert result["unreachable"] == [259]
    assert result["n_vocab"] == 261
    emitted = {258, 256, *b" <|end>"}  # "abc", "ab", the bytes of " <|end|>" (ordinary text)
    assert result["unused"] == sorted(set(range(260)) - emitted)
    assert result["longest"][:3] == [258, 259, 256]


def test_imported_tokenizer_json_equals_hf_tokenizers(tmp_path):
    hf = pytest.importorskip("tokenizers")
    text = corpus_text("udhr_sample.txt", 200_000)
    tok = train(text, 1500, pattern="gpt4", special_tokens=["<|endoftext|>"], min_frequency=1)
    path = tmp_path / "tokenizer.json"
    export_hf(tok, path)
    imported = load_any(str(path))
    got = audit(imported, corpus_texts=[text[:20_000]])
    hf_tok = hf.Tokenizer.from_file(str(path))
    to_byte = {c: b for b, c in bytes_to_unicode().items()}
    special = set(hf_tok.get_added_tokens_decoder())
    ranks = {bytes(to_byte[c] for c in s): i for s, i in hf_tok.get_vocab().items() if i not in special}
    partial, unreachable = [], []
    for token, i in ranks.items():
        try:
            ids = hf_tok.encode(token.decode("utf-8")).ids
        except UnicodeDecodeError:
            partial.append(i)
            ids = educational.bpe_encode(ranks, token, visualise=None)
        if ids != [i]:
            unreachable.append(i)
    assert got["n_vocab"] == hf_tok.get_vocab_size()
    assert got["partial_utf8"] == sorted(partial) and partial
    assert got["unreachable"] == sorted(unreachable)
    assert got["unused"] == sorted(set(ranks.values()) - set(hf_tok.encode(text[:20_000]).ids))


@pytest.mark.parametrize("tok", [None, "gpt2", 5])
def test_audit_of_something_not_a_tokenizer_is_a_type_error(tok):
    """audit(None) raised AttributeError ('NoneType' object has no attribute ...)."""
    with pytest.raises(TypeError, match="audit takes a Tokenizer"):
        audit(tok)


def test_a_corpus_given_as_one_str_is_one_text():
    """audit(enc, corpus_texts="hello world") iterated the str's characters and encoded each
    one alone: "hello" (31373) was reported unused though encoding the text gives it. A str is
    the text itself, as in train()."""
    enc = get_encoding("gpt2")
    text = "hello world"
    assert audit(enc, corpus_texts=text)["unused"] == audit(enc, corpus_texts=[text])["unused"]
    assert 31373 not in audit(enc, corpus_texts=text)["unused"]

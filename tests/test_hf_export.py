"""HF `tokenizer.json` export: `tokenizers` must give exactly our ids."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tokenizer import Tokenizer, get_encoding
from tokenizer.added_tokens import AddedMatching
from tokenizer.cli import main
from tokenizer.formats import minbpe_text
from tokenizer.hf_export import (
    export_hf,
    merges_from_ranks,
    oniguruma_regex,
    to_hf_json,
    token_string,
)
from tokenizer.loading import from_hf_json
from tokenizer.preparation import CHUNK, SEGMENT, Preparation
from tokenizer.train import train

hf = pytest.importorskip("tokenizers")


def corpus(name: str, limit: int | None = None, start: int = 0) -> str:
    text = (CORPORA / name).read_text(encoding="utf-8")
    return text if limit is None else text[start : start + limit]


@pytest.fixture(scope="module")
def samples() -> dict[str, str]:
    return {
        "taylorswift": corpus("taylorswift.txt"),
        "tinyshakespeare": corpus("tinyshakespeare.txt", 40_000, start=500_000),
        "udhr_sample": corpus("udhr_sample.txt", 60_000),
        "code_python": corpus("code_python.txt", 60_000, start=1_000_000),
        "emoji_cldr": corpus("emoji_cldr.txt", 40_000, start=200_000),
        "whitespace": "a\x1c\x1d b\x85c\u2028d\u3000 e\xa0\xa0f\t\t\n\r\n\x0b\x0c  x 2024 12345678\n\n  "
        * 20,
    }


def exported(tok: Tokenizer, tmp_path: Path):
    path = tmp_path / f"{tok.name}.tokenizer.json"
    export_hf(tok, path)
    return hf.Tokenizer.from_file(str(path))


def assert_same_ids(tok: Tokenizer, hf_tok, texts: dict[str, str]) -> None:
    for name, text in texts.items():
        ours = tok.encode_ordinary(text)
        theirs = hf_tok.encode(text).ids
        if ours != theirs:
            i = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), len(ours))
            context = tok.decode(ours[max(0, i - 3) : i + 3])
            pytest.fail(
                f"{tok.name} on {name}: ids differ at {i} near {context!r}: {ours[i : i + 4]} vs {theirs[i : i + 4]}"
            )


@pytest.fixture(scope="module")
def reference_exports(tmp_path_factory) -> dict[str, tuple[Tokenizer, object]]:
    out = tmp_path_factory.mktemp("hf")
    return {
        name: (tok := get_encoding(name), exported(tok, out))
        for name in ["gpt2", "cl100k_base", "o200k_base"]
    }


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_reference_encodings_give_our_ids_in_hf(name, reference_exports, samples):
    tok, hf_tok = reference_exports[name]
    assert_same_ids(tok, hf_tok, samples)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_special_tokens_are_added_tokens(name, reference_exports):
    tok, hf_tok = reference_exports[name]
    for text in ["hi<|endoftext|>", "<|endoftext|>a<|endoftext|><|endoftext|> b"]:
        ours = tok.encode(text, allowed_special="all")
        assert hf_tok.encode(text).ids == ours
        assert tok.special_tokens["<|endoftext|>"] in ours
    assert hf_tok.decode(tok.encode("héllo wörld 🙂")) == "héllo wörld 🙂"


# Any code point (unassigned ones too): the named patterns use tiktoken's Unicode 16.0 tables,
# which Oniguruma (HF) agrees with on every code point.
assigned_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@settings(max_examples=150, deadline=None)
@given(text=assigned_text)
def test_arbitrary_text(name, text, reference_exports):
    """HF matches added tokens in any text: the same ids as ours with every special allowed (the
    two differ from encode_ordinary only on a special token's text, which hypothesis draws from
    the constants of our source: it once gave '<|endofprompt|>')."""
    tok, hf_tok = reference_exports[name]
    assert hf_tok.encode(text).ids == tok.encode(text, allowed_special="all")


@pytest.fixture(scope="module")
def training_text() -> str:
    return corpus("taylorswift.txt") + corpus("code_python.txt", 100_000)


@pytest.mark.parametrize(
    "pattern",
    ["gpt4", "gpt2", "o200k", "none", r"\p{L}+|\p{N}{1,2}+"],  # the last one skips spaces and punctuation
)
@pytest.mark.filterwarnings("ignore:the split regex does not match")  # on purpose, see above
def test_trained_tokenizer_gives_our_ids_in_hf(pattern, training_text, samples, tmp_path):
    text = training_text[:30_000] if pattern == "none" else training_text
    tok = train(text, 700 if pattern == "none" else 3000, pattern=pattern, special_tokens=["<|endoftext|>"])
    tok.name = "trained"
    hf_tok = exported(tok, tmp_path)
    assert_same_ids(tok, hf_tok, samples)
    assert hf_tok.encode("hi<|endoftext|>").ids == tok.encode("hi<|endoftext|>", allowed_special="all")


def test_derived_merges_contain_the_training_merges_in_order(training_text):
    # For this trainer's output the rank-derived list contains every training merge, in
    # training order; the extra entries are other splits of the same tokens.
    tok = train(training_text, 3000, pattern="gpt4")
    token = {i: bytes([i]) for i in range(256)}
    for i, (left, right) in enumerate(tok.merges):
        token[256 + i] = token[left] + token[right]
    derived = merges_from_ranks(tok.mergeable_ranks)
    position = {pair: i for i, pair in reversed(list(enumerate(derived)))}
    where = [position[(token[left], token[right])] for left, right in tok.merges]
    assert where == sorted(where)
    assert len(derived) > len(tok.merges)


def handmade(tokens: dict[bytes, int], pattern: str = "gpt2") -> Tokenizer:
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update(tokens)
    return Tokenizer(ranks, pattern, {"<|endoftext|>": 1000}, name="handmade")


def test_chunk_that_is_a_token_is_taken_whole(tmp_path):
    # 'abc' has no split into two tokens: BPE cannot reach it, the whole-chunk lookup does
    # (tiktoken too). HF needs `ignore_merges` for that.
    tok = handmade({b"abc": 256})
    assert tok.encode_ordinary("abc abcd") == [256, 32, 97, 98, 99, 100]
    assert to_hf_json(tok)["model"]["ignore_merges"] is True
    assert exported(tok, tmp_path).encode("abc abcd").ids == [256, 32, 97, 98, 99, 100]


def test_token_reached_through_a_higher_ranked_part(tmp_path):
    # 'abc' (256) is reached as ('ab' 257) + 'c': BPE on its bytes restricted to lower ranks
    # never makes it, so a merge list derived that way would miss it. Every split is listed.
    tok = handmade({b"abc": 256, b"ab": 257})
    assert tok.encode_ordinary("xabcd") == [120, 256, 100]
    assert [b"ab", b"c"] in [list(m) for m in merges_from_ranks(tok.mergeable_ranks)]
    assert exported(tok, tmp_path).encode("xabcd").ids == [120, 256, 100]


def test_json_layout():
    tok = get_encoding("gpt2")
    doc = to_hf_json(tok)
    model = doc["model"]
    assert model["type"] == "BPE" and model["vocab"]["Ġthe"] == tok.mergeable_ranks[b" the"]
    assert model["merges"][0] == ["Ġ", "t"]  # list-of-pairs format: spaces are unambiguous
    assert doc["normalizer"] is None and doc["post_processor"] is None
    split, byte_level = doc["pre_tokenizer"]["pretokenizers"]
    assert split["behavior"] == "Isolated" and split["invert"] is False
    assert byte_level == {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": False,
    }
    assert doc["decoder"]["type"] == "ByteLevel"
    assert doc["added_tokens"] == [
        {
            "id": 50256,
            "content": "<|endoftext|>",
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
    ]
    assert token_string(b" \n\x00\xff") == "ĠĊĀÿ"


def test_oniguruma_rewrite_of_possessive_counts():
    # Oniguruma reads `\p{N}{1,3}+` as (\p{N}{1,3})+ and would split "2024" as one chunk.
    assert oniguruma_regex(r"\p{N}{1,3}+|a++") == r"(?>\p{N}{1,3})|a++"
    assert oniguruma_regex(r"[a\]]{2}+\d{3,}+x{2}") == r"(?>[a\]]{2})(?>\d{3,})x{2}"


@pytest.mark.parametrize(
    "regex, text, construct",
    [
        (r"\p{L}+|[ ]+$|\s+|\S", "ab  \ncd", "the anchor '$'"),  # a line anchor in Oniguruma
        (r"(?i:ss)|\p{L}+|\s+|\S", "ßa", "'(?i:ss)'"),  # there also matches 'ß'
    ],
)
def test_a_regex_oniguruma_reads_otherwise_is_not_exported(regex, text, construct, tmp_path):
    """The import refuses such a Split; the export wrote it, and HF tokenizers then encoded
    'ab  \\ncd' as [258, 256, 10, 259] where we give [258, 257, 259], without a word."""
    from tokenizers import Regex, pre_tokenizers

    tok = Tokenizer(get_encoding("gpt2").mergeable_ranks, regex, name="anchored")
    split = pre_tokenizers.Split(Regex(regex), "isolated")  # HF's reading splits otherwise
    assert [piece for piece, _ in split.pre_tokenize_str(text)] != tok.split(text)
    with pytest.raises(
        ValueError, match=rf"tokenizer 'anchored': the split regex holds {re.escape(construct)}"
    ):
        to_hf_json(tok)
    assert main(["export", "--format", "hf", "-o", str(tmp_path / "t.json"), "gpt2"]) == 0  # named: fine


def test_cli_export(tmp_path, training_text):
    tok = train(training_text[:50_000], 600, pattern="gpt4", special_tokens=["<|endoftext|>"])
    stem = tmp_path / "mytok"
    tok.save(stem)
    out = tmp_path / "tokenizer.json"
    assert main(["export", "--format", "hf", str(stem), "-o", str(out)]) == 0
    loaded = Tokenizer.load(stem)
    text = corpus("tinyshakespeare.txt", 5_000)
    assert hf.Tokenizer.from_file(str(out)).encode(text).ids == loaded.encode_ordinary(text)
    assert json.loads(out.read_text(encoding="utf-8"))["model"]["ignore_merges"] is True

    assert main(["export", "--format", "hf", "gpt2", "-o", str(tmp_path / "gpt2.json")]) == 0
    assert main(["export", "--format", "hf", str(tmp_path / "missing"), "-o", str(out)]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "gpt2.json",
        "mytok.json",
        "mytok.tiktoken",
        "tokenizer.json",
    ]


PREPARED = {  # (pattern, preparation, chunk_lookup) of tokenizers that prepare their text
    "roberta": ("gpt2", Preparation((), SEGMENT), True),
    "qwen2-like": ("gpt4", Preparation(("NFC",)), True),
    "chunks": ("o200k", Preparation(("NFKD", "NFC"), CHUNK), False),
    "no-split": ("none", Preparation(("NFD",), SEGMENT), False),
    "starcoder": ("gpt2", Preparation(pre_splits=(r"\p{N}|\P{N}+",)), True),
    "pre-splits": ("gpt2", Preparation(("NFC",), SEGMENT, (r"[\r\n]+|[^\r\n]+", "o200k")), False),
}


@pytest.mark.parametrize("kind", list(PREPARED))
def test_prepared_tokenizer_gives_our_ids_in_hf_and_comes_back(kind, training_text, samples, tmp_path):
    """Save -> load -> export -> HF: the same ids; HF's file -> import: the same tokenizer."""
    pattern, preparation, chunk_lookup = PREPARED[kind]
    base = train(training_text[:30_000], 500, pattern=pattern, special_tokens=["<|endoftext|>"])
    tok = Tokenizer(
        base.mergeable_ranks,
        pattern,
        base.special_tokens,
        name=kind,
        preparation=preparation,
        chunk_lookup=chunk_lookup,
    )
    tok.save(tmp_path / kind)
    tok = Tokenizer.load(tmp_path / kind)
    assert (tok.preparation, tok.chunk_lookup) == (preparation, chunk_lookup)
    texts = {**samples, "decomposed": unicodedata.normalize("NFD", samples["udhr_sample"])}
    assert_same_ids(tok, exported(tok, tmp_path), texts)
    back = from_hf_json(to_hf_json(tok), f"{kind}.json")
    assert (back.preparation, back.chunk_lookup, back.mergeable_ranks) == (
        preparation,
        chunk_lookup,
        tok.mergeable_ranks,
    )
    text = "<|endoftext|>Hi<|endoftext|> there\n" + samples["udhr_sample"][:3000]
    want = exported(tok, tmp_path).encode(text, add_special_tokens=False).ids
    assert tok.encode(text, allowed_special="all") == back.encode(text, allowed_special="all") == want


def test_formats_that_cannot_carry_a_preparation_refuse_and_say_why(training_text, tmp_path):
    base = train(training_text[:20_000], 400, pattern="gpt4")
    tok = Tokenizer(base.mergeable_ranks, "gpt4", name="prep", preparation=Preparation(("NFC",), SEGMENT))
    with pytest.raises(ValueError, match="other than gpt2's, has no HF form"):
        to_hf_json(tok)
    with pytest.raises(ValueError, match=r"normalizes the text \(NFC\) and puts a space before each segment"):
        minbpe_text(tok)
    tok.save(tmp_path / "prep")
    out = tmp_path / "prep.model"
    assert main(["export", "--format", "minbpe", str(tmp_path / "prep"), "-o", str(out)]) == 2
    assert main(["export", "--format", "hf", str(tmp_path / "prep"), "-o", str(tmp_path / "t.json")]) == 2
    assert not out.exists() and not (tmp_path / "t.json").exists()


def test_merges_of_very_long_tokens_are_found_in_linear_time():
    """Tokens of 2, 4, ... 2**20 'a's (a run of one letter trains them): trying every cut of each
    token, a slice per cut, never finished, so `export` hung."""
    import time

    from tokenizer.hf_export import merges_from_ranks

    doubling = [(97, 97)] + [(256 + i, 256 + i) for i in range(19)]
    ranks = Tokenizer.from_merges(doubling).mergeable_ranks
    started = time.perf_counter()
    merges = merges_from_ranks(ranks)
    assert time.perf_counter() - started < 2.0
    assert merges == [(b"a" * 2**j, b"a" * 2**j) for j in range(20)]  # halves: the only cuts into tokens


def test_a_special_token_that_clashes_with_the_vocabulary_says_which_way_and_the_fix():
    """It said "special token '(' has the id or the text of an ordinary token": '(' is the byte
    token 40's text in tokenizer.json, and nothing said what to do."""
    tok = train("hello world " * 20, 260, special_tokens=["("])
    with pytest.raises(ValueError, match=r"special token '\(' is the text of ordinary token 40 .* rename it"):
        to_hf_json(tok)


def test_export_says_which_ids_a_tokenizer_json_cannot_hold(tmp_path, capsys):
    """259 repeats 258's bytes ("abc" by two merges): tokenizer.json holds one id per string, so
    the file left 259 out without a word; HF never gives or decodes it. Encoding agrees."""
    tok = Tokenizer.from_merges([(97, 98), (98, 99), (256, 99), (97, 257)], "gpt4")
    assert tok.duplicate_ids == {259: 258}
    tok.save(tmp_path / "dup")
    out = tmp_path / "tokenizer.json"
    assert main(["export", str(tmp_path / "dup"), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning: 1 id repeats an earlier token's bytes (e.g. 259 = 258)" in err
    from tokenizers import Tokenizer as HFTokenizer

    assert HFTokenizer.from_file(str(out)).encode("abc abcd").ids == tok.encode("abc abcd")
    assert main(["export", "gpt2", "-o", str(tmp_path / "g.json")]) == 0
    assert capsys.readouterr().err == ""  # nothing lost, nothing said


def test_a_custom_pattern_s_word_escapes_mean_ours_in_hf():
    """Oniguruma's \\w lacks the joiners and has "²" (hf_conventions.py): a pattern of \\w, \\W and \\b
    written as is split "a²" as one piece in HF, "b\\u200dc" as three, where ours does the opposite."""
    text = corpus("taylorswift.txt", 20_000) + " a\u00b2 b\u200dc x\u00bd" * 50
    tok = train(text, 400, regex=r"\b\w+|[^\w\s]+|\W")
    hf_tok = hf.Tokenizer.from_str(json.dumps(to_hf_json(tok)))
    for sample in ("a\u00b2 b\u200dc x\u00bd \u24b6b \u00b9", text[:2000]):
        assert hf_tok.encode(sample).ids == tok.encode(sample)


def test_a_single_word_token_stays_out_of_the_model_s_vocabulary():
    """HF drops "hello" (single_word) after the mark in "\u0301hello"; the export listed it in
    model.vocab, with ignore_merges, so HF's BPE took the chunk "hello" whole as it: one id where
    HF's own file and ours give four. Kept out, HF numbers it itself, as the file it came from."""
    base = train("hello there, hellish help " * 30, 300)
    tok = Tokenizer(
        base.mergeable_ranks,
        "gpt2",
        {"hello": len(base.mergeable_ranks)},
        preparation=Preparation(added=AddedMatching(single_word=frozenset({"hello"}))),
    )
    exported_file = hf.Tokenizer.from_str(json.dumps(to_hf_json(tok)))
    for text in ("\u0301hello", "x hello hellos", "\u0301hello<hello>"):
        assert exported_file.encode(text).ids == tok.encode(text, allowed_special="all")
    assert len(tok.encode("\u0301hello", allowed_special="all")) > 2


def test_a_single_word_token_hf_would_number_otherwise_is_refused():
    base = train("hello there, hellish help " * 30, 300)
    n = len(base.mergeable_ranks)
    special = {"<a>": n, "<b>": n + 2}  # a gap: HF would number <b> n + 1
    tok = Tokenizer(
        base.mergeable_ranks,
        "gpt2",
        special,
        preparation=Preparation(added=AddedMatching(single_word=frozenset({"<a>"}))),
    )
    with pytest.raises(
        ValueError, match=rf"special token '<a>' \(id {n}\) has no place .* or drop single_word"
    ):
        to_hf_json(tok)

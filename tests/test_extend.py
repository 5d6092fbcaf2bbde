"""Extension: exact against a full-recount reference, ids kept, tiktoken and HF agree, CLI."""

from __future__ import annotations

import base64
import json
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tests.strategies import tie_heavy_texts
from tokenizer import extend, get_encoding, train
from tokenizer.cli import main as cli_main
from tokenizer.core import Tokenizer


def corpus(name: str, limit: int, start: int = 0) -> str:
    path = CORPORA / name
    if not path.exists():
        pytest.skip(f"corpus {name} not found at {path}")
    return path.read_text(encoding="utf-8")[start : start + limit]


def bpe(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """tiktoken's rule, plainly: merge the leftmost lowest-rank adjacent pair until none is left."""
    parts = [bytes([b]) for b in piece]
    while len(parts) > 1:
        found = [(ranks[a + b], i) for i, (a, b) in enumerate(pairwise(parts)) if a + b in ranks]
        if not found:
            break
        _, i = min(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[p] for p in parts]


def reference_extend(base: Tokenizer, documents: list[str], add: int, tie_break: str, min_frequency: int):
    """minbpe's loop from the base vocabulary: every chunk of the text, in order, re-encoded
    from scratch with a fresh Tokenizer's split and ranks at every step, all pairs recounted."""
    ranks = dict(base.mergeable_ranks)
    token = {i: t for t, i in ranks.items()}
    merges = []
    for new_id in range(base.n_vocab, base.n_vocab + add):
        tok = Tokenizer(dict(ranks), base.pattern)
        chunks = [c for doc in documents for c in tok.split(doc) if c]
        stats: dict[tuple[int, int], int] = {}  # insertion order = first occurrence in the text
        for chunk in chunks:
            ids = bpe(chunk.encode("utf-8"), tok.mergeable_ranks)
            for pair in pairwise(ids):
                stats[pair] = stats.get(pair, 0) + 1
        if not stats:
            break
        if tie_break == "first":
            pair = max(stats, key=stats.get)
        else:
            pair = min(stats, key=lambda p: (-stats[p], p))
        if stats[pair] < min_frequency:
            break
        token[new_id] = token[pair[0]] + token[pair[1]]
        ranks[token[new_id]] = new_id
        merges.append(pair)
    return merges


def new_tokens(tok: Tokenizer, first: int) -> list[bytes]:
    return [tok.decode_single_token_bytes(i) for i in range(first, tok.n_vocab)]


def assert_adjacent_tokens_encode_alone_to_themselves(tok: Tokenizer, text: str) -> None:
    """The lemma extend.py rests on: x, y adjacent in a chunk's segmentation => x + y encodes to [x, y]."""
    for chunk in tok.split(text):
        ids = tok.encode_ordinary(chunk)
        for x, y in pairwise(ids):
            both = tok.decode_single_token_bytes(x) + tok.decode_single_token_bytes(y)
            assert bpe(both, tok.mergeable_ranks) == [x, y], (chunk, x, y)


@pytest.mark.parametrize(
    "base_name, name",
    [("cl100k_base", "code_python.txt"), ("gpt2", "udhr_sample.txt"), ("o200k_base", "pg_multilingual.txt")],
)
def test_lemma_on_real_text(base_name, name):
    assert_adjacent_tokens_encode_alone_to_themselves(get_encoding(base_name), corpus(name, 20_000, 50_000))


@settings(max_examples=200, deadline=None)
@given(base_text=tie_heavy_texts(), text=tie_heavy_texts(), vocab=st.integers(257, 290))
def test_lemma_on_small_bases(base_text, text, vocab):
    base = train(base_text + " abcabc aab", vocab, pattern="none", min_frequency=1)
    assert_adjacent_tokens_encode_alone_to_themselves(base, text)


REAL = [  # (base, corpus file, slice length, slice start)
    ("cl100k_base", "code_python.txt", 40_000, 200_000),
    ("gpt2", "pg_en_medium.txt", 30_000, 300_000),
    ("cl100k_base", "udhr_sample.txt", 30_000, 100_000),
]


@pytest.mark.parametrize("tie_break", ["first", "lexical"])
@pytest.mark.parametrize("base_name, name, limit, start", REAL)
def test_matches_reference_on_real_text(base_name, name, limit, start, tie_break):
    base = get_encoding(base_name)
    text = corpus(name, limit, start)
    tok = extend(base, text, 25, tie_break=tie_break)
    expected = reference_extend(base, [text], 25, tie_break, 2)
    assert tok.metadata["extension"]["merges"] == [list(p) for p in expected]
    assert len(expected) == 25
    # the reference's plain BPE is the real encoder: the corpus encodes to the same ids
    assert [t for c in tok.split(text) for t in bpe(c.encode(), tok.mergeable_ranks)] == tok.encode_ordinary(
        text
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=tie_heavy_texts(),
    more=tie_heavy_texts(),
    tie_break=st.sampled_from(["first", "lexical"]),
    min_frequency=st.sampled_from([1, 2, 3]),
    add=st.integers(0, 25),
    vocab=st.sampled_from([256 + 3, 256 + 12, 256 + 30]),
    special=st.booleans(),
)
def test_matches_reference_on_a_small_trained_base(text, more, tie_break, min_frequency, add, vocab, special):
    base = train("ab aab abab aaa ba é 日本 's\n" * 3, vocab, special_tokens=["<|x|>"] if special else None)
    docs = [text, more + "<|x|>"]
    tok = extend(base, docs, add, tie_break=tie_break, min_frequency=min_frequency)
    expected = reference_extend(base, docs, add, tie_break, min_frequency)
    ext = tok.metadata["extension"]
    assert ext["merges"] == [list(p) for p in expected]
    assert tok.metadata["stopped_early"] == (len(expected) < add)
    ids = [t for doc in docs for t in tok.encode_ordinary(doc)]
    assert ext["corpus_tokens_after"] == len(ids)
    assert ext["corpus_tokens_before"] == sum(len(base.encode_ordinary(d)) for d in docs)


@pytest.mark.parametrize("tie_break", ["first", "lexical"])
def test_matches_reference_on_long_chunks_with_tokens_longer_than_the_base_has(tie_break):
    """Chunks over _bpe.HEAP_THRESHOLD bytes are cut where no merge can cross, which relies on
    the longest token: new tokens soon outgrow the small base's."""
    base = train("abcabd abca", 262, pattern="none")
    docs = [("abcabcabd " * 50)[: 300 + k] for k in range(3)] + ["abd abc " * 40]
    tok = extend(base, docs, 30, tie_break=tie_break)
    assert max(map(len, tok.mergeable_ranks)) > 2 * max(map(len, base.mergeable_ranks))
    assert tok.metadata["extension"]["merges"] == [
        list(p) for p in reference_extend(base, docs, 30, tie_break, 2)
    ]


@pytest.fixture(scope="module")
def code_extension():
    base = get_encoding("cl100k_base")
    text = corpus("code_python.txt", 60_000, 1_000_000)
    return base, text, extend(base, text, 120, tie_break="first")


def test_base_ids_and_specials_are_kept_and_new_ids_follow(code_extension):
    base, _, tok = code_extension
    assert tok.n_vocab == 100277 + 120
    assert all(tok.mergeable_ranks[t] == i for t, i in base.mergeable_ranks.items())
    assert tok.special_tokens == base.special_tokens
    new = new_tokens(tok, 100277)
    assert [tok.mergeable_ranks[t] for t in new] == list(range(100277, 100277 + 120))
    assert not set(new) & set(base.mergeable_ranks)


def test_gpt2_new_ids_start_after_its_special_token():
    base = get_encoding("gpt2")
    tok = extend(base, corpus("code_c.txt", 20_000), 5)
    assert base.special_tokens == {"<|endoftext|>": 50256}
    assert tok.metadata["extension"]["first_new_id"] == 50257
    assert sorted(tok.mergeable_ranks.values())[-5:] == list(range(50257, 50262))


def test_fewer_tokens_on_the_domain_text(code_extension):
    base, text, tok = code_extension
    before, after = len(base.encode_ordinary(text)), len(tok.encode_ordinary(text))
    assert after < before
    assert tok.metadata["extension"]["corpus_tokens_before"] == before
    assert tok.metadata["extension"]["corpus_tokens_after"] == after


def test_tiktoken_loads_the_saved_extension_with_our_ids(code_extension, tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    _, text, tok = code_extension
    tok.save(tmp_path / "ext")
    enc = tiktoken.Encoding(
        "ext",
        pat_str=tok.pattern_regex,
        mergeable_ranks=load_tiktoken_bpe(str(tmp_path / "ext.tiktoken")),
        special_tokens=tok.special_tokens,
    )
    sample = text + corpus("code_python.txt", 30_000, 2_000_000) + "<|endoftext|>"
    assert enc.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
    again = Tokenizer.load(tmp_path / "ext")
    assert again.mergeable_ranks == tok.mergeable_ranks
    assert again.metadata["extension"]["merges"] == tok.metadata["extension"]["merges"]


def test_hf_export_gives_our_ids(code_extension, tmp_path):
    hf = pytest.importorskip("tokenizers")
    from tokenizer.hf_export import export_hf

    _, text, tok = code_extension
    export_hf(tok, tmp_path / "tokenizer.json")
    hf_tok = hf.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    sample = text + corpus("code_python.txt", 30_000, 2_000_000)
    assert hf_tok.encode(sample).ids == tok.encode_ordinary(sample)


@pytest.mark.parametrize("tie_break", ["first", "lexical"])
def test_a_hf_file_whose_merges_alone_decide_each_chunk_extends(tie_break, tmp_path):
    """HF's trainer writes ignore_merges: false (GPT-2's own tokenizer.json has no such key, the
    same), and `extend hf_gpt2.json ...` was refused: "cannot be extended exactly: it lets the
    merges alone decide each chunk". The reference's plain BPE is exactly that encoder, so the
    new merges must be its; ids are kept, and HF gives our ids on the exported extension."""
    hf = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    from tokenizer.hf_export import export_hf

    hf_tok = hf.Tokenizer(models.BPE())
    hf_tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf_tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<|endoftext|>"], initial_alphabet=alphabet, show_progress=False
    )
    hf_tok.train_from_iterator([corpus("taylorswift.txt", 60_000)], trainer)
    hf_tok.save(str(tmp_path / "base.json"))
    base = Tokenizer.load(tmp_path / "base.json")
    assert not base.chunk_lookup
    text = corpus("code_python.txt", 30_000)
    tok = extend(base, text, 40, tie_break=tie_break)
    assert tok.metadata["extension"]["merges"] == [
        list(p) for p in reference_extend(base, [text], 40, tie_break, 2)
    ]
    assert not tok.chunk_lookup
    assert all(tok.decode_single_token_bytes(i) == t for t, i in base.mergeable_ranks.items())
    assert tok.special_tokens == base.special_tokens and tok.n_vocab == base.n_vocab + 40
    export_hf(tok, tmp_path / "tokenizer.json")
    sample = text + corpus("code_python.txt", 20_000, 1_000_000)
    assert hf.Tokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(sample).ids == tok.encode_ordinary(
        sample
    )


def test_stops_when_pairs_are_too_rare_and_says_so():
    tok = extend(get_encoding("gpt2"), "zqxv zqxv zqxv", 10, min_frequency=3)
    assert tok.metadata["extension"]["added"] < 10
    assert tok.metadata["stopped_early"]
    assert "3 or more times" in tok.metadata["stop_reason"]


def test_lone_surrogates_are_read_as_the_encoder_reads_them():
    text = "x\ud800y x\ud800y x\udfffy zz zz"
    tok = extend("gpt2", text, 4, min_frequency=1)
    replaced = extend(
        "gpt2", text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd"), 4, min_frequency=1
    )
    assert tok.metadata["extension"]["merges"] == replaced.metadata["extension"]["merges"]
    assert tok.metadata["extension"]["corpus_tokens_after"] == len(tok.encode_ordinary(text))


def test_base_by_name_and_bad_arguments():
    tok = extend("gpt2", "hello hello", 0)
    assert tok.n_vocab == 50257 and tok.metadata["extension"]["added"] == 0
    with pytest.raises(ValueError, match="tie_break"):
        extend("gpt2", "x", 1, tie_break="last")
    with pytest.raises(ValueError, match="add must be"):
        extend("gpt2", "x", -1)
    with pytest.raises(ValueError, match="unknown tokenizer"):
        extend("no_such_tokenizer", "x", 1)


def test_cli_extend(tmp_path, capsys):
    train_file = tmp_path / "code.py"
    train_file.write_text(corpus("code_python.txt", 30_000, 500_000))
    held = tmp_path / "held.py"
    held.write_text(corpus("code_python.txt", 10_000, 900_000))
    out = tmp_path / "ext"
    rc = cli_main(
        [
            "extend",
            "cl100k_base",
            str(train_file),
            "--add",
            "30",
            "--held-out",
            str(held),
            "-q",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    err = capsys.readouterr().err
    assert "30 new tokens (ids 100277..100306)" in err
    assert "held-out" in err
    meta = json.loads(Path(f"{out}.json").read_text())["metadata"]
    held_stats = meta["extension"]["held_out"]
    assert held_stats["tokens_after"] <= held_stats["tokens_before"]
    assert held_stats["tokens_before"] == len(get_encoding("cl100k_base").encode_ordinary(held.read_text()))
    again = Tokenizer.load(out)
    assert held_stats["tokens_after"] == len(again.encode_ordinary(held.read_text()))
    # the result extends again, from its files
    rc = cli_main(["extend", str(out), str(train_file), "--add", "2", "-q", "-o", str(tmp_path / "ext2")])
    assert rc == 0 and Tokenizer.load(tmp_path / "ext2").n_vocab == 100277 + 32


def test_cli_errors(tmp_path, capsys):
    assert (
        cli_main(["extend", "nope", str(tmp_path / "missing.txt"), "--add", "3", "-o", str(tmp_path / "x")])
        == 2
    )
    assert "unknown tokenizer" in capsys.readouterr().err
    f = tmp_path / "a.txt"
    f.write_text("zz")
    assert cli_main(["extend", "gpt2", str(f), "--add", "3", "-q", "-o", str(tmp_path / "x")]) == 0
    assert "stopped early" in capsys.readouterr().err


def test_new_ids_past_the_largest_a_file_holds_are_refused(tmp_path):
    """A base whose last rank is 2**31 - 1 (legal) was extended to ids 2**31, ...: the result was
    saved, then refused by the loader ("rank 2147483648 is out of range")."""
    from tokenizer.formats import parse_tiktoken
    from tokenizer.validate import MAX_ID

    ranks = {bytes([i]): i for i in range(256)} | {b"he": MAX_ID - 1}
    base = Tokenizer(
        parse_tiktoken("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    )
    assert base.n_vocab == MAX_ID
    with pytest.raises(ValueError, match="3 new ids would pass 2,147,483,647, .* add at most 0"):
        extend(base, "hello hello hello", 3)


def test_a_base_with_its_own_unicode_tables_keeps_them(tmp_path):
    """A HF base's Split regex uses Oniguruma's Unicode 16 tables (Tokenizer.unicode): the
    extension counted, merged and saved with the regex package's newer ones, so U+0558 (a
    letter only since Unicode 17) joined 'a' and 'b' into one chunk and the extended tokenizer
    encoded the base's own text differently."""
    from tokenizer import Tokenizer

    gpt2 = get_encoding("gpt2")
    base = Tokenizer(gpt2.mergeable_ranks, r"\p{L}+|\s+|[^\s\p{L}]+", name="hf-like", unicode="tiktoken")
    text = "a\u0558b c " * 50
    out = extend(base, [text], add=3)
    assert out.unicode == "tiktoken"
    assert out.split(text) == base.split(text)
    corpus = tmp_path / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    assert (
        extend(base, [corpus], add=3).metadata["extension"] == out.metadata["extension"]
    )  # files count alike


def test_an_empty_corpus_is_named_as_the_stop_reason():
    """It said "no pairs left: every chunk is a single token", of a corpus with no chunk."""
    for corpus in ([""], [], ["", ""]):
        tok = extend(get_encoding("gpt2"), corpus, add=3)
        assert tok.metadata["stop_reason"] == "the corpus is empty: no text to learn merges from"
    assert extend(get_encoding("gpt2"), ["a b c"], add=3).metadata["stop_reason"].startswith("no pair")


def test_a_base_id_that_repeats_bytes_survives_save_and_load(tmp_path):
    """259 decodes to "abc" like 258 (two merges make it). The extension has no merges (the special
    token 260 sits between the base's ids and the new ones), and its files lost 259: decode(259)
    failed after Tokenizer.load. STEM.json now keeps it in "duplicate_ids"."""
    base = Tokenizer.from_merges([(97, 98), (98, 99), (256, 99), (97, 257)], "gpt4", ["<|end|>"])
    tok = extend(base, ["xyz xyz xyz abc abc"], 3)
    assert tok.merges is None and tok.duplicate_ids == {259: 258}
    tok.save(tmp_path / "ext")
    back = Tokenizer.load(tmp_path / "ext")
    assert back.duplicate_ids == {259: 258} and back.special_tokens == {"<|end|>": 260}
    for i in (*range(260), *range(261, tok.n_vocab)):
        assert back.decode_single_token_bytes(i) == base_or_new(base, tok, i)
    meta = json.loads((tmp_path / "ext.json").read_text())
    for bad, message in [
        ({"259": 999}, "999 is not an id of the ranks"),
        ({"258": 0}, "no token of the ranks"),
    ]:
        meta["duplicate_ids"] = bad
        (tmp_path / "ext.json").write_text(json.dumps(meta))
        with pytest.raises(ValueError, match=rf"ext.json: duplicate_ids\[.*\]: .*{message}"):
            Tokenizer.load(tmp_path / "ext")


def base_or_new(base: Tokenizer, tok: Tokenizer, i: int) -> bytes:
    return base.decode_single_token_bytes(i) if i < base.n_vocab else tok.decode_single_token_bytes(i)

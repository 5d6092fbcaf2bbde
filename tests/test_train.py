"""train(): what it returns, saves and refuses.

Its tokenizers load in tiktoken with the same ids (pattern "none" too); files stream as strings
do, serial as parallel, documents apart, a count table as the text; a named pattern's chunks
stay whole; it stops early saying why; duplicate tokens stay exact; and every bad argument,
corpus or special token is refused with a message naming it. The merge engine's exactness is
in test_train_heap.py, the command line's train and count in test_train_cli.py.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import PATTERNS, chunks_of, corpus
from tokenizer.cli import main as cli_main
from tokenizer.core import Tokenizer
from tokenizer.counting import count_chunks, save_counts
from tokenizer.patterns import NO_SPLIT_REGEX, compile_split, resolve_pattern
from tokenizer.reference import reference_merges
from tokenizer.train import learn_merges, train


def test_saved_tokenizer_loads_in_tiktoken(tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    text = corpus("taylorswift.txt")
    tok = train(text, 600, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert tok.special_tokens == {"<|endoftext|>": 600, "<|pad|>": 601}
    tok.save(tmp_path / "swift")
    enc = tiktoken.Encoding(
        "swift",
        pat_str=resolve_pattern("gpt4"),
        mergeable_ranks=load_tiktoken_bpe(str(tmp_path / "swift.tiktoken")),
        special_tokens=tok.special_tokens,
    )
    sample = text[5000:15000] + "<|endoftext|>"
    assert enc.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
    again = Tokenizer.load(tmp_path / "swift")
    assert again.merges == tok.merges
    meta = json.loads((tmp_path / "swift.json").read_text())["metadata"]
    assert meta["training"]["vocab_size"] == 600 and meta["statistics"]["merges"] == 344


def test_saved_pattern_none_loads_in_tiktoken(tmp_path):
    """STEM.json's pattern_regex is a regex tiktoken splits with as `none` does; it used to be
    the word "none", which as a pat_str matches only that word (every other text gave no ids)."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    text = corpus("taylorswift.txt", 20_000)
    tok = train(text, 400, pattern="none", special_tokens=["<|endoftext|>"])
    tok.save(tmp_path / "whole")
    meta = json.loads((tmp_path / "whole.json").read_text())
    assert meta["pattern"] == "none" and meta["pattern_regex"] == NO_SPLIT_REGEX == tok.pattern_regex
    enc = tiktoken.Encoding(
        "whole",
        pat_str=meta["pattern_regex"],
        mergeable_ranks=load_tiktoken_bpe(str(tmp_path / "whole.tiktoken")),
        special_tokens=meta["special_tokens"],
    )
    for sample in (
        text[:3000],
        "",
        " \n\t x",
        "none",
        "a<|endoftext|>b<|endoftext|>",
        text[-500:] + "<|endoftext|>",
    ):
        assert enc.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
    again = Tokenizer.load(tmp_path / "whole")
    assert again.pattern == "none" and again.encode(text[:3000]) == tok.encode(text[:3000])
    # files written before the change (pattern_regex "none") still load as `none`
    meta["pattern_regex"] = "none"
    (tmp_path / "whole.json").write_text(json.dumps(meta))
    assert Tokenizer.load(tmp_path / "whole").pattern == "none"
    # and a file that gives the regex alone (no "pattern" key) loads as `none` too
    del meta["pattern"]
    meta["pattern_regex"] = NO_SPLIT_REGEX
    (tmp_path / "whole.json").write_text(json.dumps(meta))
    assert Tokenizer.load(tmp_path / "whole").pattern == "none"


def test_file_streaming_equals_string_and_parallel_equals_serial(tmp_path, monkeypatch):
    text = corpus("tinyshakespeare.txt", 200_000) + "\n" + corpus("udhr_sample.txt", 100_000)
    path = tmp_path / "mix.txt"
    path.write_text(text, encoding="utf-8")
    from_text = train(text, 700)
    monkeypatch.setattr("tokenizer.counting.BLOCK_SIZE", 1000)  # many block boundaries
    from_file = train(path, 700, workers=1)
    monkeypatch.setattr("tokenizer.counting.RANGE_MIN_BYTES", 10_000)  # many worker ranges
    parallel = train([path], 700, workers=2)
    assert from_file.merges == from_text.merges == parallel.merges
    assert parallel.metadata["training"]["workers"] == 2
    assert from_file.metadata["statistics"]["bytes"] == len(text.encode())


def test_iterable_of_documents_never_merges_across_them():
    docs = ["ab", "ab", "cd"]
    tok = train(iter(docs), 300, pattern="none", min_frequency=1)
    assert tok.merges == [(97, 98), (99, 100)]
    assert tok.metadata["statistics"]["documents"] == 3


def test_counts_table_gives_the_same_merges(tmp_path):
    text = corpus("taylorswift.txt")
    table = tmp_path / "swift.counts"
    save_counts(table, *count_chunks(text, "gpt2"))
    assert train(None, 500, pattern="gpt2", counts=table).merges == train(text, 500, pattern="gpt2").merges
    with pytest.raises(ValueError, match="counted with pattern"):
        train(None, 500, pattern="gpt4", counts=table)
    with pytest.raises(ValueError, match="not both"):
        train(text, 500, pattern="gpt2", counts=table)


def test_a_table_whose_chunks_are_not_the_patterns_is_refused(tmp_path):
    """A table edited by hand (or counted elsewhere) with "ab cd" under gpt4 trained merges across
    the space with exit 0, and "" was taken as a chunk; a custom regex's chunks cannot be
    checked alone (they may depend on what follows), so only "" is refused there."""
    counts, meta = count_chunks("ab cd ab cd", "gpt4")
    for chunk, says in [
        ("ab cd", r"'ab cd' is not one chunk of the pattern .*'ab' \| ' cd'"),
        ("", "empty chunk"),
    ]:
        with pytest.raises(ValueError, match=says):
            train(None, 260, counts=({**counts, chunk: 3}, meta))
    table = tmp_path / "hand.counts"
    save_counts(table, {**counts, "xy z": 2}, meta)
    with pytest.raises(ValueError, match=f"{table}: the chunk 'xy z' is not one chunk"):
        train(None, 260, counts=table)
    lookahead = r"\w+ (?=\w+ \w+)|\w+|\s"
    counts, meta = count_chunks("a b c d", lookahead)
    assert "a " in counts  # alone, "a " is "a", " ": a custom regex's chunk is not re-split
    assert train(None, 258, regex=lookahead, counts=(counts, meta), min_frequency=1).merges


# what the named patterns tell apart: whitespace runs of each kind, contractions, cases, marks
SPLIT_PIECES = [
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "\xa0",
    "\u3000",
    " " * 5,
    "\n" * 3,
    " \n ",
    "a",
    "Hello",
    "WORLD",
]


SPLIT_PIECES += [
    "'s",
    "'LL",
    "'",
    "12345",
    "!",
    "?!",
    "/",
    "é",
    "東京",
    "🙂",
    "\u0301",
    "x\n",
    "  y",
    "ǅ",
    "\u2028",
]


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.one_of(st.sampled_from(SPLIT_PIECES), st.text(max_size=3)), max_size=20).map("".join))
def test_a_named_patterns_chunk_splits_alone_into_itself(text):
    """What the check above rests on (train._check_chunks_of)."""
    for pattern in PATTERNS:
        if pattern != "none":
            findall = compile_split(pattern).findall
            for chunk in findall(text):
                assert findall(chunk) == [chunk], (pattern, text, chunk)


def test_stops_early_and_says_why():
    tok = train("hello hello world", 1000)
    meta = tok.metadata
    assert meta["stopped_early"] is True
    assert "2 or more times" in meta["stop_reason"]
    assert len(tok.merges) == meta["statistics"]["merges"] == 4  # h-e, l-l, he-ll, hell-o in " hello"
    all_merged = train("ab ab", 300, min_frequency=1)
    assert "no pairs left" in all_merged.metadata["stop_reason"]
    assert reference_merges(Counter(chunks_of("ab ab", "gpt4")).items(), 300) == all_merged.merges


def test_an_empty_corpus_is_named_as_the_stop_reason(tmp_path):
    """It said "no pair occurs 2 or more times", of a corpus with no text (as extend did)."""
    (tmp_path / "empty.txt").write_text("")
    for corpus in ("", [], [""], tmp_path / "empty.txt"):  # noqa: F402 - a corpus, not the helper
        tok = train(corpus, 300)
        assert tok.metadata["stop_reason"] == "the corpus is empty: no text to learn merges from"
    assert train("", 300, min_chunk_count=2).metadata["stop_reason"].startswith("the corpus is empty")
    assert train("ab cd", 300).metadata["stop_reason"].startswith("no pair")


def test_a_lone_surrogate_in_the_text_is_named_with_the_fix():
    """It said only "surrogates not allowed", not which character or what to do."""
    for corpus in ("ab\ud800ab ab", ["x\udfff"]):  # noqa: F402 - a corpus, not the helper
        with pytest.raises(ValueError, match="lone surrogate, U\\+D[89A-F][0-9A-F]{2}; remove or replace"):
            train(corpus, 300)


def test_train_signature_is_the_issues():
    """train(corpus, vocab_size, *, pattern="gpt4", special_tokens=None, tie_break="first",
    min_frequency=2, workers=None, progress=None): pattern's default was None."""
    import inspect

    params = inspect.signature(train).parameters
    want = {"pattern": "gpt4", "special_tokens": None, "tie_break": "first", "min_frequency": 2}
    want |= {"workers": None, "progress": None}
    for name, default in want.items():
        assert params[name].default == default and params[name].kind is inspect.Parameter.KEYWORD_ONLY
    assert train("ab ab cd", 258, regex=r"\w+|\s").metadata["training"]["pattern"] == r"\w+|\s"
    with pytest.raises(ValueError, match="not both"):
        train("ab ab cd", 258, pattern="gpt2", regex=r"\w+|\s")


def test_min_frequency_one_keeps_merging_singletons_like_minbpe():
    text = "the quick brown fox"
    counts = Counter(chunks_of(text, "gpt4"))
    tok = train(text, 280, min_frequency=1)
    assert tok.merges == reference_merges(counts.items(), 280, "first", 1)
    assert len(tok.merges) == 15  # th, the; " q".." quick"; " b".." brown"; " f", " fo", " fox"


def test_duplicate_tokens_are_kept_exact_and_encoded_with_the_first_id():
    # Merges made directly (the heap trainer did not make duplicates on the corpora):
    # 256 = "ab", 257 = "bc", 258 = "ab"+"c", 259 = "a"+"bc" -> both "abc".
    tok = Tokenizer.from_merges([(97, 98), (98, 99), (256, 99), (97, 257)], "gpt4")
    assert tok.duplicate_ids == {259: 258}
    assert tok.decode_single_token_bytes(259) == b"abc"
    assert tok.encode("abc") == [258]
    assert tok.mergeable_ranks[b"abc"] == 258 and len(tok.mergeable_ranks) == 259


def test_duplicate_tokens_in_the_tiktoken_export(tmp_path):
    """The .tiktoken file keeps one line per distinct bytes (tiktoken's ranks are keyed by
    bytes); the merge list in STEM.json keeps the later id, so decoding it still works."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    tok = Tokenizer.from_merges([(97, 98), (98, 99), (256, 99), (97, 257)], "gpt4", ["<|end|>"])
    tok.save(tmp_path / "dup")
    ranks = load_tiktoken_bpe(str(tmp_path / "dup.tiktoken"))
    assert len(ranks) == 259 and ranks[b"abc"] == 258 and 259 not in ranks.values()
    enc = tiktoken.Encoding("dup", pat_str=resolve_pattern("gpt4"), mergeable_ranks=ranks, special_tokens={})
    assert enc.encode("abcabc ab") == tok.encode("abcabc ab")
    again = Tokenizer.load(tmp_path / "dup")
    assert again.merges == tok.merges and again.decode_single_token_bytes(259) == b"abc"
    assert again.special_tokens == {"<|end|>": 260}


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"vocab_size": 255}, "vocab_size must be between 256"),
        ({"vocab_size": "300"}, "vocab_size must be an integer"),
        ({"vocab_size": True}, "vocab_size must be an integer"),
        ({"tie_break": "random"}, "tie_break must be one of"),
        ({"min_frequency": 0}, "min_frequency"),
        ({"special_tokens": "<|eot|>"}, "list of strings"),
        ({"special_tokens": [""]}, "non-empty"),
        ({"special_tokens": ["<a>", "<a>"]}, "unique"),
        ({"pattern": "(unclosed"}, "invalid split pattern"),
        ({"pattern": "(a)|b"}, "capturing group"),
        ({"workers": 0}, "workers"),
        ({"min_chunk_count": 0}, "min_chunk_count"),
    ],
)
def test_bad_parameters_are_rejected_clearly(kwargs, message):
    args = {"vocab_size": 300, **kwargs}
    with pytest.raises(ValueError, match=message):
        train("some text", **args)


def test_bad_corpora_are_rejected_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.txt"):
        train(tmp_path / "nowhere.txt", 300)
    with pytest.raises(ValueError, match="bytes"):
        train(b"raw bytes", 300)
    with pytest.raises(ValueError, match="document 1"):
        train(["ok", 5], 300)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text\n" * 3 + b"\xff oops")
    with pytest.raises(ValueError, match=r"bad.txt: not valid UTF-8 at byte offset 30"):
        train(bad, 300)


def test_special_tokens_are_a_bounded_list():
    """A dict {"<|a|>": 5} trained with its keys at other ids, silently; 20,000 tokens took 3.6 s
    to check for repeats (quadratic) and a generator that never ends never returned."""
    with pytest.raises(ValueError, match=r"special_tokens must be a list of strings \(their ids follow"):
        train("hello world " * 5, 260, special_tokens={"<|a|>": 5})
    with pytest.raises(ValueError, match="special_tokens: more than 65,536, the most a tokenizer file"):
        train("hello world " * 5, 260, special_tokens=(f"<{i}>" for i in itertools.count()))
    started = time.perf_counter()
    with pytest.raises(ValueError, match="repeated: '<1>'"):
        train("hello world " * 5, 260, special_tokens=[f"<{i}>" for i in range(65_535)] + ["<1>"])
    assert time.perf_counter() - started < 2


def test_a_special_token_of_whitespace_alone_is_refused():
    """`train --special ' '` trained, then every encode of a text with a space failed ("disallowed
    special token ' '"); a token holding whitespace beside other characters is fine."""
    for token in (" ", "\n", "\t \n", "\u3000"):
        with pytest.raises(ValueError, match=r"is only whitespace: .* choose a marker such as '<\|pad\|>'"):
            train("hello world " * 5, 260, special_tokens=["<|a|>", token])
    tok = train("hello world " * 5, 260, special_tokens=["<| |>", " <x>"])
    assert tok.encode("hello world") == tok.encode_ordinary("hello world")


def test_a_min_chunk_count_that_drops_every_chunk_says_so():
    """It stopped with "no pair occurs 2 or more times", as if the corpus had no pairs."""
    tok = train(["hello world, hello there"] * 3, 300, min_chunk_count=10**23)
    assert (
        tok.metadata["stop_reason"]
        == "min_chunk_count=100000000000000000000000 dropped every chunk: none occurs that often"
    )
    tok = train(["hello world, hello there"] * 3, 300, min_chunk_count=2)
    assert "min_chunk_count" not in (tok.metadata["stop_reason"] or "")


def test_vocab_size_256_is_the_bytes_alone_as_minbpe_and_rustbpe(tmp_path):
    # minbpe (`assert vocab_size >= 256`) and rustbpe both train 256 as zero merges; it was
    # refused ("vocab_size must be between 257 ...").
    rustbpe = pytest.importorskip("rustbpe")
    tok = train("hello hello", 256)
    assert tok.merges == [] and tok.metadata["stopped_early"] is False
    rb = rustbpe.Tokenizer()
    rb.train_from_iterator(iter(["hello hello"]), 256, pattern=resolve_pattern("gpt4"))
    assert sorted(rank for _, rank in rb.get_mergeable_ranks()) == list(range(256))
    path = tmp_path / "c.txt"
    path.write_text("hello hello\n")
    out = tmp_path / "bytes"
    assert (
        cli_main(["train", str(path), "--vocab-size", "256", "--special", "<|e|>", "-q", "-o", str(out)]) == 0
    )
    again = Tokenizer.load(out)
    assert again.encode("hi<|e|>", allowed_special="all") == [104, 105, 256]


# ----- arguments at the boundary ---------------------------------------------------------------


def test_numpy_integers_are_sizes_as_ints_are():
    """A sweep over np.arange gave np.int64 vocabulary sizes, refused as 'must be an integer'."""
    np = pytest.importorskip("numpy")
    from tokenizer.extend import extend

    text = "the cat sat on the mat, the cat ran " * 40
    want = train(text, 280, min_frequency=2)
    got = train(
        text, np.int64(280), min_frequency=np.int32(2), min_chunk_count=np.int64(1), workers=np.int8(1)
    )
    assert got.merges == want.merges and type(got.n_vocab) is int
    assert learn_merges({"aaab": 3}, np.int64(2)).merges == learn_merges({"aaab": 3}, 2).merges
    assert extend("gpt2", text, np.int64(5)).n_vocab == extend("gpt2", text, 5).n_vocab
    for bad in (True, 280.0, "280", np.float64(280)):
        with pytest.raises(ValueError, match="vocab_size must be an integer"):
            train(text, bad)


def test_a_set_corpus_a_surrogate_special_and_a_progress_that_is_no_function_are_refused_first():
    """A set trained in its arbitrary order (minbpe's tie rule follows the texts' order); a lone
    surrogate special token raised a bare UnicodeEncodeError; progress=5 failed mid-count with
    "'int' object is not callable"."""
    with pytest.raises(ValueError, match="corpus is a set"):
        train({"the cat", "a dog"}, 260)
    with pytest.raises(ValueError, match=r"lone surrogate \(U\+D800 at 3\)"):
        train("the cat", 260, special_tokens=["<|a\ud800|>"])
    with pytest.raises(TypeError, match="progress must be a function"):
        train("the cat", 260, progress=5)
    with pytest.raises(TypeError, match="progress must be a function"):
        count_chunks("the cat", progress="bar")

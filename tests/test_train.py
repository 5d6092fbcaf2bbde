"""Heap trainer: exact against the reference (minbpe rules) and rustbpe, files, CLI, trace."""

from __future__ import annotations

import importlib
import itertools
import json
import subprocess
import sys
import time
from collections import Counter
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA, ROOT
from tests.strategies import tie_heavy_texts
from tokenizer.cli import main as cli_main
from tokenizer.core import Tokenizer
from tokenizer.counting import count_chunks, load_counts, save_counts
from tokenizer.patterns import NO_SPLIT_REGEX, compile_pattern, compile_split, resolve_pattern
from tokenizer.reference import merge, pair_counts, reference_merges, reference_train
from tokenizer.train import learn_merges, train

heap_module = importlib.import_module("tokenizer._heap")
store_module = importlib.import_module("tokenizer._wordstore")
PATTERNS = ["gpt2", "gpt4", "o200k", "none"]


def corpus(name: str, limit: int | None = None) -> str:
    path = CORPORA / name
    if not path.exists():
        pytest.skip(f"corpus {name} not found at {path}")
    return path.read_text(encoding="utf-8")[:limit]


def chunks_of(text: str, pattern: str) -> list[str]:
    if pattern == "none":
        return [text] if text else []
    return compile_pattern(pattern).findall(text)


tie_heavy = tie_heavy_texts()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=tie_heavy,
    pattern=st.sampled_from(PATTERNS),
    tie_break=st.sampled_from(["first", "lexical"]),
    min_frequency=st.sampled_from([1, 2]),
    merges=st.integers(1, 40),
    bulk=st.booleans(),
    per_block=st.sampled_from([1, 2, 3, 32]),
    budget=st.sampled_from([1, 2, 5, 1 << 16]),
    batch=st.sampled_from([1, 7, 1 << 20]),
    dense=st.sampled_from([0, 1 << 20]),
)
@example(
    text="aaaaa ab aaa b aaaa a aa",
    pattern="none",
    tie_break="first",
    min_frequency=1,
    merges=10,
    bulk=True,
    per_block=1,
    budget=1 << 16,
    batch=1 << 20,
    dense=0,
)
def test_heap_equals_reference(
    text, pattern, tie_break, min_frequency, merges, bulk, per_block, budget, batch, dense
):
    """Also with every storage and bookkeeping knob small: words per block, pairs tracked at
    once (a budget of 1 recounts nearly every merge), characters per numpy batch."""
    counts = Counter(chunks_of(text, pattern))
    with (
        mock.patch.object(heap_module, "BULK_MIN_BLOCKS", 1 if bulk else 1 << 60),  # both merge paths
        mock.patch.object(store_module, "WORDS_PER_BLOCK", per_block),
        mock.patch.object(heap_module, "PAIR_BUDGET", budget),
        mock.patch.object(store_module, "BATCH_CHARS", batch),
        mock.patch.object(store_module, "DENSE_PAIRS", dense),
    ):
        got = learn_merges(counts, merges, tie_break=tie_break, min_frequency=min_frequency)
    want = reference_merges(counts.items(), 256 + merges, tie_break, min_frequency)
    assert got.merges == want
    assert (got.stop_reason is None) == (len(want) == merges)


def test_first_stays_exact_when_tracked_pairs_run_out(monkeypatch):
    """A tiny pair budget makes the trainer count every pair again many times (each time the
    pairs it tracks are spent), and small batches and blocks cut the numpy work everywhere."""
    counts = Counter(chunks_of(corpus("taylorswift.txt"), "gpt4"))
    monkeypatch.setattr(heap_module, "PAIR_BUDGET", 16)
    monkeypatch.setattr(store_module, "BATCH_CHARS", 3000)
    monkeypatch.setattr(store_module, "WORDS_PER_BLOCK", 5)
    monkeypatch.setattr(heap_module, "BULK_MIN_BLOCKS", 10)
    got = learn_merges(counts, 300, min_frequency=2)
    assert got.recounts > 5
    assert got.merges == reference_merges(counts.items(), 256 + 300, "first", 2)


def test_big_inputs_track_more_pairs_with_the_same_merges(monkeypatch):
    """From LARGE_WORDS words on, LARGE_PAIR_BUDGET pairs are tracked (fewer recounts): the
    merges stay the reference's, and the bigger budget recounts less."""
    counts = Counter(chunks_of(corpus("taylorswift.txt"), "gpt4"))
    monkeypatch.setattr(heap_module, "PAIR_BUDGET", 16)
    monkeypatch.setattr(heap_module, "LARGE_PAIR_BUDGET", 64)
    want = reference_merges(counts.items(), 256 + 300, "first", 2)
    small = learn_merges(counts, 300, min_frequency=2)
    monkeypatch.setattr(heap_module, "LARGE_WORDS", 100)  # every input is big
    large = learn_merges(counts, 300, min_frequency=2)
    assert small.merges == large.merges == want
    assert small.recounts > large.recounts > 0


@pytest.mark.parametrize("narrow", [0, 1 << 16])
def test_numpy_reads_every_id_as_its_code_point(monkeypatch, narrow):
    """16-bit codes while ids fit (lone surrogates are ids too), 32-bit past that: the same merges."""
    monkeypatch.setattr(store_module, "NARROW_IDS", narrow)
    store = store_module.WordStore()
    store.np, store.token_len = store_module.load_numpy(), [1] * 0xE000
    text = "a\ud800\udc00\udfff\uffff\xff\xfe\x00" + ("\U0010ffff" if not narrow else "")
    assert store.codes(text).tolist() == [ord(c) for c in text]
    counts = Counter(chunks_of(corpus("taylorswift.txt"), "gpt4"))
    monkeypatch.setattr(heap_module, "BULK_MIN_BLOCKS", 10)
    got = learn_merges(counts, 300, min_frequency=2)
    assert got.merges == reference_merges(counts.items(), 256 + 300, "first", 2)


def test_lexical_stays_exact_when_tracked_pairs_run_out(monkeypatch):
    rustbpe = pytest.importorskip("rustbpe")
    text = corpus("udhr_sample.txt", 200_000)
    monkeypatch.setattr(heap_module, "PAIR_BUDGET", 64)
    monkeypatch.setattr(store_module, "BATCH_CHARS", 5000)
    monkeypatch.setattr(heap_module, "BULK_MIN_BLOCKS", 8)
    monkeypatch.setattr(store_module, "DENSE_PAIRS", 1 << 16)  # table below 256 ids, sorted above
    tok = train(text, 1500, tie_break="lexical", min_frequency=1)
    assert tok.metadata["statistics"]["pair_recounts"] > 5
    rb = rustbpe.Tokenizer()
    rb.train_from_iterator(iter([text]), 1500, pattern=resolve_pattern("gpt4"))
    theirs = sorted(rb.get_mergeable_ranks(), key=lambda item: item[1])
    assert [token for token, _ in theirs] == [tok.decode_single_token_bytes(i) for i in range(1500)]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", 1 << 63, None])
def test_bad_chunk_counts_are_rejected_clearly(bad):
    with pytest.raises(ValueError, match="chunk counts must be integers"):
        learn_merges({"ab": 2, "cd": bad}, 5)


@settings(max_examples=60, deadline=None)
@given(text=tie_heavy, pattern=st.sampled_from(PATTERNS), merges=st.integers(1, 20))
def test_reference_dedup_equals_minbpe_order(text, pattern, merges):
    """Distinct chunks in first-occurrence order give minbpe's result (every chunk, count 1)."""
    chunks = chunks_of(text, pattern)
    literal = reference_merges([(c, 1) for c in chunks], 256 + merges, "first", 1)
    assert reference_train(chunks, 256 + merges) == literal


def test_first_equals_reference_on_taylorswift():
    counts = Counter(chunks_of(corpus("taylorswift.txt"), "gpt4"))
    want = reference_merges(counts.items(), 256 + 100, "first", 2)
    tok = train(corpus("taylorswift.txt"), 256 + 100)
    assert tok.merges == want
    assert tok.metadata["statistics"]["ties"] > 0  # ties happened and were decided as minbpe does


def test_first_equals_reference_with_no_pretokenization():
    text = corpus("tinyshakespeare.txt", 3000)
    tok = train(text, 256 + 60, pattern="none", min_frequency=1)
    assert tok.merges == reference_merges([(text, 1)], 256 + 60, "first", 1)
    assert any(b" " in tok.decode_single_token_bytes(i)[1:-1] for i in range(256, 316))  # merges cross spaces


@pytest.mark.parametrize(
    "name,limit,vocab_sizes",
    [
        ("taylorswift.txt", None, [300, 1000, 4000]),
        ("tinyshakespeare.txt", 300_000, [512, 2048]),
        ("udhr_sample.txt", 300_000, [512, 3000]),
        ("emoji_sequences.txt", None, [1000]),
    ],
)
def test_lexical_equals_rustbpe(name, limit, vocab_sizes):
    rustbpe = pytest.importorskip("rustbpe")
    text = corpus(name, limit)
    for vocab_size in vocab_sizes:
        tok = train(text, vocab_size, tie_break="lexical", min_frequency=1)
        rb = rustbpe.Tokenizer()
        rb.train_from_iterator(iter([text]), vocab_size, pattern=resolve_pattern("gpt4"))
        theirs = sorted(rb.get_mergeable_ranks(), key=lambda item: item[1])
        ours = [tok.decode_single_token_bytes(i) for i in range(vocab_size)]
        assert [token for token, _ in theirs] == ours, f"{name} at vocab {vocab_size}"


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
    for corpus in ("", [], [""], tmp_path / "empty.txt"):
        tok = train(corpus, 300)
        assert tok.metadata["stop_reason"] == "the corpus is empty: no text to learn merges from"
    assert train("", 300, min_chunk_count=2).metadata["stop_reason"].startswith("the corpus is empty")
    assert train("ab cd", 300).metadata["stop_reason"].startswith("no pair")


def test_a_lone_surrogate_in_the_text_is_named_with_the_fix():
    """It said only "surrogates not allowed", not which character or what to do."""
    for corpus in ("ab\ud800ab ab", ["x\udfff"]):
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


def test_trainer_records_duplicates_when_two_merges_make_the_same_bytes(monkeypatch):
    """Duplicate detection in the trainer, checked by merging against the vocabulary it builds."""
    result = learn_merges({"aab": 5, "abab": 1}, 10, min_frequency=1)
    vocab = [bytes([b]) for b in range(256)]
    for left, right in result.merges:
        vocab.append(vocab[left] + vocab[right])
    seen: dict[bytes, int] = {}
    want = {}
    for i, token in enumerate(vocab):
        if token in seen:
            want[i] = seen[token]
        seen.setdefault(token, i)
    assert result.duplicates == want


@settings(max_examples=40, deadline=None)
@given(
    text=tie_heavy,
    pattern=st.sampled_from(PATTERNS),
    tie_break=st.sampled_from(["first", "lexical"]),
)
def test_trace_counts_equal_a_full_recount_at_every_step(text, pattern, tie_break):
    steps = []
    tok = train(
        text or "x", 256 + 25, pattern=pattern, tie_break=tie_break, min_frequency=1, trace=steps.append
    )
    counts = Counter(chunks_of(text or "x", pattern))
    words = [list(c.encode()) for c in counts]
    weights = list(counts.values())
    assert [s["pair"] for s in steps] == tok.merges
    for step in steps:
        stats = pair_counts(words, weights)
        best = max(stats.values())
        assert step["count"] == stats[step["pair"]] == best
        assert step["new_id"] == 256 + step["step"]
        assert all(stats[p] == c for p, c in step["top_pairs"])
        assert step["top_pairs"][0] == (step["pair"], best)
        assert sorted(c for _, c in step["top_pairs"]) == sorted(stats.values())[-10:]
        tied = [p for p, c in stats.items() if c == best and p != step["pair"]]
        assert set(step["tied_with"]) <= set(tied) and len(step["tied_with"]) == min(5, len(tied))
        assert step["rule"] == (tie_break if tied else "count")
        words = [merge(w, step["pair"], step["new_id"]) for w in words]


def test_progress_reports_both_phases(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text(corpus("taylorswift.txt"), encoding="utf-8")
    calls = []
    train(path, 400, progress=lambda *a: calls.append(a))
    phases = [c[0] for c in calls]
    assert "count" in phases and "merge" in phases
    last_count = [c for c in calls if c[0] == "count"][-1]
    assert last_count[1] == last_count[2] == path.stat().st_size
    last_merge = calls[-1]
    assert last_merge[:3] == ("merge", 144, 144) and last_merge[3] > 0


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


def test_cli_count_then_train(tmp_path):
    src = tmp_path / "swift.txt"
    src.write_text(corpus("taylorswift.txt"), encoding="utf-8")
    out = tmp_path / "swift"
    assert (
        cli_main(
            ["train", str(src), "--vocab-size", "400", "--special", "<|endoftext|>", "-q", "-o", str(out)]
        )
        == 0
    )
    tok = Tokenizer.load(out)
    assert len(tok.merges) == 144 and tok.special_tokens == {"<|endoftext|>": 400}
    assert tok.merges == train(src.read_text(), 400).merges
    table = tmp_path / "swift.counts"
    assert cli_main(["count", str(src), "--pattern", "gpt4", "-q", "-o", str(table)]) == 0
    out2 = tmp_path / "again"
    assert cli_main(["train", "--counts", str(table), "--vocab-size", "400", "-q", "-o", str(out2)]) == 0
    assert Tokenizer.load(out2).merges == tok.merges


def test_cli_reports_user_errors(tmp_path, capsys):
    assert (
        cli_main(
            ["train", str(tmp_path / "missing.txt"), "--vocab-size", "300", "-q", "-o", str(tmp_path / "x")]
        )
        == 2
    )
    assert "missing.txt" in capsys.readouterr().err
    assert cli_main(["train", "--vocab-size", "300", "-q", "-o", str(tmp_path / "x")]) == 2
    assert "--counts" in capsys.readouterr().err


def test_capped_table_trains_and_says_so(tmp_path, capsys):
    path = tmp_path / "t.txt"
    path.write_text(corpus("tinyshakespeare.txt"), encoding="utf-8")
    tok = train(path, 400, max_chunks=2000, workers=1)
    stats, training = tok.metadata["statistics"], tok.metadata["training"]
    assert training["max_chunks"] == 2000 and stats["capped_chunks"] > 0
    assert stats["unique_chunks"] <= 2000 and len(tok.merges) == 144
    exact = train(path, 400, workers=1)
    assert exact.metadata["training"]["max_chunks"] is None
    # Approximate counts, a slightly different vocabulary (measured: 82 % the same at a cap
    # of 2,000 of 25,000 distinct chunks, 98 % at 12,000).
    ours = {tok.decode_single_token_bytes(i) for i in range(256, 400)}
    theirs = {exact.decode_single_token_bytes(i) for i in range(256, 400)}
    assert tok.merges[0] == exact.merges[0] and 0.75 <= len(ours & theirs) / 144 < 1
    with pytest.raises(ValueError, match="max_chunks bounds counting"):
        train(None, 300, counts=count_chunks("a b c", "gpt4"), max_chunks=10)
    out = str(tmp_path / "c.counts")
    assert cli_main(["count", str(path), "--max-chunks", "1", "-q", "-o", out]) == 2
    assert "error: --max-chunks must be an integer >= 2" in capsys.readouterr().err  # the flag typed
    assert cli_main(["count", str(path), "--max-chunks", "3000", "-q", "-o", out]) == 0
    assert cli_main(["train", "--counts", out, "--vocab-size", "300", "-q", "-o", str(tmp_path / "m")]) == 0


def test_first_occurrence_decides_ties_not_creation_order():
    # PEERS.md's example: minbpe merges "zy" first, rustbpe " a".
    assert train("zy zy ab ab", 257, min_frequency=1).merges == [(122, 121)]
    assert train("zy zy ab ab", 257, tie_break="lexical", min_frequency=1).merges == [(32, 97)]


def _tracked_pairs_are_exact(trainer) -> None:
    """After a merge: each tracked pair's count equals a recount and its block list holds every
    block where it occurs; every pair that is not tracked is below the floor."""
    stats, lists = trainer.count_pairs_python()
    for k, c in trainer.pc.items():
        assert stats.get(k, 0) == c, f"pair {k!r}"
        assert set(lists.get(k, ())) <= set(trainer.where[k]), f"pair {k!r}"
    assert all(c < trainer.floor for k, c in stats.items() if k not in trainer.pc)


def _merge_checking_every_step(counts: Counter, merges: int, first: bool, per_block: int, bulk: bool) -> None:
    with (
        mock.patch.object(store_module, "WORDS_PER_BLOCK", per_block),
        mock.patch.object(heap_module, "BULK_MIN_BLOCKS", 1 if bulk else 1 << 60),
    ):
        blocks, wcounts = store_module.pack_words(counts.items(), per_block)
        trainer = heap_module._HeapTrainer(blocks, wcounts, first, 1)
        trainer.run(merges, None, lambda _step: _tracked_pairs_are_exact(trainer))
    _tracked_pairs_are_exact(trainer)


@pytest.mark.parametrize("per_block", [1, 3, 8])
@pytest.mark.parametrize("bulk", [False, True])
def test_every_merge_leaves_exact_counts_on_real_text(per_block, bulk):
    """Both merge paths (word by word: neighbours' weights summed per character; numpy) keep
    every tracked count exact, merge after merge, on English, Python and multilingual text."""
    text = "".join(
        corpus(name, 5_000) for name in ("pg_en_medium.txt", "code_python.txt", "pg_multilingual.txt")
    )
    counts = Counter(chunks_of(text, "gpt4"))
    _merge_checking_every_step(counts, 80, first=per_block != 3, per_block=per_block, bulk=bulk)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=tie_heavy,
    pattern=st.sampled_from(PATTERNS),
    per_block=st.sampled_from([1, 2, 5]),
    bulk=st.booleans(),
)
def test_every_merge_leaves_exact_counts(text, pattern, per_block, bulk):
    """Runs of one letter ("aaaa": touching occurrences), pairs at a block's start and end."""
    _merge_checking_every_step(
        Counter(chunks_of(text, pattern)), 30, first=True, per_block=per_block, bulk=bulk
    )


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


def test_cli_train_and_count_read_stdin_as_dash(tmp_path):
    # `train - ...` said 'corpus file not found: -' (count too): the corpus now comes from stdin,
    # the same result as the file; stdin's bad UTF-8 and a repeated '-' are one-line errors.
    text = corpus("taylorswift.txt")[:40_000]
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")

    def run(*args: str, stdin: bytes) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "tokenizer", *args, "-q"]
        return subprocess.run(command, input=stdin, capture_output=True, cwd=ROOT, check=False)

    for stem, source in [("piped", "-"), ("file", str(path))]:
        done = run("train", source, "--vocab-size", "300", "-o", str(tmp_path / stem), stdin=text.encode())
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "piped.tiktoken").read_bytes() == (tmp_path / "file.tiktoken").read_bytes()
    done = run("count", "-", "-o", str(tmp_path / "c.counts"), stdin=text.encode())
    assert done.returncode == 0, done.stderr
    assert load_counts(tmp_path / "c.counts")[0] == count_chunks(text)[0]
    bad = run("train", "-", "--vocab-size", "300", "-o", str(tmp_path / "x"), stdin=b"ok\n\xff")
    assert bad.returncode == 2 and bad.stderr.decode().strip() == (
        "error: stdin: not valid UTF-8 at byte offset 3 (FF); convert it to UTF-8 first"
    )
    twice = run("train", "-", "-", "--vocab-size", "300", "-o", str(tmp_path / "x"), stdin=b"ab")
    assert twice.returncode == 2 and "'-' (stdin) is given twice" in twice.stderr.decode()


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

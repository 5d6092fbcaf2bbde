"""The heap trainer (tokenizer/_heap.py, _wordstore.py) is exact: its merges equal the reference
trainer's (minbpe's rules, `first` ties) and rustbpe's (`lexical` ties), with every storage and
bookkeeping knob made small (words per block, pairs tracked at once, numpy batches), and the
pair counts it keeps equal a full recount after every merge.
"""

from __future__ import annotations

import importlib
from collections import Counter
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers import PATTERNS, chunks_of, corpus
from tests.strategies import tie_heavy_texts
from tokenizer.patterns import resolve_pattern
from tokenizer.reference import merge, pair_counts, reference_merges, reference_train
from tokenizer.train import learn_merges, train

heap_module = importlib.import_module("tokenizer._heap")


store_module = importlib.import_module("tokenizer._wordstore")


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

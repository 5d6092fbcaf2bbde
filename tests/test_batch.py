"""The numpy batch merge (`tokenizer._batch`) gives the scan's ids, and so tiktoken's.

Three layers, each against a straightforward reference: the pair table against every split
of every token computed in Python; the batch merge against `_bpe_scan` chunk by chunk (real
text, random bytes, tokenizers trained here with duplicate merges); and `encode_ordinary` /
stats on the batch path against tiktoken and against the pure-Python path. Thresholds are
lowered by a fixture so that small test inputs take the batch path.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import corpus_text
from tests.oracles import tiktoken_reference
from tokenizer import Tokenizer, _batch, core, get_encoding
from tokenizer._bpe import HEAP_THRESHOLD, _bpe_scan, bpe_merge
from tokenizer.stats import chunk_lengths, count_tokens
from tokenizer.train import train

ENCODINGS = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
TEXTS = ["udhr_sample.txt", "pg_multilingual.txt", "code_python.txt", "emoji_sequences.txt"]


@pytest.fixture
def batch_always(monkeypatch):
    """Every encode of a few chunks takes the batch path, table built whatever the size."""
    monkeypatch.setattr(_batch, "BATCH_MIN_CHUNKS", 1)
    monkeypatch.setattr(_batch, "TABLE_BYTES_PER_RANK", 0)
    monkeypatch.delenv(_batch.PURE_PYTHON_ENV, raising=False)


def _fresh(name: str) -> Tokenizer:
    """A new tokenizer with the reference encoding's ranks and pattern (an empty cache, no table)."""
    ref = get_encoding(name)
    return Tokenizer(ref.mergeable_ranks, ref.pattern, name=name)


def _splits_reference(ranks: dict[bytes, int]) -> dict[tuple[int, int], int]:
    pairs = {}
    for token, rank in ranks.items():
        for k in range(1, len(token)):
            left, right = ranks.get(token[:k]), ranks.get(token[k:])
            if left is not None and right is not None:
                pairs[left, right] = rank
    return pairs


def _check_table(ranks: dict[bytes, int]) -> None:
    table = _batch.PairTable(ranks)
    pairs = _splits_reference(ranks)
    left = np.array([a for a, _ in pairs], dtype=np.int64)
    right = np.array([b for _, b in pairs], dtype=np.int64)
    assert table.lookup(left, right).tolist() == list(pairs.values())
    rng = np.random.default_rng(len(ranks))
    ids = np.array(sorted(set(ranks.values())), dtype=np.int64)
    left, right = rng.choice(ids, 50_000), rng.choice(ids, 50_000)
    expected = [
        pairs.get((a, b), _batch._NO_RANK) for a, b in zip(left.tolist(), right.tolist(), strict=True)
    ]
    assert table.lookup(left, right).tolist() == expected
    byte_pairs = {bytes([k >> 8, k & 255]): table.byte_pairs[k] for k in range(65536)}
    assert {t: r for t, r in byte_pairs.items() if r != _batch._NO_RANK} == {
        t: r for t, r in ranks.items() if len(t) == 2
    }


@pytest.mark.parametrize("name", ENCODINGS)
def test_pair_table_holds_every_split_of_every_token(name):
    _check_table(get_encoding(name).mergeable_ranks)


def test_pair_table_with_zero_bytes_long_tokens_and_gaps():
    """Tokens ending in NUL bytes (fixed-width strings must not drop them), tokens longer
    than MATRIX_WIDTH (split in Python) and ids with gaps."""
    ranks = {bytes([b]): b for b in range(256)}
    extra = [b"\x00\x00", b"a\x00", b"\x00a", b"a\x00\x00", b"ab", b"abab", b"\x00" * 9, b"a" + b"\x00" * 8]
    extra += [b"x" * n for n in range(2, 80)] + [b"ab" * n for n in range(3, 40)]
    for k, token in enumerate(extra):
        ranks.setdefault(token, 300 + 3 * k)
    _check_table(ranks)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**62), unique=True, max_size=400), st.booleans())
def test_int_map_answers_as_a_dict(keys, crowd):
    """Every key is found and every other key is missing, also where many keys share home
    slots at the end of the table, so that their run goes past the last home slot."""
    if crowd:  # keys whose hashes are the largest: the top slots
        keys = sorted(range(1, 1 << 16), key=lambda k: -((k * _batch._GOLDEN) % 2**64))[: len(keys)] or keys
    values = [3 * k + 1 for k in range(len(keys))]
    table = _batch._IntMap(np, np.array(keys, dtype=np.int64), np.array(values, dtype=np.int64))
    expected = dict(zip(keys, values, strict=True))
    query = keys + [k + 1 for k in keys] + [0, 2**62 + 5]
    found = table.get(np.array(query, dtype=np.int64), -7).tolist()
    assert found == [expected.get(q, -7) for q in query]
    assert table.slot_keys[-1] == -1  # every probe stops there


def _merge_check(ranks: dict[bytes, int], pieces: list[bytes]) -> None:
    table = _batch.PairTable(ranks)
    expected = [_bpe_scan(piece, ranks) for piece in pieces]
    assert _batch.merge_ids(pieces, table) == expected
    assert _batch.merge_lengths(pieces, table) == list(map(len, expected))


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("text", TEXTS)
def test_batch_merge_equals_the_scan_on_real_chunks(name, text):
    tok = get_encoding(name)
    chunks = sorted(set(tok.split(corpus_text(text, 300_000))))
    pieces = [c.encode() for c in chunks if 1 < len(c.encode()) <= HEAP_THRESHOLD]
    _merge_check(tok.mergeable_ranks, pieces)


def test_batch_merge_in_several_batches(monkeypatch):
    monkeypatch.setattr(_batch, "BATCH_BYTES", 1000)
    tok = get_encoding("cl100k_base")
    chunks = sorted(set(tok.split(corpus_text("udhr_sample.txt", 100_000))))
    _merge_check(tok.mergeable_ranks, [c.encode() for c in chunks if 1 < len(c.encode()) <= HEAP_THRESHOLD])


_TRAINED: dict[str, Tokenizer] = {}


def _trained(tie_break: str) -> Tokenizer:
    """A small tokenizer trained here: its merges make duplicate tokens and many ties."""
    if tie_break not in _TRAINED:
        text = corpus_text("udhr_sample.txt", 60_000) + corpus_text("code_python.txt", 30_000)
        _TRAINED[tie_break] = train(text, 1200, tie_break=tie_break, min_frequency=1, workers=1)
    return _TRAINED[tie_break]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.binary(min_size=2, max_size=HEAP_THRESHOLD), min_size=1, max_size=40),
    st.sampled_from(["first", "lexical"]),
)
def test_batch_merge_equals_the_scan_on_random_bytes(pieces, tie_break):
    _merge_check(_trained(tie_break).mergeable_ranks, pieces)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=60))
def test_batch_merge_equals_the_scan_on_random_text(texts):
    tok = get_encoding("o200k_base")
    pieces = [p for p in (t.encode("utf-8", "surrogatepass") for t in texts) if 1 < len(p) <= HEAP_THRESHOLD]
    if pieces:
        _merge_check(tok.mergeable_ranks, pieces)


@pytest.mark.parametrize("name", ENCODINGS)
def test_encode_on_the_batch_path_equals_tiktoken(name, batch_always):
    text = "".join(corpus_text(t, 150_000) for t in TEXTS)
    tok = get_encoding(name)
    tok._cache.clear()
    ids = tok.encode_ordinary(text)
    assert tok._pairs is not None  # the batch path ran
    assert ids == tiktoken_reference(name).encode_ordinary(text)
    assert tok.encode_ordinary(text) == ids  # second time: every chunk from the cache


def test_encode_beyond_the_cache_goes_window_by_window(batch_always, monkeypatch):
    monkeypatch.setattr(core, "CACHE_SIZE", 3000)
    monkeypatch.setattr(core, "BATCH_WINDOW", 1500)
    text = corpus_text("udhr_sample.txt", 400_000)
    tok = _fresh("cl100k_base")
    ids = tok.encode_ordinary(text)
    assert ids == tiktoken_reference("cl100k_base").encode_ordinary(text)
    assert len(tok._cache) <= 3000


def test_pure_python_switch_gives_the_same_ids(batch_always, monkeypatch):
    text = corpus_text("pg_multilingual.txt", 200_000)
    fast = _fresh("o200k_base").encode_ordinary(text)
    monkeypatch.setenv(_batch.PURE_PYTHON_ENV, "1")
    assert _batch.numpy_or_none() is None
    slow_tok = _fresh("o200k_base")
    assert slow_tok.encode_ordinary(text) == fast
    assert slow_tok._pairs is None


def test_chunks_that_are_tokens_but_unreachable_without_chunk_lookup(batch_always):
    """chunk_lookup=False (HF ignore_merges false): the merges alone decide, on both paths."""
    ranks = get_encoding("o200k_base").mergeable_ranks
    tokens = [t.decode() for t in ranks if len(t) > 3 and t.isascii()][:3000]
    text = " ".join(tokens) + corpus_text("udhr_sample.txt", 50_000)
    batch = Tokenizer(ranks, "o200k", chunk_lookup=False)
    chunks = batch.split(text)
    expected = [i for c in chunks for i in bpe_merge(c.encode(), ranks)]
    assert batch.encode_ordinary(text) == expected
    assert batch._pairs is not None


def test_lone_surrogates_on_the_batch_path(batch_always):
    text = "abc \ud800 déf " * 50 + corpus_text("udhr_sample.txt", 20_000)
    tok = _fresh("cl100k_base")
    assert tok.encode_ordinary(text) == tiktoken_reference("cl100k_base").encode_ordinary(text)


@pytest.mark.parametrize("workers", [1, 2])
def test_stats_counts_on_the_batch_path_equal_tiktoken(batch_always, workers, monkeypatch):
    import tokenizer.stats as stats

    monkeypatch.setattr(stats, "PARALLEL_MIN_CHUNKS", 100)
    text = corpus_text("udhr_sample.txt") + corpus_text("emoji_sequences.txt")
    tok = _fresh("o200k_base")
    assert count_tokens(tok, text, workers=workers) == len(
        tiktoken_reference("o200k_base").encode_ordinary(text)
    )
    chunks = sorted(set(tok.split(text)))
    random.Random(1).shuffle(chunks)
    lengths = chunk_lengths(tok, chunks[:5000], workers=workers)
    assert all(lengths[c] == len(tok._piece_ids(c.encode())) for c in chunks[:5000])


def test_batch_only_where_it_pays(monkeypatch):
    """Few new chunks, or too few bytes to pay for the table: the Python loop, no table."""
    monkeypatch.delenv(_batch.PURE_PYTHON_ENV, raising=False)
    tok = _fresh("o200k_base")
    assert not tok.batch_pays(_batch.BATCH_MIN_CHUNKS - 1, 10**9)
    assert not tok.batch_pays(10**6, _batch.TABLE_BYTES_PER_RANK * len(tok.mergeable_ranks) - 1)
    assert tok.batch_pays(10**6, _batch.TABLE_BYTES_PER_RANK * len(tok.mergeable_ranks))
    tok.encode_ordinary(corpus_text("pg_en_medium.txt", 20_000))
    assert tok._pairs is None


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("kind", ["cjk", "letters", "mixed"])
def test_long_chunks_segments_merged_together_equal_tiktoken(name, kind, batch_always):
    """A chunk the pattern cannot cut is cut at proved-safe points; its short segments go
    through the batch merge together, the long ones through the heap."""
    rng = random.Random(kind)
    if kind == "cjk":
        text = "".join(map(chr, rng.choices(range(0x4E00, 0x9FA6), k=40_000)))
    elif kind == "letters":
        text = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=100_000))
    else:
        text = "".join(rng.choice(["ab" * rng.randrange(1, 200), "日本語", "xyz", "é"]) for _ in range(3000))
    tok = _fresh(name)
    assert tok.encode_ordinary(text) == tiktoken_reference(name).encode_ordinary(text)
    assert tok._narrow is not None  # few byte values: the table of their tokens alone


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(0, 255), max_size=80), st.sampled_from(["cl100k_base", "o200k_base"]))
def test_ranks_within_are_the_tokens_of_those_bytes(values, name):
    ranks = get_encoding(name).mergeable_ranks
    allowed = bytes(sorted(values))
    expected = {t: r for t, r in ranks.items() if len(t) == 1 or set(t) <= values}
    assert _batch.ranks_within(ranks, allowed) == expected
    assert _batch.byte_values(bytes(reversed(allowed)) * 3) == allowed


def _udhr_script(script: str) -> str:
    """The UDHR documents of one script, joined, without ASCII letters (one-script text)."""
    docs = corpus_text("udhr_all.txt").split("##### UDHR ")
    text = "\n".join(d.split("\n", 1)[1] for d in docs if f" script={script} " in d.split("\n", 1)[0])
    return "".join(c for c in text if not ("a" <= c.lower() <= "z"))


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("script", ["Cyrillic", "Arabic", "Han"])
def test_one_script_text_merges_with_the_narrow_table(name, script, batch_always):
    """Text of one non-Latin script: its new chunks go through the table of its bytes' tokens."""
    text = _udhr_script(script)[:150_000]
    tok = _fresh(name)
    assert tok.encode_ordinary(text) == tiktoken_reference(name).encode_ordinary(text)
    assert tok._narrow is not None and tok._pairs is None
    values = tok._narrow[0]
    assert tok._narrow_sizes[values] * _batch.NARROW_SHARE <= len(tok.mergeable_ranks)


def test_latin_text_is_not_checked_for_a_narrow_table(batch_always):
    """Many ASCII letters: most of the vocabulary, so the narrow table is not even priced."""
    tok = _fresh("o200k_base")
    text = corpus_text("pg_en_medium.txt", 100_000)
    assert tok.encode_ordinary(text) == tiktoken_reference("o200k_base").encode_ordinary(text)
    assert tok._narrow_sizes == {} and tok._narrow is None and tok._pairs is not None


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_narrow_table_for_few_byte_values_full_table_otherwise(name, batch_always):
    """A long chunk of one script gets the table of its bytes' tokens, kept for the next chunk
    of the same byte values; a chunk whose bytes allow most of the vocabulary the full one."""
    rng = random.Random(7)
    cjk = "".join(map(chr, rng.choices(range(0x4E00, 0x9FA6), k=20_000)))
    tok = _fresh(name)
    reference = tiktoken_reference(name)
    assert tok.encode_ordinary(cjk) == reference.encode_ordinary(cjk)
    values, narrow = tok._narrow
    assert tok._pairs is None and values == _batch.byte_values(cjk.encode())
    assert len(narrow.pairs.slot_keys) < len(tok.mergeable_ranks)  # a small table
    more = cjk[::-1]  # the same byte values: the same table, no new one
    assert tok.encode_ordinary(more) == reference.encode_ordinary(more) and tok._narrow[1] is narrow
    wide = corpus_text("udhr_sample.txt", 60_000).encode()  # spaces, digits, punctuation too
    assert tok._long_chunk_table(wide, len(wide) // 16) is tok._pairs is not None


def test_no_table_for_vocabularies_too_big_or_ids_too_high(batch_always, monkeypatch):
    """Such tokenizers encode through the Python loop, exactly, and build no table."""
    ranks = dict(get_encoding("gpt2").mergeable_ranks)
    text = corpus_text("udhr_sample.txt", 50_000)
    expected = tiktoken_reference("gpt2").encode_ordinary(text)
    monkeypatch.setattr(_batch, "TABLE_MAX_RANKS", len(ranks) - 1)
    big = Tokenizer(ranks, get_encoding("gpt2").pattern)
    assert big.encode_ordinary(text) == expected and big._pairs is None
    monkeypatch.setattr(_batch, "TABLE_MAX_RANKS", 1 << 19)
    high = {token: (rank if rank < 256 else rank + (1 << 31)) for token, rank in ranks.items()}
    tok = Tokenizer(high, get_encoding("gpt2").pattern)
    shifted = [i if i < 256 else i + (1 << 31) for i in expected]
    assert tok.encode_ordinary(text) == shifted and tok._pairs is None


def test_default_thresholds_batch_multilingual_text_but_not_english(monkeypatch):
    """With the shipped thresholds: 6 MB of English goes through the Python loop (its new
    chunks are too few to pay for the table), the multilingual books through the batch;
    both give tiktoken's ids."""
    monkeypatch.delenv(_batch.PURE_PYTHON_ENV, raising=False)
    for text_name, batched in (("pg_en_medium.txt", False), ("pg_multilingual.txt", True)):
        text = corpus_text(text_name)[:6_000_000]
        tok = _fresh("cl100k_base")
        assert tok.encode_ordinary(text) == tiktoken_reference("cl100k_base").encode_ordinary(text)
        assert (tok._pairs is not None) == batched, text_name


@pytest.mark.parametrize("text", [" the" * 100_000, "^" * 100_000, " a\n" * 50_000, "\U0001f600 " * 40_000])
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_repetitive_texts_with_the_shipped_thresholds(name, text, monkeypatch):
    """Texts whose new chunks are all tokens, or one chunk repeated: the sample that decides
    on a batch sees nothing to merge (it once took log2(0) there)."""
    monkeypatch.delenv(_batch.PURE_PYTHON_ENV, raising=False)
    assert _fresh(name).encode_ordinary(text) == tiktoken_reference(name).encode_ordinary(text)


class _RecordingMerge:
    """A stand-in for another engine's batch merge (the page's JavaScript): the scan, recorded."""

    def __init__(self, ranks: dict[bytes, int], *, decline: bool = False) -> None:
        self.ranks, self.decline, self.calls = ranks, decline, []

    def __call__(self, pieces: list[bytes]) -> list[tuple[int, ...]] | None:
        self.calls.append(list(pieces))
        return None if self.decline else [_bpe_scan(p, self.ranks) for p in pieces]


@pytest.mark.parametrize("decline", [False, True])
def test_batch_merge_hook_gets_the_new_short_chunks_and_may_decline(decline, monkeypatch):
    """Without numpy (the page): new chunks that are not tokens, 2 to HEAP_THRESHOLD bytes,
    go to `batch_merge` all at once; declined, the Python loop merges them. Ids as tiktoken."""
    monkeypatch.setenv(_batch.PURE_PYTHON_ENV, "1")
    tok = _fresh("cl100k_base")
    hook = tok.batch_merge = _RecordingMerge(tok.mergeable_ranks, decline=decline)
    text = corpus_text("udhr_sample.txt", 120_000)
    assert tok.encode_ordinary(text) == tiktoken_reference("cl100k_base").encode_ordinary(text)
    assert len(hook.calls) == 1 and tok._pairs is None
    pieces = hook.calls[0]
    assert len(pieces) >= _batch.BATCH_MIN_CHUNKS and len(set(pieces)) == len(pieces)
    assert all(1 < len(p) <= HEAP_THRESHOLD and p not in tok.mergeable_ranks for p in pieces)
    new = {c.encode() for c in tok.split(text)} - tok.mergeable_ranks.keys()
    assert set(pieces) == {p for p in new if len(p) <= HEAP_THRESHOLD}
    tok.encode_ordinary(text)  # all cached now: no call
    assert len(hook.calls) == 1
    counted = _fresh("cl100k_base")
    counted.batch_merge = _RecordingMerge(counted.mergeable_ranks, decline=decline)
    assert count_tokens(counted, text) == len(tiktoken_reference("cl100k_base").encode_ordinary(text))


def test_very_long_tokens_build_the_pair_table_in_linear_time():
    """A tokenizer trained on a run of one letter has tokens of 2, 4, ... 2**23 'a's; trying every
    cut of each (a slice per cut) never finished, so encoding any long text with it hung."""
    import time

    doubling = [(97, 97)] + [(256 + i, 256 + i) for i in range(19)]  # longest: 2**20 bytes
    ranks = Tokenizer.from_merges(doubling).mergeable_ranks
    started = time.perf_counter()
    keys, values = _batch._long_splits(np, ranks, 1 << 20)
    assert time.perf_counter() - started < 2.0
    longest = b"a" * 2**20
    assert ranks[longest] in values.tolist()
    # the same splits as trying every cut, where that is affordable
    short = {t: r for t, r in ranks.items() if len(t) <= 4096}
    every = [
        (short[t[:k]] * (1 << 20) + short[t[k:]], r)
        for t, r in short.items()
        if len(t) > _batch.MATRIX_WIDTH
        for k in range(1, len(t))
        if t[:k] in short and t[k:] in short
    ]
    keys, values = _batch._long_splits(np, short, 1 << 20)
    assert list(zip(keys.tolist(), values.tolist(), strict=True)) == every

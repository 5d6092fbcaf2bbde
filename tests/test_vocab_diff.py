"""tokenizer.vocab_diff against the rank tables, and the divergence of two trainings."""

from __future__ import annotations

from collections import Counter

import pytest
import regex

from tests.helpers import corpus_text
from tests.oracles import tiktoken_reference
from tokenizer import Tokenizer, get_encoding, train
from tokenizer.patterns import resolve_pattern
from tokenizer.reference import merge, pair_counts
from tokenizer.stats import prefix_tokenizer
from tokenizer.vocab_diff import EXAMPLES_SHOWN, diff


def oracle_first_difference(ra: dict[bytes, int], rb: dict[bytes, int]) -> int | None:
    order_a = [t for t, _ in sorted(ra.items(), key=lambda kv: kv[1])]
    order_b = [t for t, _ in sorted(rb.items(), key=lambda kv: kv[1])]
    for i, (x, y) in enumerate(zip(order_a, order_b, strict=False)):
        if x != y:
            return i
    return None if len(order_a) == len(order_b) else min(len(order_a), len(order_b))


@pytest.mark.parametrize(("a", "b"), [("gpt2", "cl100k_base"), ("cl100k_base", "o200k_base")])
def test_counts_equal_the_rank_tables(a, b):
    ra, rb = tiktoken_reference(a)._mergeable_ranks, tiktoken_reference(b)._mergeable_ranks
    got = diff(get_encoding(a), get_encoding(b))
    assert got["common"] == len(ra.keys() & rb.keys())
    assert got["only_a"] == len(ra.keys() - rb.keys())
    assert got["only_b"] == len(rb.keys() - ra.keys())
    assert got["first_difference"] == oracle_first_difference(ra, rb)
    only_a = sorted(ra[t] for t in ra.keys() - rb.keys())[:EXAMPLES_SHOWN]
    assert [e["id"] for e in got["examples_only_a"]] == only_a
    for e in got["examples_only_a"]:
        token = bytes.fromhex(e["hex"])
        assert ra[token] == e["id"] and token not in rb
    assert "divergence" not in got


def test_identical_and_prefix():
    o200k = get_encoding("o200k_base")
    assert diff(o200k, o200k)["first_difference"] is None
    got = diff(prefix_tokenizer(o200k, 1000), o200k)
    assert got["first_difference"] == 1000
    assert (got["common"], got["only_a"], got["only_b"]) == (1000, 0, len(o200k.mergeable_ranks) - 1000)


def test_a_prefix_across_a_gap_in_the_ranks_differs_at_its_length():
    # p50k_base is gpt2's 50,256 ranks and merges from 50257 on (50256 is <|endoftext|>):
    # gpt2 is a prefix of it, so they differ at gpt2's length (it said 50257).
    ra, rb = tiktoken_reference("gpt2")._mergeable_ranks, tiktoken_reference("p50k_base")._mergeable_ranks
    gpt2, p50k = get_encoding("gpt2"), get_encoding("p50k_base")
    assert diff(gpt2, p50k)["first_difference"] == diff(p50k, gpt2)["first_difference"] == 50256
    assert oracle_first_difference(ra, rb) == len(ra) == 50256


@pytest.fixture(scope="module")
def text() -> str:
    return corpus_text("taylorswift.txt")


@pytest.fixture(scope="module")
def first_and_lexical(text):
    return train(text, 600, tie_break="first"), train(text, 600, tie_break="lexical")


def pair_counts_before(text: str, merges: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """Pair counts after `merges`, from regex's split and the slow reference merge."""
    chunks = Counter(regex.findall(resolve_pattern("gpt4"), text))
    words = [list(c.encode("utf-8")) for c in chunks]
    for new_id, pair in enumerate(merges, start=256):
        words = [merge(w, pair, new_id) for w in words]
    return pair_counts(words, list(chunks.values()))


def test_divergence_of_two_tie_rules_is_a_tie(first_and_lexical, text):
    a, b = first_and_lexical
    got = diff(a, b, corpus=text)
    rank = got["first_difference"]
    assert rank == oracle_first_difference(a.mergeable_ranks, b.mergeable_ranks) and rank >= 256
    div = got["divergence"]
    pa, pb = a.merges[rank - 256], b.merges[rank - 256]
    assert (div["a"]["merge"], div["b"]["merge"]) == (list(pa), list(pb))
    assert div["parameters"] == {"tie_break": ["first", "lexical"]} and div["same_statistics"]
    counts = pair_counts_before(text, a.merges[: rank - 256])
    best = max(counts.values())
    assert div["a"]["count"] == div["b"]["count"] == counts[pa] == counts[pb] == best
    assert pb == min(p for p, c in counts.items() if c == best)  # lexical: smallest pair
    assert pa == next(p for p, c in counts.items() if c == best)  # first: first in text order
    assert div["candidates"][0] == {"pair": list(pa), "count": best, "text": "ch", "hex": "6368"}
    assert {tuple(c["pair"]) for c in div["candidates"] if c["count"] == best} >= {pa, pb}
    assert "a tie at count" in div["reason"]


def test_divergence_without_the_corpus_gives_the_recorded_counts(first_and_lexical, text, tmp_path):
    """The issue's `diff A B` has no corpus, yet says why two trainings diverged: "the
    candidate pairs, their counts, and which rule picked which". Without --corpus the counts
    were missing ("a tie" and the two pairs only); each training now records its merge counts,
    saved with the tokenizer, and the two picks come with them."""
    a, b = first_and_lexical
    a.save(tmp_path / "a")
    b.save(tmp_path / "b")
    a, b = Tokenizer.load(tmp_path / "a"), Tokenizer.load(tmp_path / "b")
    div = diff(a, b)["divergence"]
    rank = div["rank"]
    pa, pb = a.merges[rank - 256], b.merges[rank - 256]
    counts = pair_counts_before(text, a.merges[: rank - 256])
    best = max(counts.values())
    assert div["a"]["count"] == div["b"]["count"] == counts[pa] == counts[pb] == best
    assert [(c["pair"], c["count"]) for c in div["candidates"]] == [(list(pa), best), (list(pb), best)]
    assert div["candidates"][0]["text"] == "ch"
    assert f"a tie at count {best}" in div["reason"] and "'lexical' takes" in div["reason"]
    assert div == diff(a, b, corpus=text)["divergence"] | {"candidates": div["candidates"]}


def test_a_hand_edited_merge_count_record_is_ignored(first_and_lexical):
    a, b = first_and_lexical
    for bad in ([1, 2], "x", [None] * len(b.merges), None):
        edited = Tokenizer(b.mergeable_ranks, b.pattern, name="edited", merges=b.merges, metadata=b.metadata)
        edited.metadata["statistics"] = {**b.metadata["statistics"], "merge_counts": bad}
        div = diff(a, edited)["divergence"]
        assert "count" not in div["a"] and "candidates" not in div


def test_prefix_divergence_says_where_one_stopped(first_and_lexical, text):
    a, _ = first_and_lexical
    shorter = train(text, 500, tie_break="first")
    got = diff(a, shorter)
    assert got["first_difference"] == 500
    assert got["divergence"]["b"]["merge"] is None
    assert "b has no merge at rank 500" in got["divergence"]["reason"]


def test_a_corpus_that_is_not_theirs_is_refused(first_and_lexical):
    a, b = first_and_lexical
    with pytest.raises(ValueError, match="not the corpus a was trained on"):
        diff(a, b, corpus=corpus_text("tinyshakespeare.txt", 50_000))
    with pytest.raises(ValueError, match="the two rank orders are identical: leave it out"):
        diff(get_encoding("gpt2"), get_encoding("r50k_base"), corpus="x")  # was "... trained here diverge"


def test_a_corpus_where_there_is_no_training_divergence_says_why(first_and_lexical):
    """The message was "a training corpus only explains where two tokenizers trained here
    diverge" also for two identical trainings, and said no fix."""
    a, b = first_and_lexical
    with pytest.raises(ValueError, match="the two rank orders are identical: leave it out"):
        diff(a, a, corpus="x")
    bare = Tokenizer(b.mergeable_ranks, b.pattern, name="bare")
    with pytest.raises(ValueError, match="'bare' has no usable training record .*: leave it out"):
        diff(a, bare, corpus="x")
    with pytest.raises(ValueError, match="they differ already at rank 0, among the single bytes"):
        diff(a, get_encoding("cl100k_base"), corpus="x")


@pytest.mark.parametrize(
    "edit",
    [
        {"tie_break": None},  # KeyError: None
        {"tie_break": "weird"},  # KeyError: 'weird'
        {"tie_break": ["first"]},  # TypeError: unhashable type: 'list'
        {"pattern": None},  # KeyError: 'pattern' with a corpus
        {"min_frequency": "2"},
    ],
)
def test_a_hand_edited_training_record_explains_nothing(first_and_lexical, text, edit):
    # a .json's metadata is the user's: these reached the user as KeyError/TypeError tracebacks
    a, b = first_and_lexical
    edited = Tokenizer(b.mergeable_ranks, b.pattern, name="edited", merges=b.merges, metadata=b.metadata)
    edited.metadata["training"] = {**b.metadata["training"], **edit}
    got = diff(a, edited)
    assert "divergence" not in got and got["first_difference"] == diff(a, b)["first_difference"]
    with pytest.raises(ValueError, match="'edited' has no usable training record .*: leave it out"):
        diff(a, edited, corpus=text)


def test_statistics_that_are_not_a_dict_count_as_unknown(first_and_lexical):
    a, b = first_and_lexical
    edited = Tokenizer(b.mergeable_ranks, b.pattern, name="edited", merges=b.merges, metadata=b.metadata)
    edited.metadata["statistics"] = [1, 2]  # AttributeError: 'list' object has no attribute 'get'
    assert diff(a, edited)["divergence"]["same_statistics"] is False


def test_imported_tokenizer_json_diff_equals_hf_vocab(tmp_path):
    """A HF-trained tokenizer.json against gpt2: the counts are set operations on the byte
    strings of HF's own vocabulary (special tokens left out), the first difference by id."""
    hf = pytest.importorskip("tokenizers")
    from tokenizer.hf_conventions import bytes_to_unicode
    from tokenizer.loading import load_any

    hf_tok = hf.Tokenizer(hf.models.BPE())
    hf_tok.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = hf.trainers.BpeTrainer(
        vocab_size=800,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    hf_tok.train_from_iterator([corpus_text("udhr_sample.txt", 80_000)], trainer)
    path = tmp_path / "tokenizer.json"
    hf_tok.save(str(path))
    to_byte = {c: b for b, c in bytes_to_unicode().items()}
    special = set(hf_tok.get_added_tokens_decoder())
    ours = {bytes(map(to_byte.__getitem__, s)): i for s, i in hf_tok.get_vocab().items() if i not in special}
    gpt2 = tiktoken_reference("gpt2")._mergeable_ranks
    got = diff(load_any(str(path)), get_encoding("gpt2"))
    assert (got["common"], got["only_a"], got["only_b"]) == (
        len(ours.keys() & gpt2.keys()),
        len(ours.keys() - gpt2.keys()),
        len(gpt2.keys() - ours.keys()),
    )
    # Ranks are ids: HF gives id 0 to the special token, so the tables differ at rank 0.
    by_id = [{i: t for t, i in ranks.items()} for ranks in (ours, gpt2)]
    assert got["first_difference"] == next(r for r in range(50257) if by_id[0].get(r) != by_id[1].get(r)) == 0

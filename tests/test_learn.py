"""The Learn view's back end (tokenizer.web.learn): every step against a full recount, the
rendering at step k against encoding with the first k merges, classic against subword-nmt."""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tests.strategies import tie_heavy_texts
from tokenizer import classic
from tokenizer.core import Tokenizer
from tokenizer.patterns import compile_pattern
from tokenizer.reference import merge, pair_counts, reference_merges
from tokenizer.web import learn

PATTERNS = ["gpt2", "gpt4", "o200k", "none", r"\w+| "]  # the last one skips text

tie_heavy = tie_heavy_texts(max_size=60, max_words=30, max_repeated=5).filter(str.strip)


def chunks_of(text: str, pattern: str) -> list[str]:
    return [text] if pattern == "none" else compile_pattern(pattern).findall(text)


def visible_pair(result: dict, pair: list[int]) -> tuple[str, str]:
    return result["vocab"][pair[0]], result["vocab"][pair[1]]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=tie_heavy,
    pattern=st.sampled_from(PATTERNS),
    tie_break=st.sampled_from(["first", "lexical"]),
    min_frequency=st.sampled_from([1, 2]),
)
def test_byte_steps_equal_a_full_recount_and_the_reference(text, pattern, tie_break, min_frequency):
    request = {"corpus": text, "pattern": pattern, "tie_break": tie_break, "min_frequency": min_frequency}
    result = learn.handle({**request, "num_merges": 30})
    counts = Counter(chunks_of(text, pattern))
    counts.pop("", None)
    words, weights = [list(c.encode()) for c in counts], list(counts.values())
    merges = []
    for i, step in enumerate(result["steps"]):
        stats = pair_counts(words, weights)
        best = max(stats.values())
        pair = tuple(step["pair"])
        want = max(stats, key=stats.get) if tie_break == "first" else min(stats, key=lambda p: (-stats[p], p))
        assert pair == want and step["count"] == stats[pair] == best
        assert step["id"] == 256 + i
        assert result["vocab"][step["id"]] == learn.token_text(
            Tokenizer.from_merges([*merges, pair]).decode_single_token_bytes(256 + i)
        )
        assert all(stats[(a, b)] == c for a, b, c in step["top"])
        assert step["top"][0] == [*pair, best]
        assert sorted(c for *_, c in step["top"]) == sorted(stats.values())[-10:]
        tied = [p for p, c in stats.items() if c == best and p != pair]
        assert step["tied"] == bool(tied)
        assert step["rule"] == (learn.RULES[tie_break] if tied else None)
        assert {tuple(p) for p in step["tied_with"]} <= set(tied)
        merges.append(pair)
        words = [merge(w, pair, 256 + i) for w in words]
    # pattern "none" included: the heap trainer behind the steps equals the reference trainer
    assert merges == reference_merges(counts.items(), 256 + 30, tie_break, min_frequency)
    assert (result["stop_reason"] is None) == (len(merges) == 30)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=tie_heavy, pattern=st.sampled_from(PATTERNS), tie_break=st.sampled_from(["first", "lexical"]))
def test_rendering_at_step_k_equals_encoding_with_the_first_k_merges(text, pattern, tie_break):
    result = learn.handle({"corpus": text, "pattern": pattern, "tie_break": tie_break, "min_frequency": 1})
    pieces = result["view"]["pieces"]
    assert "".join(p if isinstance(p, str) else p[0] for p in pieces) == text  # the whole text, in order
    merges = [tuple(s["pair"]) for s in result["steps"]]
    for k in range(len(merges) + 1):
        rendered = learn.render(result, k)
        tok = Tokenizer.from_merges(merges[:k], pattern)
        words = [p for p in rendered if not isinstance(p, str)]
        chunk_texts = [p[0] for p in pieces if not isinstance(p, str)]
        assert chunk_texts == chunks_of(text, pattern)
        for chunk, tokens in zip(chunk_texts, words, strict=True):
            ids = tok.encode_ordinary(chunk)
            assert [t[1] for t in tokens] == [learn.token_text(tok.decode_single_token_bytes(i)) for i in ids]
            want = list(chunk.encode())  # and the exact ids, merge by merge as training does
            for i, pair in enumerate(merges[:k]):
                want = merge(want, pair, 256 + i)
            assert [t[0] for t in tokens] == want
            assert all(t[2] == (k > 0 and t[0] == 255 + k) for t in tokens)  # the newest token


def test_the_seed_sentence_step_by_step():
    result = learn.handle({"corpus": "nation station ration", "pattern": "none"})
    shown = [(*visible_pair(result, s["pair"]), s["count"], s["tied"]) for s in result["steps"]]
    assert shown == [
        ("a", "t", 3, True),  # a t, t i, i o, o n all occur 3 times: "a t" comes first
        ("at", "i", 3, True),
        ("ati", "o", 3, True),
        ("atio", "n", 3, False),  # "n " occurs twice only
        ("ation", " ", 2, False),
    ]
    assert result["steps"][0]["rule"] == "first occurrence in the current text"
    assert result["stop_reason"] == "no pair occurs 2 or more times"
    assert [t[1] for t in learn.render(result, 5)[0]] == ["n", "ation ", "s", "t", "ation ", "r", "ation"]
    lexical = learn.handle({"corpus": "nation station ration", "pattern": "none", "tie_break": "lexical"})
    assert visible_pair(lexical, lexical["steps"][0]["pair"]) == ("a", "t")  # (97, 116) is smallest
    assert lexical["steps"][0]["rule"] == "smallest ids (lexical)"


def subword_nmt_learn(text: str, num_symbols: int, min_frequency: int) -> list[tuple[str, str]]:
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    infile = codecs.getreader("utf-8")(io.BytesIO(text.encode("utf-8")))
    outfile = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        learn_bpe.learn_bpe(infile, outfile, num_symbols, min_frequency=min_frequency)
    return [tuple(line.split(" ")) for line in outfile.getvalue().split("\n")[1:] if line]


@pytest.mark.parametrize(
    "text",
    [
        "nation station ration",
        "the cat sat the mat\nthe cat sat on the mat",
        "low lower lowest newer wider new  low\n low  ",
    ],
)
def test_classic_steps_equal_subword_nmt_and_a_recount(text):
    result = learn.handle({"corpus": text, "mode": "classic", "min_frequency": 1, "num_merges": 40})
    merges = [visible_pair(result, s["pair"]) for s in result["steps"]]
    assert merges == subword_nmt_learn(text, 40, 1)
    words = {classic.word_symbols(w): n for w, n in classic.count_words(text).items()}
    for k, step in enumerate(result["steps"]):
        stats: Counter = Counter()
        for symbols, n in words.items():
            for pair in zip(symbols, symbols[1:], strict=False):
                stats[pair] += n
        best = max(stats.values())
        assert step["count"] == stats[merges[k]] == best
        assert step["tied"] == (sum(c == best for c in stats.values()) > 1)
        assert all(stats[visible_pair(result, [a, b])] == c for a, b, c in step["top"])
        assert result["vocab"][step["id"]] == "".join(merges[k])
        words = {classic._merge_symbols(s, *merges[k]): n for s, n in words.items()}
    for k in range(len(merges) + 1):  # rendering at step k == subword-nmt's segmentation with k merges
        segmenter = classic.Segmenter(merges[:k])
        rendered = [p for p in learn.render(result, k) if not isinstance(p, str)]
        words_shown = [p[0] for p in result["view"]["pieces"] if not isinstance(p, str)]
        assert words_shown == [w for line in text.splitlines() for w in classic.words_of_line(line)]
        for word, tokens in zip(words_shown, rendered, strict=True):
            texts = [t[1] for t in tokens]
            assert texts[-1].endswith("</w>")
            assert (*texts[:-1], texts[-1][: -len("</w>")]) == segmenter.segment_word(word)
    assert "".join(p if isinstance(p, str) else p[0] for p in result["view"]["pieces"]) == text


def test_render_action_and_adopting_the_first_k_merges():
    request = {"corpus": "the cat sat the mat, the cat sat", "pattern": "gpt2", "min_frequency": 2}
    result = learn.handle(request)
    merges = [tuple(s["pair"]) for s in result["steps"]]
    assert len(merges) >= 3
    assert learn.handle({**request, "action": "render", "step": 2}) == {
        "step": 2,
        "tokens": learn.render(result, 2),
    }
    tok = learn.to_tokenizer({**request, "step": 2})
    want = Tokenizer.from_merges(merges[:2], "gpt2")
    text = "the cat sat on the mat"
    assert tok.encode(text) == want.encode(text) and tok.merges == merges[:2]
    assert tok.name == "learned-gpt2-2" and tok.pattern == "gpt2"
    assert learn.to_tokenizer(request).merges == merges


def test_classic_cannot_be_adopted_and_says_why():
    with pytest.raises(ValueError, match="not byte-level"):
        learn.to_tokenizer({"corpus": "the cat sat", "mode": "classic"})


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"corpus": "x" * (100 * 1024 + 1)}, "at most 102,400"),
        ({"corpus": "   \n"}, "empty"),
        ({"corpus": 5}, "must be a string"),
        ({"corpus": "a\ud800b"}, "lone surrogate"),
        ({"corpus": "abc", "mode": "words"}, "mode must be one of bytes, classic"),
        ({"corpus": "abc", "tie_break": "last"}, "tie_break"),
        ({"corpus": "abc", "num_merges": 2001}, "between 0 and 2000"),
        ({"corpus": "abc", "num_merges": True}, "must be an integer"),
        ({"corpus": "abc", "min_frequency": 0}, ">= 1"),
        ({"corpus": "abc", "pattern": "(unclosed"}, "invalid regex: missing \\)"),
        ({"corpus": "abc", "action": "jump"}, "action"),
        ([1, 2], "must be an object"),
    ],
)
def test_bad_requests_are_rejected_clearly(request_, message):
    with pytest.raises(ValueError, match=message):
        learn.handle(request_)


def test_the_trace_is_capped_for_big_corpora_and_says_so(monkeypatch):
    monkeypatch.setattr(learn, "TRACE_BUDGET", 100)
    result = learn.handle({"corpus": "the cat sat on the mat " * 20, "num_merges": 100, "min_frequency": 1})
    assert result["capped"] and len(result["steps"]) < 100
    assert result["stop_reason"].startswith(f"capped at {len(result['steps'])} merges")


def test_a_100kb_corpus_answers_in_bounded_time_and_size():
    path = CORPORA / "taylorswift.txt"
    if not path.exists():
        pytest.skip("corpus missing")
    text = path.read_text(encoding="utf-8")
    text = text.encode()[: learn.MAX_CORPUS_BYTES].decode("utf-8", "ignore")
    for request in ({"pattern": "gpt4"}, {"pattern": "none"}, {"mode": "classic", "num_merges": 2000}):
        t = time.perf_counter()
        result = learn.handle({"corpus": text, **request})
        seconds = time.perf_counter() - t
        size = len(json.dumps(result))
        assert result["steps"] and result["view"]["truncated"]
        assert size < 1_000_000, (request, size)  # classic, 2000 steps: about 810 KB
        assert seconds < 30, (request, seconds)


def test_a_custom_pattern_gets_the_split_regex_checks():
    """(?:a|a)+b on a corpus with a run of 40 a's hung (no probe ran); a capturing group split
    into the groups' text alone."""
    request = {"corpus": "a" * 40 + " low lower", "mode": "bytes", "num_merges": 5}
    with pytest.raises(ValueError, match="backtracks catastrophically"):
        learn.handle({**request, "pattern": r"(?:a|a)+b|\S"})
    with pytest.raises(ValueError, match="has 1 capturing group"):
        learn.handle({**request, "pattern": r"(a)|\S"})
    assert learn.handle({**request, "pattern": r"\w+|\s"})["num_merges"] == 5


def test_a_custom_regex_that_skips_text_says_how_much():
    # "(?:a|b)+" keeps the a's of "nation station ration" only: 0 merges, as if it were the corpus's
    corpus = "nation station ration"
    skipping = learn.handle({"corpus": corpus, "pattern": "(?:a|b)+", "num_merges": 5})
    assert skipping["dropped_bytes"] == len(corpus) - corpus.count("a")
    assert learn.handle({"corpus": corpus, "pattern": "gpt4", "num_merges": 5})["dropped_bytes"] == 0
    assert learn.handle({"corpus": "naïve café", "pattern": r"\S+", "num_merges": 5})["dropped_bytes"] == 1

"""Compare two vocabularies, and say why two trainings of the same corpus diverged.

`diff(a, b)` compares the rank tables (mergeable token bytes -> rank; special tokens left out):

* common / only_a / only_b: sizes of the intersection and differences of the token sets;
* first_difference: the first rank r at which the two rank orders differ, i.e. the
  smallest r where one table has a token the other has not at r, or another one; null
  when the tables are identical, the shorter table's length (its last rank + 1) when one
  is a prefix of the other, also across a gap in the ranks (gpt2 vs p50k_base: 50256);
* examples_only_a / examples_only_b: the EXAMPLES_SHOWN lowest-ranked tokens found in one
  table only, each {"id", "text" (null when not UTF-8 on its own), "hex"}.

When both were trained here (their metadata has "training" and they have merges) and they
differ at a merge, "divergence" explains that rank. Training picks a pair of highest count
in the current state; both runs are in the same state up to r (the same merges so far), so
when they were counted from the same table, two different picks at r are necessarily a
tie: equal counts, and each tie rule chose its own pair (`first`: the pair occurring first
in the text; `lexical`: the smallest (left id, right id)). train() records each merge's count
(metadata statistics "merge_counts"), so the two picks come with their counts: equal counts
are the tie. What the metadata lacks is proof of the same table: it stores no fingerprint
of the count table, only corpus statistics (bytes, chunks, distinct chunks), which are
compared as evidence. Given the training corpus (`corpus=`, anything train() accepts), both
trainings are replayed up to r with their own parameters and tracing on: the replay must
reproduce each tokenizer's merges (else the corpus is not theirs), and the traced step
gives every candidate pair of the top ten with its count, not only the two picks.
"""

from __future__ import annotations

from typing import Any

from .core import Tokenizer
from .train import train

EXAMPLES_SHOWN = 20  # tokens listed per side
CANDIDATES_SHOWN = 10  # pairs listed from the traced step (the trainer traces its top 10)
PARAMETERS = ("pattern", "tie_break", "min_frequency", "min_chunk_count", "max_chunks")  # shape the merges
STATISTICS = ("documents", "bytes", "chunks", "unique_chunks")  # equal for one corpus and pattern
RULES = {
    "first": "the pair occurring first in the text",
    "lexical": "the smallest (left id, right id)",
}


def token_text(token: bytes) -> dict[str, Any]:
    """Bytes as JSON: "text" when valid UTF-8 on its own (else null) and "hex"."""
    try:
        text: str | None = token.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"text": text, "hex": token.hex()}


def token_entry(token: bytes, token_id: int) -> dict[str, Any]:
    return {"id": token_id, **token_text(token)}


def first_difference(a: Tokenizer, b: Tokenizer) -> int | None:
    """The first rank at which the two rank orders differ; None when they are identical.

    The orders are walked side by side: the first place where they hold another token or the
    same token at another rank gives the lower of the two ranks there. When one order runs out
    first it is a prefix of the other, and the answer is its length (its last rank + 1): gpt2
    against p50k_base is 50256, though neither has rank 50256 (p50k's next merge is 50257)."""
    order_a = sorted((r, t) for t, r in a.mergeable_ranks.items())
    order_b = sorted((r, t) for t, r in b.mergeable_ranks.items())
    for (rank_a, token_a), (rank_b, token_b) in zip(order_a, order_b, strict=False):
        if (rank_a, token_a) != (rank_b, token_b):
            return min(rank_a, rank_b)
    if len(order_a) == len(order_b):
        return None
    shorter = order_a if len(order_a) < len(order_b) else order_b
    return shorter[-1][0] + 1 if shorter else 0


def _examples(mine: dict[bytes, int], other: dict[bytes, int]) -> list[dict[str, Any]]:
    only = sorted((r, t) for t, r in mine.items() if t not in other)
    return [token_entry(t, r) for r, t in only[:EXAMPLES_SHOWN]]


def diff(a: Tokenizer, b: Tokenizer, *, corpus: Any = None) -> dict[str, Any]:
    """The comparison of `a` and `b` as a JSON-ready dict (see the module docstring)."""
    ra, rb = a.mergeable_ranks, b.mergeable_ranks
    common = len(ra.keys() & rb.keys())
    result: dict[str, Any] = {
        "common": common,
        "only_a": len(ra) - common,
        "only_b": len(rb) - common,
        "first_difference": first_difference(a, b),
        "examples_only_a": _examples(ra, rb),
        "examples_only_b": _examples(rb, ra),
    }
    rank = result["first_difference"]
    if rank is not None and rank >= 256 and _trained_here(a) and _trained_here(b):
        result["divergence"] = divergence(a, b, rank, corpus=corpus)
    elif corpus is not None:
        raise ValueError(
            f"a training corpus explains where two trainings diverge, but {_no_divergence(a, b, rank)}: leave it out"
        )
    return result


def _no_divergence(a: Tokenizer, b: Tokenizer, rank: int | None) -> str:
    """Why a corpus explains nothing here (the comparison has no training divergence)."""
    if rank is None:
        return "the two rank orders are identical"
    if rank < 256:
        return f"they differ already at rank {rank}, among the single bytes"
    untrained = [tok.name for tok in (a, b) if not _trained_here(tok)]
    verb = "have" if len(untrained) > 1 else "has"
    return (
        f"{' and '.join(map(repr, untrained))} {verb} no usable training record (not trained by this "
        "library, or its .json was edited)"
    )


def _trained_here(tok: Tokenizer) -> bool:
    """Merges and a training record that can explain a divergence: a known tie rule, a pattern
    and min_frequency as train() writes them (a foreign or hand-edited .json may lack them)."""
    training = tok.metadata.get("training")
    return (
        tok.merges is not None
        and isinstance(training, dict)
        and training.get("tie_break") in tuple(RULES)
        and isinstance(training.get("pattern"), str)
        and type(training.get("min_frequency")) is int
    )


def _statistics(tok: Tokenizer) -> dict[str, Any]:
    statistics = tok.metadata.get("statistics")
    return statistics if isinstance(statistics, dict) else {}


def _side(tok: Tokenizer, rank: int) -> dict[str, Any]:
    """What one tokenizer did at `rank`: its merge (or why it has none) and its tie rule."""
    training = tok.metadata["training"]
    side: dict[str, Any] = {"tie_break": training.get("tie_break")}
    step = rank - 256
    if step < len(tok.merges):
        left, right = tok.merges[step]
        side["merge"] = [left, right]
        side["token"] = token_entry(tok.decode_single_token_bytes(rank), rank)
    else:
        side["merge"] = None
        side["stop_reason"] = tok.metadata.get("stop_reason") or f"vocab_size {training.get('vocab_size')}"
    return side


def divergence(a: Tokenizer, b: Tokenizer, rank: int, *, corpus: Any = None) -> dict[str, Any]:
    """Why two tokenizers trained here differ at `rank` (see the module docstring)."""
    ta, tb = a.metadata["training"], b.metadata["training"]
    sa, sb = _statistics(a), _statistics(b)
    out: dict[str, Any] = {
        "rank": rank,
        "a": _side(a, rank),
        "b": _side(b, rank),
        "parameters": {k: [ta.get(k), tb.get(k)] for k in PARAMETERS if ta.get(k) != tb.get(k)},
        "same_statistics": all(sa.get(k) == sb.get(k) for k in STATISTICS),
    }
    if corpus is not None and out["a"]["merge"] and out["b"]["merge"]:
        step_a, step_b = _replay(a, rank, corpus, "a"), _replay(b, rank, corpus, "b")
        out["a"]["count"], out["b"]["count"] = step_a["count"], step_b["count"]
        # Pairs of ids below the rank: the same tokens in both.
        out["candidates"] = [
            {"pair": list(pair), "count": count, **token_text(a.decode_bytes(pair))}
            for pair, count in step_a["top_pairs"][:CANDIDATES_SHOWN]
        ]
    elif out["a"]["merge"] and out["b"]["merge"]:
        _add_recorded_counts(out, a, b, rank)
    out["reason"] = _reason(out)
    return out


def recorded_count(tok: Tokenizer, rank: int) -> int | None:
    """The count train() recorded for the merge that made `rank`; None when the record is
    missing (trained before it was kept, or not by train()) or not one count per merge (a
    hand-edited .json)."""
    counts = _statistics(tok).get("merge_counts")
    if not isinstance(counts, list) or len(counts) != len(tok.merges):
        return None
    count = counts[rank - 256]
    return count if type(count) is int else None


def _add_recorded_counts(out: dict[str, Any], a: Tokenizer, b: Tokenizer, rank: int) -> None:
    """Both picks at `rank` with their recorded counts, as the candidate pairs (most first)."""
    count_a, count_b = recorded_count(a, rank), recorded_count(b, rank)
    if count_a is None or count_b is None:
        return
    out["a"]["count"], out["b"]["count"] = count_a, count_b
    picks = [(a.merges[rank - 256], count_a, a), (b.merges[rank - 256], count_b, b)]
    picks.sort(key=lambda pick: -pick[1])  # stable: a's first at a tie
    out["candidates"] = [
        {"pair": list(pair), "count": count, **token_text(tok.decode_bytes(pair))}
        for pair, count, tok in picks
    ]


def _replay(tok: Tokenizer, rank: int, corpus: Any, label: str) -> dict[str, Any]:
    """Train again with tok's parameters up to `rank`, tracing; the step that made `rank`."""
    training = tok.metadata["training"]
    steps: dict[int, dict[str, Any]] = {}
    replayed = train(
        corpus,
        rank + 1,
        pattern=training["pattern"],
        tie_break=training["tie_break"],
        min_frequency=training["min_frequency"],
        min_chunk_count=training.get("min_chunk_count") or 1,
        max_chunks=training.get("max_chunks"),
        trace=lambda step: steps.__setitem__(step["new_id"], step),
    )
    if replayed.merges != tok.merges[: rank - 255]:
        raise ValueError(
            f"the corpus given does not reproduce {label}'s first {rank - 255} merges "
            f"({tok.name!r}): it is not the corpus {label} was trained on"
        )
    return steps[rank]


def _reason(out: dict[str, Any]) -> str:
    a, b, params = out["a"], out["b"], out["parameters"]
    rank = out["rank"]
    if a["merge"] is None or b["merge"] is None:
        short, label = (a, "a") if a["merge"] is None else (b, "b")
        return f"{label} has no merge at rank {rank}: it stopped there ({short['stop_reason']})"
    if set(params) - {"tie_break", "min_frequency"}:
        return (
            f"they were trained with different parameters ({', '.join(sorted(params))}): different "
            f"count tables, so different merges from rank {rank} on"
        )
    if not out["same_statistics"]:
        return (
            f"their corpora differ (bytes, chunks or distinct chunks): different merges from rank {rank} on"
        )
    if "count" in a and a["count"] != b["count"]:
        return f"the best pair counts differ ({a['count']} vs {b['count']}): not one count table"
    count = f" at count {a['count']}" if "count" in a else ""
    if a["tie_break"] == b["tie_break"]:
        return (
            f"a tie{count} that the same rule {a['tie_break']!r} broke differently: the count tables differ"
        )
    return (
        f"a tie{count}: both merged the same pairs before rank {rank}, so from the same count table "
        f"two different picks mean equal counts; a's rule {a['tie_break']!r} takes {RULES[a['tie_break']]} "
        f"({a['merge']}), b's rule {b['tie_break']!r} takes {RULES[b['tie_break']]} ({b['merge']})"
    )

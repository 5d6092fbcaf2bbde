"""The obvious BPE trainer, slow on purpose: the oracle the heap trainer is tested against.

Every merge recounts all pairs from scratch, exactly like karpathy/minbpe's
RegexTokenizer.train: pair counts go into a dict while the chunks are scanned in order,
so on a tie `max` returns the pair that occurs first in the current text. Passing each
chunk with count 1 in text order is minbpe itself; passing distinct chunks with their
counts in first-occurrence order gives the same dict order and counts, only faster.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


def pair_counts(words: list[list[int]], counts: list[int]) -> dict[tuple[int, int], int]:
    """Counts of adjacent pairs, weighted by word count, in order of first occurrence."""
    stats: dict[tuple[int, int], int] = {}
    for ids, n in zip(words, counts, strict=True):
        for pair in zip(ids, ids[1:], strict=False):
            stats[pair] = stats.get(pair, 0) + n
    return stats


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace each occurrence of `pair`, left to right, without overlaps."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def reference_merges(
    chunk_counts: Iterable[tuple[str, int]],
    vocab_size: int,
    tie_break: str = "first",
    min_frequency: int = 1,
) -> list[tuple[int, int]]:
    """Merges (left id, right id) for ids 256, 257, ...; stops when the best count < min_frequency."""
    chunks = list(chunk_counts)
    words = [list(chunk.encode("utf-8")) for chunk, _ in chunks]
    counts = [n for _, n in chunks]
    merges: list[tuple[int, int]] = []
    for new_id in range(256, vocab_size):
        stats = pair_counts(words, counts)
        if not stats:
            break
        if tie_break == "first":
            pair = max(stats, key=stats.get)  # first of the most frequent, in text order
        elif tie_break == "lexical":
            pair = min(stats, key=lambda p: (-stats[p], p))
        else:
            raise ValueError(f"unknown tie_break {tie_break!r}")
        if stats[pair] < min_frequency:
            break
        words = [merge(ids, pair, new_id) for ids in words]
        merges.append(pair)
    return merges


def reference_train(
    chunks: Iterable[str], vocab_size: int, tie_break: str = "first", min_frequency: int = 1
) -> list[tuple[int, int]]:
    """Merges for chunks given in text order (repeats included), deduplicated first."""
    return reference_merges(Counter(chunks).items(), vocab_size, tie_break, min_frequency)

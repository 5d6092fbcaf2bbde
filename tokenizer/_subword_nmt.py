"""subword-nmt's `learn-bpe` loop, ported step for step: classic.py's fallback where
subword-nmt departs from its own algorithm.

classic.py's heap learner keeps the true pair counts. subword-nmt (0.3.8, `learn_bpe.py`,
MIT licence, Rico Sennrich) keeps counts that drift from the truth in two situations:

- its merge is a regex over the space-joined word, `(?<!\\S)first second(?!\\S)`, whose
  guards also accept a tab, a no-break space or other whitespace *inside* a symbol, so it
  can merge `\\td` + `e` for the pair (`d`, `e`) while its statistics update assumes the
  aligned merge (found on C and JavaScript source, which indent with tabs);
- its statistics update counts every symbol equal to the new one, including one made
  earlier by another merge path, and its pruning assumes counts never grow.

Once either has happened the true counts no longer predict subword-nmt's merges, so the
whole run is redone here, with subword-nmt's own bookkeeping (statistics, index, pruning).
Where neither happens (nearly every run) the heap learner is faster and gives the same.
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping

Pair = tuple[str, str]
Stats = defaultdict  # pair -> count, as subword-nmt keeps it (pruned, possibly drifted)

PRUNE_EVERY = 100  # subword-nmt prunes its statistics every 100 merges
THRESHOLD_DAMPING = 10000.0  # its threshold after a reload: best * i / (i + 10000)


def _pair_statistics(vocab: list[tuple[tuple[str, ...], int]]) -> tuple[Stats, Stats]:
    """get_pair_statistics: pair counts, and index pair -> word -> occurrences."""
    stats: Stats = defaultdict(int)
    indices: Stats = defaultdict(lambda: defaultdict(int))
    for i, (word, freq) in enumerate(vocab):
        for pair in zip(word, word[1:], strict=False):
            stats[pair] += freq
            indices[pair][i] += 1
    return stats, indices


def _replace_pair(pair: Pair, vocab: list, indices: Stats) -> list:
    """replace_pair: the regex merge, in every word the index says holds the pair."""
    first, second = pair
    replacement = "".join(pair).replace("\\", "\\\\")
    pattern = re.compile(r"(?<!\S)" + re.escape(first + " " + second) + r"(?!\S)")
    changes = []
    for j, occurrences in indices[pair].items():
        if occurrences < 1:
            continue
        word, freq = vocab[j]
        new_word = tuple(pattern.sub(replacement, " ".join(word)).split(" "))
        vocab[j] = (new_word, freq)
        changes.append((j, new_word, word, freq))
    return changes


def _update_pair_statistics(pair: Pair, changes: list, stats: Stats, indices: Stats) -> None:
    """update_pair_statistics: neighbours of the pair leave, neighbours of the new symbol come."""
    stats[pair] = 0
    indices[pair] = defaultdict(int)
    first, second = pair
    new_pair = first + second
    for j, word, old_word, freq in changes:
        i = 0
        while True:
            try:
                i = old_word.index(first, i)
            except ValueError:
                break
            if i < len(old_word) - 1 and old_word[i + 1] == second:
                if i:
                    prev = old_word[i - 1 : i + 1]
                    stats[prev] -= freq
                    indices[prev][j] -= 1
                if i < len(old_word) - 2 and (
                    old_word[i + 2] != first or i >= len(old_word) - 3 or old_word[i + 3] != second
                ):
                    nex = old_word[i + 1 : i + 3]
                    stats[nex] -= freq
                    indices[nex][j] -= 1
                i += 2
            else:
                i += 1
        i = 0
        while True:
            try:
                i = word.index(new_pair, i)
            except ValueError:
                break
            if i:
                prev = word[i - 1 : i + 1]
                stats[prev] += freq
                indices[prev][j] += 1
            if i < len(word) - 1 and word[i + 1] != new_pair:
                nex = word[i : i + 2]
                stats[nex] += freq
                indices[nex][j] += 1
            i += 1


def _prune(stats: Stats, big_stats: Stats, threshold: float) -> None:
    """prune_stats: move pairs under the threshold to big_stats (deltas of pruned ones added)."""
    for item, freq in list(stats.items()):
        if freq < threshold:
            del stats[item]
            if freq < 0:
                big_stats[item] += freq
            else:
                big_stats[item] = freq


def _best(stats: Stats) -> Pair:
    return max(stats, key=lambda x: (stats[x], x))


def steps(
    symbols_of: Mapping[str, tuple[str, ...]], word_counts: Mapping[str, int], budget: int, min_frequency: int
) -> Iterator[tuple[Pair, int, Stats]]:
    """Yield (pair, count, statistics) per merge, as subword-nmt's learn_bpe picks them.

    `symbols_of` maps each word to its initial symbols (characters, `</w>` on the last).
    Where subword-nmt crashes (no pair at all: `max()` of an empty sequence) this stops.
    """
    vocab = {symbols_of[word]: count for word, count in word_counts.items()}
    sorted_vocab = sorted(vocab.items(), key=lambda item: item[1], reverse=True)
    stats, indices = _pair_statistics(sorted_vocab)
    if not stats:
        return
    big_stats = copy.deepcopy(stats)
    threshold = max(stats.values()) / 10
    for i in range(budget):
        if stats:
            most_frequent = _best(stats)
        if not stats or (i and stats[most_frequent] < threshold):
            _prune(stats, big_stats, threshold)
            stats = copy.deepcopy(big_stats)
            if not stats:
                return
            most_frequent = _best(stats)
            threshold = stats[most_frequent] * i / (i + THRESHOLD_DAMPING)
            _prune(stats, big_stats, threshold)
        if stats[most_frequent] < min_frequency:
            return
        yield most_frequent, stats[most_frequent], stats
        changes = _replace_pair(most_frequent, sorted_vocab, indices)
        _update_pair_statistics(most_frequent, changes, stats, indices)
        stats[most_frequent] = 0
        if not i % PRUNE_EVERY:
            _prune(stats, big_stats, threshold)

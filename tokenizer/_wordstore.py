"""The words the merge engine works on, stored as strings, and numpy's view of them.

A word (a distinct chunk of 2+ bytes) is a str with one character per token id (chr(id)):
merging a pair inside a word is then `str.replace`, which is exactly BPE's left-to-right,
non-overlapping rule, run in C; a pair is a 2-character str there, and elsewhere (counts,
block lists, numpy) the int key left << SHIFT | right (pair_of_key, key_of_pair). Words are stored
WORDS_PER_BLOCK to a str, joined by SEP, so memory is a few bytes per token, not a Python
object per word; word w is word w % WORDS_PER_BLOCK of block w // WORDS_PER_BLOCK.

Counting every pair of every word (done again each time the tracked pairs run out, see
_heap.py) runs word by word in Python for small inputs, and through numpy for big ones:
blocks are joined by JOIN, BATCH_CHARS at a time, into an array of code points.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from operator import index
from typing import Any

SEP, JOIN = "\xff", "\xfe"  # between words, between blocks: bytes UTF-8 never holds, so no token
WORDS_PER_BLOCK = 8  # words stored together in one str
# Characters numpy works on at once (its temporaries: ~60 bytes each): BATCH_CHARS, or a
# 1/BATCH_SHARE of all the words when that is less, but at least MIN_BATCH_CHARS. Big batches
# cut the per-batch Python work of a bulk merge (100 MB: 1 << 16 was ~4% slower there); on small
# inputs a full batch's ~15 MB would be most of the peak (10 MB mixed: 74 vs 70 MB RSS).
BATCH_CHARS = 1 << 18
MIN_BATCH_CHARS = 1 << 16
BATCH_SHARE = 16
DENSE_PAIRS = 1 << 20  # pair counts go in a table of this many slots while ids are few
SHIFT = 21  # numpy pair key: left << SHIFT | right (ids < 2**21)
MASK = (1 << SHIFT) - 1
MAX_COUNT = 1 << 63  # chunk counts are stored as int64
NARROW_IDS = 1 << 16  # while fewer token ids exist, numpy reads the words as uint16, not uint32


def pack_words(items: Iterable[tuple[str, int]], per_block: int) -> tuple[list[str], array]:
    """Words (chunks of 2+ bytes, one latin-1 character per byte) joined by SEP, per_block
    to a str, and their counts: no Python object per word."""
    blocks: list[str] = []
    wcounts = array("q")
    add_count = wcounts.append
    current: list[str] = []
    add_word = current.append
    for chunk, n in items:  # the helpers inlined for the common case: ~2x faster on big tables
        if len(chunk) < 2 and not _holds_pair(chunk):
            continue
        add_count(n if type(n) is int and 0 < n < MAX_COUNT else _checked_count(n))
        add_word(chunk if chunk.isascii() else _latin1(chunk))  # ASCII is its own latin-1 form
        if len(current) == per_block:
            blocks.append(SEP.join(current))
            current.clear()
    if current:
        blocks.append(SEP.join(current))
    return blocks, wcounts


def _holds_pair(chunk: str) -> bool:
    """Whether a chunk has 2+ UTF-8 bytes (a single byte holds no pair)."""
    return len(chunk) > 1 or chunk > "\x7f"


def _latin1(chunk: str) -> str:
    """A chunk as one latin-1 character per UTF-8 byte."""
    try:
        return chunk.encode("utf-8").decode("latin-1")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"chunk {chunk[:40]!r} is not encodable as UTF-8 ({e.reason}): the text holds a lone "
            f"surrogate, U+{ord(chunk[e.start]):04X}; remove or replace such characters before training"
        ) from None


def _checked_count(n: Any) -> int:
    try:
        count = index(n)  # ints and integer-likes such as numpy's, not floats
    except TypeError:
        count = 0
    if not 0 < count < MAX_COUNT:
        raise ValueError(f"chunk counts must be integers from 1 to 2**63 - 1, got {n!r}")
    return count


def sum_by_key(np, keys, weights):
    """Distinct keys (sorted) and the sum of their weights, as arrays."""
    if not len(keys):
        return keys[:0], weights[:0]
    order = np.argsort(keys, kind="stable")
    keys, weights = keys[order], weights[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], np.add.reduceat(weights, starts)


def _fold(np, keys, counts, more_keys, more_counts):
    """Sorted distinct keys with counts, plus more of them (sorted, distinct): a merge, not a
    sort, so folding batch after batch into millions of pairs stays linear and small."""
    at = np.searchsorted(keys, more_keys)
    found = at < len(keys)
    found[found] = keys[at[found]] == more_keys[found]
    counts[at[found]] += more_counts[found]
    new = ~found
    return np.insert(keys, at[new], more_keys[new]), np.insert(counts, at[new], more_counts[new])


def load_numpy():
    """numpy, or None where it is missing (a bare Pyodide): everything then runs word by word."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def pair_of_key(key: int) -> str:
    return chr(key >> SHIFT) + chr(key & MASK)


def key_of_pair(pair: str) -> int:
    return ord(pair[0]) << SHIFT | ord(pair[1])


class WordStore:
    """Reading the words: every pair's count and the blocks that hold it.

    Needs blocks, wcounts (each word's count, array('q')), per_block, chars (characters of
    all blocks when packed: it sizes the numpy batches), token_len (bytes per token id, one
    entry per id made so far), np (numpy or None) and np_counts (wcounts as an int64 array
    when np is set)."""

    def count_pairs_python(self) -> tuple[dict[int, int], dict[int, list[int]]]:
        """Pair key -> count and pair key -> ascending blocks holding it, word by word (both in
        order of first occurrence)."""
        stats: dict[str, int] = {}
        lists: dict[str, list[int]] = {}
        get = stats.get
        w = 0
        wcounts = self.wcounts
        for b, s in enumerate(self.blocks):
            for word in s.split(SEP):
                c = wcounts[w]
                w += 1
                for i in range(len(word) - 1):
                    k = word[i : i + 2]
                    v = get(k)
                    if v is None:
                        stats[k] = c
                        lists[k] = [b]
                    else:
                        stats[k] = v + c
                        e = lists[k]
                        if e[-1] != b:
                            e.append(b)
        return {key_of_pair(k): c for k, c in stats.items()}, {key_of_pair(k): e for k, e in lists.items()}

    def batches(
        self, ids: Sequence[int], strs: Sequence[str]
    ) -> Iterator[tuple[Sequence[int], Sequence[str], Any]]:
        """(block ids, their strs, those joined by JOIN as numpy codes), ~BATCH_CHARS at a time:
        numpy's working memory stays a few times the batch however big the corpus."""
        limit = min(BATCH_CHARS, max(MIN_BATCH_CHARS, self.chars // BATCH_SHARE))
        ends = list(accumulate(map(len, strs)))
        start = 0
        while start < len(ids):
            stop = bisect_left(ends, ends[start] - len(strs[start]) + limit, start) + 1
            group = strs[start:stop]
            yield ids[start:stop], group, self.codes(JOIN.join(group))
            start = stop

    def codes(self, text: str) -> Any:
        """The code points of text as a numpy array: 16 bits each while every token id fits
        (surrogatepass writes a lone surrogate, an id like any other, as its one 16-bit unit),
        which halves what numpy reads; else 32."""
        np = self.np
        if len(self.token_len) <= NARROW_IDS:
            return np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
        return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)

    def word_of_segment(self, group: Sequence[int]) -> Any:
        """Global word id of each word (segment between separators) of the joined group."""
        np, per_block = self.np, self.per_block
        bids = np.array(group, dtype=np.int64)
        sizes = np.minimum(per_block, len(self.wcounts) - bids * per_block)
        starts = np.cumsum(sizes) - sizes
        return np.arange(int(sizes.sum()), dtype=np.int64) + np.repeat(bids * per_block - starts, sizes)

    def positions(self, group: Sequence[int], code: Any, v: int) -> tuple[Any, Any, Any]:
        """For every pair position of the joined group: pair key (left * v + right when v,
        else left << SHIFT | right), word id, block ordinal."""
        np = self.np
        boundary = (code == ord(SEP)) | (code == ord(JOIN))
        pos = np.flatnonzero(~(boundary[:-1] | boundary[1:]))
        left = code[pos].astype(np.int64)
        keys = left * v + code[pos + 1] if v else (left << SHIFT) | code[pos + 1]
        segment = np.cumsum(boundary, dtype=np.int64)[pos]  # boundaries before pos
        words = self.word_of_segment(group)[segment]
        return keys, words, words // self.per_block

    def dense(self) -> int:
        """v when all pairs of ids below v fit one small table (bincount, no sorting), else 0."""
        v = len(self.token_len)
        return v if v * v <= DENSE_PAIRS else 0

    def count_pairs_numpy(self) -> tuple[Any, Any]:
        """Every pair's key (left << SHIFT | right) and total count, sorted by key, a batch at a time."""
        np, v = self.np, self.dense()
        if v:
            totals = np.zeros(v * v, dtype=np.int64)
            for group, _, code in self.batches(range(len(self.blocks)), self.blocks):
                k, words, _ = self.positions(group, code, v)
                # float64 sums are exact below 2**53: a batch holds far fewer occurrences
                totals += np.bincount(k, self.np_counts[words], minlength=v * v).astype(np.int64)
            k = np.flatnonzero(totals)
            return ((k // v) << SHIFT) | (k % v), totals[k]
        keys, counts = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        for group, _, code in self.batches(range(len(self.blocks)), self.blocks):
            k, words, _ = self.positions(group, code, 0)
            keys, counts = _fold(np, keys, counts, *sum_by_key(np, k, self.np_counts[words]))
        return keys, counts

    def lists_numpy(self, hot: Any) -> dict[int, array]:
        """Pair key -> ascending blocks holding it, for the pairs whose keys are in sorted `hot`."""
        np, v = self.np, self.dense()
        lists: dict[int, array] = {}
        if not len(hot):
            return {}
        if v:
            rank_of = np.full(v * v, -1, dtype=np.int64)
            rank_of[(hot >> SHIFT) * v + (hot & MASK)] = np.arange(len(hot))
        small = np.uint16 if len(hot) <= 1 << 16 else np.int64  # 16-bit ranks sort by radix
        for group, _, code in self.batches(range(len(self.blocks)), self.blocks):
            keys, _, blocks = self.positions(group, code, v)
            if v:
                rank = rank_of[keys]
                wanted = rank >= 0
            else:
                rank = np.minimum(np.searchsorted(hot, keys), len(hot) - 1)
                wanted = hot[rank] == keys
            keys, blocks = rank[wanted].astype(small), blocks[wanted]
            order = np.argsort(keys, kind="stable")  # blocks stay ascending within a pair
            keys, blocks = keys[order], blocks[order]
            keep = np.ones(len(keys), dtype=bool)
            keep[1:] = (keys[1:] != keys[:-1]) | (blocks[1:] != blocks[:-1])  # one per (pair, block)
            keys, blocks = keys[keep], blocks[keep]
            if not len(keys):
                continue
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            bounds = (4 * np.r_[starts, len(keys)]).tolist()
            data = blocks.astype(np.int32).tobytes()
            for g, key in enumerate(hot[keys[starts]].tolist()):
                e = lists.get(key)
                if e is None:
                    e = lists[key] = array("i")
                e.frombytes(data[bounds[g] : bounds[g + 1]])
        return lists

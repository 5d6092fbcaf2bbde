"""Heap trainer: byte-level BPE merges, exact against minbpe (`first`) and rustbpe (`lexical`).

Words are the distinct chunks, one character per token id, several to a str
(_wordstore.py): merging a pair inside a word is then `str.replace` (or `str.split` at the
pair and a join, the same occurrences), which is exactly BPE's left-to-right,
non-overlapping rule, run in C.

Per merge only the neighbours of each replaced occurrence change, so pair counts are
updated in place. Counts of existing pairs only fall and every pair containing the new
token is brand new, which makes a lazy max-heap exact: each pair has one entry whose
key is never worse than the truth; a popped entry is checked and pushed back if stale.

`first` ties (minbpe: first occurrence in the current text) use the key
(-count, word index, byte offset): a pair's earliest live occurrence only moves right,
so stored keys stay lower bounds and the check on pop recomputes it. `lexical` ties
use (-count, pair): smallest (left id, right id), as rustbpe.

Each tracked pair keeps the ascending list of blocks that held it when it appeared (all
its occurrences appear at once: when its newer token is made). Blocks that lost the pair
later are skipped when met, not removed.

Only about PAIR_BUDGET pairs (LARGE_PAIR_BUDGET on big inputs) are tracked: those counted at or
above a floor. Exact, as counts never rise: a pair below the floor stays below it, so it cannot
be the best while a tracked pair is left. When none is, every pair is counted again (numpy, a
batch at a time) and the floor drops. Else a big corpus's millions of rare pairs take the memory.

train.py checks the arguments and calls learn(); nothing else here is API.
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush, heapreplace, nlargest
from itertools import compress, repeat
from operator import contains, itemgetter
from typing import Any

from . import _wordstore
from ._gc import paused_gc
from ._heap_trace import TraceView
from ._wordstore import JOIN, MASK, SEP, SHIFT, WordStore, load_numpy, pack_words, pair_of_key, sum_by_key
from .progress import Progress, Ticker

# A merge runs through numpy (scan_bulk) when this many blocks still hold the pair; fewer go
# word by word (scan): numpy's fixed cost, ~0.3 ms a merge, pays off from several hundred blocks.
BULK_MIN_BLOCKS = 800  # 400 and 800 tie at 10 MB; 800 is ~6% faster at 100 MB, 250 and 1600 slower
# Pairs tracked at once (more: fewer recounts, longer block lists): PAIR_BUDGET below LARGE_WORDS
# words, else LARGE_PAIR_BUDGET. Merge CPU, 32k vs 16k: 10 MB mixed (120k words) +7 %; 100 MB English
# a tie; the 100 MB mix (623k) -5 %, no recount instead of 2; 413 MB (2.4M) -10 %, a lower peak.
PAIR_BUDGET, LARGE_PAIR_BUDGET, LARGE_WORDS = 1 << 14, 1 << 15, 1 << 18
# Heap entries are single ints, compared in C (tuples compare item by item, ~2x slower pops):
# `lexical`: -count << PAIR_BITS | pair; `first`: -count << COUNT_SHIFT | word << WORD_SHIFT |
# byte offset << PAIR_BITS | pair, where pair is the pair's key, left << SHIFT | right.
PAIR_BITS, PAIR_MASK = 2 * SHIFT, (1 << 2 * SHIFT) - 1
OFF_BITS = 40  # bits of a word index and of a byte offset in a `first` key
OFF_MASK = (1 << OFF_BITS) - 1
WORD_SHIFT = PAIR_BITS + OFF_BITS
COUNT_SHIFT = WORD_SHIFT + OFF_BITS

Trace = Callable[[dict[str, Any]], None]


@dataclass
class MergeResult:
    merges: list[tuple[int, int]]
    counts: list[int]  # count of each merged pair when it was merged
    ties: int  # merges where another pair had the same count
    stop_reason: str | None  # None when all requested merges were made
    duplicates: dict[int, int] = field(default_factory=dict)  # later id -> first id, same bytes
    seconds: dict[str, float] = field(default_factory=dict)
    recounts: int = 0  # times every pair was counted again because the tracked ones ran out


def learn(
    items: Iterable[tuple[str, int]],
    num_merges: int,
    *,
    first: bool,
    min_frequency: int,
    progress: Progress | None = None,
    trace: Trace | None = None,
) -> MergeResult:
    """Merges of chunks with counts (checked by train.learn_merges): the `first` rule or `lexical`."""
    t0 = time.perf_counter()
    blocks, wcounts = pack_words(items, _wordstore.WORDS_PER_BLOCK)
    with paused_gc():  # the trainer makes no cycles; full collections cost more than merging
        trainer = _HeapTrainer(blocks, wcounts, first, min_frequency)
        t1 = time.perf_counter()
        result = trainer.run(num_merges, progress, trace)
        t2 = time.perf_counter()
    result.seconds = {"index": round(t1 - t0, 3), "merge": round(t2 - t1, 3)}
    result.recounts = trainer.recounts - 1
    return result


def _first_key(count: int, word: int, offset: int, pair: int) -> int:
    """Heap entry of the `first` rule: (-count, word, offset, pair) packed in one int."""
    if offset > OFF_MASK:
        raise ValueError(f"a chunk is longer than {OFF_MASK} bytes")
    return ((-count) << COUNT_SHIFT) | (word << WORD_SHIFT) | (offset << PAIR_BITS) | pair


def _add(weights: dict[str, list[int]], k: str, c: int, b: int) -> None:
    """Weight c of block b for neighbour k: [weight, blocks...], each block once."""
    e = weights.get(k)
    if e is None:
        weights[k] = [c, b]
    else:
        e[0] += c
        if e[-1] != b:
            e.append(b)


class _HeapTrainer(WordStore, TraceView):
    """The merge loop's state.

    blocks: the words, per_block to a str, joined by SEP; word w is word w % per_block of
    blocks[w // per_block]. wcounts: each word's count. floor: pairs counted below it are not
    tracked. Pairs are keyed left << SHIFT | right. pc: tracked pair -> count (exact). where:
    tracked pair -> array('i') of the ascending blocks that held it when it was counted (some
    may have lost it since). heap: one int entry per tracked pair (see PAIR_BITS); its count
    is the bits from count_shift up."""

    def __init__(self, blocks: list[str], wcounts: array, first: bool, min_frequency: int) -> None:
        self.blocks, self.wcounts = blocks, wcounts
        self.chars = sum(map(len, blocks))
        self.per_block = _wordstore.WORDS_PER_BLOCK  # read once (tests patch it)
        self.budget = LARGE_PAIR_BUDGET if len(wcounts) >= LARGE_WORDS else PAIR_BUDGET
        self.first, self.min_frequency = first, min_frequency
        self.count_shift = COUNT_SHIFT if first else PAIR_BITS
        self.token_len = [1] * 256  # bytes per token id
        self.np = load_numpy() if len(blocks) >= BULK_MIN_BLOCKS else None  # small inputs: word by word
        if self.np is not None and max(wcounts) >= 1 << 40:  # sums could pass int64
            self.np = None
        if self.np is not None:
            self.np_counts = self.np.frombuffer(wcounts, dtype=self.np.int64) if wcounts else None
        self.recounts = 0
        self.floor = 1 << 62
        self.index()

    # ----- counting every pair from scratch -------------------------------------------------

    def index(self) -> None:
        """Count every pair of the current words and track the `budget` most frequent ones
        (all with the same count as the last of them too; all of them when min_frequency
        leaves fewer). Exact: counts never rise, so an untracked pair stays below the floor
        until it is counted again, which happens only when no tracked pair is left."""
        self.recounts += 1
        self.pc, self.where, self.heap = {}, {}, []  # all recounted: free the old ones first
        if self.np is not None:
            keys, counts = self.count_pairs_numpy()
            floor = self.min_frequency
            if len(counts) > self.budget:
                floor = max(floor, int(self.np.partition(counts, len(counts) - self.budget)[-self.budget]))
            hot = keys[counts >= floor]
            pc = dict(zip(hot.tolist(), counts[counts >= floor].tolist(), strict=True))
            where = self.lists_numpy(hot)
        else:
            stats, lists = self.count_pairs_python()
            floor = self.min_frequency
            if len(stats) > self.budget:
                floor = max(floor, nlargest(self.budget, stats.values())[-1])
            pc = {k: c for k, c in stats.items() if c >= floor}
            where = {k: array("i", lists[k]) for k in pc}
        self.floor, self.pc, self.where = floor, pc, where
        self.prune_at = 2 * max(self.budget, len(pc))
        per_block = self.per_block
        if self.first:  # _first_key(c, first word of its first block, 0, k), inlined
            self.heap = [
                (-c) << COUNT_SHIFT | (where[k][0] * per_block) << WORD_SHIFT | k for k, c in pc.items()
            ]
        else:
            self.heap = [(-c) << PAIR_BITS | k for k, c in pc.items()]
        heapify(self.heap)

    # ----- the merge loop -------------------------------------------------------------------

    def earliest(self, k: int, w_low: int) -> tuple[int, int]:
        """(word, byte offset) of the first live occurrence of pair k, searching from word w_low's block."""
        blocks, cands, sep, per_block, p = self.blocks, self.where[k], SEP, self.per_block, pair_of_key(k)
        for j in range(bisect_left(cands, w_low // per_block), len(cands)):
            s = blocks[cands[j]]
            if p in s:
                head = s.partition(p)[0]  # before the occurrence: its word's part follows the last SEP
                offset = sum(map(self.token_len.__getitem__, map(ord, head.rpartition(sep)[2])))
                return cands[j] * per_block + head.count(sep), offset
        raise AssertionError(f"pair {p!r} has a count but no occurrence")

    def drop(self, k: int) -> None:
        self.pc.pop(k, None)
        self.where.pop(k, None)

    def pop_best(self) -> tuple[int, int, int, bool] | None:
        """Pop the best pair: (count, pair key, its first word or a lower bound, whether it is
        the only pair with that count), None if none is left.

        A stored count is never below the truth, so when the top's count is exact and both
        children store less, no other pair has that count: no tie to break, and the `first`
        rule need not find the pair's first occurrence (its stored word is a lower bound)."""
        found: dict[int, int] = {}  # pair -> its exact `first` entry, found in this call
        while True:
            heap, pc, first, floor, shift = self.heap, self.pc, self.first, self.floor, self.count_shift
            while heap:
                key = heap[0]
                k = key & PAIR_MASK
                c = pc.get(k, 0)
                if c < floor:  # counts never rise: this pair is out until a recount
                    heappop(heap)
                    self.drop(k)
                    continue
                top = -c
                if key >> shift != top:
                    heapreplace(heap, top << shift | (key & ((1 << shift) - 1)))
                    continue
                n = len(heap)
                unique = (n < 2 or heap[1] >> shift > top) and (n < 3 or heap[2] >> shift > top)
                w_low = (key >> WORD_SHIFT) & OFF_MASK if first else 0
                if first and not unique and found.get(k) != key:  # found keys are exact: no merge since
                    w, off = self.earliest(k, w_low)
                    if (w, off) != (w_low, (key >> PAIR_BITS) & OFF_MASK):
                        found[k] = new = _first_key(c, w, off, k)
                        heapreplace(heap, new)
                        continue
                heappop(heap)
                return c, k, w_low, unique
            if floor <= self.min_frequency:
                return None
            self.index()  # every tracked pair is spent: count again, with a lower floor

    def best_count(self) -> int:
        """Exact count of the best tracked pair (0 if none), refreshing stale tops. Pairs
        that are not tracked are below the floor, so below any tracked pair."""
        heap, pc, floor, shift = self.heap, self.pc, self.floor, self.count_shift
        while heap:
            key = heap[0]
            k = key & PAIR_MASK
            c = pc.get(k, 0)
            if c < floor:
                heappop(heap)
                self.drop(k)
            elif key >> shift != -c:
                heapreplace(heap, (-c) << shift | (key & ((1 << shift) - 1)))
            else:
                return c
        return 0

    def prune(self) -> None:
        """Too many tracked pairs: raise the floor to the budget-th count and forget the rest."""
        self.floor = max(self.floor, nlargest(self.budget, self.pc.values())[-1])
        floor = self.floor
        self.pc = {k: c for k, c in self.pc.items() if c >= floor}
        self.where = {k: self.where[k] for k in self.pc}
        self.heap = [e for e in self.heap if e & PAIR_MASK in self.pc]
        heapify(self.heap)
        self.prune_at = 2 * max(self.budget, len(self.pc))

    def run(self, num_merges: int, progress: Progress | None, trace: Trace | None) -> MergeResult:
        merges: list[tuple[int, int]] = []
        counts: list[int] = []
        vocab: list[bytes] = [bytes([b]) for b in range(256)]
        first_id: dict[bytes, int] = {b: i for i, b in enumerate(vocab)}
        duplicates: dict[int, int] = {}
        ties = 0
        stop_reason = None
        tick = Ticker("merge", num_merges, progress)
        for step in range(num_merges):
            entry = self.pop_best()
            if entry is None:
                stop_reason = (
                    f"no pair occurs {self.min_frequency} or more times"
                    if self.min_frequency > 1
                    else "no pairs left: every chunk is a single token"
                )
                break
            c, k, w_low, unique = entry
            tied = not unique and self.best_count() == c
            ties += tied
            new_id = 256 + step
            left, right = k >> SHIFT, k & MASK
            if trace is not None:
                trace(self.trace_step(step, k, new_id, c, tied))
            self.merge(k, new_id, w_low)
            merges.append((left, right))
            counts.append(c)
            token = vocab[left] + vocab[right]
            vocab.append(token)
            self.token_len.append(len(token))
            if token in first_id:
                duplicates[new_id] = first_id[token]
            else:
                first_id[token] = new_id
            tick.add(1)
        tick.done()
        return MergeResult(merges, counts, ties, stop_reason, duplicates)

    def merge(self, k: int, new_id: int, w_low: int) -> None:
        """Replace pair k by new_id in every word holding it; update counts of the neighbouring pairs."""
        cands = self.where.pop(k)
        self.pc.pop(k, None)
        j0 = bisect_left(cands, w_low // self.per_block)
        ids = cands[j0:]
        p, x = pair_of_key(k), chr(new_id)
        pc, floor, heap, where = self.pc, self.floor, self.heap, self.where
        if self.np is not None and len(ids) >= BULK_MIN_BLOCKS:
            blocks = self.blocks
            strs = itemgetter(*ids)(blocks) if len(ids) > 1 else (blocks[ids[0]],)
            live = list(map(contains, strs, repeat(p)))  # many have lost p to earlier merges
            if not all(live):
                ids, strs = list(compress(ids, live)), list(compress(strs, live))
        if self.np is not None and len(ids) >= BULK_MIN_BLOCKS:  # still, without the dead blocks
            first, per_block = self.first, self.per_block
            for g, (v, e) in self.scan_bulk(p, x, ids, strs).items():
                if v >= floor:
                    pc[g] = v
                    where[g] = e
                    # first: _first_key(v, first word of its first block, 0, g), inlined
                    heappush(
                        heap,
                        (-v) << COUNT_SHIFT | (e[0] * per_block) << WORD_SHIFT | g
                        if first
                        else (-v) << PAIR_BITS | g,
                    )
        else:
            self.scan(p, x, ids)
        if len(pc) > self.prune_at:
            self.prune()

    def scan(self, p: str, x: str, ids: Sequence[int]) -> None:
        """Merge in the blocks `ids` (ascending; some may have lost p): the words, the pair
        counts and the tracked pairs change in place (new pairs at or above the floor join them).

        A block that no longer holds p (it lost it to earlier merges) is skipped. Else
        str.split cuts it at the occurrences of p, which are exactly those str.replace would
        replace (non-overlapping, leftmost first), and x joins the parts again. At each
        occurrence of p = ab with left the character before it and right the one after: lost
        (left, a) and (b, right), gained (left, x) and (x, right); nothing is counted across a
        separator. Both changes of a side depend on the neighbour alone, so the weights are
        summed per left and per right character first (one dict update per neighbour, not four)
        and the pair counts updated once per distinct neighbour at the end (settle).

        Most blocks hold p once: left ends the first part and right starts the second, and the
        occurrence's word is the number of separators before it. Blocks holding it more often
        are walked by scan_many. (`p not in s`, then split and join, runs ~8% fewer
        instructions in the merge phase than str.replace with find and count per block.)"""
        blocks, wcounts, sep, per_block = self.blocks, self.wcounts, SEP, self.per_block
        lefts: dict[str, list[int]] = {}  # left -> [weight, blocks...]: becomes (left, x)
        rights: dict[str, list[int]] = {}  # right -> [weight, blocks...]: becomes (x, right)
        lget, rget = lefts.get, rights.get
        for b in ids:
            s = blocks[b]
            if p not in s:  # the block lost p to earlier merges
                continue
            parts = s.split(p)  # cut at the occurrences str.replace would replace
            blocks[b] = x.join(parts)
            if len(parts) == 2:  # most blocks: b is new to every list it joins (blocks come ascending);
                # _add inlined for both sides (10 MB mixed: 335k of the 350k blocks merged here)
                head, tail = parts
                c = wcounts[b * per_block + head.count(sep)]
                if head:
                    k = head[-1]
                    if k != sep:
                        e = lget(k)
                        if e is None:
                            lefts[k] = [c, b]
                        else:
                            e[0] += c
                            e.append(b)
                if tail:
                    k = tail[0]
                    if k != sep:
                        e = rget(k)
                        if e is None:
                            rights[k] = [c, b]
                        else:
                            e[0] += c
                            e.append(b)
                continue
            q = s.find(p)
            w = b * per_block + s.count(sep, 0, q)  # the word holding the first occurrence
            self.scan_many(s, p, x, b, q, w, len(parts) - 1, lefts, rights)
        self.settle(p, x, lefts, rights)

    def scan_many(
        self, s: str, p: str, x: str, b: int, q: int, w: int, n: int, lefts: dict, rights: dict
    ) -> None:
        """scan() in a block holding p n > 1 times, the first at q in word w: the occurrences
        are found again with str.find, left to right from the end of the previous one (the
        ones split cut at). When the next occurrence starts where this one ends they touch:
        the second has no left, and the first loses (b, a) and gains (x, x) once (right is
        then recorded as x, which the old text never holds). A neighbour met twice in the
        block takes the block once."""
        wcounts, sep = self.wcounts, SEP
        k = s[q - 1] if q else sep
        while True:
            c = wcounts[w]
            if k != sep:
                _add(lefts, k, c, b)
            r = q + 2  # just after this occurrence
            n -= 1
            if n:
                q = s.find(p, r)
                if q == r:  # touching: right is x, and the next occurrence has no left
                    k = x
                else:
                    k = s[r]
            else:
                k = s[r] if r < len(s) else sep
            if k != sep:
                _add(rights, k, c, b)
            if not n:
                break
            if q == r:
                k = sep
            else:
                w += s.count(sep, r, q)
                k = s[q - 1]

    def settle(self, p: str, x: str, lefts: dict[str, list[int]], rights: dict[str, list[int]]) -> None:
        """scan's totals per neighbour applied: tracked lost pairs fall; gained pairs at or above
        the floor are tracked (all new and distinct: (left, x) never equals (x, right), as left
        is never x)."""
        pc, where, heap, floor, first = self.pc, self.where, self.heap, self.floor, self.first
        per_block, shift = self.per_block, self.count_shift
        get = pc.get
        a, b, xid = ord(p[0]), ord(p[1]), ord(x)
        for on_right, weights in ((False, lefts), (True, rights)):
            for k, e in weights.items():
                n = ord(k)
                if on_right:
                    lost, gained = b << SHIFT | (a if n == xid else n), xid << SHIFT | n
                else:
                    lost, gained = n << SHIFT | a, n << SHIFT | xid
                c = e[0]
                v = get(lost)
                if v is not None:
                    pc[lost] = v - c
                if c >= floor:
                    pc[gained] = c
                    where[gained] = array("i", e[1:])
                    # first: _first_key(c, first word of its first block, 0, gained), inlined
                    heappush(
                        heap,
                        (-c) << shift | (e[1] * per_block) << WORD_SHIFT | gained
                        if first
                        else (-c) << shift | gained,
                    )

    def scan_bulk(
        self, p: str, x: str, ids: Sequence[int], strs: Sequence[str]
    ) -> dict[int, tuple[int, array]]:
        """scan() for many blocks at once, a batch at a time: join them, find the occurrences
        and their neighbours with numpy, and touch each distinct neighbouring pair once."""
        blocks = self.blocks
        counts: dict[str, int] = {}
        lists: dict[str, array] = {}
        for group, group_strs, code in self.batches(ids, strs):
            self.scan_batch(p, x, group, code, counts, lists)
            # block by block: ~20% faster than replacing in the joined text and splitting it
            deque(
                map(blocks.__setitem__, group, map(str.replace, group_strs, repeat(p), repeat(x))), maxlen=0
            )
        return {k: (c, lists[k]) for k, c in counts.items()}

    def scan_batch(self, p: str, x: str, group: Sequence[int], code: Any, counts: dict, lists: dict) -> None:
        """Count changes of one batch: pc falls for lost pairs, counts/lists grow for new ones."""
        np, pc = self.np, self.pc
        sep_id, join_id = ord(SEP), ord(JOIN)
        a, b, xid = ord(p[0]), ord(p[1]), ord(x)
        hit = np.flatnonzero((code[:-1] == a) & (code[1:] == b))
        if a == b and len(hit):  # runs like "aaa": keep every other hit from each run's start
            run_start = np.ones(len(hit), dtype=bool)
            run_start[1:] = hit[1:] != hit[:-1] + 1
            first_of_run = np.maximum.accumulate(np.where(run_start, hit, 0))
            hit = hit[(hit - first_of_run) % 2 == 0]
        boundary = (code == sep_id) | (code == join_id)
        # boundaries before each hit (a hit is never one itself): its word in the group
        words = self.word_of_segment(group)[np.searchsorted(np.flatnonzero(boundary), hit)]
        weight = self.np_counts[words]
        after_prev = np.zeros(len(hit), dtype=bool)  # this hit starts where the previous ended
        after_prev[1:] = hit[1:] == hit[:-1] + 2
        before_next = np.zeros(len(hit), dtype=bool)
        before_next[:-1] = after_prev[1:]
        n = len(code)
        left_at = np.maximum(hit - 1, 0)
        has_left = (hit > 0) & ~boundary[left_at] & ~after_prev
        right_at = np.minimum(hit + 2, n - 1)
        has_right = (hit + 2 < n) & ~boundary[right_at]
        left = code[left_at[has_left]].astype(np.int64)
        right = code[right_at[has_right]].astype(np.int64)
        # Lost: (left, a) and (b, right). Gained: (left, x) and (x, right), or (x, x)
        # where two occurrences touch.
        lost = np.concatenate(((left << SHIFT) | a, (b << SHIFT) | right))
        both_weight = np.concatenate((weight[has_left], weight[has_right]))
        get = pc.get
        keys, sums = sum_by_key(np, lost, both_weight)
        for k, d in zip(keys.tolist(), sums.tolist(), strict=True):
            v = get(k)
            if v is not None:
                pc[k] = v - d
        gained = np.concatenate(
            ((left << SHIFT) | xid, (xid << SHIFT) | np.where(before_next[has_right], xid, right))
        )
        gained_block = np.concatenate((words[has_left], words[has_right])) // self.per_block
        order = np.lexsort((gained_block, gained))  # by pair, then block
        gained, gained_weight, gained_block = gained[order], both_weight[order], gained_block[order]
        new_pair = np.ones(len(gained), dtype=bool)
        new_pair[1:] = gained[1:] != gained[:-1]
        group_starts = np.flatnonzero(new_pair)
        if not len(group_starts):
            return
        totals = np.add.reduceat(gained_weight, group_starts).tolist()
        keep = new_pair.copy()
        keep[1:] |= gained_block[1:] != gained_block[:-1]  # one entry per (pair, block)
        block_ids = gained_block[keep].astype(np.int32)
        bounds = (4 * np.r_[np.searchsorted(np.flatnonzero(keep), group_starts), len(block_ids)]).tolist()
        data = block_ids.tobytes()
        cget = counts.get
        for g, (k, total) in enumerate(zip(gained[group_starts].tolist(), totals, strict=True)):
            c = cget(k)
            if c is None:
                counts[k] = total
                e = lists[k] = array("i")
            else:
                counts[k] = c + total
                e = lists[k]
            e.frombytes(data[bounds[g] : bounds[g + 1]])

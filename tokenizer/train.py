"""Heap trainer: byte-level BPE merges, exact against minbpe (`first`) and rustbpe (`lexical`).

Words are the distinct chunks, each held as a str with one character per token id
(chr(id)): merging a pair inside a word is then `str.replace`, which is exactly BPE's
left-to-right, non-overlapping rule, run in C. A pair is a 2-character str.

Per merge only the neighbours of each replaced occurrence change, so pair counts are
updated in place. Counts of existing pairs only fall and every pair containing the new
token is brand new, which makes a lazy max-heap exact: each pair has one entry whose
key is never worse than the truth; a popped entry is checked and pushed back if stale.

`first` ties (minbpe: first occurrence in the current text) use the key
(-count, word index, byte offset): a pair's earliest live occurrence only moves right,
so stored keys stay lower bounds and the check on pop recomputes it. `lexical` ties
use (-count, pair): smallest (left id, right id), as rustbpe.

Each pair keeps the ascending list of words that held it when it appeared (all its
occurrences appear at once: when its newer token is made). Words that lost the pair
later are skipped when met, not removed.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush, heapreplace, nlargest
from itertools import compress, repeat
from operator import contains, itemgetter
from pathlib import Path
from typing import Any

from .core import Tokenizer
from .counting import Progress, count_chunks, load_counts, pattern_key

TIE_BREAKS = ("first", "lexical")
MAX_VOCAB = 0x10FFFF  # one character per token id, and one spare for scan_bulk's separator
BULK_MIN_WORDS = 300  # merges touching this many words run through numpy (scan_bulk)
SHIFT = 21  # numpy pair key: left << SHIFT | right (ids < 2**21)
MASK = (1 << SHIFT) - 1
OFF_BITS = 40  # `first` heap keys: -count << 80 | word << 40 | byte offset
OFF_MASK = (1 << OFF_BITS) - 1
POS_BITS = 2 * OFF_BITS
POS_MASK = (1 << POS_BITS) - 1
TOP_PAIRS = 10  # pairs listed per trace step
TIED_SHOWN = 5  # tied losers listed per trace step
TRACE_SHOWN = max(TOP_PAIRS, 1 + TIED_SHOWN)

Trace = Callable[[dict[str, Any]], None]


@dataclass
class MergeResult:
    merges: list[tuple[int, int]]
    counts: list[int]  # count of each merged pair when it was merged
    ties: int  # merges where another pair had the same count
    stop_reason: str | None  # None when all requested merges were made
    duplicates: dict[int, int] = field(default_factory=dict)  # later id -> first id, same bytes
    seconds: dict[str, float] = field(default_factory=dict)


def learn_merges(
    chunk_counts: Mapping[str, int] | Iterable[tuple[str, int]],
    num_merges: int,
    *,
    tie_break: str = "first",
    min_frequency: int = 2,
    progress: Progress | None = None,
    trace: Trace | None = None,
) -> MergeResult:
    """Learn up to `num_merges` merges from distinct chunks with counts, in first-occurrence order."""
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    if not isinstance(min_frequency, int) or min_frequency < 1:
        raise ValueError(f"min_frequency must be an integer >= 1, got {min_frequency!r}")
    if not isinstance(num_merges, int) or num_merges < 0:
        raise ValueError(f"num_merges must be an integer >= 0, got {num_merges!r}")
    items = chunk_counts.items() if isinstance(chunk_counts, Mapping) else chunk_counts
    t0 = time.perf_counter()
    words: list[str] = []
    wcounts: list[int] = []
    for chunk, n in items:
        try:
            data = chunk.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"chunk {chunk[:40]!r} is not encodable as UTF-8: {e.reason}") from None
        if len(data) > 1:  # single bytes hold no pair
            words.append(data.decode("latin-1"))
            wcounts.append(n)
    with _no_gc():
        trainer = _HeapTrainer(words, wcounts, tie_break == "first", min_frequency)
        t1 = time.perf_counter()
        result = trainer.run(num_merges, progress, trace)
        t2 = time.perf_counter()
    result.seconds = {"index": round(t1 - t0, 3), "merge": round(t2 - t1, 3)}
    return result


def _first_key(count: int, word: int, offset: int) -> int:
    """Heap key of the `first` rule, (-count, word, offset) packed in one int (fast compares)."""
    if offset > OFF_MASK:
        raise ValueError(f"a chunk is longer than {OFF_MASK} bytes")
    return ((-count) << POS_BITS) | (word << OFF_BITS) | offset


def _sum_by_key(np, keys, weights) -> tuple[list[int], list[int]]:
    """Distinct keys and the sum of their weights."""
    if not len(keys):
        return [], []
    order = np.argsort(keys, kind="stable")
    keys, weights = keys[order], weights[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts].tolist(), np.add.reduceat(weights, starts).tolist()


def _numpy():
    """numpy, or None where it is missing (a bare Pyodide): everything then runs word by word."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _initial_index(words: list[str], wcounts: list[int]) -> dict[str, list[int]]:
    """Byte pair -> array('q', [total count, ascending words holding it]); numpy when it is there."""
    np = _numpy() if len(words) >= BULK_MIN_WORDS else None  # small inputs: not worth importing
    if np is None or max(wcounts) >= 1 << 40:
        return _initial_index_python(words, wcounts)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    data = np.frombuffer("".join(words).encode("latin-1"), dtype=np.uint8)
    inside = np.ones(len(data) - 1, dtype=bool)  # slot j pairs data[j] and data[j + 1]
    inside[np.cumsum(lengths)[:-1] - 1] = False  # ... unless j ends a word
    codes = ((data[:-1].astype(np.uint16) << 8) | data[1:])[inside]
    del data, inside
    word_of = np.repeat(np.arange(len(words), dtype=np.int32), lengths - 1)
    weight = np.repeat(np.array(wcounts, dtype=np.int64), lengths - 1)
    order = np.argsort(codes, kind="stable")  # stable: words stay ascending within a pair
    codes, word_of, weight = codes[order], word_of[order], weight[order]
    del order
    new_pair = np.empty(len(codes), dtype=bool)
    new_pair[0] = True
    np.not_equal(codes[1:], codes[:-1], out=new_pair[1:])
    starts = np.flatnonzero(new_pair)
    totals = np.add.reduceat(weight, starts).tolist()
    del weight
    keep = new_pair
    keep[1:] |= word_of[1:] != word_of[:-1]  # one entry per (pair, word)
    word_of = word_of[keep]
    bounds = np.searchsorted(np.flatnonzero(keep), starts).tolist() + [len(word_of)]
    ids = word_of.astype(np.int64).tobytes()
    return {
        chr(code >> 8) + chr(code & 255): _word_list(total, ids, bounds[g], bounds[g + 1])
        for g, (code, total) in enumerate(zip(codes[starts].tolist(), totals, strict=True))
    }


def _word_list(count: int, ids: bytes, start: int, end: int) -> array:
    """array('q', [count, word, word, ...]) from int64 word ids ids[start:end] as bytes."""
    out = array("q", (count,))
    out.frombytes(ids[8 * start : 8 * end])
    return out


def _initial_index_python(words: list[str], wcounts: list[int]) -> dict[str, list[int]]:
    where: dict[str, list[int]] = {}
    get = where.get
    for w, s in enumerate(words):
        c = wcounts[w]
        for i in range(len(s) - 1):
            k = s[i : i + 2]
            e = get(k)
            if e is None:
                where[k] = [c, w]
            else:
                e[0] += c
                if e[-1] != w:
                    e.append(w)
    return where


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: the trainer makes no cycles, but millions of heap
    tuples and lists, and full collections over them cost more than the merging itself (6x)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _HeapTrainer:
    """The merge loop's state. pc: pair -> count (pairs rarer than min_frequency are dropped:
    counts never rise). where: pair -> [scratch, word, word, ...] (an array('q') or a list),
    the ascending words that held the pair when it appeared (some may have lost it since);
    slot 0 held the count while the pair was being made."""

    def __init__(self, words: list[str], wcounts: list[int], first: bool, min_frequency: int) -> None:
        self.words, self.wcounts = words, wcounts
        self.first, self.min_frequency = first, min_frequency
        self.token_len = [1] * 256  # bytes per token id
        where = _initial_index(words, wcounts)
        self.np = _numpy() if len(words) >= BULK_MIN_WORDS else None  # else no merge is bulk
        if self.np is not None:
            try:
                self.np_counts = self.np.array(wcounts, dtype=self.np.int64)
            except OverflowError:  # counts past int64: word by word
                self.np = None
        self.where = {k: e for k, e in where.items() if e[0] >= min_frequency}
        self.pc = {k: e[0] for k, e in self.where.items()}
        if first:
            self.heap = [(_first_key(e[0], e[1], 0), k) for k, e in self.where.items()]
        else:
            self.heap = [(-e[0], k) for k, e in self.where.items()]
        heapify(self.heap)

    def earliest(self, p: str, w_low: int) -> tuple[int, int]:
        """(word, byte offset) of the first live occurrence of p, searching from word w_low."""
        words, cands = self.words, self.where[p]
        for j in range(bisect_left(cands, w_low, 1), len(cands)):
            w = cands[j]
            q = words[w].find(p)
            if q >= 0:
                return w, sum(map(self.token_len.__getitem__, map(ord, words[w][:q])))
        raise AssertionError(f"pair {p!r} has a count but no occurrence")

    def pop_best(self) -> tuple[int, str, int] | None:
        """Pop the best pair: (count, pair, its first word or a lower bound), None if none is left."""
        heap, pc, first, min_frequency = self.heap, self.pc, self.first, self.min_frequency
        while heap:
            top = heap[0]
            key, p = top
            c = pc.get(p, 0)
            if c < min_frequency:  # counts never rise: this pair is out for good
                heappop(heap)
                pc.pop(p, None)
                self.where.pop(p, None)
                continue
            if not first:
                if c != -key:
                    heapreplace(heap, (-c, p))
                    continue
                heappop(heap)
                return c, p, 0
            if c != -(key >> POS_BITS):
                heapreplace(heap, (((-c) << POS_BITS) | (key & POS_MASK), p))
                continue
            w_low = (key >> OFF_BITS) & OFF_MASK
            w, off = self.earliest(p, w_low)
            if (w, off) != (w_low, key & OFF_MASK):
                heapreplace(heap, (_first_key(c, w, off), p))
                continue
            heappop(heap)
            return c, p, w
        return None

    def best_count(self) -> int:
        """Exact count of the best pair still in the heap (0 if none), refreshing stale tops."""
        heap, pc, first = self.heap, self.pc, self.first
        while heap:
            top = heap[0]
            key, p = top
            c = pc.get(p, 0)
            stored = -(key >> POS_BITS) if first else -key
            if c < self.min_frequency:
                heappop(heap)
                pc.pop(p, None)
                self.where.pop(p, None)
            elif c != stored:
                heapreplace(heap, (((-c) << POS_BITS) | (key & POS_MASK), p) if first else (-c, p))
            else:
                return c
        return 0

    def run(self, num_merges: int, progress: Progress | None, trace: Trace | None) -> MergeResult:
        merges: list[tuple[int, int]] = []
        counts: list[int] = []
        vocab: list[bytes] = [bytes([b]) for b in range(256)]
        first_id: dict[bytes, int] = {b: i for i, b in enumerate(vocab)}
        duplicates: dict[int, int] = {}
        ties = 0
        stop_reason = None
        start = last_report = time.perf_counter()
        for step in range(num_merges):
            entry = self.pop_best()
            if entry is None:
                stop_reason = (
                    f"no pair occurs {self.min_frequency} or more times"
                    if self.min_frequency > 1
                    else "no pairs left: every chunk is a single token"
                )
                break
            c, p, w_low = entry
            tied = self.best_count() == c
            ties += tied
            new_id = 256 + step
            left, right = ord(p[0]), ord(p[1])
            if trace is not None:
                trace(self.trace_step(step, p, new_id, c, tied))
            self.merge(p, chr(new_id), w_low)
            merges.append((left, right))
            counts.append(c)
            token = vocab[left] + vocab[right]
            vocab.append(token)
            self.token_len.append(len(token))
            if token in first_id:
                duplicates[new_id] = first_id[token]
            else:
                first_id[token] = new_id
            if progress is not None:
                now = time.perf_counter()
                if now - last_report >= 0.1:
                    last_report = now
                    _report(progress, "merge", step + 1, num_merges, start, now)
        if progress is not None:
            _report(progress, "merge", len(merges), num_merges, start, time.perf_counter())
        return MergeResult(merges, counts, ties, stop_reason, duplicates)

    def merge(self, p: str, x: str, w_low: int) -> None:
        """Replace p by x in every word holding it; update counts of the neighbouring pairs."""
        cands = self.where.pop(p)
        j0 = bisect_left(cands, w_low, 1)
        if self.np is not None and len(cands) - j0 >= BULK_MIN_WORDS:
            fresh = self.scan_bulk(p, x, cands, j0)
        else:
            fresh = self.scan(p, x, cands, j0)
        self.pc.pop(p, None)
        pc, min_frequency, heap, where = self.pc, self.min_frequency, self.heap, self.where
        first = self.first
        for k, e in fresh.items():
            v = e[0]
            if v >= min_frequency:
                pc[k] = v
                where[k] = e if type(e) is array else array("q", e)  # 8 bytes a word
                heappush(heap, (_first_key(v, e[1], 0), k) if first else (-v, k))

    def scan(self, p: str, x: str, cands: list[int], j0: int) -> dict[str, list[int]]:
        """Merge word by word: the words and pair counts change in place; returns the new
        pairs as pair -> [count, word, word, ...]."""
        words, wcounts, pc = self.words, self.wcounts, self.pc
        get = pc.get
        fresh: dict[str, list[int]] = {}
        fget = fresh.get
        for j in range(j0, len(cands)):
            w = cands[j]
            s = words[w]
            t = s.replace(p, x)
            if t is s:  # the word lost p to an earlier merge
                continue
            words[w] = t
            c = wcounts[w]
            n = len(s)
            if n - len(t) == 1:  # one occurrence: the common case
                i = s.find(p)
                if i:
                    k = s[i - 1 : i + 1]
                    v = get(k)
                    if v is not None:
                        pc[k] = v - c
                    k = t[i - 1 : i + 1]
                    e = fget(k)
                    if e is None:
                        fresh[k] = [c, w]
                    else:  # first time for this word: one occurrence touches distinct pairs
                        e[0] += c
                        e.append(w)
                if i + 2 < n:
                    k = s[i + 1 : i + 3]
                    v = get(k)
                    if v is not None:
                        pc[k] = v - c
                    k = t[i : i + 2]
                    e = fget(k)
                    if e is None:
                        fresh[k] = [c, w]
                    else:
                        e[0] += c
                        e.append(w)
                continue
            # Several occurrences. Lost: the pairs overlapping an occurrence (the one
            # between two adjacent occurrences only once). Gained: the pairs holding x.
            i = s.find(p)
            prev_end = -1
            while i >= 0:
                if i and i != prev_end:
                    k = s[i - 1 : i + 1]
                    v = get(k)
                    if v is not None:
                        pc[k] = v - c
                if i + 2 < n:
                    k = s[i + 1 : i + 3]
                    v = get(k)
                    if v is not None:
                        pc[k] = v - c
                prev_end = i + 2
                i = s.find(p, prev_end)
            m = len(t)
            q = t.find(x)
            while q >= 0:
                for k in (
                    t[q - 1 : q + 1] if q and t[q - 1] != x else None,
                    t[q : q + 2] if q + 1 < m else None,
                ):
                    if k is None:
                        continue
                    e = fget(k)
                    if e is None:
                        fresh[k] = [c, w]
                    else:
                        e[0] += c
                        if e[-1] != w:
                            e.append(w)
                q = t.find(x, q + 1)
        return fresh

    def scan_bulk(self, p: str, x: str, cands: list[int], j0: int) -> dict[str, list[int]]:
        """scan() for many words at once: join them, find the occurrences and their
        neighbours with numpy, and touch each distinct neighbouring pair once."""
        np = self.np
        words, pc = self.words, self.pc
        wlist = cands[j0:]
        strs = itemgetter(*wlist)(words) if len(wlist) > 1 else (words[wlist[0]],)
        live = list(map(contains, strs, repeat(p)))  # about half have lost p since: drop them
        if not all(live):
            wlist, strs = list(compress(wlist, live)), list(compress(strs, live))
            if not strs:
                return {}
        wids = np.array(wlist, dtype=np.int64)
        sep_code = ord(x) + 1  # no word holds an id above x
        sep = chr(sep_code)
        big = sep.join(strs)
        code = np.frombuffer(big.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        a, b, xid = ord(p[0]), ord(p[1]), ord(x)
        hit = np.flatnonzero((code[:-1] == a) & (code[1:] == b))
        if a == b and len(hit):  # runs like "aaa": keep every other hit from each run's start
            run_start = np.ones(len(hit), dtype=bool)
            run_start[1:] = hit[1:] != hit[:-1] + 1
            first_of_run = np.maximum.accumulate(np.where(run_start, hit, 0))
            hit = hit[(hit - first_of_run) % 2 == 0]
        starts = np.zeros(len(strs), dtype=np.int64)  # where each word begins in `big`
        starts[1:] = np.flatnonzero(code == sep_code) + 1
        word_at = np.searchsorted(starts, hit, side="right") - 1  # index into wlist
        weight = self.np_counts[wids[word_at]]
        after_prev = np.zeros(len(hit), dtype=bool)  # this hit starts where the previous ended
        after_prev[1:] = hit[1:] == hit[:-1] + 2
        before_next = np.zeros(len(hit), dtype=bool)
        before_next[:-1] = after_prev[1:]
        n = len(code)
        left = code[np.maximum(hit - 1, 0)]
        has_left = (hit > 0) & (left != sep_code) & ~after_prev
        right = code[np.minimum(hit + 2, n - 1)]
        has_right = (hit + 2 < n) & (right != sep_code)
        left, right = left[has_left], right[has_right]
        # Lost: (left, a) and (b, right). Gained: (left, x) and (x, right), or (x, x)
        # where two occurrences touch.
        lost = np.concatenate(((left << SHIFT) | a, (b << SHIFT) | right))
        lost_weight = np.concatenate((weight[has_left], weight[has_right]))
        get = pc.get
        for key, d in zip(*_sum_by_key(np, lost, lost_weight), strict=True):
            k = chr(key >> SHIFT) + chr(key & MASK)
            v = get(k)
            if v is not None:
                pc[k] = v - d
        gained = np.concatenate(
            ((left << SHIFT) | xid, (xid << SHIFT) | np.where(before_next[has_right], xid, right))
        )
        gained_weight = np.concatenate((weight[has_left], weight[has_right]))
        gained_word = np.concatenate((word_at[has_left], word_at[has_right]))
        order = np.lexsort((gained_word, gained))  # by pair, then word
        gained, gained_weight, gained_word = gained[order], gained_weight[order], gained_word[order]
        new_pair = np.ones(len(gained), dtype=bool)
        new_pair[1:] = gained[1:] != gained[:-1]
        group_starts = np.flatnonzero(new_pair)
        totals = np.add.reduceat(gained_weight, group_starts).tolist() if len(gained) else []
        keep = new_pair.copy()
        keep[1:] |= gained_word[1:] != gained_word[:-1]
        word_ids = wids[gained_word[keep]]
        bounds = np.searchsorted(np.flatnonzero(keep), group_starts).tolist() + [len(word_ids)]
        ids = word_ids.tobytes()
        fresh = {
            chr(key >> SHIFT) + chr(key & MASK): _word_list(total, ids, bounds[g], bounds[g + 1])
            for g, (key, total) in enumerate(zip(gained[group_starts].tolist(), totals, strict=True))
        }
        deque(map(words.__setitem__, wlist, big.replace(p, x).split(sep)), maxlen=0)  # words[w] = t, in C
        return fresh

    def trace_step(self, step: int, p: str, new_id: int, count: int, tied: bool) -> dict[str, Any]:
        """What a step-through view shows: the best pairs before this merge, in the rule's order.

        Counts come from self.pc, exact for every pair that can still be merged; `first` ties
        are ordered by each pair's first live occurrence (word, position), found through the
        reverse index. Only when fewer than TRACE_SHOWN such pairs are left (the list would
        then hold rarer pairs, which pc no longer tracks) is everything recounted."""
        live = [(c, k) for k, c in self.pc.items() if c >= self.min_frequency]
        if len(live) < TRACE_SHOWN:
            stats, ranked = self.recount()
        else:
            floor = nlargest(TRACE_SHOWN, live)[-1][0]
            cands = [(c, k) for c, k in live if c >= floor]
            stats = {k: c for c, k in cands}
            if self.first:
                ranked = [k for *_, k in sorted((-c, self.first_at(k), k) for c, k in cands)]
            else:
                ranked = [k for _, k in sorted((-c, k) for c, k in cands)]
        if ranked[0] != p or stats[p] != count:
            raise AssertionError(f"trace recount disagrees at step {step}: {ranked[0]!r} vs {p!r}")
        as_ids = lambda k: (ord(k[0]), ord(k[1]))  # noqa: E731
        tied_with = [as_ids(k) for k in ranked[1 : 1 + TIED_SHOWN] if stats[k] == count]
        return {
            "step": step,
            "pair": as_ids(p),
            "new_id": new_id,
            "count": count,
            "tied_with": tied_with,
            "rule": ("first" if self.first else "lexical") if tied else "count",
            "top_pairs": [(as_ids(k), stats[k]) for k in ranked[:TOP_PAIRS]],
        }

    def first_at(self, k: str) -> tuple[int, int]:
        """(word, position) of the first live occurrence of pair k: text order."""
        words = self.words
        for w in self.where[k][1:]:
            q = words[w].find(k)
            if q >= 0:
                return w, q
        raise AssertionError(f"pair {k!r} has a count but no occurrence")

    def recount(self) -> tuple[dict[str, int], list[str]]:
        """All pair counts from scratch, ranked by the tie rule (dict order = first occurrence)."""
        stats: dict[str, int] = {}
        for s, c in zip(self.words, self.wcounts, strict=True):
            for i in range(len(s) - 1):
                k = s[i : i + 2]
                stats[k] = stats.get(k, 0) + c
        if self.first:
            order = {k: i for i, k in enumerate(stats)}
            ranked = sorted(stats, key=lambda k: (-stats[k], order[k]))
        else:
            ranked = sorted(stats, key=lambda k: (-stats[k], k))
        return stats, ranked


def _report(progress: Progress, phase: str, done: int, total: int, start: float, now: float) -> None:
    rate = done / max(now - start, 1e-9)
    progress(phase, done, total, rate, (total - done) / rate if rate > 0 else None)


# ----- the public entry point ----------------------------------------------------------------


def _check_parameters(vocab_size, tie_break, min_frequency, special_tokens) -> list[str]:
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise ValueError(f"vocab_size must be an integer, got {vocab_size!r}")
    if not 257 <= vocab_size <= MAX_VOCAB:
        raise ValueError(
            f"vocab_size must be between 257 (256 bytes + 1 merge) and {MAX_VOCAB}, got {vocab_size}"
        )
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or min_frequency < 1:
        raise ValueError(f"min_frequency must be an integer >= 1, got {min_frequency!r}")
    if special_tokens is None:
        return []
    if isinstance(special_tokens, (str, bytes)) or not isinstance(special_tokens, Iterable):
        raise ValueError("special_tokens must be a list of strings")
    special = list(special_tokens)
    for token in special:
        if not isinstance(token, str) or not token:
            raise ValueError(f"special tokens must be non-empty strings, got {token!r}")
    dupes = sorted({t for t in special if special.count(t) > 1})
    if dupes:
        raise ValueError(f"special tokens must be unique; repeated: {', '.join(map(repr, dupes))}")
    return special


def train(
    corpus: Any,
    vocab_size: int,
    *,
    pattern: str = "gpt4",
    special_tokens: list[str] | None = None,
    tie_break: str = "first",
    min_frequency: int = 2,
    workers: int | None = None,
    progress: Progress | None = None,
    min_chunk_count: int = 1,
    counts: Any = None,
    trace: Trace | None = None,
    name: str = "custom",
) -> Tokenizer:
    """Train a byte-level BPE tokenizer: ids 0..255 are bytes, merges get 256.., specials follow.

    corpus: a str is the text itself; a pathlib.Path or a list of paths names files
    (streamed, never read whole); any other iterable yields str documents. Chunks never
    span documents. counts: instead of a corpus, a count table (path of a file written by
    `save_counts` / `python -m tokenizer count`, or the (counts, meta) pair that
    `count_chunks` returns); its pattern must be `pattern`.
    tie_break: "first" (minbpe's merges) or "lexical" (rustbpe's). Training stops early,
    and says so in metadata, when the best pair occurs fewer than min_frequency times.
    progress(phase, done, total, rate, eta) is called for phases "count" and "merge";
    trace(step_info) once per merge (see _HeapTrainer.trace_step).
    """
    special = _check_parameters(vocab_size, tie_break, min_frequency, special_tokens)
    t0 = time.perf_counter()
    if counts is not None:
        if corpus is not None:
            raise ValueError("give either a corpus or counts, not both")
        chunk_counts, count_stats = _given_counts(counts, pattern, min_chunk_count)
    else:
        chunk_counts, count_stats = count_chunks(
            corpus, pattern, workers=workers, progress=progress, min_chunk_count=min_chunk_count
        )
    t1 = time.perf_counter()
    result = learn_merges(
        _drained(chunk_counts),  # the table is freed once the words are built from it
        vocab_size - 256,
        tie_break=tie_break,
        min_frequency=min_frequency,
        progress=progress,
        trace=trace,
    )
    seconds = {"count": round(t1 - t0, 3), **result.seconds}
    metadata = {
        "trainer": "heap",
        "stopped_early": result.stop_reason is not None,
        "stop_reason": result.stop_reason,
        "training": {
            "vocab_size": vocab_size,
            "pattern": pattern,
            "tie_break": tie_break,
            "min_frequency": min_frequency,
            "min_chunk_count": min_chunk_count,
            "special_tokens": special,
            "workers": count_stats.get("workers", workers),
        },
        "statistics": {
            "documents": count_stats.get("documents"),
            "bytes": count_stats.get("bytes"),
            "chunks": count_stats.get("chunks"),
            "unique_chunks": count_stats.get("unique_chunks"),
            "merges": len(result.merges),
            "ties": result.ties,
            "last_merge_count": result.counts[-1] if result.counts else None,
            "seconds": {**seconds, "total": round(time.perf_counter() - t0, 3)},
        },
        "duplicate_tokens": {str(k): v for k, v in result.duplicates.items()},
    }
    return Tokenizer.from_merges(
        result.merges,
        pattern,
        {token: 256 + len(result.merges) + i for i, token in enumerate(special)},
        name=name,
        metadata=metadata,
    )


def _drained(counts: dict[str, int]) -> Iterator[tuple[str, int]]:
    """The items of a dict we own, in order; the dict is emptied after the last one."""
    yield from counts.items()
    counts.clear()


def _given_counts(counts: Any, pattern: str, min_chunk_count: int) -> tuple[dict[str, int], dict[str, Any]]:
    if isinstance(counts, (str, os.PathLike)):
        chunk_counts, meta = load_counts(counts)
        source = str(counts)
    elif isinstance(counts, tuple) and len(counts) == 2 and isinstance(counts[0], Mapping):
        chunk_counts, meta = dict(counts[0]), dict(counts[1])
        source = "the given counts"
    else:
        raise ValueError("counts must be a count table path or the (counts, meta) pair of count_chunks")
    if meta.get("pattern") != pattern_key(pattern):
        theirs = meta.get("pattern_name") or meta.get("pattern")
        raise ValueError(
            f"{source} were counted with pattern {theirs!r}, not {pattern!r}; count again or train with that pattern"
        )
    if min_chunk_count > 1:
        chunk_counts = {k: v for k, v in chunk_counts.items() if v >= min_chunk_count}
        meta["unique_chunks"] = len(chunk_counts)
    return chunk_counts, meta


# ----- command line --------------------------------------------------------------------------


@contextlib.contextmanager
def cli_progress(quiet: bool = False) -> Iterator[Progress | None]:
    """A progress callback drawing one tqdm bar per phase on stderr (plain lines without tqdm)."""
    if quiet:
        yield None
        return
    bars: dict[str, Any] = {}
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None

    def progress(phase: str, done: int, total: int, rate: float, eta: float | None) -> None:
        if tqdm is None:
            print(f"{phase}: {done}/{total}", file=sys.stderr)
            return
        bar = bars.get(phase)
        if bar is None:
            unit = "B" if phase == "count" else "merge"
            bar = bars[phase] = tqdm(
                total=total, desc=phase, unit=unit, unit_scale=phase == "count", leave=True
            )
        bar.total = total
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        for bar in bars.values():
            bar.close()


def cmd_train(args: argparse.Namespace) -> int:
    if not args.files and not args.counts:
        raise ValueError("give FILEs to train on, or --counts")
    if args.files and args.counts:
        raise ValueError("give FILEs or --counts, not both")
    pattern = args.pattern
    if args.counts and pattern is None:
        pattern = load_counts_pattern(args.counts)
    corpus = [Path(f) for f in args.files] if args.files else None
    with cli_progress(args.quiet) as progress:
        tok = train(
            corpus,
            args.vocab_size,
            pattern=pattern or "gpt4",
            special_tokens=args.special,
            tie_break=args.tie_break,
            min_frequency=args.min_frequency,
            workers=args.workers,
            progress=progress,
            min_chunk_count=args.min_chunk_count,
            counts=args.counts,
            name=Path(args.output).name,
        )
    tok.save(args.output)
    meta = tok.metadata
    stats = meta["statistics"]
    print(
        f"{stats['merges']} merges ({stats['ties']} decided by a tie) in {stats['seconds']['total']:.1f} s"
        + (f"; stopped early: {meta['stop_reason']}" if meta["stopped_early"] else "")
        + f" -> {args.output}.tiktoken, {args.output}.json",
        file=sys.stderr,
    )
    return 0


def load_counts_pattern(path: str) -> str:
    """The pattern a count table was made with (its name when it has one)."""
    _, meta = load_counts(path)
    return meta.get("pattern_name") or meta["pattern"]


def add_subcommands(subparsers) -> None:
    p = subparsers.add_parser("train", help="train a byte-level BPE tokenizer on files")
    p.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files (streamed)")
    p.add_argument("--vocab-size", "-v", type=int, required=True, help="256 bytes + merges")
    p.add_argument("--pattern", "-p", help="gpt2, gpt4 (default), o200k, none, or a regex")
    p.add_argument(
        "--tie-break", choices=TIE_BREAKS, default="first", help="first (minbpe) or lexical (rustbpe)"
    )
    p.add_argument("--special", action="append", metavar="TOKEN", help="a special token (repeatable)")
    p.add_argument("--workers", "-j", type=int, help="counting processes (default: all cores for big inputs)")
    p.add_argument(
        "--min-frequency", type=int, default=2, help="stop when the best pair is rarer (default 2)"
    )
    p.add_argument("--min-chunk-count", type=int, default=1, help="drop chunks seen fewer times")
    p.add_argument("--counts", metavar="FILE", help="train on a count table from `count` instead of FILEs")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT_STEM", help="writes OUT_STEM.tiktoken + .json"
    )
    p.set_defaults(func=cmd_train)

"""Extension: new merges on top of an existing tokenizer, without changing a single id.

extend(base, corpus, add) continues minbpe's training loop from the base's vocabulary:
the corpus is split with the base's pattern and its chunks counted (counting.py; special-
token strings are ordinary text, as in train); each chunk's segmentation is what the
encoder produces with the vocabulary learned so far (the base first); the adjacent pair
with the highest count, weighted by chunk frequency, becomes the next token. Ties go to the
pair that occurs first in the corpus (`first`: distinct chunks in first-occurrence order,
positions left to right, as train's `first`) or to the smallest pair of ids (`lexical`).
Every base token keeps its id and bytes, special tokens keep theirs, and new ids start
after the base's largest id (mergeable or special) and are contiguous, so a model's
embedding table only grows.

Why it is exact to re-encode only the chunks that hold the chosen pair (a, b). The new
token T gets the highest rank of all. The encoder merges the lowest-rank mergeable pair
first, so with the vocabulary V + T it makes exactly the choices it makes with V for as
long as some pair of V is mergeable: it reaches the V-segmentation, and only then may T
merge. T merges iff that segmentation holds an adjacent pair whose bytes concatenate to
T's bytes, and that pair can only be (a, b), by this lemma: if tokens x and y end up
adjacent in a chunk's segmentation, the bytes of x + y alone encode to exactly [x, y].
(No merge crosses the outer edges of x y, so inside them the state changes only by
merges of inside pairs; each was the lowest-rank pair of the whole chunk when it was made,
so also of the inside. Encoding x + y alone makes the same merges in the same order and
stops where they stop.) So another split of T's bytes, (ab, c) next to (a, bc), never
occurs: both would be the V-encoding of T's bytes. tests/test_extend.py checks the lemma
on real text. After T merges, more merges can follow, of base tokens too (their ranks are
lower), so the new segmentation comes from the live encoder, never from replacing the
pair in place; every other chunk keeps its segmentation. So after each merge we re-encode
exactly the chunks holding (a, b) (a pair -> chunks index) and change the pair counts by
the difference between the old and the new segmentation. Re-encoding leaves no (a, b), so
no merge is made twice. Every pair of a segmentation concatenates to bytes that are not a
token yet (the encoder would have merged it), so a new token never duplicates one, and by
the lemma each new token's own bytes encode to it.

Unlike train's (_heap.py), counts here can also rise: merges that follow T can create
pairs that exist elsewhere already. The max-heap stays exact by keeping, for each pair,
an entry whose key is never worse than the truth: an entry is pushed whenever a pair
gains occurrences (for `first` with the earliest possible position, a lower bound), and a
popped entry is recomputed and pushed back unless it is exact.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

from .core import Tokenizer
from .counting import count_chunks
from .progress import Progress, Ticker
from .train import DEFAULT_MIN_FREQUENCY, DEFAULT_TIE_BREAK, _check_rule
from .validate import MAX_ID, plain_int

Pair = tuple[int, int]
MAX_ADD = 1 << 20  # new tokens per call; far beyond any vocabulary in use


class _LiveEncoder:
    """The encoder with ranks that grow by one token per merge.

    A Tokenizer holds its ranks dict by reference, so adding a token is one dict store;
    its chunk cache is bypassed (it would hold segmentations made before the token) and
    its longest-token bound, which the cuts of long chunks rely on, is kept up to date."""

    def __init__(self, base: Tokenizer) -> None:
        self.ranks = dict(base.mergeable_ranks)
        self.tok = Tokenizer(
            self.ranks, base.pattern, name=base.name, unicode=base.unicode, chunk_lookup=base.chunk_lookup
        )
        self.encode = self.tok._encode_new_chunk  # the merge loop alone without chunk_lookup

    def add(self, token: bytes, token_id: int) -> None:
        self.ranks[token] = token_id
        longest = self.tok._longest_token
        if longest is not None and len(token) > longest:
            self.tok._longest_token = len(token)


class _Extender:
    """Chunks, their segmentations and the pair counts; one merge at a time."""

    def __init__(self, base: Tokenizer, chunk_counts: Iterable[tuple[str, int]], first: bool) -> None:
        self.live = _LiveEncoder(base)
        self.first = first
        self.token_bytes: dict[int, bytes] = {i: t for t, i in self.live.ranks.items()}
        self.words: list[str] = []  # chunks of two or more tokens, in first-occurrence order
        self.wcounts: list[int] = []
        self.segs: list[tuple[int, ...]] = []
        self.tokens = 0  # tokens of the whole corpus with the vocabulary so far
        encode, get = self.live.encode, self.live.ranks.get
        lookup = base.chunk_lookup  # off (HF's ignore_merges: false), a chunk that is a token may still split
        for chunk, c in chunk_counts:
            try:
                piece = chunk.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: the encoder reads them as U+FFFD
                chunk = chunk.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
                piece = chunk.encode("utf-8")
            if lookup and get(piece) is not None:
                self.tokens += c
                continue
            seg = encode(chunk)
            self.tokens += c * len(seg)
            if len(seg) > 1:
                self.words.append(chunk)
                self.wcounts.append(c)
                self.segs.append(seg)
        self.tokens_before = self.tokens
        self.pc: dict[Pair, int] = {}
        self.where: dict[Pair, set[int]] = {}
        self.heap: list[tuple] = []
        self.count_pairs()

    def count_pairs(self) -> None:
        pc, where = self.pc, self.where
        seen: dict[Pair, tuple[int, int]] = {}  # pair -> its first (word, position)
        for w, seg in enumerate(self.segs):
            c = self.wcounts[w]
            for i, p in enumerate(pairwise(seg)):
                if p in pc:
                    pc[p] += c
                    where[p].add(w)
                else:
                    pc[p] = c
                    where[p] = {w}
                    seen[p] = (w, i)
        if self.first:
            self.heap = [(-c, *seen[p], p) for p, c in pc.items()]
        else:
            self.heap = [(-c, p) for p, c in pc.items()]
        heapq.heapify(self.heap)

    def true_key(self, p: Pair) -> tuple | None:
        c = self.pc.get(p)
        if c is None:
            return None
        if not self.first:
            return (-c, p)
        w = min(self.where[p])
        seg = self.segs[w]
        i = next(i for i, q in enumerate(pairwise(seg)) if q == p)
        return (-c, w, i, p)

    def pop_best(self) -> tuple[Pair, int] | None:
        """The best pair and its count (its entry leaves the heap), None when no pair is left."""
        heap = self.heap
        while heap:
            entry = heap[0]
            key = self.true_key(entry[-1])
            if key is None:
                heapq.heappop(heap)
            elif key != entry:
                heapq.heapreplace(heap, key)
            else:
                heapq.heappop(heap)
                return key[-1], -key[0]
        return None

    def best_count(self) -> int:
        """The count of the best pair left (0 if none): refreshes stale counts at the top."""
        heap, pc = self.heap, self.pc
        while heap:
            entry = heap[0]
            c = pc.get(entry[-1])
            if c is None:
                heapq.heappop(heap)
            elif c != -entry[0]:
                p = entry[-1]
                heapq.heapreplace(heap, (-c, 0, 0, p) if self.first else (-c, p))
            else:
                return c
        return 0

    def run(self, add: int, first_id: int, min_frequency: int, progress: Progress | None) -> None:
        """Up to `add` merges with ids first_id, first_id + 1, ...; fills merges, counts,
        ties, reencoded and stop_reason."""
        self.merges: list[Pair] = []
        self.counts: list[int] = []
        self.ties = self.reencoded = 0
        self.stop_reason: str | None = None
        tick = Ticker("merge", add, progress)
        for step in range(add):
            best = self.pop_best()
            if best is None or best[1] < min_frequency:
                self.stop_reason = (
                    "no pairs left: every chunk is a single token"
                    if best is None
                    else f"no pair occurs {min_frequency} or more times"
                )
                break
            p, c = best
            self.ties += self.best_count() == c
            self.reencoded += self.merge(p, first_id + step)
            self.merges.append(p)
            self.counts.append(c)
            tick.add(1)
        tick.done()

    def merge(self, p: Pair, new_id: int) -> int:
        """Add the token of pair p as new_id; re-encode the chunks it changes. Returns how many."""
        token = self.token_bytes[p[0]] + self.token_bytes[p[1]]
        self.token_bytes[new_id] = token
        self.live.add(token, new_id)
        affected = list(self.where[p])  # reencode() changes the set
        gained: set[Pair] = set()
        for w in affected:
            self.reencode(w, gained)
        pc, heap = self.pc, self.heap
        for q in gained:
            c = pc.get(q)
            if c is not None:
                heapq.heappush(heap, (-c, 0, 0, q) if self.first else (-c, q))
        return len(affected)

    def reencode(self, w: int, gained: set[Pair]) -> None:
        old = self.segs[w]
        new = self.live.encode(self.words[w])
        self.segs[w] = new
        c = self.wcounts[w]
        self.tokens += c * (len(new) - len(old))
        old_pairs = Counter(pairwise(old))
        new_pairs = Counter(pairwise(new))
        pc, where = self.pc, self.where
        for q, n in old_pairs.items():
            left = pc[q] - n * c
            if q not in new_pairs:
                where[q].discard(w)
            if left:
                pc[q] = left
            else:
                del pc[q], where[q]
        for q, n in new_pairs.items():
            if q in pc:
                pc[q] += n * c
                where[q].add(w)
            else:
                pc[q] = n * c
                where[q] = {w}
            if self.first or n > old_pairs.get(q, 0):  # `first`: its position may have moved left
                gained.add(q)


def check_extendable(base: Tokenizer) -> None:
    """ValueError unless extend() reproduces `base` exactly. It counts the corpus's raw chunks,
    so a base must encode raw chunks: no preparation (a HF file's normalizer, prefix space or
    splits before its pattern). Without the whole-chunk lookup (HF's ignore_merges: false, as
    in GPT-2's tokenizer.json) the merge loop alone encodes, and the argument above holds for it
    as it is: it is the encoder minus the lookup of a chunk that is itself a token."""
    if base.preparation is not None:
        raise ValueError(
            f"{base.name} cannot be extended exactly: it {base.preparation.describe()}, which extend "
            "does not reproduce yet; extend a tokenizer without it"
        )


def check_add(base: Tokenizer, add: Any) -> None:
    """ValueError unless `add` is an integer from 0 to MAX_ADD whose new ids, after the base's
    largest, still fit in a tokenizer file (else the result is written, then refused by every loader)."""
    if not isinstance(add, int) or isinstance(add, bool) or not 0 <= add <= MAX_ADD:
        raise ValueError(f"add must be an integer from 0 to {MAX_ADD}, got {add!r}")
    if base.n_vocab + add > MAX_ID:
        raise ValueError(
            f"{base.name}'s ids go up to {base.n_vocab - 1:,}; {add:,} new ids would pass "
            f"{MAX_ID - 1:,}, the largest a tokenizer file holds: add at most {max(MAX_ID - base.n_vocab, 0):,}"
        )


def extend(
    base: Tokenizer | str,
    corpus: Any,
    add: int,
    *,
    tie_break: str = DEFAULT_TIE_BREAK,
    min_frequency: int = DEFAULT_MIN_FREQUENCY,
    workers: int | None = None,
    progress: Progress | None = None,
) -> Tokenizer:
    """`base` with up to `add` new merges learned from `corpus`; every base id stays as it was.

    base: a Tokenizer, or a name load_any understands (a reference encoding such as
    "cl100k_base", a saved tokenizer, a Hugging Face tokenizer.json). corpus: as train's (a
    str, a Path or list of paths, or an iterable of str documents). New ids start at
    base.n_vocab. Stops early, and says so in metadata["stop_reason"], when the best pair
    occurs fewer than min_frequency times. progress(phase, ...) is called for phases
    "count", "encode" (distinct chunks) and "merge". metadata["extension"] holds the new
    merges (pairs of ids) and the corpus's token counts before and after. Lone surrogates
    in str documents are read as U+FFFD, as the encoder reads them.
    """
    if isinstance(base, str):
        from .loading import load_any  # loading imports hf_export; only needed for names

        base = load_any(base)
    if not isinstance(base, Tokenizer):
        raise ValueError(f"base must be a Tokenizer or a tokenizer name, got {type(base).__name__}")
    check_extendable(base)
    add, min_frequency, workers = plain_int(add), plain_int(min_frequency), plain_int(workers)
    _check_rule(tie_break, min_frequency)
    check_add(base, add)
    t0 = time.perf_counter()
    chunk_counts, stats = count_chunks(
        corpus, base.pattern, workers=workers, progress=progress, unicode=base.unicode
    )
    empty = not chunk_counts
    t1 = time.perf_counter()
    tick = Ticker("encode", len(chunk_counts), progress)
    ext = _Extender(base, _ticking(chunk_counts, tick), first=tie_break == "first")
    tick.done()
    chunk_counts.clear()
    t2 = time.perf_counter()
    first_id = base.n_vocab
    ext.run(add, first_id, min_frequency, progress)
    if empty and ext.stop_reason is not None:  # not "every chunk is a single token": there is none
        ext.stop_reason = "the corpus is empty: no text to learn merges from"
    t3 = time.perf_counter()
    seconds = {"count": t1 - t0, "encode": t2 - t1, "merge": t3 - t2, "total": t3 - t0}
    metadata = {
        "trainer": "extend",
        "stopped_early": ext.stop_reason is not None,
        "stop_reason": ext.stop_reason,
        "extension": {
            "base": base.name,
            "first_new_id": first_id,
            "requested": add,
            "added": len(ext.merges),
            "tie_break": tie_break,
            "min_frequency": min_frequency,
            "merges": [list(p) for p in ext.merges],
            "counts": ext.counts,
            "corpus_tokens_before": ext.tokens_before,
            "corpus_tokens_after": ext.tokens,
        },
        "statistics": {
            **{k: stats.get(k) for k in ("documents", "bytes", "chunks", "unique_chunks")},
            "multi_token_chunks": len(ext.words),
            "merges": len(ext.merges),
            "ties": ext.ties,
            "reencoded_chunks": ext.reencoded,
            "seconds": {k: round(v, 3) for k, v in seconds.items()},
        },
    }
    return _result(base, ext, first_id, metadata)


def _ticking(chunk_counts: dict[str, int], tick: Ticker) -> Iterable[tuple[str, int]]:
    for item in chunk_counts.items():
        yield item
        tick.add(1)


def _result(base: Tokenizer, ext: _Extender, first_id: int, metadata: dict[str, Any]) -> Tokenizer:
    """The base's ranks, specials and pattern plus the new tokens."""
    ranks = dict(base.mergeable_ranks)
    decoder = {i: t for t, i in ranks.items()}
    for later in base.duplicate_ids:  # ids the base decodes but never encodes to
        decoder[later] = base.decode_single_token_bytes(later)
    for i in range(first_id, first_id + len(ext.merges)):
        ranks[ext.token_bytes[i]] = i
        decoder[i] = ext.token_bytes[i]
    return Tokenizer(
        ranks,
        base.pattern,
        base.special_tokens,
        name=f"{base.name}+{len(ext.merges)}",
        metadata=metadata,
        decoder=decoder,
        unicode=base.unicode,
        chunk_lookup=base.chunk_lookup,
    )

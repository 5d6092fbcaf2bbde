"""The merge loop: a chunk's bytes -> ids, exactly as tiktoken merges them.

Inside a chunk, repeatedly merge the adjacent pair whose concatenated bytes have the lowest
rank (the leftmost on a tie) until no adjacent pair is a token. Short chunks use a simple
scan (`_bpe_scan`), longer ones a heap (`_bpe_heap`); very long ones are first cut where no
merge can cross (proved per cut, `_safe_cuts`), and segments still long merge with the heap
or, for runs of one letter, level by level with str.replace (`_bpe_levels`), so a megabyte
without a split point stays O(n log n) instead of quadratic (tiktoken #195). Every path gives the scan's result:
tests/test_encoder_speed_paths.py checks them against each other and against tiktoken.
"""

from __future__ import annotations

import bisect
import heapq
import operator
from collections.abc import Callable, Iterable
from itertools import compress, pairwise, repeat
from typing import Any, NamedTuple

HEAP_THRESHOLD = 128  # bytes; longer chunks (and long segments of a cut chunk) merge with a heap
# bytes; longer chunks are cut into independent segments first. Below it the heap alone is 2-3x
# faster than cutting (129 B - 3 KB of CJK, letters, UDHR's long chunks); from 32 KB on,
# cutting wins on letters (the heap's working set outgrows the cache)
CUT_MIN = 1 << 13
MIN_SEGMENT = 16  # bytes; safe cuts of a long chunk are tried at most this often (fewer checks, cheap scans)
RUN_ALPHABET = 4  # distinct parts up to which a long segment merges whole levels with str.replace
_SINGLE_BYTES = [bytes([b]) for b in range(256)]
_NO_RANK = 1 << 62  # "this pair is not a token"; compares above every real rank


class LongChunkHelp(NamedTuple):
    """Faster ways for a long chunk (numpy, `_batch`); each answers None when it would not pay."""

    cuts: Callable[[bytes], list[int] | None]  # the chunk's proved-safe cuts
    # short segments merged all at once: (ids per segment, all their ids in order)
    merge: Callable[[list[bytes]], tuple[list[int], list[int]] | None]


def cuts_at_token_lengths(ranks: dict[bytes, int]) -> Callable[[int], list[int]]:
    """For a token of n bytes, the cuts k where it may split into two tokens: both k and n - k
    must be some token's length. Trying every cut, a slice each, is quadratic in the length,
    and a tokenizer trained on a run of one letter has tokens of megabytes."""
    lengths = sorted({len(token) for token in ranks})
    length_set = set(lengths)
    return lambda n: [k for k in lengths[: bisect.bisect_left(lengths, n)] if n - k in length_set]


def encode_piece(
    piece: bytes, ranks: dict[bytes, int], longest: int, long_help: LongChunkHelp | None = None
) -> tuple[int, ...]:
    """The ids of one chunk's bytes (tiktoken's `_encode_native` for one piece): the whole
    piece if it is a token, else the merge loop. `longest` is the longest token's length;
    `long_help` may speed up a long chunk."""
    rank = ranks.get(piece)
    if rank is not None:
        return (rank,)
    if len(piece) <= HEAP_THRESHOLD:
        return _bpe_scan(piece, ranks)
    if len(piece) < CUT_MIN:
        return _bpe_heap(piece, ranks)
    return _bpe_long(piece, ranks, longest, long_help)


def bpe_merge(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """The merge loop alone on raw bytes (UTF-8 or not), without the whole-piece lookup."""
    if len(piece) > HEAP_THRESHOLD:
        return list(_bpe_heap(piece, ranks))
    return list(_bpe_scan(piece, ranks)) if piece else []


def _bpe_scan(piece: bytes, ranks: dict[bytes, int]) -> tuple[int, ...]:
    """tiktoken's loop: merge the leftmost lowest-rank adjacent pair until none is mergeable.

    Pair ranks are kept in a list and only the merged pair's neighbours are re-ranked;
    `min` and `index` then run at C speed, which is what makes short chunks cheap.
    """
    get = ranks.get
    parts = list(map(_SINGLE_BYTES.__getitem__, piece))
    pair_ranks = list(map(get, map(bytes.__add__, parts, parts[1:]), repeat(_NO_RANK)))
    while pair_ranks:
        best = min(pair_ranks)
        if best == _NO_RANK:
            break
        i = pair_ranks.index(best)
        merged = parts[i] + parts[i + 1]
        parts[i] = merged
        del parts[i + 1]
        del pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(merged + parts[i + 1], _NO_RANK)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + merged, _NO_RANK)
    return tuple(map(ranks.__getitem__, parts))


class RanksWithout:
    """`ranks` as the heap BPE (`bpe_merge`, which reads .get and []) sees it without some ranks:
    those from `limit` up, and `rank` (formats.split_below: the ranks below a token's;
    hf_import: every rank but the token's own)."""

    def __init__(self, ranks: Any, *, limit: int = _NO_RANK, rank: int | None = None) -> None:
        self.ranks, self.limit, self.rank = ranks, limit, rank

    def get(self, token: Any, default: int | None = None) -> int | None:
        found = self.ranks.get(token)
        return default if found is None or found >= self.limit or found == self.rank else found

    def __getitem__(self, token: Any) -> int:
        return self.ranks[token]


def bpe_parts(piece: Any, get: Callable[[Any, int], int], limit: int = _NO_RANK) -> list[Any]:
    """The parts BPE leaves of `piece` (bytes or str: one part per element) merging only pairs
    ranked below `limit` (`get(pair, default)` gives a pair's rank), stopped when two are left:
    the pair a token is joined from (formats.split_below, hf_import's check). `_bpe_scan`'s
    loop, quadratic in the length: for short pieces (formats.LONG_TOKEN)."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    pair_ranks = [get(a + b, _NO_RANK) for a, b in pairwise(parts)]
    while len(parts) > 2:
        best = min(pair_ranks)
        if best >= limit:
            break
        i = pair_ranks.index(best)
        merged = parts[i] + parts[i + 1]
        parts[i : i + 2] = [merged]
        del pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(merged + parts[i + 1], _NO_RANK)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + merged, _NO_RANK)
    return parts


def _bpe_heap(piece: bytes, ranks: dict[bytes, int]) -> tuple[int, ...]:
    """Same result as `_bpe_scan` in O(n log n): a heap of candidate pairs, lazily invalidated.

    Part i spans piece[i:end[i]]; parts form a linked list; pair_rank[i] is the rank of the
    pair starting at part i. Heap entries are plain ints `rank << shift | i` (ints compare
    far faster than tuples), so ties on rank pop the leftmost start first, which is exactly
    the scan's leftmost-lowest choice. An entry is stale unless pair_rank[i] still equals
    its rank: a pair's bytes only ever grow, and a rank names one byte string, so equal
    rank at the same start means the very same pair.
    """
    n = len(piece)
    get = ranks.get
    shift = n.bit_length()
    mask = (1 << shift) - 1
    singles = list(map(_SINGLE_BYTES.__getitem__, piece))
    pair_rank = list(map(get, map(bytes.__add__, singles, singles[1:]), repeat(_NO_RANK)))
    pair_rank.append(_NO_RANK)
    heap = [rank << shift | i for i, rank in enumerate(pair_rank) if rank != _NO_RANK]
    heapq.heapify(heap)
    end = list(range(1, n + 1))
    prev = list(range(-1, n - 1))
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        key = pop(heap)
        i = key & mask
        if pair_rank[i] != key >> shift:
            continue
        j = end[i]
        k = end[j]
        pair_rank[j] = _NO_RANK
        end[i] = k
        if k < n:
            prev[k] = i
            rank = get(piece[i : end[k]], _NO_RANK)
        else:
            rank = _NO_RANK
        pair_rank[i] = rank
        if rank != _NO_RANK:
            push(heap, rank << shift | i)
        p = prev[i]
        if p >= 0:
            rank = get(piece[p:k], _NO_RANK)
            pair_rank[p] = rank
            if rank != _NO_RANK:
                push(heap, rank << shift | p)
    ids = []
    i = 0
    while i < n:
        ids.append(ranks[piece[i : end[i]]])
        i = end[i]
    return tuple(ids)


def _bpe_long(
    piece: bytes, ranks: dict[bytes, int], longest: int, long_help: LongChunkHelp | None = None
) -> tuple[int, ...]:
    """A long chunk, merged as independent segments cut where no merge can ever cross.

    Why a safe cut changes nothing: let the cut at p separate segment A (left) from B
    (right). While no merge has crossed p, the part ending at p is a token that is a
    suffix of A and the part starting at p a token that is a prefix of B; `_cut_is_safe`
    checks that no such two concatenate to a token, so the pair across p is never
    mergeable and the first crossing merge never happens. Each step of the whole run then
    merges the lowest (leftmost) pair of some segment, which is that segment's own next
    step: every segment ends exactly as it would alone. This holds for any ranks.

    Segments repeat in real text (and in 1 MB of random CJK), so each distinct one is
    merged once. Segments with no safe cut inside stay whole: a run of one letter merges
    level by level with str.replace (`_bpe_levels`), anything else with the heap. `long_help`
    may find the cuts and merge the short segments all at once (the scan's ids, `_batch`),
    in order: their ids then come as one list, with no Python step per segment.
    """
    cuts = (long_help and long_help.cuts(piece)) or _safe_cuts(piece, ranks, longest)
    spans = list(pairwise(cuts))
    if long_help is not None:
        merged = long_help.merge([piece[a:b] for a, b in spans if b - a <= HEAP_THRESHOLD])
        if merged is not None:
            return _with_long_segments(piece, spans, *merged, ranks)
    ids: list[int] = []
    done: dict[bytes, tuple[int, ...]] = {}
    for a, b in spans:
        segment = piece[a:b]
        segment_ids = done.get(segment)
        if segment_ids is None:
            # No whole-segment lookup: a segment that is a token the merges never reach must
            # still merge like the rest (tiktoken looks up only the whole chunk).
            if b - a <= HEAP_THRESHOLD:
                segment_ids = _bpe_scan(segment, ranks)
            else:
                segment_ids = _bpe_levels(segment, ranks) or _bpe_heap(segment, ranks)
            done[segment] = segment_ids
        ids.extend(segment_ids)
    return tuple(ids)


def _with_long_segments(
    piece: bytes, spans: list[tuple[int, int]], counts: list[int], flat: list[int], ranks: dict[bytes, int]
) -> tuple[int, ...]:
    """All ids of the piece: `flat` holds the short segments' ids in order (`counts` of each);
    the segments longer than HEAP_THRESHOLD (no safe cut inside) are merged here between them."""
    if len(counts) == len(spans):
        return tuple(flat)
    ids: list[int] = []
    at = k = 0
    for a, b in spans:
        if b - a <= HEAP_THRESHOLD:
            ids.extend(flat[at : at + counts[k]])
            at += counts[k]
            k += 1
        else:
            segment = piece[a:b]
            ids.extend(_bpe_levels(segment, ranks) or _bpe_heap(segment, ranks))
    return tuple(ids)


def _safe_cuts(piece: bytes, ranks: dict[bytes, int], longest: int) -> list[int]:
    """Cut positions (0 and len(piece) included) that `_cut_is_safe` proves independent.

    Candidates are positions whose two neighbouring bytes are not a token, at least
    MIN_SEGMENT apart. Each is checked against its neighbouring candidates; a failed one
    is dropped, which widens its neighbours' segments, so they are checked again until
    nothing fails (a wider segment has more suffixes and prefixes: never safer).
    """
    singles = list(map(_SINGLE_BYTES.__getitem__, piece))
    joined = map(ranks.__contains__, map(bytes.__add__, singles, singles[1:]))
    candidates = list(compress(range(1, len(piece)), map(operator.not_, joined)))
    cuts = [0]
    i = bisect.bisect_left(candidates, MIN_SEGMENT)
    while i < len(candidates):
        cuts.append(candidates[i])
        i = bisect.bisect_left(candidates, candidates[i] + MIN_SEGMENT, i + 1)
    cuts.append(len(piece))
    check: Iterable[int] = range(1, len(cuts) - 1)
    while True:
        unsafe = {
            cuts[k]
            for k in check
            if not _cut_is_safe(piece, cuts[k - 1], cuts[k], cuts[k + 1], ranks, longest)
        }
        if not unsafe:
            return cuts
        old_next = dict(pairwise(cuts))
        old_prev = {b: a for a, b in old_next.items()}
        cuts = [p for p in cuts if p not in unsafe]
        check = [
            k
            for k in range(1, len(cuts) - 1)
            if old_prev[cuts[k]] != cuts[k - 1] or old_next[cuts[k]] != cuts[k + 1]
        ]


def _cut_is_safe(piece: bytes, a: int, p: int, b: int, ranks: dict[bytes, int], longest: int) -> bool:
    """No token suffix of piece[a:p] followed by a token prefix of piece[p:b] makes a token."""
    suffixes = [k for k in range(1, min(p - a, longest) + 1) if piece[p - k : p] in ranks]
    prefixes = [m for m in range(1, min(b - p, longest) + 1) if piece[p : p + m] in ranks]
    for k in suffixes:
        for m in prefixes:
            if k + m > longest:
                break
            if piece[p - k : p + m] in ranks:
                return False
    return True


def _bpe_levels(piece: bytes, ranks: dict[bytes, int]) -> tuple[int, ...] | None:
    """A segment of very few distinct bytes (1 MB of 'a'), one whole rank level at a time.

    Parts are the characters chr(id) of a str. When the lowest present pair (a, b) makes
    token T, the scan merges its leftmost occurrence, and the next leftmost one, and so
    on, exactly as str.replace(a + b, T) does, provided that no other split of T is
    present and no pair T makes with a neighbour (a part of the alphabet, or T itself)
    ranks below T: then every pair a merge creates ranks above T and T stays the lowest
    until its occurrences are used up. If any condition fails, or the alphabet outgrows
    RUN_ALPHABET, returns None and the caller uses the heap (nothing is lost but time).
    """
    token_of = {chr(rank): token for token, rank in ((bytes([b]), ranks[bytes([b])]) for b in set(piece))}
    if len(token_of) > RUN_ALPHABET:
        return None
    text = "".join(map(chr, map(ranks.__getitem__, map(_SINGLE_BYTES.__getitem__, piece))))
    while True:
        present = sorted(
            (rank, a + b)
            for a, left in token_of.items()
            for b, right in token_of.items()
            if (rank := ranks.get(left + right)) is not None and a + b in text
        )
        if not present:
            return tuple(map(ord, text))
        rank, pair = present[0]
        if len(present) > 1 and present[1][0] == rank:
            return None  # two splits of one token: the replace below would favour one
        merged = token_of[pair[0]] + token_of[pair[1]]
        neighbours = [*token_of.values(), merged]
        if any(
            ranks.get(x + merged, _NO_RANK) < rank or ranks.get(merged + x, _NO_RANK) < rank
            for x in neighbours
        ):
            return None
        text = text.replace(pair, chr(rank))
        token_of[chr(rank)] = merged
        token_of = {c: token_of[c] for c in set(text)}
        if len(token_of) > RUN_ALPHABET:
            return None

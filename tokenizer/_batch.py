"""Many chunks merged at once with numpy: the scan of `_bpe._bpe_scan`, one step per chunk per round.

Multilingual text is nearly all new chunks, and the pure-Python merge loop costs about two
microseconds a merge. Here every chunk's parts sit in one flat array and each round makes,
for every chunk at once, the very step the scan makes next: the leftmost pair of lowest rank.
The scan's state after k steps depends only on the chunk itself, so doing step k of all
chunks together changes nothing; a chunk leaves when none of its pairs is a token.

Why each piece equals the scan:
* Parts are ids (ranks). The rank of the pair (a, b) is the rank of the bytes a + b, which
  `PairTable` holds for every split of every token into two tokens: exactly the pairs whose
  concatenation is a token, so "no entry" is the scan's "not a token".
* The leftmost lowest pair of each chunk is one `minimum.reduceat` over keys
  `rank << shift | position`: the lowest rank first, then the lowest position.
* After merging the pair at i with the next live part, only the pairs starting at the
  previous live part and at i change (as in the scan); the merged-away part is unlinked.

Used on CPython with numpy (`Tokenizer.batch_pays` decides) for thousands of new chunks
of at most `_bpe.HEAP_THRESHOLD` bytes: a text's new chunks, `stats`, a long chunk's
segments (whose cuts `_batch_cuts` finds with the same tables). Text of few byte values
(one non-Latin script, a long chunk without spaces) gets a small table of the tokens made
of those bytes alone (`ranks_within`). The page and small inputs use the pure-Python loop. tests/test_batch.py
checks it against the scan and tiktoken.
"""

from __future__ import annotations

import importlib.util
import os
from bisect import bisect_left
from itertools import accumulate
from typing import Any

from ._bpe import cuts_at_token_lengths

BATCH_MIN_CHUNKS = 2_000  # new chunks below which numpy's per-call cost outweighs the batch
TABLE_BYTES_PER_RANK = 3  # new chunk bytes per vocabulary entry from which building the table pays
NARROW_SHARE = 2  # chunks whose byte values allow at most 1/2 of the tokens get a table of those alone
NARROW_MAX_LETTERS = 12  # ASCII letters beyond which text is not checked for a narrow table (see core)
TABLE_MAX_RANKS = 1 << 19  # tokens above which no pair table is built (its memory grows with them)
BATCH_BYTES = 1 << 20  # bytes of chunks merged in one batch (1 MB: its arrays stay near 100 MB)
SHORT_KEY = 7  # bytes; tokens up to this long are looked up as integers, longer ones as fixed-width strings
MATRIX_WIDTH = 32  # bytes; tokens up to this long are split with numpy, longer ones (few) in Python
ALL_CUTS_MAX = 256  # bytes: longer tokens (none in the reference encodings) are cut at token lengths only
_NO_RANK = 1 << 31  # "this pair is not a token": above every rank (ranks are below 2**31)
_GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio, odd: spreads consecutive keys over the table
PURE_PYTHON_ENV = "BPE_PURE_PYTHON"  # set to 1 to skip numpy (what the browser runs)
# How far the sample's guess of new bytes must pass the batch's price: the guess overshoots where
# chunks repeat (1.6x English, 2.0x code, growth exponents 0.86-0.88) and is exact where they do not
# (0.99-1.03x on random words, letters, Unicode: growth 0.97-1.0). So the margin is ESTIMATE_MARGIN
# up to a growth of FULL_MARGIN_GROWTH and shrinks geometrically to 1 at a growth of 1.
ESTIMATE_MARGIN, FULL_MARGIN_GROWTH = 2, 0.9

_numpy: Any = None


def estimate_margin(growth: float) -> float:
    """The sample's margin (ESTIMATE_MARGIN) for a growth exponent of new chunks (0 to 1)."""
    return float(ESTIMATE_MARGIN ** min((1.0 - growth) / (1.0 - FULL_MARGIN_GROWTH), 1.0))


def available() -> bool:
    """Whether the batch merge can run (numpy installed, BPE_PURE_PYTHON unset), without
    importing numpy: that costs 0.1 s or more, paid only when a batch is worth it."""
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return False
    if _numpy is None:
        return importlib.util.find_spec("numpy") is not None
    return _numpy is not False


def fits(ranks: dict[bytes, int]) -> bool:
    """Whether a pair table for these ranks stays small: at most TABLE_MAX_RANKS tokens
    (o200k_base has 200k; its table takes about 30 MB) and ids below 2**31."""
    return len(ranks) <= TABLE_MAX_RANKS and max(ranks.values()) < _NO_RANK


_ASCII_LETTERS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def byte_values(data: bytes) -> bytes:
    """The distinct byte values of `data`, ascending: one C search per value, no numpy
    (under 10 ms for a megabyte of text, where most of the 256 are absent)."""
    return bytes(b for b in range(256) if data.find(b) >= 0)


def ascii_letters(values: bytes) -> int:
    """How many of the byte values are ASCII letters."""
    return len(_ASCII_LETTERS.intersection(values))


def ranks_within(ranks: dict[bytes, int], values: bytes) -> dict[bytes, int]:
    """The tokens made only of the byte values `values`, and every single byte.

    A pair table of these alone is exact for text whose bytes are among `values`: every part
    of its merges, and every concatenation of two adjacent parts, is a substring of the text,
    so a token made of other bytes never meets it; the single bytes are the parts it starts
    from (`PairTable.byte_rank`). A chunk of one script without spaces (a megabyte of CJK
    ideographs) allows a few thousand of o200k's 200k tokens: its table is built in
    milliseconds instead of half a second, and the cut proof's reach bounds get tighter."""
    return {t: r for t, r in ranks.items() if len(t) == 1 or not t.translate(None, values)}


def numpy_or_none() -> Any:
    """numpy if it can be imported (and BPE_PURE_PYTHON is not set), else None."""
    global _numpy
    if not available():
        return None
    if _numpy is None:
        try:
            import numpy
        except ImportError:  # pragma: no cover - found but broken
            _numpy = False
        else:
            _numpy = numpy
    return _numpy or None


class PairTable:
    """rank(bytes(a) + bytes(b)) for every pair of token ids (a, b) whose concatenation is a token.

    Built from the ranks alone: each token of length L has L - 1 splits, and a split is a
    pair when both halves are tokens. Halves are found with numpy (`_Rows`); the few tokens
    longer than MATRIX_WIDTH are split in Python. Keys `a * width + b` live in an `_IntMap`.
    """

    def __init__(self, ranks: dict[bytes, int]) -> None:
        np = numpy_or_none()
        self.np = np
        self.width = max(ranks.values()) + 1
        if self.width >= _NO_RANK:
            raise ValueError("ranks must be below 2**31 for the batch merge")
        self.byte_rank = np.array([ranks[bytes([b])] for b in range(256)], dtype=np.int64)
        vocabulary = _Rows(np, ranks)
        self.byte_pairs = vocabulary.byte_pairs()  # byte pair -> rank: the first round's lookups
        keys, values = vocabulary.splits(self.width)
        long_keys, long_values = _long_splits(np, ranks, self.width, longest=vocabulary.long_tokens)
        self.pairs = _IntMap(np, np.concatenate([keys, long_keys]), np.concatenate([values, long_values]))
        self.tokens = vocabulary.index  # ids of byte strings up to MATRIX_WIDTH long
        self._unreached: _Rows | None = vocabulary
        self._reach: tuple[Any, Any] | None = None

    @property
    def reach(self) -> tuple[Any, Any]:
        """How far tokens holding each byte pair extend (`_Rows.reach`), made on first use:
        only long chunks' cuts (`_batch_cuts`) need it."""
        unreached = self._unreached
        if self._reach is None and unreached is not None:  # (another thread may be done: then _reach is set)
            self._reach = unreached.reach()
            self._unreached = None  # the token matrices are not needed any more
        return self._reach  # type: ignore[return-value]

    def lookup(self, left: Any, right: Any) -> Any:
        """Ranks of the pairs (left[k], right[k]); _NO_RANK where the pair is not a token."""
        return self.pairs.get(left * self.width + right, _NO_RANK)


class _IntMap:
    """A read-only map of distinct non-negative int64 keys, queried for whole arrays at once.

    Open addressing with linear probing, at most half full: one probe answers most queries,
    where a binary search over sorted keys would miss the cache a dozen times. Built in one
    sort: keys placed in the order of their home slots, each at its home or just after the
    key before, fill every slot from a key's home to its own, which is all a probe needs.
    Probes run on past the last home slot instead of wrapping round: the table ends with
    as many slots as the longest run needs, and then one empty slot where every probe stops.
    """

    def __init__(self, np: Any, keys: Any, values: Any) -> None:
        self.np = np
        self.bits = max(len(keys) * 2, 2).bit_length()
        home = self._slots(keys)
        order = np.argsort(home)  # any order among keys of one home slot will do
        step = np.arange(len(keys), dtype=np.int64)
        # slot of the i-th key in home order: max over j <= i of home_j + (i - j)
        at = np.maximum.accumulate(home[order] - step) + step if len(keys) else step
        size = max(1 << self.bits, int(at[-1]) + 1 if len(keys) else 0) + 1  # + the empty slot probes stop at
        self.slot_keys = np.full(size, -1, dtype=np.int64)  # -1: empty (keys are >= 0)
        self.slot_values = np.zeros(size, dtype=np.int64)
        self.slot_keys[at] = keys[order]
        self.slot_values[at] = values[order]

    def _slots(self, keys: Any) -> Any:
        """Multiplicative (Fibonacci) hashing: the top `bits` bits of key * 2**64 / phi."""
        np = self.np
        return ((keys.astype(np.uint64) * np.uint64(_GOLDEN)) >> np.uint64(64 - self.bits)).astype(np.int64)

    def get(self, query: Any, missing: int) -> Any:
        """The value of each query key, `missing` where the key is not in the map."""
        np = self.np
        slots = self._slots(query)
        held = self.slot_keys[slots]
        hit = held == query
        found = np.where(hit, self.slot_values[slots], missing)
        pending = np.flatnonzero(~hit & (held != -1))  # another key sits there: probe on
        query, slots = query[pending], slots[pending] + 1
        while len(pending):
            held = self.slot_keys[slots]
            hit = held == query
            found[pending[hit]] = self.slot_values[slots[hit]]
            on = ~hit & (held != -1)
            pending, query, slots = pending[on], query[on], slots[on] + 1
        return found


class _Rows:
    """The tokens of at most MATRIX_WIDTH bytes as rows of a byte matrix, longest first.

    `left` pads each token with zeros on the right, `right` on the left, so the first
    (last) p bytes of every token longer than p are one slice. Tokens of one length are
    consecutive rows, looked up as integers (up to SHORT_KEY bytes) or as fixed-width
    byte strings: a string of exactly p bytes compares like bytes (a trailing zero byte
    could only be confused with a shorter string, and none is in the same group).
    """

    def __init__(self, np: Any, ranks: dict[bytes, int]) -> None:
        self.np = np
        # Every token's length and id, and all their bytes, in C loops; then the short ones kept.
        every = list(ranks)
        lengths = np.fromiter(map(len, every), dtype=np.int64, count=len(every))
        ids = np.fromiter(ranks.values(), dtype=np.int64, count=len(every))
        flat = np.frombuffer(b"".join(every), dtype=np.uint8)
        short = lengths <= MATRIX_WIDTH
        self.long_tokens = [every[i] for i in np.flatnonzero(~short).tolist()]  # few: split in Python
        if self.long_tokens:
            flat, lengths, ids = flat[np.repeat(short, lengths)], lengths[short], ids[short]
        rows = len(lengths)  # one per short token
        # Byte k of token t goes to t * MATRIX_WIDTH + k (left) or one padding further on (right).
        row_shift = np.arange(rows) * MATRIX_WIDTH - (np.cumsum(lengths) - lengths)
        at = np.arange(len(flat)) + np.repeat(row_shift, lengths)
        left = np.zeros(rows * MATRIX_WIDTH, dtype=np.uint8)
        left[at] = flat
        right = np.zeros(rows * MATRIX_WIDTH, dtype=np.uint8)
        right[at + np.repeat(MATRIX_WIDTH - lengths, lengths)] = flat
        order = np.argsort(-lengths, kind="stable")  # longest first
        self.lengths, self.ids = lengths[order], ids[order]
        self.left = left.reshape(-1, MATRIX_WIDTH)[order]
        self.right = right.reshape(-1, MATRIX_WIDTH)[order]
        lengths = self.lengths
        # Rows longer than p are rows[:longer[p]]; rows of length p are rows[longer[p]:longer[p - 1]].
        self.longer = np.searchsorted(-lengths, -np.arange(MATRIX_WIDTH + 1), side="left")
        by_length = {}
        for p in range(SHORT_KEY + 1, MATRIX_WIDTH + 1):
            same = slice(self.longer[p], self.longer[p - 1])
            by_length[p] = _sorted(np, _strings(np, self.left[same, :p]), self.ids[same])
        self.index = TokenIndex(np, self._short_tokens(), by_length)

    def reach(self) -> tuple[Any, Any]:
        """For each byte pair (u, v) (key u << 8 | v): the largest k such that some token has
        u, v at offsets k - 1, k, and the largest length - k of such a token (0: none has)."""
        np = self.np
        keys, left, right = [], [], []
        for k in range(1, MATRIX_WIDTH):
            rows = self.longer[k]
            keys.append(self.left[:rows, k - 1].astype(np.int64) << 8 | self.left[:rows, k])
            left.append(np.full(rows, k, dtype=np.int64))
            right.append(self.lengths[:rows] - k)
        for token in self.long_tokens:
            keys.append(np.array([token[k - 1] << 8 | token[k] for k in range(1, len(token))]))
            left.append(np.arange(1, len(token)))
            right.append(len(token) - np.arange(1, len(token)))
        keys_all = np.concatenate(keys)
        reach_left = np.zeros(65536, dtype=np.int64)
        reach_right = np.zeros(65536, dtype=np.int64)
        np.maximum.at(reach_left, keys_all, np.concatenate(left))
        np.maximum.at(reach_right, keys_all, np.concatenate(right))
        return reach_left, reach_right

    def byte_pairs(self) -> Any:
        np = self.np
        two = slice(self.longer[2], self.longer[1])
        pairs = np.full(65536, _NO_RANK, dtype=np.int64)
        pairs[self.left[two, 0].astype(np.int64) << 8 | self.left[two, 1]] = self.ids[two]
        return pairs

    def splits(self, width: int) -> tuple[Any, Any]:
        """Keys a * width + b and ranks of every split of a token into two tokens a, b."""
        np = self.np
        prefix_ids, suffix_ids = self._halves()
        # suffix_ids[s - 1][row]: id of the row's last s bytes; gathered for s = length - p.
        suffix_flat = np.concatenate(suffix_ids)
        suffix_start = np.concatenate(([0], np.cumsum([len(s) for s in suffix_ids])))
        keys, values = [], []
        for p, a in enumerate(prefix_ids, start=1):
            rows = np.flatnonzero(a >= 0)
            b = suffix_flat[suffix_start[self.lengths[rows] - p - 1] + rows]
            hit = b >= 0
            keys.append(a[rows[hit]] * width + b[hit])
            values.append(self.ids[rows[hit]])
        return np.concatenate(keys), np.concatenate(values)

    def _halves(self) -> tuple[list[Any], list[Any]]:
        """For p = 1 .. MATRIX_WIDTH - 1: the ids of the first and of the last p bytes of
        every row longer than p (-1 where those bytes are not a token)."""
        np = self.np
        prefix_ids, suffix_ids = [], []
        prefix = np.zeros(len(self.ids), dtype=np.int64)
        suffix = np.zeros(len(self.ids), dtype=np.int64)
        for p in range(1, MATRIX_WIDTH):
            longer = self.longer[p]
            if p <= SHORT_KEY:
                prefix = prefix << 8 | self.left[:, p - 1]
                suffix = suffix | self.right[:, MATRIX_WIDTH - p].astype(np.int64) << (8 * (p - 1))
                prefix_ids.append(self.index.short_ids(prefix[:longer], p))
                suffix_ids.append(self.index.short_ids(suffix[:longer], p))
            else:
                prefix_ids.append(self.index.string_ids(self.left[:longer, :p]))
                suffix_ids.append(self.index.string_ids(self.right[:longer, MATRIX_WIDTH - p :]))
        return prefix_ids, suffix_ids

    def _short_tokens(self) -> _IntMap:
        """Tokens up to SHORT_KEY bytes keyed by value << 3 | length (distinct, below 2**59)."""
        np = self.np
        short = slice(self.longer[SHORT_KEY], len(self.ids))
        value = np.zeros(len(self.ids) - self.longer[SHORT_KEY], dtype=np.int64)
        for p in range(SHORT_KEY):
            value = value << 8 | self.right[short, MATRIX_WIDTH - SHORT_KEY + p]
        return _IntMap(np, value << 3 | self.lengths[short], self.ids[short])


class TokenIndex:
    """Token ids of many byte strings of one length at once (-1 where not a token): integers
    for strings up to SHORT_KEY bytes, fixed-width strings up to MATRIX_WIDTH bytes."""

    def __init__(self, np: Any, short: _IntMap, by_length: dict[int, tuple[Any, Any]]) -> None:
        self.np, self.short, self.by_length = np, short, by_length

    def short_ids(self, values: Any, length: int) -> Any:
        """Strings of `length` <= SHORT_KEY bytes given as big-endian integers."""
        return self.short.get(values << 3 | length, -1)

    def string_ids(self, rows: Any) -> Any:
        """Strings given as rows of a uint8 matrix (SHORT_KEY < width <= MATRIX_WIDTH)."""
        return _find(self.np, self.by_length[rows.shape[1]], _strings(self.np, rows))

    def ids(self, data: Any, starts: Any, length: int) -> Any:
        """Ids of data[s : s + length] for each start s (data: a uint8 array)."""
        np = self.np
        if length <= SHORT_KEY:
            value = np.zeros(len(starts), dtype=np.int64)
            for k in range(length):
                value = value << 8 | data[starts + k]
            return self.short_ids(value, length)
        return self.string_ids(data[starts[:, None] + np.arange(length)])


def _strings(np: Any, rows: Any) -> Any:
    """Rows of p bytes as fixed-width byte strings of p bytes."""
    return np.ascontiguousarray(rows).view(f"S{rows.shape[1]}").ravel()


def _sorted(np: Any, keys: Any, ids: Any) -> tuple[Any, Any]:
    order = np.argsort(keys)
    return keys[order], ids[order]


def _find(np: Any, table: tuple[Any, Any], query: Any) -> Any:
    """The id of each query in a sorted (keys, ids) table, -1 where it is not there."""
    keys, ids = table
    if not len(keys):
        return np.full(len(query), -1, dtype=np.int64)
    at = np.searchsorted(keys, query)
    at[at == len(keys)] = 0
    return np.where(keys[at] == query, ids[at], -1)


def _long_splits(
    np: Any, ranks: dict[bytes, int], width: int, *, longest: list[bytes] | None = None
) -> tuple[Any, Any]:
    """The splits of the (few) tokens longer than MATRIX_WIDTH (`longest`, if known), in Python.

    A token longer than ALL_CUTS_MAX is cut only where both sides have the length of some
    token: trying each of its cuts, each a slice of it, is quadratic in its length (a tokenizer
    trained on a run of one letter, whose longest tokens are 8 MB, never finished this table)."""
    get = ranks.get
    long_cuts = None  # built only if a very long token is there
    keys, values = [], []
    if longest is None:
        longest = [token for token in ranks if len(token) > MATRIX_WIDTH]
    for token in longest:
        n, rank = len(token), ranks[token]
        if n <= ALL_CUTS_MAX:
            cuts: Any = range(1, n)
        else:
            long_cuts = long_cuts or cuts_at_token_lengths(ranks)
            cuts = long_cuts(n)
        for k in cuts:
            a, b = get(token[:k]), get(token[k:])
            if a is not None and b is not None:
                keys.append(a * width + b)
                values.append(rank)
    return np.array(keys, dtype=np.int64), np.array(values, dtype=np.int64)


def merge_lengths(pieces: list[bytes], table: PairTable) -> list[int]:
    """Number of tokens the scan leaves in each piece (each at most HEAP_THRESHOLD bytes)."""
    lengths, _ = _merge(pieces, table, want_ids=False)
    return lengths.tolist()


def merge_ids(pieces: list[bytes], table: PairTable) -> list[tuple[int, ...]]:
    """The scan's ids for each piece (each at most HEAP_THRESHOLD bytes)."""
    lengths, ids = _merge(pieces, table, want_ids=True)
    return _tuples(table.np, lengths, ids)


def merge_flat(pieces: list[bytes], table: PairTable) -> tuple[list[int], list[int]]:
    """The scan's ids of the pieces (each at most HEAP_THRESHOLD bytes) as (ids per piece,
    all ids in order): no tuple per piece, for callers that join them anyway."""
    lengths, ids = _merge(pieces, table, want_ids=True)
    return lengths.tolist(), ids.tolist()


def _tuples(np: Any, counts: Any, flat: Any) -> list[tuple[int, ...]]:
    """ids cut into tuples of the given lengths. Pieces with n ids are rows of an n-column
    array, and zip(*columns) makes their tuples in C: no Python step per piece."""
    starts = np.cumsum(counts) - counts
    out = np.empty(len(counts), dtype=object)
    for n in np.unique(counts).tolist():
        members = np.flatnonzero(counts == n)
        rows = flat[starts[members, None] + np.arange(n)]
        out[members] = np.fromiter(zip(*rows.T.tolist(), strict=True), dtype=object, count=len(members))
    return out.tolist()


def _merge(pieces: list[bytes], table: PairTable, *, want_ids: bool) -> tuple[Any, Any]:
    """Token counts and (if wanted) the ids of all pieces in order, a batch at a time."""
    np = table.np
    if not pieces:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lengths, ids = [], []
    start = 0
    for stop in _batch_bounds(pieces):
        batch_lengths, batch_ids = _merge_batch(pieces[start:stop], table, want_ids=want_ids)
        lengths.append(batch_lengths)
        ids.append(batch_ids)
        start = stop
    return np.concatenate(lengths), np.concatenate(ids)


def _batch_bounds(pieces: list[bytes]) -> list[int]:
    """Ends of consecutive batches of about BATCH_BYTES bytes each (the last one shorter)."""
    total = list(accumulate(map(len, pieces)))
    bounds = [bisect_left(total, BATCH_BYTES * k) + 1 for k in range(1, total[-1] // BATCH_BYTES + 1)]
    return [*bounds, len(pieces)] if not bounds or bounds[-1] < len(pieces) else bounds


def _merge_batch(pieces: list[bytes], table: PairTable, *, want_ids: bool) -> tuple[Any, Any]:
    """One round per scan step: every unfinished chunk merges its leftmost lowest pair.

    Parts stay where they are and a merge unlinks its right part (`nxt`/`prv` link the live
    parts of a chunk), so a round touches two or three positions per chunk besides the one
    `reduceat`; the arrays are compacted only when the running chunks' live parts fill less
    than half of them. `key` is rank << shift | position: dead parts hold _NO_RANK.
    """
    np = table.np
    state = _Rounds(np, pieces, table)
    while state.running.any():
        best = np.minimum.reduceat(state.key, state.seg_start)
        low = best >> state.shift
        state.finish(low == _NO_RANK)
        chunks = np.flatnonzero(state.running)
        if not len(chunks):
            break
        state.merge(chunks, low[chunks], best[chunks] & state.mask)
        if state.alive[state.running].sum() * 2 < len(state.key):
            state.compact(want_ids)
    state.compact(want_ids)
    lengths = state.out_len
    if not want_ids:
        return lengths, np.zeros(0, dtype=np.int64)
    return lengths, _ids_in_order(np, state.done_ids, state.done_segs, lengths)


class _Rounds:
    """The batch's state: parts, keys and links over positions; per chunk its span and count."""

    def __init__(self, np: Any, pieces: list[bytes], table: PairTable) -> None:
        self.np, self.table = np, table
        seg_len = np.array(list(map(len, pieces)), dtype=np.int64)
        raw = np.frombuffer(b"".join(pieces), dtype=np.uint8).astype(np.int64)
        self.shift = max(len(raw).bit_length(), 1)
        self.mask = (1 << self.shift) - 1
        self.parts = table.byte_rank[raw]
        rank = np.empty(len(raw), dtype=np.int64)
        rank[:-1] = table.byte_pairs[raw[:-1] << 8 | raw[1:]]
        self.seg_id = np.arange(len(pieces))
        self.out_len = np.zeros(len(pieces), dtype=np.int64)
        self.done_ids: list[Any] = []
        self.done_segs: list[Any] = []
        self._layout(rank, seg_len)

    def _layout(self, rank: Any, seg_len: Any) -> None:
        """Chunks side by side, every part live, linked to its neighbours in the chunk."""
        np = self.np
        self.seg_start = np.cumsum(seg_len) - seg_len
        self.span = seg_len
        self.alive = seg_len.copy()  # live parts per chunk
        self.running = np.ones(len(seg_len), dtype=bool)
        last = self.seg_start + seg_len - 1
        rank[last] = _NO_RANK  # no pair across chunks
        position = np.arange(len(rank), dtype=np.int64)
        self.key = rank << self.shift | position
        self.nxt = position + 1
        self.nxt[last] = -1
        self.prv = position - 1
        self.prv[self.seg_start] = -1
        self.live = np.ones(len(rank), dtype=bool)

    def finish(self, done: Any) -> None:
        newly = done & self.running
        self.out_len[self.seg_id[newly]] = self.alive[newly]
        self.running &= ~done

    def merge(self, chunks: Any, rank: Any, i: Any) -> None:
        """Chunk c merges its part at i[c] with the next live part j: i becomes token rank[c]."""
        np, table, shift = self.np, self.table, self.shift
        j = self.nxt[i]
        k = self.nxt[j]
        self.parts[i] = rank
        self.live[j] = False
        self.key[j] = _NO_RANK << shift | j
        self.nxt[i] = k
        has_k = k >= 0
        self.prv[k[has_k]] = i[has_k]
        p = self.prv[i]
        has_p = p >= 0
        p = p[has_p]
        # One lookup for both new pairs: (i, k) where k exists, then (p, i) where p exists.
        ranks = table.lookup(
            np.concatenate([rank[has_k], self.parts[p]]), np.concatenate([self.parts[k[has_k]], rank[has_p]])
        )
        right = np.full(len(i), _NO_RANK, dtype=np.int64)
        right[has_k] = ranks[: has_k.sum()]
        self.key[i] = right << shift | i
        self.key[p] = ranks[len(ranks) - len(p) :] << shift | p
        self.alive[chunks] -= 1

    def compact(self, want_ids: bool) -> None:
        """Drop dead parts and finished chunks (keeping finished chunks' ids if wanted)."""
        np = self.np
        running = self.running
        if want_ids and not running.all():
            ended = np.repeat(~running, self.span) & self.live
            self.done_ids.append(self.parts[ended])
            self.done_segs.append(self.seg_id[~running])
        keep = np.repeat(running, self.span) & self.live
        self.parts = self.parts[keep]
        rank = self.key[keep] >> self.shift
        self.seg_id = self.seg_id[running]
        self._layout(rank, self.alive[running])


def _ids_in_order(np: Any, done_ids: list[Any], done_segs: list[Any], out_len: Any) -> Any:
    """The finished parts, which left the rounds in finishing order, put back in piece order."""
    ids = np.concatenate(done_ids)
    segs = np.concatenate(done_segs)
    seg_lengths = out_len[segs]
    where = np.cumsum(out_len) - out_len  # each piece's first id in the output
    dest = np.repeat(where[segs] - (np.cumsum(seg_lengths) - seg_lengths), seg_lengths) + np.arange(len(ids))
    out = np.empty(len(ids), dtype=np.int64)
    out[dest] = ids
    return out

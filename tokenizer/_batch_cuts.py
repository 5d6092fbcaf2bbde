"""Safe cuts of a long chunk found with numpy: the same proof as `_bpe._safe_cuts`, all cuts at once.

A cut at p between segments A = piece[a:p] and B = piece[p:b] is safe when no token that is
a suffix X of A and no token that is a prefix Y of B concatenate to a token (`_bpe._bpe_long`
argues why merging the segments apart then changes nothing). Here every candidate cut is
checked together:

* X + Y holds the bytes piece[p - 1] and piece[p] at offsets len(X) - 1 and len(X), so
  len(X) is at most `reach_left` of that byte pair (the largest such offset in any token)
  and len(Y) at most `reach_right` (the most bytes any such token has from there on):
  only those suffixes and prefixes are looked up, and a cut whose byte pair sits in no
  token at all is safe at once. The bounds come from every token of the table (`PairTable.reach`): all of them, or all
  that the chunk's byte values can form (`_batch.ranks_within`).
* Suffix and prefix ids come from `TokenIndex` (one array call per length), the pairs
  from the pair table: (X, Y) is in it exactly when X + Y is a token.
* Cuts whose bounds exceed MATRIX_WIDTH (tokens that long exist in o200k) are checked by
  `_bpe._cut_is_safe` itself.

As in `_bpe._safe_cuts`, an unsafe cut is dropped and its neighbours, whose segments grew,
are checked again until none fails. Candidates are positions whose two bytes are not a
token, the first at or after every multiple of MIN_SEGMENT: any set of proved cuts gives
the same ids, so this set needs no relation to the pure-Python one.
"""

from __future__ import annotations

from typing import Any

from ._batch import _NO_RANK, MATRIX_WIDTH, PairTable
from ._bpe import MIN_SEGMENT, _cut_is_safe


def safe_cuts(piece: bytes, ranks: dict[bytes, int], longest: int, table: PairTable) -> list[int]:
    """Cut positions of `piece` (0 and len(piece) included), each proved safe."""
    np = table.np
    data = np.frombuffer(piece, dtype=np.uint8)
    pair_key = data[:-1].astype(np.int64) << 8 | data[1:]  # pair_key[p - 1]: the bytes around p
    candidates = np.flatnonzero(table.byte_pairs[pair_key] == _NO_RANK) + 1
    at = np.searchsorted(candidates, np.arange(MIN_SEGMENT, len(piece), MIN_SEGMENT))
    cuts = np.unique(np.concatenate(([0, len(piece)], candidates[at[at < len(candidates)]])))
    check = np.arange(1, len(cuts) - 1)
    while len(check):
        unsafe = check[~_safe(piece, data, pair_key, cuts, check, ranks, longest, table)]
        if not len(unsafe):
            break
        # Neighbours of a dropped cut now bound a wider segment: check them again.
        neighbours = np.setdiff1d(np.concatenate((unsafe - 1, unsafe + 1)), unsafe)
        keep = np.ones(len(cuts), dtype=bool)
        keep[unsafe] = False
        new_index = np.cumsum(keep) - 1
        cuts = cuts[keep]
        check = np.unique(new_index[neighbours])
        check = check[(check > 0) & (check < len(cuts) - 1)]
    return cuts.tolist()


def _safe(
    piece: bytes,
    data: Any,
    pair_key: Any,
    cuts: Any,
    check: Any,
    ranks: dict[bytes, int],
    longest: int,
    table: PairTable,
) -> Any:
    """For each cuts[i], i in `check`: whether it is safe between cuts[i - 1] and cuts[i + 1]."""
    np = table.np
    p, a, b = cuts[check], cuts[check - 1], cuts[check + 1]
    reach_left, reach_right = table.reach
    key = pair_key[p - 1]
    left = np.minimum(np.minimum(reach_left[key], p - a), longest - 1)
    right = np.minimum(np.minimum(reach_right[key], b - p), longest - 1)
    left[right == 0] = 0
    safe = np.ones(len(check), dtype=bool)
    wide = np.flatnonzero((left > MATRIX_WIDTH) | (right > MATRIX_WIDTH))
    for w in wide.tolist():
        safe[w] = _cut_is_safe(piece, int(a[w]), int(p[w]), int(b[w]), ranks, longest)
    left[wide] = right[wide] = 0
    suffixes = _pieces(table, data, p, left, ending=True)  # (cut, length, id) of each token suffix
    prefixes = _pieces(table, data, p, right, ending=False)
    safe[_crossing(np, suffixes, prefixes, longest, table)] = False
    return safe


def _pieces(table: PairTable, data: Any, p: Any, bound: Any, *, ending: bool) -> tuple[Any, Any, Any]:
    """Every token data[p - k : p] (ending) or data[p : p + k] (starting), k <= bound, as
    arrays (index of the cut, k, token id)."""
    np = table.np
    cut_ix, lengths, ids = [], [], []
    for k in range(1, int(bound.max(initial=0)) + 1):
        rows = np.flatnonzero(bound >= k)
        found = table.tokens.ids(data, p[rows] - k if ending else p[rows], k)
        hit = found >= 0
        cut_ix.append(rows[hit])
        lengths.append(np.full(int(hit.sum()), k, dtype=np.int64))
        ids.append(found[hit])
    if not cut_ix:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(cut_ix), np.concatenate(lengths), np.concatenate(ids)


def _crossing(
    np: Any, suffixes: tuple[Any, Any, Any], prefixes: tuple[Any, Any, Any], longest: int, table: PairTable
) -> Any:
    """Indices of cuts where some suffix token and prefix token concatenate to a token."""
    s_cut, s_len, s_id = suffixes
    p_cut, p_len, p_id = prefixes
    if not len(s_cut) or not len(p_cut):
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(p_cut, kind="stable")
    p_cut, p_len, p_id = p_cut[order], p_len[order], p_id[order]
    first = np.searchsorted(p_cut, s_cut, side="left")  # each suffix meets its cut's prefixes
    count = np.searchsorted(p_cut, s_cut, side="right") - first
    which = np.repeat(np.arange(len(s_cut)), count)
    other = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count) + np.repeat(first, count)
    fits = s_len[which] + p_len[other] <= longest
    which, other = which[fits], other[fits]
    joined = table.lookup(s_id[which], p_id[other]) != _NO_RANK
    return np.unique(s_cut[which[joined]])

"""The step-through view of the heap trainer: the best pairs before each merge, in the rule's
order, as the Learn view shows them.

A mixin of `_heap._HeapTrainer` (it reads the trainer's pair counts, block lists and words):
tracing is a separate concern from merging, used only when a caller asks for a trace.
"""

from __future__ import annotations

from heapq import nlargest
from typing import Any

from ._wordstore import MASK, SHIFT, pair_of_key

TOP_PAIRS = 10  # pairs listed per trace step
TIED_SHOWN = 5  # tied losers listed per trace step
TRACE_SHOWN = max(TOP_PAIRS, 1 + TIED_SHOWN)


class TraceView:
    """trace_step and its helpers; needs the trainer's pc, floor, first, where, blocks and
    count_pairs_python."""

    def trace_step(self, step: int, p: int, new_id: int, count: int, tied: bool) -> dict[str, Any]:
        """What a step-through view shows: the best pairs before this merge, in the rule's order.

        Counts come from self.pc, exact for every tracked pair; untracked pairs are below the
        floor, so below all of them. `first` ties are ordered by each pair's first live
        occurrence, found through the reverse index. Only when fewer than TRACE_SHOWN pairs
        are tracked is everything recounted."""
        live = [(c, k) for k, c in self.pc.items() if c >= self.floor]
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
        as_ids = lambda k: (k >> SHIFT, k & MASK)  # noqa: E731
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

    def first_at(self, k: int) -> tuple[int, int]:
        """(block, position) of the first live occurrence of pair k: text order."""
        blocks, p = self.blocks, pair_of_key(k)
        for b in self.where[k]:
            q = blocks[b].find(p)
            if q >= 0:
                return b, q
        raise AssertionError(f"pair {k!r} has a count but no occurrence")

    def recount(self) -> tuple[dict[int, int], list[int]]:
        """All pair counts from scratch, ranked by the tie rule (dict order = first occurrence)."""
        stats, _ = self.count_pairs_python()
        if self.first:
            order = {k: i for i, k in enumerate(stats)}
            ranked = sorted(stats, key=lambda k: (-stats[k], order[k]))
        else:
            ranked = sorted(stats, key=lambda k: (-stats[k], k))
        return stats, ranked

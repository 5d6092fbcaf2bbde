"""Progress reports of long calls: progress(phase, done, total, rate, eta).

Counting and training take an optional `progress` callable. It is called with the phase
("count": bytes, or documents for strings; "merge": merges), the units done, the total,
the rate in units per second and the seconds left (None when unknown), at most once per
REPORT_INTERVAL_S and once more at the end of the phase. The library never prints: the
command line draws these reports as bars (tokenizer/cli/progress.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

Progress = Callable[[str, int, int, float, "float | None"], None]

REPORT_INTERVAL_S = 0.1  # a bar redrawn more often only costs time


class Ticker:
    """Counts units done in one phase and calls progress(...) at most every REPORT_INTERVAL_S.

    total=None: not known in advance (documents of an iterable); the last report gives it."""

    def __init__(self, phase: str, total: int | None, progress: Progress | None) -> None:
        if progress is not None and not callable(progress):  # else "'int' object is not callable" mid-run
            raise TypeError(
                f"progress must be a function progress(phase, done, total, rate, eta), got {type(progress).__name__}"
            )
        self.phase, self.total, self.progress = phase, total, progress
        self.reset()

    def reset(self) -> None:
        self.done_units = 0
        self.start = self.last = time.perf_counter()

    def add(self, n: int) -> None:
        self.done_units += n
        if self.progress is not None:
            now = time.perf_counter()
            if now - self.last >= REPORT_INTERVAL_S:
                self.last = now
                self._emit(now)

    def done(self) -> None:
        if self.progress is not None:
            if self.total is None:
                self.total = self.done_units
            self._emit(time.perf_counter())

    def _emit(self, now: float) -> None:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done_units / elapsed
        total = self.total if self.total is not None else self.done_units
        eta = (total - self.done_units) / rate if self.total is not None and rate > 0 else None
        self.progress(self.phase, self.done_units, total, rate, eta)

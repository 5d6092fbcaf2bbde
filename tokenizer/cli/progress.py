"""Progress bars on stderr for the library's progress(phase, done, total, rate, eta) reports.

One tqdm bar per phase ("count" in bytes, "merge" in merges), one at a time: a phase's bar
is closed when the next phase reports, so the bars never share the screen. tqdm's own
estimates start when a bar is drawn, after the phase's first report; bars are back-dated to
the phase's start and average over all of it (smoothing=0), so they agree with the library's
rate. The merge bar shows no time left: merges get faster as pair counts fall (often 4x over
a run), so an early estimate is far too long.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from ..progress import Progress

UNITS = {"count": "B", "merge": "merge"}
NO_ETA_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"
NO_ETA_PHASES = {"merge"}


@contextlib.contextmanager
def progress_bars(quiet: bool = False) -> Iterator[Progress | None]:
    """A progress callback drawing the bars (plain `phase: done/total` lines without tqdm);
    None when quiet."""
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
            for earlier in bars.values():
                earlier.close()  # idempotent: closing twice is harmless
            bar = bars[phase] = tqdm(
                total=total,
                desc=phase,
                unit=UNITS.get(phase, "it"),
                unit_scale=phase == "count",
                leave=True,
                smoothing=0,
                bar_format=NO_ETA_FORMAT if phase in NO_ETA_PHASES else None,
                delay=1e-9,  # not drawn before it is back-dated
            )
            if rate > 0:
                bar.start_t -= done / rate  # the phase began before its first report
            bar.update(done)
            bar.refresh()
            return
        bar.total = total
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        for bar in bars.values():
            bar.close()

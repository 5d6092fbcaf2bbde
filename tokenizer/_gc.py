"""Pausing Python's cyclic garbage collector around work that makes millions of objects.

The trainer's words and lists and the encoder's cache entries are lists, tuples and ints
without reference cycles, so the collector never frees anything there. But every 700 new
container objects it runs, and its full collections walk every object alive: on a 6 MB
encode that is 3-8 % of the time, on a training run more than the merging itself. Reference
counting still frees everything as usual while the collector sleeps.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic GC inside the block; it is enabled again after only if it was before
    (a caller that disabled it keeps it disabled; a concurrent thread's pause may end first,
    which only lets the collector run earlier)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

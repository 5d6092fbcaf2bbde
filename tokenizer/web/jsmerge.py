"""The Python side of web/bpe-merge.js: the worker's batch merge of new chunks in JavaScript.

Why: in the worker, WebAssembly CPython runs the pure-Python merge loop (`_bpe._bpe_scan`)
below native CPython's speed, and on multilingual text nearly every chunk is new, so that loop
is most of an encode (Pyodide in Node, 400 KB of UDHR, cl100k_base: 1,090 of 1,340 ms). The
same loop in JavaScript, called once for all new chunks, took 250-600 ms for what took Python
675-923 ms (o200k_base: 280-365 against 1,110-1,170 ms), ids equal.

How it is wired: the worker registers the module as `JS_MODULE` (pyodide.registerJsModule);
the bridge calls `attach` on every tokenizer it encodes with, which sets `Tokenizer.batch_merge`
(the library's hook: `_merge_short` hands it the new chunks that are not tokens, 2 to
HEAP_THRESHOLD bytes, BATCH_MIN_CHUNKS or more of them) to a `JsMerge`. One call crosses into
JavaScript per batch, with one buffer each way: the chunks concatenated and their lengths in,
all ids and the ids per chunk out (native int32 arrays, which Pyodide hands over as one typed
array each).

Exact: the JavaScript loop is tiktoken's, the same as `_bpe_scan` (bpe-merge.js says why), on
the same ranks; tests/browser/test_bpe_merge.py proves it chunk by chunk in Node and
tests/browser/test_browser_jsmerge.py on the page against tiktoken. Where the module is not
there (CPython, tests/test_bridge.py) or `enabled` is off, the merge declines (None) and the
library's own loop runs, so an encode never depends on it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from itertools import islice
from typing import Any

from ..core import Tokenizer

JS_MODULE = "bpe_merge_js"  # the name web/worker.js registers web/bpe-merge.js under
PREPARE_STEP = 16_384  # tokens added to a JavaScript table per step: 10-35 ms in Pyodide
# Tokens a first use adds to the table at once: all of o200k_base's 200,000 (a few hundred ms).
# A file of 1.5 million ids took seconds, over an encode's 2 s deadline (web/worker-client.js),
# so the page stopped its first large encode as too slow: the Python loop merges until the
# worker's idle steps have built a table that large.
ON_USE_TOKENS = 1 << 18


def rank_arrays(ranks: dict[bytes, int]) -> tuple[bytes, array, array]:
    """Every token's bytes concatenated, their lengths and their ranks (`rankTable`'s input)."""
    tokens = list(ranks)
    return b"".join(tokens), array("i", map(len, tokens)), array("i", ranks.values())


def batch_arrays(pieces: list[bytes]) -> tuple[bytes, array]:
    """The chunks concatenated and their lengths (`mergeBatch`'s input)."""
    return b"".join(pieces), array("i", map(len, pieces))


def split_ids(ids: bytes, counts: bytes) -> list[tuple[int, ...]]:
    """`mergeBatch`'s answer (int32 ids of all chunks, int32 ids per chunk, as raw bytes) as
    one tuple of ids per chunk."""
    flat = array("i")
    flat.frombytes(ids)
    each = array("i")
    each.frombytes(counts)
    out = []
    at = 0
    for n in each:
        out.append(tuple(flat[at : at + n]))
        at += n
    return out


class _Stats:
    """What the JavaScript merge did in this worker (the page's tests and bench read it)."""

    enabled = True  # bench/browser.py turns it off to time the Python loop in the same page
    batches = 0  # batches merged in JavaScript
    pieces = 0  # chunks merged in JavaScript
    tables = 0  # rank tables built


stats = _Stats()


def _js_module() -> Any | None:
    """web/bpe-merge.js as registered by the worker, or None outside it."""
    try:
        return __import__(JS_MODULE)
    except ImportError:
        return None


class JsMerge:
    """A tokenizer's `batch_merge` through web/bpe-merge.js.

    Holds the tokenizer's ranks, not the tokenizer (no reference cycle: the JavaScript table, a
    Map of every token, goes as soon as the tokenizer does). The table is built PREPARE_STEP
    tokens at a time by `prepare` (the worker calls it while idle, a step per task, so that a
    request waits for one step at most), and whatever is left on first use if that is at most
    ON_USE_TOKENS (otherwise the merge declines until the idle steps are done).
    """

    def __init__(self, ranks: dict[bytes, int]) -> None:
        self._left: Iterator[tuple[bytes, int]] | None = iter(ranks.items())  # None: table complete
        self._untabled = len(ranks)  # tokens not in the table yet
        self._table: Any = None  # a JsProxy of rankTable's Map

    def prepare(self, steps: int | None = None) -> bool:
        """Add up to `steps` steps of tokens to the JavaScript table (None: all that are left);
        True when nothing is left to do (the table is complete, or the module is not there)."""
        module = _js_module()
        if module is None:
            return True
        from pyodide.ffi import to_js  # only in Pyodide, where the module is

        while self._left is not None and (steps is None or steps > 0):
            part = dict(islice(self._left, PREPARE_STEP))
            if not part:
                self._left = None
                stats.tables += 1
                break
            self._untabled -= len(part)
            tokens, lens, ranks = rank_arrays(part)
            args = (to_js(tokens), to_js(lens), to_js(ranks))
            self._table = (
                module.rankTable(*args) if self._table is None else module.rankTable(*args, self._table)
            )
            steps = None if steps is None else steps - 1
        return self._left is None

    def forget(self) -> None:
        """Empty the JavaScript side's cache of pair ranks (its table of tokens stays)."""
        module = _js_module()
        if module is not None and self._table is not None:
            module.forgetPairs(self._table)

    def __call__(self, pieces: list[bytes]) -> list[tuple[int, ...]] | None:
        module = _js_module()
        if not stats.enabled or module is None:
            return None  # turned off, or outside the worker
        from pyodide.ffi import to_js

        if self._untabled > ON_USE_TOKENS:
            return None  # too many to add now: the Python loop merges
        self.prepare()
        if self._table is None:  # no tokens at all
            return None
        data, lens = batch_arrays(pieces)
        answer = module.mergeBatch(self._table, to_js(data), to_js(lens))
        if answer is None:  # a byte that is not a token: the Python loop says which
            return None
        out = split_ids(answer.ids.to_bytes(), answer.counts.to_bytes())
        stats.batches += 1
        stats.pieces += len(pieces)
        return out


def attach(tok: Tokenizer) -> Tokenizer:
    """Give `tok` the JavaScript batch merge (it declines outside the worker)."""
    tok.batch_merge = JsMerge(tok.mergeable_ranks)
    return tok

"""The Python side of web/bpe-merge.js: the worker's batch merge of new chunks in JavaScript.

Why: in the worker, WebAssembly CPython runs the pure-Python merge loop (`_bpe._bpe_scan`)
below native CPython's speed, and on multilingual text nearly every chunk is new, so that loop
is most of an encode (Pyodide in Node, 400 KB of UDHR, cl100k_base: 1,090 of 1,340 ms). The
same loop in JavaScript, called once for all new chunks, took 250-600 ms for what took Python
675-923 ms (o200k_base: 280-365 against 1,110-1,170 ms), ids equal.

The library has no hook for it yet: `Tokenizer._encode_many` would hand the new short chunks
(not tokens, at most HEAP_THRESHOLD bytes) to a registered batch merge before numpy's, as
`merge(pieces) -> list[tuple[int, ...]] | None` (None: declined, the Python loop runs). These two
functions are the conversions such a merge needs on each side of the JavaScript call; the
arrays are native int32, which Pyodide hands over as one buffer each.
"""

from __future__ import annotations

from array import array


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

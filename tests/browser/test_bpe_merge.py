"""web/bpe-merge.js (the worker's batch merge in JavaScript, run here by Node) gives exactly
tiktoken's ids and `_bpe_scan`'s, chunk by chunk: on the new chunks of real multilingual text
(UDHR, every script of the sample) and on random bytes, for cl100k_base and o200k_base. And its
wiring (tokenizer/web/jsmerge.py): it declines outside the worker, and the page's whole-text
encode (IncrementalEncoder) hands a large text's new chunks to a tokenizer's batch merge.

No browser needed: the module has no DOM; Node runs the very file the page ships.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from tests.helpers import CORPORA, missing
from tests.oracles import tiktoken_reference
from tokenizer import _bpe, get_encoding
from tokenizer._batch import BATCH_MIN_CHUNKS
from tokenizer.encodings import DATA_DIR, encoding_from_bytes
from tokenizer.web import jsmerge
from tokenizer.web.incremental import IncrementalEncoder
from tokenizer.web.jsmerge import batch_arrays, rank_arrays, split_ids

RUNNER = Path(__file__).with_name("bpe_merge_runner.mjs")
UDHR_CHARS = 150_000  # every script of udhr_sample.txt is in its first 150 K characters


def js_merge(tmp: Path, ranks: dict[bytes, int], pieces: list[bytes]) -> list[tuple[int, ...]] | None:
    node = shutil.which("node")
    if not node:
        missing("node is not installed")
    tokens, lens, rank_ids = rank_arrays(ranks)
    data, piece_lens = batch_arrays(pieces)
    (tmp / "tokens.bin").write_bytes(tokens)
    (tmp / "lens.i32").write_bytes(lens.tobytes())
    (tmp / "ranks.i32").write_bytes(rank_ids.tobytes())
    (tmp / "data.bin").write_bytes(data)
    (tmp / "pieces.i32").write_bytes(piece_lens.tobytes())
    out = subprocess.run(
        [node, str(RUNNER), str(tmp)], capture_output=True, text=True, check=True, timeout=300
    )
    if out.stdout.strip() == "declined":
        return None
    return split_ids((tmp / "ids.i32").read_bytes(), (tmp / "counts.i32").read_bytes())


def new_chunks(name: str, text: str) -> list[bytes]:
    """The distinct chunks of `text` that are not tokens and that `_bpe_scan` merges."""
    tok = get_encoding(name)
    pieces = dict.fromkeys(chunk.encode() for chunk in tok.split(text))
    return [p for p in pieces if p not in tok.mergeable_ranks and len(p) <= _bpe.HEAP_THRESHOLD]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_js_merge_equals_tiktoken_on_multilingual_text(tmp_path, name):
    text = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")[:UDHR_CHARS]
    pieces = new_chunks(name, text)
    assert len(pieces) > 5_000
    ranks = get_encoding(name).mergeable_ranks
    got = js_merge(tmp_path, ranks, pieces)
    reference = tiktoken_reference(name)
    assert got == [tuple(reference._encode_single_piece(p)) for p in pieces]
    assert got == [_bpe._bpe_scan(p, ranks) for p in pieces]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_js_merge_equals_the_scan_on_random_bytes(tmp_path, name):
    rng = random.Random(16)
    alphabets = [bytes(range(256)), b"ab", b" \n\t", "東京タワーаб".encode(), b"aaaaaaab"]
    pieces = [
        bytes(rng.choice(alphabet) for _ in range(rng.randint(1, _bpe.HEAP_THRESHOLD)))
        for alphabet in alphabets
        for _ in range(400)
    ]
    ranks = get_encoding(name).mergeable_ranks
    assert js_merge(tmp_path, ranks, pieces) == [_bpe._bpe_scan(p, ranks) for p in pieces]


def test_the_js_merge_declines_a_byte_that_is_not_a_token(tmp_path):
    ranks = {b"a": 0, b"b": 1, b"ab": 2}
    assert js_merge(tmp_path, ranks, [b"ab", b"abc"]) is None
    assert js_merge(tmp_path, ranks, [b"abab", b"ba"]) == [(2, 2), (1, 0)]


def test_outside_the_worker_the_js_merge_declines_and_encoding_is_unchanged():
    tok = jsmerge.attach(encoding_from_bytes((DATA_DIR / "cl100k_base.bpe").read_bytes()))
    text = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")[:UDHR_CHARS]
    pieces = new_chunks("cl100k_base", text)
    assert len(pieces) >= BATCH_MIN_CHUNKS
    assert tok.batch_merge(pieces) is None  # no bpe_merge_js module in CPython
    assert tok.encode(text) == get_encoding("cl100k_base").encode(text)


def test_a_whole_text_in_the_page_hands_its_new_chunks_to_the_batch_merge():
    """IncrementalEncoder (the page's encode) merges a large text's new chunks in one batch."""
    tok = encoding_from_bytes((DATA_DIR / "o200k_base.bpe").read_bytes())
    ranks = tok.mergeable_ranks
    batches: list[int] = []

    def scan(pieces: list[bytes]) -> list[tuple[int, ...]]:
        batches.append(len(pieces))
        return [_bpe._bpe_scan(p, ranks) for p in pieces]

    tok.batch_merge = scan
    text = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")[:60_000]
    patch = IncrementalEncoder(tok).update(text)
    assert list(patch.ids) == tiktoken_reference("o200k_base").encode(text, allowed_special="all")
    assert batches and sum(batches) >= BATCH_MIN_CHUNKS


def test_a_huge_vocabulary_merges_in_python_until_the_idle_steps_built_its_table(monkeypatch):
    """A first use built the whole JavaScript table: seconds for a file of 1.5 million ids, over
    an encode's 2 s deadline, so the page's first large encode with it was stopped as too slow.
    Past ON_USE_TOKENS the merge declines (the Python loop runs) until prepare() has built it."""
    tables, batches = [], []

    class Module:  # web/bpe-merge.js's two functions, as the worker registers them
        @staticmethod
        def rankTable(tokens, lens, ranks, table=None):  # noqa: N802 (JavaScript's name)
            tables.append(len(lens))
            return (table or 0) + len(lens)

        @staticmethod
        def mergeBatch(table, data, lens):  # noqa: N802
            batches.append(table)

    ffi = types.ModuleType("pyodide.ffi")
    ffi.to_js = lambda value: value
    monkeypatch.setitem(sys.modules, "pyodide", types.ModuleType("pyodide"))
    monkeypatch.setitem(sys.modules, "pyodide.ffi", ffi)
    monkeypatch.setattr(jsmerge, "_js_module", lambda: Module)
    pieces = [b"ab", b"ba"]
    small = jsmerge.JsMerge(get_encoding("o200k_base").mergeable_ranks)
    assert small(pieces) is None and batches == [len(get_encoding("o200k_base").mergeable_ranks)]
    tables.clear()
    huge = {bytes([i]): i for i in range(256)}
    huge.update((b"%dx" % i, 256 + i) for i in range(jsmerge.ON_USE_TOKENS))
    merge = jsmerge.JsMerge(huge)
    assert merge(pieces) is None and tables == []  # declined, nothing built in the request
    while not merge.prepare(1):  # the worker's idle steps
        pass
    assert sum(tables) == len(huge)
    merge(pieces)
    assert batches[-1] == len(huge)

"""The page's JavaScript batch merge (web/bpe-merge.js, wired in by tokenizer/web/jsmerge.py):
multilingual text pasted in a fresh page takes it (thousands of new chunks at once) and the
panels' ids still equal tiktoken's, for cl100k_base and o200k_base; so does a user's loaded
tokenizer, with its own table.

A fresh page: its worker's chunk caches are empty, so the paste's new chunks are all merged
then, and the worker's counters (the `merge_stats` op) say by which loop.
"""

from __future__ import annotations

from itertools import islice

import tiktoken
from playwright.sync_api import Page

from tests.browser.pages import all_panel_ids
from tests.helpers import CORPORA
from tests.oracles import tiktoken_reference
from tokenizer import formats, get_encoding
from tokenizer._batch import BATCH_MIN_CHUNKS
from tokenizer.loading import from_texts

UDHR_CHARS = 150_000  # every script of udhr_sample.txt, ~10,000 new chunks per encoding
ENCODINGS = ("cl100k_base", "o200k_base")  # the default panels (manifest default_encodings)
SMALL_VOCAB = 1_000  # ranks of the loaded tokenizer: UDHR's chunks are then nearly all new


def merge_stats(page: Page) -> dict:
    return page.evaluate("() => window.__bpe.rpc('merge_stats', {})")


def paste(page: Page, text: str) -> None:
    # As Ctrl+V: the value and one input event (fill() is slow on large texts).
    page.get_by_test_id("input").evaluate(
        "(el, t) => { el.value = t; el.dispatchEvent(new Event('input', {bubbles: true})); }", text
    )


def wait_all_ids(page: Page, encoding: str, n_ids: int, n_chars: int) -> list[int]:
    page.wait_for_function(
        """([enc, n, len]) => {
            const p = window.__bpe.state.panels.find((p) => p.name === enc);
            return p && p.result && p.result.length === len && p.result.all.ids.length === n
                && p.el.dataset.state === "ok";
        }""",
        arg=[encoding, n_ids, n_chars],
        timeout=120_000,
        polling=100,
    )
    return all_panel_ids(page, encoding)


def test_multilingual_paste_takes_the_js_merge_and_equals_tiktoken(open_page, live_server):
    page = open_page(live_server)
    text = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")[:UDHR_CHARS]
    before = merge_stats(page)
    assert before["enabled"]
    paste(page, text)
    for name in ENCODINGS:
        want = tiktoken_reference(name).encode(text, allowed_special="all")
        assert wait_all_ids(page, name, len(want), len(text)) == want, f"{name}: the page's ids differ"
    after = merge_stats(page)
    assert after["batches"] - before["batches"] >= len(ENCODINGS), after
    assert after["pieces"] - before["pieces"] >= len(ENCODINGS) * BATCH_MIN_CHUNKS, after
    assert after["tables"] >= len(ENCODINGS), after


def test_a_loaded_tokenizer_takes_the_js_merge_and_equals_tiktoken(open_page, live_server):
    """A user's .tiktoken (cl100k_base's first SMALL_VOCAB ranks: a valid BPE, where nearly
    every chunk is new) gets its own table; its ids equal tiktoken's with the same ranks."""
    page = open_page(live_server)
    ranks = dict(islice(get_encoding("cl100k_base").mergeable_ranks.items(), SMALL_VOCAB))
    loaded = from_texts(formats.dump_tiktoken(ranks), None, None, "small.tiktoken")
    text = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")[:UDHR_CHARS]
    before = merge_stats(page)
    got = page.evaluate(
        """async ([tiktoken, text]) => {
            const {info} = await window.__bpe.rpc('load', {tiktoken, filename: 'small.tiktoken'});
            const r = await window.__bpe.rpc('encode', {name: info.name, text});
            // again with every cache emptied, the JavaScript pair ranks too (as bench/browser.py)
            await window.__bpe.rpc('forget_chunks', {});
            const again = await window.__bpe.rpc('encode', {name: info.name, text});
            return Array.from(r.ids).join() === Array.from(again.ids).join() ? Array.from(r.ids) : null;
        }""",
        [formats.dump_tiktoken(ranks), text],
    )
    reference = tiktoken.Encoding(
        "small", pat_str=loaded.pattern_regex, mergeable_ranks=ranks, special_tokens={}
    )
    assert got == reference.encode(text) == loaded.encode(text)
    after = merge_stats(page)
    assert after["pieces"] - before["pieces"] >= 2 * BATCH_MIN_CHUNKS, after

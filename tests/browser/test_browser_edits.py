"""Edits of a large text reach the worker as edits (web/textbox.js, bridge.encode_change), and
the ids the page holds and shows after them equal a full encode in CPython.

The text is longer than the text box holds at once (textbox.js's LIVE_MAX), so the box shows a
window of it; the caret is put at places where a chunk is decided far away or at a boundary
(a long whitespace run, the space before a word, a contraction, the text's two ends) and real
keys are typed and deleted there. Shares the booted page and puts the text back as it found it.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import panel, wait_ids
from tests.helpers import CORPORA
from tokenizer import get_encoding

LIVE_MAX = 1 << 17  # textbox.js: a longer text is shown through a window of the box
ENCODINGS = ("cl100k_base", "o200k_base")


@pytest.fixture
def page(app_page: Page):
    before = app_page.evaluate("window.__bpe.text.getText()")
    yield app_page
    app_page.evaluate("(t) => window.__bpe.text.setText(t)", before)


def sent(page: Page) -> dict:
    return page.evaluate("() => ({...window.__bpe.metrics.sent})")


def wait_text(page: Page, text: str) -> None:
    page.wait_for_function(
        """(len) => window.__bpe.state.panels.every((p) => p.result && p.result.length === len
             && p.el.dataset.state === "ok" && p.tokensEl.dataset.rendered)""",
        arg=len(text),
        timeout=180_000,
        polling=100,
    )
    assert page.evaluate("window.__bpe.text.getText()") == text
    for enc in ENCODINGS:
        wait_ids(page, enc, get_encoding(enc).encode(text, allowed_special="all"), timeout=120_000)


def test_typing_and_deleting_in_a_windowed_large_text_stays_exact(page):
    en = (CORPORA / "pg_en_medium.txt").read_text(encoding="utf-8")
    base = (en * (2 * LIVE_MAX // len(en) + 1))[: LIVE_MAX + 100_000]
    run = 60_000
    text = base[:run] + "\n" + " " * 60 + "x" + base[run:]  # a whitespace run decided by its end
    page.evaluate("(t) => window.__bpe.text.setText(t)", text)
    wait_text(page, text)
    expect(page.get_by_test_id("input-window")).to_be_visible()
    assert len(page.get_by_test_id("input").input_value()) < len(text)  # the box holds a window

    word = text.index(" the ", 100_000)  # the space before a word: a chunk boundary
    quote = text.find("'s ", 180_000)
    spots = [
        (run + 30, "\n", 0),  # inside the whitespace run: its chunks change 30 characters away
        (run + 62, "", 1),  # delete the "x" that ends the run (it decided the run's chunks)
        (word, "  ", 0),
        (word + 3, "", 2),  # a deletion just inside the next word
        (quote + 1 if quote > 0 else word, "LL", 0),  # a contraction becomes another
        (len(text), " end\n", 0),
        (0, "Start ", 0),
    ]
    before = sent(page)
    for at, typed, backspaces in spots:
        page.evaluate("(m) => window.__bpe.text.moveCaret(m)", at)
        for _ in range(backspaces):
            page.keyboard.press("Backspace")
        if typed:
            page.keyboard.type(typed)
        text = text[: at - backspaces] + typed + text[at:]
        wait_text(page, text)
    after = sent(page)
    assert after["edits"] > before["edits"] and after["texts"] == before["texts"], (before, after)
    # Selecting all the box holds and typing replaces the whole text.
    page.get_by_test_id("input").press("Control+a")
    page.keyboard.type("short")
    wait_text(page, "short")
    expect(page.get_by_test_id("input-window")).to_be_hidden()
    expect(panel(page, "cl100k_base").get_by_test_id("token-count")).to_have_text("1")


EDIT_PIECES = ["🙂", "\ud83d", "\ude42", "x", " ", "東", "\n", "", "ab", "  "]  # halves of 🙂 apart


@pytest.mark.parametrize("name", ENCODINGS)
def test_edits_that_join_or_cut_surrogate_pairs_stay_exact(page, name):
    # The worker translates an edit's UTF-16 offsets into code points from the surrogates it
    # keeps of each text (worker.js), and widens an edit that cuts a pair. Random edits of a
    # text of emoji, lone halves and CJK, some splitting a pair or joining two halves; after
    # each, the patched ids equal the worker's whole encode of the same JS string (CPython gets
    # lone surrogates through Playwright differently, so the worker is its own reference here).
    bad = page.evaluate(
        """async ([name, pieces]) => {
            const rpc = window.__bpe.rpc;
            const key = "test-surrogate-edits";
            let text = "a🙂b 東京 👩‍💻 x\\ud800y z\\udc00 " + "word ".repeat(40) + "🙂🙂🙂";
            let r = await rpc("encode_edit", { name, key, text, base: 0 });
            let serial = r.serial;
            const ids = Array.from(r.ids);
            let seed = 7;
            const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
            const bad = [];
            for (let k = 0; k < 80 && !bad.length; k++) {
                const start = rnd(text.length + 1);
                const removed = rnd(Math.min(3, text.length - start) + 1);
                const inserted = pieces[rnd(pieces.length)] + pieces[rnd(pieces.length)];
                const p = await rpc("encode_change", { name, key, base: serial, start, removed, inserted });
                if (p.stale) {
                    bad.push(["stale", k]);
                    break;
                }
                text = text.slice(0, start) + inserted + text.slice(start + removed);
                ids.splice(p.start, p.removed, ...p.ids);
                serial = p.serial;
                const whole = await rpc("encode", { name, text });
                if (whole.ids.join() !== ids.join()) bad.push([k, start, removed, inserted, text]);
            }
            await rpc("forget_edits", { key });
            return bad;
        }""",
        [name, EDIT_PIECES],
    )
    assert bad == []


LINE_MAX = 1000  # render.js: tokens in one line block; a longer line goes on in the next block


def line_blocks(page: Page, encoding: str) -> list[int]:
    """Tokens per line block of a panel (a group of partial-character tokens counts its tokens)."""
    return (
        panel(page, encoding)
        .locator(".line")
        .evaluate_all("els => els.map(e => e.querySelectorAll('[data-testid=token]').length)")
    )


def test_a_long_line_without_newlines_is_cut_into_blocks_and_edits_stay_exact(page):
    """1 MB of CJK has no newline: its one line block grew with every slice, and Chromium laid out
    all of it each time (100-300 ms tasks). Blocks now hold at most LINE_MAX tokens; an edit
    inside one, or where two meet, re-renders exactly."""
    cjk = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")
    han = "".join(c for c in cjk if "\u4e00" <= c <= "\u9fff")
    text = (han * (6000 // max(len(han), 1) + 1))[:6000] + "。 end"  # no newline, ~4,000+ tokens
    page.evaluate("(t) => window.__bpe.text.setText(t)", text)
    wait_text(page, text)
    for enc in ENCODINGS:
        sizes = line_blocks(page, enc)
        assert len(sizes) >= 3 and max(sizes) <= LINE_MAX + 8, sizes  # a group may pass it a little
    first_end = len(get_encoding("cl100k_base").decode(get_encoding("cl100k_base").encode(text)[:LINE_MAX]))
    for at, typed in [(3000, "x"), (first_end, "東京"), (first_end - 1, " "), (10, "\n")]:
        page.evaluate("(m) => window.__bpe.text.moveCaret(m)", at)
        page.keyboard.type(typed)
        text = text[:at] + typed + text[at:]
        wait_text(page, text)

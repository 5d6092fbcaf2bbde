"""Large texts in the page (issue 16): the DOM holds a bounded window of the tokens, edits are
patched in (bridge.encode_edit) and the whole result still equals CPython's encode.

Shares the booted page and puts the text back as it found it.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import all_panel_ids, panel, panel_ids, wait_ids
from tests.helpers import CORPORA
from tokenizer import get_encoding

VIEW_TOKENS = 10_000  # render.js: a panel's DOM shows this many tokens of a large result
VIEW_SLACK = 2_500  # render.js: ... or up to this many more while typing


@pytest.fixture
def page(app_page: Page):
    before = app_page.get_by_test_id("input").input_value()
    yield app_page
    set_text(app_page, before)


def set_text(page: Page, text: str) -> None:
    # A paste: value + one input event (fill() goes through Chrome's slow insertText for big texts).
    page.get_by_test_id("input").evaluate(
        "(el, t) => { el.value = t; el.dispatchEvent(new Event('input', {bubbles: true})); }", text
    )


def wait_result(page: Page, encoding: str, text: str) -> list[int]:
    want = get_encoding(encoding).encode(text, allowed_special="all")
    page.wait_for_function(
        """([enc, n, len]) => {
            const p = window.__bpe.state.panels.find((p) => p.name === enc);
            return p && p.result && p.result.length === len && p.result.all.ids.length === n
                && p.el.dataset.state === "ok";
        }""",
        arg=[encoding, len(want), len(text.encode("utf-16-le", "surrogatepass")) // 2],  # the page's length
        timeout=120_000,
        polling=100,
    )
    assert all_panel_ids(page, encoding) == want, f"{encoding}: the page's ids differ from CPython"
    return want


def test_a_large_text_shows_a_bounded_window_and_edits_stay_exact(page):
    en = (CORPORA / "pg_en_medium.txt").read_text(encoding="utf-8")
    text = en[:300_000]  # about 65,000 tokens: more than one window
    set_text(page, text)
    for enc in ("cl100k_base", "o200k_base"):
        want = wait_result(page, enc, text)
        assert len(want) > VIEW_TOKENS
        p = panel(page, enc)
        expect(p.get_by_test_id("pager")).to_be_visible()
        expect(p.get_by_test_id("token-count")).to_have_text(str(len(want)))
        wait_ids(page, enc, want)  # the whole result, and the window's spans (all of them rendered)
        assert panel_ids(page, enc) == want[:VIEW_TOKENS]  # the window starts at the text's start
    # An edit far past the window: the window moves there; the whole result is still exact.
    # The box holds a window of a text this long (textbox.js): put the caret through the page.
    page.evaluate("(m) => window.__bpe.text.moveCaret(m)", 250_000)
    page.keyboard.type(" Zebra\n\n  ")
    edited = text[:250_000] + " Zebra\n\n  " + text[250_000:]
    for enc in ("cl100k_base", "o200k_base"):
        want = wait_result(page, enc, edited)
        offset = page.evaluate(
            "(enc) => window.__bpe.state.panels.find((p) => p.name === enc).result.offset", enc
        )
        assert offset > 0
        wait_ids(page, enc, want)
        shown = panel_ids(page, enc)
        assert len(shown) <= VIEW_TOKENS + VIEW_SLACK and shown == want[offset : offset + len(shown)]
    # The pager moves the window back to the start.
    p = panel(page, "cl100k_base")
    for _ in range(20):
        if p.get_by_test_id("pager").get_by_role("button", name="◀ earlier").is_visible():
            p.get_by_test_id("pager").get_by_role("button", name="◀ earlier").click()
    expect(p.get_by_test_id("pager-range")).to_contain_text("showing tokens 1–")


def test_the_tooltip_counts_tokens_from_the_texts_start_not_the_windows(page):
    # Past the first window the tooltip said "token 4" for the text's token 5,004.
    text = (CORPORA / "pg_en_medium.txt").read_text(encoding="utf-8")[:100_000]
    set_text(page, text)
    want = wait_result(page, "cl100k_base", text)
    wait_ids(page, "cl100k_base", want)
    p = panel(page, "cl100k_base")
    p.get_by_test_id("pager").get_by_role("button", name="later ▶").click()
    expect(p.get_by_test_id("pager-range")).to_contain_text("showing tokens 5,001–15,000")
    expect(p.get_by_test_id("tokens")).to_have_attribute("data-rendered", str(len(want)))
    p.get_by_test_id("token").nth(3).hover()
    tip = page.locator("#tooltip")
    expect(tip).to_contain_text(f"id {want[5003]}")
    expect(tip).to_contain_text("position token 5004 ·")
    page.mouse.move(0, 0)
    page.locator("h1").hover()
    p.get_by_test_id("pager").get_by_role("button", name="◀ earlier").click()
    expect(p.get_by_test_id("pager-range")).to_contain_text("showing tokens 1–")


def test_a_big_paste_normalizes_line_breaks_as_the_box_does_a_small_one(page):
    # A textarea's value holds no CR: a small paste of "a\r\nb" is "a\nb", but a paste past
    # LIVE_MAX (taken by textbox.js, not the box) kept every CR: the same clipboard gave other
    # tokens at another size, and the box (CR-free) no longer matched the text it edits.
    crlf = (CORPORA / "pg_en_medium.txt").read_text(encoding="utf-8")[:200_000].replace("\n", "\r\n")
    page.get_by_test_id("input").focus()
    page.evaluate(
        """(t) => {
            const dt = new DataTransfer();
            dt.setData('text/plain', t);
            const box = document.querySelector('#input');
            box.select();
            box.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));
        }""",
        crlf + "\rend",
    )
    text = crlf.replace("\r\n", "\n") + "\nend"
    assert page.evaluate("() => window.__bpe.text.getText()") == text
    wait_result(page, "cl100k_base", text)


JUMP_BEFORE = 100  # render.js: tokens a jumping window shows before the edit
SLICE_MAX = 1_500  # render.js: tokens one slice of a window's DOM builds at most


def test_a_keystroke_far_from_the_window_builds_the_edit_first_in_bounded_slices(page):
    """The cause of the 300-700 ms keystrokes of bench/browser.py at 100 KB: the window jumped to
    [total - 10,000, total) for a keystroke at the end, so the edit came last of 10,000 tokens
    built in fixed 1,000-token slices (up to 136 ms each), after a synchronous removal of the
    old window's 10,000 spans. Now the window starts just before the edit, the slice built with
    the reply holds the edit, no slice builds more than SLICE_MAX tokens, and the old lines go
    in slices after the new ones (the DOM holds exactly the new window at the end)."""
    en = (CORPORA / "pg_en_medium.txt").read_text(encoding="utf-8")
    text = en[:100_000]  # about 22,000 tokens: the window shows the first 10,000
    set_text(page, text)
    for enc in ("cl100k_base", "o200k_base"):
        wait_ids(page, enc, wait_result(page, enc, text))
    page.evaluate("(m) => window.__bpe.text.moveCaret(m)", len(text))
    page.keyboard.type("x")
    edited = text + "x"
    for enc in ("cl100k_base", "o200k_base"):
        want = wait_result(page, enc, edited)
        r = page.evaluate(
            """(enc) => {
                const r = window.__bpe.state.panels.find((p) => p.name === enc).result;
                return { offset: r.offset, n: r.ids.length, editTo: r.editTo, slices: r.slices };
            }""",
            enc,
        )
        assert r["offset"] + r["n"] == len(want), "the window ends at the text's end"
        assert 0 < r["editTo"] <= JUMP_BEFORE + 10, f"the window starts just before the edit: {r}"
        assert r["slices"][0] >= r["editTo"], f"the first slice shows the edit: {r}"
        assert max(r["slices"]) <= SLICE_MAX, f"bounded slices: {r}"
        wait_ids(page, enc, want)  # the old window's lines are all gone


PIECE = 1 << 14  # textbox.js: characters per piece of the kept text


def caret_text() -> str:
    """Over LIVE_MAX characters (the box then holds a window, and caret moves are reported),
    with 2-, 3- and 4-byte characters, and a surrogate pair split by a piece boundary."""
    en = (CORPORA / "pg_en_medium.txt").read_text(encoding="utf-8")[:300_000]
    head = "é东😀 " * 1000  # 5 units and 14 bytes each
    return head[: PIECE - 1] + "😀" + head[PIECE - 1 :] + en


def test_the_utf8_offset_of_the_caret_counts_every_character_as_the_worker_does(page):
    text = caret_text()
    set_text(page, text)
    units = [
        0,
        1,
        2,
        3,
        PIECE - 1,
        PIECE,
        PIECE + 1,
        PIECE + 2,
        2 * PIECE + 7,
        5_000,
        len(text) // 2,
        len(text),
    ]
    got = page.evaluate("(ats) => ats.map((at) => window.__bpe.text.utf8Before(at))", units)
    # The page's strings are UTF-16: a prefix may end inside a pair (a lone surrogate: 3 bytes).
    utf16 = text.encode("utf-16-le", "surrogatepass")
    want = [
        len(utf16[: 2 * at].decode("utf-16-le", "surrogatepass").encode("utf-8", "surrogatepass"))
        for at in units
    ]
    assert got == want


def test_the_token_window_follows_the_caret_so_the_next_keystroke_edits_inside_it(page):
    text = caret_text()
    set_text(page, text)
    wanted = {enc: wait_result(page, enc, text) for enc in ("cl100k_base", "o200k_base")}
    caret = len(text) - 60_000  # in code points; the page counts UTF-16 units
    caret_bytes = len(text[:caret].encode())
    page.evaluate("(m) => window.__bpe.text.moveCaret(m)", caret + text[:caret].count("😀"))
    for enc, want in wanted.items():
        ends = list(accumulate(map(len, get_encoding(enc).decode_tokens_bytes(want))))
        token = bisect_right(ends, caret_bytes)  # the token holding the caret's byte
        page.wait_for_function(
            """([enc, t]) => {
                const r = window.__bpe.state.panels.find((p) => p.name === enc).result;
                return r.offset <= t && t < r.offset + r.ids.length;
            }""",
            arg=[enc, token],
            timeout=10_000,
        )
        offset = page.evaluate(
            "(enc) => window.__bpe.state.panels.find((p) => p.name === enc).result.offset", enc
        )
        assert 0 < token - offset <= JUMP_BEFORE, "the window starts just before the caret's token"
        wait_ids(page, enc, want)
    page.keyboard.type("x")
    edited = text[:caret] + "x" + text[caret:]
    for enc in wanted:
        want = wait_result(page, enc, edited)
        r = page.evaluate(
            "(enc) => { const r = window.__bpe.state.panels.find((p) => p.name === enc).result;"
            " return { offset: r.offset, slices: r.slices.length }; }",
            enc,
        )
        assert r["offset"] > 0 and r["slices"] == 1, f"an edit inside the window: no jump, one slice: {r}"
        wait_ids(page, enc, want)

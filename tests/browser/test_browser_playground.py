"""The playground's token view, driven through the real page in headless Chromium and checked
against CPython: token view options, tooltips and cross-panel highlight, special tokens, per-panel
stats, adding and removing panels, diff mode, regex split view, dark mode (with the README's
screenshots), a 100 KB paste, keyboard use and a narrow screen.

Most tests share one booted page (Pyodide boots in seconds, not milliseconds) and put it back as
they found it (the `page` fixture of tests/browser/conftest.py); dark mode opens its own. The
decode box and merge explorer are in test_browser_decode_merges.py, loading tokenizers from disk
in test_browser_loading.py, share links in test_browser_share.py.
"""

from __future__ import annotations

import os

from playwright.sync_api import Page, expect

from tests.browser.pages import DEFAULTS, expected_texts, panel, panel_texts, type_text, visible, wait_ids
from tests.helpers import CORPORA, ROOT
from tokenizer import Tokenizer, get_encoding

SCREENSHOTS = ROOT / "web" / "screenshots"


def byte_bounds(tok: Tokenizer, ids: list[int]) -> list[int]:
    out = [0]
    for i in ids:
        out.append(out[-1] + len(tok.decode_single_token_bytes(i)))
    return out


# ----- token view -------------------------------------------------------------------------


def test_stable_colour_per_token_id(page: Page):
    text = type_text(page, "the cat and the dog and the bird and the end")
    want = get_encoding("cl100k_base").encode(text)
    wait_ids(page, "cl100k_base", want)
    classes = (
        panel(page, "cl100k_base")
        .get_by_test_id("token")
        .evaluate_all(
            "els => els.map(e => [Number(e.dataset.id), [...e.classList].find(c => /^c\\d+$/.test(c))])"
        )
    )
    colour: dict[int, str] = {}
    for token_id, cls in classes:
        assert cls, "every token has a colour class"
        assert colour.setdefault(token_id, cls) == cls, f"token {token_id} has two colours"
    assert len(set(colour.values())) > 1, "different tokens get different colours"
    # Same id, same colour in another panel too (gpt2 and r50k share ids for this text).
    page.locator("#add-encoding").select_option("r50k_base")
    wait_ids(page, "r50k_base", get_encoding("r50k_base").encode(text))
    other = (
        panel(page, "r50k_base")
        .get_by_test_id("token")
        .evaluate_all(
            "els => els.map(e => [Number(e.dataset.id), [...e.classList].find(c => /^c\\d+$/.test(c))])"
        )
    )
    again = dict(classes)
    for token_id, cls in other:
        if token_id in again:
            assert cls == again[token_id]


def test_whitespace_toggle_and_ids_view(page: Page):
    text = type_text(page, "a  b\tc\nd")
    want = get_encoding("o200k_base").encode(text)
    wait_ids(page, "o200k_base", want)
    assert panel_texts(page, "o200k_base") == expected_texts("o200k_base", want)
    page.locator("#opt-whitespace").uncheck()
    tok = get_encoding("o200k_base")
    raw = [tok.decode_single_token_bytes(i).decode() for i in want]
    expect(panel(page, "o200k_base").get_by_test_id("token")).to_have_text(
        [t.removesuffix("\n") for t in raw], use_inner_text=False
    )
    page.locator("#opt-whitespace").check()
    page.locator("#opt-ids").check()
    expect(panel(page, "o200k_base").get_by_test_id("token")).to_have_text([str(i) for i in want])
    page.locator("#opt-ids").uncheck()
    expect(panel(page, "o200k_base").get_by_test_id("token")).to_have_text(expected_texts("o200k_base", want))


def test_tooltip_shows_id_bytes_rank_and_highlights_other_panels(page: Page):
    text = type_text(page, "Hello internationalization 東京")
    cl, o2 = get_encoding("cl100k_base"), get_encoding("o200k_base")
    cl_ids, o2_ids = cl.encode(text), o2.encode(text)
    wait_ids(page, "cl100k_base", cl_ids)
    wait_ids(page, "o200k_base", o2_ids)
    k = 2  # a token in the middle of " internationalization"
    span = panel(page, "cl100k_base").get_by_test_id("token").nth(k)
    span.hover()
    tip = page.locator("#tooltip")
    expect(tip).to_be_visible()
    token_bytes = cl.decode_single_token_bytes(cl_ids[k])
    expect(tip).to_contain_text(f"id {cl_ids[k]}")
    expect(tip).to_contain_text(f"rank {cl_ids[k]}")
    expect(tip).to_contain_text("bytes " + " ".join(f"{b:02X}" for b in token_bytes))
    # The o200k tokens overlapping the same bytes are highlighted, and only those.
    cb, ob = byte_bounds(cl, cl_ids), byte_bounds(o2, o2_ids)
    start, end = cb[k], cb[k + 1]
    want = [i for i in range(len(o2_ids)) if ob[i] < end and ob[i + 1] > start]
    got = (
        panel(page, "o200k_base")
        .get_by_test_id("token")
        .evaluate_all("els => els.map((e, i) => e.classList.contains('hl') ? i : -1).filter(i => i >= 0)")
    )
    assert got == want and want
    page.mouse.move(0, 0)
    page.locator("h1").hover()
    expect(tip).to_be_hidden()


def test_tooltip_of_a_piece_of_a_character_shows_no_replacement_character(page: Page):
    # cl100k cuts " 東" into <20 E6 9D> and <B1>: the tooltip's text row decoded the piece
    # leniently and showed "\ufffd", which the token view never shows.
    text = type_text(page, "Hello 東京")
    cl = get_encoding("cl100k_base")
    ids = cl.encode(text)
    wait_ids(page, "cl100k_base", ids)
    tip = page.locator("#tooltip")
    for k, i in enumerate(ids):
        if cl.decode_single_token_bytes(i).decode("utf-8", "replace") == cl.decode_single_token_bytes(
            i
        ).decode("utf-8", "ignore"):
            continue
        panel(page, "cl100k_base").get_by_test_id("token").nth(k).hover()
        expect(tip).to_contain_text(f"id {i}")
        expect(tip).to_contain_text('part of a character (not UTF-8 on its own): 2 tokens form " 東"')
        assert "\ufffd" not in tip.inner_text()
    page.mouse.move(0, 0)
    page.locator("h1").hover()


def test_a_bidi_control_inside_a_token_moves_no_other_token(page: Page):
    # o200k has tokens of U+202B (right-to-left embedding) and U+202E-like controls: the
    # embedding opened inside " \u202b" ran to the end of the line block, so the line's final
    # ↵ was drawn left of "three", before the tokens it follows. Tokens read left to right here.
    text = type_text(page, "one two \u202bthree four five six\nseven \u202eeight")
    want = get_encoding("o200k_base").encode(text)
    wait_ids(page, "o200k_base", want)
    lefts = (
        panel(page, "o200k_base")
        .locator(".line")
        .evaluate_all(
            "lines => lines.map(l => [...l.querySelectorAll('[data-testid=token]')]"
            ".map(s => Math.round(s.getBoundingClientRect().left)))"
        )
    )
    assert all(line == sorted(line) and len(set(line)) == len(line) for line in lefts), lefts


def test_special_tokens_allowed_as_text_or_refused(page: Page):
    # Issue 15: `encode --special text|allow|raise`, "the page gets the same choice".
    text = type_text(page, "hello <|endoftext|> world")
    choice = page.get_by_test_id("opt-special")
    for name in DEFAULTS:
        wait_ids(page, name, get_encoding(name).encode(text, allowed_special="all"))
    choice.select_option("text")
    for name in DEFAULTS:
        wait_ids(page, name, get_encoding(name).encode(text, disallowed_special=()))
    choice.select_option("raise")
    for name in DEFAULTS:
        expect(panel(page, name)).to_have_attribute("data-state", "error")
        expect(panel(page, name).get_by_test_id("panel-error")).to_contain_text(
            "the text holds the special token '<|endoftext|>' at character 7"
        )
    # Typed away, the text encodes again; typed back, it is refused again.
    box = page.get_by_test_id("input")
    box.press("End")
    for _ in range(len(" world") + 1):
        box.press("Backspace")
    for name in DEFAULTS:
        wait_ids(page, name, get_encoding(name).encode(text[: -len(" world") - 1], disallowed_special=()))
    box.press_sequentially("> again")
    expect(panel(page, "cl100k_base")).to_have_attribute("data-state", "error")
    choice.select_option("allow")
    text = "hello <|endoftext|> again"
    for name in DEFAULTS:
        wait_ids(page, name, get_encoding(name).encode(text, allowed_special="all"))


def test_panel_stats(page: Page):
    text = type_text(page, "Статистика: 東京 and plain English words.")
    for name in DEFAULTS:
        tok = get_encoding(name)
        ids = tok.encode(text)
        wait_ids(page, name, ids)
        n_bytes = len(text.encode())
        stats = panel(page, name).get_by_test_id("stats")
        expect(stats).to_contain_text(f"{len(text) / len(ids):.2f} chars/token")
        expect(stats).to_contain_text(f"{n_bytes / len(ids):.2f} bytes/token")
        expect(panel(page, name).get_by_test_id("token-count")).to_have_text(str(len(ids)))


# ----- compare ----------------------------------------------------------------------------


def test_add_and_remove_reference_panels(page: Page):
    text = type_text(page, "GPT-2 vs GPT-4:    spaces   and 12345 numbers")
    for name in ("gpt2", "p50k_base"):
        page.locator("#add-encoding").select_option(name)
        wait_ids(page, name, get_encoding(name).encode(text))
    names = page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)")
    assert names == [*DEFAULTS, "gpt2", "p50k_base"]
    panel(page, "gpt2").locator("button.remove").click()
    expect(panel(page, "gpt2")).to_have_count(0)
    expect(page.get_by_test_id("panel")).to_have_count(3)


def differing(bounds: list[int], base: list[int]) -> list[int]:
    """Tokens (by index) whose byte span is not exactly one token of the baseline."""
    spans = set(zip(base, base[1:], strict=False))
    return [i for i in range(len(bounds) - 1) if (bounds[i], bounds[i + 1]) not in spans]


def test_diff_mode_marks_exactly_the_differing_boundaries(page: Page):
    text = type_text(page, "Internationalization of 東京タワー costs 1234567 yen, doesn't it?")
    base, other = get_encoding("cl100k_base"), get_encoding("o200k_base")
    b_ids, o_ids = base.encode(text), other.encode(text)
    wait_ids(page, "cl100k_base", b_ids)
    wait_ids(page, "o200k_base", o_ids)
    page.locator("#opt-diff").check()
    bb, ob = byte_bounds(base, b_ids), byte_bounds(other, o_ids)
    want = differing(ob, bb)
    assert want, "this text must tokenize differently"
    marked = panel(page, "o200k_base").locator("[data-testid=token][data-diff]")
    expect(marked).to_have_count(len(want))
    got = (
        panel(page, "o200k_base")
        .get_by_test_id("token")
        .evaluate_all("els => els.map((e, i) => e.dataset.diff ? i : -1).filter(i => i >= 0)")
    )
    assert got == want
    assert panel(page, "cl100k_base").locator("[data-diff]").count() == 0  # the baseline
    # Making o200k the baseline marks cl100k's differing tokens instead.
    panel(page, "o200k_base").locator("button.baseline").click()
    want_cl = differing(bb, ob)
    expect(panel(page, "cl100k_base").locator("[data-testid=token][data-diff]")).to_have_count(len(want_cl))
    panel(page, "cl100k_base").locator("button.baseline").click()
    names = page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)")
    assert names == DEFAULTS


def test_diff_mode_on_a_large_text_looks_past_the_baselines_window(page: Page):
    # Over 10,000 tokens a panel shows a window of them (render.js). Here cl100k's (the baseline's)
    # first 10,000 tokens end earlier in the text than o200k's do: o200k's tokens past that point
    # were marked as differing though cl100k has the very same tokens there.
    text = (CORPORA / "pg_en_medium.txt").read_text(encoding="utf-8")[:60_000]
    base, other = get_encoding("cl100k_base"), get_encoding("o200k_base")
    b_ids, o_ids = base.encode(text), other.encode(text)
    bb, ob = byte_bounds(base, b_ids), byte_bounds(other, o_ids)
    assert len(b_ids) > 10_000 and len(o_ids) > 10_000 and bb[10_000] < ob[10_000]
    page.get_by_test_id("input").evaluate(
        "(el, t) => { el.value = t; el.dispatchEvent(new Event('input', {bubbles: true})); }", text
    )
    wait_ids(page, "cl100k_base", b_ids)
    wait_ids(page, "o200k_base", o_ids)
    page.locator("#opt-diff").check()
    shown = panel(page, "o200k_base").get_by_test_id("token")
    want = [i for i in differing(ob, bb) if i < 10_000]  # the window starts at the text's start
    expect(panel(page, "o200k_base").locator("[data-testid=token][data-diff]")).to_have_count(len(want))
    assert shown.evaluate_all("els => els.map((e, i) => e.dataset.diff ? i : -1).filter(i => i >= 0)") == want
    type_text(page, "")


def test_split_view_shows_the_regex_chunks(page: Page):
    text = type_text(page, "I'm   here: 12345 東京!!\n\n  next")
    page.locator("#opt-split").check()
    for name in DEFAULTS:
        chunks = get_encoding(name).split(text)
        shown = [visible(c, breaks=True) for c in chunks]
        expect(panel(page, name).get_by_test_id("chunk")).to_have_text(shown, use_inner_text=False)
    page.locator("#opt-split").uncheck()
    expect(panel(page, "cl100k_base").get_by_test_id("chunks")).to_be_hidden()


def test_split_view_of_a_long_text_says_how_many_chunks_it_shows(page: Page):
    # 25,000 chunks: the view stopped at 20,000 without a word, as if the text ended there
    text = type_text(page, "a " * 25_000)
    page.locator("#opt-split").check()
    chunks = panel(page, "cl100k_base").get_by_test_id("chunks")
    expect(chunks.get_by_test_id("chunks-more")).to_have_text(
        f"showing the first 20,000 of {len(get_encoding('cl100k_base').split(text)):,} chunks"
    )
    expect(chunks.get_by_test_id("chunk")).to_have_count(20_000)
    type_text(page, "short")
    expect(chunks.get_by_test_id("chunks-more")).to_have_count(0)
    page.locator("#opt-split").uncheck()


# ----- dark mode, screenshots -----------------------------------------------------------------


def test_dark_mode_and_screenshots(open_page, live_server):
    SCREENSHOTS.mkdir(exist_ok=True)
    text = "Tokenizers compare: naïve café, 東京タワー, emoji 🙂👩‍💻 and code: for (i = 0; i < 10; i++) {}"
    backgrounds = {}
    for scheme in ("light", "dark"):
        page = open_page(live_server, "/", color_scheme=scheme, viewport={"width": 1200, "height": 760})
        type_text(page, text)
        page.locator("#add-encoding").select_option("gpt2")
        for name in [*DEFAULTS, "gpt2"]:
            wait_ids(page, name, get_encoding(name).encode(text))
        page.locator("#opt-diff").check()
        backgrounds[scheme] = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        if os.environ.get("UPDATE_SCREENSHOTS") or not (SCREENSHOTS / f"playground-{scheme}.png").exists():
            page.screenshot(path=SCREENSHOTS / f"playground-{scheme}.png")
    luminance = {
        k: sum(int(x) for x in v[v.index("(") + 1 : v.index(")")].split(",")[:3])
        for k, v in backgrounds.items()
    }
    assert luminance["dark"] < 150 < luminance["light"], backgrounds


# ----- long text, keyboard, narrow screens ----------------------------------------------------


def wait_rendered(page: Page, name: str, n: int) -> None:
    page.wait_for_function(
        "([name, n]) => document.querySelector(`[data-encoding=${name}] .tokens`).dataset.rendered === String(n)",
        arg=[name, n],
        timeout=120_000,
        polling=100,
    )


def test_100kb_paste_renders_and_page_stays_responsive(page: Page):
    text = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")[:100_000]
    typed = " tail"
    want = {name: get_encoding(name).encode(text) for name in DEFAULTS}
    want_typed = {name: get_encoding(name).encode(text + typed) for name in DEFAULTS}
    # The longest main-thread task, as the browser reports it (PerformanceObserver 'longtask').
    # (A setInterval gap would also count time the OS gives no CPU to the renderer at all, which
    # on a shared 2-core CI box is seconds, with the main thread idle.)
    page.evaluate(
        """() => {
            window.__longtasks = [];
            window.__ltObserver = new PerformanceObserver((list) => {
                for (const e of list.getEntries()) window.__longtasks.push(e.duration);
            });
            window.__ltObserver.observe({ type: "longtask" });
        }"""
    )
    # A paste: set the value and fire `input`. (Playwright's fill() goes through Chrome's
    # insertText editing command, which alone takes 15 s for this text on a loaded 2-core box.)
    box = page.get_by_test_id("input")
    box.evaluate(
        "(el, text) => { el.value = text; el.dispatchEvent(new Event('input', {bubbles: true})); }", text
    )
    # Only cheap single-element checks while measuring: querying 50,000 spans from the test
    # would itself block the page's main thread.
    for name in DEFAULTS:
        wait_rendered(page, name, len(want[name]))
    box.press("Control+End")
    box.press_sequentially(typed)
    assert box.input_value() == text + typed
    for name in DEFAULTS:
        wait_rendered(page, name, len(want_typed[name]))
    tasks = page.evaluate("() => { window.__ltObserver.disconnect(); return window.__longtasks; }")
    for name in DEFAULTS:
        # The count can match an intermediate keystroke's (" tai" and " tail" are one token each):
        # wait for the final ids themselves, after the measurement.
        wait_ids(page, name, want_typed[name], timeout=120_000)
    longest = max(tasks, default=0)
    print(
        f"longest main-thread task during a 100 KB paste and typing: {longest:.0f} ms ({len(tasks)} over 50 ms)"
    )
    # Target 100 ms (bench/browser.py reports it); here only a bound that a shared, loaded
    # 2-core CI box also meets, which still catches rendering all 80,000 spans in one task.
    assert longest < 750, f"main thread blocked for {longest:.0f} ms"
    type_text(page, "short again")


def test_keyboard_navigation(page: Page):
    text = type_text(page, "one two three")
    ids = get_encoding("cl100k_base").encode(text)
    wait_ids(page, "cl100k_base", ids)
    panel(page, "cl100k_base").locator(".tokens").focus()
    focused = page.locator(":focus")
    expect(focused).to_have_attribute("data-id", str(ids[0]))
    expect(page.locator("#tooltip")).to_be_visible()
    page.keyboard.press("ArrowRight")
    expect(page.locator(":focus")).to_have_attribute("data-id", str(ids[1]))
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("merge-tree").get_by_test_id("merge-node").first).to_have_attribute(
        "data-id", str(ids[1])
    )
    page.locator("#merge-box summary").click()
    page.get_by_test_id("input").focus()


def test_narrow_screen_stacks_panels(page: Page):
    page.set_viewport_size({"width": 390, "height": 800})
    try:
        boxes = [p.bounding_box() for p in page.get_by_test_id("panel").all()]
        assert boxes[1]["y"] > boxes[0]["y"] + boxes[0]["height"] - 1, "panels stack vertically"
        assert all(b["x"] + b["width"] <= 390 + 1 for b in boxes), "nothing overflows the screen"
    finally:
        page.set_viewport_size({"width": 1280, "height": 720})

"""The playground's features, each driven through the real page in headless Chromium and checked
against CPython: token view options, tooltips and cross-panel highlight, per-panel stats, adding
and removing panels, diff mode, regex split view, decode box, merge explorer, loading a tokenizer
from disk, share links, dark mode, a 100 KB paste, keyboard use and a narrow screen.

Most tests share one booted page (Pyodide boots in seconds, not milliseconds) and put it back as
they found it; the few that need a fresh load (share link, dark mode) open their own.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import drop_files, expected_texts, panel, panel_texts, type_text, visible, wait_ids
from tests.helpers import CORPORA, ROOT
from tokenizer import Tokenizer, get_encoding

DEFAULTS = ["cl100k_base", "o200k_base"]
OPTIONS = {"opt-whitespace": True, "opt-ids": False, "opt-split": False, "opt-diff": False}
SCREENSHOTS = ROOT / "web" / "screenshots"


@pytest.fixture
def page(app_page: Page):
    """The shared page, reset after the test: default options, only the default panels."""
    yield app_page
    app_page.mouse.move(0, 0)
    for opt, default in OPTIONS.items():
        app_page.locator(f"#{opt}").set_checked(default)
    for name in app_page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)"):
        if name not in DEFAULTS:
            panel(app_page, name).locator("button.remove").click()
    expect(app_page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


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


# ----- decode, merges -----------------------------------------------------------------------


def test_decode_box(page: Page):
    tok = get_encoding("cl100k_base")
    ids = tok.encode("Decoded: 東京 🙂 ok")
    page.locator("#decode-box summary").click()
    page.get_by_test_id("decode-encoding").select_option("cl100k_base")
    page.get_by_test_id("decode-ids").fill("[" + ", ".join(map(str, ids)) + "]")
    page.get_by_test_id("decode-run").click()
    expect(page.get_by_test_id("decode-output")).to_have_text("Decoded: 東京 🙂 ok")
    tokens = page.get_by_test_id("decode-tokens").get_by_test_id("token")
    expect(tokens).to_have_count(len(ids))
    assert tokens.evaluate_all("els => els.map(e => e.textContent)") == expected_texts("cl100k_base", ids)
    # An id the vocabulary lacks is a clear error, not a crash.
    page.get_by_test_id("decode-ids").fill("9906 100256")
    page.get_by_test_id("decode-run").click()
    expect(page.get_by_test_id("decode-output")).to_contain_text("100256")
    expect(page.get_by_test_id("decode-output")).to_have_class("decode-output error")
    page.locator("#decode-box summary").click()


def test_decode_box_without_any_panel_says_to_add_one(page: Page):
    # The decode box decodes with one of the panels' tokenizers: with every panel removed it
    # showed Python's "KeyError: ''".
    for name in DEFAULTS:
        panel(page, name).locator("button.remove").click()
    expect(page.get_by_test_id("panel")).to_have_count(0)
    page.locator("#decode-box summary").click()
    page.get_by_test_id("decode-ids").fill("9906, 11")
    page.get_by_test_id("decode-run").click()
    out = page.get_by_test_id("decode-output")
    expect(out).to_have_text("no tokenizer to decode with: add a tokenizer panel first")
    expect(out).to_have_class("decode-output error")
    page.locator("#decode-box summary").click()
    for name in DEFAULTS:
        page.locator("#add-encoding").select_option(name)
        expect(panel(page, name)).to_have_attribute("data-state", "ok")


def expected_tree(tok: Tokenizer, token_id: int) -> dict:
    """tiktoken's way to recover a merge: BPE on the token's bytes using only lower ranks."""
    data = tok.decode_single_token_bytes(token_id)
    node: dict = {"id": token_id}
    if len(data) == 1:
        return node
    ranks = tok.mergeable_ranks
    parts = [bytes([b]) for b in data]
    while len(parts) > 2:
        best = min(
            (ranks[a + b], i)
            for i, (a, b) in enumerate(zip(parts, parts[1:], strict=False))
            if ranks.get(a + b, 1 << 62) < token_id
        )
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    node["children"] = [expected_tree(tok, ranks[parts[0]]), expected_tree(tok, ranks[parts[1]])]
    return node


def test_merge_tree_of_a_known_cl100k_token(page: Page):
    tok = get_encoding("cl100k_base")
    text = type_text(page, "Tokenization")
    ids = tok.encode(text)
    assert ids == [3404, 2065]  # "Token" "ization"
    wait_ids(page, "cl100k_base", ids)
    panel(page, "cl100k_base").get_by_test_id("token").nth(1).click()
    tree = page.get_by_test_id("merge-tree")
    expect(tree.get_by_test_id("merge-node").first).to_have_attribute("data-id", "2065")
    got = tree.evaluate(
        """root => {
            const walk = (n) => {
                const kids = n.querySelector(':scope > .kids');
                const out = {id: Number(n.dataset.id)};
                if (kids) out.children = [...kids.children].map(walk);
                return out;
            };
            return walk(root.querySelector('[data-testid=merge-node]'));
        }"""
    )
    want = expected_tree(tok, 2065)
    assert got == want

    def leaves(n):
        return [n["id"]] if "children" not in n else [x for c in n["children"] for x in leaves(c)]

    assert b"".join(tok.decode_single_token_bytes(i) for i in leaves(got)) == b"ization"
    expect(tree).to_contain_text("rank 2065")


def test_merge_list_search(page: Page):
    page.locator("#merge-box summary").click() if not page.locator("#merge-box").evaluate(
        "d => d.open"
    ) else None
    page.get_by_test_id("merge-encoding").select_option("cl100k_base")
    page.get_by_test_id("merge-query").fill("ization")
    tok = get_encoding("cl100k_base")
    want = sorted(r for t, r in tok.mergeable_ranks.items() if b"ization" in t and len(t) > 1)
    expect(page.get_by_test_id("merge-list")).to_have_attribute("data-total", str(len(want)))
    rows = page.get_by_test_id("merge-row")
    ranks = rows.evaluate_all("els => els.map(e => Number(e.dataset.rank))")
    assert ranks == want[:200]
    # Each row names the two tokens that merged, and they concatenate to the row's token.
    first = rows.first.text_content()
    left, right = (int(x) for x in first.split("←")[1].split("+"))
    pair = tok.decode_single_token_bytes(left) + tok.decode_single_token_bytes(right)
    assert tok.mergeable_ranks[pair] == want[0]
    # Without a query: the merges in rank order, a page at a time.
    page.get_by_test_id("merge-query").fill("")
    expect(page.get_by_test_id("merge-list")).to_have_attribute(
        "data-total", str(len(tok.mergeable_ranks) - 256)
    )
    expect(rows).to_have_count(200)
    page.get_by_test_id("merge-more").click()
    expect(rows).to_have_count(400)
    assert rows.evaluate_all("els => els.map(e => Number(e.dataset.rank))") == list(range(256, 656))
    page.locator("#merge-box summary").click()


# ----- loading tokenizers -------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Tokenizer, Path]:
    from tokenizer import train

    text = (CORPORA / "taylorswift.txt").read_text(encoding="utf-8")[:40_000]
    tok = train(text, 400, pattern="gpt4", special_tokens=["<|end|>"], name="swift400")
    folder = tmp_path_factory.mktemp("tok")
    tok.save(folder / "swift400")
    return tok, folder


def test_load_tiktoken_and_json_from_disk(page: Page, trained):
    tok, folder = trained
    page.get_by_test_id("load-files").set_input_files(
        [folder / "swift400.tiktoken", folder / "swift400.json"]
    )
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded swift400")
    text = type_text(page, "Taylor Swift's albums sold 50 million copies. 東京")
    wait_ids(page, "swift400", tok.encode(text))
    assert panel_texts(page, "swift400") == [
        t
        for t in (
            "<" + " ".join(f"{b:02X}" for b in tok.decode_single_token_bytes(i)) + ">"
            if not _valid(tok.decode_single_token_bytes(i))
            else visible(tok.decode_single_token_bytes(i).decode())
            for i in tok.encode(text)
        )
    ]


def _valid(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_drop_files_onto_the_page(page: Page, trained):
    tok, folder = trained
    files = [
        {"name": "swift400.tiktoken", "text": (folder / "swift400.tiktoken").read_text()},
        {"name": "swift400.json", "text": (folder / "swift400.json").read_text()},
    ]
    drop_files(page, files)
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS) + 1)
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded swift400")
    name = page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)")[-1]
    assert name.startswith("swift400")
    text = type_text(page, "Swift dropped a file")
    wait_ids(page, name, tok.encode(text))


def test_bad_files_give_a_clear_message(page: Page, tmp_path):
    bad = tmp_path / "broken.tiktoken"
    bad.write_text("aGVsbG8= 0\nthis is not base64 at all\n")
    page.get_by_test_id("load-files").set_input_files([bad])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_contain_text("broken.tiktoken:2")
    expect(msg).to_have_class("message error")
    short = tmp_path / "short.tiktoken"
    short.write_text("aGVsbG8= 0\n")
    page.get_by_test_id("load-files").set_input_files([short])
    expect(msg).to_contain_text("256")  # a byte-level BPE needs all 256 single bytes
    other = tmp_path / "notes.txt"
    other.write_text("hi")
    page.get_by_test_id("load-files").set_input_files([other])
    expect(msg).to_contain_text(
        "expected a .tiktoken, .json (ours or a Hugging Face tokenizer.json) or minbpe .model"
    )
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_two_files_of_one_kind_for_one_tokenizer_are_refused(page: Page, trained):
    # a.json and a.JSON (or two folders' a.json) in one drop: the later one was loaded, silently
    _, folder = trained
    text = (folder / "swift400.json").read_text()
    drop_files(page, [{"name": "swift400.json", "text": text}, {"name": "swift400.JSON", "text": text}])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_contain_text(
        "swift400.json and swift400.JSON: two .json files for swift400; load them one at a time"
    )
    expect(msg).to_have_class("message error")
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_a_refused_file_does_not_stop_the_others(page: Page, trained):
    # The first refusal ended the loop: "after.json" was never loaded, and neither it nor
    # "before.json" (loaded, with a panel) was named in the message.
    tok, folder = trained
    meta = json.loads((folder / "swift400.json").read_text())
    files = [{"name": "bad.json", "text": "{nope"}]
    for name in ("before", "after"):
        files.insert(
            0 if name == "before" else 2, {"name": f"{name}.json", "text": json.dumps({**meta, "name": name})}
        )
    drop_files(page, files)
    msg = page.get_by_test_id("load-message")
    expect(msg).to_have_text(
        re.compile(
            r"^bad: bad\.json:1: invalid JSON: .*; loaded before \(401 ids\); loaded after \(401 ids\)$"
        )
    )
    expect(msg).to_have_class("message error")
    wait_ids(page, "after", tok.encode(type_text(page, "after the refusal")))


def test_a_file_that_is_not_utf8_is_refused_as_on_the_command_line(page: Page, tmp_path):
    """file.text() read the Latin-1 é as U+FFFD, and the .model loaded with a special token
    'caf\ufffd'; the command line refuses it. A byte-order mark reaches the library too."""
    from tokenizer.loading import load_any

    latin1 = tmp_path / "latin1.model"
    latin1.write_bytes(b"minbpe v1\n\n1\ncaf\xe9 256\n")
    bom = tmp_path / "bom.model"
    bom.write_bytes(b"\xef\xbb\xbfminbpe v1\n\n0\n")
    msg = page.get_by_test_id("load-message")
    for path in (latin1, bom):
        with pytest.raises(ValueError) as cli:
            load_any(str(path))
        assert path.name in str(cli.value)
        page.get_by_test_id("load-files").set_input_files([path])
        expect(msg).to_have_class("message error")
        expect(msg).to_contain_text(str(cli.value).replace(str(tmp_path) + "/", ""))
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_an_error_in_the_tiktoken_of_a_pair_names_the_tiktoken(page: Page, trained, tmp_path):
    # The page sent the pair with one file name, the .json's: a damaged .tiktoken was reported
    # as "swift400.json:401: expected 'BASE64 RANK'".
    _, folder = trained
    ranks = (folder / "swift400.tiktoken").read_text(encoding="ascii")
    (tmp_path / "swift400.tiktoken").write_text(ranks.rsplit(" ", 1)[0], encoding="ascii")
    page.get_by_test_id("load-files").set_input_files(
        [tmp_path / "swift400.tiktoken", folder / "swift400.json"]
    )
    msg = page.get_by_test_id("load-message")
    expect(msg).to_have_class("message error")
    expect(msg).to_contain_text(re.compile(r"swift400\.tiktoken:\d+: expected 'BASE64 RANK'"))
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_an_empty_file_is_refused_as_empty(page: Page):
    # An empty file's text "" was sent as no file: "ValueError: no file given".
    msg = page.get_by_test_id("load-message")
    for name, says in [
        ("void.tiktoken", "void.tiktoken: no tokens in file"),
        ("void.json", "void.json:1: invalid JSON"),
    ]:
        drop_files(page, [{"name": name, "text": ""}])
        expect(msg).to_contain_text(says)
        expect(msg).to_have_class("message error")
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_the_librarys_refusals_read_without_pythons_class_names(page: Page):
    # They read "nope: tokenizer.validate.TokenizerFileError: nope.json:1: invalid JSON: ..." and
    # "ValueError: unknown token id ...": the library's message is the whole message.
    drop_files(page, [{"name": "nope.json", "text": "{nope"}])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_have_text(re.compile(r"^nope: nope\.json:1: invalid JSON: "))
    page.locator("#decode-box summary").click()
    page.get_by_test_id("decode-encoding").select_option("cl100k_base")
    page.get_by_test_id("decode-ids").fill("100256")
    page.get_by_test_id("decode-run").click()
    expect(page.get_by_test_id("decode-output")).to_have_text(re.compile(r"^unknown token id 100256: "))
    page.locator("#decode-box summary").click()


def test_load_hugging_face_tokenizer_json(page: Page, trained, tmp_path):
    hf_export = pytest.importorskip("tokenizer.hf_export")
    tok, _ = trained
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(hf_export.to_hf_json(tok)))
    page.get_by_test_id("load-files").set_input_files([path])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded tokenizer")
    text = type_text(page, "Hugging Face format, same ids: Taylor's 1989 tour")
    wait_ids(page, "tokenizer", tok.encode(text))


def test_our_json_whose_metadata_names_a_model_is_read_as_ours(page: Page, trained, tmp_path):
    # The page guessed a Hugging Face file from a '"model":' in the first 4 KB of the text, and
    # refused this one ("model None is not supported") where the library loads it.
    tok, folder = trained
    meta = json.loads((folder / "swift400.json").read_text())
    meta["name"] = "swiftmeta"
    meta["metadata"] = {"model": "my-llm"}
    path = tmp_path / "swiftmeta.json"
    path.write_text(json.dumps(meta), encoding="utf-8")
    page.get_by_test_id("load-files").set_input_files([path])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded swiftmeta")
    text = type_text(page, "a model in the metadata: Taylor's 1989 tour")
    wait_ids(page, "swiftmeta", Tokenizer.load(path).encode(text))


def test_a_lone_tiktoken_says_which_split_pattern_it_gets(page: Page, trained, tmp_path):
    # A .tiktoken holds no pattern: alone it is split with gpt4's, and tiktoken's own
    # r50k_base.tiktoken (gpt2's pattern) gave other ids than r50k_base without a word.
    tok, folder = trained
    path = tmp_path / "ranks.tiktoken"
    path.write_text((folder / "swift400.tiktoken").read_text())
    page.get_by_test_id("load-files").set_input_files([path])
    expect(page.get_by_test_id("load-message")).to_have_text(
        "loaded ranks (400 ids) with the gpt4 split pattern: a .tiktoken file holds no pattern "
        "(or special tokens); load it together with its .json for its own"
    )


def test_load_minbpe_model(page: Page, trained, tmp_path):
    """A minbpe .model (from the file picker, then dropped) gives the library's ids; with its
    .tiktoken beside it the page says to load it alone."""
    from tokenizer.formats import minbpe_text

    tok, folder = trained
    path = tmp_path / "swiftmodel.model"
    path.write_text(minbpe_text(tok), encoding="utf-8")
    loaded = Tokenizer.load(path)
    page.get_by_test_id("load-files").set_input_files([path])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded swiftmodel")
    text = type_text(page, "minbpe's format, same ids: Taylor's 1989 tour 東京")
    assert loaded.encode(text) == tok.encode(text)
    wait_ids(page, "swiftmodel", loaded.encode(text))
    drop_files(
        page,
        [
            {"name": "swiftmodel.model", "text": path.read_text()},
            {"name": "swiftmodel.tiktoken", "text": "x"},
        ],
    )
    expect(page.get_by_test_id("load-message")).to_contain_text("load swiftmodel.model on its own")


# ----- share link, dark mode, screenshots -----------------------------------------------------


def test_share_link_round_trips(page: Page, open_page, live_server):
    text = type_text(page, "Share me: 東京 🙂 #hash & more?")
    page.locator("#add-encoding").select_option("gpt2")
    wait_ids(page, "gpt2", get_encoding("gpt2").encode(text))
    page.get_by_test_id("share").click()
    url = page.evaluate("() => location.href")
    assert "#" in url and url.startswith(live_server)
    other = open_page(live_server, url[len(live_server) :])
    expect(other.get_by_test_id("input")).to_have_value(text)
    names = other.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)")
    assert names == [*DEFAULTS, "gpt2"]
    for name in names:
        wait_ids(other, name, get_encoding(name).encode(text))


def test_a_loaded_tokenizer_named_like_an_object_key_is_not_shared(page: Page, trained):
    # "toString" in {...} is true: the link named the loaded tokenizer as a reference encoding.
    tok, folder = trained
    meta = json.loads((folder / "swift400.json").read_text())
    meta["name"] = "toString"
    drop_files(page, [{"name": "toString.json", "text": json.dumps(meta)}])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded toString")
    wait_ids(page, "toString", tok.encode(type_text(page, "shared, or not")))
    page.get_by_test_id("share").click()
    assert page.evaluate("() => location.hash").startswith("#enc=cl100k_base%2Co200k_base&text=")


def test_a_share_link_with_unknown_names_or_a_damaged_text_says_so(open_page, live_server):
    # Both were silent: the unknown names dropped (the default panels shown instead), the text
    # cut inside an escape shown with U+FFFD as if it had been shared so ("t%65xt" is "text").
    other = open_page(live_server, "/#enc=gpt2,cl100k_ba,%3Cb%3Ex%3C%2Fb%3E&t%65xt=hello%E6%9D")
    msg = other.get_by_test_id("load-message")
    expect(msg).to_contain_text(
        'this share link names "cl100k_ba", "<b>x</b>", which this page has no encoding of'
    )
    expect(msg).to_contain_text("text is damaged")
    expect(msg).to_have_class("message error")
    assert other.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)") == ["gpt2"]
    good = open_page(live_server, "/#enc=gpt2&text=caf%C3%A9+100%25")
    expect(good.get_by_test_id("input")).to_have_value("café 100%")
    expect(good.get_by_test_id("load-message")).to_be_hidden()


def test_a_share_link_opened_in_a_tab_showing_the_page_shows_its_view(open_page, live_server):
    # Only the fragment changes, so no page loads: the tab kept its text and panels under the
    # link's address.
    other = open_page(live_server, "/#enc=cl100k_base,o200k_base&text=hello")
    other.goto(live_server + "/#enc=gpt2,nope&text=shared%20%E6%9D%B1")
    expect(other.get_by_test_id("input")).to_have_value("shared 東")
    expect(other.get_by_test_id("panel")).to_have_count(1)
    wait_ids(other, "gpt2", get_encoding("gpt2").encode("shared 東"))
    expect(other.get_by_test_id("load-message")).to_contain_text('names "nope"')
    assert other.evaluate("() => location.hash") == "#enc=gpt2&text=shared+%E6%9D%B1"


def test_a_good_share_link_opened_after_a_bad_one_takes_the_bad_ones_message_away(open_page, live_server):
    # The message about the first link ('names "nope"') stayed under the second, good link, as if
    # that one named an encoding the page lacks.
    other = open_page(live_server, "/#enc=gpt2,nope&text=first")
    msg = other.get_by_test_id("load-message")
    expect(msg).to_contain_text('names "nope"')
    other.goto(live_server + "/#enc=gpt2&text=second")
    expect(other.get_by_test_id("input")).to_have_value("second")
    expect(msg).to_be_hidden()
    other.goto(live_server + "/#enc=gpt2&text=third%E6%9D")  # a bad one again says so
    expect(msg).to_contain_text("text is damaged")
    # A message about files stays: a good link says nothing about them.
    drop_files(other, [{"name": "void.tiktoken", "text": ""}])
    expect(msg).to_contain_text("void.tiktoken: no tokens in file")
    other.goto(live_server + "/#enc=gpt2&text=fourth")
    expect(other.get_by_test_id("input")).to_have_value("fourth")
    expect(msg).to_contain_text("void.tiktoken: no tokens in file")


def test_a_share_link_is_read_from_its_hashchange_not_from_the_address_bar(open_page, live_server):
    # The live link's timer can write the old view into the address bar between a fragment
    # navigation and its hashchange event; the handler read the bar and showed the old text.
    other = open_page(live_server, "/#enc=cl100k_base&text=old")
    other.evaluate(
        """(origin) => {
            const now = location.href;  // the old view, as the timer writes it
            window.dispatchEvent(new HashChangeEvent("hashchange", {oldURL: now, newURL: origin + "/#enc=gpt2&text=new%20one"}));
        }""",
        live_server,
    )
    expect(other.get_by_test_id("input")).to_have_value("new one")
    wait_ids(other, "gpt2", get_encoding("gpt2").encode("new one"))
    assert other.evaluate("() => location.hash") == "#enc=gpt2&text=new+one"


def test_a_text_too_long_for_a_link_is_not_shared_as_one(page: Page):
    # 300,000 CJK characters make a 2.7 MB link: the page said "share link copied" and put it in
    # the address bar, but Chromium opens no URL over 2 MiB (net::ERR_ABORTED, a blank tab).
    text = "東京" * 150_000
    page.get_by_test_id("input").evaluate(
        "(el, t) => { el.value = t; el.dispatchEvent(new Event('input', {bubbles: true})); }", text
    )
    n = str(len(get_encoding("cl100k_base").encode(text)))
    expect(panel(page, "cl100k_base").get_by_test_id("token-count")).to_have_text(n, timeout=120_000)
    page.get_by_test_id("share").click()
    msg = page.get_by_test_id("load-message")
    expect(msg).to_contain_text("this text is too long for a share link")
    expect(msg).to_have_class("message error")
    url = page.evaluate("() => location.href")
    assert "text=" not in url and len(url) < 100
    type_text(page, "short again")
    page.get_by_test_id("share").click()
    expect(msg).not_to_have_class(re.compile("error"))
    assert "text=short+again" in page.evaluate("() => location.href")


def test_the_address_bar_never_keeps_an_older_text_when_the_text_grows_too_long_for_a_live_link(
    open_page, live_server
):
    # The live link is written for texts up to 20,000 characters: past that, the address bar
    # kept the last short text's link, which copied from the bar shared "short" for the long text.
    other = open_page(live_server, "/#enc=cl100k_base&text=opened")
    long_text = "x " * 15_000
    long_link = open_page(live_server, "/#enc=cl100k_base&text=" + long_text.replace(" ", "+"))
    expect(long_link.get_by_test_id("input")).to_have_value(long_text)
    long_link.wait_for_timeout(600)  # the live link's delay: an opened long link stays as it is
    assert long_link.evaluate("() => location.hash").startswith("#enc=cl100k_base&text=x+x")
    type_text(other, "short")
    expect(other).to_have_url(re.compile(r"#enc=cl100k_base&text=short$"))
    other.get_by_test_id("input").evaluate(
        "(el, t) => { el.value = t; el.dispatchEvent(new Event('input', {bubbles: true})); }", long_text
    )
    expect(other).to_have_url(live_server + "/")
    other.get_by_test_id("share").click()  # the button still writes the whole link
    expect(other).to_have_url(re.compile(r"#enc=cl100k_base&text=x\+x"))


def test_only_the_share_button_writes_a_long_texts_link_into_the_address_bar(open_page, live_server):
    # Adding or removing a panel, or opening a link in a showing tab, wrote the whole link of a
    # text too long for the live link: history.replaceState of a 1.5 MB address is a 140-1,000 ms
    # task in Chromium (a panel added 159 ms, removed 251 ms, a link opened 1,061 ms), and it put
    # back the link that editing the text had taken out of the bar.
    page = open_page(live_server, "/")
    page.evaluate(
        """() => {
            window.__written = [];
            const replace = history.replaceState.bind(history);
            history.replaceState = (s, t, url) => { window.__written.push(String(url).length); replace(s, t, url); };
        }"""
    )
    long_text = "x " * 15_000  # 30,000 characters: past the live link's 20,000
    page.get_by_test_id("input").evaluate(
        "(el, t) => { el.value = t; el.dispatchEvent(new Event('input', {bubbles: true})); }", long_text
    )
    page.locator("#add-encoding").select_option("gpt2")
    wait_ids(page, "gpt2", get_encoding("gpt2").encode(long_text))
    panel(page, "gpt2").locator("button.remove").click()
    expect(page.get_by_test_id("panel")).to_have_count(2)
    expect(page).to_have_url(live_server + "/")
    other = "y " * 15_000
    page.goto(live_server + "/#enc=gpt2,nope&text=" + other.replace(" ", "+"))
    expect(page.get_by_test_id("input")).to_have_value(other)
    expect(page.get_by_test_id("panel")).to_have_count(1)
    expect(page.get_by_test_id("load-message")).to_contain_text('names "nope"')
    page.wait_for_timeout(600)  # the live link's delay
    written = page.evaluate("() => window.__written")
    assert max(written, default=0) < 1000, f"the page wrote addresses of {written} characters"
    page.get_by_test_id("share").click()  # the button writes the whole link
    expect(page).to_have_url(re.compile(r"#enc=gpt2&text=y\+y"))


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

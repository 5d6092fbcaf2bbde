"""The page in real headless Chromium: boots Pyodide offline, tokenizes what the user types
exactly as CPython does, and shows split-character tokens as bytes, never U+FFFD.

Every page here is guarded (tests/browser/pages.Guard): a request leaving the test server, a console error
or an uncaught exception fails the test.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import (
    BOOT_TIMEOUT_MS,
    MULTILINGUAL,
    TYPED,
    expected_texts,
    panel,
    panel_texts,
    type_text,
    wait_ids,
)
from tokenizer import get_encoding


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_typed_multilingual_text_matches_cpython(app_page: Page, encoding: str):
    text = type_text(app_page, MULTILINGUAL, TYPED)
    want = get_encoding(encoding).encode(text)
    wait_ids(app_page, encoding, want)
    expect(panel(app_page, encoding).get_by_test_id("token-count")).to_have_text(str(len(want)))
    assert panel_texts(app_page, encoding) == expected_texts(encoding, want)


def test_both_default_panels_side_by_side(app_page: Page):
    encs = app_page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)")
    assert encs[:2] == ["cl100k_base", "o200k_base"]


def test_split_character_tokens_show_bytes_not_replacement(app_page: Page):
    # In cl100k_base " 東京" is <20 E6 9D> <B1> 京: the first two tokens are half a character each.
    text = type_text(app_page, "Tokyo is 東京 🫠 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢")
    for encoding in ("cl100k_base", "o200k_base"):
        want = get_encoding(encoding).encode(text)
        wait_ids(app_page, encoding, want)
        texts = panel_texts(app_page, encoding)
        assert texts == expected_texts(encoding, want)
        assert not any("\ufffd" in t for t in texts)
    cl = panel_texts(app_page, "cl100k_base")
    assert "<20 E6 9D>" in cl and "<B1>" in cl
    # The partial tokens are grouped under the character they form together.
    group = panel(app_page, "cl100k_base").locator(".group").first
    expect(group).to_have_attribute("data-char", "·東")


def test_input_disabled_until_ready_and_status(open_page, live_server):
    page = open_page(live_server, wait_ready=False)
    # Right after navigation the worker is still booting: the box must not take input yet.
    status = page.get_by_test_id("status")
    if status.text_content() != "ready":
        expect(page.get_by_test_id("input")).to_be_disabled()
    expect(status).to_have_text("ready", timeout=BOOT_TIMEOUT_MS)
    expect(page.get_by_test_id("input")).to_be_enabled()
    # The initial sample text is tokenized without any typing.
    text = page.get_by_test_id("input").input_value()
    wait_ids(page, "o200k_base", get_encoding("o200k_base").encode(text))


def test_works_as_plain_static_files(open_page, static_server):
    """`python -m http.server -d web/dist` serves a fully working page (no server.py needed)."""
    page = open_page(static_server)
    text = type_text(page, "static files: 東京 🙂 ok")
    for encoding in ("cl100k_base", "o200k_base"):
        wait_ids(page, encoding, get_encoding(encoding).encode(text))


def test_stale_replies_never_overwrite_newer_text(app_page: Page):
    """Typing fast: whatever order replies arrive in, the panels end on the last text."""
    box = app_page.get_by_test_id("input")
    box.fill("")
    box.press_sequentially("abc 東京 def 🙂 xyz", delay=0)
    text = box.input_value()
    for encoding in ("cl100k_base", "o200k_base"):
        wait_ids(app_page, encoding, get_encoding(encoding).encode(text))


def test_incremental_edits_keep_tokens_exact(app_page: Page):
    """The view re-renders only the lines between the common prefix and suffix of old and new
    ids; after any sequence of edits the spans must still be exactly CPython's tokens."""
    import random

    rng = random.Random(4)
    lines = [f"line {i}: naïve 東京 🙂 value={i * 37}\n" for i in range(40)]
    text = "".join(lines)
    box = app_page.get_by_test_id("input")
    box.fill(text)
    edits = [
        lambda t, k: t[:k] + "\n" + t[k:],  # split a line
        lambda t, k: t[:k] + t[k + 1 :],  # delete one character (maybe a newline)
        lambda t, k: t[:k] + "INSERTED 🇯🇵 text\nand more\n" + t[k:],
        lambda t, k: t[:k] + t[k + 40 :],  # delete a run across lines
        lambda t, k: "prefix " + t,
        lambda t, k: t + "\ntrailing",
    ]
    for step in range(14):
        k = rng.randrange(len(text))
        text = edits[step % len(edits)](text, k)
        box.fill(text)
        if step % 3 == 2 or step == 13:  # sometimes wait, sometimes edit while rendering
            for encoding in ("cl100k_base", "o200k_base"):
                wait_ids(app_page, encoding, get_encoding(encoding).encode(text))


def test_boots_from_the_pyodide_snapshot(app_page: Page, web_dist):
    """build_wasm.py ships a memory snapshot (when node is available); the worker must use it."""
    import json

    manifest = json.loads((web_dist / "manifest.json").read_text())
    if not manifest.get("snapshot"):
        pytest.skip("no snapshot in this build (node missing or BPE_NO_SNAPSHOT set)")
    stages = app_page.evaluate("() => window.__bpe.metrics.bootStages.map(s => s[0])")
    assert "snapshot" in stages and "snapshot-failed" not in stages, stages


def test_falls_back_to_a_plain_boot_without_a_usable_snapshot(open_page, web_dist, tmp_path):
    """A broken snapshot file costs time, never the page: the worker boots Pyodide normally."""
    import json
    import shutil

    from conftest import _static

    dist = tmp_path / "dist"
    shutil.copytree(web_dist, dist)
    manifest = json.loads((dist / "manifest.json").read_text())
    bad = dist / "pyodide" / "snapshot-broken.bin"
    bad.write_bytes(b"\0not a snapshot" * 1000)
    manifest["snapshot"] = {"file": "pyodide/snapshot-broken.bin", "wheel": manifest["wheel"]}
    (dist / "manifest.json").write_text(json.dumps(manifest))
    server = _static(dist)
    origin = next(server)
    try:
        page = open_page(origin)
        text = type_text(page, "fallback boot: 東京")
        wait_ids(page, "cl100k_base", get_encoding("cl100k_base").encode(text))
        stages = page.evaluate("() => window.__bpe.metrics.bootStages.map(s => s[0])")
        assert "snapshot-failed" in stages
    finally:
        server.close()


def test_edits_inside_one_long_line_patch_it_in_place(app_page: Page):
    """A long line without newlines is patched, not rebuilt: far-away spans stay the same
    elements, and after any edit the spans are still exactly CPython's tokens."""
    import random

    rng = random.Random(7)
    words = ["alpha", "東京", "beta", "🙂", "gamma", "naïve", "δέλτα", "1234", "—", "x"]
    text = " ".join(rng.choice(words) for _ in range(1500))
    box = app_page.get_by_test_id("input")
    box.fill(text)
    for encoding in ("cl100k_base", "o200k_base"):
        wait_ids(app_page, encoding, get_encoding(encoding).encode(text))
    app_page.evaluate(
        "() => { for (const p of document.querySelectorAll('[data-testid=panel]'))"
        " p.querySelector('[data-testid=token]').__marker = true; }"
    )
    inserts = ["東", "京", "🙂", " ", "ab", "\u0301", "é", "12"]
    for step in range(12):
        k = rng.randrange(100, len(text))
        if step % 3 == 2:
            text = text[:k] + text[k + rng.randrange(1, 6) :]
        else:
            text = text[:k] + rng.choice(inserts) + text[k:]
        box.fill(text)
        if step % 4 == 3 or step == 11:
            for encoding in ("cl100k_base", "o200k_base"):
                wait_ids(app_page, encoding, get_encoding(encoding).encode(text))
    kept = app_page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=panel]')].map("
        "p => !!p.querySelector('[data-testid=token]').__marker)"
    )
    assert all(kept), "the first token's element was rebuilt: the line was not patched in place"
    for encoding in ("cl100k_base", "o200k_base"):
        assert panel_texts(app_page, encoding) == expected_texts(
            encoding, get_encoding(encoding).encode(text)
        )


DECODE_REPLY = """async (ids) => {
    try {
        const r = await window.__bpe.rpc("decode", {name: "cl100k_base", ids});
        return {text: r.text, ids: Array.from(r.ids)};
    } catch (e) {
        return {error: e.message};
    }
}"""


def test_the_workers_decode_refuses_ids_it_cannot_pass_on_exactly(app_page: Page):
    """The protocol's decode {id, op, name, ids} with a plain array: Int32Array.from wrapped
    2**32 + 15339 to 15339 ("hello"), read "x" and 2**53 as 0 ("!") and 1.5 as 1, and named
    2**31 as -2147483648; each is now refused, naming the id as it was sent."""
    enc = get_encoding("cl100k_base")
    assert app_page.evaluate(DECODE_REPLY, [15339, 1917]) == {"text": "hello world", "ids": [15339, 1917]}
    for ids, says in [
        ([2**32 + 15339], "unknown token id 4294982635"),
        ([2**31], "unknown token id 2147483648"),
        ([9906, "x"], 'ids[1], "x", is not a token id'),
        ([1.5], "ids[0], 1.5, is not a token id"),
        ([2**53], "ids[0], 9007199254740992, is not a token id"),
        ([None], "ids[0], null, is not a token id"),
        ("9906", "ids must be an array of token ids"),
    ]:
        reply = app_page.evaluate(DECODE_REPLY, ids)
        assert "error" in reply and says in reply["error"], (ids, reply, enc.n_vocab)

"""The Train panel in real headless Chromium against the real server and the built page.

Upload a corpus, train, watch the progress bar move, and check that the new panel tokenizes
exactly like `Tokenizer.load` of the files the server saved. Also: bad input is shown, cancel
works and leaves nothing, and served as plain static files the panel says how to start the
server instead of failing.

Pages are guarded like conftest's (no request may leave the server, no page errors, no
console errors); the only console errors allowed are the browser's own "Failed to load
resource" lines for the HTTP errors a test provokes on purpose.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Page, expect

from tests.browser.pages import BOOT_TIMEOUT_MS, Guard
from tests.helpers import CORPORA
from tokenizer import Tokenizer

SMALL = CORPORA / "taylorswift.txt"
BIG = CORPORA / "pg_en_medium.txt"
TEXT = (
    "We are never, ever, ever getting back together. Shake it off!\n"
    "Naïve café, 東京タワー, Привет 🙂👍🏽 and numbers 1234567\n"
)
NAME = "swift-browser"


@pytest.fixture
def guarded(browser):
    """Factory: a fresh, guarded, booted page; allowed_http lists statuses tests provoke."""
    opened: list[tuple[object, Guard, set[int]]] = []

    def _open(origin: str, allowed_http: set[int] = frozenset()) -> Page:
        context = browser.new_context()
        page = context.new_page()
        guard = Guard(origin)
        guard.attach(context, page)
        opened.append((context, guard, set(allowed_http)))
        page.goto(origin + "/")
        try:
            expect(page.get_by_test_id("status")).to_have_text("ready", timeout=BOOT_TIMEOUT_MS)
        except AssertionError:
            detail = page.locator("#boot-detail").text_content()
            raise AssertionError(f"the page did not boot: {detail!r}; {guard.errors}") from None
        return page

    yield _open
    for context, guard, allowed in opened:
        context.close()
        statuses = "|".join(str(s) for s in sorted(allowed)) or "-1"
        expected = re.compile(
            rf"console\.error: Failed to load resource: the server responded with a status of ({statuses})\b"
        )
        guard.errors[:] = [e for e in guard.errors if not expected.match(e)]
        guard.check()


def record_progress(page: Page) -> None:
    """Every value the progress bar takes, from now on, in window.__trainProgress."""
    page.evaluate(
        """() => {
            const bar = document.querySelector('[data-testid=train-progress]');
            window.__trainProgress = [];
            new MutationObserver(() => window.__trainProgress.push(Number(bar.value)))
                .observe(bar, { attributes: true, attributeFilter: ['value'] });
        }"""
    )


def panel_ids(page: Page, name: str, want: list[int], timeout: float = 60_000) -> list[int]:
    """The ids the panel shows once it shows as many as `want` (rendering is async)."""
    page.wait_for_function(
        """([name, n]) => {
            const p = document.querySelector(`[data-testid=panel][data-encoding="${name}"]`);
            return !!p && p.querySelectorAll('[data-testid=token]').length === n;
        }""",
        arg=[name, len(want)],
        timeout=timeout,
        polling=100,
    )
    return (
        page.locator(f'[data-testid=panel][data-encoding="{name}"]')
        .get_by_test_id("token")
        .evaluate_all("els => els.map(e => Number(e.dataset.id))")
    )


def test_train_in_the_page(guarded, live_server, tmp_path):
    page = guarded(live_server, allowed_http={400})
    start = page.get_by_test_id("train-start")
    expect(start).to_be_enabled(timeout=30_000)
    expect(page.get_by_test_id("train-error")).to_be_hidden()

    # Dropping a file on the zone adds it as a corpus (and the page's own loader, which takes
    # .tiktoken/.json dropped anywhere, leaves it alone).
    drop_data = page.evaluate_handle(
        """() => { const dt = new DataTransfer();
                   dt.items.add(new File(['some dropped text'], 'dropped.txt', { type: 'text/plain' }));
                   return dt; }"""
    )
    page.get_by_test_id("train-drop").dispatch_event("drop", {"dataTransfer": drop_data})
    expect(page.get_by_test_id("train-file-item")).to_have_text(["dropped.txt (17 B)×"])
    expect(page.get_by_test_id("load-message")).to_be_hidden()
    page.get_by_test_id("train-file-item").get_by_role("button").click()
    expect(page.get_by_test_id("train-file-item")).to_have_count(0)

    # Bad input: caught in the page (vocab) and by the server (regex), shown, nothing starts.
    page.get_by_test_id("train-file").set_input_files(str(SMALL))
    expect(page.get_by_test_id("train-file-item")).to_have_count(1)
    page.get_by_test_id("train-vocab").fill("100")
    start.click()
    expect(page.get_by_test_id("train-error")).to_contain_text("vocab size must be a whole number from 257")
    page.get_by_test_id("train-vocab").fill("1000")
    page.get_by_test_id("train-pattern").select_option("custom")
    page.get_by_test_id("train-regex").fill("(unclosed")
    start.click()
    expect(page.get_by_test_id("train-error")).to_contain_text("invalid regex")
    expect(start).to_be_enabled()

    # The real thing: taylorswift.txt, vocab 1000, GPT-4 pattern.
    page.get_by_test_id("train-pattern").select_option("gpt4")
    page.get_by_test_id("train-name").fill(NAME)
    record_progress(page)
    start.click()
    expect(page.get_by_test_id("train-cancel")).to_be_enabled()
    expect(page.get_by_test_id("train-status")).to_contain_text("added to the comparison", timeout=120_000)
    expect(page.get_by_test_id("train-error")).to_be_hidden()
    values = page.evaluate("window.__trainProgress")
    assert values == sorted(values), values  # the bar only moves forward
    assert values[-1] == 100
    assert any(0 < v < 100 for v in values), values  # it moved through the job, not 0 -> 100
    expect(page.get_by_test_id("train-cancel")).to_be_disabled()

    # The saved files, as the server stores them.
    stem = tmp_path / NAME
    for ext in ("tiktoken", "json"):
        resp = requests.get(f"{live_server}/api/tokenizers/{NAME}.{ext}", timeout=30)
        assert resp.status_code == 200
        Path(f"{stem}.{ext}").write_bytes(resp.content)
    saved = Tokenizer.load(stem)
    assert json.loads(Path(f"{stem}.json").read_text())["vocab_size"] == 1000

    expect(page.locator(f'[data-testid=panel][data-encoding="{NAME}"]')).to_be_visible()
    page.get_by_test_id("input").fill(TEXT)
    want = saved.encode(TEXT)
    assert panel_ids(page, NAME, want) == want
    lyrics = SMALL.read_text(encoding="utf-8")[2000:3500]
    page.get_by_test_id("input").fill(lyrics)
    want = saved.encode(lyrics)
    assert panel_ids(page, NAME, want) == want
    expect(page.locator(f'[data-testid=train-saved-item][data-name="{NAME}"]')).to_have_count(1)

    # Cancel a long job (8 MB, vocab 30000): it stops, and nothing is saved.
    page.get_by_test_id("train-file-item").get_by_role("button").click()
    page.get_by_test_id("train-file").set_input_files(str(BIG))
    page.get_by_test_id("train-vocab").fill("30000")
    page.get_by_test_id("train-name").fill("never-saved")
    start.click()
    expect(page.get_by_test_id("train-status")).to_contain_text(
        re.compile("counting|merging"), timeout=60_000
    )
    page.get_by_test_id("train-cancel").click()
    expect(page.get_by_test_id("train-status")).to_have_text("cancelled; nothing was saved", timeout=30_000)
    expect(start).to_be_enabled()
    listing = requests.get(f"{live_server}/api/tokenizers", timeout=30).json()
    assert "never-saved" not in [t["name"] for t in listing["trained"]]
    assert NAME in [t["name"] for t in listing["trained"]]


def test_a_big_paste_into_the_training_text_joins_the_corpus_as_a_file(guarded, live_server):
    # Pasted whole into the textarea, 20 MB made every later keystroke in the page's input box a
    # 415-825 ms task (the browser laid the training box out again). A paste over 128 K
    # characters now joins the corpus files, its line breaks normalized as the box does.
    page = guarded(live_server)
    expect(page.get_by_test_id("train-start")).to_be_enabled(timeout=30_000)
    line = "Naïve café, 東京タワー, and shake it off, shake it off!"
    pasted = f"{line}\r\n" * 4000
    sent = pasted.replace("\r\n", "\n").encode("utf-8")
    assert len(pasted) > 1 << 17
    box = page.get_by_test_id("train-text")
    box.evaluate(
        """(el, text) => { const dt = new DataTransfer(); dt.setData('text/plain', text);
               el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true})); }""",
        pasted,
    )
    expect(page.get_by_test_id("train-file-item")).to_have_text([f"pasted.txt ({len(sent) / 1024:.0f} KB)×"])
    expect(box).to_have_value("")
    page.get_by_test_id("train-vocab").fill("300")
    page.get_by_test_id("train-name").fill("pasted-big")
    page.get_by_test_id("train-start").click()
    expect(page.get_by_test_id("train-status")).to_contain_text("added to the comparison", timeout=120_000)
    meta = requests.get(f"{live_server}/api/tokenizers/pasted-big.json", timeout=30).json()
    assert meta["metadata"]["statistics"]["bytes"] == len(sent)
    # A small paste still goes into the box, as the browser pastes it.
    box.evaluate(
        """(el) => { const dt = new DataTransfer(); dt.setData('text/plain', 'small');
               el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true})); }"""
    )
    expect(page.get_by_test_id("train-file-item")).to_have_count(1)


def test_static_files_say_how_to_start_the_server(guarded, static_server):
    """Opened without server.py, the panel explains itself and nothing 404s in the console."""
    page = guarded(static_server)
    error = page.get_by_test_id("train-error")
    expect(error).to_contain_text("Training needs the local server: run `make run`", timeout=30_000)
    expect(page.get_by_test_id("train-start")).to_be_disabled()
    expect(page.get_by_test_id("train-file")).to_be_disabled()
    # The rest of the page still works.
    expect(page.get_by_test_id("input")).to_be_enabled()

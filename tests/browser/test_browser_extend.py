"""The Train panel's "start from", broken entries and job warnings, in headless Chromium.

Start from gpt2, add 20 merges learned from pasted text: the new panel appears right after a
gpt2 panel (added, since gpt2 is not shown at boot) and its ids equal tokenizer.extend's on the
same corpus. A half-written tokenizer in the data folder is listed as broken with its reason and
deleted from the page. A custom regex that drops text trains with a warning the page shows.

The server here is this module's own (its data folder is known, so a broken entry can be made);
every page is guarded as conftest's are: nothing leaves the server, no console or page errors.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.pages import panel, wait_ids
from tests.helpers import CORPORA
from tokenizer import extend, get_encoding

# A short pasted corpus: the start of CPython's Lib/__future__.py (gpt2 learns runs of spaces).
CORPUS = (CORPORA / "code_python.txt").read_text(encoding="utf-8")[:4000]
PROBE = "def tokenize_all(texts):\n    return [tokenize(text) for text in texts]\n"
NAME = "gpt2-code"
DONE_TIMEOUT_MS = 120_000


def ready_form(page: Page) -> None:
    expect(page.get_by_test_id("train-start")).to_be_enabled(timeout=30_000)
    expect(page.get_by_test_id("train-base").locator("option[value='gpt2']")).to_be_attached()


def test_extend_gpt2_in_the_page(open_page, extend_server):
    origin, data_dir = extend_server
    page = open_page(origin)
    ready_form(page)
    base = page.get_by_test_id("train-base")
    expect(base).to_have_value("")
    expect(page.get_by_test_id("train-add")).to_be_hidden()

    # Starting from gpt2: "new merges" instead of the vocabulary size, the base's pattern shown.
    base.select_option("gpt2")
    expect(page.get_by_test_id("train-vocab")).to_be_hidden()
    expect(page.get_by_test_id("train-pattern")).to_be_hidden()
    expect(page.get_by_test_id("train-special")).to_be_hidden()
    expect(page.get_by_test_id("train-base-pattern")).to_have_text("gpt2 (the base's)")
    expect(page.get_by_test_id("train-start")).to_have_text("Extend")
    page.get_by_test_id("train-add").fill("20")
    page.get_by_test_id("train-text").fill(CORPUS)
    page.get_by_test_id("train-name").fill(NAME)
    page.get_by_test_id("train-start").click()
    status = page.get_by_test_id("train-status")
    expect(status).to_contain_text("added to the comparison", timeout=DONE_TIMEOUT_MS)
    want_tok = extend(get_encoding("gpt2"), CORPUS, 20)
    ext = want_tok.metadata["extension"]
    assert ext["added"] == 20
    expect(status).to_contain_text(
        f"extended {NAME}: gpt2 + 20 merges: corpus {ext['corpus_tokens_before']:,} → "
        f"{ext['corpus_tokens_after']:,} tokens"
    )
    expect(page.get_by_test_id("train-error")).to_be_hidden()
    expect(page.get_by_test_id("train-warnings")).to_be_hidden()

    # Next to its base: gpt2 was not shown, so it was added, and the extension right after it.
    names = page.evaluate("() => window.__bpe.app.listTokenizers()")
    assert names[names.index("gpt2") + 1] == NAME, names
    expect(panel(page, NAME)).to_be_visible()
    page.get_by_test_id("input").fill(PROBE)
    want = want_tok.encode(PROBE)
    assert any(i >= 50257 for i in want), want  # the probe uses new tokens
    wait_ids(page, NAME, want)
    wait_ids(page, "gpt2", get_encoding("gpt2").encode(PROBE))

    # The stored entry says what it extends; it becomes a "start from" choice too.
    item = page.locator(f'[data-testid=train-saved-item][data-name="{NAME}"]')
    expect(item).to_contain_text("gpt2 + 20 merges")
    expect(base.locator("optgroup[label='trained on this server'] option")).to_have_text([NAME])
    assert sorted(p.name for p in data_dir.glob(f"{NAME}.*")) == [f"{NAME}.json", f"{NAME}.tiktoken"]


def test_broken_entry_is_listed_and_deleted(open_page, extend_server):
    origin, data_dir = extend_server
    get_encoding("gpt2").save(data_dir / "orphan")
    (data_dir / "orphan.tiktoken").unlink()  # a crash between the two files
    page = open_page(origin)
    ready_form(page)
    summary = page.locator(".train-saved summary")
    expect(summary).to_contain_text("1 broken")
    summary.click()
    item = page.locator('[data-testid=train-broken-item][data-name="orphan"]')
    expect(item.get_by_test_id("train-broken-reason")).to_contain_text("orphan.json has no orphan.tiktoken")
    page.once("dialog", lambda d: d.accept())
    item.get_by_role("button", name="delete broken orphan").click()
    expect(item).to_have_count(0)
    expect(summary).not_to_contain_text("broken")
    assert not list(data_dir.glob("orphan.*"))


def test_job_warning_is_shown(open_page, extend_server):
    origin, _ = extend_server
    page = open_page(origin)
    ready_form(page)
    page.get_by_test_id("train-text").fill("hello, world! this is fine. " * 40)
    page.get_by_test_id("train-vocab").fill("300")
    page.get_by_test_id("train-pattern").select_option("custom")
    page.get_by_test_id("train-regex").fill(r"\w+")
    page.get_by_test_id("train-name").fill("words-only")
    page.get_by_test_id("train-start").click()
    expect(page.get_by_test_id("train-status")).to_contain_text(
        "added to the comparison", timeout=DONE_TIMEOUT_MS
    )
    warning = page.get_by_test_id("train-warning")
    expect(warning).to_have_count(2)  # the regex drops text; the few distinct words run out of pairs
    expect(warning.first).to_contain_text("warning: the split regex does not match 28.6% of the sample")
    expect(warning.last).to_contain_text("stopped after")
    expect(page.get_by_test_id("train-warnings")).to_be_visible()

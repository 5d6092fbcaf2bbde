"""The Learn view in real headless Chromium against the real server and the built page.

Step through `nation station ration` and compare every step (winner, counts, tie note, the
re-rendered corpus, the merge list) with tokenizer.web.learn.handle in Python; Back; Play to the
end; "Use as tokenizer" adds a panel that tokenizes exactly like Tokenizer.from_merges; classic
mode steps too and explains why it cannot join the comparison. One shared page (booting
Pyodide costs seconds); conftest's guard fails the test on console errors or outside requests.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.pages import visible
from tokenizer.core import Tokenizer
from tokenizer.web import learn

CORPUS = "nation station ration"


def shown_tokens(page: Page) -> list[list]:
    return page.get_by_test_id("learn-token").evaluate_all(
        "els => els.map(e => [Number(e.dataset.id), e.textContent, e.classList.contains('learn-new')])"
    )


def expect_step(page: Page, result: dict, k: int) -> None:
    """The view after k merges equals Python's answer for the same request."""
    n = len(result["steps"])
    expect(page.get_by_test_id("learn-step-count")).to_have_text(f"step {k} / {n}")
    vocab = result["vocab"]
    rows = page.get_by_test_id("learn-pair-row")
    if k > 0:
        s = result["steps"][k - 1]
        left, right = (visible(vocab[i]) for i in s["pair"])
        expect(page.get_by_test_id("learn-winner")).to_have_text(
            f"{left} + {right} → {visible(vocab[s['id']])} ×{s['count']}"
        )
        if s["tied"]:
            expect(page.get_by_test_id("learn-tie")).to_contain_text(f"decided by {s['rule']}")
        else:
            expect(page.get_by_test_id("learn-tie")).to_have_text("the count alone decided")
        expect(rows).to_have_count(len(s["top"]))
        expect(rows.locator("td:first-child")).to_have_text(
            [f"{visible(vocab[a])} + {visible(vocab[b])}" for a, b, _ in s["top"]]
        )
        expect(rows.locator("td:last-child")).to_have_text([str(c) for *_, c in s["top"]])
        expect(page.locator("[data-testid=learn-pair-row].learn-win")).to_have_count(1)
        expect(rows.first).to_have_class("learn-win")
    expect(page.get_by_test_id("learn-merges").locator("li")).to_have_count(k)
    want = [t for piece in learn.render(result, k) if not isinstance(piece, str) for t in piece]
    assert shown_tokens(page) == want


def panel_ids(page: Page, name: str, n: int) -> list[int]:
    page.wait_for_function(
        """([name, n]) => {
            const p = document.querySelector(`[data-testid=panel][data-encoding="${name}"]`);
            return !!p && p.querySelectorAll('[data-testid=token]').length === n;
        }""",
        arg=[name, n],
        timeout=60_000,
        polling=100,
    )
    return (
        page.locator(f'[data-testid=panel][data-encoding="{name}"]')
        .get_by_test_id("token")
        .evaluate_all("els => els.map(e => Number(e.dataset.id))")
    )


def test_learn_view_steps_like_python(app_page: Page):
    page = app_page
    corpus = page.get_by_test_id("learn-corpus")
    expect(corpus).to_be_visible(timeout=30_000)
    expect(corpus).to_have_value(CORPUS)  # the default
    page.get_by_test_id("learn-mode").select_option("bytes")
    page.get_by_test_id("learn-pattern").select_option("none")
    page.get_by_test_id("learn-tie-break").select_option("first")
    request = {
        "corpus": CORPUS,
        "mode": "bytes",
        "pattern": "none",
        "tie_break": "first",
        "num_merges": 200,
        "min_frequency": 2,
    }
    result = learn.handle(request)
    assert len(result["steps"]) == 5

    # Reset learns (in the worker) and shows step 0: the bytes, the counts before the first merge.
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("learn-step-count")).to_have_text("step 0 / 5")
    expect(page.get_by_test_id("learn-back")).to_be_disabled()
    expect_step(page, result, 0)
    assert len(shown_tokens(page)) == len(CORPUS.encode())

    for k in range(1, 6):
        page.get_by_test_id("learn-step").click()
        expect_step(page, result, k)
    expect(page.get_by_test_id("learn-step")).to_be_disabled()  # the run stopped: nothing occurs twice
    expect(page.get_by_test_id("learn-status")).to_contain_text(result["stop_reason"])

    page.get_by_test_id("learn-back").click()
    expect_step(page, result, 4)
    page.get_by_test_id("learn-back").focus()
    page.keyboard.press("ArrowLeft")  # keyboard: arrows step too
    expect_step(page, result, 3)

    # Play to the end from 3, fast.
    page.get_by_test_id("learn-speed").select_option("25")
    page.get_by_test_id("learn-play").click()
    expect(page.get_by_test_id("learn-step-count")).to_have_text("step 5 / 5")
    expect(page.get_by_test_id("learn-play")).to_have_text("Play")
    expect_step(page, result, 5)

    # Use the 5 merges as a tokenizer: the new panel encodes the page's text like Python.
    use = page.get_by_test_id("learn-use")
    expect(use).to_be_enabled()
    use.click()
    note = page.get_by_test_id("learn-use-note")
    expect(note).to_contain_text("added as ", timeout=30_000)
    name = note.get_attribute("data-name")
    assert name and name.startswith("learned-none-5")
    text = page.get_by_test_id("input").input_value()
    want = Tokenizer.from_merges([tuple(s["pair"]) for s in result["steps"]], "none").encode(text)
    assert panel_ids(page, name, len(want)) == want
    page.evaluate("name => window.__bpe.app.removeTokenizer(name)", name)

    # Classic: the same sentence, subword-nmt's tie rule; it cannot join the comparison.
    page.get_by_test_id("learn-mode").select_option("classic")
    expect(page.get_by_test_id("learn-pattern")).to_be_hidden()
    expect(use).to_be_disabled()
    expect(note).to_contain_text("not byte-level")
    classic = learn.handle({**request, "mode": "classic"})
    page.get_by_test_id("learn-step").click()
    expect_step(page, classic, 1)
    expect(page.get_by_test_id("learn-winner")).to_have_text("t + i → ti ×3")
    expect(page.get_by_test_id("learn-tie")).to_contain_text("lexically largest pair (subword-nmt)")
    page.get_by_test_id("learn-step").click()
    expect_step(page, classic, 2)

    # A custom split regex (Python syntax, as the trainer takes it); a bad one is reported.
    page.get_by_test_id("learn-mode").select_option("bytes")
    page.get_by_test_id("learn-pattern").select_option("custom")
    regex = page.get_by_test_id("learn-regex")
    expect(regex).to_be_visible()
    page.get_by_test_id("learn-corpus").fill("the cat sat the mat, the cat sat")
    custom = learn.handle(
        {**request, "corpus": "the cat sat the mat, the cat sat", "pattern": regex.input_value()}
    )
    page.get_by_test_id("learn-step").click()
    page.get_by_test_id("learn-step").click()
    expect_step(page, custom, 2)
    regex.fill("(unclosed")
    page.get_by_test_id("learn-step").click()
    expect(page.get_by_test_id("learn-error")).to_contain_text("invalid regex: missing )")
    # \w and \b mean the `regex` package's word class, in the worker's re translation too.
    regex.fill(r"\b\w+\b|\W+")
    words = learn.handle({**request, "corpus": "the cat sat the mat, the cat sat", "pattern": r"\b\w+\b|\W+"})
    page.get_by_test_id("learn-step").click()
    expect_step(page, words, 1)


def test_a_huge_min_count_learns_nothing_and_says_why(app_page: Page):
    # "1e21" reached Python as a float: "ValueError: min_frequency must be an integer, got 1e+21"
    page = app_page
    expect(page.get_by_test_id("learn-corpus")).to_be_visible(timeout=30_000)
    page.get_by_test_id("learn-min-frequency").fill("1e21")
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("learn-status")).to_contain_text(
        f"no pair occurs {2**53 - 1} or more times", timeout=30_000
    )
    expect(page.get_by_test_id("learn-error")).to_be_hidden()
    page.get_by_test_id("learn-min-frequency").fill("2")


def test_zero_merges_learns_none(app_page: Page):
    # "0" read as an empty field: 200 merges were learned (here 4, all the corpus has).
    page = app_page
    expect(page.get_by_test_id("learn-corpus")).to_be_visible(timeout=30_000)
    page.get_by_test_id("learn-num-merges").fill("0")
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("learn-status")).to_contain_text("0 merges learned", timeout=30_000)
    expect(page.get_by_test_id("learn-error")).to_be_hidden()
    page.get_by_test_id("learn-num-merges").fill("")  # empty: the default
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("learn-status")).to_have_text(
        re.compile(r"^[1-9]\d* merges? learned"), timeout=30_000
    )
    page.get_by_test_id("learn-num-merges").fill("200")


def test_a_merge_count_out_of_range_is_an_error_not_clamped(app_page: Page):
    # 5000 was learned as 2000 and -3 as 0, said only by the status's count
    page = app_page
    expect(page.get_by_test_id("learn-corpus")).to_be_visible(timeout=30_000)
    for typed, shown in (("5000", "got 5000"), ("-3", "got -3")):
        page.get_by_test_id("learn-num-merges").fill(typed)
        page.get_by_test_id("learn-reset").click()
        expect(page.get_by_test_id("learn-error")).to_contain_text(
            f"num_merges must be between 0 and 2000, {shown}", timeout=30_000
        )
    page.get_by_test_id("learn-num-merges").fill("200")
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("learn-status")).to_contain_text("merges learned", timeout=30_000)
    expect(page.get_by_test_id("learn-error")).to_be_hidden()


def test_a_fractional_count_or_a_min_count_below_one_is_an_error_not_rounded(app_page: Page):
    # 1.5 merges learned 1, and a min count of 0, -5 or 0.5 learned with 1 (an empty field with
    # 1, where the library's default is 2), said by nothing.
    page = app_page
    expect(page.get_by_test_id("learn-corpus")).to_be_visible(timeout=30_000)
    error = page.get_by_test_id("learn-error")
    page.get_by_test_id("learn-num-merges").fill("1.5")
    page.get_by_test_id("learn-reset").click()
    expect(error).to_contain_text("num_merges must be an integer, got 1.5", timeout=30_000)
    page.get_by_test_id("learn-num-merges").fill("200")
    for typed, shown in (("0", "got 0"), ("-5", "got -5")):
        page.get_by_test_id("learn-min-frequency").fill(typed)
        page.get_by_test_id("learn-reset").click()
        expect(error).to_contain_text(f"min_frequency must be >= 1, {shown}", timeout=30_000)
    page.get_by_test_id("learn-min-frequency").fill("0.5")
    page.get_by_test_id("learn-reset").click()
    expect(error).to_contain_text("min_frequency must be an integer, got 0.5", timeout=30_000)
    page.get_by_test_id("learn-min-frequency").fill("")  # empty: the library's default, 2
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("learn-status")).to_contain_text(
        "no pair occurs 2 or more times", timeout=30_000
    )
    expect(error).to_be_hidden()
    page.get_by_test_id("learn-min-frequency").fill("2")


def test_a_custom_regex_that_skips_corpus_text_says_so(app_page: Page):
    # The run said "0 merges learned" as if the corpus had no pair to merge; the regex kept its a's.
    page = app_page
    expect(page.get_by_test_id("learn-corpus")).to_be_visible(timeout=30_000)
    page.get_by_test_id("learn-corpus").fill("nation station ration")
    page.get_by_test_id("learn-pattern").select_option("custom")
    page.get_by_test_id("learn-regex").fill("(?:a|b)+")
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("learn-status")).to_contain_text(
        "its split regex skips 18 of 21 bytes of the corpus (not learned from)", timeout=30_000
    )
    page.get_by_test_id("learn-pattern").select_option("gpt4")
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("learn-status")).to_contain_text("merges learned", timeout=30_000)
    expect(page.get_by_test_id("learn-status")).not_to_contain_text("skips")
    page.get_by_test_id("learn-preset").select_option("nation station ration")  # the default corpus again

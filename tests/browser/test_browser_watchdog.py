"""Hostile input in the page (issue 17): the worker's watchdog, the decode box's limits and strict
parsing, a deeply nested .json, and the page's small frictions (merge list, reloading a file, the
panel's × button).

The watchdog test opens its own page: it kills and restarts that page's worker on purpose. The
others share the booted page and put it back as they found it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import DEFAULTS, panel, wait_ids
from tests.helpers import CORPORA
from tokenizer import Tokenizer, formats, get_encoding, train

# Nested repeats: on 34 `a`s and no `b`, stdlib re tries about 2^34 ways before giving up.
SLOW_PATTERN = r"(?:a+)+b|\s+|\S"
DECODE_RUNS = 3  # the 200,000-id decode is timed as the best of this many runs (a shared 2-core box)
RECOVERY_MS = 30_000  # deadline (2 s) + a fresh worker from the snapshot + reloads, on a busy CI box


@pytest.fixture
def page(app_page: Page):
    """The shared page, reset after the test: only the default panels, the tool boxes closed."""
    yield app_page
    for name in app_page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)"):
        if name not in DEFAULTS:
            panel(app_page, name).locator("button.remove").click()
    expect(app_page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))
    app_page.evaluate("document.querySelectorAll('details').forEach(d => d.open = false)")


@pytest.fixture(scope="module")
def slow_files(tmp_path_factory) -> tuple[Tokenizer, list[Path]]:
    """A small tokenizer whose .json names SLOW_PATTERN as its split pattern. CPython's loader
    refuses such a file (regex_check probes `re` in a child process); the page's Pyodide cannot
    start one, so there the watchdog is the guard. The expected ids come from the constructor."""
    folder = tmp_path_factory.mktemp("slow")
    tok = train("hello world, hello there ", 270, pattern="gpt4", name="slow")
    tok.save(folder / "slow")
    meta = json.loads((folder / "slow.json").read_text())
    meta["pattern"] = meta["pattern_regex"] = SLOW_PATTERN
    (folder / "slow.json").write_text(json.dumps(meta))
    slow = Tokenizer(tok.mergeable_ranks, SLOW_PATTERN, name="slow")
    return slow, [folder / "slow.tiktoken", folder / "slow.json"]


# ----- the watchdog -----------------------------------------------------------------------------


def test_a_catastrophic_pattern_is_stopped_and_the_page_keeps_working(open_page, live_server, slow_files):
    slow, files = slow_files
    page = open_page(live_server)
    page.get_by_test_id("load-files").set_input_files(files)
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded slow")
    status = page.get_by_test_id("status")

    text = "a" * 34 + "c"
    page.get_by_test_id("input").fill(text)
    # While the worker is stuck the status says so, never "ready".
    expect(status).to_have_text(re.compile("busy|restarting"), timeout=RECOVERY_MS)
    stuck = panel(page, "slow")
    expect(stuck).to_have_attribute("data-state", "error", timeout=RECOVERY_MS)
    error = stuck.get_by_test_id("panel-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("slow is too slow on this text")
    expect(error).to_contain_text(SLOW_PATTERN)
    expect(stuck.get_by_test_id("token")).to_have_count(0)  # no stale tokens of an older text
    # The other panels are encoded by the fresh worker.
    for name in DEFAULTS:
        wait_ids(page, name, get_encoding(name).encode(text), timeout=RECOVERY_MS)
    expect(status).to_have_text("ready", timeout=RECOVERY_MS)
    expect(page.locator("#boot-detail")).to_contain_text("restarted")

    # A new text: every panel, the slow one included (reloaded into the fresh worker), is right.
    page.get_by_test_id("input").fill("hello world")
    wait_ids(page, "slow", slow.encode("hello world"), timeout=RECOVERY_MS)
    for name in DEFAULTS:
        wait_ids(page, name, get_encoding(name).encode("hello world"), timeout=RECOVERY_MS)
    for name in [*DEFAULTS, "slow"]:
        expect(panel(page, name)).to_have_attribute("data-state", "ok")
        expect(panel(page, name).get_by_test_id("panel-error")).to_be_hidden()
    expect(status).to_have_text("ready")


# Passes the regex checks (they probe runs of one character; Pyodide's re cannot be stopped), but
# on "abab..." each "ab" matches two ways: 2^40 tries on this corpus.
LEARN_SLOW_PATTERN = r"(?:a|b|ab)+c"
LEARN_DEADLINE_MS = 30_000  # worker-client.js DEADLINE_MS.learn


def test_a_catastrophic_learn_regex_holds_the_panels_for_the_learn_deadline_only(open_page, live_server):
    # The deadline was 300 s: five minutes without any panel encoding.
    page = open_page(live_server)
    page.get_by_test_id("learn-mode").select_option("bytes")
    page.get_by_test_id("learn-pattern").select_option("custom")
    page.get_by_test_id("learn-regex").fill(LEARN_SLOW_PATTERN)
    page.get_by_test_id("learn-corpus").fill("ab" * 40)
    page.get_by_test_id("learn-reset").click()
    expect(page.get_by_test_id("status")).to_have_text(re.compile("busy"), timeout=RECOVERY_MS)
    text = "typed while learning"
    page.get_by_test_id("input").fill(text)
    error = page.get_by_test_id("learn-error")
    expect(error).to_contain_text("learn took over 30.0 s", timeout=LEARN_DEADLINE_MS + RECOVERY_MS)
    expect(error).to_contain_text("another split regex: one with nested repeats")  # what to do
    for name in DEFAULTS:
        wait_ids(page, name, get_encoding(name).encode(text), timeout=RECOVERY_MS)
    expect(page.get_by_test_id("status")).to_have_text("ready", timeout=RECOVERY_MS)


# ----- the decode box ----------------------------------------------------------------------------


def decode(page: Page, ids_text: str) -> None:
    if not page.locator("#decode-box").evaluate("d => d.open"):
        page.locator("#decode-box summary").click()
    page.get_by_test_id("decode-encoding").select_option("cl100k_base")
    page.get_by_test_id("decode-ids").fill(ids_text)
    page.get_by_test_id("decode-run").click()


@pytest.mark.parametrize(
    ("ids_text", "bad"),
    [("abc", '"abc"'), ("9906 1.5", '"1.5"'), ("1e3", '"1e3"'), ("[9906, 0x10]", '"0x10"'), ("-1", '"-1"')],
)
def test_decode_reads_ids_strictly(page: Page, ids_text: str, bad: str):
    decode(page, ids_text)
    out = page.get_by_test_id("decode-output")
    expect(out).to_have_class("decode-output error")
    expect(out).to_contain_text(bad)
    expect(out).to_contain_text("not an id")
    expect(page.get_by_test_id("decode-tokens").get_by_test_id("token")).to_have_count(0)


def test_decode_limits(page: Page):
    out = page.get_by_test_id("decode-output")
    decode(page, "  ")
    expect(out).to_contain_text("no ids")
    decode(page, "9906 4294967296")
    expect(out).to_contain_text("too big")
    decode(page, "[9906,\n11 ,1917]")  # commas and/or whitespace, one pair of brackets
    expect(out).to_have_text("Hello, world")
    decode(page, "0 " * 1_000_001)
    expect(out).to_contain_text("more than 1,000,000 ids")
    expect(out).to_have_class("decode-output error")


def load_self_merged(page: Page, tmp_path: Path, name: str, levels: int) -> Tokenizer:
    """A tokenizer whose last token is 'a' * 2**(levels + 1) by self-merges, loaded in the page."""
    tok = Tokenizer.from_merges([(97, 97)] + [(256 + i, 256 + i) for i in range(levels)], "none", name=name)
    tok.save(tmp_path / name)
    page.get_by_test_id("load-files").set_input_files(
        [tmp_path / f"{name}.tiktoken", tmp_path / f"{name}.json"]
    )
    # a 2 MB token's file takes the worker seconds to read on a loaded machine: wait for it
    expect(page.get_by_test_id("load-message")).to_contain_text(f"loaded {name}", timeout=30_000)
    return tok


def test_decode_of_long_tokens_shows_a_bounded_part(page: Page, tmp_path: Path):
    # 10 ids of a 2 MB token were 20 MB of token spans (a 2.5 s freeze); 2,000 an OverflowError
    long = load_self_merged(page, tmp_path, "long", 20)
    top = long.n_vocab - 1
    if not page.locator("#decode-box").evaluate("d => d.open"):
        page.locator("#decode-box summary").click()
    page.get_by_test_id("decode-encoding").select_option("long")
    out = page.get_by_test_id("decode-output")
    page.get_by_test_id("decode-ids").fill(f"97 {top} " * 5)
    page.get_by_test_id("decode-run").click()
    expect(out).to_have_attribute("data-chars", str(5 * (2**21 + 1)))
    expect(page.get_by_test_id("decode-more")).to_have_text(
        "showing the first 1 of 10 tokens and 20,000 of 10,485,765 characters"
    )
    expect(page.get_by_test_id("decode-tokens").get_by_test_id("token")).to_have_count(1)
    page.get_by_test_id("decode-ids").fill(f"{top} " * 2000)
    page.get_by_test_id("decode-run").click()
    expect(out).to_have_text(re.compile("decode to 4,000 MB; the decode box takes at most 64 MB"))
    expect(out).to_have_class("decode-output error")


def test_merge_tree_of_a_long_self_merged_token_is_cut(page: Page, tmp_path: Path):
    # a 32 KB token of self-merges has 65,535 nodes: the tree shows the levels that fit in 64 KB
    load_self_merged(page, tmp_path, "run", 14)
    page.get_by_test_id("input").fill("a" * 2**15)
    wait_ids(page, "run", [270])
    panel(page, "run").get_by_test_id("token").first.click()
    tree = page.get_by_test_id("merge-tree")
    expect(tree.get_by_test_id("merge-node").first).to_have_attribute("data-id", "270")
    expect(tree.get_by_test_id("merge-node")).to_have_count(3)  # 32 KB + 2 x 16 KB
    expect(tree.get_by_test_id("merge-cut")).to_have_count(2)
    page.get_by_test_id("input").fill("")


def test_megabyte_tokens_are_shown_cut_in_the_lists(page: Page, tmp_path: Path):
    # the audit wrote its 20 longest tokens whole (4 MB of text and hex): a 2.5 s freeze
    long = load_self_merged(page, tmp_path, "long", 20)
    box = page.get_by_test_id("audit-box")
    if not box.evaluate("d => d.open"):
        box.locator("summary").click()
    page.get_by_test_id("audit-tokenizer").select_option("long")
    page.get_by_test_id("audit-with-text").uncheck()
    page.get_by_test_id("audit-run").click()
    expect(page.get_by_test_id("audit-status")).to_contain_text("long: audited")
    first = page.get_by_test_id("audit-longest").get_by_test_id("token-row").first
    expect(first).to_have_attribute("data-id", str(long.n_vocab - 1))
    expect(first.get_by_test_id("analysis-token")).to_have_text("a" * 1024 + "…")
    expect(first.locator(".token-hex")).to_have_attribute("title", f"{2**21} bytes")
    assert len(first.locator(".token-hex").text_content()) == len("61 " * 1024 + "…")
    page.locator("#merge-box").evaluate("d => { d.open = true; }")
    page.get_by_test_id("merge-encoding").select_option("long")
    rows = page.get_by_test_id("merge-list").get_by_test_id("merge-row")
    expect(rows).to_have_count(21)
    expect(rows.last).to_have_text(f"{'a' * 1024}…  ←  {long.n_vocab - 2} + {long.n_vocab - 2}")


def test_decode_200k_ids_within_a_second(page: Page):
    tok = get_encoding("cl100k_base")
    ids = tok.encode((CORPORA / "taylorswift.txt").read_text(encoding="utf-8"))
    ids = (ids * (200_000 // len(ids) + 1))[:200_000]
    decode(page, "9906")  # the box open and cl100k_base ready in the worker
    expect(page.get_by_test_id("decode-output")).to_have_text("Hello")
    page.get_by_test_id("decode-ids").fill(", ".join(map(str, ids)))
    runs = [
        page.evaluate(
            """() => new Promise((resolve) => {
            const out = document.querySelector("[data-testid=decode-output]");
            delete out.dataset.ids;
            const t0 = performance.now();
            document.querySelector("[data-testid=decode-run]").click();
            const poll = () => {
                if (out.dataset.ids === "200000" && !out.hasAttribute("aria-busy")) {
                    requestAnimationFrame(() => setTimeout(() => {
                        resolve({ ms: performance.now() - t0, chars: Number(out.dataset.chars) });
                    }, 0));
                } else setTimeout(poll, 5);
            };
            poll();
        })"""
        )
        for _ in range(DECODE_RUNS)
    ]
    assert all(r["chars"] == len(tok.decode(ids)) for r in runs)
    # The best run of DECODE_RUNS: on a shared 2-core box another process can stall any run.
    assert min(r["ms"] for r in runs) <= 1000, runs
    # Not asserted: the longest main-thread task. Parsing (slices of a few ms), the reply and the
    # bounded render stay far below 100 ms, but Chromium re-lays out the 1.4 MB single-line
    # <input> holding the pasted ids on each layout (100-400 ms here); index.html's decode field
    # has to change for that (see the report of issue 17's page work).
    expect(page.get_by_test_id("decode-more")).to_contain_text("of 200,000 tokens")
    text = page.get_by_test_id("decode-output").text_content()
    assert tok.decode(ids).startswith(text) and len(text) >= 20_000


# ----- loading hostile files ----------------------------------------------------------------------


def test_deeply_nested_json_gives_a_clear_message(page: Page, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    page.get_by_test_id("load-files").set_input_files([deep])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_contain_text("deep.json nests JSON more than")
    expect(msg).to_have_class("message error")
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))
    page.get_by_test_id("input").fill("still working")
    wait_ids(page, "cl100k_base", get_encoding("cl100k_base").encode("still working"))


def test_hf_tokenizer_json_with_a_whitespace_pre_tokenizer_is_refused_by_name(page: Page, tmp_path):
    """It used to load as "no split" without a word; the page shows the library's refusal."""
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models, pre_tokenizers, trainers

    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.train_from_iterator(["hello world " * 50], trainers.BpeTrainer(vocab_size=300, show_progress=False))
    path = tmp_path / "tokenizer.json"
    path.write_text(hf.to_str(), encoding="utf-8")
    page.get_by_test_id("load-files").set_input_files([path])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_contain_text("Whitespace")
    expect(msg).to_have_class("message error")
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_a_custom_pattern_that_skips_text_says_so_in_its_panel(page: Page, tmp_path):
    """`\\w+` leaves ", " and "!" out of the tokens (as tiktoken does): the panel must say so."""
    train("hello world, hello there ", 270, pattern="gpt4", name="words").save(tmp_path / "words")
    meta = json.loads((tmp_path / "words.json").read_text())
    meta["pattern"] = meta["pattern_regex"] = r"\w+"
    (tmp_path / "words.json").write_text(json.dumps(meta))
    words = Tokenizer.load(tmp_path / "words")
    page.get_by_test_id("load-files").set_input_files([tmp_path / "words.tiktoken", tmp_path / "words.json"])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded words")
    page.get_by_test_id("input").fill("hello, world!")
    wait_ids(page, "words", words.encode("hello, world!"))
    note = panel(page, "words")
    expect(note).to_have_attribute("data-dropped", "3")  # ",", " ", "!"
    expect(note.get_by_test_id("panel-state")).to_contain_text("skips 3 of 13 bytes")
    # A named pattern covers every character: no note there.
    expect(panel(page, "cl100k_base")).not_to_have_attribute("data-dropped", re.compile("."))
    page.get_by_test_id("input").fill("hello world")
    wait_ids(page, "words", words.encode("hello world"))
    expect(note).to_have_attribute("data-dropped", "1")
    panel(page, "words").locator("button.remove").click()


def test_loading_the_same_files_again_says_so(page: Page, slow_files):
    _, files = slow_files
    load = page.get_by_test_id("load-files")
    msg = page.get_by_test_id("load-message")
    load.set_input_files(files)
    expect(msg).to_contain_text(re.compile(r"loaded slow"))
    name = page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)")[-1]
    load.set_input_files(files)
    expect(msg).to_contain_text(f"already loaded, as {name}")
    expect(msg).not_to_have_class(re.compile("error"))
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS) + 1)
    # Its panel removed, the same files bring it back under the same name.
    panel(page, name).locator("button.remove").click()
    load.set_input_files(files)
    expect(msg).to_contain_text(f"loaded {name}")
    expect(panel(page, name)).to_have_count(1)
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS) + 1)


# ----- small frictions ------------------------------------------------------------------------------


def test_merge_list_follows_the_clicked_tokens_tokenizer(page: Page):
    page.get_by_test_id("input").fill("Tokenization")
    wait_ids(page, "o200k_base", get_encoding("o200k_base").encode("Tokenization"))
    page.locator("#merge-box summary").click()
    page.get_by_test_id("merge-encoding").select_option("cl100k_base")
    merge_list = page.get_by_test_id("merge-list")
    expect(merge_list).to_have_attribute(
        "data-total", str(len(get_encoding("cl100k_base").mergeable_ranks) - 256)
    )
    panel(page, "o200k_base").get_by_test_id("token").first.click()
    expect(page.get_by_test_id("merge-encoding")).to_have_value("o200k_base")
    expect(merge_list).to_have_attribute(
        "data-total", str(len(get_encoding("o200k_base").mergeable_ranks) - 256)
    )


def test_merge_list_says_when_no_merge_makes_a_token(page: Page, tmp_path: Path):
    # A .tiktoken token that no two earlier tokens make was listed as "abc  ←  -1 + -1".
    ranks = {bytes([i]): i for i in range(256)} | {b"abc": 256, b"ab": 257}
    (tmp_path / "nopath.tiktoken").write_text(formats.dump_tiktoken(ranks))
    page.get_by_test_id("load-files").set_input_files([tmp_path / "nopath.tiktoken"])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded nopath")
    page.locator("#merge-box").evaluate("d => { d.open = true; }")
    page.get_by_test_id("merge-encoding").select_option("nopath")
    rows = page.get_by_test_id("merge-list").get_by_test_id("merge-row")
    expect(rows).to_have_text(["abc  ←  no merge of earlier tokens makes it", "ab  ←  97 + 98"])


def test_remove_button_stays_on_the_header_line_in_three_columns(page: Page):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.locator("#add-encoding").select_option("gpt2")
    expect(page.get_by_test_id("panel")).to_have_count(3)
    text = "A sentence long enough for every panel's stats: chars/token and bytes/token."
    page.get_by_test_id("input").fill(text)
    wait_ids(page, "gpt2", get_encoding("gpt2").encode(text))
    tops = page.get_by_test_id("panel").evaluate_all(
        """els => els.map(p => {
            const name = p.querySelector('.panel-name').getBoundingClientRect();
            const x = p.querySelector('button.remove').getBoundingClientRect();
            const panelBox = p.getBoundingClientRect();
            return {top: panelBox.top, name: [name.top, name.bottom], x: [x.top, x.bottom, x.right, panelBox.right]};
        })"""
    )
    assert len({round(t["top"]) for t in tops}) == 1, tops  # three columns, one row
    for t in tops:
        x_top, x_bottom, x_right, panel_right = t["x"]
        assert x_top < t["name"][1] and x_bottom > t["name"][0], t  # on the name's line
        assert x_right <= panel_right, t

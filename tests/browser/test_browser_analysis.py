"""The "know your tokenizer" views in headless Chromium: every number the page shows equals what
`python -m tokenizer audit|stats|diff --json` prints for the same text (the CLI run here in a
subprocess, on the text written to a file), and the plots are drawn, in light and dark mode and
at 420 px (screenshots in web/screenshots/, rewritten with UPDATE_SCREENSHOTS=1).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import panel, type_text
from tests.helpers import CORPORA, ROOT

SCREENSHOTS = ROOT / "web" / "screenshots"
TEXT = (
    "Tokenizers compare: naïve café, 東京タワー, Привет мир, emoji 🙂👩‍💻.\n"
    "def total(xs):\n    return sum(x * 2 for x in xs)  # 12345\n"
)
COMPUTE_TIMEOUT_MS = 120_000  # o200k's audit takes seconds in Pyodide, more on a loaded machine


def udhr_slice(n_sections: int) -> str:
    """The first n sections of the UDHR sample (English first), as a user would paste them."""
    text = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")
    starts = [i for i in range(len(text)) if text.startswith("##### UDHR ", i)]
    return text[: starts[n_sections]] if n_sections < len(starts) else text


def cli(*args: str, files: dict[str, str], tmp_path: Path) -> dict:
    """`python -m tokenizer ARGS --json`, with {NAME: text} written to tmp_path/NAME first."""
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8", newline="")
    out = subprocess.run(
        [sys.executable, "-m", "tokenizer", *args, "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(out.stdout)


def table_values(page: Page, testid: str) -> list[list]:
    """A data table's rows: a number cell as its exact data-value, any other cell as its text."""
    return (
        page.get_by_test_id(testid)
        .locator("tbody tr")
        .evaluate_all(
            """rows => rows.map(r => [...r.children].map(c =>
            c.dataset.value !== undefined ? Number(c.dataset.value) : c.textContent))"""
        )
    )


def ids_of(locator) -> list[int]:
    return locator.evaluate_all("els => els.map(e => Number(e.dataset.id))")


def open_view(page: Page, view: str) -> None:
    box = page.get_by_test_id(f"{view}-box")
    if not box.evaluate("d => d.open"):
        box.locator("summary").click()


def wait_done(page: Page, testid: str, contains: str) -> None:
    status = page.get_by_test_id(testid)
    expect(status).to_contain_text(contains, timeout=COMPUTE_TIMEOUT_MS)
    assert "error" not in (status.get_attribute("class") or ""), status.text_content()


@pytest.fixture
def page(app_page: Page):
    type_text(app_page, TEXT)
    expect(panel(app_page, "o200k_base").get_by_test_id("token").first).to_be_visible()
    yield app_page


# ----- audit ------------------------------------------------------------------------------


def test_audit_view_equals_the_cli(page: Page, tmp_path: Path):
    want = cli("audit", "cl100k_base", "--corpus", "input.txt", files={"input.txt": TEXT}, tmp_path=tmp_path)
    open_view(page, "audit")
    page.get_by_test_id("audit-tokenizer").select_option("cl100k_base")
    page.get_by_test_id("audit-with-text").check()
    page.get_by_test_id("audit-run").click()
    wait_done(page, "audit-status", "cl100k_base: audited")

    counts = [row[1] for row in table_values(page, "audit-counts")]
    lists = ("partial_utf8", "unreachable", "unused", "duplicates")
    assert counts == [want["n_vocab"], sum(want["by_script"].values()), *(len(want[k]) for k in lists)]
    assert table_values(page, "audit-scripts") == [
        [s, n, n / sum(want["by_script"].values())] for s, n in want["by_script"].items()
    ]
    assert ids_of(page.get_by_test_id("audit-longest").get_by_test_id("token-row")) == want["longest"]

    rows = page.get_by_test_id("audit-list").get_by_test_id("token-row")
    for key in ("partial_utf8", "unused"):
        page.get_by_test_id("audit-list-key").select_option(key)
        expect(page.get_by_test_id("audit-list-count")).to_have_attribute("data-total", str(len(want[key])))
        expect(rows).to_have_count(min(100, len(want[key])))
        assert ids_of(rows) == want[key][:100]
    page.get_by_test_id("audit-more").click()
    expect(rows).to_have_count(200)
    assert ids_of(rows) == want["unused"][:200]
    # The search runs in the worker, over the whole list.
    page.get_by_test_id("audit-query").fill("ization")
    from tokenizer import get_encoding

    tok = get_encoding("cl100k_base")
    found = [i for i in want["unused"] if b"ization" in tok.decode_single_token_bytes(i)]
    expect(page.get_by_test_id("audit-list-count")).to_have_attribute("data-total", str(len(found)))
    assert ids_of(rows) == found[:100]
    first = rows.first.get_by_test_id("analysis-token")
    assert first.text_content() == tok.decode_single_token_bytes(found[0]).decode().replace(" ", "·")
    page.get_by_test_id("audit-query").fill("")


def test_audit_view_lists_o200k_unreachable_tokens_as_the_cli(page: Page, tmp_path: Path):
    want = cli("audit", "o200k_base", files={}, tmp_path=tmp_path)
    open_view(page, "audit")
    page.get_by_test_id("audit-tokenizer").select_option("o200k_base")
    page.get_by_test_id("audit-with-text").uncheck()
    page.get_by_test_id("audit-run").click()
    wait_done(page, "audit-status", "o200k_base: audited")
    page.get_by_test_id("audit-list-key").select_option("unreachable")
    rows = page.get_by_test_id("audit-list").get_by_test_id("token-row")
    expect(rows).to_have_count(len(want["unreachable"]))
    assert ids_of(rows) == want["unreachable"] and len(want["unreachable"]) > 0
    assert "unused" not in page.get_by_test_id("audit-list-key").evaluate(
        "s => [...s.options].map(o => o.value)"
    )


# ----- stats, parity, sweep ---------------------------------------------------------------


def test_stats_view_equals_the_cli(page: Page, tmp_path: Path):
    udhr = udhr_slice(8)
    names = ["cl100k_base", "o200k_base"]
    tokenizers = [arg for n in names for arg in ("-t", n)]
    want = cli("stats", "input.txt", *tokenizers, files={"input.txt": TEXT}, tmp_path=tmp_path)
    by_lang = cli(
        "stats", "udhr.txt", *tokenizers, "--by-language", files={"udhr.txt": udhr}, tmp_path=tmp_path
    )
    open_view(page, "stats")
    page.get_by_test_id("stats-udhr").fill(udhr)
    page.get_by_test_id("stats-run").click()
    wait_done(page, "stats-status", "computed")

    shown = table_values(page, "stats-table")
    assert [row[:5] for row in shown] == [
        [r["tokenizer"], r["tokens"], r["bytes"], r["chars"], r["words"]] for r in want["results"]
    ]
    first = want["results"][0]["tokens"]
    for row, r in zip(shown, want["results"], strict=True):
        assert row[5:] == [
            r["bytes"] / r["tokens"],
            r["chars"] / r["tokens"],
            r["tokens"] / r["words"],
            r["tokens"] / first,
        ]
    rows = {(r["tokenizer"], r["code"]): r for r in by_lang["languages"]}
    worst_first = [r["code"] for r in by_lang["languages"] if r["tokenizer"] == names[0]]
    parity = table_values(page, "parity-table")
    assert [row[1] for row in parity] == worst_first
    for row in parity:
        code = row[1]
        assert row[0] == rows[names[0], code]["name"]
        assert row[2:] == [v for n in names for v in (rows[n, code]["tokens"], rows[n, code]["parity"])]
    for chart in ("chart-bpt", "chart-parity"):
        assert page.get_by_test_id(chart).locator("canvas").bounding_box()["height"] > 50


def sweep_cli(sizes: str, tmp_path: Path) -> dict:
    """`stats input.txt -t cl100k_base --sweep SIZES --json` on TEXT."""
    return cli(
        "stats",
        "input.txt",
        "-t",
        "cl100k_base",
        "--sweep",
        sizes,
        files={"input.txt": TEXT},
        tmp_path=tmp_path,
    )


def test_sweep_view_equals_the_cli(page: Page, tmp_path: Path):
    sizes = "300,1000,5000,20000"
    want = sweep_cli(sizes, tmp_path)
    open_view(page, "stats")
    checks = page.get_by_test_id("stats-tokenizers")
    checks.get_by_label("o200k_base").uncheck()
    page.get_by_test_id("sweep-sizes").fill(sizes)
    page.get_by_test_id("sweep-run").click()
    wait_done(page, "sweep-status", "4 sizes")
    data = len(TEXT.encode())
    assert table_values(page, "sweep-table") == [
        ["cl100k_base", r["vocab_size"], r["tokens"], data / r["tokens"]] for r in want["sweep"]
    ]
    page.get_by_test_id("sweep-sizes").fill("1000,500")
    page.get_by_test_id("sweep-run").click()
    expect(page.get_by_test_id("sweep-status")).to_contain_text("strictly increasing")
    checks.get_by_label("o200k_base").check()
    page.get_by_test_id("sweep-sizes").fill("")


def test_a_udhr_file_that_is_not_utf8_is_refused_as_the_cli_refuses_it(page: Page, tmp_path: Path):
    # The file was read with File.text(): a Latin-1 file's accented letters became U+FFFD and its
    # parity was computed on that without a word (the CLI refuses the file).
    latin = tmp_path / "udhr_latin1.txt"
    latin.write_bytes(
        "##### UDHR code=eng lang=en name=English\nAll human beings\n"
        "##### UDHR code=fra lang=fr name=French\nTous les \u00eatres humains\n".encode("latin-1")
    )
    with pytest.raises(subprocess.CalledProcessError) as refused:
        cli("stats", str(latin), "-t", "cl100k_base", "--by-language", files={}, tmp_path=tmp_path)
    assert "byte offset 107" in refused.value.stderr
    open_view(page, "stats")
    page.get_by_test_id("stats-udhr").fill("")
    page.get_by_test_id("stats-udhr-file").set_input_files(latin)
    status = page.get_by_test_id("stats-status")
    expect(status).to_have_text("udhr_latin1.txt: not UTF-8 text (byte offset 107)")
    expect(status).to_have_class("message error")
    expect(page.get_by_test_id("stats-udhr")).to_have_value("")
    good = tmp_path / "udhr_good.txt"
    good.write_text(udhr_slice(2), encoding="utf-8")
    page.get_by_test_id("stats-udhr-file").set_input_files(good)
    expect(page.get_by_test_id("stats-udhr")).to_have_value(udhr_slice(2))
    page.get_by_test_id("stats-udhr").fill("")


def test_a_large_udhr_file_is_used_without_being_put_in_the_box(page: Page, tmp_path: Path):
    # The file's text went into the textarea: 20 MB there made its load a 275 ms task and every
    # later status line or click in the page a 130-515 ms one (the box laid out again).
    udhr = udhr_slice(2) + "All human beings are born free and equal in dignity and rights.\n" * 3000
    assert len(udhr) > 1 << 17  # stats-view.js UDHR_BOX_MAX
    by_lang = cli(
        "stats", "udhr.txt", "-t", "cl100k_base", "--by-language", files={"udhr.txt": udhr}, tmp_path=tmp_path
    )
    open_view(page, "stats")
    checks = page.get_by_test_id("stats-tokenizers")
    checks.get_by_label("cl100k_base").check()
    checks.get_by_label("o200k_base").uncheck()
    box = page.get_by_test_id("stats-udhr")
    page.get_by_test_id("stats-udhr-file").set_input_files(tmp_path / "udhr.txt")
    expect(page.get_by_test_id("stats-status")).to_contain_text("udhr.txt: loaded")
    expect(box).to_have_value("")
    expect(box).to_have_attribute("placeholder", re.compile(r"udhr\.txt \(\d+ characters\) is used"))
    page.get_by_test_id("stats-run").click()
    wait_done(page, "stats-status", "computed")
    parity = table_values(page, "parity-table")
    assert [row[1] for row in parity] == [r["code"] for r in by_lang["languages"]]
    assert [row[2:] for row in parity] == [[r["tokens"], r["parity"]] for r in by_lang["languages"]]
    # Typed text replaces the file, as it would replace a small file's text in the box.
    box.fill("just typed")
    expect(box).not_to_have_attribute("placeholder", re.compile("is used"))
    page.get_by_test_id("stats-run").click()
    expect(page.get_by_test_id("stats-status")).to_contain_text("no '##### UDHR code=")
    box.fill("")
    checks.get_by_label("o200k_base").check()


def test_sweep_sizes_are_read_as_the_cli_reads_them(page: Page, tmp_path: Path):
    # "512," was read as the sizes 512 and 0 ("strictly increasing: 512 then 0"), "1e3" as 1000.
    open_view(page, "stats")
    status = page.get_by_test_id("sweep-status")
    for sizes, item in [("512,", ""), ("512,,1024", ""), ("1e3", "1e3"), ("0x100", "0x100"), ("1.5", "1.5")]:
        with pytest.raises(subprocess.CalledProcessError) as refused:
            sweep_cli(sizes, tmp_path)
        assert f"{item!r} is not an integer" in refused.value.stderr
        page.get_by_test_id("sweep-sizes").fill(sizes)
        page.get_by_test_id("sweep-run").click()
        expect(status).to_have_text(f"{item!r} is not an integer (give e.g. 1000,2000,4000)")
    page.get_by_test_id("sweep-sizes").fill(" 300, 1000 ")
    page.get_by_test_id("sweep-run").click()
    wait_done(page, "sweep-status", "2 sizes")
    page.get_by_test_id("sweep-sizes").fill("")


# ----- vocabulary diff --------------------------------------------------------------------


def test_vocab_diff_view_equals_the_cli(page: Page, tmp_path: Path):
    want = cli("diff", "cl100k_base", "o200k_base", files={}, tmp_path=tmp_path)
    open_view(page, "vdiff")
    page.get_by_test_id("vdiff-a").select_option("cl100k_base")
    page.get_by_test_id("vdiff-b").select_option("o200k_base")
    page.get_by_test_id("vdiff-run").click()
    wait_done(page, "vdiff-status", "A = cl100k_base")
    assert [row[1] for row in table_values(page, "vdiff-table")] == [
        want["common"],
        want["only_a"],
        want["only_b"],
        want["first_difference"],
    ]
    for side in ("a", "b"):
        rows = page.get_by_test_id(f"vdiff-only-{side}").get_by_test_id("token-row")
        assert ids_of(rows) == [e["id"] for e in want[f"examples_only_{side}"]]
        hexes = rows.locator("code").all_text_contents()
        assert [h.replace(" ", "").lower() for h in hexes] == [
            e["hex"] for e in want[f"examples_only_{side}"]
        ]


# ----- plots in light, dark and narrow: screenshots -------------------------------------


@pytest.mark.parametrize(
    "shot, scheme, width", [("light", "light", 1100), ("dark", "dark", 1100), ("narrow", "light", 420)]
)
def test_plots_are_drawn_and_screenshotted(open_page, live_server, shot: str, scheme: str, width: int):
    page = open_page(live_server, "/", color_scheme=scheme, viewport={"width": width, "height": 900})
    type_text(page, TEXT)
    open_view(page, "stats")
    page.get_by_test_id("stats-udhr").fill(udhr_slice(12))
    page.get_by_test_id("stats-run").click()
    wait_done(page, "stats-status", "computed")
    page.get_by_test_id("sweep-run").click()
    wait_done(page, "sweep-status", "sizes")
    for chart in ("chart-bpt", "chart-parity", "chart-sweep"):
        box = page.get_by_test_id(chart).locator("canvas").bounding_box()
        assert box["height"] > 50 and 0 < box["width"] <= width, (chart, box)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width  # no sideways scroll
    path = SCREENSHOTS / f"analysis-{shot}.png"
    if os.environ.get("UPDATE_SCREENSHOTS") or not path.exists():
        SCREENSHOTS.mkdir(exist_ok=True)
        page.get_by_test_id("stats-box").screenshot(path=path)

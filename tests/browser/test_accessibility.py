"""Accessibility: axe-core finds no violations on the real page, in light and in dark mode, with
every section open; and the page can be used with the keyboard alone.

axe-core (npm, node_modules/axe-core) is injected into the page as a script. The server's CSP
forbids inline scripts, as it should, so these tests open their pages with `bypass_csp=True`;
nothing else about the page changes. axe runs with its default rules (WCAG 2.x A/AA and best
practices), so a new rule in a newer axe-core is a new check here, not a silent pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import panel, type_text
from tests.helpers import ROOT

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TEXT = "Accessible: naïve café, 東京 🙂 and\ttabs\nnew line"
# Every focusable control the page shows once all sections are open, as CSS selectors.
CONTROLS = (
    "button:not([disabled]), select:not([disabled]), textarea:not([disabled]), input:not([disabled]), "
    "summary, a[href], [tabindex]:not([tabindex='-1'])"
)


def axe_path() -> Path:
    if not AXE.exists():
        pytest.skip("node_modules/axe-core is missing: run `npm ci`")
    return AXE


def open_everything(page: Page) -> None:
    """Every section of the page open and filled: panels with split view, diff and a third
    panel, the decode box with a result, the merge explorer with a tree and a list, the Learn
    view after a step, the Train panel's list of trained tokenizers, a message."""
    type_text(page, TEXT)
    page.locator("#add-encoding").select_option("gpt2")
    expect(panel(page, "gpt2").get_by_test_id("token").first).to_be_visible()
    page.locator("#opt-split").check()
    page.locator("#opt-diff").check()
    expect(panel(page, "gpt2").get_by_test_id("chunk").first).to_be_visible()

    page.locator("#decode-box summary").click()
    page.get_by_test_id("decode-ids").fill("9906, 1917")
    page.get_by_test_id("decode-run").click()
    expect(page.get_by_test_id("decode-tokens").get_by_test_id("token")).to_have_count(2)

    panel(page, "cl100k_base").get_by_test_id("token").nth(1).click()
    expect(page.get_by_test_id("merge-tree").get_by_test_id("merge-node").first).to_be_visible()
    page.get_by_test_id("merge-encoding").select_option("cl100k_base")
    expect(page.get_by_test_id("merge-row").first).to_be_visible()

    expect(page.get_by_test_id("learn-corpus")).to_be_visible(timeout=30_000)
    page.get_by_test_id("learn-step").click()
    expect(page.get_by_test_id("learn-step-count")).to_have_attribute("data-step", "1")
    page.get_by_test_id("learn-step").click()
    expect(page.get_by_test_id("learn-merges").locator("li")).to_have_count(2)

    open_analysis_views(page)

    saved = page.locator(".train-saved")
    expect(saved).to_be_visible()
    saved.locator("summary").click()
    # The Train form in extension mode ("start from" a reference encoding: "new merges" shows).
    page.get_by_test_id("train-base").select_option("gpt2")
    expect(page.get_by_test_id("train-base-pattern")).to_be_visible()
    page.get_by_test_id("share").click()
    expect(page.get_by_test_id("load-message")).to_be_visible()
    # The tooltip, shown on a token (and kept: the pointer rests there).
    panel(page, "o200k_base").get_by_test_id("token").first.hover()
    expect(page.locator("#tooltip")).to_be_visible()


UDHR = (
    "##### UDHR code=eng lang=en name=English\nAll human beings are born free and equal.\n"
    "##### UDHR code=jpn lang=ja name=Japanese\nすべての人間は、生まれながらにして自由である。\n"
)


def open_analysis_views(page: Page) -> None:
    """The Audit, Stats (with its three plots) and Compare vocabularies views, each with a result."""
    for view in ("audit", "stats", "vdiff"):
        page.get_by_test_id(f"{view}-box").locator("summary").click()
    page.get_by_test_id("audit-run").click()
    expect(page.get_by_test_id("audit-list").get_by_test_id("token-row").first).to_be_visible(timeout=120_000)
    page.get_by_test_id("stats-udhr").fill(UDHR)
    page.get_by_test_id("stats-run").click()
    expect(page.get_by_test_id("chart-parity")).to_be_visible(timeout=60_000)
    page.get_by_test_id("sweep-run").click()
    expect(page.get_by_test_id("chart-sweep")).to_be_visible(timeout=60_000)
    page.get_by_test_id("vdiff-run").click()
    expect(page.get_by_test_id("vdiff-table")).to_be_visible(timeout=60_000)


def axe_violations(page: Page) -> list[dict]:
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_path()))
    return page.evaluate(
        """async () => {
            const result = await axe.run(document);
            return result.violations.map((v) => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
            }));
        }"""
    )


def describe(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}, {len(v['nodes'])} node(s)")
        lines += [f"    {n['target']}: {n['summary']}".replace("\n", " / ") for n in v["nodes"]]
    return "\n".join(lines)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_violations_with_every_section_open(open_page, live_server, scheme: str):
    axe_path()
    page = open_page(
        live_server, "/", color_scheme=scheme, bypass_csp=True, viewport={"width": 1280, "height": 900}
    )
    expect(page.get_by_test_id("learn-corpus")).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("train-pattern").locator("option").first).to_be_attached(timeout=30_000)
    at_start = axe_violations(page)  # as the page boots: the sections closed, nothing typed
    assert not at_start, f"axe-core, {scheme} mode, right after boot:\n{describe(at_start)}"
    open_everything(page)
    violations = axe_violations(page)
    assert not violations, f"axe-core, {scheme} mode, every section open:\n{describe(violations)}"


def test_tab_reaches_every_control_and_arrows_step_in_learn_mode(open_page, live_server):
    page = open_page(live_server, "/", viewport={"width": 1280, "height": 900})
    open_everything(page)
    page.mouse.move(0, 0)
    controls = page.evaluate(
        """(sel) => {
            const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
            const all = [...document.querySelectorAll(sel)].filter(shown);
            all.forEach((e, i) => (e.dataset.a11yIndex = String(i)));
            return all.map((e) => e.outerHTML.slice(0, 80));
        }""",
        CONTROLS,
    )
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    reached: set[str] = set()
    for _ in range(len(controls) * 3):
        page.keyboard.press("Tab")
        index = page.evaluate(
            """() => {
                const a = document.activeElement;
                // The token view hands focus to its first token: that counts as reaching the view.
                const owner = a && (a.dataset.a11yIndex !== undefined ? a : a.closest("[data-a11y-index]"));
                return owner ? owner.dataset.a11yIndex : null;
            }"""
        )
        if index is not None:
            reached.add(index)
        if len(reached) == len(controls):
            break
    missed = [html for i, html in enumerate(controls) if str(i) not in reached]
    assert not missed, f"Tab never reaches {len(missed)} of {len(controls)} controls: {missed}"

    # Learn mode: with focus on a control of the view (not a text field), arrows step.
    count = page.get_by_test_id("learn-step-count")
    expect(count).to_have_attribute("data-step", "2")
    page.get_by_test_id("learn-play").focus()
    page.keyboard.press("ArrowRight")
    expect(count).to_have_attribute("data-step", "3")
    page.keyboard.press("ArrowLeft")
    expect(count).to_have_attribute("data-step", "2")
    page.keyboard.press("ArrowLeft")
    expect(count).to_have_attribute("data-step", "1")
    expect(page.get_by_test_id("learn-play")).to_be_focused()

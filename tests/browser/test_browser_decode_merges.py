"""The playground's decode box and merge explorer, driven through the real page in headless
Chromium and checked against CPython: ids typed into the decode box, a known cl100k_base token's
merge tree, and the merge list's search.

The tests share one booted page and put it back as they found it (the `page` fixture of
tests/browser/conftest.py).
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.pages import DEFAULTS, expected_texts, panel, type_text, wait_ids
from tokenizer import Tokenizer, get_encoding


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

"""The playground's share links, driven through the real page in headless Chromium: a link
round-trips the text and the panels, a link with unknown names or a damaged text says so, a link
opened in a tab already showing the page (hashchange) shows its view, and a text too long for a
link is never put into the address bar except by the share button.

Tests that open a link load their own page; the others share the booted one and put it back
(the `page` fixture of tests/browser/conftest.py).
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.pages import DEFAULTS, drop_files, panel, type_text, wait_ids
from tokenizer import get_encoding


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

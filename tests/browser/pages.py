"""Helpers of the browser tests: reading panels, typing, the request/console guard.

Shared here so that no test file imports another (tests/browser/conftest.py holds the fixtures).
"""

from __future__ import annotations

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect

from tokenizer import get_encoding

BOOT_TIMEOUT_MS = 120_000  # Pyodide boot: 5-7 s here, much more on a loaded CI machine


MULTILINGUAL = (
    "Naïve café façade, Crème brûlée! 東京タワーは333メートル。 Привет, мир. مرحبا بالعالم.\n"
    "Emoji: 🙂👍🏽 👩‍💻 🇯🇵 — and numbers 1234567, tabs\tand  spaces.\n"
)
TYPED = " 世界🙂ü!"  # typed key by key, after the fill

DEFAULTS = ["cl100k_base", "o200k_base"]  # the panels the page opens with
# The view options (checkbox ids) as the page opens: what the playground's tests put back.
OPTIONS = {"opt-whitespace": True, "opt-ids": False, "opt-split": False, "opt-diff": False}


def reset_playground(page: Page) -> None:
    """Put the shared page back as it opened: pointer away (no tooltip), default options, only
    the default panels; the playground's test files call it after each test that shares it."""
    page.mouse.move(0, 0)
    for opt, default in OPTIONS.items():
        page.locator(f"#{opt}").set_checked(default)
    for name in page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)"):
        if name not in DEFAULTS:
            panel(page, name).locator("button.remove").click()
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def panel(page: Page, encoding: str):
    return page.locator(f'[data-testid=panel][data-encoding="{encoding}"]')


def panel_ids(page: Page, encoding: str) -> list[int]:
    return (
        panel(page, encoding)
        .get_by_test_id("token")
        .evaluate_all("els => els.map(e => Number(e.dataset.id))")
    )


def all_panel_ids(page: Page, encoding: str) -> list[int]:
    """Every id of a panel's result, also those outside the window a large result shows
    (render.js puts at most VIEW_TOKENS tokens in the DOM): read from the page's state."""
    return page.evaluate(
        """(enc) => {
            const p = window.__bpe.state.panels.find((p) => p.name === enc);
            return p && p.result ? Array.from(p.result.all.ids) : null;
        }""",
        encoding,
    )


def _difference(page: Page, encoding: str, got: list[int] | None, want: list[int]) -> str:
    """Where a panel's ids part from `want`, and whether the page's text is the one they encode
    (a lost keystroke and a wrong encode fail alike; this tells them apart in a CI log)."""
    if got is None:
        return "the panel has no result"
    at = next(
        (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want))
    )
    page_text = page.evaluate("() => window.__bpe.text.getText()")
    enc = get_encoding(encoding)
    return (
        f"{len(got)} ids, {len(want)} wanted, first difference at id {at}: {got[at : at + 5]} vs "
        f"{want[at : at + 5]}; the page's text is {page_text[-80:]!r}, its ids decode to "
        f"{enc.decode(got)[-80:]!r}, the page's text encodes as wanted: {enc.encode(page_text) == want}, "
        f"panel state {page.evaluate(_PANEL_STATE, encoding)}"
    )


_PANEL_STATE = """(enc) => {
    const p = window.__bpe.state.panels.find((q) => q.name === enc);
    return p ? {state: p.el.dataset.state, inflight: p.inflight, dirty: p.dirty, textVersion: p.textVersion,
                encSerial: p.encSerial, error: p.errorEl.textContent, awaiting: p.awaiting,
                status: document.querySelector("#status").textContent,
                detail: document.querySelector("#boot-detail").textContent} : null;
}"""


def panel_texts(page: Page, encoding: str) -> list[str]:
    return panel(page, encoding).get_by_test_id("token").evaluate_all("els => els.map(e => e.textContent)")


def wait_ids(page: Page, encoding: str, want: list[int], timeout: float = 60_000) -> None:
    """Wait until the panel shows exactly `want` (rendering is async and may come in slices).

    A large result shows a window of its tokens (render.js): then the spans must be `want`'s
    tokens from the window's offset on, and the panel's whole result `want`."""
    try:
        page.wait_for_function(
            """([enc, want]) => {
                const p = document.querySelector(`[data-testid=panel][data-encoding="${enc}"]`);
                const st = window.__bpe.state.panels.find((q) => q.name === enc);
                if (!p || !st || !st.result || st.result.all.ids.length !== want.length) return false;
                // The result of today's text, not an older one that happens to match (the shared
                // page may already show `want` from the previous test, before this one's edits).
                if (st.inflight || st.dirty || st.textVersion !== window.__bpe.text.textVersion()) return false;
                const off = st.result.offset;
                const spans = p.querySelectorAll('[data-testid=token]');
                if (spans.length !== Math.min(want.length - off, st.result.ids.length)) return false;
                for (let i = 0; i < spans.length; i++) if (Number(spans[i].dataset.id) !== want[off + i]) return false;
                return true;
            }""",
            arg=[encoding, want],
            timeout=timeout,
            polling=100,
        )
    except PlaywrightError as e:
        waited = e
    else:
        waited = None
    got = all_panel_ids(page, encoding)
    assert got == want, (
        f"{encoding}: the panel's result differs from CPython; {_difference(page, encoding, got, want)}; "
        f"the wait ended with {waited!r}"
    )
    offset = page.evaluate(
        "(enc) => window.__bpe.state.panels.find((p) => p.name === enc).result.offset", encoding
    )
    shown = panel_ids(page, encoding)
    assert shown == want[offset : offset + len(shown)], f"{encoding}: tokens on the page differ from CPython"


GLYPHS = {" ": "·", "\t": "→", "\r": "␍", "\n": "↵"}


def visible(text: str, *, breaks: bool = False) -> str:
    """web/format.js's visible(): whitespace as glyphs; with breaks, a newline keeps its line break."""
    return "".join("↵\n" if breaks and c == "\n" else GLYPHS.get(c, c) for c in text)


def expected_texts(encoding: str, ids: list[int]) -> list[str]:
    """What each token span must read: its text with visible whitespace, or <HEX BYTES>.

    A newline shows as ↵ followed by a line break; a token's final newline is the break between
    the page's line blocks, so the span itself ends with ↵.
    """
    tok = get_encoding(encoding)
    out = []
    for i in ids:
        b = tok.decode_single_token_bytes(i)
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            out.append("<" + " ".join(f"{x:02X}" for x in b) + ">")
            continue
        out.append(visible(s, breaks=True).removesuffix("\n"))
    return out


def drop_files(page: Page, files: list[dict[str, str]]) -> None:
    """Files ({"name", "text"}) dropped onto the page, as a user drags them from a file manager."""
    page.evaluate(
        """(files) => {
            const dt = new DataTransfer();
            for (const f of files) dt.items.add(new File([f.text], f.name));
            document.querySelector('main').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
        }""",
        files,
    )


def type_text(page: Page, text: str, typed: str = "") -> str:
    box = page.get_by_test_id("input")
    box.fill(text)
    if typed:
        box.press_sequentially(typed)
    return text + typed


class Guard:
    """Collects requests that leave the test server, console errors and page errors."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.external: list[str] = []
        self.errors: list[str] = []

    def attach(self, context, page) -> None:
        def route(r):
            url = r.request.url
            if url.startswith(self.origin + "/") or url.startswith(("data:", "blob:")):
                r.continue_()
            else:
                self.external.append(url)
                r.abort()

        context.route("**/*", route)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.on(
            "console",
            lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None,
        )

    def check(self) -> None:
        external, errors = self.external[:], self.errors[:]
        self.external.clear()
        self.errors.clear()
        assert not external, f"requests left the test server: {external}"
        assert not errors, f"errors in the page: {errors}"

"""Fixtures of the browser tests: the built page (web/dist), a live server, one headless Chromium.

Why session scope everywhere: booting Pyodide costs 5-7 s per fresh browser context, so the
browser tests share one page (`app_page`) and open fresh ones only where a test needs a cold load.
Every page opened here is guarded: a request to anything but the test server fails the test, and
so does any console error or uncaught exception.

Only tests in this folder build web/dist, so unit runs (`pytest tests --ignore tests/browser`)
never do. `BPE_WEB_DIST=/some/dir` builds and serves the page from another folder, so that two
pytest sessions on different code do not race on one web/dist.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.pages import BOOT_TIMEOUT_MS, Guard, reset_playground
from tests.helpers import missing

CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


def find_chromium() -> str | None:
    env = os.environ.get("CHROMIUM")
    if env:
        return env
    for path in CHROMIUM_CANDIDATES:
        if os.path.exists(path):
            return path
    return shutil.which("chromium")


@pytest.fixture(scope="session")
def web_dist() -> Path:
    """web/dist (or $BPE_WEB_DIST), rebuilt now so that no test ever runs a stale wheel."""
    import build_wasm

    out = Path(os.environ.get("BPE_WEB_DIST") or build_wasm.DEFAULT_OUT)
    build_wasm.build(out)
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def _serve(httpd) -> Iterator[str]:
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        thread.join(5)


def _static(folder: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    yield from _serve(httpd)


@pytest.fixture(scope="session")
def static_server(web_dist: Path) -> Iterator[str]:
    """web/dist served as plain files (what `python -m http.server -d web/dist` does)."""
    yield from _static(web_dist)


@pytest.fixture(scope="session")
def live_server(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real server (server.create_app) if it imports, else plain static files."""
    try:
        from server import create_app
    except Exception:  # server.py absent or broken: the page must still work statically
        yield from _static(web_dist)
        return
    from playground.serving import playground_server  # as server.py serves it

    data_dir = tmp_path_factory.mktemp("server-data")
    app = create_app({"WEB_DIR": web_dist, "DATA_DIR": data_dir, "TESTING": True})
    httpd = playground_server("127.0.0.1", 0, app)
    yield from _serve(httpd)


@pytest.fixture(scope="module")
def extend_server(web_dist: Path, tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """(origin, data folder) of a real server on the built page, one per test module (the
    train and extend tests look into its data folder)."""
    from playground import create_app
    from playground.serving import playground_server

    data_dir = tmp_path_factory.mktemp("extend-server-data")
    app = create_app({"WEB_DIR": web_dist, "DATA_DIR": data_dir, "TESTING": True, "TRAIN_WORKERS": 1})
    httpd = playground_server("127.0.0.1", 0, app)
    for origin in _serve(httpd):
        yield origin, data_dir
    app.extensions["bpe_jobs"].shutdown()


@pytest.fixture(scope="session")
def browser():
    chromium = find_chromium()
    if not chromium:
        missing("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def open_page(browser):
    """Factory: a fresh context + page on `origin`, guarded; closed and checked after the test."""
    opened = []

    def _open(origin: str, path: str = "/", *, wait_ready: bool = True, **context_args):
        from playwright.sync_api import expect

        context = browser.new_context(**context_args)
        page = context.new_page()
        guard = Guard(origin)
        guard.attach(context, page)
        opened.append((context, guard))
        page.goto(origin + path)
        if wait_ready:
            expect(page.get_by_test_id("status")).to_have_text("ready", timeout=BOOT_TIMEOUT_MS)
        return page

    yield _open
    for context, guard in opened:
        context.close()
        guard.check()


@pytest.fixture(scope="session")
def _shared(browser, live_server):
    from playwright.sync_api import expect

    context = browser.new_context()
    page = context.new_page()
    guard = Guard(live_server)
    guard.attach(context, page)
    page.goto(live_server + "/")
    expect(page.get_by_test_id("status")).to_have_text("ready", timeout=BOOT_TIMEOUT_MS)
    yield page, guard
    context.close()


@pytest.fixture
def app_page(_shared):
    """The one shared, booted page on the live server; each test's errors are checked after it."""
    page, guard = _shared
    yield page
    guard.check()


@pytest.fixture
def page(app_page):
    """The shared page, put back as it opened after each test (pages.reset_playground: default
    options, only the default panels). The playground's test files use it; a file whose tests
    change other state (Learn mode, the watchdog, ...) defines its own `page`."""
    yield app_page
    reset_playground(app_page)

"""The measurements of bench/browser.py (its docstring says what each one measures and why).

Each function drives the booted page through Playwright and returns plain numbers (milliseconds,
MB/s, counts) for bench/browser.py's report: typing latency, large pastes, the decode box, the
analysis views, worker throughput against CPython, and encoding load formats. Imported by
bench/browser.py only, after it has put the repository on sys.path.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

from tests.helpers import CORPORA
from tokenizer import formats
from tokenizer._batch import PURE_PYTHON_ENV
from tokenizer.encodings import encoding_from_bytes, npm_encoders_dir


def sample_text(n_bytes: int) -> str:
    """Real mixed text: English prose, then UDHR in many scripts, cut to about n_bytes of UTF-8."""
    en = (CORPORA / "taylorswift.txt").read_text(encoding="utf-8")
    multi = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")
    text = en[: n_bytes // 2] + multi[100_000 : 100_000 + n_bytes]
    data = text.encode("utf-8")[:n_bytes]
    return data.decode("utf-8", "ignore")


def text_length(page) -> int:
    """The text's length in UTF-16 units, as the page's render records count it."""
    return page.evaluate("window.__bpe.text.textLength()")


def keystroke(page, key: str, n_panels: int) -> list[dict]:
    """Types one key; the page's render records (input event -> the edit's tokens in the DOM ->
    frame painted) of every panel for the text it makes (a late record of an earlier text, e.g.
    the paste's, is not taken for the keystroke's)."""
    before = page.evaluate("window.__bpe.metrics.renders.length")
    want = text_length(page) + len(key)
    page.keyboard.type(key)
    page.wait_for_function(
        "([n, len, k]) => window.__bpe.metrics.renders.slice(n).filter((r) => r.len === len).length >= k",
        arg=[before, want, n_panels],
        timeout=120_000,
        polling=10,
    )
    return [r for r in page.evaluate(f"window.__bpe.metrics.renders.slice({before})") if r["len"] == want]


def measure_typing(page, size: int, keystrokes: int) -> dict:
    text = sample_text(size)
    box = page.get_by_test_id("input")
    page.evaluate("() => { window.__longtasks = []; }")
    # A paste: set the value + `input` (Playwright's fill() goes through Chrome's insertText
    # editing command, which alone can take seconds for 100 KB and is not the page's work).
    box.evaluate("(el, t) => { el.value = t; el.dispatchEvent(new Event('input', {bubbles: true})); }", text)
    n_panels = page.get_by_test_id("panel").count()
    # Wait until both panels show this text fully (a panel's `rendered` mark alone may still be
    # the previous text's: then the first keystroke was timed with the paste's encode and render).
    panels_done(page, text_length(page))
    box.press("Control+End")
    lat = []
    py_ms = []
    for k in range(keystrokes):
        renders = keystroke(page, "xyz "[k % 4], n_panels)
        lat.append(max(r["ms"] for r in renders))
        py_ms.append(max(r["py_ms"] for r in renders))
        page.wait_for_timeout(30)
    return {
        "bytes": len(text.encode()),
        "keystrokes": keystrokes,
        "median_ms": statistics.median(lat),
        "p90_ms": sorted(lat)[int(0.9 * (len(lat) - 1))],
        "max_ms": max(lat),
        "python_encode_median_ms": statistics.median(py_ms),
        "longest_task_ms": page.evaluate("() => Math.max(0, ...window.__longtasks)"),
    }


def big_text(n_chars: int) -> str:
    """English prose repeated to n_chars characters (about as many bytes)."""
    en = (CORPORA / "pg_en_medium.txt").read_text(encoding="utf-8")
    return (en * (n_chars // len(en) + 1))[:n_chars]


def panels_done(page, length: int, timeout: float = 120_000) -> None:
    page.wait_for_function(
        """(len) => window.__bpe.state.panels.every(
             (p) => p.result && p.result.length === len && p.tokensEl.dataset.rendered)""",
        arg=length,
        timeout=timeout,
        polling=50,
    )


def paste(page, text: str) -> None:
    page.get_by_test_id("input").evaluate(
        "(el, t) => { el.value = t; el.dispatchEvent(new Event('input', {bubbles: true})); }", text
    )


def clipboard_paste(page) -> None:
    """A paste event (as Ctrl+V sends) of window.__pasted into the selected, empty box."""
    page.evaluate(
        """() => {
            const box = document.querySelector('[data-testid=input]');
            box.focus();
            box.select();
            const data = new DataTransfer();
            data.setData('text/plain', window.__pasted);
            box.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
            delete window.__pasted;
        }"""
    )


def paste_large(page, text: str) -> tuple[float, float]:
    """A paste of `text` into the emptied box: ms to the first tokens on screen, s until every
    panel is done."""
    paste(page, "")  # a paste into an empty box, as on a fresh page
    panels_done(page, 0)
    # Handing the page 5 MB through Playwright is a long task of its own: done before measuring.
    page.evaluate("(t) => { window.__pasted = t; }", text)
    page.evaluate("() => { window.__longtasks = []; }")
    before = page.evaluate("window.__bpe.metrics.renders.length")
    t = time.perf_counter()
    clipboard_paste(page)
    page.wait_for_function(
        "([n, len]) => window.__bpe.metrics.renders.slice(n).filter(r => r.len === len).length >= 1",
        arg=[before, len(text)],
        timeout=120_000,
        polling=10,
    )
    first = min(r["ms"] for r in page.evaluate(f"window.__bpe.metrics.renders.slice({before})"))
    panels_done(page, len(text))
    return first, time.perf_counter() - t


CARET_PAUSE_MS = 300  # a click (caret moved) to the first key typed; render.js follows the caret in 120 ms


def measure_large(page, size: int) -> dict:
    """A paste of `size` characters: first tokens, longest task, DOM size; then keystrokes."""
    text = big_text(size)
    first, done_s = paste_large(page, text)
    n_panels = page.get_by_test_id("panel").count()
    out = {
        "chars": len(text),
        "first_tokens_ms": first,
        "all_panels_done_s": done_s,
        "paste_longest_task_ms": page.evaluate("() => Math.max(0, ...window.__longtasks)"),
        "dom_elements": page.evaluate("document.getElementsByTagName('*').length"),
    }
    # The box holds a window of a long text (web/textbox.js): place the caret through the page.
    # A key at once after a far caret jump: the panels' token windows jump with the edit.
    page.evaluate("() => { window.__longtasks = []; }")
    page.evaluate("(m) => window.__bpe.text.moveCaret(m)", len(text) // 3)
    out["jump_keystroke_ms"] = max(r["ms"] for r in keystroke(page, "j", n_panels))
    # Keystrokes in the middle of the text, CARET_PAUSE_MS after the caret got there: a click
    # and the first key are that far apart at least, and the token windows follow the caret.
    page.evaluate("(m) => window.__bpe.text.moveCaret(m)", len(text) // 2)
    page.wait_for_timeout(CARET_PAUSE_MS)
    lat = []
    for k in range(5):
        lat.append(max(r["ms"] for r in keystroke(page, "xyz "[k % 4], n_panels)))
        page.wait_for_timeout(100)
    out["keystroke_median_ms"] = statistics.median(lat)
    out["keystroke_max_ms"] = max(lat)
    out["keystroke_longest_task_ms"] = page.evaluate("() => Math.max(0, ...window.__longtasks)")
    return out


def measure_paste_js(page, size: int, rounds: int) -> list[dict]:
    """The 1 MB paste's first tokens with the JavaScript batch merge off and on, interleaved,
    each with empty chunk caches (its tables were built while the page was idle)."""
    text = big_text(size)
    out = []
    for _ in range(rounds):
        for js in (False, True):
            page.evaluate("(js) => window.__bpe.rpc('merge_stats', {enabled: js})", js)
            page.evaluate("() => window.__bpe.rpc('forget_chunks', {})")
            first, done_s = paste_large(page, text)
            out.append({"chars": size, "js_merge": js, "first_tokens_ms": first, "all_panels_done_s": done_s})
    page.evaluate("() => window.__bpe.rpc('merge_stats', {enabled: true})")
    return out


def measure_decode_box(page, n_ids: int = 200_000) -> dict:
    """n_ids ids pasted into the decode box and decoded: time to the output, longest task."""
    ids = ", ".join(str((i * 7919) % 50000) for i in range(n_ids))
    if not page.locator("#decode-box").evaluate("(d) => d.open"):
        page.locator("#decode-box summary").click()
    page.get_by_test_id("decode-encoding").select_option("cl100k_base")
    page.evaluate("() => { window.__longtasks = []; }")
    ms = page.evaluate(
        """(ids) => new Promise((resolve) => {
            const box = document.querySelector('[data-testid=decode-ids]');
            const out = document.querySelector('[data-testid=decode-output]');
            const t = performance.now();
            box.value = ids;
            box.dispatchEvent(new Event('input', {bubbles: true}));
            document.querySelector('[data-testid=decode-run]').click();
            // io.js marks the output aria-busy while it parses, decodes and renders.
            const poll = () => out.getAttribute('aria-busy') !== 'true' && out.textContent
                ? resolve(performance.now() - t) : setTimeout(poll, 10);
            setTimeout(poll, 0);
        })""",
        ids,
    )
    return {
        "ids": n_ids,
        "decode_ms": ms,
        "longest_task_ms": page.evaluate("() => Math.max(0, ...window.__longtasks)"),
    }


def measure_analysis(page) -> list[dict]:
    """Issue 14: the Audit, Stats (with the sweep plot) and Compare-vocabularies views on the
    reference encodings: wall time to the result and the longest main-thread task meanwhile."""
    udhr = (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")
    udhr = udhr[: udhr.find("##### UDHR", 60_000)]  # whole languages, about 60 KB
    paste(page, big_text(20_000))
    panels_done(page, 20_000)

    def run(view: str, label: str, prepare, button: str, status: str, done: str) -> dict:
        box = page.get_by_test_id(f"{view}-box")
        if not box.evaluate("d => d.open"):
            box.locator("summary").click()
        prepare()
        page.evaluate("() => { window.__longtasks = []; }")
        t = time.perf_counter()
        page.get_by_test_id(button).click()
        page.wait_for_function(
            "([id, done]) => (document.querySelector(`[data-testid=${id}]`)?.textContent || '').includes(done)",
            arg=[status, done],
            timeout=300_000,
            polling=50,
        )
        page.wait_for_timeout(300)  # the plots draw after the text says done
        return {
            "view": label,
            "s": time.perf_counter() - t,
            "longest_task_ms": page.evaluate("() => Math.max(0, ...window.__longtasks)"),
        }

    def audit(name: str):
        def prepare():
            page.get_by_test_id("audit-tokenizer").select_option(name)
            page.get_by_test_id("audit-with-text").check()

        return prepare

    def stats():
        page.get_by_test_id("stats-udhr").fill(udhr)

    def vdiff():
        page.get_by_test_id("vdiff-a").select_option("cl100k_base")
        page.get_by_test_id("vdiff-b").select_option("o200k_base")

    return [
        run(
            "audit",
            "audit o200k_base (with the text)",
            audit("o200k_base"),
            "audit-run",
            "audit-status",
            "audited",
        ),
        run(
            "audit",
            "audit cl100k_base (with the text)",
            audit("cl100k_base"),
            "audit-run",
            "audit-status",
            "audited",
        ),
        run("stats", "stats, both, 60 KB UDHR by language", stats, "stats-run", "stats-status", "computed"),
        run("stats", "sweep, both (plot)", lambda: None, "sweep-run", "sweep-status", "sizes"),
        run(
            "vdiff",
            "vocabulary diff cl100k_base vs o200k_base",
            vdiff,
            "vdiff-run",
            "vdiff-status",
            "A = cl100k_base",
        ),
    ]


def measure_throughput(page, name: str, label: str, text: str, *, rounds: int = 2) -> dict:
    """Worker encode (time inside Python, empty chunk caches) with the JavaScript batch merge off
    (the Python loop, as before it was wired in) and on, interleaved `rounds` times; CPython
    with a fresh encoding, same code (no numpy) and with numpy. Best of each."""
    data_len = len(text.encode())
    runs: dict[bool, list[dict]] = {False: [], True: []}
    for _ in range(rounds):
        for js in (False, True):
            runs[js].append(
                page.evaluate(
                    """async ([name, text, js]) => {
                        await window.__bpe.rpc('merge_stats', {enabled: js});
                        await window.__bpe.rpc('forget_chunks', {});
                        const t = performance.now();
                        const r = await window.__bpe.rpc('encode', {name, text});
                        return {rt: performance.now() - t, py: r.ms, n: r.ids.length};
                    }""",
                    [name, text, js],
                )
            )
    page.evaluate("() => window.__bpe.rpc('merge_stats', {enabled: true})")
    off = min(runs[False], key=lambda r: r["py"])
    res = min(runs[True], key=lambda r: r["py"])
    cpy_ms, n_ids = min(_cpython_ms(name, text, pure=True) for _ in range(rounds))  # the worker's code
    assert n_ids == res["n"] == off["n"], (name, n_ids, res["n"], off["n"])
    batch_ms, _ = _cpython_ms(name, text, pure=False)
    return {
        "encoding": name,
        "text": label,
        "bytes": data_len,
        "tokens": res["n"],
        "worker_MBps": data_len / 1e6 / (res["py"] / 1000),
        "worker_python_loop_MBps": data_len / 1e6 / (off["py"] / 1000),
        "worker_roundtrip_MBps": data_len / 1e6 / (res["rt"] / 1000),
        "cpython_MBps": data_len / 1e6 / (cpy_ms / 1000),
        "cpython_numpy_MBps": data_len / 1e6 / (batch_ms / 1000),
    }


def _cpython_ms(name: str, text: str, *, pure: bool) -> tuple[float, int]:
    """One encode in this process with a fresh encoding (an empty chunk cache, as the worker's);
    pure: without numpy's batch merge (BPE_PURE_PYTHON), the code the worker runs."""
    from tokenizer.encodings import DATA_DIR

    fresh = encoding_from_bytes((DATA_DIR / f"{name}.bpe").read_bytes())
    saved = os.environ.get(PURE_PYTHON_ENV)
    os.environ[PURE_PYTHON_ENV] = "1" if pure else ""
    try:
        t = time.perf_counter()
        ids = fresh.encode(text, allowed_special="all")
        return (time.perf_counter() - t) * 1000, len(ids)
    finally:
        if saved is None:
            del os.environ[PURE_PYTHON_ENV]
        else:
            os.environ[PURE_PYTHON_ENV] = saved


def measure_formats(page, dist: Path) -> list[dict]:
    bench_dir = dist / "bench"
    bench_dir.mkdir(exist_ok=True)
    name = "cl100k_base"
    npm_json = (npm_encoders_dir() / f"{name}.json").read_bytes()
    (bench_dir / f"{name}.json").write_bytes(npm_json)
    manifest = json.loads((dist / "manifest.json").read_text())
    blob = (dist / manifest["encodings"][name]["file"]).read_bytes()
    tok = encoding_from_bytes(blob)
    (bench_dir / f"{name}.tiktoken").write_text(formats.dump_tiktoken(tok.mergeable_ranks))
    (bench_dir / f"{name}.bpe").write_bytes(blob)
    out = []
    for fmt, file in (("json", f"{name}.json"), ("tiktoken", f"{name}.tiktoken"), ("blob", f"{name}.bpe")):
        runs = []
        for _ in range(3):
            runs.append(
                page.evaluate(
                    "([f, u, n]) => window.__bpe.rpc('bench_load', {format: f, url: u, encoding: n})",
                    [fmt, f"bench/{file}", name],
                )
            )
        best = min(runs, key=lambda r: r["parse_ms"])
        out.append(
            {
                "format": fmt,
                "bytes": best["bytes"],
                "parse_ms": best["parse_ms"],
                "fetch_ms": best["fetch_ms"],
                "n": best["n"],
            }
        )
    return out

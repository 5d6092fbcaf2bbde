"""The Train section's "start from" a tokenizer loaded from disk, in headless Chromium.

A tokenizer's two files (.tiktoken + .json, trained here with GPT-2's split and a special token)
are dropped onto the page, which shows them as a panel; the Train section then offers that panel
as a base ("loaded file"), uploads the very files on Extend, and puts the result right after the
base's panel. Its ids equal those of `python -m tokenizer extend` on the same files and corpus
(the CLI, run as a user would), on the page and in the file the server stored.

The server is conftest's `extend_server` (its data folder is known); the page is guarded as
conftest's are: nothing leaves the server, no console or page errors.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from playwright.sync_api import expect

from tests.browser.pages import drop_files, panel, wait_ids
from tests.helpers import CORPORA
from tokenizer import Tokenizer, train

ROOT = Path(__file__).resolve().parents[2]
BASE = "swift300"
NAME = "swift300-code"
ADD = 20
CORPUS = (CORPORA / "code_python.txt").read_text(encoding="utf-8")[:4000]
PROBE = "def tokenize_all(texts):\n    return [tokenize(text) for text in texts]  <|end|>\n"
DONE_TIMEOUT_MS = 120_000


def cli_extend(base: Path, corpus: Path, out: Path) -> Tokenizer:
    """`python -m tokenizer extend BASE CORPUS --add ADD -o OUT`, as a user runs it."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tokenizer",
            "extend",
            str(base),
            str(corpus),
            "--add",
            str(ADD),
            "-q",
            "-o",
            str(out),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return Tokenizer.load(out)


def test_extend_a_tokenizer_loaded_from_disk(open_page, extend_server, tmp_path):
    origin, data_dir = extend_server
    base_tok = train(CORPORA.joinpath("taylorswift.txt").read_text(encoding="utf-8")[:20_000], 300,
                     pattern="gpt2", special_tokens=["<|end|>"], name=BASE)  # fmt: skip
    base_tok.save(tmp_path / BASE)
    base_files = [tmp_path / f"{BASE}.tiktoken", tmp_path / f"{BASE}.json"]
    (tmp_path / "pasted.txt").write_text(CORPUS, encoding="utf-8", newline="")
    want = cli_extend(tmp_path / BASE, tmp_path / "pasted.txt", tmp_path / "cli")
    assert want.metadata["extension"]["added"] == ADD

    page = open_page(origin)
    expect(page.get_by_test_id("train-start")).to_be_enabled(timeout=30_000)
    drop_files(page, [{"name": p.name, "text": p.read_text(encoding="utf-8")} for p in base_files])
    expect(panel(page, BASE)).to_be_visible()

    # The loaded panel is a "start from" choice that says it is a loaded file.
    base = page.get_by_test_id("train-base")
    option = base.locator("optgroup[label='loaded from files'] option")
    expect(option).to_have_text([f"{BASE} (loaded file: {BASE}.tiktoken + {BASE}.json)"])
    base.select_option(f"file:{BASE}")
    expect(page.get_by_test_id("train-base-pattern")).to_have_text("gpt2 (the base's)")
    expect(page.get_by_test_id("train-vocab")).to_be_hidden()
    page.get_by_test_id("train-add").fill(str(ADD))
    page.get_by_test_id("train-text").fill(CORPUS)
    page.get_by_test_id("train-name").fill(NAME)
    page.get_by_test_id("train-start").click()
    status = page.get_by_test_id("train-status")
    expect(status).to_contain_text("added to the comparison", timeout=DONE_TIMEOUT_MS)
    expect(status).to_contain_text(f"extended {NAME}: {BASE} ({BASE}.tiktoken + {BASE}.json) + {ADD} merges")
    expect(page.get_by_test_id("train-error")).to_be_hidden()

    # Right after its base's panel, with the CLI's ids; the stored files are the CLI's tokenizer.
    names = page.evaluate("() => window.__bpe.app.listTokenizers()")
    assert names[names.index(BASE) + 1] == NAME, names
    page.get_by_test_id("input").fill(PROBE)
    ids = want.encode(PROBE, allowed_special="all")
    assert any(i >= base_tok.n_vocab for i in ids), ids  # the probe uses new tokens
    wait_ids(page, NAME, ids)
    wait_ids(page, BASE, base_tok.encode(PROBE, allowed_special="all"))
    stored = Tokenizer.load(data_dir / NAME)
    assert stored.mergeable_ranks == want.mergeable_ranks
    assert stored.special_tokens == want.special_tokens == base_tok.special_tokens
    assert stored.metadata["extension"]["base_files"] == [f"{BASE}.tiktoken", f"{BASE}.json"]

    # The choice follows the panel: still offered after the job, gone with the panel.
    expect(option).to_have_count(1)
    panel(page, BASE).get_by_role("button", name="remove this panel").click()
    expect(option).to_have_count(0)
    expect(base).to_have_value("")
    expect(page.get_by_test_id("train-start")).to_have_text("Train")

"""Dropping Hugging Face tokenizer.json files on the page: RoBERTa's and Qwen2's shapes load and
give HF's ids (through the library in Pyodide); a file we cannot reproduce is refused by name.

The files are trained here with HF `tokenizers` itself; the ids the panel shows are compared
with `encode(text, add_special_tokens=False)`.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import DEFAULTS, drop_files, panel, type_text, wait_ids
from tests.helpers import corpus_text

hf = pytest.importorskip("tokenizers")
from tokenizers import models, normalizers, pre_tokenizers, trainers  # noqa: E402

QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _trained(pre, normalizer=None) -> hf.Tokenizer:
    tok = hf.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre
    if normalizer is not None:
        tok.normalizer = normalizer
    trainer = trainers.BpeTrainer(
        vocab_size=700, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(
        [corpus_text("taylorswift.txt", 30_000) + corpus_text("udhr_sample.txt", 20_000)], trainer
    )
    return tok


@pytest.fixture
def page(app_page: Page):
    yield app_page
    for name in app_page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)"):
        if name in ("roberta", "qwen2", "neox"):
            panel(app_page, name).locator("button.remove").click()
    expect(app_page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_roberta_and_qwen2_files_give_hf_ids_and_a_lowercasing_one_is_refused(page: Page):
    roberta = _trained(pre_tokenizers.ByteLevel(add_prefix_space=True))
    qwen2 = _trained(
        pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(hf.Regex(QWEN2), "isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        ),
        normalizers.NFC(),
    )
    for name, tok in (("roberta", roberta), ("qwen2", qwen2)):
        drop_files(page, [{"name": f"{name}.json", "text": tok.to_str()}])
        expect(page.get_by_test_id("load-message")).to_contain_text(f"loaded {name}")
    text = type_text(page, "Hello world: cafe\u0301 \u212b \uf900, Taylor's 1989 tour", " and e\u0301 more")
    for name, tok in (("roberta", roberta), ("qwen2", qwen2)):
        wait_ids(page, name, tok.encode(text, add_special_tokens=False).ids)

    lower = hf.Tokenizer(models.BPE())
    lower.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    lower.normalizer = normalizers.Lowercase()
    drop_files(page, [{"name": "lowercase.json", "text": lower.to_str()}])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_contain_text("lowercase.json: normalizer 'Lowercase' is not supported")
    expect(msg).to_have_class("message error")
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS) + 2)


def test_added_tokens_that_are_not_special_give_hf_ids_in_every_mode(page: Page):
    """GPT-NeoX-style runs of spaces added with "special": false: HF matches them in any text.
    They were special tokens to us, so the page's "raise" choice refused indented code and
    "text" encoded them as text; every choice now shows HF's ids, and only a real special
    token is refused."""
    from tokenizers import AddedToken

    neox = _trained(pre_tokenizers.ByteLevel(add_prefix_space=False))
    neox.add_tokens([AddedToken(" " * n, normalized=True) for n in (2, 4, 8)])
    neox.add_special_tokens(["<|endoftext|>"])
    drop_files(page, [{"name": "neox.json", "text": neox.to_str()}])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded neox")
    text = type_text(page, "def f(x):\n        return  x\n    pass", "")
    want = neox.encode(text, add_special_tokens=False).ids
    choice = page.get_by_test_id("opt-special")
    for mode in ("allow", "text", "raise"):
        choice.select_option(mode)
        wait_ids(page, "neox", want)
    box = page.get_by_test_id("input")
    box.press("End")
    box.press_sequentially("<|endoftext|>")
    expect(panel(page, "neox")).to_have_attribute("data-state", "error")
    choice.select_option("allow")

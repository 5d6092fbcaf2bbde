"""Loading a tokenizer from disk into the playground, driven through the real page in headless
Chromium: a .tiktoken with its .json (chosen or dropped), a HF tokenizer.json, a minbpe .model,
a lone .tiktoken; and every refusal (bad, empty, non-UTF-8 or doubled files) said in words, with
the other files still loaded; a loaded tokenizer whose name is an object key ("toString") is
left out of share links. The ids are checked against CPython's encoder of the same files.

The tests share one booted page and put it back as they found it (the `page` fixture of
tests/browser/conftest.py); the tokenizer they load is trained once a module (`trained`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import DEFAULTS, drop_files, panel_texts, type_text, visible, wait_ids
from tests.helpers import CORPORA
from tokenizer import Tokenizer


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Tokenizer, Path]:
    from tokenizer import train

    text = (CORPORA / "taylorswift.txt").read_text(encoding="utf-8")[:40_000]
    tok = train(text, 400, pattern="gpt4", special_tokens=["<|end|>"], name="swift400")
    folder = tmp_path_factory.mktemp("tok")
    tok.save(folder / "swift400")
    return tok, folder


def test_load_tiktoken_and_json_from_disk(page: Page, trained):
    tok, folder = trained
    page.get_by_test_id("load-files").set_input_files(
        [folder / "swift400.tiktoken", folder / "swift400.json"]
    )
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded swift400")
    text = type_text(page, "Taylor Swift's albums sold 50 million copies. 東京")
    wait_ids(page, "swift400", tok.encode(text))
    assert panel_texts(page, "swift400") == [
        t
        for t in (
            "<" + " ".join(f"{b:02X}" for b in tok.decode_single_token_bytes(i)) + ">"
            if not _valid(tok.decode_single_token_bytes(i))
            else visible(tok.decode_single_token_bytes(i).decode())
            for i in tok.encode(text)
        )
    ]


def _valid(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_drop_files_onto_the_page(page: Page, trained):
    tok, folder = trained
    files = [
        {"name": "swift400.tiktoken", "text": (folder / "swift400.tiktoken").read_text()},
        {"name": "swift400.json", "text": (folder / "swift400.json").read_text()},
    ]
    drop_files(page, files)
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS) + 1)
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded swift400")
    name = page.get_by_test_id("panel").evaluate_all("els => els.map(e => e.dataset.encoding)")[-1]
    assert name.startswith("swift400")
    text = type_text(page, "Swift dropped a file")
    wait_ids(page, name, tok.encode(text))


def test_bad_files_give_a_clear_message(page: Page, tmp_path):
    bad = tmp_path / "broken.tiktoken"
    bad.write_text("aGVsbG8= 0\nthis is not base64 at all\n")
    page.get_by_test_id("load-files").set_input_files([bad])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_contain_text("broken.tiktoken:2")
    expect(msg).to_have_class("message error")
    short = tmp_path / "short.tiktoken"
    short.write_text("aGVsbG8= 0\n")
    page.get_by_test_id("load-files").set_input_files([short])
    expect(msg).to_contain_text("256")  # a byte-level BPE needs all 256 single bytes
    other = tmp_path / "notes.txt"
    other.write_text("hi")
    page.get_by_test_id("load-files").set_input_files([other])
    expect(msg).to_contain_text(
        "expected a .tiktoken, .json (ours or a Hugging Face tokenizer.json) or minbpe .model"
    )
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_two_files_of_one_kind_for_one_tokenizer_are_refused(page: Page, trained):
    # a.json and a.JSON (or two folders' a.json) in one drop: the later one was loaded, silently
    _, folder = trained
    text = (folder / "swift400.json").read_text()
    drop_files(page, [{"name": "swift400.json", "text": text}, {"name": "swift400.JSON", "text": text}])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_contain_text(
        "swift400.json and swift400.JSON: two .json files for swift400; load them one at a time"
    )
    expect(msg).to_have_class("message error")
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_a_refused_file_does_not_stop_the_others(page: Page, trained):
    # The first refusal ended the loop: "after.json" was never loaded, and neither it nor
    # "before.json" (loaded, with a panel) was named in the message.
    tok, folder = trained
    meta = json.loads((folder / "swift400.json").read_text())
    files = [{"name": "bad.json", "text": "{nope"}]
    for name in ("before", "after"):
        files.insert(
            0 if name == "before" else 2, {"name": f"{name}.json", "text": json.dumps({**meta, "name": name})}
        )
    drop_files(page, files)
    msg = page.get_by_test_id("load-message")
    expect(msg).to_have_text(
        re.compile(
            r"^bad: bad\.json:1: invalid JSON: .*; loaded before \(401 ids\); loaded after \(401 ids\)$"
        )
    )
    expect(msg).to_have_class("message error")
    wait_ids(page, "after", tok.encode(type_text(page, "after the refusal")))


def test_a_file_that_is_not_utf8_is_refused_as_on_the_command_line(page: Page, tmp_path):
    """file.text() read the Latin-1 é as U+FFFD, and the .model loaded with a special token
    'caf\ufffd'; the command line refuses it. A byte-order mark reaches the library too."""
    from tokenizer.loading import load_any

    latin1 = tmp_path / "latin1.model"
    latin1.write_bytes(b"minbpe v1\n\n1\ncaf\xe9 256\n")
    bom = tmp_path / "bom.model"
    bom.write_bytes(b"\xef\xbb\xbfminbpe v1\n\n0\n")
    msg = page.get_by_test_id("load-message")
    for path in (latin1, bom):
        with pytest.raises(ValueError) as cli:
            load_any(str(path))
        assert path.name in str(cli.value)
        page.get_by_test_id("load-files").set_input_files([path])
        expect(msg).to_have_class("message error")
        expect(msg).to_contain_text(str(cli.value).replace(str(tmp_path) + "/", ""))
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_an_error_in_the_tiktoken_of_a_pair_names_the_tiktoken(page: Page, trained, tmp_path):
    # The page sent the pair with one file name, the .json's: a damaged .tiktoken was reported
    # as "swift400.json:401: expected 'BASE64 RANK'".
    _, folder = trained
    ranks = (folder / "swift400.tiktoken").read_text(encoding="ascii")
    (tmp_path / "swift400.tiktoken").write_text(ranks.rsplit(" ", 1)[0], encoding="ascii")
    page.get_by_test_id("load-files").set_input_files(
        [tmp_path / "swift400.tiktoken", folder / "swift400.json"]
    )
    msg = page.get_by_test_id("load-message")
    expect(msg).to_have_class("message error")
    expect(msg).to_contain_text(re.compile(r"swift400\.tiktoken:\d+: expected 'BASE64 RANK'"))
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_an_empty_file_is_refused_as_empty(page: Page):
    # An empty file's text "" was sent as no file: "ValueError: no file given".
    msg = page.get_by_test_id("load-message")
    for name, says in [
        ("void.tiktoken", "void.tiktoken: no tokens in file"),
        ("void.json", "void.json:1: invalid JSON"),
    ]:
        drop_files(page, [{"name": name, "text": ""}])
        expect(msg).to_contain_text(says)
        expect(msg).to_have_class("message error")
    expect(page.get_by_test_id("panel")).to_have_count(len(DEFAULTS))


def test_the_librarys_refusals_read_without_pythons_class_names(page: Page):
    # They read "nope: tokenizer.validate.TokenizerFileError: nope.json:1: invalid JSON: ..." and
    # "ValueError: unknown token id ...": the library's message is the whole message.
    drop_files(page, [{"name": "nope.json", "text": "{nope"}])
    msg = page.get_by_test_id("load-message")
    expect(msg).to_have_text(re.compile(r"^nope: nope\.json:1: invalid JSON: "))
    page.locator("#decode-box summary").click()
    page.get_by_test_id("decode-encoding").select_option("cl100k_base")
    page.get_by_test_id("decode-ids").fill("100256")
    page.get_by_test_id("decode-run").click()
    expect(page.get_by_test_id("decode-output")).to_have_text(re.compile(r"^unknown token id 100256: "))
    page.locator("#decode-box summary").click()


def test_load_hugging_face_tokenizer_json(page: Page, trained, tmp_path):
    hf_export = pytest.importorskip("tokenizer.hf_export")
    tok, _ = trained
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(hf_export.to_hf_json(tok)))
    page.get_by_test_id("load-files").set_input_files([path])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded tokenizer")
    text = type_text(page, "Hugging Face format, same ids: Taylor's 1989 tour")
    wait_ids(page, "tokenizer", tok.encode(text))


def test_our_json_whose_metadata_names_a_model_is_read_as_ours(page: Page, trained, tmp_path):
    # The page guessed a Hugging Face file from a '"model":' in the first 4 KB of the text, and
    # refused this one ("model None is not supported") where the library loads it.
    tok, folder = trained
    meta = json.loads((folder / "swift400.json").read_text())
    meta["name"] = "swiftmeta"
    meta["metadata"] = {"model": "my-llm"}
    path = tmp_path / "swiftmeta.json"
    path.write_text(json.dumps(meta), encoding="utf-8")
    page.get_by_test_id("load-files").set_input_files([path])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded swiftmeta")
    text = type_text(page, "a model in the metadata: Taylor's 1989 tour")
    wait_ids(page, "swiftmeta", Tokenizer.load(path).encode(text))


def test_a_lone_tiktoken_says_which_split_pattern_it_gets(page: Page, trained, tmp_path):
    # A .tiktoken holds no pattern: alone it is split with gpt4's, and tiktoken's own
    # r50k_base.tiktoken (gpt2's pattern) gave other ids than r50k_base without a word.
    tok, folder = trained
    path = tmp_path / "ranks.tiktoken"
    path.write_text((folder / "swift400.tiktoken").read_text())
    page.get_by_test_id("load-files").set_input_files([path])
    expect(page.get_by_test_id("load-message")).to_have_text(
        "loaded ranks (400 ids) with the gpt4 split pattern: a .tiktoken file holds no pattern "
        "(or special tokens); load it together with its .json for its own"
    )


def test_load_minbpe_model(page: Page, trained, tmp_path):
    """A minbpe .model (from the file picker, then dropped) gives the library's ids; with its
    .tiktoken beside it the page says to load it alone."""
    from tokenizer.formats import minbpe_text

    tok, folder = trained
    path = tmp_path / "swiftmodel.model"
    path.write_text(minbpe_text(tok), encoding="utf-8")
    loaded = Tokenizer.load(path)
    page.get_by_test_id("load-files").set_input_files([path])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded swiftmodel")
    text = type_text(page, "minbpe's format, same ids: Taylor's 1989 tour 東京")
    assert loaded.encode(text) == tok.encode(text)
    wait_ids(page, "swiftmodel", loaded.encode(text))
    drop_files(
        page,
        [
            {"name": "swiftmodel.model", "text": path.read_text()},
            {"name": "swiftmodel.tiktoken", "text": "x"},
        ],
    )
    expect(page.get_by_test_id("load-message")).to_contain_text("load swiftmodel.model on its own")


def test_a_loaded_tokenizer_named_like_an_object_key_is_not_shared(page: Page, trained):
    # "toString" in {...} is true: the link named the loaded tokenizer as a reference encoding.
    tok, folder = trained
    meta = json.loads((folder / "swift400.json").read_text())
    meta["name"] = "toString"
    drop_files(page, [{"name": "toString.json", "text": json.dumps(meta)}])
    expect(page.get_by_test_id("load-message")).to_contain_text("loaded toString")
    wait_ids(page, "toString", tok.encode(type_text(page, "shared, or not")))
    page.get_by_test_id("share").click()
    assert page.evaluate("() => location.hash").startswith("#enc=cl100k_base%2Co200k_base&text=")

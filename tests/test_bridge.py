"""The worker's Python side (tokenizer.web.bridge) in CPython: encode, split and decode answer
what the library's own encode / split / decode answer, edit by edit as the page sends them.

The page's worker (web/worker.js) only forwards messages to these functions and views their
bytes as typed arrays, so what is checked here is what the page shows; tests/browser checks the
same module under Pyodide. JavaScript arguments reach the bridge as Pyodide proxies, faked in
tests/helpers.py (JsUint8Array, JsArray, JsTypedArray). The user's files, merges and Learn mode
are in test_bridge_files.py, the analysis views in test_bridge_analysis.py.
"""

from __future__ import annotations

import json
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import BRIDGE_ENCODINGS as ENCODINGS
from tests.helpers import JsArray, JsTypedArray, int32s
from tokenizer import formats, get_encoding
from tokenizer.core import Tokenizer
from tokenizer.stats import well_formed
from tokenizer.web import bridge

# The reference encodings are loaded into the bridge first, as the page's worker loads them.
pytestmark = pytest.mark.usefixtures("reference_encodings")


TEXTS = [
    "",
    "hello world",
    "Hello, DON'T   stop 12345 \n\n\t x",
    "東京 🙂 👩‍💻 naïve δέλτα",
    "a<|endoftext|>b",  # special tokens are allowed: the page shows them as one token
    "lone \ud800 surrogate",  # no UTF-8 for the text: the bytes are rebuilt from the tokens
]


# ----- encode / split / decode = the library's ------------------------------------------


def check_encode(name: str, text: str) -> None:
    tok = get_encoding(name)
    ids, lens, data, ms = bridge.encode(name, text)
    want = tok.encode(text, allowed_special="all")
    assert int32s(ids) == want
    parts = tok.decode_tokens_bytes(want)
    assert int32s(lens) == [len(p) for p in parts]
    assert data == b"".join(parts)
    assert isinstance(ms, float) and ms >= 0


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("text", TEXTS)
def test_encode_is_the_librarys_ids_lengths_and_bytes(name, text):
    check_encode(name, text)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=60))
def test_encode_any_text(text):
    for name in ENCODINGS:
        check_encode(name, text)


class PanelModel:
    """What panels.js keeps: ids, lens and bytes, patched with encode_edit's answers."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.lens: list[int] = []
        self.serial = 0
        self.text = ""

    def show(self, name: str, text: str, *, base: int | None = None) -> bool:
        answer = bridge.encode_edit(name, "panel", text, self.serial if base is None else base)
        return self.apply(answer, text)

    def change(self, name: str, start: int, removed: int, inserted: str, *, base=None):
        """encode_change; None (the page must send the whole text) or whether it was whole."""
        answer = bridge.encode_change(
            name, "panel", self.serial if base is None else base, start, removed, inserted
        )
        if answer is None:
            return None
        self.text = self.text[:start] + inserted + self.text[start + removed :]
        return self.apply(answer, self.text)

    def apply(self, answer, text: str) -> bool:
        start, removed, full, serial, ids, lens, data, ms, chars = answer
        self.text = text
        assert sum(int32s(lens)) == len(data) and ms >= 0 and chars == len(text)
        if full:
            assert start == 0
            self.ids, self.lens = int32s(ids), int32s(lens)
        else:
            self.ids[start : start + removed] = int32s(ids)
            self.lens[start : start + removed] = int32s(lens)
        self.serial = serial
        return full


@pytest.mark.parametrize("name", ENCODINGS)
def test_encode_edit_patches_add_up_to_encode(name):
    panel, tok = PanelModel(), get_encoding(name)
    texts = [
        "Hello world",
        "Hello, world",
        "Hello,  world\n\n  x",
        "He said: Hello,  world\n\n  x",
        "",
        "a<|endoftext|>b",
    ]
    for i, text in enumerate(texts):
        full = panel.show(name, text)
        want = tok.encode(text, allowed_special="all")
        assert panel.ids == want and panel.lens == [len(p) for p in tok.decode_tokens_bytes(want)]
        assert full == (i in (0, 4, 5))  # first text, empty text, special tokens: whole


def test_encode_edit_is_whole_when_the_page_shows_another_result():
    panel = PanelModel()
    panel.show("gpt2", "one two three")
    assert not panel.show("gpt2", "one two three four")
    assert panel.show("gpt2", "one two three four five", base=panel.serial - 1)
    bridge.forget_edits("panel")
    assert panel.show("gpt2", "one two three four five six")
    assert panel.ids == get_encoding("gpt2").encode("one two three four five six")


PIECES = ["Hello", " world", "  ", "\n\n", " " * 30, "'s", "DON'T", "123", "東京", "🙂", "\u3000", "!", "x"]


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=60, deadline=None)
@given(
    start=st.lists(st.sampled_from(PIECES), max_size=20).map("".join),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 8), st.sampled_from(["", *PIECES, "<|endoftext|>"])),
        min_size=1,
        max_size=10,
    ),
)
def test_encode_change_edits_add_up_to_encode(name, start, edits):
    # The page sends only the edit (bridge.encode_change); after any sequence of edits the
    # panel's patched ids equal a full encode of the text the edits made.
    panel, tok = PanelModel(), get_encoding(name)
    panel.show(name, start)
    for where, cut, insert in edits:
        i = int(where * len(panel.text))
        removed = min(cut, len(panel.text) - i)
        assert panel.change(name, i, removed, insert) is not None
        want = tok.encode(panel.text, allowed_special="all")
        assert panel.ids == want and panel.lens == [len(p) for p in tok.decode_tokens_bytes(want)]


def test_encode_change_asks_for_the_whole_text_when_it_lacks_the_panels():
    panel = PanelModel()
    assert panel.change("gpt2", 0, 0, "x") is None  # nothing kept for the key yet
    panel.show("gpt2", "one two")
    assert panel.change("gpt2", 3, 0, " and", base=panel.serial - 1) is None  # another serial
    assert panel.change("cl100k_base", 3, 0, " and") is None  # another tokenizer
    assert panel.change("gpt2", 5, 9, "") is None  # a range outside the text
    assert panel.change("gpt2", 3, 0, " and") is False  # the kept text: a patch
    assert panel.text == "one and two" and panel.ids == get_encoding("gpt2").encode("one and two")
    bridge.forget_edits("panel")
    assert panel.change("gpt2", 0, 0, "x") is None  # forgotten (a panel removed, a restart)


def test_encode_edit_and_change_follow_the_special_choice():
    gpt2, text = get_encoding("gpt2"), "a <|endoftext|> b"
    a = bridge.encode_edit("gpt2", "panel", text, 0, "text")
    assert int32s(a[4]) == gpt2.encode(text, disallowed_special=())
    # The kept encoding is of "text": given "allow", the page must send the whole text again.
    assert bridge.encode_change("gpt2", "panel", a[3], 0, 0, "x", "allow") is None
    b = bridge.encode_change("gpt2", "panel", a[3], 0, 0, "x", "text")
    ids = int32s(a[4])
    ids[b[0] : b[0] + b[1]] = int32s(b[4])
    assert b[2] is False and ids == gpt2.encode("x" + text, disallowed_special=())
    c = bridge.encode_edit("gpt2", "panel", text, b[3], "allow")  # the text, given whole
    assert c[2] is True and int32s(c[4]) == gpt2.encode(text, allowed_special="all")
    with pytest.raises(ValueError, match="special token '<\\|endoftext\\|>' at character 3"):
        bridge.encode_edit("gpt2", "panel", text, c[3], "raise")
    assert bridge.encode_change("gpt2", "panel", c[3], 0, 0, "x", "raise") is None  # dropped after the error
    bridge.forget_edits("panel")


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("text", TEXTS)
def test_split_is_the_librarys_chunks(name, text):
    lens, data = bridge.split(name, text)
    chunks = [c.encode("utf-8") for c in get_encoding(name).split(well_formed(text))]
    assert int32s(lens) == [len(c) for c in chunks]
    assert data == b"".join(chunks)
    # the chunks hold the bytes the tokens hold: a lone surrogate was "?" here and U+FFFD in
    # the token view, so the split view read "lone ? surrogate" under tokens reading "\ufffd"
    assert data == bridge.encode(name, text)[2]


def test_split_refuses_what_is_not_text_as_encode_does():
    # split {name, text: 5} (or no text) answered "AttributeError: 'int' object has no attribute
    # 'encode'", where encode says what is wrong
    for text in (5, None, b"ab"):
        with pytest.raises(TypeError, match="text must be a str, not"):
            bridge.encode("gpt2", text)
        with pytest.raises(TypeError, match="text must be a str, not"):
            bridge.split("gpt2", text)


def test_decode_is_the_librarys_bytes_and_text():
    tok = get_encoding("cl100k_base")
    ids = tok.encode("naïve 東京 🙂 <|endoftext|>", allowed_special="all")
    ids = [*ids, ids[0], tok.special_tokens["<|endoftext|>"]]
    out_ids, lens, data, text = bridge.decode("cl100k_base", JsArray([float(i) for i in ids]))
    assert int32s(out_ids) == ids
    assert int32s(lens) == [len(p) for p in tok.decode_tokens_bytes(ids)]
    assert data == tok.decode_bytes(ids) and text == tok.decode(ids)
    # What the worker sends: an Int32Array, whose to_py() is a memoryview of int32s.
    typed = bridge.decode("cl100k_base", JsTypedArray(array("i", ids)))
    assert typed == (out_ids, lens, data, text)
    with pytest.raises(TypeError, match="Int32Array"):
        bridge.decode("cl100k_base", JsTypedArray(array("d", [1.0])))
    half = tok.encode("東")[:1]  # a token that is not valid UTF-8 alone decodes with U+FFFD
    assert bridge.decode("cl100k_base", half)[3] == tok.decode(half)
    with pytest.raises(ValueError, match="unknown token id 999999"):
        bridge.decode("cl100k_base", [999999])


def test_a_tokenizer_with_gaps_in_its_ids_encodes_without_a_table_of_every_id():
    # the 256 bytes and "ab" at the largest id a file may hold: the page's per-id byte-length
    # table was a list of n_vocab entries (OverflowError here; 0.7 s and 200 MB at 50,000,000)
    top = 2**31 - 1
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": top}
    name = json.loads(bridge.load_user(formats.dump_tiktoken(ranks), None, None, "gaps.tiktoken"))["name"]
    ids, lens, data, _ = bridge.encode(name, "abab c")
    assert int32s(ids) == [top, top, 32, 99] and int32s(lens) == [2, 2, 1, 1] and data == b"abab c"
    assert int32s(bridge.encode_edit(name, "gaps", "ab", 0)[4]) == [top]
    assert isinstance(bridge._len_table(bridge._toks[name]), dict)


def test_decode_refuses_ids_that_decode_to_more_than_the_box_takes():
    # 21 self-merges of "a" make a 2 MB token: 100 of its id were 200 MB, 2,000 an OverflowError
    tok = Tokenizer.from_merges([(97, 97)] + [(256 + i, 256 + i) for i in range(20)], "none", name="long")
    name = json.loads(bridge.load_user(None, json.dumps(tok.to_json()), None, "long.json"))["name"]
    top = tok.n_vocab - 1
    assert bridge.decode(name, [top, 97])[3] == "a" * (2**21 + 1)
    with pytest.raises(
        ValueError, match=r"these 2,000 ids decode to 4,000 MB; the decode box takes at most 64 MB"
    ):
        bridge.decode(name, [top] * 2000)


def test_info():
    info = json.loads(bridge.info("o200k_base"))
    tok = get_encoding("o200k_base")
    assert info == {
        "name": "o200k_base",
        "n_vocab": tok.n_vocab,
        "pattern": tok.pattern,
        "pattern_regex": tok.pattern_regex,
        "custom_regexes": [],  # a named pattern: none that could backtrack
        "special_tokens": tok.special_tokens,
        "n_ranks": len(tok.mergeable_ranks),
    }

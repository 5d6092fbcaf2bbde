"""The worker's Python side (tokenizer.web.bridge) in CPython: every op's answer against the
library's own encode / split / decode, and the page's Python kept in .py files.

The page's worker (web/worker.js) only forwards messages to these functions and views their
bytes as typed arrays, so what is checked here is what the page shows; tests/browser checks the
same module under Pyodide. JavaScript arguments reach the bridge as Pyodide proxies; the fakes
below have the two methods the bridge may call on them, and fail if it iterates them instead
(element by element across the JS boundary, ~100x slower than one copy).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import ROOT, missing
from tokenizer import audit as audit_lib
from tokenizer import formats, get_encoding
from tokenizer import stats as stats_lib
from tokenizer import vocab_diff as vocab_diff_lib
from tokenizer.core import Tokenizer
from tokenizer.encodings import build_blobs
from tokenizer.hf_export import to_hf_json
from tokenizer.stats import well_formed
from tokenizer.web import analysis, bridge, learn

ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
TEXTS = [
    "",
    "hello world",
    "Hello, DON'T   stop 12345 \n\n\t x",
    "東京 🙂 👩‍💻 naïve δέλτα",
    "a<|endoftext|>b",  # special tokens are allowed: the page shows them as one token
    "lone \ud800 surrogate",  # no UTF-8 for the text: the bytes are rebuilt from the tokens
]


class JsUint8Array:
    """What Python gets for a JS Uint8Array under Pyodide: a proxy with to_bytes()."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def to_bytes(self) -> bytes:
        return bytes(self.data)

    def __iter__(self):
        raise AssertionError("the bridge iterated a JS buffer instead of copying it with to_bytes()")


class JsArray:
    """What Python gets for a JS Array under Pyodide: a proxy with to_py()."""

    def __init__(self, values: list) -> None:
        self.values = values

    def to_py(self) -> list:
        return list(self.values)


class JsTypedArray:
    """What Python gets for a JS typed array under Pyodide: to_py() is a memoryview of it."""

    def __init__(self, values: array) -> None:
        self.values = values

    def to_py(self) -> memoryview:
        return memoryview(self.values)

    def __iter__(self):
        raise AssertionError("the bridge iterated a JS array instead of converting it with to_py()")


def int32s(data: bytes) -> list[int]:
    return array("i", data).tolist()


@pytest.fixture(scope="module", autouse=True)
def reference_encodings() -> None:
    blobs = build_blobs()
    for name in ENCODINGS:
        info = json.loads(bridge.load_blob(name, JsUint8Array(blobs[name].read_bytes())))
        assert info["name"] == name and info["n_ranks"] == len(get_encoding(name).mergeable_ranks)


def small_tokenizer(name: str = "mine") -> Tokenizer:
    return Tokenizer.from_merges(
        [(104, 101), (108, 108), (256, 257), (32, 119)], "gpt4", ["<|end|>"], name=name
    )


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


# ----- the user's files -----------------------------------------------------------------


def test_load_user_reads_every_file_kind_and_never_hides_a_tokenizer():
    tok = small_tokenizer()
    tiktoken_text = formats.dump_tiktoken(tok.mergeable_ranks)
    json_text = json.dumps(tok.to_json())
    hf_text = json.dumps(to_hf_json(tok))
    first = json.loads(bridge.load_user(tiktoken_text, json_text, None, "mine.json"))["name"]
    names = [
        first,
        json.loads(bridge.load_user(None, json_text, None, "mine.json"))["name"],
        json.loads(bridge.load_user(None, None, hf_text, "tokenizer.json"))["name"],
        json.loads(bridge.load_user(None, hf_text, None, "tokenizer.json"))["name"],  # HF, as .json
    ]
    assert names[0].startswith("mine") and names[1].startswith("mine-"), names
    assert len(set(names)) == len(names), names
    text = "hello well, hell <|end|>"
    for name in names:
        assert int32s(bridge.encode(name, text)[0]) == tok.encode(text, allowed_special="all"), name
    lone = json.loads(bridge.load_user(tiktoken_text, None, None, "lone.tiktoken"))
    assert lone["name"].startswith("lone") and lone["pattern"] == "gpt4" and lone["special_tokens"] == {}


def test_load_user_force_name_replaces_the_tokenizer_of_that_name():
    bridge.load_user(None, json.dumps(small_tokenizer().to_json()), None, "a.json", "trained")
    assert json.loads(bridge.merge_list("trained", "", 0, 100))["total"] == 4
    other = Tokenizer.from_merges([(97, 98)], "gpt2", name="other")
    info = json.loads(bridge.load_user(None, json.dumps(other.to_json()), None, "b.json", "trained"))
    assert info["name"] == "trained" and info["pattern"] == "gpt2"
    assert json.loads(bridge.merge_list("trained", "", 0, 100))["rows"] == [[256, 97, 98, b"ab".hex()]]


def test_info_names_the_split_regexes_that_could_backtrack():
    """The page's too-slow message names these, or says a named pattern cannot backtrack."""
    regex = r"[a-z]+|\s+|\S"
    custom = Tokenizer.from_merges([(97, 98)], regex, name="custom-split")
    info = json.loads(bridge.load_user(None, json.dumps(custom.to_json()), None, "c.json"))
    assert info["custom_regexes"] == [regex]
    named = Tokenizer.from_merges([(97, 98)], "gpt4", name="named-split")
    assert (
        json.loads(bridge.load_user(None, json.dumps(named.to_json()), None, "n.json"))["custom_regexes"]
        == []
    )


def test_a_file_named_after_a_reference_encoding_never_takes_its_name(monkeypatch):
    """The worker loads a reference encoding on first use: a file named p50k_base loaded before
    that took the name, and the page's p50k_base panel (and its share link) showed the file's ids."""
    monkeypatch.delitem(bridge._toks, "p50k_base", raising=False)  # not used yet in this worker
    mine = Tokenizer.from_merges([(97, 98)], "gpt2", name="p50k_base")
    info = json.loads(bridge.load_user(None, json.dumps(mine.to_json()), None, "p50k_base.json"))
    assert info["name"] == "p50k_base-2"
    assert int32s(bridge.encode("p50k_base-2", "ab")[0]) == [256]


def test_a_load_walks_the_vocabulary_for_the_encoder_so_the_first_encode_does_not(monkeypatch):
    """The table of token lengths walked every id three times in the first encode: 1.7 s for a
    file of 1.5 million ids here, over the encode's 2 s deadline in Pyodide, so the page stopped
    it as "too slow on this text" and never showed the tokenizer. The load (a minute) builds it."""
    json_text = json.dumps(small_tokenizer("walks").to_json())
    walks = []
    duplicate_ids = Tokenizer.duplicate_ids
    monkeypatch.setattr(
        Tokenizer, "duplicate_ids", property(lambda tok: walks.append(1) or duplicate_ids.fget(tok))
    )
    name = json.loads(bridge.load_user(None, json_text, None, "w.json"))["name"]
    assert len(walks) == 1
    text = "hello well <|end|>"
    want = small_tokenizer().encode(text, allowed_special="all")
    assert int32s(bridge.encode_edit(name, name, text, 0)[4]) == want
    assert len(walks) == 1


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ((None, "{nope", None), r"^x\.json:1: invalid JSON: "),
        ((None, None, "[1,"), r"^x\.json:1: invalid JSON: "),
        ((None, "[1, 2]", None), r"^x\.json: expected a JSON object at the top level$"),
        ((None, None, None), r"^no file given$"),
    ],
)
def test_load_user_says_what_is_wrong(files, message):
    with pytest.raises(ValueError, match=message):
        bridge.load_user(*files, "x.json")


# ----- merges -----------------------------------------------------------------------------


def check_tree(tok: Tokenizer, node: dict) -> bytes:
    """The node's bytes, after checking that its children spell it and come from earlier merges."""
    data = bytes.fromhex(node["bytes"])
    assert data == tok.decode_single_token_bytes(node["id"])
    if "left" not in node:
        assert len(data) == 1 or node.get("special") or node.get("cut"), node
        return data
    assert check_tree(tok, node["left"]) + check_tree(tok, node["right"]) == data
    assert node["left"]["rank"] < node["rank"] and node["right"]["rank"] < node["rank"]
    return data


@pytest.mark.parametrize("name", ENCODINGS)
def test_merge_tree_spells_the_token_from_earlier_merges(name):
    tok = get_encoding(name)
    for token_id in tok.encode(" internationalization 東京 🙂 hello"):
        check_tree(tok, json.loads(bridge.merge_tree(name, float(token_id))))
    special = tok.special_tokens["<|endoftext|>"]
    assert json.loads(bridge.merge_tree(name, special)) == {
        "id": special,
        "bytes": b"<|endoftext|>".hex(),
        "rank": None,
        "special": True,
    }


def test_merge_tree_of_self_merges_is_bounded_by_bytes():
    # 2**(k + 1) - 1 nodes for a token of 2**k bytes: at k = 16, 17 MB of JSON; k = 21 hung
    tok = Tokenizer.from_merges([(97, 97)] + [(256 + i, 256 + i) for i in range(20)], "none", name="run")
    name = json.loads(bridge.load_user(None, json.dumps(tok.to_json()), None, "run.json"))["name"]
    text = bridge.merge_tree(name, tok.n_vocab - 1)
    tree = json.loads(text)
    assert tree["cut"] and "left" not in tree and len(text) < 5 * 2**21  # the root only
    small = json.loads(bridge.merge_tree(name, 270))  # 2**15 bytes: the first levels
    assert check_tree(tok, small) == b"a" * 2**15
    nodes, level = [], [small]
    while level:
        nodes += level
        level = [kid for node in level for kid in (node.get("left"), node.get("right")) if kid]
    assert sum(len(n["bytes"]) // 2 for n in nodes) <= bridge.MAX_TREE_BYTES
    assert any(n.get("cut") for n in nodes)
    whole = json.loads(bridge.merge_tree(name, 262))  # 128 bytes: whole, down to the bytes
    assert check_tree(tok, whole) == b"a" * 128 and '"cut"' not in json.dumps(whole)


def test_merge_tree_of_a_trained_tokenizer_follows_its_merges():
    tok = small_tokenizer("tree")
    name = json.loads(bridge.load_user(None, json.dumps(tok.to_json()), None, "tree.json"))["name"]
    tree = json.loads(bridge.merge_tree(name, 258))  # (256, 257) = "he" + "ll"
    assert [tree["left"]["id"], tree["right"]["id"]] == [256, 257]
    assert [tree["left"]["left"]["id"], tree["left"]["right"]["id"]] == [104, 101]
    assert check_tree(tok, tree) == b"hell"


def test_merge_list_pages_the_merges_in_rank_order():
    tok = get_encoding("gpt2")
    multi = sorted((rank, token) for token, rank in tok.mergeable_ranks.items() if len(token) > 1)
    page = json.loads(bridge.merge_list("gpt2", "", 1000, 50))
    assert page["total"] == len(multi)
    assert [row[0] for row in page["rows"]] == [rank for rank, _ in multi[1000:1050]]
    for rank, left, right, hex_bytes in page["rows"]:
        token = bytes.fromhex(hex_bytes)
        assert tok.mergeable_ranks[token] == rank
        assert left < rank and right < rank
        assert tok.decode_single_token_bytes(left) + tok.decode_single_token_bytes(right) == token
    found = json.loads(bridge.merge_list("gpt2", "ello", 0, 10))
    assert found["total"] == sum(b"ello" in token for _, token in multi)
    assert len(found["rows"]) == 10 and all(b"ello".hex() in row[3] for row in found["rows"])
    assert json.loads(bridge.merge_list("gpt2", "ello", found["total"], 10))["rows"] == []


# ----- Learn view -------------------------------------------------------------------------


def test_learn_is_the_learn_modules_answer_and_adopt_joins_the_comparison():
    request = {"corpus": "low lower lowest newer wider " * 3, "pattern": "gpt2", "num_merges": 8}
    assert json.loads(bridge.learn(json.dumps(request))) == json.loads(json.dumps(learn.handle(request)))
    info = json.loads(bridge.learn_adopt(json.dumps({**request, "step": 5})))
    again = json.loads(bridge.learn_adopt(json.dumps({**request, "step": 5})))
    assert info["name"].startswith("learned-gpt2-5") and again["name"] != info["name"]
    tok = learn.to_tokenizer({**request, "step": 5})
    text = "the lowest newer wider"
    assert int32s(bridge.encode(info["name"], text)[0]) == tok.encode(text)


# ----- know your tokenizer: audit, stats, sweep, diff ----------------------------------------

UDHR = (
    "##### UDHR code=eng lang=en name=English\nAll human beings are born free and equal.\n"
    "##### UDHR code=rus lang=ru name=Russian\nВсе люди рождаются свободными и равными.\n"
)


@pytest.mark.parametrize("name", ["gpt2", "o200k_base"])
def test_audit_is_the_librarys_audit_and_pages_every_list(name):
    tok = get_encoding(name)
    text = "Hello, world! 東京 🙂"
    want = audit_lib.audit(tok, corpus_texts=[text])
    got = json.loads(bridge.audit(name, text))
    assert got["result"] == {k: v for k, v in want.items() if k not in analysis.AUDIT_LISTS}
    assert got["counts"] == {k: len(want[k]) for k in analysis.AUDIT_LISTS}
    assert got["longest"] == [[i, tok.decode_single_token_bytes(i).hex()] for i in want["longest"]]
    for key in ("partial_utf8", "unreachable", "unused"):
        rows = json.loads(bridge.audit_list(name, key, "", 0, 10**6))
        assert rows["total"] == len(want[key]) and [r[0] for r in rows["rows"]] == want[key]
    page = json.loads(bridge.audit_list(name, "unused", "", 500, 7))
    assert [r[0] for r in page["rows"]] == want["unused"][500:507]
    assert all(bytes.fromhex(h) == tok.decode_single_token_bytes(i) for i, h in page["rows"])
    found = json.loads(bridge.audit_list(name, "unused", "ing", 0, 10**6))
    assert [r[0] for r in found["rows"]] == [
        i for i in want["unused"] if b"ing" in tok.decode_single_token_bytes(i)
    ]
    assert "unused" not in json.loads(bridge.audit(name, None))["counts"]
    with pytest.raises(ValueError, match="no audit list 'unused'"):
        bridge.audit_list(name, "unused", "", 0, 10)


def test_searches_read_a_lone_surrogate_as_u_fffd():
    # a search box's text is a JS string: both searches failed with UnicodeEncodeError
    name = "cl100k_base"
    bridge.audit(name, "x")
    replacement = get_encoding(name).mergeable_ranks["\ufffd".encode()]
    got = json.loads(bridge.audit_list(name, "unused", "\ud800", 0, 1000))
    assert got == json.loads(bridge.audit_list(name, "unused", "\ufffd", 0, 1000)) and got["total"] > 0
    assert replacement in [row[0] for row in got["rows"]]
    merges = json.loads(bridge.merge_list(name, "a\udc00", 0, 10))
    assert merges == json.loads(bridge.merge_list(name, "a\ufffd", 0, 10))


def test_audit_lists_duplicates_with_the_id_the_encoder_uses():
    tok = Tokenizer.from_merges([(104, 101), (104, 101), (108, 108)], "gpt4", name="dup")
    name = json.loads(bridge.load_user(None, json.dumps(tok.to_json()), None, "dup.json"))["name"]
    assert json.loads(bridge.audit(name, None))["counts"]["duplicates"] == 1
    assert json.loads(bridge.audit_list(name, "duplicates", "", 0, 10))["rows"] == [[257, b"he".hex(), 256]]


def test_stats_is_stats_json_for_the_input_text_and_the_languages():
    text = "Tokenizers, naïve café 東京 🙂\n  words  and more"
    got = json.loads(bridge.stats(json.dumps({"names": ["gpt2", "cl100k_base"], "text": text, "udhr": UDHR})))
    want = [
        {"tokenizer": n, "file": "input", **stats_lib.text_stats(get_encoding(n), text)}
        for n in ("gpt2", "cl100k_base")
    ]
    assert got["results"] == want
    sections = stats_lib.udhr_sections(UDHR)
    assert got["languages"] == [
        *stats_lib.language_rows(get_encoding("gpt2"), sections, name="gpt2"),
        *stats_lib.language_rows(get_encoding("cl100k_base"), sections, name="cl100k_base"),
    ]
    assert "languages" not in json.loads(bridge.stats(json.dumps({"names": ["gpt2"], "text": text})))
    with pytest.raises(ValueError, match="the UDHR text: no '##### UDHR"):
        bridge.stats(json.dumps({"names": ["gpt2"], "text": text, "udhr": "no headers"}))


def test_sweep_is_the_librarys_sweep_at_given_or_default_sizes():
    tok = get_encoding("cl100k_base")
    text = "The quick brown fox jumps over the lazy dog. " * 20
    got = json.loads(bridge.sweep("cl100k_base", text, JsArray([300, 1000, 5000])))
    assert got["sweep"] == stats_lib.sweep(tok, [text], [300, 1000, 5000], name="cl100k_base")
    assert got["bytes"] == len(text.encode())
    default = json.loads(bridge.sweep("cl100k_base", text, None))["sweep"]
    sizes = [r["vocab_size"] for r in default]
    assert sizes[0] == 256 and sizes[-1] == max(tok.mergeable_ranks.values()) + 1
    assert all(b == 2 * a for a, b in zip(sizes[:-2], sizes[1:-1], strict=True))
    assert default[-1]["tokens"] == len(tok.encode_ordinary(text))
    with pytest.raises(ValueError, match="strictly increasing"):
        bridge.sweep("cl100k_base", text, [1000, 500])


def test_stats_and_sweep_read_a_lone_surrogate_as_the_panels_do():
    # the page's text may hold one (a JS string): both views failed with UnicodeEncodeError
    text, read = "a\ud800b \udc00 x", "a\ufffdb \ufffd x"
    got = json.loads(bridge.stats(json.dumps({"names": ["gpt2"], "text": text})))["results"][0]
    assert got["tokens"] == len(get_encoding("gpt2").encode_ordinary(text))
    assert got["bytes"] == len(read.encode())
    swept = json.loads(bridge.sweep("gpt2", text, JsArray([300, 1000])))
    assert swept["bytes"] == len(read.encode())
    assert swept["sweep"] == json.loads(bridge.sweep("gpt2", read, JsArray([300, 1000])))["sweep"]


def test_vocab_diff_is_diff_json():
    got = json.loads(bridge.vocab_diff("gpt2", "cl100k_base"))
    assert got == json.loads(
        json.dumps(vocab_diff_lib.diff(get_encoding("gpt2"), get_encoding("cl100k_base")))
    )
    assert json.loads(bridge.vocab_diff("gpt2", "gpt2"))["first_difference"] is None


# ----- benchmark loading and the snapshot's warm-up ---------------------------------------


def test_bench_load_parses_each_format():
    tok = get_encoding("gpt2")
    blob = JsUint8Array(build_blobs()["gpt2"].read_bytes())
    tiktoken = JsUint8Array(formats.dump_tiktoken(tok.mergeable_ranks).encode("ascii"))
    for fmt, data in (("blob", blob), ("tiktoken", tiktoken)):
        ms, n = bridge.bench_load("gpt2", fmt, data)
        assert n == len(tok.mergeable_ranks) and ms >= 0, fmt
    with pytest.raises(ValueError, match="unknown format 'xml'; expected one of blob, json, tiktoken"):
        bridge.bench_load("gpt2", "xml", blob)


def test_warm_up_compiles_the_reference_patterns():
    bridge.warm_up()  # what scripts/pyodide_snapshot.mjs runs before taking the snapshot


# ----- no Python inside JavaScript, and the new files pass their linters ------------------

JS_FILES = sorted(
    [
        *(ROOT / "web").glob("**/*.js"),
        *(ROOT / "web").glob("**/*.mjs"),
        *(ROOT / "scripts").glob("*.mjs"),
        *(ROOT / "tests").glob("**/*.mjs"),
    ]
)
JS_FILES = [p for p in JS_FILES if "dist" not in p.relative_to(ROOT).parts]
PYTHON_LINE = re.compile(r"^\s*(def \w+\(|class \w+|import \w+|from [\w.]+ import )", re.M)
JS_LINE = re.compile(r"^\s*(import \{|const \w+ =|let \w+ =|await |export )|runPython\(", re.M)
TEMPLATE = re.compile(r"`(?:[^`\\]|\\.)*`", re.S)


@pytest.mark.parametrize("path", JS_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_python_source_inside_javascript(path):
    source = path.read_text(encoding="utf-8")
    assert not re.search(r"\brunPython(Async)?\s*\(", source), "run Python modules with pyimport"
    for template in TEMPLATE.findall(source):
        assert not PYTHON_LINE.search(template), f"Python source in a template string: {template[:80]!r}"


def test_no_javascript_inside_the_build_script():
    tree = ast.parse((ROOT / "build_wasm.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not JS_LINE.search(node.value), f"JavaScript in a Python string: {node.value[:80]!r}"


NEW_PYTHON = ["tokenizer/web", "build_wasm.py", "tests/test_bridge.py"]
NEW_JS = ["web/worker.js", "scripts/pyodide_snapshot.mjs", "tests/browser/pyodide_runner.mjs"]


def test_ruff_passes_on_the_pages_python():
    for args in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *args, *NEW_PYTHON], cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_node_check_passes_on_the_worker_and_the_scripts():
    node = shutil.which("node")
    if not node:
        missing("node is not installed")
    for path in NEW_JS:
        done = subprocess.run([node, "--check", path], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, f"{path}: {done.stderr}"

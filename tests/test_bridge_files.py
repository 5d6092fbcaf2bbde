"""The worker's Python side (tokenizer.web.bridge) in CPython: the user's tokenizer files
(load_user: every file kind, names that never hide a tokenizer, what is wrong said), the merge
explorer (merge trees and the merge list) and Learn mode's adopt, against the library.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import BRIDGE_ENCODINGS as ENCODINGS
from tests.helpers import int32s
from tokenizer import formats, get_encoding
from tokenizer.core import Tokenizer
from tokenizer.hf_export import to_hf_json
from tokenizer.web import bridge, learn

# The reference encodings are loaded into the bridge first, as the page's worker loads them.
pytestmark = pytest.mark.usefixtures("reference_encodings")


def small_tokenizer(name: str = "mine") -> Tokenizer:
    return Tokenizer.from_merges(
        [(104, 101), (108, 108), (256, 257), (32, 119)], "gpt4", ["<|end|>"], name=name
    )


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

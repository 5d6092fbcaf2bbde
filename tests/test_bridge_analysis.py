"""The worker's Python side (tokenizer.web.bridge) in CPython: the "know your tokenizer" views
(audit, stats, the vocabulary-size sweep, the vocabulary diff) answer what the library answers,
and the benchmark's loading and the snapshot's warm-up run.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import JsArray, JsUint8Array
from tokenizer import audit as audit_lib
from tokenizer import formats, get_encoding
from tokenizer import stats as stats_lib
from tokenizer import vocab_diff as vocab_diff_lib
from tokenizer.core import Tokenizer
from tokenizer.encodings import build_blobs
from tokenizer.web import analysis, bridge

# The reference encodings are loaded into the bridge first, as the page's worker loads them.
pytestmark = pytest.mark.usefixtures("reference_encodings")


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

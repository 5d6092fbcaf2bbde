"""POST /api/train with a `base`: extension on the server gives exactly tokenizer.extend's ids.

The base is a reference encoding or a tokenizer trained on this server, by name and never by
path; an extension takes `add` (new merges) instead of vocab_size, and the base's pattern and
special tokens, so the fields of training from bytes are refused with it (and `add` without a
base). Every refused request leaves nothing behind and queues no job.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import CORPORA
from tests.server_helpers import GOOD, LiveServer, corpus_file, leftovers, post_train, save_tokenizer
from tokenizer import Tokenizer, extend, get_encoding

SMALL = CORPORA / "taylorswift.txt"
PROBES = [
    "We are never ever getting back together <|endoftext|> like, ever",
    SMALL.read_text(encoding="utf-8")[5000:9000],
    "Naïve café, 東京タワー, Привет 🙂👍🏽 and numbers 1234567\n",
]
FINAL = ("done", "failed", "cancelled")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("extend-data")


@pytest.fixture(scope="module")
def server(data_dir) -> Iterator[LiveServer]:
    live = LiveServer(data_dir, MAX_RUNNING_JOBS=1, MAX_QUEUED_JOBS=4)
    yield live
    live.close()


def download(server: LiveServer, name: str, tmp_path: Path) -> Tokenizer:
    for ext in ("tiktoken", "json"):
        resp = server.get(f"/api/tokenizers/{name}.{ext}")
        assert resp.status_code == 200, resp.text
        (tmp_path / f"{name}.{ext}").write_bytes(resp.content)
    return Tokenizer.load(tmp_path / name)


def run(server: LiveServer, files: list[Path] = (), **fields) -> dict:
    resp = server.train(files, **fields)
    assert resp.status_code == 202, resp.text
    final = server.wait(resp.json()["job"], lambda s: s["state"] in FINAL, timeout=120)
    assert final["state"] == "done", final
    return final


@pytest.mark.parametrize("base, tie_break", [("gpt2", "first"), ("cl100k_base", "lexical")])
def test_extend_reference_encoding_like_the_library(server, tmp_path, base, tie_break):
    name = f"{base}-swift"
    final = run(server, [SMALL], base=base, add="40", tie_break=tie_break, name=name)
    want = extend(get_encoding(base), [SMALL], 40, tie_break=tie_break)
    got = download(server, name, tmp_path)

    assert got.mergeable_ranks == want.mergeable_ranks  # the base's ids kept, the new ones equal
    assert got.special_tokens == get_encoding(base).special_tokens
    for text in PROBES:
        assert got.encode(text, allowed_special="all") == want.encode(text, allowed_special="all")
    assert got.encode(PROBES[1]) != get_encoding(base).encode(PROBES[1])  # it learned something

    # The job and the listing show the base and what the extension bought.
    ext = want.metadata["extension"]
    assert final["params"]["base"] == base and final["params"]["add"] == 40
    assert final["params"]["vocab_size"] is None and "base_stem" not in final["params"]
    assert final["result"]["vocab_size"] == want.n_vocab
    summary = final["result"]["extension"]
    assert summary["base"] == base and summary["added"] == 40
    assert summary["first_new_id"] == get_encoding(base).n_vocab
    assert (summary["corpus_tokens_before"], summary["corpus_tokens_after"]) == (
        ext["corpus_tokens_before"],
        ext["corpus_tokens_after"],
    )
    assert summary["corpus_tokens_after"] < summary["corpus_tokens_before"]
    assert final["warnings"] == []
    entry = server.get(f"/api/tokenizers/{name}").json()
    assert entry["extension"] == summary
    assert "merges" not in entry["metadata"]["extension"]  # the download has them, not the listing
    assert entry["pattern"] == get_encoding(base).pattern


def test_extend_a_trained_tokenizer_and_stop_early_with_a_warning(server, data_dir, tmp_path):
    base = save_tokenizer(data_dir, "small-base")
    final = run(server, text=GOOD.decode(), base="small-base", add="1000", name="small-more")
    want = extend(base, [GOOD.decode()], 1000)
    got = download(server, "small-more", tmp_path)
    assert got.mergeable_ranks == want.mergeable_ranks
    assert got.special_tokens == base.special_tokens
    added = want.metadata["extension"]["added"]
    assert 0 < added < 1000
    assert final["warnings"] == [f"stopped after {added} of 1000 new merges: {want.metadata['stop_reason']}"]
    # An automatic name says what it is.
    final = run(server, text="aa bb aa bb cc aa", base="small-base", add="3")
    assert final["name"] == "small-base-plus3"


@pytest.mark.parametrize(
    "fields, fragment",
    [
        ({"base": "nonexistent", "add": "5"}, "unknown base 'nonexistent'"),
        ({"base": "../data/taken", "add": "5"}, "paths are not accepted"),
        ({"base": "/etc/passwd", "add": "5"}, "unknown base '/etc/passwd'"),
        ({"base": "taken.json", "add": "5"}, "unknown base"),
        ({"base": "half", "add": "5"}, "unknown base 'half'"),  # a broken entry: .json only
        ({"base": "GPT2", "add": "5"}, "unknown base 'GPT2'"),
        ({"base": "gpt2"}, "add is required"),
        ({"base": "gpt2", "add": "0"}, "add 0 is out of range"),
        ({"base": "gpt2", "add": "1e3"}, "add must be an integer"),
        ({"base": "gpt2", "add": "5", "vocab_size": "300"}, "'vocab_size' cannot be combined with a base"),
        ({"base": "gpt2", "add": "5", "pattern": "gpt4"}, "the base's split pattern is used"),
        ({"base": "taken", "add": "5", "regex": r"\w+"}, "'regex' cannot be combined with a base"),
        ({"base": "gpt2", "add": "5", "special_tokens": "<a>"}, "special tokens are kept"),
        ({"add": "5", "vocab_size": "300"}, "'add' needs a 'base' to extend"),
        ({"base": "gpt2", "add": "5", "tie_break": "random"}, "unknown tie_break"),
    ],
)
def test_bad_extension_requests(client, server_dirs, fields, fragment):
    _, data = server_dirs
    save_tokenizer(data, "taken")
    (data / "half.json").write_text("{}", encoding="utf-8")
    before = sorted(leftovers(data))
    resp = post_train(client, corpus=corpus_file(GOOD), **fields)
    assert resp.status_code == 400, resp.get_json()
    assert fragment in resp.get_json()["error"]
    assert sorted(leftovers(data)) == before  # uploads (and any copy of the base) removed
    assert client.get("/api/jobs").get_json()["jobs"] == []


def test_symlinked_base_is_refused(client, server_dirs, tmp_path):
    """A pair that points out of the data folder is not a tokenizer trained here."""
    _, data = server_dirs
    save_tokenizer(tmp_path, "outside")
    data.mkdir(exist_ok=True)
    for ext in ("json", "tiktoken"):
        (data / f"linked.{ext}").symlink_to(tmp_path / f"outside.{ext}")
    resp = post_train(client, corpus=corpus_file(GOOD), base="linked", add="5")
    assert resp.status_code == 400
    assert "unknown base 'linked'" in resp.get_json()["error"]

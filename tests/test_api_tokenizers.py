"""playground/tokenizers.py: /api/health and /api/tokenizers (list, entry, download, delete)."""

from __future__ import annotations

import json

import pytest

import tokenizer
from playground import create_app
from playground.config import DEFAULTS
from tests.server_helpers import save_tokenizer
from tokenizer import Tokenizer


def test_health_reports_version_and_limits(client):
    resp = client.get("/api/health")
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["status"] == "ok"
    assert body["version"] == tokenizer.__version__
    assert body["limits"]["min_vocab"] == 257
    assert body["limits"]["max_vocab"] == DEFAULTS["MAX_VOCAB"]
    assert body["limits"]["max_upload_bytes"] == 64 * 1024
    assert {"gpt2", "gpt4", "o200k", "none"} <= set(body["patterns"])
    assert body["pattern_choices"][-1] == "custom"
    assert body["tie_breaks"] == ["first", "lexical"]


# ----- tokenizers: list, download, delete, restart ----------------------------------------


def test_list_download_delete_and_restart(client, server_dirs):
    web, data = server_dirs
    tok = save_tokenizer(data, "mine")
    listing = client.get("/api/tokenizers").get_json()
    assert [r["name"] for r in listing["reference"]] == tokenizer.list_encodings()
    (entry,) = listing["trained"]
    assert entry["name"] == "mine" and entry["kind"] == "trained"
    assert entry["vocab_size"] == tok.n_vocab == 261
    assert entry["merges"] == 4
    assert entry["special_tokens"] == {"<|end|>": 260}
    assert entry["metadata"] == {"note": "made by the test"}
    assert client.get("/api/tokenizers/mine").get_json()["name"] == "mine"

    resp = client.get("/api/tokenizers/mine.tiktoken")
    assert resp.status_code == 200
    assert resp.data == (data / "mine.tiktoken").read_bytes()
    assert "attachment" in resp.headers["Content-Disposition"]
    resp = client.get("/api/tokenizers/mine.json")
    assert resp.get_json() == json.loads((data / "mine.json").read_text())

    # A new app on the same folder (a server restart) still has it.
    again = create_app({"WEB_DIR": web, "DATA_DIR": data}).test_client()
    assert [t["name"] for t in again.get("/api/tokenizers").get_json()["trained"]] == ["mine"]
    assert again.get("/api/tokenizers/mine.tiktoken").data == (data / "mine.tiktoken").read_bytes()

    assert client.delete("/api/tokenizers/mine").get_json() == {"deleted": "mine"}
    assert not (data / "mine.json").exists() and not (data / "mine.tiktoken").exists()
    assert client.get("/api/tokenizers").get_json()["trained"] == []
    resp = client.delete("/api/tokenizers/mine")
    assert resp.status_code == 404 and "no trained tokenizer" in resp.get_json()["error"]


def test_downloaded_tiktoken_loads_in_tiktoken(client, server_dirs, tmp_path):
    pytest.importorskip("tiktoken")
    import tiktoken
    import tiktoken.load

    _, data = server_dirs
    tok = save_tokenizer(data, "mine")
    path = tmp_path / "dl.tiktoken"
    path.write_bytes(client.get("/api/tokenizers/mine.tiktoken").data)
    meta = client.get("/api/tokenizers/mine.json").get_json()
    enc = tiktoken.Encoding(
        "mine",
        pat_str=meta["pattern_regex"],
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
        special_tokens=meta["special_tokens"],
    )
    text = "hello hell help<|end|> Othello"
    assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert Tokenizer.load(data / "mine").encode(text, allowed_special="all") == tok.encode(
        text, allowed_special="all"
    )


@pytest.mark.parametrize(
    "path, status, fragment",
    [
        ("/api/tokenizers/nope.json", 404, "no trained tokenizer"),
        ("/api/tokenizers/nope.tiktoken", 404, "no trained tokenizer"),
        ("/api/tokenizers/nope", 404, "no tokenizer named"),
        ("/api/tokenizers/.hidden.json", 404, "no tokenizer named"),
        ("/api/tokenizers/cl100k_base.tiktoken", 404, "reference encoding"),
        ("/api/jobs/0123456789abcdef", 404, "no job"),
        ("/api/jobs/0123456789abcdef/events", 404, "no job"),
    ],
)
def test_unknown_things_are_404_json(client, path, status, fragment):
    resp = client.get(path)
    assert resp.status_code == status
    assert fragment in resp.get_json()["error"]


def test_reference_encodings_cannot_be_deleted(client):
    resp = client.delete("/api/tokenizers/cl100k_base")
    assert resp.status_code == 400 and "reference encoding" in resp.get_json()["error"]
    assert client.delete("/api/jobs/0123456789abcdef").status_code == 404


def test_half_written_tokenizer_is_listed_as_broken(client, server_dirs):
    _, data = server_dirs
    save_tokenizer(data, "whole")
    save_tokenizer(data, "half")
    (data / "half.json").unlink()  # as after a crash between the two renames
    (data / "junk.json").write_text("{not json")
    (data / "junk.tiktoken").write_text("")
    listing = client.get("/api/tokenizers").get_json()
    assert [t["name"] for t in listing["trained"]] == ["whole"]
    assert [(b["name"], b["kind"]) for b in listing["broken"]] == [("half", "broken"), ("junk", "broken")]

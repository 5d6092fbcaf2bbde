"""Hostile files at the server: each file of tests/data/hostile/server (index.json says what each
must give) sent as a field, stored beside a good tokenizer, or submitted as a regex that only the
long probes catch; and broken stored entries (an orphan half, a broken symlink, a folder or a
pipe under a tokenizer's name) listed as broken, deletable where they are ours, never served.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.helpers import ROOT
from tests.server_helpers import (
    FAST,
    GOOD,
    assert_refused,
    leftovers,
    multipart,
    post_train,
    save_tokenizer,
    send,
)

HOSTILE = ROOT / "tests" / "data" / "hostile" / "server"
CASES = json.loads((HOSTILE / "index.json").read_text(encoding="utf-8"))["cases"]


# ----- the files of tests/data/hostile/server -------------------------------------------------


@pytest.mark.parametrize("case", [c for c in CASES if c["as"].startswith("field:")], ids=lambda c: c["file"])
def test_hostile_field_files(full, case):
    field = case["as"].split(":", 1)[1]
    fields = {"vocab_size": b"300", "text": GOOD, "pattern": b"custom", "regex": rb"\w+|\s+|\S"}
    fields[field] = (HOSTILE / case["file"]).read_bytes()
    resp, seconds = send(full, *multipart(fields))
    assert_refused(resp, seconds, case["status"], case["error"])


@pytest.mark.parametrize("case", [c for c in CASES if c["as"] == "stored:json"], ids=lambda c: c["file"])
def test_hostile_stored_files_are_listed_as_broken(client, server_dirs, case):
    _, data = server_dirs
    save_tokenizer(data, "x")
    (data / "x.json").write_bytes((HOSTILE / case["file"]).read_bytes())
    listing = client.get("/api/tokenizers").get_json()
    assert listing["trained"] == []
    assert [b["name"] for b in listing["broken"]] == ["x"]
    assert case["error"] in listing["broken"][0]["reason"]
    resp = client.delete("/api/tokenizers/x", headers={"Origin": "http://localhost"})
    assert resp.status_code == 200 and leftovers(data) == []


# ----- broken entries: listed, deletable, and the name is free again ----------------------------


@pytest.mark.parametrize("missing", [".tiktoken", ".json"])
def test_orphan_is_listed_deletable_and_its_name_reusable(client, server_dirs, missing):
    _, data = server_dirs
    save_tokenizer(data, "whole")
    save_tokenizer(data, "x")
    (data / f"x{missing}").unlink()
    listing = client.get("/api/tokenizers").get_json()
    assert [t["name"] for t in listing["trained"]] == ["whole"]
    (broken,) = listing["broken"]
    assert broken["name"] == "x" and broken["kind"] == "broken"
    present = ".json" if missing == ".tiktoken" else ".tiktoken"
    assert f"x{present} has no x{missing} beside it" in broken["reason"]
    assert "DELETE /api/tokenizers/x" in broken["reason"]
    got = client.get("/api/tokenizers/x")
    assert got.status_code == 404 and "is broken" in got.get_json()["error"]

    taken = post_train(client, vocab_size="300", name="x", text="some text " * 20)
    assert taken.status_code == 409  # still taken while the broken file is there
    resp = client.delete("/api/tokenizers/x", headers={"Origin": "http://localhost"})
    assert resp.status_code == 200 and resp.get_json() == {"deleted": "x"}
    assert client.get("/api/tokenizers").get_json()["broken"] == []
    assert sorted(leftovers(data)) == ["whole.json", "whole.tiktoken"]
    resp = post_train(client, vocab_size="300", name="x", text="some text " * 20)
    assert resp.status_code == 202, resp.get_json()
    client.delete(f"/api/jobs/{resp.get_json()['job']}", headers={"Origin": "http://localhost"})


def test_broken_symlink_is_deleted_not_its_target(client, server_dirs, tmp_path):
    _, data = server_dirs
    outside = tmp_path / "outside"
    outside.mkdir()
    save_tokenizer(outside, "leak")
    (data / "leak.json").symlink_to(outside / "leak.json")
    (broken,) = client.get("/api/tokenizers").get_json()["broken"]
    assert broken["name"] == "leak" and "symbolic link" in broken["reason"]
    assert client.delete("/api/tokenizers/leak", headers={"Origin": "http://localhost"}).status_code == 200
    assert not (data / "leak.json").is_symlink() and (outside / "leak.json").is_file()


def test_a_folder_under_a_tokenizer_name_is_not_removed(client, server_dirs):
    _, data = server_dirs
    (data / "x.json").mkdir()
    (broken,) = client.get("/api/tokenizers").get_json()["broken"]
    assert "not a regular file" in broken["reason"]
    resp = client.delete("/api/tokenizers/x", headers={"Origin": "http://localhost"})
    assert resp.status_code == 409 and "remove it by hand" in resp.get_json()["error"]
    assert (data / "x.json").is_dir()


def test_a_pipe_under_a_tokenizer_name_is_broken_not_served(client, server_dirs):
    """A FIFO named x.tiktoken beside a good x.json was listed as trained, and its download
    opened the pipe and waited for a writer for ever (a request thread stuck)."""
    _, data = server_dirs
    save_tokenizer(data, "x")
    (data / "x.tiktoken").unlink()
    os.mkfifo(data / "x.tiktoken")
    started = time.perf_counter()
    (broken,) = client.get("/api/tokenizers").get_json()["broken"]
    assert broken["name"] == "x" and "x.tiktoken is not a regular file" in broken["reason"]
    assert client.get("/api/tokenizers/x.tiktoken").status_code == 404
    assert time.perf_counter() - started < FAST


# ----- a regex only the submit's long probes catch ----------------------------------------------


@pytest.mark.parametrize("case", [c for c in CASES if c["as"] == "submit:regex"], ids=lambda c: c["file"])
def test_a_regex_only_the_long_probes_catch_is_refused_at_submit(full, case):
    """Refused before any job starts; the long probes take their CPU budgets (seconds, not the
    FAST bound of the other refusals)."""
    fields = {"vocab_size": b"300", "text": GOOD, "pattern": b"custom"}
    fields["regex"] = (HOSTILE / case["file"]).read_bytes()
    resp, seconds = send(full, *multipart(fields))
    assert resp.status_code == case["status"] and case["error"] in resp.get_json()["error"], resp.get_json()
    assert seconds < 15
    assert full.get("/api/jobs").get_json()["jobs"] == []

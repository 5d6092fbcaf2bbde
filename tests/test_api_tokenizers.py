"""playground/tokenizers.py: /api/health and /api/tokenizers (list, entry, download, delete)."""

from __future__ import annotations

import errno
import json
import time
from pathlib import Path

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
    assert body["limits"]["min_vocab"] == 257  # 256 bytes + 1 merge (issue 6); the library takes 256
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


def test_a_stored_pair_named_like_a_reference_encoding_is_broken_and_deletable(client, server_dirs):
    """data/gpt2.json + .tiktoken (copied in by hand, or trained before an encoding of that name
    shipped) was listed as trained with download links that answer 404 ("a reference encoding"),
    and DELETE refused it: the files could be neither used nor removed through the API."""
    _, data = server_dirs
    save_tokenizer(data, "gpt2")
    listing = client.get("/api/tokenizers").get_json()
    assert [t["name"] for t in listing["trained"]] == []
    assert [b["name"] for b in listing["broken"]] == ["gpt2"]
    assert "name of a reference encoding" in listing["broken"][0]["reason"]
    assert client.get("/api/tokenizers/gpt2").get_json()["kind"] == "reference"
    resp = client.delete("/api/tokenizers/gpt2")
    assert resp.status_code == 200 and resp.get_json() == {"deleted": "gpt2"}
    assert not list(data.glob("gpt2.*"))
    assert client.get("/api/tokenizers").get_json()["broken"] == []
    assert client.delete("/api/tokenizers/gpt2").status_code == 400  # the reference itself: never


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


def _damage_json(**fields):
    def damage(data, name):
        meta = json.loads((data / f"{name}.json").read_text())
        (data / f"{name}.json").write_text(json.dumps({**meta, **fields}))

    return damage


def _damage_tiktoken(cut):
    def damage(data, name):
        path = data / f"{name}.tiktoken"
        path.write_bytes(cut(path.read_bytes()))

    return damage


@pytest.mark.parametrize(
    "damage, reason",
    [
        (_damage_tiktoken(lambda b: b[: len(b) // 2 + 3]), "x.tiktoken:"),  # a copy cut short
        (_damage_tiktoken(lambda b: b""), "x.tiktoken: no tokens in file"),
        (_damage_tiktoken(lambda b: b.splitlines(keepends=True)[0] + b), "appears twice"),
        (_damage_tiktoken(lambda b: b + b"aGVsbG8s 999\n"), "disagree with the merges in x.json"),
        (_damage_json(merges=[[999999, 1]]), "x.json: merges[0] names id 999999"),
        (_damage_json(metadata=5), "x.json: key 'metadata' must be an object"),
        (_damage_json(special_tokens={"": 5}), "x.json: key 'special_tokens' has an empty special token"),
        (_damage_json(pattern="x", pattern_regex="(unclosed"), "x.json: key 'pattern': invalid regex"),
    ],
)
def test_damaged_pair_is_broken_with_the_loaders_reason(client, server_dirs, damage, reason):
    """A pair the library refuses was listed as trained (its .json parsed), and failed only when
    the page or an extension loaded it; it is broken, with the loader's message, until fixed."""
    _, data = server_dirs
    save_tokenizer(data, "x")
    assert [t["name"] for t in client.get("/api/tokenizers").get_json()["trained"]] == ["x"]  # cached
    damage(data, "x")
    listing = client.get("/api/tokenizers").get_json()
    assert listing["trained"] == []
    assert [b["name"] for b in listing["broken"]] == ["x"]
    assert reason in listing["broken"][0]["reason"]
    assert str(data) not in listing["broken"][0]["reason"]  # no server paths
    resp = client.get("/api/tokenizers/x")
    assert resp.status_code == 404 and reason in resp.get_json()["error"]
    assert client.get("/api/tokenizers/x.tiktoken").status_code == 404
    save_tokenizer(data, "x")  # repaired: listed again
    assert [t["name"] for t in client.get("/api/tokenizers").get_json()["trained"]] == ["x"]


def test_listing_shows_what_the_files_hold_not_what_the_json_says(client, server_dirs):
    """The .json's own "vocab_size": -5 was listed as the size; the listing shows what the files
    hold, and the loader (which once ignored the key) now refuses a vocab_size the ids disagree
    with, so such a pair is listed as broken with the reason."""
    _, data = server_dirs
    tok = save_tokenizer(data, "x")
    [entry] = client.get("/api/tokenizers").get_json()["trained"]
    assert entry["vocab_size"] == tok.n_vocab and entry["merges"] == len(tok.merges)
    assert entry["special_tokens"] == tok.special_tokens
    meta = json.loads((data / "x.json").read_text())
    (data / "x.json").write_text(json.dumps({**meta, "vocab_size": -5}))
    listing = client.get("/api/tokenizers").get_json()
    assert listing["trained"] == []
    [broken] = listing["broken"]
    assert (
        broken["name"] == "x"
        and f"key 'vocab_size' is -5, but the tokenizer's ids go up to {tok.n_vocab - 1:,}"
        in broken["reason"]
    )


@pytest.mark.parametrize("suffix", [".json", ".tiktoken"])
def test_a_download_racing_a_delete_gets_the_file_not_an_internal_error(
    app, server_dirs, monkeypatch, suffix
):
    """GET NAME.json while a DELETE of NAME ran (the page's list refreshed as the user deleted):
    the view checked the pair, the DELETE removed it, then send_file's os.stat raised
    FileNotFoundError: a 500 "internal error" with a traceback in the log, 98 times in 20 s of a
    live fuzz. The check and the open are now one step under the job manager's lock, as DELETE
    is: the download gets the whole file, the DELETE then goes through."""
    import threading

    from playground import tokenizers

    _, data = server_dirs
    save_tokenizer(data, "racy")
    original = (data / f"racy{suffix}").read_bytes()
    check = tokenizers._trained_entry
    deletes: list[int] = []

    def check_then_delete(name):
        entry = check(name)
        deleter = threading.Thread(
            target=lambda: deletes.append(app.test_client().delete("/api/tokenizers/racy").status_code)
        )
        deleter.start()
        deleter.join(0.3)  # the DELETE is done by now, unless it waits for the download
        return entry

    monkeypatch.setattr(tokenizers, "_trained_entry", check_then_delete)
    resp = app.test_client().get(f"/api/tokenizers/racy{suffix}")
    assert resp.status_code == 200, resp.get_json()
    assert resp.data == original
    deadline = time.monotonic() + 5
    while not deletes and time.monotonic() < deadline:
        time.sleep(0.01)
    assert deletes == [200] and not (data / f"racy{suffix}").exists()


def test_a_delete_the_server_may_not_do_is_said_not_an_internal_error(client, server_dirs, monkeypatch):
    """Files in the data folder the server may not remove (made by another user) gave a 500."""
    _, data = server_dirs
    save_tokenizer(data, "theirs")
    real_unlink = Path.unlink

    def unlink(self, missing_ok=False):
        if self.name == "theirs.tiktoken":
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    resp = client.delete("/api/tokenizers/theirs")
    assert resp.status_code == 503
    assert resp.get_json()["error"].startswith("could not delete theirs.tiktoken: Permission denied;")
    assert str(data) not in resp.get_json()["error"]
    listing = client.get("/api/tokenizers").get_json()  # the .json went first: a broken entry is left
    assert [b["name"] for b in listing["broken"]] == ["theirs"]


def test_listing_leaves_out_the_per_merge_counts_the_json_keeps(client, server_dirs):
    """train() records each merge's count (for `diff`): up to 65,536 numbers per tokenizer,
    which the listing of every tokenizer would repeat; like an extension's per-merge lists, it
    shows the rest of the metadata and leaves the list to the .json."""
    _, data = server_dirs
    tok = tokenizer.train("hello hello world " * 50, 270, min_frequency=1, name="t")
    tok.save(data / "t")
    [entry] = client.get("/api/tokenizers").get_json()["trained"]
    assert "merge_counts" not in entry["metadata"]["statistics"]
    assert entry["metadata"]["statistics"]["merges"] == len(tok.merges)
    saved = client.get("/api/tokenizers/t.json").get_json()
    assert saved["metadata"]["statistics"]["merge_counts"] == tok.metadata["statistics"]["merge_counts"]


def test_listing_loads_new_tokenizers_without_holding_the_job_lock(app, server_dirs, monkeypatch):
    """The first listing after a restart loaded every stored tokenizer under the job manager's
    lock: with nine o200k-sized ones a GET /api/jobs sent meanwhile waited 2.7 s, and so did job
    status, cancel and SSE. The loads now run before the lock is taken."""
    from playground import tokenizers
    from playground.jobs_api import job_manager

    _, data = server_dirs
    for name in ("one", "two"):
        save_tokenizer(data, name)
    held: list[bool] = []
    load = Tokenizer.load

    def watched_load(path, *args, **kwargs):
        held.append(job_manager().lock._is_owned())  # RLock: held by this thread?
        return load(path, *args, **kwargs)

    monkeypatch.setattr(tokenizers.Tokenizer, "load", watched_load)
    with app.app_context():
        job_manager()  # created before the request, as on a running server
    resp = app.test_client().get("/api/tokenizers")
    assert sorted(e["name"] for e in resp.get_json()["trained"]) == ["one", "two"]
    assert held == [False, False]
    save_tokenizer(data, "two")  # rewritten: re-read on the next listing, still outside the lock
    app.test_client().get("/api/tokenizers")
    assert held[2:] == [False]


def test_concurrent_listings_load_each_tokenizer_once(app, server_dirs, monkeypatch):
    """With the loads moved out of the job lock, ten listings at once each loaded every stored
    tokenizer: seconds of CPU, during which a training job ran on unhindered and finished before
    the test of the job queue could look at it. Listings now wait for one another's loads."""
    from concurrent.futures import ThreadPoolExecutor

    from playground import tokenizers

    _, data = server_dirs
    for name in ("one", "two", "three"):
        save_tokenizer(data, name)
    loads: list[str] = []
    load = Tokenizer.load

    def slow_load(path, *args, **kwargs):
        loads.append(Path(path).name)
        time.sleep(0.05)  # long enough for the other listings to arrive meanwhile
        return load(path, *args, **kwargs)

    monkeypatch.setattr(tokenizers.Tokenizer, "load", slow_load)
    with ThreadPoolExecutor(max_workers=10) as pool:
        codes = list(pool.map(lambda _: app.test_client().get("/api/tokenizers").status_code, range(10)))
    assert codes == [200] * 10
    assert sorted(loads) == ["one", "three", "two"]

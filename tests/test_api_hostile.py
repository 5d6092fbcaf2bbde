"""Hostile requests to the server: each is a 4xx JSON answer within a second, leaves no thread
spinning and nothing behind; broken stored files are listed and deletable; a runaway job is
stopped at its time limit. The files used are in tests/data/hostile/server (index.json says
what each must give); the big inputs are generated here.
"""

from __future__ import annotations

import io
import json
import os
import threading
import time
from urllib.parse import quote_from_bytes

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playground import create_app, forms
from playground.errors import INTERNAL_ERROR
from tests.helpers import ROOT
from tests.server_helpers import GOOD, LiveServer, alive, leftovers, post_train, save_tokenizer
from tokenizer.formats import dump_tiktoken
from tokenizer.train import train

HOSTILE = ROOT / "tests" / "data" / "hostile" / "server"
CASES = json.loads((HOSTILE / "index.json").read_text(encoding="utf-8"))["cases"]
FAST = 1.0  # seconds: every hostile request is answered within this (the bound)
MiB = 1024 * 1024


@pytest.fixture
def full_app(server_dirs):
    """The app with the real (default) limits: 16 MB of text, 1 MB per other field.
    No job ever starts (MAX_RUNNING_JOBS=0): a request that passes every check is queued, 202."""
    web, data = server_dirs
    threads = threading.active_count()
    app = create_app({"WEB_DIR": web, "DATA_DIR": data, "MAX_RUNNING_JOBS": 0, "MAX_QUEUED_JOBS": 10_000})
    yield app
    app.extensions["bpe_jobs"].shutdown()
    assert threading.active_count() == threads  # no request left a thread behind


@pytest.fixture
def full(full_app):
    return full_app.test_client()


def multipart(fields: dict[str, bytes], boundary: str = "h0stile") -> tuple[bytes, str]:
    """A multipart body with each field's value as raw bytes (no client re-encodes them)."""
    body = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value + b"\r\n"
        for name, value in fields.items()
    )
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def with_base_file(filename: str, data: bytes) -> tuple[bytes, str]:
    """An extend request (add 10 merges to an uploaded base file, on GOOD text) as a multipart body."""
    part = f'--h0stile\r\nContent-Disposition: form-data; name="base_file"; filename="{filename}"\r\n\r\n'
    extra, content_type = multipart({"add": b"10", "text": GOOD})
    return part.encode() + data + b"\r\n" + extra, content_type


def send(client, body: bytes, content_type: str):
    """POST /api/train; returns (response, seconds). Asserts a JSON answer that is never a 500."""
    started = time.perf_counter()
    resp = client.post(
        "/api/train", data=body, content_type=content_type, headers={"Origin": "http://localhost"}
    )
    seconds = time.perf_counter() - started
    assert resp.status_code < 500, resp.get_json()
    assert resp.is_json and isinstance(resp.get_json(), dict)
    return resp, seconds


def urlencoded(fields: dict[str, bytes]) -> bytes:
    return "&".join(f"{k}={quote_from_bytes(v)}" for k, v in fields.items()).encode()


def assert_refused(resp, seconds, status, fragment):
    assert resp.status_code == status, resp.get_json()
    assert fragment in resp.get_json()["error"], resp.get_json()
    assert seconds < FAST, seconds


# ----- the reproductions ------------------------------------------------------------


def test_100k_special_tokens_refused_fast(full, server_dirs):
    threads = threading.active_count()
    tokens = json.dumps([f"<|t{i}|>" for i in range(100_000)]).encode()
    resp, seconds = send(full, *multipart({"vocab_size": b"300", "text": GOOD, "special_tokens": tokens}))
    assert_refused(resp, seconds, 413, "the field 'special_tokens' is over 1 MB")
    # Under the field bound but far over the count: refused before any loop over them.
    short = json.dumps([str(i % 10) for i in range(60_000)]).encode()
    resp, seconds = send(full, *multipart({"vocab_size": b"300", "text": GOOD, "special_tokens": short}))
    assert_refused(resp, seconds, 400, "at most 256 tokens, got 60,000")
    assert threading.active_count() == threads
    assert leftovers(server_dirs[1]) == []


def test_deeply_nested_special_tokens_is_400_not_500(full):
    nested = b"[" * 100_000 + b"]" * 100_000
    for body in (multipart({"vocab_size": b"300", "text": GOOD, "special_tokens": nested}),):
        resp, seconds = send(full, *body)
        assert_refused(resp, seconds, 400, "flat list of strings")
    resp, seconds = send(
        full,
        urlencoded({"vocab_size": b"300", "text": GOOD, "special_tokens": nested}),
        "application/x-www-form-urlencoded",
    )
    assert_refused(resp, seconds, 400, "flat list of strings")


def test_a_huge_number_in_special_tokens_is_400_not_500(full):
    huge = b"[" + b"9" * 100_000 + b"]"  # over int()'s 4,300 digits: json.loads raises ValueError
    resp, seconds = send(full, *multipart({"vocab_size": b"300", "text": GOOD, "special_tokens": huge}))
    assert_refused(resp, seconds, 400, "must be a list of strings")


@pytest.mark.parametrize("field", ["text", "name", "regex", "special_tokens", "vocab_size", "pattern"])
@pytest.mark.parametrize("encoding", ["multipart", "urlencoded"])
def test_invalid_utf8_in_any_field_names_the_field(full, server_dirs, field, encoding):
    fields = {"vocab_size": b"300", "text": GOOD, "pattern": b"custom", "regex": rb"\w+|\s+|\S"}
    fields[field] = "naïve ".encode() + b"\xff\xfe tail"
    if encoding == "multipart":
        resp, seconds = send(full, *multipart(fields))
    else:
        resp, seconds = send(full, urlencoded(fields), "application/x-www-form-urlencoded")
    assert_refused(resp, seconds, 400, f"the field '{field}' is not UTF-8 text: invalid byte(s) at offset 7")
    assert "FF FE" in resp.get_json()["error"]
    assert leftovers(server_dirs[1]) == []
    assert full.get("/api/jobs").get_json()["jobs"] == []


def test_raw_invalid_bytes_in_a_urlencoded_body(full):
    resp, seconds = send(full, b"vocab_size=300&text=ab\xffcd", "application/x-www-form-urlencoded")
    assert_refused(resp, seconds, 400, "the field 'text' is not UTF-8")
    resp, seconds = send(full, b"vocab_size=300&te\xffxt=abcd", "application/x-www-form-urlencoded")
    assert_refused(resp, seconds, 400, "a field name is not UTF-8")


@pytest.mark.parametrize("encoding", ["multipart", "urlencoded"])
def test_17_mib_text_is_413_either_way(full, server_dirs, encoding):
    text = b"a" * (17 * MiB)
    fields = {"vocab_size": b"300", "text": text}
    if encoding == "multipart":
        body, content_type = multipart(fields)
    else:
        body, content_type = urlencoded(fields), "application/x-www-form-urlencoded"
    resp, seconds = send(full, body, content_type)
    assert_refused(resp, seconds, 413, "the field 'text' is over 16 MB; send bigger text as a file")
    assert leftovers(server_dirs[1]) == []


def test_special_tokens_at_their_limits_fit_their_field(full):
    """256 tokens of 256 emoji, as Python's json.dumps writes them (12 bytes a character), were
    a 413 "over 512 KB" although both limits hold: the field's bound now holds the list."""
    tokens = json.dumps([f"<{i:03d}" + "\U0001f600" * 252 for i in range(256)]).encode()
    assert len(tokens) > 512 * 1024  # the bound before
    resp, _ = send(full, *multipart({"vocab_size": b"300", "text": GOOD, "special_tokens": tokens}))
    assert resp.status_code == 202, resp.get_json()


def test_urlencoded_body_over_its_bound_is_refused_before_reading(full):
    """48+ MB of percent-encoded text is refused from Content-Length alone."""
    body = b"text=" + b"%41" * (17 * MiB)
    resp, seconds = send(full, body, "application/x-www-form-urlencoded")
    assert_refused(resp, seconds, 413, "the field 'text' is over 16 MB")


@pytest.mark.parametrize(
    "field, size, fragment",
    [
        ("name", 1200 * 1024, "the field 'name' is over 1 MB"),
        ("regex", 1200 * 1024, "the field 'regex' is over 1 MB"),
        ("whatever", 1200 * 1024, "the field 'whatever' is over 1 MB"),
    ],
)
def test_every_field_is_bounded(full, field, size, fragment):
    for body in (
        multipart({"vocab_size": b"300", "text": GOOD, field: b"x" * size}),
        (
            urlencoded({"vocab_size": b"300", "text": GOOD, field: b"x" * size}),
            "application/x-www-form-urlencoded",
        ),
    ):
        resp, seconds = send(full, *body)
        assert_refused(resp, seconds, 413, fragment)


def test_too_many_fields(full):
    body = b"&".join(b"f%d=1" % i for i in range(200))
    resp, seconds = send(full, body, "application/x-www-form-urlencoded")
    assert_refused(resp, seconds, 400, "too many form fields")
    resp, seconds = send(full, *multipart({f"f{i}": b"1" for i in range(200)}))
    assert resp.status_code == 413 and seconds < FAST
    # it said "upload too large: the limit is 200 MB per request" of a body of a few KB
    assert resp.get_json()["error"].startswith("too many form parts: at most 96 (files and fields together)")


def test_too_many_files_is_said_not_called_too_large(full, server_dirs):
    """97 one-line files: past the part limit (MAX_FILES + 32) before the view counts them."""
    _, data = server_dirs
    files = b"".join(
        f'--h0stile\r\nContent-Disposition: form-data; name="corpus"; filename="f{i}.txt"\r\n\r\n'.encode()
        + b"hello\r\n"
        for i in range(97)
    )
    body, content_type = multipart({"vocab_size": b"300"})
    resp, seconds = send(full, files + body, content_type)
    assert_refused(resp, seconds, 413, "too many form parts: at most 96")
    assert "GET /api/health gives max_files" in resp.get_json()["error"]
    assert leftovers(data) == [] and list((data / ".jobs").iterdir()) == []  # the uploads so far removed


@pytest.mark.parametrize(
    "part",
    [
        b'Content-Disposition: form-data; nome="vocab_size"\r\n\r\n300',  # a field without a name
        b'Content-Disposition: form-data; filename="a.txt"\r\n\r\nhello',  # a file without one
        b"Content-Disposition: form-data\r\n\r\n300",
    ],
)
def test_a_part_without_a_name_is_400_not_500(full, server_dirs, part):
    """A part whose Content-Disposition has no name= reached the checks as the field None: 500."""
    _, data = server_dirs
    body, content_type = multipart({"text": GOOD})
    resp, seconds = send(full, b"--h0stile\r\n" + part + b"\r\n" + body, content_type)
    assert_refused(resp, seconds, 400, "a part of the form has no name: each part needs a header")
    assert list((data / ".jobs").iterdir()) == []


def test_malformed_multipart_is_400(full):
    body, content_type = multipart({"vocab_size": b"300", "text": GOOD})
    resp, seconds = send(full, body[:-30], content_type)  # no closing boundary
    assert_refused(resp, seconds, 400, "malformed form body")
    resp, seconds = send(full, body, "multipart/form-data")  # no boundary
    assert_refused(resp, seconds, 400, "malformed form body")
    # 17 MB before any boundary (past the 16 MB the decoder holds): was a 413 saying the limit is 200 MB
    resp, seconds = send(full, b"x" * (17 << 20) + body, content_type)
    assert_refused(resp, seconds, 400, "malformed form body: no part boundary within its first 16 MB")


def test_a_cut_off_upload_says_so_not_werkzeug_s_state(full, server_dirs):
    """A body that ends inside a part said "Invalid form-data cannot parse beyond State.DATA; send
    multipart/form-data" (which it was), and one shorter than its Content-Length (a dropped
    connection) "The browser (or proxy) sent a request that this server could not understand";
    both now say the upload was cut short and to send it again, and leave no job folder."""
    _, data = server_dirs
    body, content_type = multipart({"vocab_size": b"300", "text": GOOD})
    cut = body[:-30]  # inside the text part: no closing boundary
    resp, seconds = send(full, cut, content_type)
    assert_refused(resp, seconds, 400, "malformed form body: it ends inside the part 'text'")
    assert "State." not in resp.get_json()["error"] and "cut short" in resp.get_json()["error"]
    resp, seconds = send(full, b"no boundary here\r\n", content_type)
    assert_refused(resp, seconds, 400, "no part starts with the boundary 'h0stile'")
    started = time.perf_counter()
    resp = full.post(
        "/api/train",
        input_stream=io.BytesIO(cut),
        content_type=content_type,
        headers={"Origin": "http://localhost"},
        environ_overrides={"CONTENT_LENGTH": str(len(body) + 1000)},
    )
    assert_refused(resp, time.perf_counter() - started, 400, "the upload ended after")
    assert "cut short" in resp.get_json()["error"]
    assert list((data / ".jobs").iterdir()) == []


def test_a_cut_off_urlencoded_upload_is_refused_not_trained_on_its_start(full, server_dirs):
    """A url-encoded body that stopped short of its Content-Length (the client's connection
    dropped after "text=hello+wor") was queued, 202, to train on the part that arrived: the
    body was read with one read(), which returns what has come. Now it is read to its end and
    a short one is the same 400 as a cut-off multipart upload."""
    _, data = server_dirs
    body = urlencoded({"vocab_size": b"300", "text": GOOD})
    started = time.perf_counter()
    resp = full.post(
        "/api/train",
        input_stream=io.BytesIO(body[:-100]),
        content_type="application/x-www-form-urlencoded",
        headers={"Origin": "http://localhost"},
        environ_overrides={"CONTENT_LENGTH": str(len(body))},
    )
    assert_refused(resp, time.perf_counter() - started, 400, "the upload ended after")
    assert list((data / ".jobs").iterdir()) == []
    resp, _ = send(full, body, "application/x-www-form-urlencoded")  # whole, it is queued
    assert resp.status_code == 202, resp.get_json()


@pytest.mark.parametrize(
    "regex, fragment",
    [
        (r"(\w+)|\s+", "1 capturing group"),
        (r"(?P<w>\w+)|\s+", "(?:...)"),
        ("a" * 2001, "at most 2,000"),
        ("(?:ab|c){10000000}", "expand to 30,000,000 items"),
        ("gpt4", "name of a built-in pattern"),
        (r"(?:a|a)+b|\s+|\S", "backtracks catastrophically"),  # was queued; minutes per 30 'a's
        # fine in `regex`, exponential in the page's `re`: was trained, then froze the page's worker
        (r"(?:a+)+b|\s+|\S", "backtracks catastrophically in Python's re"),
    ],
)
def test_bad_regex_refused_at_submit(full, regex, fragment):
    fields = {"vocab_size": b"300", "text": GOOD, "pattern": b"custom", "regex": regex.encode()}
    resp, seconds = send(full, *multipart(fields))
    assert_refused(resp, seconds, 400, fragment)
    assert full.get("/api/jobs").get_json()["jobs"] == []


@pytest.mark.parametrize("pattern", [None, b"gpt2", b"none"])
def test_a_regex_without_pattern_custom_is_refused_not_ignored(full, pattern):
    """It was queued and trained with the named pattern (gpt4 when none was sent)."""
    fields = {"vocab_size": b"300", "text": GOOD, "regex": rb"\w+|\s+|\S"}
    if pattern is not None:
        fields["pattern"] = pattern
    resp, seconds = send(full, *multipart(fields))
    assert_refused(resp, seconds, 400, "the field 'regex' is read only with pattern 'custom'")
    assert full.get("/api/jobs").get_json()["jobs"] == []


def test_a_base_file_whose_split_backtracks_is_refused_at_submit(full):
    """A tokenizer.json whose Split regex is (?:a|a)+b|...: it loaded, and its job hung on the
    corpus until the time limit; the probe refuses it within the request's bound."""
    hf = (ROOT / "tests" / "data" / "hostile" / "files" / "hf-backtracking.json").read_bytes()
    resp, seconds = send(full, *with_base_file("tokenizer.json", hf))
    assert_refused(resp, seconds, 400, "backtracks catastrophically")
    assert full.get("/api/jobs").get_json()["jobs"] == []


@pytest.mark.parametrize(
    ("body", "content_type", "named"),
    [
        (b'{"vocab_size": 300, "text": "some text"}', "application/json", "application/json"),
        (b"vocab_size=300&text=some+text", "text/plain", "text/plain"),
        (b"vocab_size=300&text=some+text", None, "a body without Content-Type"),
    ],
)
def test_a_body_that_is_not_a_form_is_415_naming_the_type(full, body, content_type, named):
    """It was a 400 "vocab_size is required" for a JSON body that had vocab_size."""
    started = time.perf_counter()
    resp = full.post(
        "/api/train", data=body, content_type=content_type, headers={"Origin": "http://localhost"}
    )
    assert_refused(resp, time.perf_counter() - started, 415, f"takes a form, not {named}")
    assert "multipart/form-data" in resp.get_json()["error"]


def test_a_base_file_whose_merges_double_a_token_is_refused_not_built(full):
    """41 merges of a token with itself (a 1 KB .json) describe a 2**41-byte token: building it
    ran the server out of memory; the lengths are added up before anything is built."""
    bomb = (ROOT / "tests" / "data" / "hostile" / "files" / "merge-bomb.json").read_bytes()
    resp, seconds = send(full, *with_base_file("bomb.json", bomb))
    assert_refused(resp, seconds, 400, "the tokens so far total over 256 MiB")


def test_valid_urlencoded_and_multipart_requests_are_both_queued(full):
    fields = {"vocab_size": b"300", "text": "héllo wörld ".encode() * 20, "special_tokens": b'["<|a|>"]'}
    for body in (multipart(fields), (urlencoded(fields), "application/x-www-form-urlencoded")):
        resp, _ = send(full, *body)
        assert resp.status_code == 202, resp.get_json()
    jobs = full.get("/api/jobs").get_json()["jobs"]
    assert [j["params"]["special_tokens"] for j in jobs] == [["<|a|>"], ["<|a|>"]]
    assert [j["corpus"]["bytes"] for j in jobs] == [len(fields["text"])] * 2


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


# ----- the time limit ---------------------------------------------------------------------------


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


def test_runaway_job_is_stopped_at_the_time_limit(tmp_path):
    """A job that would run for minutes (1 MB of random letters as one chunk, pattern "none": each
    of 20,000 merges rescans the whole chunk) fails at JOB_TIME_LIMIT, its process is gone, and
    nothing is left behind. (It was a backtracking regex; the submit's probes now refuse that.)"""
    import random

    letters = random.Random(1)
    text = "".join(letters.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(1_000_000))
    server = LiveServer(tmp_path / "data", JOB_TIME_LIMIT=2.0)
    try:
        resp = server.train(text=text, vocab_size="20000", pattern="none")
        assert resp.status_code == 202, resp.text
        job = resp.json()["job"]
        pid = server.pid(job)  # started before the 202 (a free slot)
        final = server.wait(job, lambda s: s["state"] not in ("queued", "running"), timeout=30)
        assert final["state"] == "failed"
        assert "time limit of 2 s" in final["error"] and "--job-time-limit" in final["error"]
        assert 2.0 <= final["elapsed"] < 20
        deadline = time.monotonic() + 10  # SIGTERM, then SIGKILL after a grace period
        while (alive(pid) or server.files()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
        assert server.files() == []
    finally:
        server.close()


def test_job_time_limit_must_be_positive(server_dirs):
    web, data = server_dirs
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="JOB_TIME_LIMIT must be a positive number"):
            create_app({"WEB_DIR": web, "DATA_DIR": data, "JOB_TIME_LIMIT": bad})


def test_dropped_text_is_a_job_warning(tmp_path):
    server = LiveServer(tmp_path / "data")
    try:
        resp = server.train(text="hello, world! " * 40, vocab_size="260", pattern="custom", regex=r"\w+")
        assert resp.status_code == 202, resp.text
        final = server.wait(resp.json()["job"], lambda s: s["state"] not in ("queued", "running"))
        assert final["state"] == "done", final
        (warning,) = final["warnings"]
        assert "does not match 28.6% of the sample" in warning
    finally:
        server.close()


# ----- no 500: the last resort, and fuzzing ------------------------------------------------------


def test_an_unexpected_exception_is_a_json_500(client, monkeypatch):
    def boom(form):
        raise RuntimeError("a bug")

    monkeypatch.setattr(forms, "tie_break", boom)
    resp = post_train(client, vocab_size="300", text="some text " * 20)
    assert resp.status_code == 500 and resp.get_json() == {"error": INTERNAL_ERROR}


FIELD_NAMES = st.sampled_from(
    [
        "vocab_size",
        "text",
        "name",
        "pattern",
        "regex",
        "special_tokens",
        "tie_break",
        "min_frequency",
        "corpus",
        "x",
    ]
)
FIELD_VALUES = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=64).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"300", b"custom", b"gpt4", b"[", b"[[[]]]", b'["a", "a"]', b"(a)", b"a*", b"0", b"-1"]),
    st.integers(0, 3000).map(lambda n: b"[" * n + b"]" * n),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    fields=st.dictionaries(FIELD_NAMES, FIELD_VALUES, max_size=9),
    encoding=st.sampled_from(["multipart", "urlencoded", "raw"]),
)
def test_fuzzed_forms_never_give_a_500(full, fields, encoding):
    """Random field values, sizes and bytes: always JSON, never a 500, always fast."""
    if encoding == "multipart":
        body, content_type = multipart(fields)
    elif encoding == "urlencoded":
        body, content_type = urlencoded(fields), "application/x-www-form-urlencoded"
    else:
        body, content_type = (
            b"&".join(k.encode() + b"=" + v for k, v in fields.items()),
            ("application/x-www-form-urlencoded"),
        )
    resp, seconds = send(full, body, content_type)
    assert seconds < FAST
    assert resp.status_code in (202, 400, 409, 413), resp.get_json()


def test_long_base_file_names_are_cut_not_a_500(full):
    """A base_file named with 90 emoji (360 bytes, past the 255 a file name may have) was a 500
    when stored under its name; 300 letters lost the .tiktoken suffix in the cut and was refused
    as "expected a tokenizer file"."""
    tok = train("hello world " * 50, 260)
    files = {
        ".tiktoken": dump_tiktoken(tok.mergeable_ranks).encode(),
        ".json": json.dumps(tok.to_json()).encode(),
    }
    for stem in ("😀" * 90, "a" * 300):
        resp, seconds = send(full, *with_base_file(f"{stem}.tiktoken", files[".tiktoken"]))
        assert resp.status_code == 202 and seconds < FAST, resp.get_json()
    pair = b"".join(  # both names are cut the same way: still one tokenizer's pair
        f'--h0stile\r\nContent-Disposition: form-data; name="base_file"; filename="{"b" * 300}{suffix}"\r\n\r\n'.encode()
        + data
        + b"\r\n"
        for suffix, data in files.items()
    )
    body, content_type = multipart({"add": b"10", "text": GOOD})
    resp, _ = send(full, pair + body, content_type)
    assert resp.status_code == 202, resp.get_json()


@pytest.mark.parametrize("field", ["text", "vocab_size", "name", "pattern"])
def test_a_field_sent_twice_is_refused_not_half_read(full, field):
    """form.get reads the first of two: text=aaa&text=<the corpus> trained on 'aaa' alone,
    vocab_size=300&vocab_size=5000 at 300, without a word."""
    fields = {"vocab_size": b"300", "text": GOOD, "name": b"a", "pattern": b"gpt2"}
    body = urlencoded(fields) + b"&" + urlencoded({field: fields[field]})
    resp, seconds = send(full, body, "application/x-www-form-urlencoded")
    assert_refused(resp, seconds, 400, f"field {field!r} was sent 2 times; send each field once")


@pytest.mark.parametrize("field", ["corpus", "base_file"])
@pytest.mark.parametrize("encode", ["multipart", "urlencoded"])
def test_a_file_field_sent_as_text_is_refused_not_ignored(full, field, encode):
    """curl -F corpus=big.txt (no @), or a form without enctype=multipart/form-data, sends the
    file's name as text: the job trained on `text` alone, and a base_file's base was dropped (it
    trained from bytes), without a word."""
    fields = {"vocab_size": b"300", "text": GOOD, field: b"big.txt"}
    body, content_type = (
        multipart(fields)
        if encode == "multipart"
        else (urlencoded(fields), "application/x-www-form-urlencoded")
    )
    resp, seconds = send(full, body, content_type)
    assert_refused(resp, seconds, 400, f"the field {field!r} came as text ('big.txt'), not as a file upload")
    assert f"curl -F {field}=@FILE" in resp.get_json()["error"]
    assert full.get("/api/jobs").get_json()["jobs"] == []


def test_an_unknown_field_is_refused_not_ignored(full):
    """tie-break=lexical (a dash for the underscore) trained with the default rule, min_freq=5
    with 2, without a word."""
    body = urlencoded({"vocab_size": b"300", "text": GOOD, "tie-break": b"lexical"})
    resp, seconds = send(full, body, "application/x-www-form-urlencoded")
    assert_refused(resp, seconds, 400, "unknown field 'tie-break'; the fields of a train request are: text,")
    assert "tie_break" in resp.get_json()["error"]


def test_a_stalled_upload_is_timed_out_and_frees_its_queue_place(app, server_dirs):
    """A client that sent part of a body and then nothing, its connection left open, held a
    server thread and a job's place in the queue for as long as it liked. The socket now times
    out (serving.SOCKET_TIMEOUT_SECONDS, 1 s here): a 408 that says so, the place freed."""
    import socket

    from tests.server_helpers import serving

    _, data = server_dirs
    jobs = app.extensions["bpe_jobs"]
    body = urlencoded({"vocab_size": b"300", "text": GOOD})
    with serving(app, timeout=1.0) as hostport:
        host, port = hostport.split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            head = (
                f"POST /api/train HTTP/1.1\r\nHost: {hostport}\r\nOrigin: http://{hostport}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            sock.sendall(head.encode("ascii") + body[:100])  # then nothing, the socket kept open
            started = time.monotonic()
            deadline = started + 0.5
            while time.monotonic() < deadline and jobs.arriving == 0:
                time.sleep(0.01)
            assert jobs.arriving == 1  # its place is held while the body arrives
            reply = b""
            while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
                block = sock.recv(65536)
                if not block:
                    break
                reply += block
        assert time.monotonic() - started < 5
        assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
        assert b"the upload stalled: nothing arrived for too long" in reply
        assert jobs.arriving == 0
    assert list((data / ".jobs").iterdir()) == []

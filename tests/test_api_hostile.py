"""Hostile requests to the server: each is a 4xx JSON answer within a second, leaves no thread
spinning and nothing behind (the issue's reproductions: huge or nested special tokens, invalid
UTF-8, oversized bodies and fields, too many fields or files, malformed or cut-off multipart and
urlencoded bodies, bad regexes and base files). The requests are built and sent by
tests/server_helpers.py (multipart, urlencoded, send, assert_refused) to the app with the real
limits (tests/conftest.py's full_app, full). The files of tests/data/hostile/server and broken
stored entries are in test_api_hostile_files.py; the time limit and the last resorts (no 500,
fuzzed forms, a stalled upload) in test_api_hostile_limits.py.
"""

from __future__ import annotations

import io
import json
import threading
import time

import pytest

from tests.helpers import ROOT
from tests.server_helpers import (
    FAST,
    GOOD,
    MiB,
    assert_refused,
    leftovers,
    multipart,
    send,
    urlencoded,
    with_base_file,
)

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

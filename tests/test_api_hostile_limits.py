"""The server's last resorts against hostile requests: a runaway job is stopped at its time
limit, an unexpected exception is a JSON 500, fuzzed forms never give a 500, fields sent twice,
unknown or as the wrong kind are refused rather than ignored, long base-file names are cut, and
a stalled upload is timed out and frees its queue place.
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playground import create_app, forms
from playground.errors import INTERNAL_ERROR
from tests.server_helpers import (
    FAST,
    GOOD,
    LiveServer,
    alive,
    assert_refused,
    multipart,
    post_train,
    send,
    urlencoded,
    with_base_file,
)
from tokenizer.formats import dump_tiktoken
from tokenizer.train import train

# ----- the time limit ---------------------------------------------------------------------------


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


def test_fields_in_the_query_string_are_refused_not_ignored(full, server_dirs):
    """POST /api/train?name=mine with the corpus in the body (curl 'URL?name=mine' -F corpus=@f)
    queued a job named text-300, the name dropped without a word; with vocab_size in the URL
    the answer was "vocab_size is required", of a field the user had sent. The form is read
    from the body only, so a query string is now a 400 that names its keys and says where
    they go, and the request leaves no job folder."""
    _, data = server_dirs
    body, content_type = multipart({"vocab_size": b"300", "text": GOOD})
    started = time.perf_counter()
    resp = full.post(
        "/api/train?name=mine&vocab_size=500",
        data=body,
        content_type=content_type,
        headers={"Origin": "http://localhost"},
    )
    assert_refused(resp, time.perf_counter() - started, 400, "'name', 'vocab_size'")
    assert "query string" in resp.get_json()["error"] and "-F name=" in resp.get_json()["error"]
    assert full.get("/api/jobs").get_json()["jobs"] == [] and list((data / ".jobs").iterdir()) == []


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


CHUNKED_BODY = b"vocab_size=300&text=" + GOOD.replace(b" ", b"+")


@pytest.mark.parametrize(
    "chunks, status, fragment",
    [
        (
            b"zz\r\n" + CHUNKED_BODY,
            400,
            "the chunked upload broke off before its last chunk",
        ),  # not a chunk size
        (
            b"%x\r\n" % len(CHUNKED_BODY) + CHUNKED_BODY + b"\r\n",
            400,
            "the chunked upload broke off before its last chunk",
        ),
        (
            b"%x\r\n" % (len(CHUNKED_BODY) + 10) + CHUNKED_BODY,
            400,
            "the chunked upload broke off before its last chunk",
        ),
        (
            b"%x\r\n" % (len(CHUNKED_BODY) + 10) + CHUNKED_BODY,
            408,
            "stalled: nothing arrived for too long before its last chunk",
        ),  # kept open
    ],
    ids=["bad-size", "no-last-chunk", "cut-in-a-chunk", "stalled"],
)
def test_a_broken_chunked_upload_is_not_said_to_miss_its_content_length(
    app, server_dirs, chunks, status, fragment
):
    """A body sent with Transfer-Encoding: chunked has no Content-Length, yet a malformed or
    cut-off one was "the upload ended after 0 of the 0 bytes its Content-Length announced" (a
    stalled one "before the 0 bytes its Content-Length announced"). It now says the chunked
    upload broke off (or stalled before its last chunk), and leaves no job folder."""
    import socket

    from tests.server_helpers import serving

    _, data = server_dirs
    with serving(app, timeout=1.0) as hostport:
        host, port = hostport.split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            head = (
                f"POST /api/train HTTP/1.1\r\nHost: {hostport}\r\nOrigin: http://{hostport}\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            sock.sendall(head.encode("ascii") + chunks)
            if status != 408:
                sock.shutdown(socket.SHUT_WR)  # the client's connection ends here
            reply = b""
            while not reply.rstrip().endswith(b"}"):
                block = sock.recv(65536)
                if not block:
                    break
                reply += block
    assert reply.startswith(b"HTTP/1.1 %d" % status), reply[:300]
    error = json.loads(reply.partition(b"\r\n\r\n")[2])["error"]
    assert fragment in error and "Content-Length" not in error, error
    assert list((data / ".jobs").iterdir()) == []

"""playground/train.py and forms.py: POST /api/train refuses bad input with a 400 that says why.

Every refused request is checked to leave nothing behind (its uploads are removed) and to
queue no job. Training itself (worker processes, SSE, cancel) is in test_api_jobs.py.
"""

from __future__ import annotations

import contextlib
import errno
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playground import forms
from playground.config import DEFAULTS
from playground.errors import ApiError
from playground.jobs import JobManager
from playground.train import UploadRequest
from tests.server_helpers import GOOD, corpus_file, leftovers, post_train, raw_request, save_tokenizer


@pytest.mark.parametrize(
    "fields, status, fragment",
    [
        ({"corpus": None}, 400, "vocab_size is required"),
        ({"vocab_size": "256"}, 400, "out of range"),  # the server learns one merge at least (issue 6)
        ({"vocab_size": "-5"}, 400, "out of range"),
        ({"vocab_size": str(DEFAULTS["MAX_VOCAB"] + 1)}, 400, "out of range"),
        ({"vocab_size": "1e3"}, 400, "must be an integer"),
        ({"vocab_size": "+-300"}, 400, "must be an integer, got '+-300'"),  # was "out of range"
        ({"vocab_size": "3\u00b2"}, 400, "must be an integer"),  # '3²': isdigit() but not int()
        # int() reads other scripts' digits and underscores: these were queued as vocab 300
        ({"vocab_size": "\u0663\u0660\u0660"}, 400, "must be an integer, got"),  # Arabic-Indic 300
        ({"vocab_size": "\uff13\uff10\uff10"}, 400, "must be an integer, got"),  # fullwidth 300
        ({"vocab_size": "3_00"}, 400, "must be an integer, got '3_00'"),
        ({"vocab_size": "300", "min_frequency": "\u0662"}, 400, "min_frequency must be an integer"),
        # past int()'s 4,300 digits: it said "must be an integer"; the value is cut in the message
        (
            {"vocab_size": "9" * 5000},
            400,
            "vocab_size 99999999999999999999... (5,000 digits) is out of range",
        ),
        (
            {"min_frequency": "-" + "9" * 5000, "vocab_size": "300"},
            400,
            "min_frequency -9999999999999999999... (5,000 digits) is out of range",
        ),
        ({"vocab_size": "300", "pattern": "gpt5"}, 400, "unknown pattern 'gpt5'"),
        ({"vocab_size": "300", "pattern": "custom"}, 400, "needs a regular expression"),
        ({"vocab_size": "300", "pattern": "custom", "regex": "(a"}, 400, "invalid regex: missing )"),
        ({"vocab_size": "300", "pattern": "custom", "regex": "a*"}, 400, "empty string"),
        ({"vocab_size": "300", "pattern": "custom", "regex": r"\X"}, 400, "not usable in the browser"),
        ({"vocab_size": "300", "tie_break": "random"}, 400, "unknown tie_break 'random'"),
        ({"vocab_size": "300", "min_frequency": "0"}, 400, "min_frequency 0 is out of range"),
        ({"vocab_size": "300", "special_tokens": "[1, 2]"}, 400, "list of strings"),
        ({"vocab_size": "300", "special_tokens": '["a"'}, 400, "not valid"),
        ({"vocab_size": "300", "special_tokens": "<a>, <b>, <a>"}, 400, "listed twice"),
        ({"vocab_size": "300", "name": "../escape"}, 400, "unsafe name"),
        ({"vocab_size": "300", "name": ".hidden"}, 400, "unsafe name"),
        ({"vocab_size": "300", "name": "a/b"}, 400, "unsafe name"),
        ({"vocab_size": "300", "name": "x" * 65}, 400, "unsafe name"),
        ({"vocab_size": "300", "name": "tok.json"}, 400, "unsafe name"),
        ({"vocab_size": "300", "name": "NUL"}, 400, "unsafe name"),
        ({"vocab_size": "300", "name": "caf\u00e9"}, 400, "unsafe name"),
        ({"vocab_size": "300", "name": "cl100k_base"}, 409, "reference encoding"),
        ({"vocab_size": "300", "name": "GPT2"}, 409, "reference encoding"),
        ({"vocab_size": "300", "name": "taken"}, 409, "already exists"),
        ({"vocab_size": "300", "name": "TAKEN"}, 409, "already exists"),
    ],
)
def test_bad_training_parameters(client, server_dirs, fields, status, fragment):
    _, data = server_dirs
    save_tokenizer(data, "taken")
    fields = dict(fields)
    if "corpus" not in fields:
        fields["corpus"] = corpus_file(GOOD)
    elif fields["corpus"] is None:
        fields["corpus"] = corpus_file(GOOD)
    resp = post_train(client, **fields)
    assert resp.status_code == status, resp.get_json()
    assert fragment in resp.get_json()["error"]
    assert sorted(leftovers(data)) == ["taken.json", "taken.tiktoken"]  # uploads removed
    assert client.get("/api/jobs").get_json()["jobs"] == []


def test_non_utf8_corpus_names_file_and_offset(client, server_dirs):
    _, data = server_dirs
    resp = post_train(
        client,
        vocab_size="300",
        corpus=[
            corpus_file(GOOD, "fine.txt"),
            corpus_file("naïve ".encode() * 3 + b"\xff\xfe tail", "latin.txt"),
        ],
    )
    assert resp.status_code == 400
    error = resp.get_json()["error"]
    assert "latin.txt" in error and "offset 21" in error and "FF FE" in error
    assert leftovers(data) == []
    # A truncated multi-byte character at the very end is an error too.
    resp = post_train(client, vocab_size="300", corpus=corpus_file("ok €".encode()[:-1], "cut.txt"))
    assert (
        resp.status_code == 400
        and "cut.txt" in resp.get_json()["error"]
        and "offset 3" in resp.get_json()["error"]
    )


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"text": ""},
        {"corpus": corpus_file(b"", "empty.txt")},
        {"corpus": [corpus_file(b"", "a.txt"), corpus_file(b"", "b.txt")], "text": ""},
    ],
)
def test_empty_corpus(client, server_dirs, fields):
    _, data = server_dirs
    resp = post_train(client, vocab_size="300", **fields)
    assert resp.status_code == 400
    assert "empty corpus" in resp.get_json()["error"]
    assert leftovers(data) == []


class _FullDisk(io.BytesIO):
    """An upload file on a disk that fills up after a few bytes."""

    name = "/nonexistent/upload.txt"

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(
    "fields, fail, status, fragment",
    [
        ({"corpus": corpus_file(GOOD)}, "upload", 507, "could not store the upload: No space left on device"),
        ({"text": GOOD.decode()}, "text", 507, "could not store the upload: No space left on device"),
        ({"text": GOOD.decode()}, "folder", 503, "could not write into its data folder: Permission denied"),
    ],
)
def test_a_full_or_read_only_disk_is_said_not_an_internal_error(
    client, server_dirs, monkeypatch, fields, fail, status, fragment
):
    """A write into the job's folder that failed (ENOSPC, EACCES) was a 500 "internal error:
    please report it"; nothing is left behind either way."""
    _, data = server_dirs
    if fail == "upload":
        monkeypatch.setattr(UploadRequest, "_get_file_stream", lambda self, *a, **k: _FullDisk())
    elif fail == "text":
        real_open = open

        def full_open(path, mode="r", *args, **kwargs):
            if str(path).endswith("text.txt") and "w" in mode:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            return real_open(path, mode, *args, **kwargs)

        monkeypatch.setattr("builtins.open", full_open)
    else:

        def refuse(self):
            raise PermissionError(errno.EACCES, "Permission denied", str(self.jobs_dir))

        monkeypatch.setattr(JobManager, "new_job_dir", refuse)
    resp = post_train(client, vocab_size="300", **fields)
    assert resp.status_code == status, resp.get_json()
    assert fragment in resp.get_json()["error"]
    assert str(data) not in resp.get_json()["error"]
    assert leftovers(data) == [] and list((data / ".jobs").iterdir()) == []
    assert client.get("/api/jobs").get_json()["jobs"] == []


def test_upload_over_cap_is_413(client, server_dirs):
    _, data = server_dirs
    resp = post_train(client, vocab_size="300", corpus=corpus_file(b"a" * (80 * 1024)))
    assert resp.status_code == 413
    assert "upload too large" in resp.get_json()["error"] and "64 KB" in resp.get_json()["error"]
    assert leftovers(data) == []
    resp = post_train(client, vocab_size="300", text="b" * (10 * 1024))  # over MAX_TEXT_BYTES
    assert resp.status_code == 413
    assert "as a file" in resp.get_json()["error"]
    assert leftovers(data) == []


def test_upload_over_cap_on_real_server(live, server_dirs):
    """A client that announces a too-big body gets 413 JSON, not a hang or a reset."""
    _, data = server_dirs
    body = b"x" * (80 * 1024)
    boundary = "b0undary"
    payload = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="corpus"; filename="big.txt"\r\n\r\n'.encode()
        + body
        + f"\r\n--{boundary}--\r\n".encode()
    )
    status, reply = raw_request(
        live,
        "POST",
        "/api/train",
        {"Content-Type": f"multipart/form-data; boundary={boundary}", "Origin": f"http://{live}"},
        payload,
    )
    assert status == 413 and "upload too large" in reply["error"]
    assert leftovers(data) == []


def test_special_tokens_parsing():
    parse = forms.parse_special_tokens
    assert parse("", 10) == []
    assert parse("<|a|>, <|b|>\n<|c|>", 10) == ["<|a|>", "<|b|>", "<|c|>"]
    assert parse('["a,b", " spaced "]', 10) == ["a,b", " spaced "]
    with pytest.raises(ApiError, match="at most 2"):
        parse("a,b,c", 2)
    with pytest.raises(ApiError, match="cannot be empty"):
        parse('["ok", ""]', 10)
    with pytest.raises(ApiError, match=r"special_tokens: special token ' ' is only whitespace"):
        parse('["ok", " "]', 10)  # was queued; then every encode of a text with a space failed
    # A .json's mapping pasted: split at commas it made '{"<|a|>": 300' and '"<|b|>": 301}' tokens.
    for mapping in ('{"<|a|>": 300, "<|b|>": 301}', "  {}", '{"<|a|>"}'):
        with pytest.raises(ApiError, match=r'is a JSON object; send a list of the strings, like \["<\|a\|>"'):
            parse(mapping, 10)
    assert parse("<|a|>,{x}", 10) == ["<|a|>", "{x}"]  # a brace inside a token is still a token
    # a file's byte-order mark (a list saved by Notepad): was part of the first token, JSON unseen
    assert parse('\ufeff["<a>", "<b>"]\r\n', 10) == ["<a>", "<b>"]
    assert parse("\ufeff<a>,<b>", 10) == ["<a>", "<b>"]


def test_auto_names_are_safe_and_unique():
    taken = {"taylorswift-1000", "taylorswift-1000-2"}
    assert forms.auto_name("taylorswift.txt", 1000, taken) == "taylorswift-1000-3"
    assert forms.auto_name("../../we ird näme!.txt", 500, set()) == "we-ird-n-me-500"
    assert forms.auto_name(None, 300, set()) == "text-300"
    assert forms.auto_name("....txt", 300, set()) == "text-300"


@settings(max_examples=200, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=64),
        st.text(max_size=24).map(lambda s: s.encode("utf-8", "surrogatepass")),
        st.tuples(st.text(max_size=12), st.binary(max_size=3), st.text(max_size=12)).map(
            lambda t: t[0].encode("utf-8", "surrogatepass") + t[1] + t[2].encode("utf-8", "surrogatepass")
        ),
    ),
    block=st.integers(1, 7),
)
def test_utf8_check_matches_bytes_decode(tmp_path_factory, data, block):
    """Block-wise checking reports exactly the offset bytes.decode does, for any block size."""
    path = tmp_path_factory.mktemp("u") / "f.txt"
    path.write_bytes(data)
    try:
        data.decode("utf-8")
        expected = None
    except UnicodeDecodeError as e:
        expected = e.start
    if expected is None:
        assert forms.check_utf8(path, "f.txt", block_size=block) == len(data)
    else:
        with pytest.raises(ApiError, match=f"offset {expected} "):
            forms.check_utf8(path, "f.txt", block_size=block)


def test_uploads_past_the_queues_room_are_refused_before_they_are_read(app, client, server_dirs, monkeypatch):
    """MAX_QUEUED_JOBS (4) plus the one running slot: with five submissions still being sent,
    a sixth is 429 at once, before its body is read into a job folder, not after."""
    _, data = server_dirs
    jobs = app.extensions["bpe_jobs"]

    def refuse(form):  # while its body is read, a submission holds a place
        raise ApiError(400, f"arriving: {jobs.arriving}")

    with monkeypatch.context() as m:
        m.setattr(forms, "check_fields", refuse)
        assert post_train(client, vocab_size="300", text="x y").get_json()["error"] == "arriving: 1"
    with contextlib.ExitStack() as in_flight:
        for _ in range(5):
            in_flight.enter_context(jobs.reserve())
        resp = post_train(client, vocab_size="300", corpus=corpus_file(GOOD))
        assert resp.status_code == 429, resp.get_json()
        assert "(0 queued, 5 more being sent)" in resp.get_json()["error"]
        assert list((data / ".jobs").iterdir()) == [] and leftovers(data) == []
    assert jobs.arriving == 0

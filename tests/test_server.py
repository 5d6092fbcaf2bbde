"""server.py without training: serving, Host/Origin checks, traversal, validation, tokenizer files.

Every rejected request is also checked to leave nothing behind in the data folder. The
training flow itself (worker processes, SSE, cancel) is in test_server_jobs.py.
"""

from __future__ import annotations

import http.client
import io
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import server  # noqa: E402
from server import create_app  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402

SECRET = "top secret: this file is outside the web and data folders"


def build_web_dir(root: Path) -> Path:
    """A small built page plus symlinks that point out of it (they must never be followed)."""
    web = root / "web"
    (web / "sub").mkdir(parents=True)
    (web / "index.html").write_text("<!doctype html><title>playground</title>", encoding="utf-8")
    (web / "app.js").write_text("export const ok = true;\n", encoding="utf-8")
    (web / "sub" / "mod.mjs").write_text("export const x = 1;\n", encoding="utf-8")
    (web / "core.wasm").write_bytes(b"\0asm\x01\0\0\0")
    (root / "secret.txt").write_text(SECRET, encoding="utf-8")
    (web / "escape.txt").symlink_to(root / "secret.txt")
    (web / "sub" / "up").symlink_to(root, target_is_directory=True)
    return web


def save_tokenizer(data_dir: Path, name: str) -> Tokenizer:
    """A real tokenizer written by core's save (no trainer needed): 'he', 'hel', 'hell', 'hello'."""
    tok = Tokenizer.from_merges(
        [(104, 101), (256, 108), (257, 108), (258, 111)],
        "gpt4",
        ["<|end|>"],
        name=name,
        metadata={"note": "made by the test"},
    )
    tok.save(data_dir / name)
    return tok


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return build_web_dir(tmp_path), tmp_path / "data"


@pytest.fixture
def app(dirs):
    web, data = dirs
    return create_app(
        {"WEB_DIR": web, "DATA_DIR": data, "MAX_UPLOAD_BYTES": 64 * 1024, "MAX_TEXT_BYTES": 8 * 1024}
    )


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def live(app) -> Iterator[str]:
    """The same app on a real socket (ephemeral port)."""
    from werkzeug.serving import make_server

    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"127.0.0.1:{srv.server_port}"
    srv.shutdown()
    thread.join(5)


def leftovers(data: Path) -> list[str]:
    """Everything in the data folder except committed tokenizer files."""
    found = []
    for path in data.rglob("*"):
        if path.is_dir() and path.name == ".jobs":
            continue
        found.append(str(path.relative_to(data)))
    return found


def raw_get(hostport: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, dict]:
    """A GET that sends `path` byte for byte (no client-side normalization of '..')."""
    conn = http.client.HTTPConnection(hostport, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=bool(headers and "Host" in headers))
        for key, value in (headers or {}).items():
            conn.putheader(key, value)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read(), dict(resp.getheaders())
    finally:
        conn.close()


def raw_request(
    hostport: str, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict]:
    conn = http.client.HTTPConnection(hostport, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


def post_train(client, origin: str | None = "http://localhost", **fields):
    data = {}
    for key, value in fields.items():
        data[key] = value
    headers = {"Origin": origin} if origin else {}
    return client.post("/api/train", data=data, content_type="multipart/form-data", headers=headers)


def corpus_file(content: bytes, filename: str = "corpus.txt"):
    return (io.BytesIO(content), filename)


# ----- health, headers, static page -------------------------------------------------------


def test_health_reports_version_and_limits(client):
    resp = client.get("/api/health")
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["status"] == "ok"
    assert body["version"] == __import__("tokenizer").__version__
    assert body["limits"]["min_vocab"] == 257
    assert body["limits"]["max_vocab"] == server.DEFAULTS["MAX_VOCAB"]
    assert body["limits"]["max_upload_bytes"] == 64 * 1024
    assert {"gpt2", "gpt4", "o200k", "none"} <= set(body["patterns"])
    assert body["pattern_choices"][-1] == "custom"
    assert body["tie_breaks"] == ["first", "lexical"]


@pytest.mark.parametrize("path", ["/api/health", "/", "/app.js", "/no-such-file", "/api/nope"])
def test_security_headers_on_every_response(client, path):
    resp = client.get(path)
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["Referrer-Policy"] == "same-origin"
    csp = resp.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    assert "http:" not in csp and "https:" not in csp and "*" not in csp  # no remote origins


def test_static_page_and_mime_types(client):
    resp = client.get("/")
    assert resp.status_code == 200 and b"playground" in resp.data
    assert resp.mimetype == "text/html"
    assert client.get("/core.wasm").mimetype == "application/wasm"
    assert client.get("/sub/mod.mjs").mimetype == "text/javascript"
    assert client.get("/app.js").mimetype == "text/javascript"
    missing = client.get("/nope.js")
    assert missing.status_code == 404


def test_unknown_api_path_is_json_404(client):
    resp = client.get("/api/nope")
    assert resp.status_code == 404
    assert "no such API endpoint" in resp.get_json()["error"]


def test_page_not_built_says_how_to_build(tmp_path):
    app = create_app({"WEB_DIR": tmp_path / "missing", "DATA_DIR": tmp_path / "data"})
    client = app.test_client()
    resp = client.get("/")
    assert resp.status_code == 503
    assert b"make build" in resp.data
    assert client.get("/api/health").status_code == 200  # the API still works


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E%2Fsecret.txt",
        "/sub/..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
        "//secret.txt",
        "/escape.txt",  # symlink to a file outside
        "/sub/up/secret.txt",  # symlinked folder leading outside
        "/api/tokenizers/..%2fsecret.txt",
        "/api/tokenizers/..%2f..%2fsecret.json",
        "/api/tokenizers/%2e%2e/%2e%2e/secret.tiktoken",
    ],
)
def test_traversal_refused_on_real_server(live, path):
    status, body, _ = raw_get(live, path)
    assert status in (400, 404), (path, status)
    assert SECRET.encode() not in body


def test_traversal_refused_by_test_client(client, tmp_path):
    (tmp_path / "secret.json").write_text(json.dumps({"secret": SECRET}))
    for path in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/escape.txt",
        "/sub/up/secret.txt",
        "/api/tokenizers/../secret.json",
    ]:
        resp = client.get(path)
        assert resp.status_code in (400, 404), path
        assert SECRET.encode() not in resp.data


def test_symlinked_tokenizer_in_data_dir_is_not_served(client, dirs, tmp_path):
    _, data = dirs
    outside = tmp_path / "outside"
    outside.mkdir()
    save_tokenizer(outside, "leak")
    (data / "leak.json").symlink_to(outside / "leak.json")
    (data / "leak.tiktoken").symlink_to(outside / "leak.tiktoken")
    assert client.get("/api/tokenizers/leak.tiktoken").status_code == 404
    assert client.get("/api/tokenizers/leak.json").status_code == 404
    assert [t["name"] for t in client.get("/api/tokenizers").get_json()["trained"]] == []


# ----- Host and Origin --------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST:{port}"])
def test_own_host_names_accepted(live, host):
    port = live.rsplit(":", 1)[1]
    status, body, _ = raw_get(live, "/api/health", {"Host": host.format(port=port)})
    assert status == 200, body


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1",
        "127.0.0.1:1",
        "localhost.evil.example:{port}",
        "192.168.1.10:{port}",
        "",
    ],
)
def test_foreign_host_refused_dns_rebinding(live, host):
    port = live.rsplit(":", 1)[1]
    for path in ("/api/health", "/", "/api/tokenizers"):
        status, body, headers = raw_get(live, path, {"Host": host.format(port=port)})
        assert status == 421, (host, path, status)
        assert "not this server's address" in json.loads(body)["error"]
        assert headers["X-Content-Type-Options"] == "nosniff"


def test_allowed_hosts_config_adds_names(dirs):
    web, data = dirs
    client = create_app({"WEB_DIR": web, "DATA_DIR": data, "ALLOWED_HOSTS": ["box.lan"]}).test_client()
    assert client.get("/api/health", headers={"Host": "box.lan"}).status_code == 200
    assert client.get("/api/health", headers={"Host": "other.lan"}).status_code == 421


@pytest.mark.parametrize(
    "headers, fragment",
    [
        ({"Origin": "http://evil.example"}, "another origin"),
        ({"Origin": "http://localhost:8080"}, "another origin"),  # same host, other port
        ({"Origin": "https://localhost"}, "another origin"),
        ({"Origin": "null"}, "opaque origin"),
        ({"Origin": "http://localhost", "Sec-Fetch-Site": "cross-site"}, "cross-site"),
        ({"Sec-Fetch-Site": "same-site"}, "cross-site"),
        ({"Referer": "http://evil.example/page.html"}, "another origin"),
        ({"Referer": "http://localhost.evil.example/"}, "another origin"),
    ],
)
def test_foreign_origin_refused_for_state_changes(client, dirs, headers, fragment):
    _, data = dirs
    save_tokenizer(data, "keep")
    resp = client.post(
        "/api/train",
        data={"vocab_size": "300", "corpus": corpus_file(b"hello hello")},
        content_type="multipart/form-data",
        headers=headers,
    )
    assert resp.status_code == 403
    assert fragment in resp.get_json()["error"]
    resp = client.delete("/api/tokenizers/keep", headers=headers)
    assert resp.status_code == 403
    assert (data / "keep.json").exists() and (data / "keep.tiktoken").exists()
    assert sorted(leftovers(data)) == ["keep.json", "keep.tiktoken"]
    assert client.get("/api/jobs").get_json()["jobs"] == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://localhost"},
        {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"},
        {"Origin": "null", "Sec-Fetch-Site": "same-origin"},  # strict referrer policy, same origin
        {"Referer": "http://localhost/index.html"},
        {},  # curl and scripts send neither
    ],
)
def test_own_origin_accepted(client, dirs, headers):
    _, data = dirs
    save_tokenizer(data, "gone")
    resp = client.delete("/api/tokenizers/gone", headers=headers)
    assert resp.status_code == 200, resp.get_json()
    assert not (data / "gone.json").exists()


def test_foreign_origin_refused_on_real_server(live, dirs):
    _, data = dirs
    save_tokenizer(data, "keep")
    status, body = raw_request(live, "DELETE", "/api/tokenizers/keep", {"Origin": "http://evil.example"})
    assert status == 403 and "another origin" in body["error"]
    assert (data / "keep.json").exists()
    status, body = raw_request(live, "DELETE", "/api/tokenizers/keep", {"Origin": f"http://{live}"})
    assert status == 200 and body == {"deleted": "keep"}


# ----- tokenizers: list, download, delete, restart ----------------------------------------


def test_list_download_delete_and_restart(client, dirs):
    web, data = dirs
    tok = save_tokenizer(data, "mine")
    listing = client.get("/api/tokenizers").get_json()
    assert [r["name"] for r in listing["reference"]] == __import__("tokenizer").list_encodings()
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


def test_downloaded_tiktoken_loads_in_tiktoken(client, dirs, tmp_path):
    pytest.importorskip("tiktoken")
    import tiktoken
    import tiktoken.load

    _, data = dirs
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


def test_half_written_tokenizer_is_not_listed(client, dirs):
    _, data = dirs
    save_tokenizer(data, "whole")
    save_tokenizer(data, "half")
    (data / "half.json").unlink()  # as after a crash between the two renames
    (data / "junk.json").write_text("{not json")
    (data / "junk.tiktoken").write_text("")
    assert [t["name"] for t in client.get("/api/tokenizers").get_json()["trained"]] == ["whole"]


def test_stale_job_folders_removed_at_start(dirs):
    web, data = dirs
    stale = data / ".jobs" / "999999999-deadbeefdeadbeef"
    (stale / "out").mkdir(parents=True)
    (stale / "out" / "x.tiktoken").write_text("partial")
    create_app({"WEB_DIR": web, "DATA_DIR": data})
    assert not stale.exists()


# ----- POST /api/train validation ---------------------------------------------------------

GOOD = b"the quick brown fox jumps over the lazy dog " * 20


@pytest.mark.parametrize(
    "fields, status, fragment",
    [
        ({"corpus": None}, 400, "vocab_size is required"),
        ({"vocab_size": "256"}, 400, "out of range"),
        ({"vocab_size": "-5"}, 400, "out of range"),
        ({"vocab_size": str(server.DEFAULTS["MAX_VOCAB"] + 1)}, 400, "out of range"),
        ({"vocab_size": "1e3"}, 400, "must be an integer"),
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
def test_bad_training_parameters(client, dirs, fields, status, fragment):
    _, data = dirs
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


def test_non_utf8_corpus_names_file_and_offset(client, dirs):
    _, data = dirs
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
def test_empty_corpus(client, dirs, fields):
    _, data = dirs
    resp = post_train(client, vocab_size="300", **fields)
    assert resp.status_code == 400
    assert "empty corpus" in resp.get_json()["error"]
    assert leftovers(data) == []


def test_upload_over_cap_is_413(client, dirs):
    _, data = dirs
    resp = post_train(client, vocab_size="300", corpus=corpus_file(b"a" * (80 * 1024)))
    assert resp.status_code == 413
    assert "upload too large" in resp.get_json()["error"] and "64 KB" in resp.get_json()["error"]
    assert leftovers(data) == []
    resp = post_train(client, vocab_size="300", text="b" * (10 * 1024))  # over MAX_TEXT_BYTES
    assert resp.status_code == 413
    assert "as a file" in resp.get_json()["error"]
    assert leftovers(data) == []


def test_upload_over_cap_on_real_server(live, dirs):
    """A client that announces a too-big body gets 413 JSON, not a hang or a reset."""
    _, data = dirs
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
    parse = server._parse_special_tokens
    assert parse("", 10) == []
    assert parse("<|a|>, <|b|>\n<|c|>", 10) == ["<|a|>", "<|b|>", "<|c|>"]
    assert parse('["a,b", " spaced "]', 10) == ["a,b", " spaced "]
    with pytest.raises(server.ApiError, match="at most 2"):
        parse("a,b,c", 2)
    with pytest.raises(server.ApiError, match="cannot be empty"):
        parse('["ok", ""]', 10)


def test_auto_names_are_safe_and_unique():
    taken = {"taylorswift-1000", "taylorswift-1000-2"}
    assert server._auto_name("taylorswift.txt", 1000, taken) == "taylorswift-1000-3"
    assert server._auto_name("../../we ird näme!.txt", 500, set()) == "we-ird-n-me-500"
    assert server._auto_name(None, 300, set()) == "text-300"
    assert server._auto_name("....txt", 300, set()) == "text-300"


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
        assert server._check_utf8(path, "f.txt", block_size=block) == len(data)
    else:
        with pytest.raises(server.ApiError, match=f"offset {expected} "):
            server._check_utf8(path, "f.txt", block_size=block)

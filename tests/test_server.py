"""server.py and playground/static.py: the app as a whole, the page's files, the command line.

The API's own tests are per module: test_security.py, test_api_tokenizers.py, test_api_train.py,
test_jobs.py (the job manager without HTTP) and test_api_jobs.py (training through the server).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest

import playground
import server
from tests.helpers import CORPORA, ROOT

BIG = CORPORA / "pg_en_medium.txt"  # trains long enough to be running when SIGTERM comes


def test_server_module_is_the_entry_point_of_the_package():
    assert server.create_app is playground.create_app
    assert (ROOT / "server.py").read_text(encoding="utf-8").count("\n") <= 200


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
    assert "no such API endpoint: /api/nope" in resp.get_json()["error"]
    for method in ("GET", "POST", "DELETE"):  # /api itself was the page's HTML 404 (GET) or 405
        resp = client.open("/api", method=method)
        assert resp.status_code == 404 and "no such API endpoint: /api " in resp.get_json()["error"]


@pytest.mark.parametrize(
    "method, path, allowed",
    [
        ("GET", "/api/train", "POST"),
        ("PUT", "/api/train", "POST"),
        ("POST", "/api/health", "GET"),
        ("DELETE", "/api/jobs", "GET"),
        ("POST", "/api/jobs/abc", "GET, DELETE"),
        ("PATCH", "/api/tokenizers/x.json", "GET, DELETE"),
        ("POST", "/api/jobs/abc/events", "GET"),
    ],
)
def test_a_known_api_path_asked_with_another_method_is_405(client, method, path, allowed):
    """The catch-all JSON 404 caught these too: GET /api/train said "no such API endpoint"."""
    resp = client.open(path, method=method)
    assert resp.status_code == 405
    assert resp.headers["Allow"] == allowed
    assert resp.get_json()["error"] == f"{method} is not allowed on {path}: it takes {allowed}"


@pytest.mark.parametrize(
    "path, allowed",
    [
        ("/api/train", "POST, OPTIONS"),
        ("/api/health", "GET, HEAD, OPTIONS"),
        ("/api/jobs/abc", "GET, DELETE, HEAD, OPTIONS"),
        ("/api/tokenizers/x.json", "GET, DELETE, HEAD, OPTIONS"),
    ],
)
def test_options_at_an_api_path_names_the_methods_it_takes(client, path, allowed):
    """OPTIONS answered 200 everywhere under /api, naming the catch-all's methods (PUT, PATCH...)."""
    resp = client.options(path)
    assert resp.status_code == 204 and resp.headers["Allow"] == allowed and resp.data == b""


@pytest.mark.parametrize("path", ["/api", "/api/nothing", "/api/jobs/abc/nope"])
def test_options_at_an_unknown_api_path_is_the_json_404(client, path):
    resp = client.options(path)
    assert resp.status_code == 404
    assert resp.get_json()["error"].startswith(f"no such API endpoint: {path}")


@pytest.mark.parametrize(
    "request_bytes, status, fragment",
    [
        (b"GET /api/health HTTP/1.1\r\nHOSTLINE\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", 431, "64 KB"),
        (b"GET /api/health HTTP/1.1\r\nHOSTLINE\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", 431, "100 headers"),
        (b"GET /api/" + b"a" * 70_000 + b" HTTP/1.1\r\nHOSTLINE\r\n\r\n", 414, "no URL of this server"),
        (b'GET /api/health HTTP/1."1\r\nHOSTLINE\r\n\r\n', 400, "send HTTP/1.1"),
        (b"GET /api/health HTTP/2.0\r\nHOSTLINE\r\n\r\n", 505, "send HTTP/1.1"),
    ],
    ids=["long-header", "many-headers", "long-url", "bad-version", "http2"],
)
def test_a_request_http_cannot_parse_gets_a_json_error_too(live, request_bytes, status, fragment):
    """A request the HTTP layer refuses before the app sees it (a 70 KB header, 101 headers, a
    70 KB URL, a garbled version) was answered by http.server's HTML error page ("Message: Line
    too long"), the one non-JSON error of the API, without the limit it broke. It is JSON now,
    saying which limit and what to send instead; no quote of the request can break the JSON."""
    import json
    import socket

    host, port = live.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request_bytes.replace(b"HOSTLINE", f"Host: {live}".encode()))
        reply = b""
        while block := sock.recv(65536):
            reply += block
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and head.split(b" ")[1] == str(status).encode(), reply[:300]
    assert b"content-type: application/json" in head.lower()
    error = json.loads(body)["error"]
    assert fragment in error, error


def test_page_not_built_says_how_to_build(tmp_path):
    app = playground.create_app({"WEB_DIR": tmp_path / "missing", "DATA_DIR": tmp_path / "data"})
    client = app.test_client()
    resp = client.get("/")
    assert resp.status_code == 503
    assert b"make build" in resp.data
    assert client.get("/api/health").status_code == 200  # the API still works


def test_cli_prints_url_and_sigterm_cancels_jobs(tmp_path):
    """`python server.py --port 0`: prints its URL, serves, and on SIGTERM stops its jobs."""
    psutil = pytest.importorskip("psutil")
    requests = pytest.importorskip("requests")
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "server.py"), "--port", "0", "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        match = re.match(r"BPE Playground: (http://127\.0\.0\.1:\d+)/$", first.strip())
        assert match, first
        base = match.group(1)
        assert requests.get(base + "/api/health", timeout=10).json()["status"] == "ok"
        with open(BIG, "rb") as f:
            job = requests.post(
                base + "/api/train", files={"corpus": f}, data={"vocab_size": "30000"}, timeout=60
            ).json()["job"]
        deadline = time.monotonic() + 30
        while requests.get(f"{base}/api/jobs/{job}", timeout=10).json()["state"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        family = psutil.Process(proc.pid).children(recursive=True)
        assert family, "no training process"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert "stopping" in proc.stdout.read()
        _, alive = psutil.wait_procs(family, timeout=10)
        assert not alive
        assert [p.name for p in data.iterdir()] == [".jobs"] and not list((data / ".jobs").iterdir())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


NO_HOST = ("--host", "999.1.1.1")  # an address no machine has: main() exits 2 before serving


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "99999"], "'99999' is not a port: give 0 to 65535"),  # bound 34463 without a word
        (["--port", "-1"], "'-1' is not a port"),  # an OverflowError traceback
        (["--job-time-limit", "-1"], "'-1' is not a positive number of seconds"),  # a ValueError traceback
        (["--job-time-limit", "nan"], "'nan' is not a positive number of seconds"),
        # int() and float() read other digits and '_': '٥٠٠٠' listened on 5000 without a word
        # (the host that cannot be used stops such a run, were the value taken, before it serves)
        (["--port", "٥٠٠٠", *NO_HOST], "'٥٠٠٠' is not a port: give 0 to 65535"),
        (["--port", "５０００", *NO_HOST], "is not a port"),
        (["--port", "5_000", *NO_HOST], "'5_000' is not a port"),
        (["--job-time-limit", "٦٠", *NO_HOST], "'٦٠' is not a positive number of seconds"),
        (["--job-time-limit", "6_0", *NO_HOST], "'6_0' is not a positive number of seconds"),
    ],
)
def test_bad_arguments_are_usage_errors(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        server.main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_a_data_dir_or_host_that_cannot_be_used_exits_2_naming_it(tmp_path, capsys):
    """A file as --data-dir gave a FileExistsError traceback; an unknown --host a bare 'Name or
    service not known' and exit 1 (werkzeug's)."""
    (tmp_path / "afile").write_text("x")
    assert server.main(["--port", "0", "--data-dir", str(tmp_path / "afile")]) == 2
    assert f"--data-dir {tmp_path / 'afile'}: File exists; give a folder" in capsys.readouterr().err
    assert server.main(["--port", "0", "--host", "999.1.1.1", "--data-dir", str(tmp_path / "d")]) == 2
    assert "cannot listen on 999.1.1.1: " in capsys.readouterr().err

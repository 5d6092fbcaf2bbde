"""playground/security.py: Host and Origin checks, security headers, no file outside the folders.

Every refused request is also checked to leave nothing behind in the data folder.
"""

from __future__ import annotations

import json

import pytest

from playground import create_app
from tests.server_helpers import SECRET, corpus_file, leftovers, raw_get, raw_request, save_tokenizer

# ----- headers ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/health", "/", "/app.js", "/no-such-file", "/api/nope"])
def test_security_headers_on_every_response(client, path):
    resp = client.get(path)
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["Referrer-Policy"] == "same-origin"
    csp = resp.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    assert "http:" not in csp and "https:" not in csp and "*" not in csp  # no remote origins


# ----- nothing outside the web and data folders -------------------------------------------


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


def test_symlinked_tokenizer_in_data_dir_is_not_served(client, server_dirs, tmp_path):
    _, data = server_dirs
    outside = tmp_path / "outside"
    outside.mkdir()
    save_tokenizer(outside, "leak")
    (data / "leak.json").symlink_to(outside / "leak.json")
    (data / "leak.tiktoken").symlink_to(outside / "leak.tiktoken")
    assert client.get("/api/tokenizers/leak.tiktoken").status_code == 404
    assert client.get("/api/tokenizers/leak.json").status_code == 404
    assert [t["name"] for t in client.get("/api/tokenizers").get_json()["trained"]] == []


# ----- Host and Origin --------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "[::1]:{port}",
        "LOCALHOST:{port}",
        # the same hosts spelled otherwise: fully qualified (a browser sends 'localhost.' as
        # typed; it was a 421), and IPv6 literals not compressed
        "localhost.:{port}",
        "127.0.0.1.:{port}",
        "[0:0:0:0:0:0:0:1]:{port}",
        "[0::1]:{port}",
    ],
)
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
        "localhost..:{port}",
        ".localhost:{port}",
        "localhost.:1",
        "[::2]:{port}",
        "[::1%lo]:{port}",
        "[::ffff:127.0.0.1]:{port}",
        "[localhost]:{port}",
    ],
)
def test_foreign_host_refused_dns_rebinding(live, host):
    port = live.rsplit(":", 1)[1]
    for path in ("/api/health", "/", "/api/tokenizers"):
        status, body, headers = raw_get(live, path, {"Host": host.format(port=port)})
        assert status == 421, (host, path, status)
        assert "not this server's address" in json.loads(body)["error"]
        assert headers["X-Content-Type-Options"] == "nosniff"


def test_allowed_hosts_config_adds_names(server_dirs):
    web, data = server_dirs
    client = create_app({"WEB_DIR": web, "DATA_DIR": data, "ALLOWED_HOSTS": ["box.lan"]}).test_client()
    assert client.get("/api/health", headers={"Host": "box.lan"}).status_code == 200
    assert client.get("/api/health", headers={"Host": "box.lan."}).status_code == 200
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
def test_foreign_origin_refused_for_state_changes(client, server_dirs, headers, fragment):
    _, data = server_dirs
    save_tokenizer(data, "keep")
    resp = client.post(
        "/api/train",
        data={"vocab_size": "300", "corpus": corpus_file(b"hello hello")},
        content_type="multipart/form-data",
        headers=headers,
    )
    assert resp.status_code == 403
    assert fragment in resp.get_json()["error"]
    assert "train and delete from http://localhost/ (scripts and curl" in resp.get_json()["error"]  # the fix
    resp = client.delete("/api/tokenizers/keep", headers=headers)
    assert resp.status_code == 403
    assert (data / "keep.json").exists() and (data / "keep.tiktoken").exists()
    assert sorted(leftovers(data)) == ["keep.json", "keep.tiktoken"]
    assert client.get("/api/jobs").get_json()["jobs"] == []


@pytest.mark.parametrize("path", ["/api/train", "/api/tokenizers/x.json", "/api/nothing"])
def test_a_preflight_from_another_origin_is_refused(client, path):
    """OPTIONS answered 200 whatever the Origin: a page elsewhere asking leave to write was not
    told no. The page's own requests are same-origin and never preflighted."""
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        resp = client.options(path, headers=headers)
        assert resp.status_code == 403 and "refused" in resp.get_json()["error"]
        assert "Access-Control-Allow-Origin" not in resp.headers


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
def test_own_origin_accepted(client, server_dirs, headers):
    _, data = server_dirs
    save_tokenizer(data, "gone")
    resp = client.delete("/api/tokenizers/gone", headers=headers)
    assert resp.status_code == 200, resp.get_json()
    assert not (data / "gone.json").exists()


def test_page_opened_at_a_fully_qualified_localhost_can_write(live, server_dirs):
    """At http://localhost.:PORT/ the page's own requests carry that Host and Origin; another
    spelling of the origin is still another origin."""
    _, data = server_dirs
    save_tokenizer(data, "keep")
    own = f"localhost.:{live.rsplit(':', 1)[1]}"
    other = {"Host": own, "Origin": f"http://{live}"}
    status, body = raw_request(live, "DELETE", "/api/tokenizers/keep", other)
    assert status == 403 and "another origin" in body["error"]
    status, body = raw_request(
        live, "DELETE", "/api/tokenizers/keep", {"Host": own, "Origin": f"http://{own}"}
    )
    assert status == 200 and body == {"deleted": "keep"}


def test_foreign_origin_refused_on_real_server(live, server_dirs):
    _, data = server_dirs
    save_tokenizer(data, "keep")
    status, body = raw_request(live, "DELETE", "/api/tokenizers/keep", {"Origin": "http://evil.example"})
    assert status == 403 and "another origin" in body["error"]
    assert (data / "keep.json").exists()
    status, body = raw_request(live, "DELETE", "/api/tokenizers/keep", {"Origin": f"http://{live}"})
    assert status == 200 and body == {"deleted": "keep"}

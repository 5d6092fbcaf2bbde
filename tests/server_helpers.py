"""Helpers of the server tests (playground/, server.py): a small built page, tokenizer files,
raw HTTP that no client normalizes, and a live server on an ephemeral port.

The fixtures built from them (`server_dirs`, `app`, `client`, `live`, and the hostile-request
tests' `full_app` and `full`) are in tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote_from_bytes

from tokenizer import Tokenizer

SECRET = "top secret: this file is outside the web and data folders"
GOOD = b"the quick brown fox jumps over the lazy dog " * 20  # a corpus every check accepts


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


def leftovers(data: Path) -> list[str]:
    """Everything in the data folder except the (empty or absent) job temp folder."""
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
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(hostport, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


def post_train(client, origin: str | None = "http://localhost", **fields):
    """POST /api/train through Flask's test client, from the page's own origin by default."""
    headers = {"Origin": origin} if origin else {}
    return client.post("/api/train", data=dict(fields), content_type="multipart/form-data", headers=headers)


def corpus_file(content: bytes, filename: str = "corpus.txt"):
    return (io.BytesIO(content), filename)


@contextlib.contextmanager
def serving(app, **options) -> Iterator[str]:
    """`app` on a real socket (ephemeral port) in a thread, as server.py serves it (options:
    playground_server's): yields '127.0.0.1:PORT'."""
    from playground.serving import playground_server

    srv = playground_server("127.0.0.1", 0, app, **options)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()
        thread.join(5)


class LiveServer:
    """A create_app() server on an ephemeral port, with helpers that send our own Origin.

    Training runs for real (spawned processes), so `close()` cancels whatever still runs.
    """

    def __init__(self, data_dir: Path, **config) -> None:
        import requests

        from playground import create_app

        self.requests = requests
        self.data_dir = data_dir
        self.app = create_app(
            {"DATA_DIR": data_dir, "WEB_DIR": data_dir / "no-web", "TRAIN_WORKERS": 1, **config}
        )
        self._stack = contextlib.ExitStack()
        self.base = f"http://{self._stack.enter_context(serving(self.app))}"
        self.origin = {"Origin": self.base}

    def close(self) -> None:
        self.app.extensions["bpe_jobs"].shutdown()
        self._stack.close()

    def get(self, path: str, **kw):
        return self.requests.get(self.base + path, timeout=30, **kw)

    def delete(self, path: str):
        return self.requests.delete(self.base + path, headers=self.origin, timeout=30)

    def train(self, files: list[Path] = (), **fields):
        handles = [("corpus", (p.name, open(p, "rb"), "text/plain")) for p in files]
        try:
            return self.requests.post(
                self.base + "/api/train", files=handles or None, data=fields, headers=self.origin, timeout=60
            )
        finally:
            for _, (_, f, _) in handles:
                f.close()

    def events(self, job: str) -> Iterator[dict]:
        """The SSE stream, parsed: one dict per `data:` line, until the server closes it."""
        with self.requests.get(f"{self.base}/api/jobs/{job}/events", stream=True, timeout=120) as resp:
            assert resp.status_code == 200
            assert resp.headers["Content-Type"].startswith("text/event-stream")
            for line in resp.iter_lines():
                if line.startswith(b"data: "):
                    yield json.loads(line[6:])

    def wait(self, job: str, predicate, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            snap = self.get(f"/api/jobs/{job}").json()
            if predicate(snap):
                return snap
            time.sleep(0.05)
        raise AssertionError(f"job {job} never got there: {snap}")

    def pid(self, job: str) -> int:
        process = self.app.extensions["bpe_jobs"].jobs[job].process
        assert process is not None and process.pid
        return process.pid

    def files(self) -> list[str]:
        """Everything in the data folder, temp folders included."""
        return sorted(
            str(p.relative_to(self.data_dir)) for p in self.data_dir.rglob("*") if p.name != ".jobs"
        )


def alive(pid: int) -> bool:
    """Is `pid` running? A zombie (exited, not yet reaped) counts as gone."""
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# ----- hostile requests to POST /api/train (test_api_hostile*.py) --------------------------------

FAST = 1.0  # seconds: every hostile request is answered within this (the bound)
MiB = 1024 * 1024


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
    """An application/x-www-form-urlencoded body with each field's value percent-encoded as bytes."""
    return "&".join(f"{k}={quote_from_bytes(v)}" for k, v in fields.items()).encode()


def assert_refused(resp, seconds, status, fragment):
    """`send`'s answer is a `status` refusal whose error holds `fragment`, given within FAST."""
    assert resp.status_code == status, resp.get_json()
    assert fragment in resp.get_json()["error"], resp.get_json()
    assert seconds < FAST, seconds

"""The playground's socket server: werkzeug's threaded server, with a timeout on every socket
and JSON for the errors the HTTP layer answers itself.

A client that stops sending in the middle of a request (an upload stalled with its connection
left open) held a server thread, and a training job's place in the queue (jobs.reserve), for
as long as it kept the socket open: hours. Reads and writes now give up after
SOCKET_TIMEOUT_SECONDS of silence; the upload is answered 408 (formparser) and its place is
freed. A connection kept alive between requests is closed after as long.

A request that http.server cannot parse (a header over 64 KB, more than 100 headers, a URL over
64 KB, a garbled HTTP version) never reaches the app: http.server answered it with its own HTML
page ("Message: Line too long"). `send_error` answers it as the app answers everything else,
`{"error": ...}` naming the limit and what to send instead.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

# Seconds a socket may stay silent mid-request: a browser on a slow link sends far more often
# than this, and an upload is at most 200 MB (config.MAX_UPLOAD_BYTES).
SOCKET_TIMEOUT_SECONDS = 60.0
# http.server's own limits (http.client._MAXLINE, _MAXHEADERS; the request line's 65,536 bytes),
# as a user reads them in the errors below.
HTTP_LIMITS = "at most 100 headers, each line at most 64 KB"
MAX_QUOTED_CHARS = 200  # characters of http.server's message (it quotes the request line) kept

# What to do about each error http.server answers itself.
PROTOCOL_FIXES = {
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: f"send fewer or shorter headers ({HTTP_LIMITS})",
    HTTPStatus.REQUEST_URI_TOO_LONG: (
        "the request line is over 64 KB; no URL of this server is that long (send data in a POST body)"
    ),
    HTTPStatus.BAD_REQUEST: "send HTTP/1.1 (a browser, curl or any HTTP client does)",
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "send HTTP/1.1; this server speaks HTTP/1.0 and 1.1 only",
}


class PlaygroundRequestHandler(WSGIRequestHandler):
    """werkzeug's handler, each socket with `timeout` seconds (socketserver applies a request
    handler's `timeout` to its connection; playground_server sets it), errors as JSON."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's send_error with a JSON body: the status line carries only the standard
        reason phrase (http.server put its message, a quote of the request, there)."""
        status = HTTPStatus(code)
        said = "; ".join(part for part in (message or status.phrase, explain) if part)[:MAX_QUOTED_CHARS]
        fix = PROTOCOL_FIXES.get(status)
        self.log_error("code %d, message %s", code, said)
        if self.request_version == self.default_request_version:
            # An error found before the version was read (a garbled one) leaves http.server's
            # default, HTTP/0.9, under which no status line or header is written: a bare body.
            self.request_version = self.protocol_version
        self.send_response(code)
        self.send_header("Connection", "close")
        body = b""
        if code >= 200 and code not in (
            HTTPStatus.NO_CONTENT,
            HTTPStatus.RESET_CONTENT,
            HTTPStatus.NOT_MODIFIED,
        ):
            body = json.dumps({"error": f"{said}: {fix}" if fix else said}).encode("utf-8") + b"\n"
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)


def playground_server(
    host: str, port: int, app: Any, *, timeout: float = SOCKET_TIMEOUT_SECONDS
) -> BaseWSGIServer:
    """werkzeug's threaded server for `app` on host:port, each socket with `timeout` seconds."""
    handler = type("TimedRequestHandler", (PlaygroundRequestHandler,), {"timeout": timeout})
    return make_server(host, port, app, threaded=True, request_handler=handler)

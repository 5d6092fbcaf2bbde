"""The playground's socket server: werkzeug's threaded server, with a timeout on every socket.

A client that stops sending in the middle of a request (an upload stalled with its connection
left open) held a server thread, and a training job's place in the queue (jobs.reserve), for
as long as it kept the socket open: hours. Reads and writes now give up after
SOCKET_TIMEOUT_SECONDS of silence; the upload is answered 408 (formparser) and its place is
freed. A connection kept alive between requests is closed after as long.
"""

from __future__ import annotations

from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

# Seconds a socket may stay silent mid-request: a browser on a slow link sends far more often
# than this, and an upload is at most 200 MB (config.MAX_UPLOAD_BYTES).
SOCKET_TIMEOUT_SECONDS = 60.0


def playground_server(
    host: str, port: int, app: Any, *, timeout: float = SOCKET_TIMEOUT_SECONDS
) -> BaseWSGIServer:
    """werkzeug's threaded server for `app` on host:port, each socket with `timeout` seconds
    (socketserver applies a request handler's `timeout` to its connection)."""
    handler = type("TimedRequestHandler", (WSGIRequestHandler,), {"timeout": timeout})
    return make_server(host, port, app, threaded=True, request_handler=handler)

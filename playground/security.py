"""Safety of a server on the user's own machine: who may ask, what the browser may do, which files.

- DNS rebinding: a web page the user visits can point its own host name at 127.0.0.1 and
  then talk to this server as "same origin". The `Host` header still carries that foreign
  name, so every request whose Host is not one of our own addresses is refused (421).
- Cross-site writes: any page may POST a form to 127.0.0.1. State-changing requests (and
  OPTIONS, a cross-origin preflight) are refused when the browser says they come from elsewhere (`Sec-Fetch-Site`, `Origin`, or
  failing both, `Referer`); scripts and curl send none of them and are let through.
- Headers: a CSP without remote origins, nosniff, no framing, same-origin isolation.
- Files: `inside()` resolves symlinks, so no link in the build or data folder leads out.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, request

import tokenizer

from .errors import error_response

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}
# What the Origin checks look at: writes, and OPTIONS, which a browser sends from another origin
# only to ask leave to write (the page's own requests are same-origin and never preflighted).
ORIGIN_CHECKED = STATE_CHANGING | {"OPTIONS"}

CSP = "; ".join(
    [
        "default-src 'self'",
        # Pyodide compiles WebAssembly; nothing here evaluates JavaScript strings.
        "script-src 'self' 'wasm-unsafe-eval'",
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "img-src 'self' data: blob:",
        "style-src 'self' 'unsafe-inline'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    # Not no-referrer: under that policy a browser sends `Origin: null` even on same-origin
    # POSTs (Fetch spec), which would hide the page's own origin from the Origin check.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def init_app(app: Flask) -> None:
    app.before_request(check_host_and_origin)
    app.after_request(add_security_headers)


def check_host_and_origin() -> Response | None:
    """DNS rebinding: only our own Host. Cross-site writes: only our own Origin."""
    host = request.headers.get("Host", "")
    if not _host_allowed(host, str(request.environ.get("SERVER_PORT", "80"))):
        return error_response(
            421, f"Host {host[:100]!r} is not this server's address; open the page at 127.0.0.1 or localhost"
        )
    if request.method not in ORIGIN_CHECKED:
        return None
    fetch_site = request.headers.get("Sec-Fetch-Site")
    origin = request.headers.get("Origin")
    referer = request.headers.get("Referer")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return _refused(f"cross-site request refused (Sec-Fetch-Site: {fetch_site[:40]})", host)
    if origin is not None:
        if origin == "null":
            # Sandboxed frames and file:// pages say null; a same-origin fetch under a strict
            # referrer policy does too, and then the browser vouches for it in Sec-Fetch-Site.
            if fetch_site != "same-origin":
                return _refused("request from an opaque origin (Origin: null) refused", host)
        elif not _same_origin(origin, host):
            return _refused(f"request from another origin ({origin[:100]}) refused", host)
    elif referer is not None:
        if not _same_origin(referer, host):
            return _refused("request referred by another origin refused", host)
    return None


def _refused(reason: str, host: str) -> Response:
    """403 with the way to do it: the messages said only what was refused."""
    return error_response(
        403,
        f"{reason}: only the page this server serves may change its state; train and delete from "
        f"http://{host.strip()}/ (scripts and curl, which send no Origin, are let through)",
    )


def add_security_headers(response: Response) -> Response:
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
    # How the page tells this server from plain static files without requesting a URL that
    # would 404 there (a failed load is a console error): a HEAD of manifest.json shows it.
    response.headers["X-Playground-Server"] = f"bpe-playground/{tokenizer.__version__}"
    if request.path.startswith("/api/"):
        response.headers.setdefault("Cache-Control", "no-store")
    return response


def inside(path: Path, folder: Path) -> bool:
    """True when `path`, symlinks resolved, lies inside `folder` (itself resolved)."""
    try:
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == os.path.realpath(
            folder
        )
    except ValueError:
        return False


def _split_host(host: str) -> tuple[str, str | None]:
    """'name:port' / '[v6]:port' / 'name' -> (name, port or None)."""
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return host, None
        rest = host[end + 1 :]
        return host[: end + 1], rest[1:] if rest.startswith(":") else None
    name, sep, port = host.rpartition(":")
    return (name, port) if sep else (host, None)


def _host_allowed(host: str, server_port: str) -> bool:
    name, port = _split_host(host.strip().lower())
    name, port = _canonical_name(name), port or "80"
    for allowed in (*LOOPBACK_HOSTS, *current_app.config["ALLOWED_HOSTS"]):
        a_name, a_port = _split_host(str(allowed).lower())
        if name == _canonical_name(a_name) and port == (a_port or server_port):
            return True
    return False


def _canonical_name(name: str) -> str:
    """One spelling per host: 'localhost.' (the fully qualified form, which browsers send as
    typed) is 'localhost', and an IPv6 literal is compressed ('[0:0::1]' is '[::1]'). The name
    is still compared whole, so no foreign name can become one of ours."""
    if name.startswith("[") and name.endswith("]"):
        try:
            return f"[{ipaddress.IPv6Address(name[1:-1]).compressed}]"
        except ValueError:
            return name
    return name[:-1] if name.endswith(".") else name


def _same_origin(url: str, host: str) -> bool:
    """Is `url` (an Origin or Referer) on http://HOST, ports compared with 80 as default?"""
    try:
        parts = urlsplit(url.strip())
        url_port = parts.port or 80
    except ValueError:
        return False
    if parts.scheme.lower() != "http" or not parts.hostname:
        return False
    url_name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname.lower()
    name, port = _split_host(host.strip().lower())
    return url_name == name and str(url_port) == (port or "80")

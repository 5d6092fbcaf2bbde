"""The local playground server: serves the built page (web/dist) and trains tokenizers.

`python server.py [--host 127.0.0.1] [--port 5000] [--data-dir DIR]` (or `make run`).

Why a server at all: the page encodes in the browser (Pyodide), but training a vocabulary on
a corpus of hundreds of MB wants native CPython, all cores and the disk. Training runs in a
separate *process* per job (spawn), so a long job never blocks this server; progress comes
back through a pipe and is streamed to the page as Server-Sent Events.

Safety for a server on the user's own machine: it binds 127.0.0.1, refuses requests whose
Host header is not its own address (DNS rebinding) and state-changing requests from any
other origin (a web page the user happens to visit could otherwise POST here); it serves
nothing outside the build folder and the data folder; a failed or cancelled job leaves no
partial files behind (it writes in a temp folder and renames the finished files into place).

HTTP API (JSON; errors are `{"error": "..."}` with a 4xx status):
  GET    /api/health                      status, version, limits, pattern names
  GET    /api/tokenizers                  reference encodings + trained tokenizers with metadata
  GET    /api/tokenizers/NAME             one entry of that list
  GET    /api/tokenizers/NAME.json        download (trained ones)
  GET    /api/tokenizers/NAME.tiktoken    download (trained ones)
  DELETE /api/tokenizers/NAME             remove a trained tokenizer
  POST   /api/train                       multipart: corpus (files) and/or text, vocab_size,
                                          name, pattern (+ regex when pattern=custom),
                                          tie_break, special_tokens, min_frequency -> 202 {"job"}
  GET    /api/jobs                        all jobs of this server run
  GET    /api/jobs/ID                     state, progress, error, tokenizer name
  GET    /api/jobs/ID/events              the same state, streamed (text/event-stream)
  DELETE /api/jobs/ID                     cancel
"""

from __future__ import annotations

import argparse
import atexit
import codecs
import contextlib
import json
import logging
import mimetypes
import multiprocessing
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, jsonify, request, send_file, send_from_directory
from werkzeug.exceptions import HTTPException, NotFound, RequestEntityTooLarge

import tokenizer
from tokenizer import formats, patterns
from tokenizer.encodings import ENCODING_PATTERN_NAMES, list_encodings

ROOT = Path(__file__).resolve().parent
log = logging.getLogger("bpe-playground")

# .wasm must be application/wasm for WebAssembly.instantiateStreaming; .mjs is JavaScript.
mimetypes.add_type("application/wasm", ".wasm")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("text/javascript", ".js")

DEFAULTS: dict[str, Any] = {
    "DATA_DIR": ROOT / "data",  # trained tokenizers (git-ignored)
    "WEB_DIR": ROOT / "web" / "dist",  # the built page (build_wasm.py)
    "MAX_UPLOAD_BYTES": 200 * 1024 * 1024,  # a whole POST /api/train body
    "MAX_TEXT_BYTES": 16 * 1024 * 1024,  # the `text` form field (held in memory; files are not)
    # 65536: above GPT-2's 50257, the whole 16-bit id space; a pure-Python merge loop past
    # that on a 200 MB upload takes longer than anyone waits at a page. Raise it if you need.
    "MAX_VOCAB": 65536,
    "MAX_SPECIAL_TOKENS": 256,
    "MAX_FILES": 64,  # corpus files in one request
    "MAX_QUEUED_JOBS": 4,  # jobs waiting (not running) before POST /api/train says 429
    "MAX_RUNNING_JOBS": 1,  # training is CPU- and memory-heavy: one at a time by default
    "TRAIN_WORKERS": None,  # passed to train(workers=...); None lets the trainer decide
    "ALLOWED_HOSTS": [],  # extra Host names (or name:port) besides 127.0.0.1, localhost, [::1]
    "JOB_HISTORY": 100,  # finished jobs remembered for GET /api/jobs/ID
}

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
TIE_BREAKS = ("first", "lexical")
# The names the page offers first; every other name in patterns.PATTERNS is accepted too.
PATTERN_CHOICES = ("gpt2", "gpt4", "o200k", "none")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(10)),
    *(f"lpt{i}" for i in range(10)),
}
JOBS_DIRNAME = ".jobs"  # temp folders of jobs inside DATA_DIR; a leading dot is never a valid name
STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}

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

NOT_BUILT_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>BPE Playground: page not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.5">
<h1>The page has not been built yet</h1>
<p>The server is running, but <code>{web_dir}</code> has no <code>index.html</code>.</p>
<p>Build it with <code>make build</code> (or <code>python build_wasm.py</code>), then reload,
or start everything at once with <code>make run</code>.</p>
<p>The training API works already: <a href="/api/health">/api/health</a>,
<a href="/api/tokenizers">/api/tokenizers</a>.</p>
</body></html>
"""


class ApiError(Exception):
    """A client mistake: becomes `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ----- the app ----------------------------------------------------------------------------


class UploadRequest(Flask.request_class):  # type: ignore[misc, valid-type]
    """Streams uploaded files straight to disk, into the folder the train view chose.

    Werkzeug would spool them to anonymous temp files; writing them where the job will read
    them means a 200 MB corpus is never held in memory and never copied.
    """

    def _get_file_stream(
        self,
        total_content_length: int | None,
        content_type: str | None,
        filename: str | None = None,
        content_length: int | None = None,
    ) -> IO[bytes]:
        upload_dir = self.environ.get("bpe.upload_dir")
        if upload_dir is None:
            return super()._get_file_stream(total_content_length, content_type, filename, content_length)
        f = tempfile.NamedTemporaryFile(dir=upload_dir, prefix="upload-", suffix=".txt", delete=False)
        self.environ.setdefault("bpe.uploads", []).append(f)
        return f


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """The Flask app. `config` overrides DEFAULTS (see there for every key)."""
    app = Flask(__name__, static_folder=None)
    app.request_class = UploadRequest
    app.config.update(DEFAULTS)
    app.config.update(config or {})
    app.config["DATA_DIR"] = Path(app.config["DATA_DIR"]).resolve()
    app.config["WEB_DIR"] = Path(app.config["WEB_DIR"]).resolve()
    app.config["MAX_CONTENT_LENGTH"] = int(app.config["MAX_UPLOAD_BYTES"])
    app.config["MAX_FORM_MEMORY_SIZE"] = int(app.config["MAX_TEXT_BYTES"])
    app.config["MAX_FORM_PARTS"] = int(app.config["MAX_FILES"]) + 32
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.config["DATA_DIR"].mkdir(parents=True, exist_ok=True)
    app.extensions["bpe_jobs"] = JobManager(app.config)
    app.extensions["bpe_meta_cache"] = {}

    app.before_request(_check_host_and_origin)
    app.after_request(_add_security_headers)
    app.register_error_handler(ApiError, _api_error)
    app.register_error_handler(HTTPException, _http_error)

    app.add_url_rule("/api/health", view_func=health)
    app.add_url_rule("/api/tokenizers", view_func=tokenizers_list)
    app.add_url_rule("/api/tokenizers/<path:filename>", view_func=tokenizer_get)
    app.add_url_rule("/api/tokenizers/<path:filename>", view_func=tokenizer_delete, methods=["DELETE"])
    app.add_url_rule("/api/train", view_func=train_submit, methods=["POST"])
    app.add_url_rule("/api/jobs", view_func=jobs_list)
    app.add_url_rule("/api/jobs/<job_id>", view_func=job_get)
    app.add_url_rule("/api/jobs/<job_id>", view_func=job_cancel, methods=["DELETE"])
    app.add_url_rule("/api/jobs/<job_id>/events", view_func=job_events)
    app.add_url_rule(
        "/api/<path:rest>", view_func=api_not_found, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]
    )
    app.add_url_rule("/", view_func=static_file, defaults={"path": "index.html"})
    app.add_url_rule("/<path:path>", view_func=static_file)
    return app


def _jobs() -> JobManager:
    return current_app.extensions["bpe_jobs"]


def _data_dir() -> Path:
    return current_app.config["DATA_DIR"]


# ----- request checks and headers ---------------------------------------------------------


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
    port = port or "80"
    for allowed in (*LOOPBACK_HOSTS, *current_app.config["ALLOWED_HOSTS"]):
        a_name, a_port = _split_host(str(allowed).lower())
        if name == a_name and port == (a_port or server_port):
            return True
    return False


def _check_host_and_origin() -> Response | None:
    """DNS rebinding: only our own Host. Cross-site writes: only our own Origin."""
    host = request.headers.get("Host", "")
    if not _host_allowed(host, str(request.environ.get("SERVER_PORT", "80"))):
        return _error_response(
            421, f"Host {host[:100]!r} is not this server's address; open the page at 127.0.0.1 or localhost"
        )
    if request.method not in STATE_CHANGING:
        return None
    fetch_site = request.headers.get("Sec-Fetch-Site")
    origin = request.headers.get("Origin")
    referer = request.headers.get("Referer")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return _error_response(403, f"cross-site request refused (Sec-Fetch-Site: {fetch_site[:40]})")
    if origin is not None:
        if origin == "null":
            # Sandboxed frames and file:// pages say null; a same-origin fetch under a strict
            # referrer policy does too, and then the browser vouches for it in Sec-Fetch-Site.
            if fetch_site != "same-origin":
                return _error_response(403, "request from an opaque origin (Origin: null) refused")
        elif not _same_origin(origin, host):
            return _error_response(403, f"request from another origin ({origin[:100]}) refused")
    elif referer is not None:
        if not _same_origin(referer, host):
            return _error_response(403, "request referred by another origin refused")
    return None


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


def _add_security_headers(response: Response) -> Response:
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
    # How the page tells this server from plain static files without requesting a URL that
    # would 404 there (a failed load is a console error): a HEAD of manifest.json shows it.
    response.headers["X-Playground-Server"] = f"bpe-playground/{tokenizer.__version__}"
    if request.path.startswith("/api/"):
        response.headers.setdefault("Cache-Control", "no-store")
    return response


def _error_response(status: int, message: str) -> Response:
    response = jsonify(error=message)
    response.status_code = status
    return response


def _api_error(e: ApiError) -> Response:
    return _error_response(e.status, e.message)


def _http_error(e: HTTPException) -> Response:
    if isinstance(e, RequestEntityTooLarge):
        limit = current_app.config["MAX_UPLOAD_BYTES"]
        text_limit = current_app.config["MAX_TEXT_BYTES"]
        return _error_response(
            413,
            f"upload too large: the limit is {_human(limit)} per request "
            f"({_human(text_limit)} for the text field; send bigger text as a file)",
        )
    if request.path.startswith("/api/"):
        return _error_response(e.code or 500, e.description or e.name)
    return e.get_response()  # type: ignore[return-value]


def _human(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:g} {unit}" if unit == "bytes" else f"{n:.4g} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


# ----- static page ------------------------------------------------------------------------


def _inside(path: Path, folder: Path) -> bool:
    """True when `path`, symlinks resolved, lies inside `folder` (itself resolved)."""
    try:
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == os.path.realpath(
            folder
        )
    except ValueError:
        return False


def static_file(path: str) -> Response:
    web_dir: Path = current_app.config["WEB_DIR"]
    if not (web_dir / "index.html").is_file():
        if path == "index.html":
            return Response(
                NOT_BUILT_PAGE.format(web_dir=_display_path(web_dir)), status=503, mimetype="text/html"
            )
        raise NotFound("the page has not been built (run `make build`)")
    # send_from_directory refuses '..', absolute paths and drive letters (safe_join);
    # symlinks are resolved here so that none can lead out of the build folder.
    if not _inside(web_dir / path, web_dir):
        raise NotFound()
    response = send_from_directory(web_dir, path, max_age=0)
    if path in ("index.html", "manifest.json"):
        response.headers["Cache-Control"] = "no-cache"
    return response


def _display_path(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return path.name


def api_not_found(rest: str) -> Response:
    raise ApiError(404, f"no such API endpoint: /api/{rest[:100]}")


# ----- health and tokenizers --------------------------------------------------------------


def _pattern_names() -> list[str]:
    """Every pattern name the trainer knows, the page's choices first."""
    known = list(getattr(patterns, "PATTERN_NAMES", patterns.PATTERNS))
    return [p for p in PATTERN_CHOICES if p in known] + [p for p in known if p not in PATTERN_CHOICES]


def health() -> Response:
    cfg = current_app.config
    return jsonify(
        status="ok",
        version=tokenizer.__version__,
        trainer=_trainer_available(),
        patterns=_pattern_names(),
        pattern_choices=[p for p in PATTERN_CHOICES if p in _pattern_names()] + ["custom"],
        tie_breaks=list(TIE_BREAKS),
        limits={
            "max_upload_bytes": cfg["MAX_UPLOAD_BYTES"],
            "max_text_bytes": cfg["MAX_TEXT_BYTES"],
            "min_vocab": 257,
            "max_vocab": cfg["MAX_VOCAB"],
            "max_files": cfg["MAX_FILES"],
            "max_special_tokens": cfg["MAX_SPECIAL_TOKENS"],
            "max_queued_jobs": cfg["MAX_QUEUED_JOBS"],
            "max_running_jobs": cfg["MAX_RUNNING_JOBS"],
        },
    )


def _trainer_available() -> bool:
    try:
        from tokenizer import train as _train  # noqa: F401
    except ImportError:
        return False
    return True


def _trained_entry(name: str) -> dict[str, Any] | None:
    """Metadata of a trained tokenizer from its .json (cached by mtime), or None."""
    data = _data_dir()
    json_path, tt_path = data / f"{name}.json", data / f"{name}.tiktoken"
    # Only regular files we wrote: a symlink in the data folder could point anywhere.
    if json_path.is_symlink() or tt_path.is_symlink():
        return None
    try:
        st = json_path.stat()
        tt_size = tt_path.stat().st_size
    except FileNotFoundError:
        return None
    cache: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = current_app.extensions["bpe_meta_cache"]
    key = (st.st_mtime_ns, st.st_size, tt_size)
    hit = cache.get(name)
    if hit and hit[0] == key:
        return hit[1]
    try:
        meta = formats.read_json(json_path)
    except (ValueError, OSError) as e:
        log.warning("skipping %s: %s", json_path.name, e)
        return None
    merges = meta.get("merges")
    entry = {
        "name": name,
        "kind": "trained",
        "vocab_size": meta.get("vocab_size"),
        "merges": len(merges) if isinstance(merges, list) else None,
        "pattern": meta.get("pattern"),
        "pattern_regex": meta.get("pattern_regex"),
        "special_tokens": meta.get("special_tokens") or {},
        "metadata": meta.get("metadata") or {},
        "created": st.st_mtime,
        "bytes": {"json": st.st_size, "tiktoken": tt_size},
        "files": {
            "json": f"/api/tokenizers/{name}.json",
            "tiktoken": f"/api/tokenizers/{name}.tiktoken",
        },
    }
    cache[name] = (key, entry)
    return entry


def _trained_names() -> list[str]:
    data = _data_dir()
    names = []
    for path in data.glob("*.json"):
        name = path.name[: -len(".json")]
        if NAME_RE.fullmatch(name) and (data / f"{name}.tiktoken").is_file():
            names.append(name)
    return sorted(names, key=str.lower)


def _reference_entry(name: str) -> dict[str, Any]:
    return {"name": name, "kind": "reference", "pattern": ENCODING_PATTERN_NAMES.get(name)}


def tokenizers_list() -> Response:
    trained = [e for e in (_trained_entry(n) for n in _trained_names()) if e is not None]
    return jsonify(reference=[_reference_entry(n) for n in list_encodings()], trained=trained)


def _split_download(filename: str) -> tuple[str, str | None]:
    for suffix in (".json", ".tiktoken"):
        if filename.endswith(suffix):
            return filename[: -len(suffix)], suffix
    return filename, None


def _safe_name_or_404(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise ApiError(404, f"no tokenizer named {name[:80]!r}")
    return name


def tokenizer_get(filename: str) -> Response:
    name, suffix = _split_download(filename)
    _safe_name_or_404(name)
    if suffix is None:
        if name in list_encodings():
            return jsonify(_reference_entry(name))
        entry = _trained_entry(name)
        if entry is None:
            raise ApiError(404, f"no tokenizer named {name!r}")
        return jsonify(entry)
    if name in list_encodings():
        raise ApiError(
            404, f"{name!r} is a reference encoding: it ships with the page, not as a download here"
        )
    data = _data_dir()
    path = data / f"{name}{suffix}"
    if _trained_entry(name) is None or not _inside(path, data):
        raise ApiError(404, f"no trained tokenizer named {name!r}")
    mimetype = "application/json" if suffix == ".json" else "text/plain"
    return send_file(path, mimetype=mimetype, as_attachment=True, download_name=path.name, max_age=0)


def tokenizer_delete(filename: str) -> Response:
    name = _safe_name_or_404(filename)
    if name in list_encodings():
        raise ApiError(400, f"{name!r} is a reference encoding; only trained tokenizers can be deleted")
    data = _data_dir()
    with _jobs().lock:
        if _trained_entry(name) is None:
            raise ApiError(404, f"no trained tokenizer named {name!r}")
        # The .json goes first: without it the pair is no longer listed, so a crash between
        # the two unlinks never leaves a half tokenizer visible.
        for suffix in (".json", ".tiktoken"):
            with contextlib.suppress(FileNotFoundError):
                (data / f"{name}{suffix}").unlink()
    current_app.extensions["bpe_meta_cache"].pop(name, None)
    return jsonify(deleted=name)


# ----- training: validation ---------------------------------------------------------------


def _form_int(field: str, default: int | None, lo: int, hi: int, what: str) -> int:
    raw = request.form.get(field, "").strip()
    if not raw:
        if default is None:
            raise ApiError(400, f"{field} is required ({what}: an integer from {lo} to {hi})")
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{field} must be an integer, got {raw[:40]!r}") from None
    if not lo <= value <= hi:
        raise ApiError(400, f"{field} {value} is out of range: {what} must be from {lo} to {hi}")
    return value


def _parse_special_tokens(raw: str, limit: int) -> list[str]:
    """A JSON list of strings, or tokens separated by commas and/or newlines."""
    raw = raw.strip()
    if not raw:
        return []
    if raw.startswith("["):
        try:
            tokens = json.loads(raw)
        except json.JSONDecodeError as e:
            raise ApiError(400, f"special_tokens looks like JSON but is not valid: {e.msg}") from None
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise ApiError(400, "special_tokens as JSON must be a list of strings")
    else:
        tokens = [t.strip() for t in re.split(r"[,\n]", raw)]
        tokens = [t for t in tokens if t]
    if any(not t for t in tokens):
        raise ApiError(400, "special_tokens: a special token cannot be empty")
    if any(len(t) > 256 for t in tokens):
        raise ApiError(400, "special_tokens: each token must be at most 256 characters")
    dupes = sorted({t for t in tokens if tokens.count(t) > 1})
    if dupes:
        raise ApiError(400, f"special_tokens: {dupes[0]!r} is listed twice")
    if len(tokens) > limit:
        raise ApiError(400, f"special_tokens: at most {limit} tokens")
    return tokens


def _resolve_pattern_field() -> tuple[str, str]:
    """-> (pattern given to train(), label stored for display)."""
    pattern = request.form.get("pattern", "").strip() or "gpt4"
    if pattern == "custom":
        regex_src = request.form.get("regex", "")
        if not regex_src:
            raise ApiError(400, "pattern 'custom' needs a regular expression in the field 'regex'")
        if len(regex_src) > 10_000:
            raise ApiError(400, "regex is too long (at most 10000 characters)")
        _check_regex(regex_src)
        return regex_src, "custom"
    if pattern not in _pattern_names():
        choices = ", ".join([*_pattern_names(), "custom"])
        raise ApiError(400, f"unknown pattern {pattern[:60]!r}; choose one of: {choices}")
    return pattern, pattern


def _check_regex(source: str) -> None:
    """The regex must compile in `regex` (training) and in the stdlib-`re` translation the
    page uses under Pyodide; otherwise the tokenizer would train here but fail in the browser."""
    try:
        patterns.compile_pattern(source, engine="regex")
    except (ValueError, TypeError, OverflowError, RecursionError) as e:
        raise ApiError(400, f"invalid regex: {_strip_prefix(e)}") from None
    try:
        patterns.compile_pattern(source, engine="re")
    except (ValueError, TypeError, OverflowError, RecursionError) as e:
        raise ApiError(
            400, f"regex not usable in the browser (the page splits with Python's re): {_strip_prefix(e)}"
        ) from None


def _strip_prefix(e: Exception) -> str:
    return re.sub(r"^invalid split pattern .*?: ", "", str(e), count=1, flags=re.S)


def _check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise ApiError(
            400,
            f"unsafe name {name[:80]!r}: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    lower = name.lower()
    if lower.endswith((".json", ".tiktoken")) or lower.split(".")[0] in WINDOWS_RESERVED:
        raise ApiError(400, f"unsafe name {name!r}: it would clash with file names on some systems")
    return name


def _display_filename(filename: str | None, index: int) -> str:
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable())[:100]
    return base or f"file {index + 1}"


def _check_utf8(path: Path, label: str, block_size: int = 1 << 20) -> int:
    """Raise a 400 naming the file and byte offset of the first non-UTF-8 byte; return the size.

    Reads in blocks (a 200 MB upload is never in memory at once); a character split across
    two blocks is carried over, so the offset is the one `bytes.decode` would report.
    """
    pending = b""
    pos = 0  # bytes of the file consumed before `pending`
    with open(path, "rb") as f:
        while True:
            block = f.read(block_size)
            final = not block
            data = pending + block
            try:
                _, consumed = codecs.utf_8_decode(data, "strict", final)
            except UnicodeDecodeError as e:
                bad = data[e.start : e.start + 4].hex(" ").upper()
                raise ApiError(
                    400,
                    f"{label} is not UTF-8 text: invalid byte(s) at offset {pos + e.start} ({bad}); "
                    "convert it to UTF-8 first",
                ) from None
            pos += consumed
            pending = data[consumed:]
            if final:
                return pos


def _auto_name(first_label: str | None, vocab_size: int, taken: set[str]) -> str:
    stem = Path(first_label).stem if first_label else "text"
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip(".-_")[:40] or "text"
    base = f"{stem}-{vocab_size}"
    name, i = base, 2
    while name.lower() in taken:
        name, i = f"{base}-{i}", i + 1
    return name


def train_submit() -> tuple[Response, int]:
    jobs = _jobs()
    jobs.check_capacity()  # before reading a possibly huge body
    cfg = current_app.config
    job_dir = jobs.new_job_dir()
    request.environ["bpe.upload_dir"] = str(job_dir)
    try:
        return _train_submit(jobs, job_dir, cfg)
    except BaseException:
        for f in request.environ.get("bpe.uploads", []):
            f.close()
        shutil.rmtree(job_dir, ignore_errors=True)
        raise


def _train_submit(jobs: JobManager, job_dir: Path, cfg: dict[str, Any]) -> tuple[Response, int]:
    files = request.files.getlist("corpus")  # parses the body: uploads stream into job_dir
    unexpected = [k for k in request.files if k != "corpus"]
    if unexpected:
        raise ApiError(
            400, f"unexpected file field {unexpected[0][:40]!r}; send corpus files in the field 'corpus'"
        )
    vocab_size = _form_int("vocab_size", None, 257, cfg["MAX_VOCAB"], "vocab_size")
    pattern, pattern_label = _resolve_pattern_field()
    tie_break = request.form.get("tie_break", "").strip() or "first"
    if tie_break not in TIE_BREAKS:
        raise ApiError(400, f"unknown tie_break {tie_break[:40]!r}; choose one of: {', '.join(TIE_BREAKS)}")
    min_frequency = _form_int("min_frequency", 2, 1, 1 << 40, "min_frequency")
    special = _parse_special_tokens(request.form.get("special_tokens", ""), cfg["MAX_SPECIAL_TOKENS"])

    corpus: list[tuple[str, str]] = []  # (path, label shown to the user)
    for storage in files:
        storage.close()  # flushes: the job reads the file by its path
    for i, storage in enumerate(files):
        path = Path(storage.stream.name)  # type: ignore[union-attr]
        if not storage.filename and path.stat().st_size == 0:
            continue  # a file input left empty
        if len(corpus) >= cfg["MAX_FILES"]:
            raise ApiError(400, f"too many corpus files: at most {cfg['MAX_FILES']}")
        corpus.append((str(path), _display_filename(storage.filename, i)))
    text = request.form.get("text", "")
    if text:
        text_path = job_dir / "text.txt"
        with open(text_path, "w", encoding="utf-8", errors="surrogatepass", newline="") as f:
            f.write(text)
        corpus.append((str(text_path), "the text field"))
    if not corpus:
        raise ApiError(400, "empty corpus: upload one or more files in 'corpus' or paste text in 'text'")
    total = 0
    for path, label in corpus:
        total += _check_utf8(Path(path), label)
    if total == 0:
        raise ApiError(400, "empty corpus: the uploaded files and text are all empty")

    raw_name = request.form.get("name", "").strip()
    job = jobs.submit(
        job_dir=job_dir,
        name=_check_name(raw_name) if raw_name else None,
        auto_name=lambda taken: _auto_name(
            corpus[0][1] if corpus[0][1] != "the text field" else None, vocab_size, taken
        ),
        params={
            "vocab_size": vocab_size,
            "pattern": pattern,
            "pattern_label": pattern_label,
            "tie_break": tie_break,
            "special_tokens": special,
            "min_frequency": min_frequency,
            "workers": cfg["TRAIN_WORKERS"],
        },
        corpus=corpus,
        corpus_bytes=total,
    )
    response = jsonify(job=job.id, name=job.name, state=job.state, url=f"/api/jobs/{job.id}")
    response.headers["Location"] = f"/api/jobs/{job.id}"
    return response, 202


# ----- jobs -------------------------------------------------------------------------------

FINAL_STATES = ("done", "failed", "cancelled")


class Job:
    """One training job; `version` increases on every change so SSE streams can wait on it."""

    def __init__(
        self, job_id: str, job_dir: Path, name: str, params: dict[str, Any], corpus, corpus_bytes: int
    ):
        self.id = job_id
        self.dir = job_dir
        self.name = name
        self.params = params
        self.corpus: list[tuple[str, str]] = corpus
        self.corpus_bytes = corpus_bytes
        self.state = "queued"
        self.progress: dict[str, Any] | None = None
        self.error: str | None = None
        self.result: dict[str, Any] | None = None
        self.created = time.time()
        self.started: float | None = None
        self.finished: float | None = None
        self.process: multiprocessing.process.BaseProcess | None = None
        self.version = 0

    def snapshot(self, queue_position: int | None = None) -> dict[str, Any]:
        now = self.finished or time.time()
        return {
            "id": self.id,
            "state": self.state,
            "name": self.name,
            "tokenizer": self.name if self.state == "done" else None,
            "progress": self.progress,
            "error": self.error,
            "queue_position": queue_position,
            "params": {k: v for k, v in self.params.items() if k not in ("workers",)},
            "corpus": {"files": [label for _, label in self.corpus], "bytes": self.corpus_bytes},
            "result": self.result,
            "created": self.created,
            "started": self.started,
            "finished": self.finished,
            "elapsed": (now - self.started) if self.started else None,
            "version": self.version,
        }


class JobManager:
    """Queue + worker processes + the files they produce; every state change under `lock`."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.data_dir: Path = config["DATA_DIR"]
        self.jobs_dir = self.data_dir / JOBS_DIRNAME
        self.max_queued = int(config["MAX_QUEUED_JOBS"])
        self.max_running = int(config["MAX_RUNNING_JOBS"])
        self.history = int(config["JOB_HISTORY"])
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.jobs: dict[str, Job] = {}
        self.queue: list[Job] = []
        self._ctx = multiprocessing.get_context("spawn")
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self._remove_stale_job_dirs()
        atexit.register(self.shutdown)

    def _remove_stale_job_dirs(self) -> None:
        """Temp folders of jobs whose server process is gone (crash, kill -9): never finished."""
        for path in self.jobs_dir.iterdir():
            pid_str = path.name.split("-", 1)[0]
            if pid_str.isdigit() and _pid_alive(int(pid_str)):
                continue
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)

    def new_job_dir(self) -> Path:
        job_dir = self.jobs_dir / f"{os.getpid()}-{secrets.token_hex(8)}"
        job_dir.mkdir()
        return job_dir

    # -- queries

    def check_capacity(self) -> None:
        with self.lock:
            if len(self.queue) >= self.max_queued:
                raise ApiError(
                    429,
                    f"too many training jobs waiting ({len(self.queue)} queued); "
                    "wait for one to finish or cancel one",
                )

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise ApiError(404, f"no job {job_id[:40]!r} (jobs are forgotten when the server restarts)")
        return job

    def snapshot(self, job: Job) -> dict[str, Any]:
        with self.lock:
            position = self.queue.index(job) + 1 if job in self.queue else None
            return job.snapshot(position)

    def reserved_names(self) -> set[str]:
        """Lower-cased names taken by files, reference encodings or unfinished jobs."""
        names = {p.name[: -len(".json")].lower() for p in self.data_dir.glob("*.json")}
        names |= {p.name[: -len(".tiktoken")].lower() for p in self.data_dir.glob("*.tiktoken")}
        names |= {n.lower() for n in list_encodings()}
        names |= {j.name.lower() for j in self.jobs.values() if j.state in ("queued", "running")}
        return names

    # -- changes

    def submit(self, *, job_dir: Path, name: str | None, auto_name, params, corpus, corpus_bytes) -> Job:
        with self.lock:
            self.check_capacity()
            taken = self.reserved_names()
            if name is None:
                name = auto_name(taken)
            elif name.lower() in taken:
                if name.lower() in {n.lower() for n in list_encodings()}:
                    raise ApiError(409, f"{name!r} is the name of a reference encoding; choose another name")
                raise ApiError(409, f"a tokenizer named {name!r} already exists (or is being trained)")
            job = Job(job_dir.name.split("-", 1)[1], job_dir, name, params, corpus, corpus_bytes)
            self.jobs[job.id] = job
            self.queue.append(job)
            self._touch(job)
            self._forget_old()
            self._start_queued()
            return job

    def _touch(self, job: Job) -> None:
        job.version += 1
        self.changed.notify_all()

    def _forget_old(self) -> None:
        finished = [j for j in self.jobs.values() if j.state in FINAL_STATES]
        for job in finished[: max(0, len(finished) - self.history)]:
            del self.jobs[job.id]

    def _start_queued(self) -> None:
        running = sum(1 for j in self.jobs.values() if j.state == "running")
        while self.queue and running < self.max_running:
            job = self.queue.pop(0)
            self._start(job)
            running += 1
        for queued in self.queue:
            self._touch(queued)  # their queue position changed

    def _start(self, job: Job) -> None:
        out_dir = job.dir / "out"
        out_dir.mkdir()
        spec = {
            **job.params,
            "corpus": job.corpus,
            "name": job.name,
            "out_dir": str(out_dir),
            "parent_pid": os.getpid(),
        }
        receiver, sender = self._ctx.Pipe(duplex=False)
        process = self._ctx.Process(target=_job_main, args=(sender, spec), name=f"bpe-train-{job.id}")
        job.state = "running"
        job.started = time.time()
        job.progress = {
            "phase": "starting",
            "done": 0,
            "total": None,
            "percent": None,
            "rate": None,
            "eta": None,
        }
        try:
            process.start()
        except Exception as e:
            sender.close()
            receiver.close()
            self._finish(job, "failed", f"could not start the training process: {e}")
            return
        sender.close()  # the child holds the only writing end: EOF when it exits
        job.process = process
        self._touch(job)
        threading.Thread(
            target=self._monitor, args=(job, receiver), name=f"monitor-{job.id}", daemon=True
        ).start()

    def _monitor(self, job: Job, receiver: Connection) -> None:
        """Reads the child's messages until it exits; then finalizes the job."""
        outcome: tuple[str, Any] | None = None
        try:
            while True:
                try:
                    kind, payload = receiver.recv()
                except (EOFError, OSError):
                    break
                if kind == "progress":
                    with self.lock:
                        if job.state == "running":
                            job.progress = payload
                            self._touch(job)
                else:
                    outcome = (kind, payload)
        finally:
            receiver.close()
        process = job.process
        if process is not None:
            process.join(10)
        with self.lock:
            if job.state != "running":
                return  # cancelled meanwhile: cancel() cleaned up
            if outcome and outcome[0] == "done":
                self._install(job, outcome[1])
            elif outcome and outcome[0] == "error":
                self._finish(job, "failed", outcome[1])
            else:
                code = process.exitcode if process is not None else None
                why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
                hint = " (out of memory?)" if code == -signal.SIGKILL else ""
                self._finish(job, "failed", f"the training process died ({why}){hint}")

    def _install(self, job: Job, result: dict[str, Any]) -> None:
        """Rename the finished files into DATA_DIR: .tiktoken first, then .json (the commit)."""
        out_dir = job.dir / "out"
        src_tt, src_json = out_dir / f"{job.name}.tiktoken", out_dir / f"{job.name}.json"
        dst_tt, dst_json = self.data_dir / src_tt.name, self.data_dir / src_json.name
        if not (src_tt.is_file() and src_json.is_file()):
            self._finish(job, "failed", "the training process ended without writing its files")
            return
        if dst_json.exists() or dst_tt.exists():
            self._finish(
                job, "failed", f"a tokenizer named {job.name!r} appeared while training; nothing overwritten"
            )
            return
        try:
            os.replace(src_tt, dst_tt)
            os.replace(src_json, dst_json)
        except OSError as e:
            for path in (dst_tt, dst_json):
                with contextlib.suppress(OSError):
                    path.unlink()
            self._finish(job, "failed", f"could not save the tokenizer: {e.strerror}")
            return
        job.result = result
        progress = dict(job.progress or {})
        progress.update(phase="done", percent=100.0, eta=0)
        job.progress = progress
        self._finish(job, "done", None)

    def _finish(self, job: Job, state: str, error: str | None) -> None:
        job.state = state
        job.error = error
        job.finished = time.time()
        job.process = None
        shutil.rmtree(job.dir, ignore_errors=True)
        self._touch(job)
        self._start_queued()

    def cancel(self, job: Job) -> None:
        with self.lock:
            if job.state in FINAL_STATES:
                raise ApiError(409, f"job {job.id} already {job.state}; nothing to cancel")
            process = job.process
            if job in self.queue:
                self.queue.remove(job)
            job.state = "cancelled"  # from here on the monitor discards whatever arrives
            job.finished = time.time()
            job.process = None
        if process is not None:
            _kill_process_group(process)
        with self.lock:
            shutil.rmtree(job.dir, ignore_errors=True)
            self._touch(job)
            self._start_queued()

    def shutdown(self) -> None:
        """Stop every job (server exit): their processes die, their temp folders go."""
        with self.lock:
            active = [j for j in self.jobs.values() if j.state in ("queued", "running")]
        for job in active:
            with contextlib.suppress(ApiError):
                self.cancel(job)

    def wait_for_change(self, job: Job, seen_version: int, timeout: float) -> None:
        with self.lock:
            if job.version == seen_version:
                self.changed.wait(timeout)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_process_group(process: multiprocessing.process.BaseProcess) -> None:
    """SIGTERM the job's process group (the trainer may run a counting pool), then SIGKILL.

    Every signal goes out while the job process is alive or unreaped, so its pid (and
    process group id) cannot have been reused by an unrelated process.

    The child makes itself a group leader first thing, but a cancel can arrive before that:
    then there is no group yet (and no pool either), so the process itself is signalled too.
    """
    pid = process.pid
    if pid is None:
        return
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
        _signal_job(pid, sig)
        process.join(wait)
        if process.exitcode is not None:
            break
    # No sweep after join(): the pid is reaped by then and may belong to someone else.


def _signal_job(pid: int, sig: int) -> None:
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)  # pgid == pid once the child called setpgrp
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


# ----- the job process --------------------------------------------------------------------


def _job_main(conn: Connection, spec: dict[str, Any]) -> None:
    """Runs in the spawned child: train, save into the job's temp folder, report."""
    if hasattr(os, "setpgrp"):
        os.setpgrp()  # cancel kills the whole group, including any counting pool
    _exit_with_parent(int(spec["parent_pid"]))
    paths = [path for path, _ in spec["corpus"]]

    def clean(message: str) -> str:
        """Error messages name the user's files, not our temp paths."""
        for path, label in spec["corpus"]:
            message = message.replace(path, label)
        return message.replace(spec["out_dir"], "the output folder")

    last_sent = [0.0, None]

    def progress(
        phase: str, done: int, total: int | None, rate: float | None = None, eta: float | None = None
    ):
        now = time.monotonic()
        if phase == last_sent[1] and now - last_sent[0] < 0.1 and not (total and done >= total):
            return
        last_sent[0], last_sent[1] = now, phase
        percent = round(100.0 * done / total, 2) if total else None
        conn.send(
            (
                "progress",
                {
                    "phase": phase,
                    "done": done,
                    "total": total,
                    "percent": percent,
                    "rate": _finite(rate),
                    "eta": _finite(eta),
                },
            )
        )

    try:
        from tokenizer.train import train

        started = time.time()
        tok = train(
            [Path(p) for p in paths],
            spec["vocab_size"],
            pattern=spec["pattern"],
            special_tokens=spec["special_tokens"] or None,
            tie_break=spec["tie_break"],
            min_frequency=spec["min_frequency"],
            workers=spec["workers"],
            progress=progress,
        )
        tok.name = spec["name"]
        tok.metadata.setdefault("corpus_files", [label for _, label in spec["corpus"]])
        tok.metadata.setdefault("trained_by", "server.py")
        tok.metadata.setdefault("pattern_label", spec["pattern_label"])
        tok.save(Path(spec["out_dir"]) / spec["name"])
        conn.send(
            (
                "done",
                {
                    "vocab_size": tok.n_vocab,
                    "merges": len(tok.merges) if tok.merges is not None else None,
                    "seconds": round(time.time() - started, 3),
                },
            )
        )
    except BaseException as e:  # noqa: BLE001 - everything must reach the parent as text
        message = clean(f"{e}") if isinstance(e, ValueError) else clean(f"{type(e).__name__}: {e}")
        with contextlib.suppress(Exception):
            conn.send(("error", message))
    finally:
        conn.close()


def _finite(x: float | None) -> float | None:
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return round(x, 3) if x == x and abs(x) != float("inf") else None


def _exit_with_parent(parent_pid: int) -> None:
    """If the server dies without cancelling us (kill -9), stop instead of training for nobody."""

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                if hasattr(os, "killpg"):
                    os.killpg(os.getpgrp(), signal.SIGKILL)
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


# ----- job views --------------------------------------------------------------------------


def jobs_list() -> Response:
    jobs = _jobs()
    with jobs.lock:
        return jsonify(jobs=[jobs.snapshot(j) for j in jobs.jobs.values()])


def job_get(job_id: str) -> Response:
    jobs = _jobs()
    return jsonify(jobs.snapshot(jobs.get(job_id)))


def job_cancel(job_id: str) -> Response:
    jobs = _jobs()
    job = jobs.get(job_id)
    jobs.cancel(job)
    return jsonify(jobs.snapshot(job))


def job_events(job_id: str) -> Response:
    """Server-Sent Events: one `data:` JSON snapshot per change, then the final one, then close."""
    jobs = _jobs()
    job = jobs.get(job_id)

    def stream() -> Iterator[str]:
        yield "retry: 1000\n\n"
        seen = -1
        last_sent = time.monotonic()
        while True:
            snap = jobs.snapshot(job)
            if snap["version"] != seen:
                seen = snap["version"]
                last_sent = time.monotonic()
                yield f"id: {seen}\nevent: {'progress' if snap['state'] not in FINAL_STATES else snap['state']}\n"
                yield f"data: {json.dumps(snap)}\n\n"
                if snap["state"] in FINAL_STATES:
                    return
            elif time.monotonic() - last_sent > 15:
                last_sent = time.monotonic()
                yield ": keep-alive\n\n"
            jobs.wait_for_change(job, seen, 5.0)

    response = Response(stream(), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    return response


# ----- command line -----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="BPE Playground: the page + a local training server")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int, default=5000, help="port (default 5000; 0 picks a free one)")
    parser.add_argument("--data-dir", default=str(DEFAULTS["DATA_DIR"]), help="where trained tokenizers live")
    parser.add_argument(
        "--web-dir", default=str(DEFAULTS["WEB_DIR"]), help="the built page (default web/dist)"
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="also accept this Host header (e.g. a LAN name when binding 0.0.0.0)",
    )
    args = parser.parse_args(argv)
    from werkzeug.serving import make_server

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    allowed = list(args.allow_host)
    if args.host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        allowed.append(f"[{args.host}]" if ":" in args.host else args.host)
    app = create_app({"DATA_DIR": args.data_dir, "WEB_DIR": args.web_dir, "ALLOWED_HOSTS": allowed})
    try:
        server = make_server(args.host, args.port, app, threaded=True)
    except OSError as e:
        print(f"error: cannot listen on {args.host}:{args.port}: {e.strerror}", file=sys.stderr)
        return 2
    shown_host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    if ":" in shown_host:
        shown_host = f"[{shown_host}]"
    print(f"BPE Playground: http://{shown_host}:{server.server_port}/", flush=True)
    print(f"  trained tokenizers in {app.config['DATA_DIR']}; Ctrl-C to stop", flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            "  warning: listening beyond this machine; anyone who can reach it can train and delete",
            flush=True,
        )
    if not (app.config["WEB_DIR"] / "index.html").is_file():
        print(f"  note: {app.config['WEB_DIR']} is not built yet: run `make build`", flush=True)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # unwinds serve_forever into the cleanup below

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()  # werkzeug's returns quietly on KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        print("stopping: cancelling unfinished jobs", flush=True)
        app.extensions["bpe_jobs"].shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The BPE Playground server as a Flask application: the built page plus a training API.

Why a server at all: the page encodes in the browser (Pyodide), but training a vocabulary on
a corpus of hundreds of MB wants native CPython, all cores and the disk. Training runs in a
separate *process* per job (spawn), so a long job never blocks this server; progress comes
back through a pipe and is streamed to the page as Server-Sent Events.

Where things are: config.py (settings and limits), security.py (Host/Origin checks, headers),
errors.py (JSON errors), one blueprint per concern: static.py (the page), tokenizers.py
(/api/health, /api/tokenizers), train.py (POST /api/train, with the form checks in forms.py),
jobs_api.py (/api/jobs); formparser.py (the train body's bounded parser), serving.py (the socket
server, with its timeouts, and JSON for the errors http.server answers before the app sees a
request); jobs.py (the queue, no HTTP) and job_process.py (the training child).
server.py at the top of the repository is the command line that runs it.

HTTP API (JSON; errors are `{"error": "..."}` with a 4xx status):
  GET    /api/health                      status, version, limits, pattern names
  GET    /api/tokenizers                  reference encodings + trained tokenizers with metadata
                                          + broken entries (half-written pairs) with the reason
  GET    /api/tokenizers/NAME             one entry of that list
  GET    /api/tokenizers/NAME.json        download (trained ones)
  GET    /api/tokenizers/NAME.tiktoken    download (trained ones)
  DELETE /api/tokenizers/NAME             remove a trained (or broken) tokenizer
  POST   /api/train                       multipart: corpus (files) and/or text, vocab_size,
                                          name, pattern (+ regex when pattern=custom),
                                          tie_break, special_tokens, min_frequency -> 202 {"job"};
                                          or base (a reference encoding or a trained name) or
                                          base_file (a tokenizer's file(s): .tiktoken and/or .json,
                                          tokenizer.json, .model) + add (new merges) instead of
                                          vocab_size/pattern/special_tokens
  GET    /api/jobs                        all jobs of this server run
  GET    /api/jobs/ID                     state, progress, error, warnings, tokenizer name
  GET    /api/jobs/ID/events              the same state, streamed (text/event-stream)
  DELETE /api/jobs/ID                     cancel
"""

from __future__ import annotations

import threading
from typing import Any

from flask import Flask

from . import errors, jobs_api, security, static, tokenizers, train
from .config import load_config
from .jobs import JobManager


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """The Flask app. `config` replaces keys of config.DEFAULTS (see there for each)."""
    app = Flask(__name__, static_folder=None)
    app.request_class = train.UploadRequest
    app.config.update(load_config(config))
    app.json.sort_keys = False  # type: ignore[attr-defined]
    data_dir = app.config["DATA_DIR"]
    data_dir.mkdir(parents=True, exist_ok=True)
    app.extensions[jobs_api.JOBS] = JobManager(
        data_dir,
        max_queued=app.config["MAX_QUEUED_JOBS"],
        max_running=app.config["MAX_RUNNING_JOBS"],
        history=app.config["JOB_HISTORY"],
        time_limit=app.config["JOB_TIME_LIMIT"],
    )
    app.extensions[tokenizers.META_CACHE] = {}
    app.extensions[tokenizers.LOAD_LOCK] = threading.Lock()
    security.init_app(app)
    errors.init_app(app)
    for blueprint in (static.bp, tokenizers.bp, train.bp, jobs_api.bp):
        app.register_blueprint(blueprint)
    return app

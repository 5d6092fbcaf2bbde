"""The server's settings: every key `create_app(config)` accepts, with its default and why.

Names the server shares with the library (pattern names, tie-break names, the vocabulary
minimum) are not settings and are not defined here: they are imported from `tokenizer`, so
the page, the CLI and the server can never disagree about them. The server's own vocabulary
minimum is the library's plus one merge (MIN_TRAIN_VOCAB).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tokenizer.train import MIN_VOCAB

# tokens: a training the server runs learns at least one merge (256 + 1, as issue 6 asks); the
# library and the CLI also take 256 (the bytes alone, as minbpe and rustbpe do).
MIN_TRAIN_VOCAB = MIN_VOCAB + 1

ROOT = Path(__file__).resolve().parents[1]  # the repository: server.py, web/, data/

DEFAULTS: dict[str, Any] = {
    "DATA_DIR": ROOT / "data",  # trained tokenizers (git-ignored)
    "WEB_DIR": ROOT / "web" / "dist",  # the built page (build_wasm.py)
    "MAX_UPLOAD_BYTES": 200 * 1024 * 1024,  # bytes: a whole POST /api/train body
    "MAX_TEXT_BYTES": 16 * 1024 * 1024,  # bytes: the `text` form field (held in memory; files are not)
    # bytes: every other form field (name, regex, special_tokens, ...). The largest real one,
    # special_tokens, is at most 256 tokens x 256 characters: 256 KB as UTF-8 JSON, 384 KB as
    # \uXXXX escapes of BMP characters, 768 KB (+1 KB of quotes and commas) as Python's
    # json.dumps writes astral ones (two \u escapes each, 12 bytes a character): 1 MB holds it.
    "MAX_FIELD_BYTES": 1024 * 1024,
    # tokens: above GPT-2's 50257, the whole 16-bit id space; a pure-Python merge loop past
    # that on a 200 MB upload takes longer than anyone waits at a page. Raise it if you need.
    "MAX_VOCAB": 65536,
    "MAX_SPECIAL_TOKENS": 256,  # tokens: far more than any real tokenizer declares
    "MAX_FILES": 64,  # files: corpus files in one request
    # bytes: each uploaded base tokenizer file (`base_file`), checked while it streams in. The
    # page loads files up to this size (web/io.js MAX_LOAD_BYTES), so any panel can be a base;
    # the biggest real one, o200k_base's tokenizer.json, is about 9 MB.
    "MAX_BASE_FILE_BYTES": 64 * 1024 * 1024,
    "MAX_QUEUED_JOBS": 4,  # jobs waiting (not running) before POST /api/train says 429
    "MAX_RUNNING_JOBS": 1,  # jobs: training is CPU- and memory-heavy, one at a time by default
    "TRAIN_WORKERS": None,  # processes: passed to train(workers=...); None lets the trainer decide
    "ALLOWED_HOSTS": [],  # extra Host names (or name:port) besides 127.0.0.1, localhost, [::1]
    "JOB_HISTORY": 100,  # jobs: finished ones remembered for GET /api/jobs/ID
    # seconds a job may run before it is stopped (failed): a 200 MB corpus at vocabulary
    # 65536 trains in minutes, so an hour means a runaway (e.g. a regex that backtracks
    # for ever on the corpus), not a slow machine. Raise it for bigger work.
    "JOB_TIME_LIMIT": 3600.0,
}

# Form fields other than files (vocab_size, name, pattern, ...) that a train request may carry,
# on top of one part per corpus file: the bound on multipart parts werkzeug parses.
FORM_FIELD_PARTS = 32
JOBS_DIRNAME = ".jobs"  # temp folders of jobs inside DATA_DIR; a leading dot is never a valid name


def load_config(config: dict[str, Any] | None) -> dict[str, Any]:
    """DEFAULTS updated with `config`, folders resolved, werkzeug's own limits derived."""
    cfg = {**DEFAULTS, **(config or {})}
    cfg["DATA_DIR"] = Path(cfg["DATA_DIR"]).resolve()
    cfg["WEB_DIR"] = Path(cfg["WEB_DIR"]).resolve()
    limit = float(cfg["JOB_TIME_LIMIT"])
    if not 0 < limit < float("inf"):
        raise ValueError(f"JOB_TIME_LIMIT must be a positive number of seconds, not {limit}")
    cfg["MAX_CONTENT_LENGTH"] = int(cfg["MAX_UPLOAD_BYTES"])
    cfg["MAX_FORM_MEMORY_SIZE"] = int(cfg["MAX_TEXT_BYTES"])
    cfg["MAX_FORM_PARTS"] = int(cfg["MAX_FILES"]) + FORM_FIELD_PARTS
    return cfg

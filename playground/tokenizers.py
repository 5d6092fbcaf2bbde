"""/api/health and /api/tokenizers: what the server offers, and the trained tokenizers it stores.

A trained tokenizer is the pair DATA_DIR/NAME.tiktoken + DATA_DIR/NAME.json, listed only when
both are regular files (never symlinks) and the .json parses; its metadata is cached by the
files' mtime and sizes, so listing a folder of large tokenizers does not re-read them.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, send_file

import tokenizer
from tokenizer import formats
from tokenizer.encodings import ENCODING_PATTERN_NAMES, list_encodings
from tokenizer.train import MIN_VOCAB, TIE_BREAKS

from .errors import ApiError
from .forms import KNOWN_PATTERNS, NAME_RE, PATTERN_CHOICES
from .jobs_api import job_manager
from .security import inside

META_CACHE = "bpe_meta_cache"  # app.extensions key: name -> ((mtime_ns, size, tiktoken size), entry)
DOWNLOAD_SUFFIXES = (".json", ".tiktoken")

log = logging.getLogger("bpe-playground")
bp = Blueprint("tokenizers", __name__, url_prefix="/api")


@bp.get("/health")
def health() -> Response:
    cfg = current_app.config
    return jsonify(
        status="ok",
        version=tokenizer.__version__,
        trainer=True,  # tokenizer.train imported above
        patterns=list(KNOWN_PATTERNS),
        pattern_choices=list(PATTERN_CHOICES),
        tie_breaks=list(TIE_BREAKS),
        limits={
            "max_upload_bytes": cfg["MAX_UPLOAD_BYTES"],
            "max_text_bytes": cfg["MAX_TEXT_BYTES"],
            "min_vocab": MIN_VOCAB,
            "max_vocab": cfg["MAX_VOCAB"],
            "max_files": cfg["MAX_FILES"],
            "max_special_tokens": cfg["MAX_SPECIAL_TOKENS"],
            "max_queued_jobs": cfg["MAX_QUEUED_JOBS"],
            "max_running_jobs": cfg["MAX_RUNNING_JOBS"],
        },
    )


@bp.get("/tokenizers")
def tokenizers_list() -> Response:
    trained = [e for e in (_trained_entry(n) for n in _trained_names()) if e is not None]
    return jsonify(reference=[_reference_entry(n) for n in list_encodings()], trained=trained)


@bp.get("/tokenizers/<path:filename>")
def tokenizer_get(filename: str) -> Response:
    """NAME: its entry (reference or trained); NAME.json / NAME.tiktoken: download a trained one."""
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
    if _trained_entry(name) is None or not inside(path, data):
        raise ApiError(404, f"no trained tokenizer named {name!r}")
    mimetype = "application/json" if suffix == ".json" else "text/plain"
    return send_file(path, mimetype=mimetype, as_attachment=True, download_name=path.name, max_age=0)


@bp.delete("/tokenizers/<path:filename>")
def tokenizer_delete(filename: str) -> Response:
    name = _safe_name_or_404(filename)
    if name in list_encodings():
        raise ApiError(400, f"{name!r} is a reference encoding; only trained tokenizers can be deleted")
    data = _data_dir()
    with job_manager().lock:  # no job installs a tokenizer of this name meanwhile
        if _trained_entry(name) is None:
            raise ApiError(404, f"no trained tokenizer named {name!r}")
        # The .json goes first: without it the pair is no longer listed, so a crash between
        # the two unlinks never leaves a half tokenizer visible.
        for suffix in (".json", ".tiktoken"):
            with contextlib.suppress(FileNotFoundError):
                (data / f"{name}{suffix}").unlink()
    current_app.extensions[META_CACHE].pop(name, None)
    return jsonify(deleted=name)


def _data_dir() -> Path:
    return current_app.config["DATA_DIR"]


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
    cache: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = current_app.extensions[META_CACHE]
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


def _split_download(filename: str) -> tuple[str, str | None]:
    for suffix in DOWNLOAD_SUFFIXES:
        if filename.endswith(suffix):
            return filename[: -len(suffix)], suffix
    return filename, None


def _safe_name_or_404(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise ApiError(404, f"no tokenizer named {name[:80]!r}")
    return name

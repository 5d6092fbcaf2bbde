"""/api/health and /api/tokenizers: what the server offers, and the trained tokenizers it stores.

A trained tokenizer is the pair DATA_DIR/NAME.tiktoken + DATA_DIR/NAME.json, listed as
trained only when both are regular files (never symlinks) and the library's validated loader
(`Tokenizer.load`, as the page and the CLI) loads them; the entry is cached by the files' mtime
and sizes, so listing a folder of large tokenizers does not re-read them. An extended tokenizer's entry carries "extension": its base, first new id and the
corpus's tokens before and after (metadata["extension"] without the per-merge lists, which
the .json download has); a trained one's metadata["statistics"] leaves out its per-merge
counts the same way.

Anything else under a tokenizer's name (a .json without its .tiktoken or the reverse, after a
crash or a half copy; a file cut short or damaged, with the loader's message; a symlink; a
pair named like a reference encoding, whose name means the encoding everywhere else) is
listed under "broken" with the reason, and DELETE removes it: the name is free again. Broken entries are listed rather
than cleaned at start-up because they may be the user's own files, half copied in by hand.
The folder is read under the job manager's lock, so a job installing its pair (two renames)
is never seen half done; the loading itself is done before, without the lock (see
tokenizers_list).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, send_file

import tokenizer
from tokenizer import formats
from tokenizer.core import Tokenizer
from tokenizer.encodings import ENCODING_PATTERN_NAMES, list_encodings
from tokenizer.regex_check import MAX_REGEX_CHARS
from tokenizer.train import TIE_BREAKS

from .config import MIN_TRAIN_VOCAB
from .errors import ApiError
from .forms import KNOWN_PATTERNS, NAME_RE, PATTERN_CHOICES
from .job_process import extension_summary, statistics_summary
from .jobs_api import job_manager
from .security import inside

# app.extensions key: name -> ((both files' mtime_ns and size), entry or None, reason or None)
META_CACHE = "bpe_meta_cache"
LOAD_LOCK = "bpe_meta_load_lock"  # app.extensions key: a threading.Lock, one listing loads at a time
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
            "min_vocab": MIN_TRAIN_VOCAB,
            "max_vocab": cfg["MAX_VOCAB"],
            "max_files": cfg["MAX_FILES"],
            "max_special_tokens": cfg["MAX_SPECIAL_TOKENS"],
            "max_queued_jobs": cfg["MAX_QUEUED_JOBS"],
            "max_running_jobs": cfg["MAX_RUNNING_JOBS"],
            "max_field_bytes": cfg["MAX_FIELD_BYTES"],
            "max_regex_chars": MAX_REGEX_CHARS,
            "job_time_limit": cfg["JOB_TIME_LIMIT"],
        },
    )


@bp.get("/tokenizers")
def tokenizers_list() -> Response:
    # Loading a tokenizer not in the cache takes up to ~0.3 s (an o200k-sized one). Under the
    # job manager's lock, the first listing after a restart held job status, cancel, submit and
    # every SSE stream for seconds (9 such tokenizers: 2.7 s). So the cache is filled first,
    # under a lock of its own: concurrent listings wait for one another there (each loading
    # every tokenizer at once made ten of them take seconds of CPU), the job API does not.
    # Under the job lock the entries are then read again from the cache, which is keyed by both
    # files' mtime and size: a pair a job installed or DELETE removed meanwhile is re-read.
    with current_app.extensions[LOAD_LOCK]:
        for name in _stored_names():
            if name not in list_encodings():
                _inspect(name)
    trained, broken = [], []
    with job_manager().lock:
        for name in _stored_names():
            entry = None if name in list_encodings() else _trained_entry(name)
            if entry is not None:
                trained.append(entry)
            else:
                broken.append({"name": name, "kind": "broken", "reason": _broken_reason(name)})
    return jsonify(reference=[_reference_entry(n) for n in list_encodings()], trained=trained, broken=broken)


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
            raise ApiError(404, _not_found(name))
        return jsonify(entry)
    if name in list_encodings():
        raise ApiError(
            404, f"{name!r} is a reference encoding: it ships with the page, not as a download here"
        )
    data = _data_dir()
    path = data / f"{name}{suffix}"
    mimetype = "application/json" if suffix == ".json" else "text/plain"
    # The check and send_file's open under the lock DELETE and a job's install take: a DELETE
    # between the two made send_file's os.stat fail, a 500. Once open, the file is ours to send.
    with job_manager().lock:
        if _trained_entry(name) is None or not inside(path, data):
            raise ApiError(404, f"no trained tokenizer named {name!r}")
        return send_file(path, mimetype=mimetype, as_attachment=True, download_name=path.name, max_age=0)


@bp.delete("/tokenizers/<path:filename>")
def tokenizer_delete(filename: str) -> Response:
    name = _safe_name_or_404(filename)
    data = _data_dir()
    with job_manager().lock:  # no job installs a tokenizer of this name meanwhile
        stored = name in _stored_names()
        if name in list_encodings() and not stored:
            raise ApiError(400, f"{name!r} is a reference encoding; only trained tokenizers can be deleted")
        if not stored:
            raise ApiError(404, f"no trained tokenizer named {name!r}")
        paths = [data / f"{name}{suffix}" for suffix in (".json", ".tiktoken")]
        for path in paths:
            if path.is_dir() and not path.is_symlink():
                raise ApiError(
                    409, f"{path.name} is a folder; the server deletes only files: remove it by hand"
                )
        # The .json goes first: without it the pair is no longer listed as trained, so a crash
        # between the two unlinks leaves a broken entry, which a new DELETE removes.
        for path in paths:
            try:
                path.unlink()  # a symlink itself, never what it points to
            except FileNotFoundError:
                pass
            except OSError as e:  # a data folder the server may not write (files made by another user)
                raise ApiError(
                    503,
                    f"could not delete {path.name}: {e.strerror}; the server may not change its data "
                    "folder: remove the file by hand (GET /api/tokenizers shows what is left)",
                ) from None
    current_app.extensions[META_CACHE].pop(name, None)
    return jsonify(deleted=name)


def _data_dir() -> Path:
    return current_app.config["DATA_DIR"]


def _trained_entry(name: str) -> dict[str, Any] | None:
    """Metadata of a trained tokenizer (None: not one; `_broken_reason` says why)."""
    return _inspect(name)[0]


def _inspect(name: str) -> tuple[dict[str, Any] | None, str | None]:
    """(entry, None) for a pair the library loads; (None, the loader's reason) for one it
    refuses; (None, None) when the pair is not two regular files (`_broken_reason` says why).

    The pair is loaded with `Tokenizer.load`, the validated reader the page and the CLI use:
    a .tiktoken cut short or a .json with wrong fields was listed as trained (with whatever
    "vocab_size" it said) and failed only when the page or an extension loaded it. Cached by
    both files' mtime and size, so the folder is read once per change."""
    data = _data_dir()
    json_path, tt_path = data / f"{name}.json", data / f"{name}.tiktoken"
    # Only regular files we wrote: a symlink in the data folder could point anywhere.
    if json_path.is_symlink() or tt_path.is_symlink():
        return None, None
    try:
        st, tt_st = json_path.stat(), tt_path.stat()
    except FileNotFoundError:
        return None, None
    if not (stat.S_ISREG(st.st_mode) and stat.S_ISREG(tt_st.st_mode)):
        return None, None  # a FIFO named NAME.tiktoken was listed, and its download waited for ever
    cache: dict[str, tuple[tuple[int, ...], dict[str, Any] | None, str | None]]
    cache = current_app.extensions[META_CACHE]
    key = (st.st_mtime_ns, st.st_size, tt_st.st_mtime_ns, tt_st.st_size)
    hit = cache.get(name)
    if hit and hit[0] == key:
        return hit[1], hit[2]
    try:
        tok = Tokenizer.load(data / name)
        meta = formats.read_json(json_path)
    except (ValueError, OSError, RecursionError) as e:  # TokenizerFileError is a ValueError
        reason = str(e).replace(f"{data}{os.sep}", "")
        log.warning("broken tokenizer %s: %s", name, reason)
        cache[name] = (key, None, reason)
        return None, reason
    entry = _entry(name, tok, meta, st.st_mtime, {"json": st.st_size, "tiktoken": tt_st.st_size})
    cache[name] = (key, entry, None)
    return entry, None


def _entry(name: str, tok: Tokenizer, meta: dict[str, Any], created: float, sizes: dict) -> dict[str, Any]:
    """A trained tokenizer's entry in the listing: the loaded tokenizer's sizes, the .json's words."""
    metadata = tok.metadata
    extension = metadata.get("extension")
    if isinstance(extension, dict):  # an extended tokenizer: its base and what it bought
        extension = extension_summary(extension)
        metadata = {**metadata, "extension": extension}
    statistics = metadata.get("statistics")
    if isinstance(statistics, dict):  # the counts of every merge stay in the .json
        metadata = {**metadata, "statistics": statistics_summary(statistics)}
    return {
        "name": name,
        "kind": "trained",
        "vocab_size": tok.n_vocab,
        "merges": len(tok.merges) if tok.merges is not None else None,
        "pattern": meta.get("pattern"),
        "pattern_regex": meta.get("pattern_regex"),
        "special_tokens": tok.special_tokens,
        "metadata": metadata,
        "extension": extension if isinstance(extension, dict) else None,
        "created": created,
        "bytes": sizes,
        "files": {
            "json": f"/api/tokenizers/{name}.json",
            "tiktoken": f"/api/tokenizers/{name}.tiktoken",
        },
    }


def _stored_names() -> list[str]:
    """Every tokenizer name with a .json or a .tiktoken in the data folder, whole or not."""
    data = _data_dir()
    names = {p.name.rsplit(".", 1)[0] for pattern in ("*.json", "*.tiktoken") for p in data.glob(pattern)}
    return sorted((n for n in names if NAME_RE.fullmatch(n)), key=str.lower)


def _broken_reason(name: str) -> str:
    """Why a stored name is not a trained tokenizer, and what to do about it."""
    data = _data_dir()
    json_path, tt_path = data / f"{name}.json", data / f"{name}.tiktoken"
    fix = f"delete it (DELETE /api/tokenizers/{name}) or put the missing file back"
    if name in list_encodings():  # put there by hand, or trained before the encoding shipped
        return (
            f"{name!r} is the name of a reference encoding, which is what the page and the API mean "
            f"by it; rename the two files by hand (e.g. {name}-trained.json and .tiktoken) to use "
            f"them, or delete them (DELETE /api/tokenizers/{name}: the reference stays)"
        )
    for path in (json_path, tt_path):
        if path.is_symlink():
            return f"{path.name} is a symbolic link; the server serves only files it wrote. Delete it"
        if path.exists() and not path.is_file():
            return f"{path.name} is not a regular file; remove it by hand"
    if not tt_path.exists():
        return f"{json_path.name} has no {tt_path.name} beside it (a crash or a half copy?): {fix}"
    if not json_path.exists():
        return f"{tt_path.name} has no {json_path.name} beside it (a crash or a half copy?): {fix}"
    reason = _inspect(name)[1] or "not a tokenizer the library loads"
    return f"the library cannot load it: {reason}; delete it (DELETE /api/tokenizers/{name}) or put back a good copy"


def _not_found(name: str) -> str:
    if name in _stored_names():
        return f"tokenizer {name!r} is broken: {_broken_reason(name)}"
    return f"no tokenizer named {name!r}"


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

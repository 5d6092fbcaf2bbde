"""The training job's own process: train (or extend), save into the job's temp folder, report.

JobManager spawns `run_job(conn, spec)` (a fresh interpreter, not a fork of a threaded
server). The child makes itself a process-group leader, so cancelling the job kills any
counting pool the trainer starts too, and it exits on its own if the server dies without
cancelling it. Everything it says goes through `conn` as `(kind, payload)` tuples:
("warning", message) for a custom regex that drops text of the corpus (measured on its first
part: tokenizer.regex_check), a training that stopped short of vocab_size or an extension that
stopped before `add` merges, ("progress",
{...}) many times (phases "count", "merge", and "encode" between them for an extension), then
("done", result) or ("error", message).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tokenizer.core import Tokenizer
from tokenizer.encodings import ENCODING_PATTERN_NAMES, get_encoding
from tokenizer.extend import extend
from tokenizer.progress import Progress
from tokenizer.regex_check import MAX_SAMPLE_CHARS, check_split_regex
from tokenizer.train import train

CUSTOM_LABEL = "custom"  # the pattern_label of a job whose "pattern" is the user's own regex
PROGRESS_INTERVAL = 0.1  # seconds between progress messages of one phase (the last always goes)
PARENT_CHECK_INTERVAL = 1.0  # seconds between checks that the server is still there
Warn = Callable[[str], None]  # sends one warning to the server (the job's `warnings`)
EXTENSION_LISTS = ("merges", "counts")  # metadata["extension"]'s per-merge lists: up to 65,536 each
STATISTICS_LISTS = ("merge_counts",)  # metadata["statistics"]'s per-merge list (train's): one count per merge


def run_job(conn: Connection, spec: dict[str, Any]) -> None:
    """Runs in the spawned child: train, save into the job's temp folder, report."""
    if hasattr(os, "setpgrp"):
        os.setpgrp()  # cancel kills the whole group, including any counting pool
    _exit_with_parent(int(spec["parent_pid"]))
    paths = [path for path, _ in spec["corpus"]]

    def clean(message: str) -> str:
        """Error messages name the user's files, not our temp paths."""
        for path, label in spec["corpus"]:
            message = message.replace(path, label)
        if spec.get("base_stem"):
            message = message.replace(spec["base_stem"], spec["base"])
        return message.replace(spec["out_dir"], "the output folder")

    last_sent = [0.0, None]

    def progress(
        phase: str, done: int, total: int | None, rate: float | None = None, eta: float | None = None
    ):
        now = time.monotonic()
        if phase == last_sent[1] and now - last_sent[0] < PROGRESS_INTERVAL and not (total and done >= total):
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
        started = time.time()
        make = _extend if spec.get("base") else _train
        tok, result = make(spec, [Path(p) for p in paths], progress, lambda w: conn.send(("warning", w)))
        tok.name = spec["name"]
        tok.metadata.setdefault("corpus_files", [label for _, label in spec["corpus"]])
        tok.metadata.setdefault("trained_by", "server.py")
        tok.save(Path(spec["out_dir"]) / spec["name"])
        result.update(vocab_size=tok.n_vocab, seconds=round(time.time() - started, 3))
        conn.send(("done", result))
    except BaseException as e:  # noqa: BLE001 - everything must reach the parent as text
        message = clean(f"{e}") if isinstance(e, ValueError) else clean(f"{type(e).__name__}: {e}")
        with contextlib.suppress(Exception):
            conn.send(("error", message))
    finally:
        conn.close()


def _train(spec: dict[str, Any], paths: list[Path], progress: Progress, warn: Warn) -> tuple[Tokenizer, dict]:
    # A custom regex goes to train() as regex=: as pattern= a bare word such as 'ab' is read as
    # a pattern name, and the job failed with "unknown pattern name 'ab'" after its 202.
    custom = spec["pattern_label"] == CUSTOM_LABEL
    if custom:
        for warning in check_split_regex(spec["pattern"], sample=_sample(paths[0])):
            warn(warning)
    tok = train(
        paths,
        spec["vocab_size"],
        pattern=None if custom else spec["pattern"],
        regex=spec["pattern"] if custom else None,
        special_tokens=spec["special_tokens"] or None,
        tie_break=spec["tie_break"],
        min_frequency=spec["min_frequency"],
        workers=spec["workers"],
        progress=progress,
    )
    tok.metadata.setdefault("pattern_label", spec["pattern_label"])
    if tok.metadata.get("stopped_early"):  # the CLI says so too; the page showed only "N merges"
        merges = len(tok.merges or ())
        warn(
            f"stopped after {merges:,} of {spec['vocab_size'] - 256:,} merges (vocab_size "
            f"{256 + merges:,} of {spec['vocab_size']:,}): {tok.metadata['stop_reason']}; train on "
            "more text (or a lower min_frequency) to get more"
        )
    return tok, {"merges": len(tok.merges) if tok.merges is not None else None}


def _extend(
    spec: dict[str, Any], paths: list[Path], progress: Progress, warn: Warn
) -> tuple[Tokenizer, dict]:
    """tokenizer.extend of the base: a reference encoding by name, or the file(s) the view put
    into the job's folder (`base_stem`): the copy of a trained tokenizer, or the upload of one
    the user loaded into the page (`base_files`: its file names, kept in the metadata)."""
    stem = spec.get("base_stem")
    base = Tokenizer.load(stem) if stem else get_encoding(spec["base"])
    base.name = spec["base"]
    tok = extend(
        base,
        paths,
        spec["add"],
        tie_break=spec["tie_break"],
        min_frequency=spec["min_frequency"],
        workers=spec["workers"],
        progress=progress,
    )
    if spec.get("base_files"):
        tok.metadata["extension"]["base_files"] = spec["base_files"]
    if tok.metadata.get("stopped_early"):
        added = tok.metadata["extension"]["added"]
        warn(f"stopped after {added} of {spec['add']} new merges: {tok.metadata['stop_reason']}")
    label = base.metadata.get("pattern_label") if stem else ENCODING_PATTERN_NAMES.get(spec["base"])
    tok.metadata.setdefault("pattern_label", label or base.pattern)
    ext = extension_summary(tok.metadata["extension"])
    return tok, {"merges": len(tok.merges) if tok.merges is not None else None, "extension": ext}


def extension_summary(extension: dict[str, Any]) -> dict[str, Any]:
    """metadata["extension"] without its per-merge lists: what a job or a listing shows."""
    return {k: v for k, v in extension.items() if k not in EXTENSION_LISTS}


def statistics_summary(statistics: dict[str, Any]) -> dict[str, Any]:
    """metadata["statistics"] without train()'s per-merge list: what a listing shows."""
    return {k: v for k, v in statistics.items() if k not in STATISTICS_LISTS}


def _sample(path: str) -> str:
    """The start of a corpus file (already checked to be UTF-8; a character cut at the end is dropped)."""
    with open(path, "rb") as f:
        return f.read(MAX_SAMPLE_CHARS).decode("utf-8", "ignore")


def _finite(x: float | None) -> float | None:
    """A rate or ETA as JSON can carry it: rounded, and None for inf/NaN or junk."""
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
            time.sleep(PARENT_CHECK_INTERVAL)
            if os.getppid() != parent_pid:
                if hasattr(os, "killpg"):
                    os.killpg(os.getpgrp(), signal.SIGKILL)
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()

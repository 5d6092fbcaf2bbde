"""/api/jobs: the jobs of this server run, one job's state, its live event stream, cancel.

The event stream (Server-Sent Events) sends one `data:` JSON snapshot per change of the job,
named `progress` while it is queued or running and by its final state at the end, then
closes; a reconnect that already holds the final event (`Last-Event-ID`) gets 204, which stops
a browser's EventSource from reconnecting. A comment line every 15 s keeps proxies and browsers from timing the stream out.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, jsonify, request

from .jobs import FINAL_STATES, JobManager

JOBS = "bpe_jobs"  # app.extensions key of the app's JobManager
SSE_RETRY_MS = 1000  # milliseconds the browser waits before reconnecting a dropped stream
KEEP_ALIVE = 15.0  # seconds of silence before a keep-alive comment
POLL = 5.0  # seconds to wait for a change before checking the keep-alive clock

bp = Blueprint("jobs", __name__, url_prefix="/api/jobs")


def job_manager() -> JobManager:
    return current_app.extensions[JOBS]


@bp.get("")
def jobs_list() -> Response:
    return jsonify(jobs=job_manager().snapshots())


@bp.get("/<job_id>")
def job_get(job_id: str) -> Response:
    jobs = job_manager()
    return jsonify(jobs.snapshot(jobs.get(job_id)))


@bp.delete("/<job_id>")
def job_cancel(job_id: str) -> Response:
    jobs = job_manager()
    job = jobs.get(job_id)
    jobs.cancel(job)
    return jsonify(jobs.snapshot(job))


@bp.get("/<job_id>/events")
def job_events(job_id: str) -> Response:
    """Server-Sent Events: one `data:` JSON snapshot per change, then the final one, then close."""
    jobs = job_manager()
    job = jobs.get(job_id)
    if _has_final_event(jobs.snapshot(job), request.headers.get("Last-Event-ID")):
        # A reconnect after the final event: EventSource reconnects whenever a stream closes,
        # so answering the same final event again kept a plain client asking every second;
        # 204 tells it the stream is over (the HTML spec's way to stop reconnecting).
        return Response(status=204)

    def stream() -> Iterator[str]:
        yield f"retry: {SSE_RETRY_MS}\n\n"
        seen = -1
        last_sent = time.monotonic()
        while True:
            snap = jobs.snapshot(job)
            if snap["version"] != seen:
                seen = snap["version"]
                last_sent = time.monotonic()
                event = snap["state"] if snap["state"] in FINAL_STATES else "progress"
                yield f"id: {seen}\nevent: {event}\n"
                yield f"data: {json.dumps(snap)}\n\n"
                if snap["state"] in FINAL_STATES:
                    return
            elif time.monotonic() - last_sent > KEEP_ALIVE:
                last_sent = time.monotonic()
                yield ": keep-alive\n\n"
            jobs.wait_for_change(job, seen, POLL)

    response = Response(stream(), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _has_final_event(snap: dict, last_event_id: str | None) -> bool:
    """Whether the client already holds the final event: the job is over and the id it last
    received (each event's id is the snapshot's version) is that version or later."""
    if snap["state"] not in FINAL_STATES or last_event_id is None or not last_event_id.isdecimal():
        return False
    return len(last_event_id) <= 20 and int(last_event_id) >= snap["version"]

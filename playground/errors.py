"""Every error the API answers is JSON: `{"error": "what is wrong and how to fix it"}`.

Views raise `ApiError(status, message)` for a client mistake; the job manager raises its own
exceptions (it knows nothing of HTTP) and `JOB_ERROR_STATUS` gives each its status code here,
in the one place that maps Python errors to HTTP.
"""

from __future__ import annotations

from flask import Blueprint, Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException, InternalServerError, RequestEntityTooLarge

from .jobs import AlreadyFinished, JobError, JobNotFound, NameTaken, QueueFull

JOB_ERROR_STATUS: dict[type[JobError], int] = {
    QueueFull: 429,  # Too Many Requests: try again when a job has finished
    JobNotFound: 404,
    NameTaken: 409,  # Conflict: the name belongs to a file, an encoding or a running job
    AlreadyFinished: 409,  # Conflict: nothing left to cancel
}

# The last resort for an exception no view expected: every input that can reach one is meant
# to be refused with a 4xx at its cause (tests/test_api_hostile.py); this answer is for bugs.
INTERNAL_ERROR = "internal error: the server logged it; please report it with the request that caused it"

bp = Blueprint("errors", __name__)


class ApiError(Exception):
    """A client mistake: becomes `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_response(status: int, message: str) -> Response:
    response = jsonify(error=message)
    response.status_code = status
    return response


API_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")  # what the catch-all below answers


@bp.route("/api", defaults={"rest": ""}, methods=list(API_METHODS))  # was the page's HTML 404/405
@bp.route("/api/<path:rest>", methods=list(API_METHODS))
def api_not_found(rest: str) -> Response:
    """At /api and below an unknown path is a JSON 404, never the page's HTML; a known path asked
    with another method is a 405 naming the methods it takes (this route caught those too,
    and said "no such API endpoint" of GET /api/train)."""
    allowed = _methods_of(request.path)
    if allowed:
        response = error_response(
            405, f"{request.method} is not allowed on {request.path[:100]}: it takes {', '.join(allowed)}"
        )
        response.headers["Allow"] = ", ".join(allowed)
        return response
    raise ApiError(404, _no_endpoint(request.path))


def _no_endpoint(path: str) -> str:
    return f"no such API endpoint: {path[:100]} (GET /api/health lists what the server offers)"


def _methods_of(path: str) -> list[str]:
    """The methods another route than the catch-alls answers at `path`."""
    adapter = current_app.url_map.bind_to_environ(request.environ)
    allowed = []
    for method in API_METHODS:
        try:
            endpoint, _ = adapter.match(path, method=method)
        except HTTPException:
            continue
        if endpoint not in (f"{bp.name}.api_not_found", "page.static_file"):
            allowed.append(method)
    return allowed


def answer_options() -> Response | None:
    """OPTIONS at /api: 204 with the methods the path takes, or the JSON 404 of an unknown path.
    Flask's automatic answer was 200 at every path (the catch-all matches them all), with an
    Allow header naming the catch-all's methods. Runs after security's Host and Origin checks."""
    if request.method != "OPTIONS" or not (request.path == "/api" or request.path.startswith("/api/")):
        return None
    allowed = _methods_of(request.path)
    if not allowed:
        return error_response(404, _no_endpoint(request.path))
    response = Response(status=204)
    response.headers["Allow"] = ", ".join([*allowed, *(["HEAD"] if "GET" in allowed else []), "OPTIONS"])
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(ApiError, lambda e: error_response(e.status, e.message))
    app.before_request(answer_options)
    app.register_error_handler(JobError, lambda e: error_response(JOB_ERROR_STATUS[type(e)], str(e)))
    app.register_error_handler(HTTPException, _http_error)
    app.register_blueprint(bp)


def _http_error(e: HTTPException) -> Response:
    if isinstance(e, RequestEntityTooLarge):
        limit = current_app.config["MAX_UPLOAD_BYTES"]
        text_limit = current_app.config["MAX_TEXT_BYTES"]
        return error_response(
            413,
            f"upload too large: the limit is {human_size(limit)} per request "
            f"({human_size(text_limit)} for the text field; send bigger text as a file)",
        )
    if request.path == "/api" or request.path.startswith("/api/"):
        if isinstance(e, InternalServerError):  # a bug: Flask has logged its traceback
            return error_response(500, INTERNAL_ERROR)
        return error_response(e.code or 500, e.description or e.name)
    return e.get_response()  # type: ignore[return-value]


def human_size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:g} {unit}" if unit == "bytes" else f"{n:.4g} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)

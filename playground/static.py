"""The page: files of the built folder (WEB_DIR, made by build_wasm.py), and nothing else.

Before `make build` there is no page; `/` then answers 503 with a short page that says how
to build it (templates/not_built.html), while the API already works.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from flask import Blueprint, Response, current_app, render_template, send_from_directory
from werkzeug.exceptions import NotFound

from .config import ROOT
from .security import inside

# .wasm must be application/wasm for WebAssembly.instantiateStreaming; .mjs is JavaScript.
mimetypes.add_type("application/wasm", ".wasm")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("text/javascript", ".js")

# Served with Cache-Control: no-cache (revalidated on every load): they name every other file,
# so a stale copy would load an old build. The other files are revalidated too (max_age=0).
ENTRY_FILES = ("index.html", "manifest.json")

bp = Blueprint("page", __name__)


@bp.route("/", defaults={"path": "index.html"})
@bp.route("/<path:path>")
def static_file(path: str) -> Response:
    web_dir: Path = current_app.config["WEB_DIR"]
    if not (web_dir / "index.html").is_file():
        if path == "index.html":
            html = render_template("not_built.html", web_dir=_display_path(web_dir))
            return Response(html, status=503, mimetype="text/html")
        raise NotFound("the page has not been built (run `make build`)")
    # send_from_directory refuses '..', absolute paths and drive letters (safe_join);
    # symlinks are resolved here so that none can lead out of the build folder.
    if not inside(web_dir / path, web_dir):
        raise NotFound()
    response = send_from_directory(web_dir, path, max_age=0)
    if path in ENTRY_FILES:
        response.headers["Cache-Control"] = "no-cache"
    return response


def _display_path(path: Path) -> str:
    """The folder relative to the repository, or just its name (no home paths on the page)."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return path.name

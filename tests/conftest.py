"""Shared test set-up. Paths and helpers live in tests/helpers.py (import them from there);
the browser fixtures live in tests/browser/conftest.py, so unit runs never build web/dist.
The server's fixtures are here (its helpers in tests/server_helpers.py), and the HF oracles'
fixtures of the tokenizer.json importer's tests (theirs in tests/hf_oracles.py)."""

from __future__ import annotations

import sys

import pytest

from tests.helpers import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# ----- the server (playground/): its app, test client and a live socket -------------------


@pytest.fixture
def server_dirs(tmp_path):
    """(web, data): a small built page with escaping symlinks, and an empty data folder."""
    from tests.server_helpers import build_web_dir

    return build_web_dir(tmp_path), tmp_path / "data"


@pytest.fixture
def app(server_dirs):
    """The app on those folders, with small upload limits (64 KB a request, 8 KB of text)."""
    from playground import create_app

    web, data = server_dirs
    app = create_app(
        {"WEB_DIR": web, "DATA_DIR": data, "MAX_UPLOAD_BYTES": 64 * 1024, "MAX_TEXT_BYTES": 8 * 1024}
    )
    yield app
    app.extensions["bpe_jobs"].shutdown()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def full_app(server_dirs):
    """The app with the real (default) limits: 16 MB of text, 1 MB per other field.
    No job ever starts (MAX_RUNNING_JOBS=0): a request that passes every check is queued, 202."""
    import threading

    from playground import create_app

    web, data = server_dirs
    threads = threading.active_count()
    app = create_app({"WEB_DIR": web, "DATA_DIR": data, "MAX_RUNNING_JOBS": 0, "MAX_QUEUED_JOBS": 10_000})
    yield app
    app.extensions["bpe_jobs"].shutdown()
    assert threading.active_count() == threads  # no request left a thread behind


@pytest.fixture
def full(full_app):
    """A test client of full_app (the hostile-request tests, test_api_hostile*.py)."""
    return full_app.test_client()


@pytest.fixture
def live(app):
    """The same app on a real socket: '127.0.0.1:PORT'."""
    from tests.server_helpers import serving

    with serving(app) as hostport:
        yield hostport


# ----- HF tokenizers trained per byte-level shape (tests/hf_oracles.py) --------------------
# For the test_hf_import*.py files. Module-scoped, as they were in the one file they came from:
# each module gets its own (a test may change a reference, as the Llama 3 post-processor test does).


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    from tests.hf_oracles import shape_texts

    return shape_texts()


@pytest.fixture(scope="module")
def trained(texts, tmp_path_factory) -> dict[str, tuple[object, object]]:
    """shape -> (HF's tokenizer, ours loaded from the tokenizer.json HF saved), built once a module."""
    from tests.hf_oracles import trained_shapes

    return trained_shapes(texts, tmp_path_factory.mktemp)


# ----- the worker's Python side (tokenizer.web.bridge): test_bridge*.py ---------------------


@pytest.fixture(scope="module")
def reference_encodings() -> None:
    """The reference encodings loaded into the bridge, as the page's worker loads them (once a
    module: the bridge keeps them in its own table for the rest of the process)."""
    import json

    from tests.helpers import BRIDGE_ENCODINGS, JsUint8Array
    from tokenizer import get_encoding
    from tokenizer.encodings import build_blobs
    from tokenizer.web import bridge

    blobs = build_blobs()
    for name in BRIDGE_ENCODINGS:
        info = json.loads(bridge.load_blob(name, JsUint8Array(blobs[name].read_bytes())))
        assert info["name"] == name and info["n_ranks"] == len(get_encoding(name).mergeable_ranks)

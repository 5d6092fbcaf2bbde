"""A pytest plugin for running tiktoken's suite against tokenizer.compat (`-p tiktoken_suite_guard`).

It makes the run prove what it claims: `tiktoken` must be the shim (not the real package, or the
suite would pass trivially), and any attempt to open a network connection fails the test that
makes it (nothing may be fetched at test time; the encodings come from our shipped ranks).
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

SHIM = Path(__file__).resolve().parent


class NetworkAccessError(RuntimeError):
    pass


def _refuse(*args, **kwargs):
    raise NetworkAccessError(f"network access during tiktoken's suite: {args!r}")


def pytest_configure(config: pytest.Config) -> None:
    import tiktoken

    import tokenizer.compat

    if Path(tiktoken.__file__).resolve().parent.parent != SHIM:
        raise pytest.UsageError(f"`import tiktoken` gave {tiktoken.__file__}, not the shim in {SHIM}")
    if tiktoken.get_encoding is not tokenizer.compat.get_encoding:
        raise pytest.UsageError("the tiktoken shim does not re-export tokenizer.compat")
    socket.socket.connect = _refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = _refuse  # type: ignore[method-assign]
    socket.create_connection = _refuse  # type: ignore[assignment]
    socket.getaddrinfo = _refuse  # type: ignore[assignment]

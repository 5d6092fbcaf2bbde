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
    _library_counts_as_installed()
    socket.socket.connect = _refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = _refuse  # type: ignore[method-assign]
    socket.create_connection = _refuse  # type: ignore[assignment]
    socket.getaddrinfo = _refuse  # type: ignore[assignment]


def _library_counts_as_installed() -> None:
    """Hypothesis draws string constants for st.text() from the source of "local" modules, those
    not installed in site-packages. Real tiktoken is installed, so its suite's hypothesis tests
    never meet its literals; our library is local, and test_hyp_roundtrip drew its
    '<|endoftext|>', which real tiktoken refuses to encode just as we do (a disallowed special
    token). So here the library (and this shim) count as installed code, as tiktoken does.
    (hypothesis.internal is private: where it has no such hook, nothing is changed.)"""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    is_local = getattr(providers, "is_local_module_file", None)
    if is_local is None:
        return
    ours = (str(SHIM.parents[2] / "tokenizer"), str(SHIM))

    def local_but_not_ours(path: str) -> bool:
        return is_local(path) and not str(Path(path).resolve()).startswith(ours)

    providers.is_local_module_file = local_but_not_ours

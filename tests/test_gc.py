"""paused_gc: the collector is paused inside, and afterwards is as the caller had it."""

from __future__ import annotations

import gc

import pytest

from tokenizer import get_encoding
from tokenizer._gc import paused_gc


@pytest.fixture
def gc_state():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_paused_inside_and_enabled_again_after_even_on_error(gc_state):
    gc.enable()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc():
        raise KeyError("x")
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled(gc_state):
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()
    get_encoding("gpt2").encode_ordinary("hello world " * 2000)  # a long encode pauses it too
    assert not gc.isenabled()


def test_a_long_encode_leaves_the_collector_on(gc_state):
    gc.enable()
    enc = get_encoding("gpt2")
    assert enc.encode_ordinary("hello world " * 2000) == [31373, 995] + [23748, 995] * 1999 + [220]
    assert gc.isenabled()

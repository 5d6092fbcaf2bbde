"""`model.dropout` as `tokenizers` reads it: an f32, where a merge is skipped when a random f32 in
[0, 1) is below it.

So the file's number counts as the f32 nearest it: 1e-300 and -1e-300 are 0 there (and -0.0
passes HF's range check), which HF encodes exactly as without dropout; we refused the first as
"BPE dropout skips merges" and the second as out of range. At 1 (0.99999999 too) every merge is
skipped, every time: one token per byte, deterministic, but not what our encoder does, so it
is refused saying so. Anything between is random and refused as such.
"""

from __future__ import annotations

import json

import pytest

from tokenizer.hf_export import to_hf_json
from tokenizer.loading import from_hf_json
from tokenizer.train import train
from tokenizer.validate import TokenizerFileError

hf = pytest.importorskip("tokenizers")

TEXT = "abab xy <|x|> ab"


def with_dropout(value) -> dict:
    tok = train("ab ab ab xy xy abab xyxy " * 5, 262, pattern="none", special_tokens=["<|x|>"])
    obj = to_hf_json(tok)
    obj["model"]["dropout"] = value
    return obj


def hf_runs(obj: dict) -> set[tuple[int, ...]] | None:
    """HF's ids for TEXT over 20 encodes (one tuple when deterministic), None if HF refuses."""
    try:
        reference = hf.Tokenizer.from_str(json.dumps(obj))
    except Exception:  # noqa: BLE001 - tokenizers raises its own Exception type
        return None
    return {tuple(reference.encode(TEXT, add_special_tokens=False).ids) for _ in range(20)}


@pytest.mark.parametrize("value", [None, 0, 0.0, -0.0, 1e-300, -1e-300, 1e-46, 5e-324])
def test_a_dropout_hf_reads_as_zero_loads_with_hf_s_ids(value):
    """1e-300 said "model option dropout 1e-300 is not supported: BPE dropout skips merges" and
    -1e-300 "it must be a number from 0 to 1"; HF reads both as 0 and encodes without dropout."""
    obj = with_dropout(value)
    (want,) = hf_runs(obj)
    assert from_hf_json(obj, "ok.json").encode(TEXT, allowed_special="all") == list(want)


@pytest.mark.parametrize("value", [1, 1.0, 0.99999999, 1.00000001])
def test_a_dropout_of_one_is_refused_saying_what_hf_does(value):
    obj = with_dropout(value)
    (ids,) = hf_runs(obj)  # deterministic: every merge skipped, one token per byte
    assert len(ids) == len(TEXT.replace("<|x|>", "")) + 1
    with pytest.raises(TokenizerFileError) as info:
        from_hf_json(obj, "bad.json")
    message = str(info.value)
    assert message.startswith(f"bad.json: model option dropout {value!r}")
    assert "skips every merge" in message and "set it to null" in message


@pytest.mark.parametrize("value", [0.5, 0.1, 1e-45, 0.9999])
def test_a_dropout_between_zero_and_one_is_refused_as_random(value):
    obj = with_dropout(value)
    assert hf_runs(obj) is not None  # HF loads it
    with pytest.raises(TokenizerFileError) as info:
        from_hf_json(obj, "bad.json")
    message = str(info.value)
    assert message.startswith(f"bad.json: model option dropout {value!r}")
    assert "at random" in message and "set it to null" in message


def test_dropout_is_random_in_hf_between_zero_and_one():
    assert len(hf_runs(with_dropout(0.5))) > 1


@pytest.mark.parametrize("value", [1.0000001, -1e-45, 2.0, 1e40, -1, 10**400, -(10**400)])
def test_a_dropout_hf_refuses_is_refused(value):
    obj = with_dropout(value)
    assert hf_runs(obj) is None
    with pytest.raises(TokenizerFileError, match=r"^bad.json: model.dropout is .*; it must be a number"):
        from_hf_json(obj, "bad.json")

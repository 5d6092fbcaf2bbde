"""An added token's fields in a tokenizer.json: what `tokenizers` refuses, we refuse.

`tokenizers` (0.23) reads each `added_tokens` entry with all seven fields required: one without
`single_word` (or `lstrip`, `rstrip`, `normalized`, `special`, `id`, `content`) makes it refuse
the whole file ("missing field `single_word`"). We loaded such a file with defaults, so a file
that loaded here failed in every HF program: now it is refused, naming the token and the field.
"""

from __future__ import annotations

import json

import pytest

from tokenizer.hf_export import to_hf_json
from tokenizer.loading import from_hf_json
from tokenizer.train import train
from tokenizer.validate import TokenizerFileError

hf = pytest.importorskip("tokenizers")

FULL = {
    "id": 258,
    "content": "<x>",
    "single_word": False,
    "lstrip": False,
    "rstrip": False,
    "normalized": False,
    "special": True,
}


def with_token(token: dict) -> dict:
    base = to_hf_json(train("ab ab ab xy xy", 258, pattern="none"))
    return dict(base, added_tokens=[token])


def hf_loads(obj: dict) -> bool:
    try:
        hf.Tokenizer.from_str(json.dumps(obj))
    except Exception:  # noqa: BLE001 - tokenizers raises its own Exception type
        return False
    return True


def test_the_full_form_loads_with_hf_s_ids():
    obj = with_token(FULL)
    want = hf.Tokenizer.from_str(json.dumps(obj)).encode("ab<x>xy", add_special_tokens=False).ids
    assert from_hf_json(obj, "ok.json").encode("ab<x>xy", allowed_special="all") == want


@pytest.mark.parametrize("field", ["single_word", "lstrip", "rstrip", "normalized", "special"])
def test_an_added_token_without_a_field_is_refused_as_hf_refuses_it(field):
    """{"id": 258, "content": "<x>", "special": true} loaded with single_word, lstrip, rstrip and
    normalized false; HF says "missing field `single_word`" and loads nothing."""
    token = {key: value for key, value in FULL.items() if key != field}
    obj = with_token(token)
    assert not hf_loads(obj)
    with pytest.raises(TokenizerFileError, match=r"^bad.json: added_tokens\[0\] \('<x>'\) has no ") as info:
        from_hf_json(obj, "bad.json")
    message = str(info.value)
    assert f"'{field}'" in message and "Hugging Face tokenizers refuses" in message


@pytest.mark.parametrize("field", ["id", "content"])
def test_an_added_token_without_its_id_or_content_is_refused(field):
    obj = with_token({key: value for key, value in FULL.items() if key != field})
    assert not hf_loads(obj)
    with pytest.raises(TokenizerFileError, match=r"^bad.json: added_tokens\[0\]"):
        from_hf_json(obj, "bad.json")


def test_the_message_names_every_missing_field_and_its_fix():
    obj = with_token({"id": 258, "content": "<x>", "special": True})
    with pytest.raises(TokenizerFileError) as info:
        from_hf_json(obj, "bad.json")
    message = str(info.value)
    for field in ("single_word", "lstrip", "rstrip", "normalized"):
        assert f"'{field}'" in message
    assert '"single_word": false' in message  # the fix, in the file's own syntax


def test_our_export_writes_every_field_hf_needs():
    tok = train("ab ab ab xy xy", 258, pattern="none", special_tokens=["<|endoftext|>"])
    (token,) = to_hf_json(tok)["added_tokens"]
    assert set(token) == set(FULL)

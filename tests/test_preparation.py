"""Text preparation equals HF `tokenizers`: its normalizers on every code point, its prefix space.

preparation.normalize must give what HF's NFC/NFD/NFKC/NFKD give, although HF's Unicode tables
are older than Python's: every code point is checked alone and decomposed, then random text
built around the code points HF does not know and combining marks. The prefix space is checked
through HF's own pre-tokenizer on the pieces it is given.
"""

from __future__ import annotations

import json
import time
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenizer._hf_normalization import HF_UNKNOWN
from tokenizer.hf_export import to_hf_json
from tokenizer.loading import from_hf_json
from tokenizer.preparation import (
    CHUNK,
    MAX_STEPS,
    NORMALIZATIONS,
    SEGMENT,
    Preparation,
    changed_char,
    normalize,
    parse_ranges,
    with_space,
)
from tokenizer.readers import read_texts
from tokenizer.train import train

hf = pytest.importorskip("tokenizers")
from tokenizers import normalizers  # noqa: E402

BLOCK = 4096  # code points per string compared (separated by "\n", which never composes)
_CODE_POINTS = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
_UNKNOWN = [chr(c) for a, b in parse_ranges(HF_UNKNOWN) for c in range(a, b + 1)]
_MARKS = [chr(c) for c in range(0x300, 0x370)] + ["\u0334", "\u0345", "\u05b0", "\u093c", "\u3099"]
_BASES = list("aeoAEOuUnNcCsS\u0915\u304b\u1100\u1161\u11a8\uac00 \n") + ["\u00e9", "\u212b", "\uf900"]


@pytest.fixture(scope="module", params=NORMALIZATIONS)
def form(request):
    return request.param


def test_every_code_point_alone_and_decomposed_normalizes_as_hf(form):
    theirs = getattr(normalizers, form)()
    for start in range(0, len(_CODE_POINTS), BLOCK):
        block = _CODE_POINTS[start : start + BLOCK]
        for text in ("\n".join(block), "\n".join(unicodedata.normalize("NFD", c) for c in block)):
            assert normalize(form, text) == theirs.normalize_str(text), (form, hex(ord(block[0])))


def test_every_unknown_code_point_after_bases_and_marks_normalizes_as_hf(form):
    theirs = getattr(normalizers, form)()
    for c in _UNKNOWN:
        for text in ("a" + c + "\u0301", "\u0301" + c, "e\u0301" + c + c + "\u0327", c + "\u0334\u0345"):
            assert normalize(form, text) == theirs.normalize_str(text), (form, hex(ord(c)))


@settings(max_examples=400, deadline=None)
@given(
    text=st.lists(st.sampled_from(_UNKNOWN[:40] + _UNKNOWN[-40:] + _MARKS + _BASES), max_size=30).map("".join)
)
def test_random_text_of_marks_and_unknown_code_points_normalizes_as_hf(text):
    for form in NORMALIZATIONS:
        assert normalize(form, text) == getattr(normalizers, form)().normalize_str(text), form


def test_a_sequence_of_normalizations_is_applied_in_order():
    text = "\ufb01 \u212b e\u0301"
    steps = ["NFKD", "NFC"]
    theirs = normalizers.Sequence([getattr(normalizers, s)() for s in steps])
    assert Preparation(tuple(steps)).normalize(text) == theirs.normalize_str(text) == "fi \u00c5 \u00e9"


@pytest.mark.parametrize("text", ["Hello", " Hello", "", "\nHi", "\tx", "  two", "\u00a0nbsp"])
def test_prefix_space_is_hf_byte_level_add_prefix_space(text):
    """HF's ByteLevel (no regex) prepends one space to a piece not starting with " "."""
    pre = hf.pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False)
    theirs = "".join(piece for piece, _ in pre.pre_tokenize_str(text))
    alphabet = {v: k for k, v in _byte_alphabet().items()}
    assert bytes(alphabet[ch] for ch in theirs).decode("utf-8") == with_space(text)


def _byte_alphabet() -> dict[int, str]:
    from tokenizer.hf_conventions import bytes_to_unicode

    return bytes_to_unicode()


def test_bad_preparations_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="unknown normalization 'NFX'"):
        Preparation(("NFX",))
    with pytest.raises(ValueError, match="prefix_space must be 'segment', 'chunk' or absent"):
        Preparation(prefix_space="everywhere")
    with pytest.raises(ValueError, match="a pre-split must be a split pattern, not 'none'"):
        Preparation(pre_splits=("none",))
    with pytest.raises(ValueError, match="can match the empty string|empty"):
        Preparation(pre_splits=("a*",))
    assert not Preparation() and Preparation(prefix_space=SEGMENT) and Preparation(prefix_space=CHUNK)


_AROUND = (
    _MARKS + _BASES + _UNKNOWN[:20] + ["\u00b4", "\u00a0", "\ufb01", "<", "\u0338", "=", "\u1161", "\u11a8"]
)
_KEPT_CANDIDATES = [
    " ",
    "\t",
    "\n",
    "x",
    "<",
    "\u00a0",
    "#",
    "\u4e00",
    "\u1100",
    "\u0301",
    "1",
    "\uf900",
    "\u8c48",
]


@settings(max_examples=300, deadline=None)
@given(
    left=st.lists(st.sampled_from(_AROUND), max_size=8).map("".join),
    right=st.lists(st.sampled_from(_AROUND), max_size=8).map("".join),
    form=st.sampled_from(NORMALIZATIONS),
    token=st.lists(st.sampled_from(_KEPT_CANDIDATES), min_size=1, max_size=3).map("".join),
)
def test_a_kept_token_cuts_the_text_and_is_neither_made_nor_lost(left, right, form, token):
    """What lets a normalized=true added token be found in the text as given (changed_char)."""
    if changed_char((form,), token) is not None:
        return
    theirs = getattr(normalizers, form)()
    assert theirs.normalize_str(left + token + right) == normalize(form, left) + token + normalize(
        form, right
    )
    for text in (left + right, left, right):
        assert theirs.normalize_str(text).count(token) == text.count(token)


def test_what_a_normalization_may_change_is_named():
    assert changed_char(("NFC",), "  ") is None  # GPT-NeoX's runs of spaces
    assert changed_char(("NFKC",), "  ") == " "  # NFKC makes spaces (U+00A0 -> U+0020)
    assert changed_char(("NFC",), "a<") == "a"  # a + U+0301 composes; < + U+0338 too
    assert changed_char(("NFC",), "\u8c48") == "\u8c48"  # U+F900 becomes it


def test_more_steps_than_a_tokenizer_has_are_refused_before_any_runs():
    """A normalizer Sequence of 100,000 NFCs (a 1.3 MB tokenizer.json) loaded, and encoding 12 KB
    then took 114 s: every step runs over all the text at each encode."""
    hf = to_hf_json(train("hello world " * 20, 260))
    hf["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"}] * 100_000}
    started = time.perf_counter()
    with pytest.raises(ValueError, match="^bad.json: normalizer has 100,000 steps; at most 16 are loaded"):
        from_hf_json(hf, "bad.json")
    hf["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"}] * MAX_STEPS}
    assert from_hf_json(hf, "ok.json").preparation.normalizers == ("NFC",) * MAX_STEPS
    ours = train("hello world " * 20, 260).to_json()
    ours["preparation"] = {"pre_splits": [r"\w+|\W"] * 10_000}
    with pytest.raises(ValueError, match=r"^ours.json: preparation.pre_splits has 10,000 steps"):
        read_texts(None, json.dumps(ours), None, "ours.json")
    with pytest.raises(ValueError, match="normalizers has 17 steps"):
        Preparation(("NFC",) * 17)
    assert time.perf_counter() - started < 2

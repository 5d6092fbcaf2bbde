"""Importing HF tokenizer.json: its added tokens are matched where HF matches them.

Added tokens with "special": false are matched in any text by encode's defaults; lstrip,
rstrip and single_word (tokenizer/added_tokens.py) give HF's ids on edge cases and random
text, survive save and export, and stay linear; tokens HF finds in two passes
(normalized=false first) are found in two passes too.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import added_token
from tests.hf_oracles import NORMALIZERS, _byte, byte_level, bytes_only, hf_json
from tokenizer import hf_added, hf_import
from tokenizer.added_tokens import AddedMatching
from tokenizer.hf_export import to_hf_json
from tokenizer.loading import from_hf_json, load_any
from tokenizer.preparation import SEGMENT, Preparation
from tokenizer.stats import count_tokens
from tokenizer.web.incremental import IncrementalEncoder

hf = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, normalizers, pre_tokenizers  # noqa: E402

_PLAIN_PIECES = [
    "hello world",
    "hello worldly",
    " ",
    "  ",
    "    ",
    "        ",
    "\t",
    "\n",
    "x",
    "ab",
    "é",
    "日本",
    "1",
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(_PLAIN_PIECES), max_size=12),
    st.sampled_from(["gpt2", "neox", "qwen2", "roberta"]),
)
def test_added_tokens_that_are_not_special_are_matched_by_default(trained, pieces, shape):
    """HF matches an added token with "special": false in any text ("hello world"; NeoX's runs
    of spaces). They were loaded as special tokens, so encode's default refused such text
    ("disallowed special token '    '") and stats counted them as text. Now: encode's defaults,
    encode_ordinary, stats, the page's encoder with special="raise" and the exported file all
    give HF's ids."""
    reference, ours = trained[shape]
    text = "".join(pieces)
    want = reference.encode(text, add_special_tokens=False).ids
    assert ours.encode(text) == ours.encode_ordinary(text) == want
    assert count_tokens(ours, text) == len(want)
    assert list(IncrementalEncoder(ours, special="raise").update(text).ids) == want
    exported = hf.Tokenizer.from_str(json.dumps(to_hf_json(ours)))
    assert exported.encode(text, add_special_tokens=False).ids == want
    assert {a["content"] for a in json.loads(exported.to_str())["added_tokens"] if not a["special"]} == set(
        ours.always_matched
    )


def test_a_special_token_is_still_refused_beside_the_plain_ones(trained):
    _, ours = trained["neox"]
    with pytest.raises(ValueError, match="disallowed special token '<pad>'"):
        ours.encode("hello world    <pad>")
    assert ours.encode("hello world    <pad>", disallowed_special=())[-1] != ours.special_tokens["<pad>"]


# ----- added tokens with lstrip / rstrip / single_word (tokenizer/added_tokens.py) -----------------

# Each shape's tokens: RoBERTa's lstrip <mask>, an rstrip one, a single_word one, one with all three,
# one that starts with whitespace (it may start inside a run an rstrip token took in), a newline,
# and a normalized=false token ending in a word character (HF's first pass: the second pass sees
# the text after it alone). Under a normalizer the tokens with options are normalized=false (the
# others are refused; see test_added_token_options_hf_sees_in_normalized_text_are_refused).
OPTION_SHAPES = ["gpt2", "roberta", "prefix-chunks", "llama3", "starcoder"]


def with_option_tokens(reference: hf.Tokenizer, shape: str) -> hf.Tokenizer:
    tok = hf.Tokenizer.from_str(reference.to_str())
    plain = shape not in NORMALIZERS  # normalized=true allowed for tokens with options
    tok.add_special_tokens(
        [
            AddedToken("<mask>", lstrip=True, normalized=False, special=True),
            AddedToken("<sep>", rstrip=True, normalized=plain, special=True),
            AddedToken("[x]", lstrip=True, rstrip=True, single_word=True, normalized=False, special=True),
        ]
    )
    tok.add_tokens(
        [
            AddedToken("<w>", single_word=True, normalized=plain),
            AddedToken(" ab", normalized=False),
            AddedToken("\n", normalized=False),
            AddedToken("<tag>z", normalized=False),
        ]
    )
    return tok


@pytest.fixture(scope="module")
def with_options(trained) -> dict[str, tuple[hf.Tokenizer, object]]:
    out = {}
    for shape in OPTION_SHAPES:
        reference = with_option_tokens(trained[shape][0], shape)
        out[shape] = reference, from_hf_json(json.loads(reference.to_str()), f"{shape}.json")
    return out


OPTION_EDGES = [
    # lstrip: White_Space before it (Rust's char::is_whitespace: \x85, \xa0, \u3000, not \x1c, \u200b)
    "a <mask>",
    "a\t\n\r\x0b\x0c <mask>",
    "a\u00a0<mask>",
    "a\u3000\u2028\u1680<mask>",
    "a\x1c<mask>",
    "a\x85<mask>",
    "a\u200b<mask>",
    " <mask>",
    "<mask><mask>  <mask>",
    # rstrip: White_Space after it; a token starting with whitespace inside that run
    "<sep> b",
    "<sep>\x1c b",
    "<sep>\x85\u00a0b",
    "<sep> \n x",
    "<sep>\n\nx",
    "<sep>   ab c",
    "<sep>  <mask>",
    "<sep> \u3000",
    # single_word: Rust's Unicode \w beside it (letters, digits, _, marks, joiners, Alphabetic)
    "x<w>",
    "_<w>",
    "1<w>",
    "\u0301<w>",
    "\u200d<w>",
    "\u00aa<w>",
    "\u2163<w>",
    "-<w>",
    "\u2460<w>",
    "<w>a",
    "<w>,",
    "x <w> y",
    "<w>",
    "<w><w>",
    "[x]",
    "a [x] b",
    "a[x] b",
    "  [x]  \t",
    # first pass (normalized=false) then the text between: <w> after "<tag>z" is alone there
    "<tag>z<w>",
    "<tag>z <mask>",
    "<w><tag>z",
    "hello world<w>",
    "<|endoftext|> <mask> <pad>",
    "",
    " ",
    "hello <mask> world, <sep> and  <w> again\n",
]


@pytest.mark.parametrize("shape", OPTION_SHAPES)
def test_added_token_options_give_hf_ids(shape, with_options, texts):
    """lstrip, rstrip and single_word were refused, and with them roberta-base's own file."""
    reference, ours = with_options[shape]
    corpus = texts["english"][:3000].replace(" the ", " <mask> ").replace(" and ", "<sep> and ")
    for text in [*OPTION_EDGES, corpus, corpus.replace(" a ", " <w> ")]:
        want = reference.encode(text, add_special_tokens=False).ids
        assert ours.encode(text, allowed_special="all") == want, (shape, text[:60])
        assert ours.decode(want) == reference.decode(want, skip_special_tokens=False), (shape, text[:60])


_OPTION_PIECES = [
    *("<mask>", "<sep>", "[x]", "<w>", " ab", "\n", "<tag>z", "<pad>", "hello world"),
    *(" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\x1c", "\x85", "\u2028", "\u200b"),
    *("a", "b", "x", "z", "ab", "é", "\u0301", "\u00aa", "\u200d", "\u2163", "日本"),
    *("1", "42", "\u2460", "_", "-", ".", ",", "<", ">", "[", "]"),
]


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_OPTION_PIECES), max_size=30),
    shape=st.sampled_from(OPTION_SHAPES),
)
def test_random_text_with_option_tokens_gives_hf_ids(with_options, pieces, shape):
    reference, ours = with_options[shape]
    text = "".join(pieces)
    want = reference.encode(text, add_special_tokens=False).ids
    assert ours.encode(text, allowed_special="all") == want
    assert ours.decode(want) == reference.decode(want, skip_special_tokens=False)


def test_added_token_options_survive_save_and_export(with_options, tmp_path):
    """Our .json keeps them (preparation.added), and tokenizer.json gets them back for HF."""
    text = "".join(OPTION_EDGES)
    for shape in ("gpt2", "roberta"):
        reference, ours = with_options[shape]
        want = reference.encode(text, add_special_tokens=False).ids
        ours.save(tmp_path / shape)
        back = load_any(str(tmp_path / shape))
        assert back.preparation == ours.preparation
        assert back.encode(text, allowed_special="all") == want
        exported = hf.Tokenizer.from_str(json.dumps(to_hf_json(ours)))
        assert exported.encode(text, add_special_tokens=False).ids == want
    meta = json.loads((tmp_path / "roberta.json").read_text())
    meta["preparation"]["added"] = {}  # no options: the same preparation as without the key
    (tmp_path / "roberta.json").write_text(json.dumps(meta))
    assert load_any(str(tmp_path / "roberta")).preparation == Preparation((), SEGMENT)
    meta = json.loads((tmp_path / "gpt2.json").read_text())
    meta["preparation"]["added"]["lstrip"].append("<nope>")
    (tmp_path / "gpt2.json").write_text(json.dumps(meta))
    with pytest.raises(
        ValueError, match=r"gpt2.json: preparation: added names '<nope>', which is not one of"
    ):
        load_any(str(tmp_path / "gpt2"))


def test_added_token_options_hf_sees_in_normalized_text_are_refused():
    """HF looks at a normalized=true token's neighbours in the normalized text: under NFKC "①" is
    "1", a word character, and "\u00a8" ends in a mark; refused under a normalizer, loaded without."""
    for flag in ("lstrip", "rstrip", "single_word"):
        obj = hf_json(normalizer=normalizers.NFKC())
        obj["added_tokens"] = [added_token(0, "<m>", **{flag: True}, normalized=True)]
        with pytest.raises(ValueError, match="^bad.json: ") as info:
            from_hf_json(obj, "bad.json")
        assert (
            f"added_tokens[0] ('<m>') option {flag}=true with normalized=true and the normalizer NFKC"
            in str(info.value)
        )
        obj["added_tokens"][0]["normalized"] = False
        assert hf_import.parse_hf(obj, "ok.json").preparation.added.options("<m>") == [flag]


def test_rstrip_tokens_in_a_long_run_of_whitespace_are_linear(trained):
    """rstrip tokens of spaces in a run of spaces: each scanned the rest of the run, 56 s for 40,000
    spaces (HF's own scan is quadratic there too: 63 s); now each run is scanned once."""
    reference, _ = trained["gpt2"]
    tok = hf.Tokenizer.from_str(reference.to_str())
    tok.add_special_tokens([AddedToken("<m>", rstrip=True), AddedToken(" ", rstrip=True)])
    ours = from_hf_json(json.loads(tok.to_str()), "ok.json")
    text = "<m>" + " " * 500 + "x<m>\t  " + " " * 300 + "y"
    assert ours.encode(text, allowed_special="all") == tok.encode(text, add_special_tokens=False).ids
    start = time.perf_counter()
    ids = ours.encode("<m>" + " " * 200_000 + "x", allowed_special="all")
    assert len(ids) == 200_002 and time.perf_counter() - start < 10  # quadratic: an hour


def test_a_single_word_token_beside_a_token_of_the_vocabulary_is_refused(trained):
    """Where HF drops a single_word match, its BPE makes a model.vocab token from the bytes there:
    the token itself ("xab": x, ab) or one starting inside it ("cxab" with "xa": c, x, ab); ours
    keeps the id for the special token."""
    reference, _ = trained["gpt2"]
    token = next(t for t in reference.get_vocab() if len(t) == 2 and t.isalpha() and t.isascii())
    for single_word, text in [(token, f"x{token}"), (f"q{token[0]}", f"cq{token}")]:
        tok = hf.Tokenizer.from_str(reference.to_str())
        tok.add_tokens([AddedToken(single_word, single_word=True)])
        tok.add_tokens([AddedToken(token)] if token != single_word else [])
        assert tok.encode(text, add_special_tokens=False).ids[-1] == tok.token_to_id(token)
        with pytest.raises(
            ValueError, match=rf"\('{token}'\), a token of model.vocab \(id \d+\), with single_word"
        ):
            from_hf_json(json.loads(tok.to_str()), "bad.json")
    tok = hf.Tokenizer.from_str(reference.to_str())
    tok.add_tokens([AddedToken(f"{token[1]}q", single_word=True), AddedToken(token)])  # ends in it: loads
    ours = from_hf_json(json.loads(tok.to_str()), "ok.json")
    for text in (f"c{token}q", f"{token}q", f" {token[1]}q {token}"):
        assert ours.encode(text, allowed_special="all") == tok.encode(text, add_special_tokens=False).ids


def test_too_many_single_word_tokens_beside_vocabulary_tokens_are_refused(monkeypatch):
    """Each single_word token is compared with each added token of model.vocab: 65,536 of each took
    hours; past a budget the file is refused, naming the counts."""
    obj = hf_json(byte_level(True))
    vocab = obj["model"]["vocab"] = {
        ch: i for i, ch in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet(), key=_byte))
    }
    added = []
    for i in range(40):
        vocab[f"<v{i}>"] = 256 + i
        added.append(added_token(256 + i, f"<v{i}>"))
        # id 296 + i: the id HF gives it after model.vocab's 296 tokens (hf_added.check_added_ids)
        added.append(added_token(296 + i, f"[w{i}]", single_word=True))
    obj["added_tokens"] = added
    assert from_hf_json(obj, "ok.json").preparation.added.single_word == {f"[w{i}]" for i in range(40)}
    monkeypatch.setattr(hf_added, "MAX_DROPPED_CHECKS", 1000)  # 190 characters x 40 tokens: 7,600
    with pytest.raises(
        ValueError, match=r"^bad.json: added_tokens with 40 single_word tokens beside 40 of model.vocab"
    ):
        from_hf_json(obj, "bad.json")


def test_an_lstrip_token_inside_an_rstrip_run_is_hfs_too(trained):
    """An lstrip token of whitespace alone inside the run an rstrip token took in: found at the
    run's end HF drops it, id and all; before the end HF panics, and our encode raises."""
    reference, _ = trained["gpt2"]
    tok = hf.Tokenizer.from_str(reference.to_str())
    tok.add_special_tokens([AddedToken("<m>", rstrip=True), AddedToken("\n", lstrip=True)])
    ours = from_hf_json(json.loads(tok.to_str()), "ok.json")
    for text in ["<m>\nx", "<m> \nx", "<m>\n", "a\n<m>\n", "<m>\t\n", "\n<m>\n"]:
        want = tok.encode(text, add_special_tokens=False).ids
        assert ours.encode(text, allowed_special="all") == want, text
    assert len(tok.encode("<m>\nx", add_special_tokens=False).ids) == 2
    for text in ["<m>\n\nx", "<m>\n x"]:
        with pytest.raises(BaseException, match="AddedVocabulary bad split"):
            tok.encode(text, add_special_tokens=False)
        with pytest.raises(ValueError, match=r"fails on this text .* the lstrip token '\\n' at character 4"):
            ours.encode(text, allowed_special="all")


def test_tokens_hf_finds_in_two_passes_give_hf_ids(trained):
    """HF finds "<s>" (normalized=false) first in "a<s>": a, <s>; one scan, leftmost first, finds
    a<s, >. Such a file was refused; it now takes HF's two passes (and one that needs none, one scan).
    Under NFC with tokens NFC keeps ('<' and letters it may join with a mark: "{|}" instead)."""
    for shape, (first, *later) in [("gpt2", ("<s>", "a<s", "s>b")), ("qwen2", ("{|}", "#{|", "|}#"))]:
        reference, _ = trained[shape]
        tok = hf.Tokenizer.from_str(reference.to_str())
        tok.add_special_tokens([AddedToken(first, normalized=False)])
        tok.add_tokens([AddedToken(token, normalized=True) for token in later])
        ours = from_hf_json(json.loads(tok.to_str()), "two-passes.json")
        assert first in ours.preparation.added.first and not set(later) & ours.preparation.added.first
        a, b = later[0][0], later[1][-1]
        texts = [f"{a}{first}", later[0], f"{first}{b}", f"x{a}{first}{b}{first}{b}", f"{a}{first}>{b}"]
        texts += [f"{later[1]}{first}{first}{later[0]} {a}{first}{b}"]
        want = [tok.encode(t, add_special_tokens=False).ids for t in texts]
        assert [ours.encode(t, allowed_special="all") for t in texts] == want, shape
        exported = hf.Tokenizer.from_str(json.dumps(to_hf_json(ours)))
        assert [exported.encode(t, add_special_tokens=False).ids for t in texts] == want, shape
    one = from_hf_json(json.loads(reference.to_str()), "one.json").preparation.added
    assert one == AddedMatching(not_special=frozenset({"hello world"}))  # no `first`: one scan


def test_many_tokens_of_both_kinds_take_two_passes_without_comparing_them(trained, monkeypatch):
    """Whether HF's two passes matter compared each normalized=true token with each normalized=false
    one (hours for 32,768 of each); past MAX_PASS_CHECKS pairs the two passes are taken unchecked,
    and the ids still are HF's."""
    reference, _ = trained["gpt2"]
    tok = hf.Tokenizer.from_str(reference.to_str())
    tok.add_special_tokens([AddedToken(f"<s{i}>", normalized=False) for i in range(30)])
    tok.add_tokens([AddedToken(f"[t{i}]", normalized=True) for i in range(30)])
    obj = json.loads(tok.to_str())
    few = from_hf_json(obj, "few.json").preparation  # 900 pairs, none overlapping: one pass
    assert not few.added.first  # the [t..] tokens are not special: only `not_special` is kept
    monkeypatch.setattr(hf_added, "MAX_PASS_CHECKS", 800)
    ours = from_hf_json(obj, "many.json")
    assert ours.preparation.added.first >= {f"<s{i}>" for i in range(30)}
    texts = ["a<s1>[t2]b", "<s29>[t0]<s0> x[t29]", "[t1<s1>]"]
    want = [tok.encode(t, add_special_tokens=False).ids for t in texts]
    assert [ours.encode(t, allowed_special="all") for t in texts] == want


def test_encode_s_defaults_raise_or_give_hf_ids_where_hf_s_scan_differs():
    """encode's defaults looked for the special tokens alone: "<|im_end|>" (single_word) after the
    not-special "hello world" was dropped as beside a word character, where HF's second pass sees
    it at the start of its stretch and matches it, and encode gave that text's ids, not HF's, with
    no error; "zq<t>" (single_word) dropped in "azq<t>" hides "<t>" from HF's scan, but ours found
    "<t>" alone. Now the defaults look as HF does: a special token HF finds raises, else HF's ids."""
    tok = bytes_only(byte_level(True))
    tok.add_tokens([AddedToken("hello world", normalized=False), AddedToken("<t>", normalized=False)])
    tok.add_special_tokens(
        [
            AddedToken("<|im_end|>", single_word=True, normalized=True),
            AddedToken("zq<t>", single_word=True, normalized=False),
        ]
    )
    ours = from_hf_json(json.loads(tok.to_str()))
    assert tok.encode("hello world<|im_end|> x").tokens[1] == "<|im_end|>"
    with pytest.raises(ValueError, match=re.escape("'<|im_end|>'")):
        ours.encode("hello world<|im_end|> x")
    for text in ("azq<t>", "azq<t> <t>", "x<|im_end|> hello world"):
        assert ours.encode(text) == tok.encode(text).ids, text
    assert ours.encode("a zq<t>", allowed_special="all") == tok.encode("a zq<t>").ids
    with pytest.raises(ValueError, match="'zq<t>'"):
        ours.encode("a zq<t>")

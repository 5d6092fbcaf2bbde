"""Importing HF tokenizer.json: what cannot be represented exactly is refused by name.

Other pre-tokenizers, normalizers and models, fields of the wrong type, added tokens whose ids
or bytes HF reads otherwise, a vocabulary its merges cannot make, truncation, padding and
decoders that change what HF gives: each refusal names the file, the field and the fix, and
where HF loads the file we check that its ids are the ones ours would give.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import added_token
from tests.hf_oracles import byte_level, hf_json, hf_trained
from tokenizer import patterns
from tokenizer.hf_export import to_hf_json
from tokenizer.loading import from_hf_json
from tokenizer.train import train

hf = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers  # noqa: E402

REFUSED = [
    (lambda: hf_json(pre_tokenizers.Whitespace()), "pre_tokenizer 'Whitespace'"),
    (lambda: hf_json(pre_tokenizers.Metaspace()), "pre_tokenizer 'Metaspace'"),
    (lambda: hf_json(pre_tokenizers.BertPreTokenizer()), "pre_tokenizer 'BertPreTokenizer'"),
    (  # a step before ByteLevel other than Split or Digits: a TypeError traceback ('str' not callable)
        lambda: hf_json(pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), byte_level(False)])),
        "pre_tokenizer 'Whitespace' is not supported",
    ),
    (lambda: hf_json(normalizer=normalizers.Lowercase()), "normalizer 'Lowercase' is not supported"),
    (
        lambda: hf_json(normalizer=normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()])),
        "normalizer 'Lowercase' is not supported: it changes the text in a way not reproduced here",
    ),
    (lambda: hf_json(normalizer=normalizers.Prepend("▁")), "normalizer 'Prepend'"),
    (  # Oniguruma's [\b] is a backspace
        lambda: hf_json(
            pre_tokenizers.Sequence([pre_tokenizers.Split(hf.Regex(r"[\b ]"), "isolated"), byte_level(False)])
        ),
        "pre_tokenizer Split: \\b (a backspace there) in the character class",
    ),
    (lambda: hf_json(normalizer=normalizers.Replace(" ", "▁")), "normalizer 'Replace'"),
    (lambda: hf_json(normalizer=normalizers.Strip()), "normalizer 'Strip'"),
    (lambda: hf_json(normalizer=normalizers.BertNormalizer()), "normalizer 'BertNormalizer'"),
    (
        lambda: hf_json(pre_tokenizers.Metaspace(), normalizer=normalizers.NFKC()),
        "pre_tokenizer 'Metaspace'",
    ),
    (
        lambda: hf_json(
            normalizer=normalizers.NFC(),
            added_tokens=[added_token(300, "é", special=False, normalized=True)],
        ),
        "added_tokens[0] ('é') option normalized=true with the normalizer NFC is not supported",
    ),
    (
        lambda: hf_json(
            normalizer=normalizers.NFKC(),
            added_tokens=[added_token(300, "  ", special=False, normalized=True)],
        ),
        "where ' ' may be changed, made or joined to a neighbour",
    ),
    (lambda: hf_json(model=models.BPE(byte_fallback=True)), "byte_fallback"),
    (lambda: hf_json(model=models.WordPiece(unk_token="[UNK]")), "model 'WordPiece'"),
    (lambda: hf_json(model=models.Unigram()), "model 'Unigram'"),
    (
        lambda: hf_json(
            pre_tokenizers.Sequence(
                [pre_tokenizers.Split(hf.Regex("a"), "merged_with_previous"), byte_level(False)]
            )
        ),
        "Split with behavior='MergedWithPrevious'",
    ),
    (
        lambda: hf_json(pre_tokenizers.Sequence([byte_level(False), pre_tokenizers.Digits()])),
        "must be ByteLevel",
    ),
    (
        lambda: {
            "model": {"type": "BPE", "vocab": {"ab": 0, "\u2603": 1}},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
        },
        "not in the byte-level alphabet",
    ),
    (lambda: [], "expected a JSON object"),
    *(  # Oniguruma's meaning, not ours: HF splits "a  \nb" as a, "  ", "\n", b with \s+$
        (
            lambda r=regex: hf_json(
                pre_tokenizers.Sequence([pre_tokenizers.Split(hf.Regex(r), "isolated"), byte_level(False)])
            ),
            message,
        )
        for regex, message in [
            (r"\s+$|\s+|\S+", "Split regex with the anchor '$'"),
            (r"(?m)^\s+|\S+|\s+", "Split regex with the anchor '^'"),
            (r"[\p{L}&&\p{Ll}]+|.", "Split regex with '&&' in a character class"),
            (r"[a-z[0-9]]+|.", "Split regex with '[' in a character class"),
            # BLOOM's: a nested class with a '(' in it, said "unbalanced parenthesis ... fix the syntax"
            (r" ?[^(\s|[.,!?…。，、।۔،])]+", "Split regex with '[' in a character class"),
            (
                patterns.PATTERNS["gpt4"],
                "Split regex with '{1,3}+' (a repeated interval",
            ),  # \p{N}{1,3}+ is \p{N}+ there
        ]
    ),
]


def test_an_added_token_with_a_lone_surrogate_is_named():
    """A JSON "\\ud83d" escape alone in an added token said Python's "'utf-8' codec can't encode
    character", naming neither the token nor the fix."""
    obj = hf_json(added_tokens=[added_token(0, "<\ud83d>")])
    with pytest.raises(
        ValueError,
        match=r"^bad.json: added_tokens\[0\] \('<\\ud83d>'\) holds a lone surrogate .* or remove the token",
    ):
        from_hf_json(obj, "bad.json")


@pytest.mark.parametrize(("make", "message"), REFUSED, ids=[m for _, m in REFUSED])
def test_what_cannot_be_represented_is_refused_by_name(make, message):
    with pytest.raises(ValueError, match="^bad.json: ") as info:
        from_hf_json(make(), "bad.json")
    assert message in str(info.value)


def test_options_that_are_not_true_or_false_are_refused():
    """ "add_prefix_space": "false" (a true string in Python) loaded with a prefix space, and so on
    for every flag; "added_tokens": 5 was a TypeError traceback."""
    cases = [
        (
            ("pre_tokenizer",),
            "add_prefix_space",
            "false",
            "pre_tokenizer ByteLevel.add_prefix_space is 'false'",
        ),
        (("pre_tokenizer",), "use_regex", None, "pre_tokenizer ByteLevel.use_regex is None"),
        (("model",), "ignore_merges", "true", "model.ignore_merges is 'true'; it must be true or false"),
        (("model",), "byte_fallback", [], "model.byte_fallback is []"),
        ((), "added_tokens", 5, "key 'added_tokens' must be a list"),
        (("added_tokens", 0), "normalized", 0, "added_tokens[0].normalized is 0"),
    ]
    for where, key, value, message in cases:
        obj = hf_json(byte_level(True), added_tokens=[added_token(300, "<s>")])
        place = obj
        for step in where:
            place = place[step]
        place[key] = value
        with pytest.raises(ValueError, match="^bad.json: ") as info:
            from_hf_json(obj, "bad.json")
        assert message in str(info.value), key


MODEL_FIELDS = [  # (key, value, what we say or None where HF loads the file too)
    ("unk_token", 1, "model.unk_token is 1; it must be a string or null"),
    ("unk_token", ["x"], "model.unk_token is ['x']; it must be a string or null"),
    ("fuse_unk", "x", "model.fuse_unk is 'x'; it must be true or false"),
    ("fuse_unk", 1, "model.fuse_unk is 1; it must be true or false"),
    ("dropout", "a", "model.dropout is 'a'; it must be a number from 0 to 1 or null"),
    ("dropout", True, "model.dropout is True; it must be a number from 0 to 1 or null"),
    ("dropout", 2.0, "model.dropout is 2.0; it must be a number from 0 to 1 or null"),
    ("continuing_subword_prefix", 1, "model.continuing_subword_prefix is 1; it must be a string or null"),
    ("end_of_word_suffix", 0, "model.end_of_word_suffix is 0; it must be a string or null"),
    ("unk_token", "<unk>", None),  # unused: every byte is in model.vocab
    ("fuse_unk", None, None),
    ("byte_fallback", None, None),  # null is the default for HF's optional flags
    ("ignore_merges", None, None),
]


@pytest.mark.parametrize(("key", "value", "message"), MODEL_FIELDS)
def test_model_fields_of_a_type_hf_refuses_are_refused(key, value, message):
    """HF refuses "unk_token": 1, "fuse_unk": "x", "dropout": "a" ("invalid type"); we loaded the
    first two (fields we otherwise ignore) and called the third "BPE dropout is random". HF's
    optional flags may be null, which we refused."""
    obj = hf_json(byte_level(True), model=hf_trained("gpt2", "hello world " * 20, vocab_size=270).model)
    obj["model"][key] = value
    try:
        hf.Tokenizer.from_str(json.dumps(obj))
    except Exception:  # noqa: BLE001 - tokenizers raises its own Exception type
        hf_loads = False
    else:
        hf_loads = True
    assert hf_loads == (message is None)
    if message is None:
        from_hf_json(obj, "ok.json")
        return
    with pytest.raises(ValueError, match="^bad.json: ") as info:
        from_hf_json(obj, "bad.json")
    assert message in str(info.value)


def test_added_token_ids_are_the_ones_hf_gives():
    """HF gives an added token that model.vocab lacks the next free id, whatever the file says:
    '<x>' with id 263 (HF: 258), or '<x>' and '<y>' both with id 258 (two special tokens on one
    id; HF: 258 and 259) loaded with the file's ids, so encode's ids differed from HF's."""
    base = to_hf_json(train("ab ab ab xy xy", 258, pattern="none"))
    flags = {"special": True, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False}

    def with_added(*pairs: tuple[str, int]) -> dict:
        return dict(base, added_tokens=[{"id": i, "content": c, **flags} for c, i in pairs])

    ok = with_added(("<x>", 258), ("<y>", 259))
    want = hf.Tokenizer.from_str(json.dumps(ok)).encode("<x><y>", add_special_tokens=False).ids
    assert from_hf_json(ok, "ok.json").encode("<x><y>", allowed_special="all") == want == [258, 259]
    for pairs, token, hf_id in [
        ((("<x>", 263),), "<x>", 258),
        ((("<x>", 258), ("<y>", 258)), "<y>", 259),
        ((("<x>", 259), ("<y>", 258)), "<x>", 258),
    ]:
        obj = with_added(*pairs)
        assert hf.Tokenizer.from_str(json.dumps(obj)).token_to_id(token) == hf_id
        with pytest.raises(
            ValueError,
            match=rf"^bad.json: added_tokens\[\d\] \('{token}'\) has id \d+, but Hugging Face "
            rf"tokenizers gives it id {hf_id} .*: set its id to {hf_id}",
        ):
            from_hf_json(obj, "bad.json")


def test_an_added_token_of_the_vocabulary_takes_no_part_in_hf_s_numbering():
    """An added token model.vocab has keeps its id there and moves no other: after "<a>" at 500 in
    model.vocab (259 tokens with it), HF numbers "<x>" 259, not 501. Ours took 501 from the file
    without a word (and refused 259); and "<x>" written as 260 beside "<a>" at 259 in model.vocab is
    259 to HF, "<a>"'s own id (HF then never finds "<a>"): refused, as no id can say that."""
    base = to_hf_json(train("ab ab ab xy xy", 258, pattern="none"))
    flags = {"special": True, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False}

    def with_added(vocab_id: int, x_id: int) -> dict:
        model = dict(base["model"], vocab={**base["model"]["vocab"], "<a>": vocab_id})
        pairs = [("<a>", vocab_id), ("<x>", x_id)]
        return dict(base, model=model, added_tokens=[{"id": i, "content": c, **flags} for c, i in pairs])

    ok = with_added(500, 259)
    want = hf.Tokenizer.from_str(json.dumps(ok)).encode("<a><x>", add_special_tokens=False).ids
    assert from_hf_json(ok, "ok.json").encode("<a><x>", allowed_special="all") == want == [500, 259]
    bad = with_added(500, 501)
    assert hf.Tokenizer.from_str(json.dumps(bad)).token_to_id("<x>") == 259
    with pytest.raises(
        ValueError, match=r"\('<x>'\) has id 501, but Hugging Face tokenizers gives it id 259"
    ):
        from_hf_json(bad, "bad.json")
    clash = with_added(259, 260)
    assert hf.Tokenizer.from_str(json.dumps(clash)).token_to_id("<x>") == 259
    with pytest.raises(
        ValueError, match=r"\('<x>'\) has id 260, but Hugging Face tokenizers gives it id 259"
    ):
        from_hf_json(clash, "bad.json")
    with pytest.raises(ValueError, match=r"\('<x>'\) has id 259, model.vocab's id of '<a>'"):
        from_hf_json(with_added(259, 259), "bad.json")


def test_a_token_that_no_merge_makes_is_refused():
    """HF joins two tokens only by a listed merge, our encoder whenever their bytes are a token:
    a tokenizer.json without its merges (or missing one) loaded and its ids differed from HF's.
    A token that no two tokens join into is out of reach of both and still loads."""
    obj = to_hf_json(train("ab ab ab xy xy", 258, pattern="none"))
    obj["model"]["vocab"]["<unk>"] = 258
    reference = hf.Tokenizer.from_str(json.dumps(obj)).encode("ab<unk>", add_special_tokens=False).ids
    assert from_hf_json(obj, "ok.json").encode("ab<unk>") == reference == [256, 60, 117, 110, 107, 62]
    for merges in (obj["model"]["merges"][1:], []):
        obj["model"]["merges"] = merges
        hf_ids = hf.Tokenizer.from_str(json.dumps(obj)).encode("abab", add_special_tokens=False).ids
        assert hf_ids == [97, 98, 97, 98], merges  # ours gave [256, 256]
        with pytest.raises(
            ValueError, match=r"^bad.json: model.vocab\['ab'\] \(id 256\) is made by no merge"
        ):
            from_hf_json(obj, "bad.json")
    obj["model"]["merges"] = None  # HF refuses it too
    with pytest.raises(ValueError, match=r"^bad.json: model.merges must be a list"):
        from_hf_json(obj, "bad.json")


@pytest.mark.parametrize("ignore_merges", [True, False])
def test_a_merge_other_than_the_pair_our_encoder_joins_is_refused(ignore_merges):
    """HF joins listed pairs only, ours any two tokens whose bytes are a token. Merges 'c d',
    'a b', 'ab c', 'abc d' list "abcd" as 'abc d', but 'cd' goes before 'ab', so the pair that
    meets is 'ab cd': HF gave [ab, cd] for "xabcd abcd", ours [abcd], and the file loaded. It is
    refused now, naming the token and the missing merge; with that merge listed too (as HF's
    tiktoken converter lists every split) it loads and gives HF's ids."""
    obj = to_hf_json(train("x", 256, pattern="gpt2"))
    merges = [["c", "d"], ["a", "b"], ["ab", "c"], ["abc", "d"]]
    for left, right in merges:
        obj["model"]["vocab"][left + right] = len(obj["model"]["vocab"])
    obj["model"].update(merges=merges, ignore_merges=ignore_merges)
    hf_ids = hf.Tokenizer.from_str(json.dumps(obj)).encode("xabcd abcd", add_special_tokens=False).ids
    assert hf_ids == [120, 257, 256, 32, 257, 256]  # ours gave [120, 259, 32, 259]
    with pytest.raises(
        ValueError,
        match=r"^bad.json: model.vocab\['abcd'\] \(id 259\): our encoder joins 'ab' and 'cd' into it .* "
        "model.merges lacks 'ab cd'",
    ):
        from_hf_json(obj, "bad.json")
    obj["model"]["merges"].append(["ab", "cd"])
    hf_ids = hf.Tokenizer.from_str(json.dumps(obj)).encode("xabcd abcd", add_special_tokens=False).ids
    assert from_hf_json(obj, "ok.json").encode("xabcd abcd") == hf_ids == [120, 259, 32, 259]


def test_a_token_our_encoder_joins_from_a_later_token_is_refused():
    """'a aabb' makes id 259 and 'aa a' id 260 after it: in "aaaaabbb" ours makes "aaa" (260)
    and then joins 'aaa bb' into 259, a pair HF does not list: HF [257, 260, 256, 98], ours
    [257, 259, 98]. The pair is found with every other token, not only the lower ones."""
    obj = to_hf_json(train("x", 256, pattern="gpt2"))
    merges = [["b", "b"], ["a", "a"], ["aa", "bb"], ["a", "aabb"], ["aa", "a"]]
    for left, right in merges:
        obj["model"]["vocab"][left + right] = len(obj["model"]["vocab"])
    obj["model"].update(merges=merges, ignore_merges=False)
    hf_ids = hf.Tokenizer.from_str(json.dumps(obj)).encode("aaaaabbb", add_special_tokens=False).ids
    assert hf_ids == [257, 260, 256, 98]
    with pytest.raises(ValueError, match=r"\(id 259\): our encoder joins 'aaa' and 'bb' into it"):
        from_hf_json(obj, "bad.json")


def test_a_merge_of_a_token_the_vocabulary_lacks_is_refused():
    """HF refuses a merge whose part is not in model.vocab ("out of vocabulary"); we loaded it
    when the two parts' concatenation was a token, so the file had ids HF never gives."""
    obj = to_hf_json(train("abc abc abc abc", 258, pattern="none", min_frequency=1))
    assert obj["model"]["merges"][1] == ["ab", "c"]
    obj["model"]["merges"][1] = ["a", "bc"]  # "abc" is a token, "bc" is not
    with pytest.raises(Exception, match="out of vocabulary"):
        hf.Tokenizer.from_str(json.dumps(obj))
    with pytest.raises(
        ValueError, match=r"^bad.json: model.merges\[1\] \['a', 'bc'\] names 'bc', which model.vocab lacks"
    ):
        from_hf_json(obj, "bad.json")


def test_a_bpe_model_without_a_vocabulary_says_so():
    obj = to_hf_json(train("ab ab ab", 257, pattern="none"))
    del obj["model"]["vocab"]  # it said "model 'BPE' is not supported: only BPE models are"
    with pytest.raises(ValueError, match=r"^bad.json: model has no 'vocab'"):
        from_hf_json(obj, "bad.json")


def test_truncation_and_padding_that_change_the_ids_are_refused(trained):
    """A file saved with truncation or fixed padding loaded and gave every id, where HF's encode
    cuts or pads them; padding to a batch's longest leaves one text alone and loads."""
    reference, _ = trained["gpt2"]
    text = "hi world, and more words than five"
    tok = hf.Tokenizer.from_str(reference.to_str())
    tok.enable_padding()
    assert from_hf_json(json.loads(tok.to_str()), "ok.json").encode(text) == tok.encode(text).ids
    for setting, message in [
        (lambda: tok.enable_truncation(max_length=5), "truncation (max_length 5) is not supported"),
        (lambda: tok.enable_padding(length=64), "padding {'Fixed': 64} is not supported"),
        (lambda: tok.enable_padding(pad_to_multiple_of=8), "padding 'BatchLongest' is not supported"),
    ]:
        tok.no_truncation()
        tok.no_padding()
        setting()
        assert len(tok.encode(text).ids) != len(reference.encode(text).ids)
        with pytest.raises(ValueError, match="^bad.json: ") as info:
            from_hf_json(json.loads(tok.to_str()), "bad.json")
        assert message in str(info.value)


def test_a_decoder_other_than_byte_levels_is_refused(trained):
    """Any decoder loaded (Metaspace, BPEDecoder, Replace...), and our decode gave the tokens' bytes
    where HF's decode gives other text; a Sequence of ByteLevel alone decodes alike and loads."""
    reference, _ = trained["gpt2"]
    obj = json.loads(reference.to_str())
    ids = reference.encode("Hello world, \u00e9!").ids
    byte_level_decoder = obj["decoder"]
    for decoder, loads in [
        (decoders.Sequence([decoders.ByteLevel()]), True),
        (decoders.Metaspace(), False),
        (decoders.BPEDecoder(), False),
        (decoders.Sequence([decoders.ByteLevel(), decoders.Replace("o", "0")]), False),
        (
            decoders.Sequence([decoders.Replace("\u0120", " "), decoders.ByteFallback(), decoders.Fuse()]),
            False,
        ),
    ]:
        tok = hf.Tokenizer.from_str(reference.to_str())
        tok.decoder = decoder
        obj["decoder"] = json.loads(tok.to_str())["decoder"]
        if loads:
            assert from_hf_json(obj, "ok.json").decode(ids) == tok.decode(ids) == "Hello world, \u00e9!"
            continue
        assert tok.decode(ids) != "Hello world, \u00e9!"
        with pytest.raises(ValueError, match=r"^bad.json: decoder '.*' is not supported: HF's decode"):
            from_hf_json(obj, "bad.json")
    obj["decoder"] = byte_level_decoder
    assert from_hf_json(obj, "ok.json").decode(ids) == reference.decode(ids)


def test_added_tokens_that_hf_decodes_as_alphabet_bytes_are_refused(trained):
    """HF's ByteLevel decoder reads an added token made of byte-alphabet characters as those bytes:
    "naïve" loaded and decoded as "naïve" where HF gives "na\ufffdve"; "Ġthe", also model.vocab's
    token, is HF's id for " the" too, and ours encoded " the" as two tokens. A single-byte one
    ("e") was refused as "ranks lack 1 single bytes", naming no added token."""
    reference, _ = trained["gpt2"]
    for content, message in [
        ("na\u00efve", "added_tokens[3] ('na\u00efve') as the bytes b'na\\xefve' is not supported"),
        ("\u0120the", "as the bytes b' the', and model.vocab's token for those bytes (id"),
        ("\u00e9", "added_tokens[2] ('\u00e9') as the bytes b'\\xe9', and model.vocab's token"),
        ("e", "added_tokens[2] ('e') as model.vocab's single byte b'e' (id 70) is not supported"),
    ]:
        tok = hf.Tokenizer.from_str(reference.to_str())
        tok.add_tokens([AddedToken(content)])  # in model.vocab: its id there, listed by id
        ids = tok.encode(f"the {content}", add_special_tokens=False).ids
        assert len(content) == 1 or tok.decode(ids) != f"the {content}"
        with pytest.raises(ValueError, match="^bad.json: ") as info:
            from_hf_json(json.loads(tok.to_str()), "bad.json")
        assert message in str(info.value), content
    for content in ("<|caf\u00e9|> x", "<|im_end|>", "in", "\u65e5\u00e9"):  # HF decodes each as its text
        tok = hf.Tokenizer.from_str(reference.to_str())
        tok.add_tokens([AddedToken(content, normalized=False, special=content == "in")])
        text = f"in the {content}{content}x{content} ing"
        ids = tok.encode(text, add_special_tokens=False).ids
        ours = from_hf_json(json.loads(tok.to_str()), "ok.json")
        assert ours.encode(text, allowed_special="all") == ids
        assert ours.decode(ids) == tok.decode(ids, skip_special_tokens=False) == text

"""Hostile tokenizer files and arguments: a clear error every time, never a crash or a wrong id.

tests/data/hostile/files/index.json maps each corrupt or hostile file to the fragment of the
error it must give; each goes through the library's loader and the CLI (exit 2, no traceback).
Hypothesis then throws random bytes and random JSON shapes at every loader: the only exception
allowed out is a ValueError. The rest are issue 17's "CLI / library" reproductions.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import DATA, ROOT, added_token
from tokenizer import Tokenizer, get_encoding, train
from tokenizer.cli import main
from tokenizer.loading import from_texts, load_any, load_file
from tokenizer.validate import MAX_JSON_DEPTH, TokenizerFileError, json_depth

HOSTILE = DATA / "hostile" / "files"
INDEX = json.loads((HOSTILE / "index.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "fragment"), INDEX.items(), ids=list(INDEX))
def test_hostile_file_library(name, fragment):
    with pytest.raises(ValueError) as info:
        load_any(str(HOSTILE / name))
    assert fragment in str(info.value)
    assert name in str(info.value)  # the message names the file it is about


@pytest.mark.parametrize("name", list(INDEX))
def test_tokenizer_load_is_the_validated_loader(name):
    """Tokenizer.load, load_file (the CLI's) and Tokenizer.from_json (a parsed .json) give one message."""
    with pytest.raises(ValueError) as by_method:
        Tokenizer.load(HOSTILE / name)
    with pytest.raises(ValueError) as by_loader:
        load_file(HOSTILE / name)
    assert type(by_method.value) is type(by_loader.value) is TokenizerFileError
    assert str(by_method.value) == str(by_loader.value)
    if name.endswith(".json") and not name.startswith("hf-"):
        try:
            meta = json.loads((HOSTILE / name).read_bytes())
        except (ValueError, RecursionError):
            return  # the text itself is the problem: from_json takes it parsed
        if not isinstance(meta, dict) or "model" in meta:
            return  # from_json takes our .json's object
        with pytest.raises(TokenizerFileError) as by_json:
            Tokenizer.from_json(meta, source=str(HOSTILE / name))
        assert str(by_json.value) == str(by_loader.value)


@pytest.mark.parametrize(("name", "fragment"), INDEX.items(), ids=list(INDEX))
def test_hostile_file_cli(name, fragment, capsys):
    assert main(["encode", "--tokenizer", str(HOSTILE / name), "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and fragment in err


@pytest.mark.parametrize("name", ["nested.json", "rank-huge.tiktoken", "hf-whitespace.json"])
def test_hostile_file_cli_process_has_no_traceback(name):
    result = subprocess.run(
        [sys.executable, "-m", "tokenizer", "encode", "--tokenizer", str(HOSTILE / name), "hi"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 2 and INDEX[name] in result.stderr
    assert "Traceback" not in result.stderr


def test_page_loader_gives_the_same_messages():
    text = (HOSTILE / "special-empty.json").read_text()
    with pytest.raises(TokenizerFileError, match="empty special token"):
        from_texts(None, text, None, "special-empty.json")
    with pytest.raises(TokenizerFileError, match=r"^nested\.json: JSON nested 100000 levels"):
        from_texts(None, (HOSTILE / "nested.json").read_text(), None, "nested.json")
    rank = (HOSTILE / "rank-huge.tiktoken").read_text()
    with pytest.raises(TokenizerFileError, match=r"^rank-huge\.tiktoken:257: rank"):
        from_texts(rank, None, None, "rank-huge.tiktoken")


def test_page_loader_names_the_file_each_error_is_in(tmp_path):
    """The page gives a pair's two texts: an error in the .tiktoken named the .json."""
    train("hello world, hello there " * 20, 262, pattern="gpt4", name="pair").save(tmp_path / "pair")
    train("other words entirely " * 20, 262, pattern="gpt4", name="other").save(tmp_path / "other")
    meta = (tmp_path / "pair.json").read_text(encoding="utf-8")
    ranks = (tmp_path / "pair.tiktoken").read_text(encoding="ascii")
    cut = ranks.rsplit(" ", 1)[0]  # the last line loses its rank
    with pytest.raises(TokenizerFileError, match=r"^pair\.tiktoken:\d+: expected 'BASE64 RANK'"):
        from_texts(cut, meta, None, "pair.json", tiktoken_source="pair.tiktoken")
    others = (tmp_path / "other.tiktoken").read_text(encoding="ascii")
    with pytest.raises(
        TokenizerFileError, match=r"^pair\.tiktoken: its ranks disagree with the merges in pair\.json"
    ):
        from_texts(others, meta, None, "pair.json", tiktoken_source="pair.tiktoken")
    # The CLI names the same files.
    (tmp_path / "pair.tiktoken").write_text(others, encoding="ascii")
    with pytest.raises(TokenizerFileError, match=r"pair\.tiktoken: its ranks disagree"):
        load_file(tmp_path / "pair.json")


@pytest.mark.parametrize("name", ["empty.tiktoken", "empty.json", "empty.model"])
def test_page_loader_reads_an_empty_file_as_the_cli_does(name, tmp_path):
    """An empty file's text "" was taken for no file at all: the page said 'no file given'."""
    (tmp_path / name).write_bytes(b"")
    with pytest.raises(TokenizerFileError) as cli:
        load_file(tmp_path / name)
    texts = {"tiktoken": ("", None), "json": (None, ""), "model": (None, "")}[name.rsplit(".", 1)[1]]
    with pytest.raises(TokenizerFileError) as page:
        from_texts(*texts, None, name)
    assert str(page.value) == str(cli.value).replace(str(tmp_path / name), name)


def test_depth_scan_ignores_brackets_inside_strings():
    assert json_depth('{"a": "[[[[[[", "b": [["]]"]]}') == 3
    assert json_depth('"\\"[[[["') == 0
    deep = '{"merges": ' + "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1) + "}"
    assert json_depth(deep) == MAX_JSON_DEPTH


# ----- fuzzing: only ValueError may come out ---------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
KEYS = ["name", "pattern", "pattern_regex", "special_tokens", "merges", "metadata", "model", "added_tokens"]
json_shapes = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6)


def only_value_errors(call) -> None:
    try:
        call()
    except ValueError:
        pass


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(data=st.binary(max_size=300), kind=st.sampled_from(["tiktoken", "json", "hf", "model"]))
def test_random_bytes(data, kind):
    text = data.decode("utf-8", "replace")
    args = {"tiktoken": (text, None, None), "json": (None, text, None), "hf": (None, None, text)}
    args["model"] = (None, text, None)
    only_value_errors(lambda: from_texts(*args[kind], f"x.{'model' if kind == 'model' else kind}"))


@FUZZ
@given(shape=json_shapes)
def test_random_json_shapes(shape):
    only_value_errors(lambda: from_texts(None, json.dumps(shape), None, "x.json"))


@FUZZ
@given(value=json_values, key=st.sampled_from(KEYS))
def test_one_bad_field_in_a_good_file(value, key):
    meta = Tokenizer.from_merges([(104, 105)], "gpt4", ["<|end|>"]).to_json()
    meta[key] = value
    only_value_errors(lambda: from_texts(None, json.dumps(meta), None, "x.json"))


@FUZZ
@given(
    pre=json_values,
    model=st.fixed_dictionaries({"type": st.sampled_from(["BPE", "WordPiece"]), "vocab": json_values}),
)
def test_random_hf_pipelines(pre, model):
    only_value_errors(
        lambda: from_texts(None, None, json.dumps({"model": model, "pre_tokenizer": pre}), "t.json")
    )


# ----- issue 17's CLI / library reproductions ---------------------------------------------


def test_special_tokens_that_would_break_every_encode_are_refused():
    meta = Tokenizer.from_merges([(104, 105)], "gpt4").to_json()
    for special, fragment in [({"": 5000}, "empty special token"), ({"<x>": -1}, "-1 is not a token id")]:
        with pytest.raises(ValueError, match=fragment):
            from_texts(None, json.dumps({**meta, "special_tokens": special}), None, "x.json")


@pytest.mark.parametrize("ids", [[5.0], [True], ["5"]])
def test_decode_refuses_ids_that_are_not_ints(ids):
    with pytest.raises((TypeError, ValueError), match="int"):
        get_encoding("gpt2").decode(ids)


@pytest.mark.parametrize("arg", ["[true]", "[5.0]", "1.5", "1e3", "0x10", "[[1]]", "[" * 5000])
def test_cli_decode_refuses_ids_that_are_not_ints(arg, capsys):
    assert main(["decode", "-e", "gpt2", arg]) == 2
    assert "ids must be integers" in capsys.readouterr().err


@pytest.mark.parametrize("arg", ["\u0661\u0662", "\uff11\uff12", "1_2", "1,\u0968"])
def test_cli_decode_refuses_digits_other_than_0_to_9(arg, capsys):
    """int() reads Arabic-Indic, fullwidth and other Unicode digits and '1_2': `decode 1_2`
    printed the token of id 12 (a form feed) with exit 0."""
    assert main(["decode", "-e", "gpt2", arg]) == 2
    assert "ids must be integers" in capsys.readouterr().err


def test_cli_binary_stdin_is_a_utf8_error(tmp_path):
    (tmp_path / "random.bin").write_bytes(bytes(range(256)) * 4)
    with open(tmp_path / "random.bin", "rb") as f:
        result = subprocess.run(
            [sys.executable, "-m", "tokenizer", "encode"], stdin=f, capture_output=True, cwd=ROOT, timeout=120
        )
    assert result.returncode == 2 and b"stdin: not valid UTF-8 at byte offset 128" in result.stderr


@pytest.mark.parametrize("name", ["gpt5", "GPT4", "cl100k-base"])
def test_unknown_pattern_names_are_errors(name, tmp_path, capsys):
    with pytest.raises(ValueError, match=f"unknown pattern name '{name}'.*gpt2, gpt4, o200k, none.*regex="):
        train("hello world", 300, pattern=name)
    (tmp_path / "c.txt").write_text("hello world hello")
    assert (
        main(["train", str(tmp_path / "c.txt"), "-v", "260", "-q", "-p", name, "-o", str(tmp_path / "o")])
        == 2
    )
    assert "--regex" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()


def test_encoding_names_are_pattern_aliases():
    assert (
        train("hello world hello", 260, pattern="cl100k_base").pattern_regex
        == get_encoding("cl100k_base").pattern_regex
    )


def test_custom_regex_that_drops_text_warns(tmp_path, capsys):
    with pytest.warns(UserWarning, match=r"does not match 23\.1% of the sample"):
        train("hello, world!", 260, regex=r"\w+")
    (tmp_path / "c.txt").write_text("hello, world! hello, world!")
    out = str(tmp_path / "o")
    assert main(["train", str(tmp_path / "c.txt"), "-v", "260", "-q", "--regex", r"\w+", "-o", out]) == 0
    assert "warning: the split regex does not match 25.9% of the sample" in capsys.readouterr().err
    assert main(["train", str(tmp_path / "c.txt"), "-v", "260", "-q", "--regex", r"(\w)+", "-o", out]) == 2
    assert "capturing group" in capsys.readouterr().err


def test_corpus_types_and_folders(tmp_path, capsys):
    with pytest.raises(ValueError, match="corpus must be a str .* not dict"):
        train({"a": 1}, 300)
    with pytest.raises(ValueError, match="is a directory"):
        train(Path(tmp_path), 300)
    assert main(["train", str(tmp_path), "-v", "300", "-o", str(tmp_path / "x")]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_too_many_special_tokens_in_a_file_are_refused_before_building(tmp_path, capsys):
    """300,000 special tokens took 7 s and 500 MB to load, and a 256 MiB file holds 10 million."""
    from tokenizer.hf_export import to_hf_json
    from tokenizer.validate import MAX_FILE_SPECIAL_TOKENS

    n = MAX_FILE_SPECIAL_TOKENS + 1
    tok = Tokenizer.from_merges([(104, 101)], "gpt4", name="t")
    meta = tok.to_json()
    meta["special_tokens"] = {f"<|s{i}|>": 257 + i for i in range(n)}
    (tmp_path / "many.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(
        TokenizerFileError, match=f"many.json: special_tokens has {n:,} tokens; at most 65,536"
    ):
        load_file(tmp_path / "many.json")
    assert main(["encode", "--tokenizer", str(tmp_path / "many.json"), "hi"]) == 2
    assert "at most 65,536 are loaded" in capsys.readouterr().err
    hf = to_hf_json(tok)
    hf["added_tokens"] = [added_token(257 + i, f"<s{i}>") for i in range(n)]
    (tmp_path / "tokenizer.json").write_text(json.dumps(hf), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=f"added_tokens has {n:,} tokens"):
        load_file(tmp_path / "tokenizer.json")


def test_nan_and_infinity_are_not_json(tmp_path):
    """Python's json read NaN in a .json's metadata; the server then listed it as is and the
    page's JSON.parse refused the whole list of tokenizers."""
    tok = train("hello world " * 20, 260)
    tok.metadata["statistics"] = {"seconds": float("nan")}
    tok.save(tmp_path / "t")
    with pytest.raises(
        TokenizerFileError, match=r"t.json: invalid JSON: NaN is not a JSON value; write a number"
    ):
        load_file(tmp_path / "t")


@pytest.mark.parametrize(
    "text, where, cut",
    [
        ('{"name": "x", "special_tokens": {"<|e', "Unterminated string starting at column 34", True),
        ('{"name": "x",', "at column 14", True),
        ('{"name" "x"}', "Expecting ':' delimiter at column 9", False),
    ],
)
def test_invalid_json_says_where_and_whether_the_file_was_cut_short(tmp_path, text, where, cut):
    """A truncated file said 't.json:1: invalid JSON: Unterminated string starting at', with no
    position (json's message alone) and nothing about the likely cause."""
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TokenizerFileError) as info:
        load_file(path)
    assert "t.json:1: invalid JSON: " in str(info.value) and where in str(info.value)
    assert ("cut short" in str(info.value)) is cut


@pytest.mark.parametrize("digits", [41, 5_000])
def test_a_number_too_long_for_any_field_names_the_damage(tmp_path, digits):
    """5,000 digits said Python's 'use sys.set_int_max_str_digits() to increase the limit',
    advice for programmers; any number past 40 digits is now damage, said so."""
    tok = train("hello world " * 20, 260)
    tok.save(tmp_path / "t")
    meta = (tmp_path / "t.json").read_text(encoding="utf-8")
    (tmp_path / "t.json").write_text(meta.replace('"vocab_size": 260', '"vocab_size": ' + "9" * digits))
    with pytest.raises(
        TokenizerFileError, match=rf"t.json: invalid JSON: a number of {digits:,} digits"
    ) as e:
        load_file(tmp_path / "t")
    assert "set_int_max_str_digits" not in str(e.value)


def test_files_of_more_entries_than_any_tokenizer_are_refused_before_parsing(tmp_path, monkeypatch):
    """A 256 MiB .json of 10 million merges took 34 s and 3.6 GB to load, a .tiktoken of 10 million
    lines 26 s; lines and JSON values are now counted first (the bound lowered here to keep the
    files small; commas inside strings are not values)."""
    from tokenizer import validate

    tok = train("hello world " * 20, 262)
    tok.save(tmp_path / "t")
    monkeypatch.setattr(validate, "MAX_FILE_ENTRIES", 300)
    assert load_file(tmp_path / "t").encode("hello") == tok.encode("hello")  # 262 lines, ~20 values
    tok.metadata["note"] = "," * 1000  # not values
    tok.save(tmp_path / "t")
    load_file(tmp_path / "t")
    tok.metadata["note"] = list(range(400))
    tok.save(tmp_path / "t")
    with pytest.raises(
        TokenizerFileError, match=r"t.json: 4\d\d JSON values, more than the 300 a tokenizer file"
    ):
        load_file(tmp_path / "t")
    lines = (tmp_path / "t.tiktoken").read_text(encoding="utf-8") + "\n" * 100
    (tmp_path / "u.tiktoken").write_text(lines, encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=r"u.tiktoken: 362 lines, more than the 300"):
        load_file(tmp_path / "u.tiktoken")
    assert main(["encode", "--tokenizer", str(tmp_path / "u.tiktoken"), "hi"]) == 2


@pytest.mark.parametrize("path", ["/dev/null", "README.md"])
def test_a_file_no_reader_takes_is_named_as_such(path):
    """Tokenizer.load('/dev/null') said 'no tokenizer at /dev/null (looked for null.json and
    null.tiktoken)', as if nothing were there."""
    with pytest.raises(FileNotFoundError, match="that no tokenizer reader takes: give a saved tokenizer"):
        load_file(ROOT / path if path == "README.md" else path)


def test_a_pattern_name_beside_another_regex_is_refused(tmp_path):
    """An edited .json with "pattern": "gpt2" beside the gpt4 "pattern_regex" loaded with gpt2's
    split, silently: which of the two was meant cannot be known. The pair must agree."""
    train("hello world hello", 260, pattern="gpt4").save(tmp_path / "t")
    meta = json.loads((tmp_path / "t.json").read_text())
    assert Tokenizer.load(tmp_path / "t").pattern == "gpt4"
    meta["pattern"] = "gpt2"
    (tmp_path / "t.json").write_text(json.dumps(meta))
    with pytest.raises(
        ValueError, match=r"t\.json: key 'pattern' names 'gpt2', but 'pattern_regex' is another"
    ):
        Tokenizer.load(tmp_path / "t")
    del meta["pattern_regex"]  # the name alone is fine
    (tmp_path / "t.json").write_text(json.dumps(meta))
    assert Tokenizer.load(tmp_path / "t").pattern == "gpt2"

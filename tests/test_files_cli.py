"""Files (.tiktoken + .json), their error messages, and the encode/decode/split/list CLI."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
import tiktoken
import tiktoken.load

from tokenizer import Tokenizer, get_encoding
from tokenizer.formats import minbpe_text, parse_tiktoken
from tokenizer.loading import load_file

ROOT = Path(__file__).resolve().parents[1]
TEXT = "Hello, world! Héllo 世界 🙂 don't stop\n\tthe 123456 cats"


def small_tokenizer() -> Tokenizer:
    """Merges chosen by hand so the test does not depend on the trainer."""
    h, e, l, o = (ord(c) for c in "helo")  # noqa: E741
    merges = [(h, e), (l, l), (256, 257), (258, o), (ord(" "), ord("c"))]
    return Tokenizer.from_merges(merges, "gpt4", ["<|end|>"], name="small", metadata={"note": "hand-made"})


def test_from_merges_assigns_ids_and_specials():
    tok = small_tokenizer()
    assert tok.decode_single_token_bytes(259) == b"hello"
    assert tok.special_tokens == {"<|end|>": 261}
    assert tok.encode("hello cat<|end|>", allowed_special="all") == [259, 260, ord("a"), ord("t"), 261]


def test_from_merges_rejects_forward_references():
    with pytest.raises(ValueError, match="merge 0 .* not defined"):
        Tokenizer.from_merges([(256, 1)])


def test_duplicate_bytes_keep_lowest_rank():
    a, b = ord("a"), ord("b")
    # (ab, b) and (a, bb) both make b"abb".
    tok = Tokenizer.from_merges([(a, b), (b, b), (256, b), (a, 257)])
    assert tok.decode_single_token_bytes(258) == tok.decode_single_token_bytes(259) == b"abb"
    assert tok.mergeable_ranks[b"abb"] == 258
    assert tok.duplicate_ids == {259: 258}
    assert tok.encode("abb") == [258]
    assert tok.decode([259]) == "abb"


def test_save_load_round_trip(tmp_path):
    tok = small_tokenizer()
    tok.save(tmp_path / "small")
    for path in ["small", "small.json", "small.tiktoken"]:
        loaded = Tokenizer.load(tmp_path / path)
        assert loaded.mergeable_ranks == tok.mergeable_ranks
        assert loaded.merges == tok.merges
        assert loaded.special_tokens == tok.special_tokens
        assert loaded.metadata == {"note": "hand-made"}
        assert loaded.encode(TEXT) == tok.encode(TEXT)
    meta = json.loads((tmp_path / "small.json").read_text())
    assert meta["merges"][0] == [ord("h"), ord("e")]
    assert meta["vocab_size"] == 262
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*"))
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "small.json").stat().st_mode & 0o777 == 0o666 & ~umask


def test_tiktoken_reads_our_file(tmp_path):
    enc = get_encoding("cl100k_base")
    enc.save(tmp_path / "cl100k")
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "cl100k.tiktoken"))
    ref = tiktoken.Encoding("cl100k", pat_str=enc.pattern_regex, mergeable_ranks=ranks, special_tokens={})
    assert ref.encode_ordinary(TEXT) == enc.encode_ordinary(TEXT)
    assert Tokenizer.load(tmp_path / "cl100k").encode(TEXT) == enc.encode(TEXT)


@pytest.mark.parametrize(
    "content,message",
    [
        ("aGVsbG8= 0\nbad line here\n", r"x\.tiktoken:2: expected 'BASE64 RANK'"),
        ("aGVsbG8= zero\n", r"x\.tiktoken:1: rank 'zero' is not a number; ranks are integers from 0 to "),
        ("aGVsbG8= -5\n", r"x\.tiktoken:1: rank '-5' is not a number; .* written in the digits 0-9"),
        ("aGVsbG8= +5\n", r"x\.tiktoken:1: rank '\+5' is not a number"),
        ("!!!! 3\n", r"x\.tiktoken:1: token '!!!!' is not base64 as tiktoken writes it \(A-Z a-z 0-9 \+ /"),
        ("aGk=== 3\n", r"x\.tiktoken:1: token 'aGk===' is not base64 .* padded with = to a multiple of 4"),
        ("aGk 3\n", r"x\.tiktoken:1: token 'aGk' is not base64"),
        ("aGVsbG8= 0\naGVsbG8= 1\n", r"x\.tiktoken:2: token b'hello' appears twice"),
        ("aGVsbG8= 0\naGk= 0\n", r"x\.tiktoken:2: rank 0 appears twice"),
        ("", r"x\.tiktoken: no tokens"),
    ],
)
def test_corrupt_tiktoken_names_file_and_line(tmp_path, content, message):
    (tmp_path / "x.tiktoken").write_text(content)
    with pytest.raises(ValueError, match=message):
        Tokenizer.load(tmp_path / "x.tiktoken")


def test_truncated_files_are_rejected(tmp_path):
    small_tokenizer().save(tmp_path / "t")
    text = (tmp_path / "t.json").read_text()
    (tmp_path / "t.json").write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"t\.json:\d+: invalid JSON"):
        Tokenizer.load(tmp_path / "t")
    small_tokenizer().save(tmp_path / "t")
    lines = (tmp_path / "t.tiktoken").read_text().splitlines(keepends=True)
    (tmp_path / "t.tiktoken").write_text("".join(lines[:-2]))
    with pytest.raises(ValueError, match=r"t\.tiktoken: its ranks disagree with the merges in .*t\.json"):
        load_file(tmp_path / "t")


def test_ranks_without_all_bytes_are_rejected():
    with pytest.raises(ValueError, match="lack 255 single bytes"):
        Tokenizer(parse_tiktoken("YQ== 0\n"))


def test_bad_json_fields(tmp_path):
    (tmp_path / "b.json").write_text(json.dumps({"name": "b", "merges": [[1, 2, 3]]}))
    with pytest.raises(ValueError, match="'merges' must be a list"):
        Tokenizer.load(tmp_path / "b.json")
    (tmp_path / "b.json").write_text(json.dumps({"name": "b", "merges": [], "special_tokens": {"x": "1"}}))
    with pytest.raises(ValueError, match="special_tokens"):
        Tokenizer.load(tmp_path / "b.json")
    with pytest.raises(FileNotFoundError):
        Tokenizer.load(tmp_path / "nothing")


def run_cli(*args: str, stdin: str | IO | int | None = None) -> subprocess.CompletedProcess:
    """The CLI in a fresh process; `stdin` is its text, or a file (or subprocess.DEVNULL) to read."""
    where = {"input": stdin} if stdin is None or isinstance(stdin, str) else {"stdin": stdin}
    return subprocess.run(
        [sys.executable, "-m", "tokenizer", *args],
        **where,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_cli_encode_decode_split_list(tmp_path):
    enc = get_encoding("o200k_base")
    result = run_cli("encode", "--encoding", "o200k_base", TEXT)
    assert result.returncode == 0, result.stderr
    ids = json.loads(result.stdout)
    assert ids == enc.encode(TEXT)
    result = run_cli("decode", "--encoding", "o200k_base", *map(str, ids))
    assert result.stdout == TEXT + "\n"
    result = run_cli("decode", "-e", "o200k_base", stdin=json.dumps(ids))
    assert result.stdout == TEXT + "\n"
    result = run_cli("split", "-e", "cl100k_base", "don't  stop")
    assert json.loads(result.stdout) == ["don", "'t", " ", " stop"]
    assert run_cli("list").stdout.split() == ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    small_tokenizer().save(tmp_path / "small")
    result = run_cli("encode", "--tokenizer", str(tmp_path / "small"), "--file", str(tmp_path / "in.txt"))
    assert json.loads(result.stdout) == small_tokenizer().encode(TEXT)


def test_cli_errors_exit_2_on_stderr(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"ok \xff\xfe")
    result = run_cli("encode", "--file", str(tmp_path / "bad.txt"))
    assert (
        result.returncode == 2
        and "not valid UTF-8 at byte offset 3 (FF FE); convert it to UTF-8" in result.stderr
    )
    (tmp_path / "utf16.txt").write_bytes("hello".encode("utf-16"))  # said only "at byte offset 0"
    for argv in (["encode", "--file"], ["train", "-v", "300", "-q", "-o", str(tmp_path / "t")]):
        result = run_cli(*argv, str(tmp_path / "utf16.txt"))
        assert result.returncode == 2 and "byte offset 0 (FF FE 68 00)" in result.stderr
        assert "UTF-16's byte-order mark: iconv -f UTF-16 -t UTF-8" in result.stderr
    result = run_cli("encode", "<|endoftext|>")
    assert result.returncode == 2 and "disallowed special token" in result.stderr
    assert json.loads(run_cli("encode", "--allow-special", "<|endoftext|>").stdout) == [100257]
    result = run_cli("decode", "-e", "gpt2", "12", "x")
    assert result.returncode == 2 and "ids must be integers" in result.stderr
    result = run_cli("encode", "--tokenizer", str(tmp_path / "missing"), "hi")
    assert result.returncode == 2 and "no tokenizer at" in result.stderr


def test_devices_and_pipes_are_refused_not_read(tmp_path):
    """A tokenizer file that is /dev/zero (here through a symlink) or a pipe, and text or a corpus
    that is /dev/zero, each hung: read until memory ran out, or blocked on the pipe."""
    (tmp_path / "zero.model").symlink_to("/dev/zero")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe.json")
    for name in ["zero.model", "zero.json", "zero", "pipe"]:
        with pytest.raises(ValueError, match=r"not a regular file \(a device, pipe or socket\)"):
            load_file(tmp_path / name)
    (tmp_path / "c.txt").write_text(TEXT, encoding="utf-8")
    out = str(tmp_path / "out")
    cases = [
        (["encode", "--file", "/dev/zero"], "/dev/zero: is a device, not a text file"),
        (
            ["encode", "--file", str(tmp_path / "pipe.json")],
            "pipe.json: is a named pipe (FIFO), not a text file",
        ),
        (["stats", "/dev/zero", "-t", "gpt2"], "/dev/zero: is a device, not a text file"),
        (["encode", "--tokenizer", str(tmp_path / "pipe"), "hi"], "pipe.json: not a regular file"),
        (["train", "/dev/zero", "-v", "300", "-q", "-o", out], "/dev/zero: not a regular file"),
        (["count", "/dev/zero", "-q", "-o", out], "/dev/zero: not a regular file"),
        (
            ["train", "--counts", str(tmp_path / "pipe.json"), "-v", "300", "-q", "-o", out],
            "pipe.json: not a regular file",
        ),
        (["extend", "gpt2", "/dev/zero", "--add", "3", "-q", "-o", out], "/dev/zero: not a regular file"),
        (["extend", "gpt2", str(tmp_path), "--add", "3", "-q", "-o", out], "is a directory; name its files"),
    ]
    for argv, message in cases:
        result = run_cli(*argv)
        assert result.returncode == 2 and message in result.stderr, (argv, result.stderr)
        assert "Traceback" not in result.stderr
    assert run_cli("encode", "--file", "-", stdin="hi").stdout == "[6151]\n"  # stdin still works
    assert run_cli("encode", "--file", "/dev/stdin", stdin="hi").stdout == "[6151]\n"  # a pipe, as <(...)


def test_files_that_report_size_zero_but_hold_text_are_refused(tmp_path):
    """/proc and /sys files say they are empty and are made as they are read: counted in byte
    ranges of that size, /proc/cpuinfo trained as an empty corpus, silently. An empty file is
    still an empty corpus, not an error."""
    out = str(tmp_path / "out")
    for argv in (
        ["train", "/proc/cpuinfo", "-v", "300", "-q", "-o", out],
        ["count", "/proc/self/status", "-q", "-o", out],
        ["count", "/proc/self/stat*", "-q", "-o", out],  # through a glob
    ):
        result = run_cli(*argv)
        assert result.returncode == 2 and "reports a size of 0 but holds text" in result.stderr, argv
        assert "cat /proc/" in result.stderr and "Traceback" not in result.stderr
    (tmp_path / "empty.txt").write_text("")
    assert "reports a size of 0" not in run_cli("count", str(tmp_path / "empty.txt"), "-q", "-o", out).stderr


def test_the_pattern_of_a_bare_tiktoken_is_checked(tmp_path, capsys):
    """export --pattern bogus (a typo) split with the regex 'bogus', which drops all but that
    word; '(a)' and '(?:a|a)+b' were taken unchecked too. The CLI takes names (as train's
    --pattern); the library still takes a regex, checked."""
    from tokenizer.cli import main

    small_tokenizer().save(tmp_path / "t")
    (tmp_path / "t.json").unlink()
    bare, out = str(tmp_path / "t.tiktoken"), str(tmp_path / "out.json")
    cases = [
        ("bogus", "unknown pattern name 'bogus'"),
        ("(a)", "1 capturing group"),
        ("(?:a|a)+b", "backtracks catastrophically"),
    ]
    for pattern, message in cases:
        assert main(["export", bare, "--pattern", pattern, "-o", out]) == 2
        assert message in capsys.readouterr().err
    for pattern, message in cases[1:]:
        with pytest.raises(ValueError, match=r"t\.tiktoken: its split pattern: .*" + re.escape(message)):
            load_file(bare, pattern=pattern)
    assert not (tmp_path / "out.json").exists()
    assert main(["export", bare, "--pattern", "cl100k_base", "-o", out]) == 0
    assert load_file(out).encode(TEXT) == Tokenizer.load(bare, pattern="cl100k").encode(TEXT)


def test_arguments_that_are_not_utf8_are_refused(tmp_path):
    """Undecodable argv bytes reach Python as lone surrogates: encode turned TEXT's into U+FFFD
    without a word, and --special, --regex or -o failed with a bare codec error. Input paths may
    be any name the file system allows."""
    (tmp_path / "c.txt").write_text(TEXT, encoding="utf-8")
    odd = tmp_path / os.fsdecode(b"odd\xff.txt")
    odd.write_text("hi", encoding="utf-8")
    train = ["train", str(tmp_path / "c.txt"), "-v", "300", "-q"]
    cases = [
        (["encode", os.fsdecode(b"a\xffb")], "TEXT: not valid UTF-8 (character 2 is an undecodable byte)"),
        (
            [*train, "-o", str(tmp_path / "t"), "--special", os.fsdecode(b"<\xff>")],
            "--special: not valid UTF-8",
        ),
        (
            [*train, "-o", str(tmp_path / "t"), "--regex", os.fsdecode(b"\xff+|\\S")],
            "--regex: not valid UTF-8",
        ),
        ([*train, "-o", str(tmp_path / os.fsdecode(b"t\xff"))], "choose a UTF-8 file name"),
    ]
    for argv, message in cases:
        result = subprocess.run(
            [sys.executable, "-m", "tokenizer", *map(os.fsencode, argv)],
            capture_output=True,
            cwd=ROOT,
            timeout=120,
        )
        stderr = result.stderr.decode("utf-8", "replace")
        assert result.returncode == 2 and message in stderr, (argv, stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["c.txt", odd.name])
    assert json.loads(run_cli("encode", "--file", str(odd)).stdout) == [6151]


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc/self/mem")
def test_a_file_that_fails_to_read_is_named(tmp_path):
    """A read that fails (here EIO: /proc/self/mem, unreadable even for root) said only
    "error: [Errno 5] Input/output error", naming no file."""
    (tmp_path / "mem.json").symlink_to("/proc/self/mem")
    cases = [
        (["encode", "--file", "/proc/self/mem"], "/proc/self/mem: Input/output error"),
        (["encode", "--tokenizer", str(tmp_path / "mem.json"), "hi"], "mem.json: Input/output error"),
        (
            ["train", "--counts", "/proc/self/mem", "-v", "300", "-q", "-o", str(tmp_path / "t")],
            "/proc/self/mem: Input",
        ),
    ]
    for argv, message in cases:
        result = run_cli(*argv)
        assert result.returncode == 2 and message in result.stderr, (argv, result.stderr)


def test_a_tokenizer_argument_that_names_no_file(capsys):
    """--tokenizer '' used cl100k_base without a word; '', '.' and '/' elsewhere said
    "PosixPath('.') has an empty name"."""
    from tokenizer.cli import main

    for argv in (["audit", "."], ["diff", "/", "gpt2"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "names no tokenizer file: give a saved tokenizer (STEM" in err, (argv, err)
    with pytest.raises(ValueError, match="'' names no tokenizer file"):
        load_file("")


def test_empty_file_arguments_are_refused(tmp_path, capsys):
    """'' as a file was "'': is a directory" (the current folder), and an empty --counts,
    --held-out or --tokenizer was taken as not given: --held-out '' skipped its report,
    --tokenizer '' encoded with cl100k_base."""
    from tokenizer.cli import main

    (tmp_path / "c.txt").write_text(TEXT, encoding="utf-8")
    corpus, out = str(tmp_path / "c.txt"), str(tmp_path / "out")
    cases = [
        (["encode", "--file", "", "x"], "--file: '' is empty; give a file name"),
        (["encode", "--tokenizer", "", "hi"], "--tokenizer: '' is empty"),
        (["train", "", "-v", "300", "-q", "-o", out], "FILES: '' is empty"),
        (["train", "--counts", "", "-v", "300", "-q", "-o", out], "--counts: '' is empty"),
        (
            ["extend", "gpt2", corpus, "--add", "1", "-q", "-o", out, "--held-out", ""],
            "--held-out: '' is empty",
        ),
        (["count", corpus, "-q", "-o", out, "--scheduler", ""], "--scheduler: '' is empty; give an address"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_a_tiktoken_file_with_a_byte_order_mark_loads_as_tiktoken_reads_it(tmp_path):
    """An editor's byte-order mark made the file 'not a .tiktoken file (non-ASCII byte at offset
    0)', where tiktoken's loader reads past it; the text form (the page's) skips it too."""
    ranks = get_encoding("gpt2").mergeable_ranks
    plain = "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in list(ranks.items())[:400])
    path = tmp_path / "bom.tiktoken"
    path.write_bytes(b"\xef\xbb\xbf" + plain.encode("ascii"))
    expected = tiktoken.load.load_tiktoken_bpe(str(path))
    assert load_file(path).mergeable_ranks == expected == parse_tiktoken("\ufeff" + plain)
    path.write_bytes(b"YQ== 0\n\xef\xbb\xbf")  # elsewhere it is still damage
    with pytest.raises(ValueError, match="non-ASCII byte at offset 7"):
        load_file(path)


def test_stdin_that_never_ends_or_is_closed_is_an_error():
    """`encode < /dev/zero` read until the memory was full (`--file /dev/zero` was refused), and
    `encode <&-` (stdin closed) was an AttributeError traceback; a pipe and /dev/null still read."""
    for command in (
        ["encode"],
        ["decode"],
        ["split"],
        ["encode", "--file", "-"],
        ["stats", "-", "-t", "gpt2"],
    ):
        with open("/dev/zero", "rb") as zero:
            result = run_cli(*command, stdin=zero)
        assert result.returncode == 2, (command, result.stderr)
        assert "stdin is a device (such as /dev/zero), not text" in result.stderr
        result = subprocess.run(  # the shell closes stdin, then runs the command
            ["sh", "-c", 'exec "$0" -m tokenizer "$@" <&-', sys.executable, *command],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert result.returncode == 2 and "stdin is closed; give the text" in result.stderr, (
            command,
            result.stderr,
        )
        assert "Traceback" not in result.stderr
    assert run_cli("decode", "-e", "gpt2", stdin="31373 995").stdout == "hello world\n"
    empty = run_cli("encode", stdin=subprocess.DEVNULL)
    assert empty.returncode == 0 and empty.stdout == "[]\n"


def test_a_folder_as_tokenizer_says_which_file_to_give(tmp_path):
    """A Hugging Face model folder is what people have: `audit hf_model` said "no tokenizer at
    hf_model (looked for hf_model.json and hf_model.tiktoken)", silent on the tokenizer.json
    inside it."""
    folder = tmp_path / "hf_model"
    folder.mkdir()
    with pytest.raises(
        FileNotFoundError, match=r"hf_model is a folder, not a tokenizer: give a tokenizer file"
    ):
        load_file(folder)
    (folder / "tokenizer.json").write_text("{}")
    with pytest.raises(
        FileNotFoundError, match=r"hf_model is a folder, not a tokenizer: give .*tokenizer\.json"
    ):
        load_file(folder)
    result = run_cli("audit", str(folder))
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert f"give {folder / 'tokenizer.json'}" in result.stderr


def test_cli_encode_matches_hfs_plain_added_tokens_by_default(tmp_path):
    """A tokenizer.json with GPT-NeoX's added runs of spaces ("special": false): `encode` of
    indented code said "the text holds the disallowed special token '    '"; HF matches them in
    any text. Now the default gives HF's ids, and a real special token is still refused."""
    hf = pytest.importorskip("tokenizers")
    tok = hf.Tokenizer(hf.models.BPE())
    tok.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = hf.trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(["def f(x):\n    return x + 1\n" * 20], trainer)
    tok.add_tokens([hf.AddedToken(" " * n, normalized=True) for n in (2, 4, 8)])
    tok.add_special_tokens(["<|endoftext|>"])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    text = "def g(y):\n        return  y"
    result = run_cli("encode", "-t", str(path), text)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == tok.encode(text).ids
    result = run_cli("encode", "-t", str(path), text + "<|endoftext|>")
    assert result.returncode == 2 and "special token '<|endoftext|>'" in result.stderr


def test_a_tiktoken_file_is_split_into_lines_and_fields_as_tiktokens_loader_splits_it(tmp_path, monkeypatch):
    """str.splitlines and str.split also break at form feed, \\x1c..\\x1f, NEL, U+2028 and
    no-break space, where tiktoken's loader (bytes.splitlines, bytes.split) breaks only at \\n,
    \\r and ASCII whitespace: 'YWI= 256' + form feed + 'YmM= 257' loaded as two tokens, a file
    tiktoken refuses. Now a file loads exactly when tiktoken's loader reads it, with its ranks."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # else tiktoken reads a path's first content again
    byte_lines = "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))
    path = tmp_path / "x.tiktoken"
    for tail in ("YWI=\x0b256\n", "YWI=\x0c256\r\nYmM= 257\r"):  # tiktoken reads these
        path.write_bytes((byte_lines + tail).encode("ascii"))
        expected = tiktoken.load.load_tiktoken_bpe(str(path))
        assert load_file(path).mergeable_ranks == expected == parse_tiktoken(byte_lines + tail)
    for tail in ("YWI= 256\x0cYmM= 257\n", "YWI= 256\x1cYmM= 257\n", "YWI=\x1f256\n"):  # and refuses these
        path.write_bytes((byte_lines + tail).encode("ascii"))
        with pytest.raises(ValueError):
            tiktoken.load.load_tiktoken_bpe(str(path))
        with pytest.raises(ValueError, match=r"x\.tiktoken:257: expected 'BASE64 RANK'"):
            load_file(path)
        with pytest.raises(ValueError, match=r"x\.tiktoken:257: expected 'BASE64 RANK'"):
            parse_tiktoken(byte_lines + tail, "x.tiktoken")
    for tail in ("YWI=\u00a0256\n", "YWI= 256\u2028YmM= 257\n", "YWI= 256\x85YmM= 257\n"):  # the page's text
        with pytest.raises(ValueError, match=r"x\.tiktoken:257: non-ASCII character U\+00(A0|85)|U\+2028"):
            parse_tiktoken(byte_lines + tail, "x.tiktoken")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_tokenizer_file_in_utf16_is_named_with_the_fix(tmp_path, encoding):
    """A tokenizer saved as UTF-16 (Windows editors' 'Unicode') was 'not UTF-8 text (byte offset
    0)', 'non-ASCII byte at offset 0' or, without a byte-order mark, 'x.tiktoken:1: expected
    'BASE64 RANK', got 'Y\\x00Q\\x00...'': true, but none said what the file is or what to do."""
    small_tokenizer().save(tmp_path / "s")
    (tmp_path / "s.model").write_text(minbpe_text(small_tokenizer()), encoding="utf-8")
    for name in ("s.tiktoken", "s.json", "s.model"):
        path = tmp_path / name
        path.write_bytes(path.read_text(encoding="utf-8").encode(encoding))
        with pytest.raises(
            ValueError, match=rf"{re.escape(name)}: UTF-16 or UTF-32 text .*: save it as UTF-8"
        ):
            load_file(path)
        path.unlink()
    (tmp_path / "zeros.tiktoken").write_bytes(bytes(2**20))
    with pytest.raises(ValueError, match=r"zeros\.tiktoken: UTF-16 or UTF-32 text \(or a binary file\)"):
        load_file(tmp_path / "zeros.tiktoken")


def test_a_broken_symbolic_link_is_named_as_one(tmp_path):
    """A link whose target was moved said "no tokenizer at x.tiktoken (looked for x.json and
    x.tiktoken)", though x.tiktoken is right there in `ls`; a loop of links said the same."""
    (tmp_path / "x.tiktoken").symlink_to(tmp_path / "moved.tiktoken")
    (tmp_path / "a.model").symlink_to(tmp_path / "b.model")
    (tmp_path / "b.model").symlink_to(tmp_path / "a.model")
    for name, target in (("x.tiktoken", "moved.tiktoken"), ("x", "moved.tiktoken"), ("a.model", "b.model")):
        with pytest.raises(
            FileNotFoundError, match=rf"is a symbolic link to .*{target}, which does not exist"
        ):
            load_file(tmp_path / name)
        result = run_cli("encode", "--tokenizer", str(tmp_path / name), "hi")
        assert (
            result.returncode == 2 and "symbolic link" in result.stderr and "Traceback" not in result.stderr
        )

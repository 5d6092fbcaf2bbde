"""The command line package: entry points, exit codes, `encode --special`, progress bars."""

from __future__ import annotations

import importlib
import json
import os
import re
import tomllib
from pathlib import Path

import pytest
import setuptools

from tests.helpers import ROOT
from tests.oracles import tiktoken_reference
from tokenizer import Tokenizer, cli
from tokenizer.cli import build_parser, main
from tokenizer.cli.count import engine_choice
from tokenizer.cli.progress import progress_bars

SPECIAL_TEXT = "hi <|endoftext|> there"


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_console_script_is_the_same_main_as_python_dash_m():
    module, _, attr = pyproject()["project"]["scripts"]["bpe-playground"].partition(":")
    assert getattr(importlib.import_module(module), attr) is main
    assert importlib.import_module("tokenizer.__main__").main is main


def test_the_wheel_ships_the_cli_package():
    found = pyproject()["tool"]["setuptools"]["packages"]["find"]
    packages = setuptools.find_packages(where=str(ROOT), include=found["include"])
    assert {"tokenizer", "tokenizer.cli"} <= set(packages)


def test_every_command_module_is_registered_in_order():
    sub = build_parser()._subparsers._group_actions[0]
    core = ["list", "encode", "decode", "split", "train", "count", "export", "classic"]
    assert [c for c in sub.choices if c in core] == core  # in the order --help always listed them
    for name in cli.COMMAND_MODULES:
        assert callable(importlib.import_module(f"tokenizer.cli.{name}").add_commands)


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_encode_special_text_allow_raise(encoding, capsys):
    ref = tiktoken_reference(encoding)
    assert main(["encode", "-e", encoding, "--special", "text", SPECIAL_TEXT]) == 0
    assert json.loads(capsys.readouterr().out) == ref.encode(SPECIAL_TEXT, disallowed_special=())
    for flags in (["--special", "allow"], ["--allow-special"]):
        assert main(["encode", "-e", encoding, *flags, SPECIAL_TEXT]) == 0
        assert json.loads(capsys.readouterr().out) == ref.encode(SPECIAL_TEXT, allowed_special="all")
    for flags in (["--special", "raise"], []):
        assert main(["encode", "-e", encoding, *flags, SPECIAL_TEXT]) == 2
        assert "disallowed special token '<|endoftext|>'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["encode", "--special", "ignore", SPECIAL_TEXT])
    capsys.readouterr()
    # `--special text --allow-special` encoded the token as its id (the last flag won), and
    # `--allow-special --special raise` raised: contradictory flags are a usage error now
    for flags in (["--special", "text", "--allow-special"], ["--allow-special", "--special", "raise"]):
        with pytest.raises(SystemExit) as exit_:
            main(["encode", "-e", encoding, *flags, SPECIAL_TEXT])
        assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_a_disallowed_special_token_is_one_line_naming_the_flags(capsys):
    """The error was tiktoken's four lines telling to pass `allowed_special=` (a Python argument)."""
    assert main(["encode", "x <|endoftext|>"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'<|endoftext|>' at character 3" in err
    assert "--special allow" in err and "--special text" in err


def test_errors_exit_2_and_an_interrupt_exits_130(monkeypatch, capsys):
    assert main(["decode", "1", "x"]) == 2
    assert capsys.readouterr().err.startswith("error: ids must be integers")

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("tokenizer.cli.encode.cmd_list", interrupted)
    assert main(["list"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_count_engine_choice():
    parser = build_parser()

    def choice(*argv: str) -> tuple[str, str | None]:
        return engine_choice(parser.parse_args(["count", "corpus.txt", "-o", "t.counts", *argv]))

    assert choice() == ("local", None)
    assert choice("--scheduler", "tcp://h:8786") == ("dask", "tcp://h:8786")  # a scheduler means dask
    assert choice("--engine", "dask") == ("dask", None)  # a local Dask cluster
    with pytest.raises(ValueError, match="--scheduler is for --engine dask"):
        choice("--engine", "local", "--scheduler", "tcp://h:8786")
    with pytest.raises(SystemExit):
        choice("--engine", "spark")


def frames(err: str) -> list[str]:
    return [f for f in re.split(r"[\r\n]|\x1b\[A", err) if f.strip()]


def test_bars_one_phase_at_a_time_with_the_phase_s_own_rate(capsys):
    with progress_bars() as progress:
        progress("count", 50_000_000, 100_000_000, 10_000_000.0, 5.0)  # first report, 5 s in
        progress("count", 100_000_000, 100_000_000, 10_000_000.0, 0.0)
        progress("merge", 10, 1000, 100.0, 9.9)
        progress("merge", 1000, 1000, 400.0, 0.0)
    shown = frames(capsys.readouterr().err)
    count = [f for f in shown if f.startswith("count")]
    merge = [f for f in shown if f.startswith("merge")]
    last_count = max(i for i, f in enumerate(shown) if f.startswith("count"))
    assert last_count < min(i for i, f in enumerate(shown) if f.startswith("merge"))  # no interleaving
    # back-dated to the phase's start: 50 MB done at 10 MB/s leaves 5 s, not tqdm's guess
    assert "[00:05<00:05" in count[0] and "10.0MB/s" in count[0], count[0]
    assert all("<" not in f for f in merge), merge  # no time-left estimate for merges
    assert "1000/1000" in merge[-1]


def test_quiet_means_no_callback():
    with progress_bars(quiet=True) as progress:
        assert progress is None


@pytest.mark.parametrize("command", ["train", "count", "extend", "stats"])
def test_workers_are_bounded_before_any_process_starts(tmp_path, capsys, command):
    """--workers 100000 forked until the system ran out of processes; now exit 2 at once."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 20, encoding="utf-8")
    argv = {
        "train": ["train", str(corpus), "-v", "300", "-q", "-o", str(tmp_path / "t")],
        "count": ["count", str(corpus), "-q", "-o", str(tmp_path / "c.gz")],
        "extend": ["extend", "gpt2", str(corpus), "--add", "5", "-q", "-o", str(tmp_path / "e")],
        "stats": ["stats", str(corpus), "-t", "gpt2"],
    }[command]
    assert main([*argv, "--workers", "100000"]) == 2
    assert "workers must be an integer from 1 to 256, got 100000" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_missing_output_folders_are_made(tmp_path, capsys, monkeypatch):
    """-o out/sub/NAME makes out/sub first, as `mkdir -p` would (it was an error: the folder
    does not exist), for every command that writes a file; the nearest existing folder must
    be writable, and nothing is made when the command stops before its work."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("hello world " * 20, encoding="utf-8")
    runs = [
        (["train", "c.txt", "-v", "300", "-q", "-o", "a/b/t"], ["a/b/t.tiktoken", "a/b/t.json"]),
        (["extend", "gpt2", "c.txt", "--add", "3", "-q", "-o", "e/x"], ["e/x.tiktoken", "e/x.json"]),
        (["count", "c.txt", "-q", "-o", "n/c.gz"], ["n/c.gz"]),
        (["export", "gpt2", "-o", "h/tokenizer.json"], ["h/tokenizer.json"]),
        (["classic", "learn", "c.txt", "-s", "5", "-o", "l/codes"], ["l/codes"]),
    ]
    for argv, made in runs:
        assert main(argv) == 0, (argv, capsys.readouterr().err)
        assert all((tmp_path / name).is_file() for name in made), argv
    assert main(["classic", "apply", "c.txt", "-c", "l/codes", "-o", "p/q/out"]) == 0
    assert (tmp_path / "p/q/out").is_file()
    capsys.readouterr()
    assert main(["train", "c.txt", "-v", "100", "-q", "-o", "z/t"]) == 2  # a bad argument: no folder made
    assert not (tmp_path / "z").exists()


def test_train_and_extend_take_quoted_globs_as_count_does(tmp_path, capsys, monkeypatch):
    """`train 'data/*.txt'` said the corpus file was not found; count expanded the same glob.
    The files are read in sorted order, so the merges equal those of the files named one by one."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    for name, text in [("b.txt", "hello there " * 30), ("a.txt", "low lower lowest " * 30)]:
        (tmp_path / "data" / name).write_text(text, encoding="utf-8")
    assert main(["train", "data/*.txt", "-v", "280", "-q", "-o", "g"]) == 0
    assert main(["train", "data/a.txt", "data/b.txt", "-v", "280", "-q", "-o", "n"]) == 0
    assert Tokenizer.load("g").merges == Tokenizer.load("n").merges
    assert main(["extend", "gpt2", "data/*.txt", "--add", "3", "-q", "-o", "e"]) == 0
    assert main(["train", "nothing/*.txt", "-v", "280", "-q", "-o", "x"]) == 2
    assert "no files match 'nothing/*.txt'" in capsys.readouterr().err


def test_outputs_are_checked_before_any_work(tmp_path, capsys, monkeypatch):
    """A bad output failed only when the result was saved (after the whole training), naming
    a temp file; `-o folder/` wrote folder.tiktoken beside the folder; `-o ''` said
    "PosixPath('.') has an empty name"; `-o dir` of a file command named a temp file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("hello world " * 20, encoding="utf-8")
    (tmp_path / "folder").mkdir()
    (tmp_path / "t.json").mkdir()
    trains = ["train", "c.txt", "-v", "300", "-q"]
    cases = [
        ([*trains, "-o", "folder/"], "-o 'folder/' names no file: give a file name stem"),
        ([*trains, "-o", ""], "-o '' names no file"),
        ([*trains, "-o", "t"], "-o t: t.json is a directory"),
        (["count", "c.txt", "-q", "-o", "folder"], "-o folder: folder is a directory; give a file name"),
        # was "the folder c.txt does not exist; create it first (mkdir -p c.txt)"
        (
            ["count", "c.txt", "-q", "-o", "c.txt/c.gz"],
            "-o c.txt/c.gz: c.txt is a file, not a folder; write into",
        ),
        (
            ["count", "c.txt", "-q", "-o", "c.txt/new/c.gz"],
            "-o c.txt/new/c.gz: c.txt is a file, not a folder",
        ),
        (["classic", "learn", "c.txt", "-s", "5", "-o", "folder"], "folder is a directory"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "folder", "t.json"]
    assert not any((tmp_path / "folder").iterdir()) and not any((tmp_path / "t.json").iterdir())
    # -o STEM.json is the stem, as Tokenizer.save takes it: the report and the name say so
    assert main([*trains, "-o", "folder/tok.json"]) == 0
    assert "-> folder/tok.tiktoken, folder/tok.json" in capsys.readouterr().err
    assert json.loads((tmp_path / "folder" / "tok.json").read_text())["name"] == "tok"


def test_a_regex_given_to_train_pattern_warns_as_train_regex(tmp_path, capsys):
    """train -p '\\p{L}+' (a regex where the README says names go) trained silently, dropping every
    space and comma, while train --regex '\\p{L}+' warned with the share it drops; -p '\\X' also
    skipped the warning that the page cannot run it. A regex in --pattern is now --regex."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello, world " * 20, encoding="utf-8")
    trains = ["train", str(corpus), "-v", "260", "-q"]
    for flag in ("--regex", "-p"):
        assert main([*trains, flag, r"\p{L}+", "-o", str(tmp_path / "letters")]) == 0
        assert "warning: the split regex does not match" in capsys.readouterr().err, flag
        assert main([*trains, flag, r"\X", "-o", str(tmp_path / "graphemes")]) == 0
        assert "the playground page cannot run this split regex" in capsys.readouterr().err, flag
    assert main([*trains, "-p", "cl100k_base", "-o", str(tmp_path / "named")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_custom_regexes_of_count_are_checked_as_train_s(tmp_path, capsys):
    """count -p REGEX skipped the checks of train --regex: a catastrophic regex hung, one that
    drops all the text gave an empty table without a word, and -p '' counted with gpt4."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 20, encoding="utf-8")
    count = ["count", str(corpus), "-q", "-o", str(tmp_path / "c.gz"), "-p"]
    assert main([*count, r"(?:a|a)+b|\s+|\S"]) == 2
    assert "backtracks catastrophically" in capsys.readouterr().err
    assert main([*count, ""]) == 2
    assert "the split regex is empty" in capsys.readouterr().err
    assert main([*count, "z+"]) == 0  # a+$ was quadratic (a run of a's not at the end): refused now
    assert "warning: the split regex does not match 100.0% of the sample" in capsys.readouterr().err
    assert (
        main(
            ["train", str(corpus), "-v", "300", "-q", "-o", str(tmp_path / "t"), "--regex", r"(?:a|aa)*b|\S"]
        )
        == 2
    )
    assert "backtracks catastrophically" in capsys.readouterr().err


def test_an_output_that_is_an_input_is_refused(tmp_path, capsys, monkeypatch):
    """`count c.txt -o c.txt`, `classic learn/apply IN -o IN`, `export t -o t.json`, `extend t
    ... -o t` and `train a.json -o a` replaced their own input with the result."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("hello world " * 20, encoding="utf-8")
    (tmp_path / "a.json").write_text("hello world " * 20, encoding="utf-8")
    os.link(tmp_path / "c.txt", tmp_path / "hard.txt")
    assert main(["train", "c.txt", "-v", "260", "-q", "-o", "t"]) == 0
    assert main(["classic", "learn", "c.txt", "-s", "3", "-o", "codes"]) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    capsys.readouterr()
    cases = [
        (
            ["count", "c.txt", "-q", "-o", "hard.txt"],
            "-o hard.txt: hard.txt is also an input of this command (as c.txt)",
        ),
        (["classic", "learn", "c.txt", "-s", "3", "-o", "c.txt"], "-o c.txt: c.txt is also an input"),
        (["classic", "apply", "c.txt", "-c", "codes", "-o", "codes"], "-o codes: codes is also an input"),
        (["export", "t", "-o", "t.json"], "-o t.json: t.json is also an input"),
        (["extend", "t", "c.txt", "--add", "3", "-q", "-o", "t"], "t.tiktoken is also an input"),
        (
            ["extend", "gpt2", "c.txt", "--add", "3", "-q", "--held-out", "a.json", "-o", "a"],
            "a.json is also",
        ),
        (["train", "a.json", "-v", "260", "-q", "-o", "a"], "-o a: a.json is also an input of this command;"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    # a reference encoding's name reads no file: exporting it again over its export is fine
    assert main(["export", "gpt2", "-o", "gpt2.json"]) == 0
    assert main(["export", "gpt2", "-o", "gpt2.json"]) == 0


def test_an_output_that_is_not_a_file_is_refused(tmp_path, capsys, monkeypatch):
    """A save writes a new file and renames it over the output: `count -o /dev/null` run as root
    replaced the device by a regular file, `-o /dev/stdout` (a link) the link."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("hello world " * 20, encoding="utf-8")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to("c.txt")
    cases = [
        (
            ["count", "c.txt", "-q", "-o", "fifo"],
            "-o fifo: fifo is a device, pipe or socket, which a save would replace",
        ),
        (
            ["classic", "learn", "c.txt", "-s", "3", "-o", "link"],
            "-o link: link is a symbolic link; a save replaces",
        ),
        (
            ["export", "gpt2", "-o", "link"],
            f"give the file's own path ({os.path.realpath(tmp_path / 'c.txt')})",
        ),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert (tmp_path / "link").is_symlink() and (tmp_path / "fifo").is_fifo()


def test_an_output_folder_that_cannot_be_written_is_refused_before_the_work(tmp_path, capsys, monkeypatch):
    """A read-only folder failed only at the save, after the whole training. (os.access is what
    says so: root may write into a chmod 555 folder, not onto a read-only file system.)"""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("hello world " * 20, encoding="utf-8")
    (tmp_path / "ro").mkdir()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda path, mode: os.path.basename(path) != "ro" and real_access(path, mode)
    )
    trained = []
    monkeypatch.setattr("tokenizer.cli.train.train", lambda *a, **k: trained.append(1))
    assert main(["train", "c.txt", "-v", "300", "-q", "-o", "ro/t"]) == 2
    assert "-o ro/t: the folder ro cannot be written to (a read-only file system" in capsys.readouterr().err
    assert not trained


def test_a_full_disk_names_the_file_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    """`export gpt2 -o g.json` on a full disk said 'error: [Errno 28] No space left on device',
    naming no file."""
    import errno

    from tokenizer import formats

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(formats.os, "fsync", full)
    out = tmp_path / "g.json"
    for argv in (["export", "gpt2", "-o", str(out)], ["count", __file__, "-q", "-o", str(out)]):
        assert main(argv) == 2
        assert (
            f"error: {out}: No space left on device (free some space, or write elsewhere)"
            in capsys.readouterr().err
        )
        assert list(tmp_path.iterdir()) == []


def test_dash_as_output_is_stdout_or_refused_never_a_file_named_dash(tmp_path, capsys, monkeypatch):
    """`export t -o -`, `count c.txt -o -` and `train ... -o -` wrote files named '-' (and
    '-.tiktoken'), `classic apply -o -` too, where `classic learn -o -` writes to stdout."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("hello world " * 20, encoding="utf-8")
    cases = [
        (["export", "gpt2", "-o", "-"], "-o -: this command writes files, not stdout; give a file name"),
        (
            ["count", "c.txt", "-q", "-o", "-"],
            "-o -: this command writes files, not stdout; give a file name",
        ),
        (["train", "c.txt", "-v", "300", "-q", "-o", "-"], "give a file name stem, e.g. my_tok (./- for"),
        (["extend", "gpt2", "c.txt", "--add", "3", "-q", "-o", "-"], "-o -: this command writes files"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert main(["classic", "learn", "c.txt", "-s", "5", "-o", "-"]) == 0
    codes = capsys.readouterr().out
    (tmp_path / "codes").write_text(codes, encoding="utf-8")
    assert main(["classic", "apply", "c.txt", "-c", "codes", "-o", "-"]) == 0
    assert " world " in capsys.readouterr().out  # on stdout, not in a file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "codes"]


def test_count_refuses_a_pattern_name_typo_as_train_does(tmp_path, capsys):
    """`count -p gpt5` (or GPT4) counted with the regex 'gpt5': a warning that it drops all the
    text, then an empty table and exit 0, and `train --counts` on it learnt nothing; issue 17's
    reproduction, fixed in train, lived on in count."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 20, encoding="utf-8")
    count = ["count", str(corpus), "-q", "-o", str(tmp_path / "c.gz"), "-p"]
    for typo in ("gpt5", "GPT4", "cl100k-base"):
        assert main([*count, typo]) == 2
        assert f"-p {typo!r} is not a pattern name (gpt2, gpt4, o200k, none" in capsys.readouterr().err
    assert not (tmp_path / "c.gz").exists()
    for fine in ("cl100k_base", "none", r"\w+|\s+|\S"):
        assert main([*count, fine]) == 0, fine


def test_a_reader_that_stops_early_is_no_error(tmp_path):
    """`encode -f big.txt | head -c 10` printed 'error: [Errno 32] Broken pipe' (naming nothing)
    and exited 2; it now stops quietly with the shell's SIGPIPE status, as `yes | head` does."""
    import subprocess
    import sys

    text = tmp_path / "big.txt"
    text.write_text("hello world " * 200_000, encoding="utf-8")  # ids far past a pipe's buffer
    proc = subprocess.Popen(
        [sys.executable, "-m", "tokenizer", "encode", "-e", "gpt2", "-f", str(text)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.read(10) == b"[31373, 99"
    proc.stdout.close()  # as head does once it has its bytes
    assert proc.wait(timeout=120) == 141
    assert proc.stderr.read() == b""


def test_file_names_that_are_not_utf8_do_not_break_the_save(tmp_path, capsys):
    """`extend` of a bare .tiktoken, a .model or a tokenizer.json whose name is not UTF-8, or
    with such a --held-out file, learnt its merges and then failed to save them: "'utf-8' codec
    can't encode character '\\udcff'", naming no file (the base's name and the held-out file go
    into the .json). Such names are now read as text with U+FFFD for the bytes."""
    from tokenizer.formats import write_tiktoken

    base = Tokenizer.from_merges([(104, 105)], "gpt4")
    bare = tmp_path / os.fsdecode(b"b\xff.tiktoken")
    write_tiktoken(bare, base.mergeable_ranks)
    corpus = tmp_path / os.fsdecode(b"c\xff.txt")
    corpus.write_text("hello world " * 20, encoding="utf-8")
    out = tmp_path / "out"
    assert (
        main(
            ["extend", str(bare), str(corpus), "--held-out", str(corpus), "--add", "3", "-q", "-o", str(out)]
        )
        == 0
    )
    ext = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["metadata"]["extension"]
    assert ext["base"] == "b\ufffd" and ext["held_out"]["file"] == str(tmp_path / "c\ufffd.txt")
    assert Tokenizer.load(bare).name == "b\ufffd"


def test_tens_of_thousands_of_options_are_refused_before_argparse(tmp_path, capsys):
    """70,000 `--special` flags ran for minutes in argparse (its time grows with the square of
    the options) before any check; thousands of FILE arguments are no options and still read."""
    import time

    specials = [f"--special=<{i}>" for i in range(70_000)]
    start = time.perf_counter()
    assert main(["train", "c.txt", "-v", "300", "-q", "-o", str(tmp_path / "t"), *specials]) == 2
    assert time.perf_counter() - start < 1
    assert "70,003 options on one command line; at most 5,000 are read" in capsys.readouterr().err
    files = [str(tmp_path / f"f{i}.txt") for i in range(6_000)]
    for name in files:
        Path(name).write_text("hello world ", encoding="utf-8")
    assert main(["count", *files, "-q", "-o", str(tmp_path / "c.gz")]) == 0


def test_the_description_names_no_stale_list_of_commands():
    """--help's description listed 8 of the 12 commands (not extend, audit, stats, diff)."""
    sub = build_parser()._subparsers._group_actions[0]
    listed = re.findall(r"\{([a-z,]+)\}", cli.DESCRIPTION)
    assert all(set(group.split(",")) == set(sub.choices) for group in listed)


@pytest.mark.parametrize("text", ["-hello", "-h1", "-help"])
def test_text_that_reads_as_help_is_an_error_saying_to_use_double_dash(capsys, text):
    """`encode -e cl100k_base "-hello"` printed the help and exited 0: no ids, no error."""
    assert main(["encode", "-e", "cl100k_base", text]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "put -- before it" in captured.err and text in captured.err
    assert main(["encode", "-e", "cl100k_base", "--", text]) == 0
    assert json.loads(capsys.readouterr().out) == tiktoken_reference("cl100k_base").encode(text)


@pytest.mark.parametrize(
    "argv, flag",
    [
        (
            ["count", "{corpus}", "--max-chunks", "0", "-o", "{out}"],
            "--max-chunks must be an integer >= 2, got 0",
        ),
        (
            ["count", "{corpus}", "--min-chunk-count", "0", "-o", "{out}"],
            "--min-chunk-count must be an integer",
        ),
        (["train", "{corpus}", "--vocab-size", "100", "-o", "{out}"], "--vocab-size must be between 256"),
    ],
)
def test_a_bad_option_value_names_the_flag(tmp_path, capsys, argv, flag):
    """The library's "max_chunks must be ..." reached the user, who had typed --max-chunks."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world hello\n", encoding="utf-8")
    argv = [a.format(corpus=corpus, out=tmp_path / "out") for a in argv]
    assert main(argv) == 2
    assert f"error: {flag}" in capsys.readouterr().err


INTEGER_OPTIONS = [  # (the command line, where {n} is the number) for every integer option here
    ["train", "{corpus}", "--vocab-size", "{n}", "-q", "-o", "{out}"],
    ["train", "{corpus}", "-v", "300", "--workers", "{n}", "-q", "-o", "{out}"],
    ["train", "{corpus}", "-v", "300", "--min-frequency", "{n}", "-q", "-o", "{out}"],
    ["train", "{corpus}", "-v", "300", "--min-chunk-count", "{n}", "-q", "-o", "{out}"],
    ["train", "{corpus}", "-v", "300", "--max-chunks", "{n}", "-q", "-o", "{out}"],
    ["count", "{corpus}", "--workers", "{n}", "-q", "-o", "{out}"],
    ["count", "{corpus}", "--min-chunk-count", "{n}", "-q", "-o", "{out}"],
    ["count", "{corpus}", "--max-chunks", "{n}", "-q", "-o", "{out}"],
    ["extend", "gpt2", "{corpus}", "--add", "{n}", "-q", "-o", "{out}"],
    ["extend", "gpt2", "{corpus}", "--add", "5", "--min-frequency", "{n}", "-q", "-o", "{out}"],
    ["extend", "gpt2", "{corpus}", "--add", "5", "--workers", "{n}", "-q", "-o", "{out}"],
    ["stats", "{corpus}", "-t", "gpt2", "--workers", "{n}"],
    ["stats", "{corpus}", "-t", "gpt2", "--sweep", "{n}"],
    ["stats", "{corpus}", "-t", "gpt2", "--sweep", "1000,{n}"],
]


@pytest.mark.parametrize("argv", INTEGER_OPTIONS, ids=lambda argv: "-".join(a for a in argv if a[0] == "-"))
@pytest.mark.parametrize("number", ["٣٠٠", "３００", "3_00", "1e3", "9" * 5000])
def test_integer_options_take_ascii_digits_only(tmp_path, capsys, argv, number):
    """int() reads '٣٠٠' (Arabic-Indic) and '３００' (fullwidth) as 300 and '3_00' as 300 too:
    `train --vocab-size ٣٠٠` trained 300 without a word, where `decode ٣٠٠` and the server's
    form refuse those spellings. Now each is a usage error naming the option, before any work;
    so is a number past int()'s 4,300 digits, which argparse called an "invalid int value"."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 20, encoding="utf-8")
    argv = [a.format(corpus=corpus, out=tmp_path / "out", n=number) for a in argv]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    option = next(a for a in argv if a.startswith("--") and number in argv[argv.index(a) + 1])
    assert f"argument {option}" in err and "write it with the digits 0-9" in err, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


@pytest.mark.parametrize("number", ["300", "+300", " 300 "])
def test_integer_options_still_take_plain_numbers(tmp_path, capsys, number):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 20, encoding="utf-8")
    assert main(["train", str(corpus), "-v", number, "-q", "-o", str(tmp_path / "t")]) == 0
    assert Tokenizer.load(tmp_path / "t").metadata["training"]["vocab_size"] == 300


def test_extend_reads_its_corpus_from_stdin_as_dash_as_train_does(tmp_path):
    """`zcat src.gz | extend cl100k_base - --add N` said "corpus file not found: -", the very
    message train and count gave before they read '-' as stdin; extend now does too: the same
    result as the file, stdin's bad UTF-8 named, and '-' twice (a FILE and --held-out) refused."""
    import subprocess
    import sys

    text = "the cat sat on the mat with the hat " * 50
    corpus = tmp_path / "c.txt"
    corpus.write_text(text, encoding="utf-8")

    def run(*args: str, stdin: bytes) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "tokenizer", "extend", "gpt2", *args, "--add", "5", "-q"]
        return subprocess.run(command, input=stdin, capture_output=True, cwd=ROOT, check=False, timeout=120)

    for stem, source in [("piped", "-"), ("file", str(corpus))]:
        done = run(source, "-o", str(tmp_path / stem), stdin=text.encode())
        assert done.returncode == 0, done.stderr.decode()
    assert Tokenizer.load(tmp_path / "piped").merges == Tokenizer.load(tmp_path / "file").merges
    bad = run("-", "-o", str(tmp_path / "x"), stdin=b"ok\n\xff")
    assert bad.returncode == 2
    assert "error: stdin: not valid UTF-8 at byte offset 3 (FF)" in bad.stderr.decode()
    twice = run("-", "--held-out", "-", "-o", str(tmp_path / "x"), stdin=b"ab")
    assert twice.returncode == 2 and "'-' (stdin) is given twice" in twice.stderr.decode()
    assert not list(tmp_path.glob("x*"))


def test_max_chunks_with_counts_names_the_flag_and_the_fix(tmp_path, capsys):
    """`train --counts t.gz --max-chunks N` said "max_chunks bounds counting; given counts were
    counted already": the library's keyword, and no way out. It names the flag and where it goes."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world hello\n" * 20, encoding="utf-8")
    assert main(["count", str(corpus), "-q", "-o", str(tmp_path / "c.gz")]) == 0
    capsys.readouterr()
    argv = ["train", "--counts", str(tmp_path / "c.gz"), "-v", "300", "--max-chunks", "5", "-q"]
    assert main([*argv, "-o", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --max-chunks ") and "count --max-chunks" in err, err
    assert not list(tmp_path.glob("t.*"))


def test_tokenizer_flag_takes_a_reference_encoding_name_too(capsys):
    """`encode -t cl100k_base` said "no tokenizer at cl100k_base", while `audit -t cl100k_base`
    and `stats -t cl100k_base` read the name: -t now means the same in every command."""
    assert main(["encode", "-t", "cl100k_base", "hello world"]) == 0
    assert json.loads(capsys.readouterr().out) == [15339, 1917]
    assert main(["decode", "-t", "cl100k_base", "[15339, 1917]"]) == 0
    assert capsys.readouterr().out == "hello world\n"

"""`python -m tokenizer audit|stats|diff`: the JSON equals the library's (checked against
tiktoken in test_audit/test_stats/test_vocab_diff), tables are printed, bad input exits 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.helpers import CORPORA, ROOT, corpus_text
from tests.oracles import tiktoken_reference
from tokenizer import Tokenizer, get_encoding, train
from tokenizer.audit import audit
from tokenizer.cli import main
from tokenizer.hf_export import export_hf
from tokenizer.stats import language_rows, udhr_sections
from tokenizer.vocab_diff import diff

TAYLOR = str(CORPORA / "taylorswift.txt")
UDHR = str(CORPORA / "udhr_sample.txt")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str):
    code, out, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Two tokenizers trained on taylorswift.txt with the two tie rules, saved as stems."""
    folder = tmp_path_factory.mktemp("trained")
    text = corpus_text("taylorswift.txt")
    for rule in ("first", "lexical"):
        train(text, 600, tie_break=rule, name=rule).save(folder / rule)
    return folder


def test_audit_json_equals_the_library(capsys):
    got = run_json(capsys, "audit", "gpt2", "--corpus", TAYLOR)
    assert got == audit(get_encoding("gpt2"), corpus_texts=[corpus_text("taylorswift.txt")])
    assert got["n_vocab"] == tiktoken_reference("gpt2").n_vocab
    assert "unused" not in run_json(capsys, "audit", "gpt2")


def test_corpus_given_twice_counts_every_file(capsys, tmp_path):
    """`--corpus a --corpus b` is the same as `--corpus a b`: argparse's default for a repeated
    option kept only the last one, and the unused ids silently ignored file a."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("zebra quixotic")
    b.write_text("hello world")
    once = run_json(capsys, "audit", "gpt2", "--corpus", str(a), str(b))
    twice = run_json(capsys, "audit", "gpt2", "--corpus", str(a), "--corpus", str(b))
    assert twice["unused"] == once["unused"]
    want = audit(get_encoding("gpt2"), corpus_texts=["zebra quixotic", "hello world"])
    assert once["unused"] == want["unused"]


def test_diff_corpus_given_twice_counts_every_file(capsys, tmp_path, trained):
    """The same for diff's training corpus: a replay on the last file alone is not theirs."""
    text = corpus_text("taylorswift.txt")
    half = text.index("\n", len(text) // 2) + 1  # after a newline: the same chunks as the whole text
    (tmp_path / "a.txt").write_text(text[:half], encoding="utf-8")
    (tmp_path / "b.txt").write_text(text[half:], encoding="utf-8")
    first, lexical = (str(trained / rule) for rule in ("first", "lexical"))
    whole = run_json(capsys, "diff", first, lexical, "--corpus", TAYLOR)
    parts = ["--corpus", str(tmp_path / "a.txt"), "--corpus", str(tmp_path / "b.txt")]
    got = run_json(capsys, "diff", first, lexical, *parts)
    assert got["divergence"]["candidates"] == whole["divergence"]["candidates"]


def test_audit_of_an_hf_tokenizer_json(capsys, tmp_path, trained):
    tok = Tokenizer.load(trained / "first")
    export_hf(tok, tmp_path / "tokenizer.json")
    got = run_json(capsys, "audit", str(tmp_path / "tokenizer.json"))
    ours = audit(tok)
    assert got == ours


def test_audit_table(capsys):
    code, out, _ = run(capsys, "audit", "o200k_base")
    assert code == 0
    assert "o200k_base: n_vocab 200019" in out
    [line] = [line for line in out.splitlines() if line.startswith("unreachable ")]
    assert line.split()[1] == "12"
    assert "Latin" in out and "Partial UTF-8" in out


def test_stats_json(capsys, trained):
    first = str(trained / "first")
    got = run_json(capsys, "stats", TAYLOR, UDHR, "-t", "cl100k_base", "-t", first, "--sweep", "256,300,600")
    texts = {TAYLOR: corpus_text("taylorswift.txt"), UDHR: corpus_text("udhr_sample.txt")}
    enc = tiktoken_reference("cl100k_base")
    assert [(r["tokenizer"], r["file"]) for r in got["results"]] == [
        ("cl100k_base", TAYLOR),
        (first, TAYLOR),
        ("cl100k_base", UDHR),
        (first, UDHR),
    ]
    for row in got["results"]:
        text = texts[row["file"]]
        assert (
            row["bytes"] == len(text.encode())
            and row["chars"] == len(text)
            and row["words"] == len(text.split())
        )
        if row["tokenizer"] == "cl100k_base":
            assert row["tokens"] == len(enc.encode_ordinary(text))
    assert set(got) == {"results", "sweep"}
    assert [(r["tokenizer"], r["vocab_size"]) for r in got["sweep"]] == [
        (t, v) for t in ("cl100k_base", first) for v in (256, 300, 600)
    ]
    assert got["sweep"][0]["tokens"] == sum(len(t.encode()) for t in texts.values())  # 256: bytes only
    last = [r["tokens"] for r in got["sweep"] if r["tokenizer"] == first][-1]
    assert last == sum(r["tokens"] for r in got["results"] if r["tokenizer"] == first)  # 600 = all of it


def test_stats_by_language(capsys):
    got = run_json(capsys, "stats", UDHR, "-t", "o200k_base", "--by-language")
    sections = udhr_sections(corpus_text("udhr_sample.txt"))
    assert got["languages"] == language_rows(get_encoding("o200k_base"), sections, name="o200k_base")
    code, out, _ = run(capsys, "stats", UDHR, "-t", "o200k_base", "--by-language")
    assert code == 0 and "parity (eng = 1)" in out and "English" in out


def test_stats_table_has_the_derived_columns(capsys):
    code, out, _ = run(capsys, "stats", TAYLOR, "-t", "gpt2", "-t", "o200k_base")
    assert code == 0
    header = re.split(r"\s{2,}", out.splitlines()[0])
    assert header == [
        "tokenizer", "file", "tokens", "bytes", "chars", "words",
        "bytes/token", "chars/token", "tokens/word", "vs first -t",
    ]  # fmt: skip
    gpt2, o200k = (re.split(r"\s{2,}", line.strip()) for line in out.splitlines()[2:4])
    assert gpt2[-1] == "1.000" and o200k[0] == "o200k_base"


def test_diff_json_and_table(capsys, trained):
    a, b = str(trained / "first"), str(trained / "lexical")
    got = run_json(capsys, "diff", a, b, "--corpus", TAYLOR)
    want = diff(Tokenizer.load(a), Tokenizer.load(b), corpus=[corpus_text("taylorswift.txt")])
    assert got == json.loads(json.dumps(want))
    assert got["divergence"]["a"]["count"] == got["divergence"]["b"]["count"]
    code, out, _ = run(capsys, "diff", a, b)
    assert code == 0 and f"at rank {got['first_difference']}: a tie" in out
    plain = run_json(capsys, "diff", "cl100k_base", "o200k_base")
    assert set(plain) == {
        "common",
        "only_a",
        "only_b",
        "first_difference",
        "examples_only_a",
        "examples_only_b",
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit", "nosuch"], "unknown tokenizer 'nosuch'"),
        (["audit", "gpt2", "--corpus", "{missing}"], "No such file"),
        (["audit", "gpt2", "--corpus", "{bad}"], "bad.txt: not valid UTF-8 at byte offset 3"),
        (["stats", "{plain}", "-t", "gpt2", "--sweep", "1000,500"], "strictly increasing: 1000 then 500"),
        (["stats", "{plain}", "-t", "gpt2", "--sweep", "100"], "sweep size 100 is out of range for gpt2"),
        (["stats", "{plain}", "-t", "gpt2", "--by-language"], "plain.txt: no '##### UDHR"),
        (["stats", "{plain}", "-t", "gpt2", "-t", "nosuch"], "unknown tokenizer 'nosuch'"),
        (["stats", "{plain}", "-t", "gpt2", "-j", "0"], "workers must be an integer from 1 to 256, got 0"),
        (["diff", "gpt2", "{missing}"], "no tokenizer at"),  # a path: what is missing there
        (["diff", "gpt2", "nosuch.json"], "no tokenizer at nosuch.json"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(capsys, tmp_path, argv, message):
    (tmp_path / "bad.txt").write_bytes(b"ok \xff\xfe bad")
    (tmp_path / "plain.txt").write_text("hello\n")
    paths = {
        "missing": tmp_path / "missing.txt",
        "bad": tmp_path / "bad.txt",
        "plain": tmp_path / "plain.txt",
    }
    code, out, err = run(capsys, *(a.format(**paths) for a in argv), "--json")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_sweep_that_is_not_a_number_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["stats", TAYLOR, "-t", "gpt2", "--sweep", "1000,x"])
    assert e.value.code == 2
    assert "'x' is not an integer" in capsys.readouterr().err


def test_bad_sweep_sizes_are_refused_before_the_texts_are_counted(capsys, monkeypatch):
    # the error came after every file was read and counted (minutes on a big corpus)
    def counted(*args, **kwargs):
        raise AssertionError("the texts were counted before the sizes were checked")

    monkeypatch.setattr("tokenizer.cli.analyze.text_stats", counted)
    code, out, err = run(capsys, "stats", TAYLOR, "-t", "gpt2", "--sweep", "100")
    assert code == 2 and out == "" and "sweep size 100 is out of range for gpt2" in err


def test_module_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "tokenizer", "audit", "gpt2", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0 and json.loads(out.stdout)["n_vocab"] == 50257


def test_a_language_in_two_files_names_both_files(capsys, tmp_path):
    """`stats a.txt b.txt --by-language` with English in both said "a.txt, b.txt: language
    code=eng appears twice (lines 1 and 1)": which line 1? Each place is named with its file,
    and the fix is said."""
    udhr = "##### UDHR code=eng name=English\nhello\n##### UDHR code=fra name=French\nsalut\n"
    (tmp_path / "a.txt").write_text(udhr)
    (tmp_path / "b.txt").write_text("##### UDHR code=deu name=German\nhallo\n" + udhr)
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    code, out, err = run(capsys, "stats", a, b, "-t", "gpt2", "--by-language", "--json")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert f"error: {b}:3: language code=eng appears twice (first at {a}:1)" in err
    assert "keep one section per language" in err


def test_a_folder_as_a_text_file_says_how_to_give_its_files(capsys, tmp_path):
    # "texts: is a directory, not a text file" said what is wrong, not what to give
    folder = tmp_path / "texts"
    folder.mkdir()
    for argv in (["stats", str(folder), "-t", "gpt2"], ["audit", "gpt2", "--corpus", str(folder)]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == ""
        assert (
            err
            == f"error: {folder}: is a directory, not a text file; give the files in it ({folder}/*.txt)\n"
        )


@pytest.mark.parametrize(
    "argv",
    [
        ["stats", "-", "-", "-t", "gpt2"],
        ["audit", "gpt2", "--corpus", "-", "-"],
        ["diff", "gpt2", "r50k_base", "--corpus", "-", "--corpus", "-"],
    ],
)
def test_stdin_given_twice_is_refused(argv):
    """`stats - - -t gpt2` read stdin twice, the second time empty, and printed 0 tokens and
    0 bytes for '-' (the second reading replaced the first): stdin can be read once, as
    train, count and extend already say."""
    done = subprocess.run(
        [sys.executable, "-m", "tokenizer", *argv, "--json"],
        input=b"hello world",
        capture_output=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (2, b"")
    assert "error: '-' (stdin) is given twice; stdin can be read once" in done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()

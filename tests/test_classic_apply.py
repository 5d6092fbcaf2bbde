"""`classic apply`'s options beyond the merges (apply-bpe's --glossaries, --vocabulary,
--dropout), each against subword-nmt's own code: its Python API and its `subword-nmt` command."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tokenizer import classic
from tokenizer.cli import main

apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
get_vocab = pytest.importorskip("subword_nmt.get_vocab")

SUBWORD_NMT = "import sys; from subword_nmt.subword_nmt import main; sys.exit(main())"  # its console script


def corpus(name: str, limit: int, start: int = 0) -> str:
    """`limit` characters of a corpus file from `start`, cut back to whole lines."""
    part = (CORPORA / name).read_text(encoding="utf-8")[start : start + limit]
    return part[: part.rfind("\n") + 1]


def reference_bpe(codes: str, **kwargs) -> apply_bpe.BPE:
    """subword-nmt's BPE object over codes text (it reads the codes from a file object)."""
    return apply_bpe.BPE(io.StringIO(codes), **kwargs)


def reference_apply(bpe: apply_bpe.BPE, text: str, dropout: float = 0) -> str:
    """What the `subword-nmt` command writes: its codecs reader splits lines as splitlines."""
    return "".join(bpe.process_line(line, dropout) for line in text.splitlines(keepends=True))


def subword_nmt_command(tmp_path: Path, text: str, *args: str) -> str:
    """`subword-nmt apply-bpe ARGS < text`, run through its own entry point."""
    source = tmp_path / "command_input.txt"
    source.write_bytes(text.encode("utf-8"))
    done = subprocess.run(
        [sys.executable, "-c", SUBWORD_NMT, "apply-bpe", "-i", str(source), *args],
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8")


def ours(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["classic", "apply", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def codes_text() -> str:
    return classic.format_codes(classic.learn(corpus("taylorswift.txt", 200_000), 2000))


@pytest.fixture(scope="module")
def codes_path(tmp_path_factory, codes_text) -> Path:
    path = tmp_path_factory.mktemp("classic_apply") / "codes.txt"
    path.write_text(codes_text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def held_out() -> str:
    return corpus("tinyshakespeare.txt", 30_000) + corpus("pg_en_medium.txt", 30_000, start=3_000_000)


# ----- --glossaries ------------------------------------------------------------------------

GLOSSARIES = ["Taylor", "Swift", "[0-9]+", "the", "ing", "KING|QUEEN"]


def test_glossaries_equal_the_subword_nmt_command_on_real_text(tmp_path, capsys, codes_path, held_out):
    """`apply-bpe --glossaries` was refused ('unrecognized arguments'); a glossary inside a word
    cuts the word around it ('nothing' -> 'no@@ the@@ ing' style cuts), as subword-nmt does."""
    text = held_out + "1934USABUSA Taylor's Swiftly 2024 bathe theatre\n"
    want = subword_nmt_command(tmp_path, text, "-c", str(codes_path), "--glossaries", *GLOSSARIES)
    source = tmp_path / "in.txt"
    source.write_text(text, encoding="utf-8")
    args = ("-c", str(codes_path), "-i", str(source), "--glossaries", *GLOSSARIES)
    assert ours(capsys, *args) == (0, want, "")
    assert "@@ the@@ " in want and "1934@@ " in want  # the cuts did happen
    bpe = reference_bpe(codes_path.read_text(encoding="utf-8"), glossaries=GLOSSARIES)
    merges = classic.parse_codes(codes_path.read_text(encoding="utf-8"))
    assert classic.apply(text, merges, "@@", glossaries=GLOSSARIES) == reference_apply(bpe, text) == want


# Regexes with subword-nmt's corners: one matching the empty string, capturing groups (re.split
# returns them too, so subword-nmt repeats their text), an alternation that `^...$` binds loosely.
glossary = st.sampled_from(["USA", "ab", "a+", "b|c", "(a)(b)", "x*", "", "^a", "c$", "[AU]S", "a.c"])
word = st.text(alphabet="abcUSAx", min_size=1, max_size=10)
line = st.lists(word, max_size=8).map(" ".join)
text_lines = st.lists(line, min_size=1, max_size=6).map("\n".join)
CODES = "#version: 0.2\nU S\nUS A\na b\nab c\nc </w>\nb c</w>\nx x\nA a\n"


@settings(max_examples=200, deadline=None)
@given(text=text_lines, glossaries=st.lists(glossary, min_size=1, max_size=3))
def test_glossaries_equal_subword_nmt_on_generated_text(text, glossaries):
    expected = reference_apply(reference_bpe(CODES, glossaries=glossaries), text)
    assert classic.apply(text, classic.parse_codes(CODES), "@@", glossaries=glossaries) == expected


def test_bad_glossary_is_an_error_naming_the_flag(capsys, codes_path):
    """subword-nmt crashes with re.error's traceback on a glossary that is no regex."""
    code, out, err = ours(capsys, "-c", str(codes_path), "--glossaries", "USA", "[x")
    assert (code, out) == (2, "")
    assert "--glossaries" in err and "'[x'" in err and "Traceback" not in err
    with pytest.raises(ValueError, match="glossary '\\[x'"):
        classic.apply("a", [], glossaries=["[x"])


# ----- --vocabulary, --vocabulary-threshold ------------------------------------------------


def subword_nmt_get_vocab(tmp_path: Path, text: str) -> Path:
    """`subword-nmt get-vocab < text > vocab.txt`: 'unit count' lines, as users make them."""
    source, vocab = tmp_path / "segmented.txt", tmp_path / "vocab.txt"
    source.write_bytes(text.encode("utf-8"))
    subprocess.run(
        [sys.executable, "-c", SUBWORD_NMT, "get-vocab", "-i", str(source), "-o", str(vocab)], check=True
    )
    return vocab


@pytest.mark.parametrize("threshold", [None, 3, 50])
def test_vocabulary_equals_the_subword_nmt_command_on_real_text(
    tmp_path, capsys, codes_path, held_out, threshold
):
    """`apply-bpe --vocabulary V --vocabulary-threshold N` (the paper's recommended workflow:
    units of the segmented training text rarer than N are split back) was refused."""
    merges = classic.parse_codes(codes_path.read_text(encoding="utf-8"))
    vocab = subword_nmt_get_vocab(tmp_path, classic.apply(corpus("taylorswift.txt", 60_000), merges, "@@"))
    limit = [] if threshold is None else ["--vocabulary-threshold", str(threshold)]
    args = ["-c", str(codes_path), "--vocabulary", str(vocab), *limit]
    want = subword_nmt_command(tmp_path, held_out, *args)
    source = tmp_path / "in.txt"
    source.write_text(held_out, encoding="utf-8")
    assert ours(capsys, *args, str(source)) == (0, want, "")
    assert want != classic.apply(held_out, merges, "@@")  # units were split back
    units = classic.read_vocabulary(vocab, threshold)
    assert classic.apply(held_out, merges, "@@", vocabulary=units) == want
    with vocab.open(encoding="utf-8") as lines:
        bpe = reference_bpe(
            codes_path.read_text(encoding="utf-8"), vocab=apply_bpe.read_vocabulary(lines, threshold)
        )
    assert reference_apply(bpe, held_out) == want


# Symbols whose concatenations collide (('a', 'bc') and ('ab', 'c') both make 'abc'), merges
# repeated, word-final units: the corners of subword-nmt's reverse lookup.
symbol = st.sampled_from(
    ["a", "b", "c", "ab", "bc", "abc", "ca", "a</w>", "b</w>", "c</w>", "bc</w>", "ab</w>"]
)
unit = st.sampled_from(["a", "b", "c", "ab", "bc", "abc", "ca", "cab", "abca", "bcab"])


@settings(max_examples=300, deadline=None)
@given(
    merges=st.lists(st.tuples(symbol, symbol), min_size=1, max_size=14),  # none: subword-nmt exits
    vocab=st.dictionaries(st.tuples(unit, st.booleans()), st.integers(0, 6), max_size=12),
    threshold=st.none() | st.integers(-1, 7),
    separator=st.sampled_from(["@@", ""]),
    text=st.lists(st.text(alphabet="abc", min_size=1, max_size=9), max_size=10).map(" ".join),
)
def test_vocabulary_equals_subword_nmt_on_generated_codes(merges, vocab, threshold, separator, text):
    vocab_text = "".join(f"{u}{separator if marked else ''} {n}\n" for (u, marked), n in vocab.items())
    codes = classic.format_codes(merges)
    want_units = apply_bpe.read_vocabulary(io.StringIO(vocab_text), threshold)
    assert classic.parse_vocabulary(vocab_text, threshold) == want_units
    expected = reference_apply(reference_bpe(codes, separator=separator, vocab=want_units), text)
    assert classic.apply(text, merges, separator, vocabulary=want_units) == expected


def test_vocabulary_with_nothing_over_the_threshold_checks_nothing(tmp_path, capsys, codes_path):
    """subword-nmt checks units only when the vocabulary it read is not empty (`if vocab:`):
    a threshold above every count keeps every unit. Followed, with a warning saying so."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the 3\nt@@ 2\n", encoding="utf-8")
    text = "the theatre\n"
    args = ["-c", str(codes_path), "--vocabulary", str(vocab), "--vocabulary-threshold", "4"]
    want = subword_nmt_command(tmp_path, text, *args)
    source = tmp_path / "in.txt"
    source.write_text(text, encoding="utf-8")
    code, out, err = ours(capsys, *args, str(source))
    assert (code, out) == (0, want) and "no unit" in err and "every unit is kept" in err


@pytest.mark.parametrize(
    "content, problem",
    [
        ("the 5\nthe@@\n", "vocab.txt:2: expected 'unit count'"),
        ("the 5\n\n", "vocab.txt:2: expected 'unit count'"),
        ("the 5\ta b 3\n", "vocab.txt:1: expected 'unit count'"),
        ("the five\n", "vocab.txt:1: count 'five' is not an integer"),
    ],
)
def test_bad_vocabulary_file_is_an_error_naming_the_line(tmp_path, capsys, codes_path, content, problem):
    """Where subword-nmt stops with a ValueError traceback (its `word, freq = ...split(' ')`)."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError):
        apply_bpe.read_vocabulary(io.StringIO(content), None)
    code, out, err = ours(capsys, "-c", str(codes_path), "--vocabulary", str(vocab), str(codes_path))
    assert (code, out) == (2, "") and problem in err and "Traceback" not in err


def test_vocabulary_flags_are_checked_before_reading(tmp_path, capsys, codes_path):
    code, _, err = ours(capsys, "-c", str(codes_path), "--vocabulary", str(tmp_path / "missing.txt"))
    assert code == 2 and "missing.txt" in err and "No such file" in err
    code, _, err = ours(capsys, "-c", str(codes_path), "--vocabulary-threshold", "5")
    assert code == 2 and "--vocabulary-threshold" in err and "--vocabulary FILE" in err
    with pytest.raises(SystemExit) as exit_:
        main(["classic", "apply", "-c", str(codes_path), "--vocabulary-threshold", "five"])
    assert exit_.value.code == 2 and "--vocabulary-threshold" in capsys.readouterr().err
    code, _, err = ours(capsys, "-c", str(codes_path), "--vocabulary", "-")
    assert code == 2 and "stdin" in err
    code, _, err = ours(capsys, "-c", str(codes_path), "--vocabulary", "")
    assert code == 2 and "--vocabulary: '' is empty" in err


# ----- --dropout, --seed -------------------------------------------------------------------


def legacy_apply_bpe(tmp_path: Path, text: str, *args: str) -> str:
    """`python -m subword_nmt.apply_bpe ARGS -i text`: the script that honours --seed (the
    `subword-nmt` command parses --seed but never seeds, so its dropout differs run to run)."""
    source = tmp_path / "legacy_input.txt"
    source.write_bytes(text.encode("utf-8"))
    done = subprocess.run(
        [sys.executable, "-m", "subword_nmt.apply_bpe", "-i", str(source), *args],
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8")


@pytest.mark.parametrize("dropout, seed", [("0.1", "7"), ("0.5", "12345"), ("1", "0"), ("0", "3")])
def test_dropout_draws_what_subword_nmt_draws_for_the_same_seed(
    tmp_path, capsys, codes_path, held_out, dropout, seed
):
    """`apply-bpe --dropout P --seed S` was refused; our draws are subword-nmt's: one
    random.random() per adjacent pair of a word at every merge step, from random.seed(S)."""
    text = held_out[:20_000]
    args = ["-c", str(codes_path), "--dropout", dropout, "--seed", seed, "--glossaries", "the", "[0-9]+"]
    want = legacy_apply_bpe(tmp_path, text, *args)
    source = tmp_path / "in.txt"
    source.write_text(text, encoding="utf-8")
    assert ours(capsys, *args, "-i", str(source)) == (0, want, "")
    plain = classic.apply(text, classic.read_codes(codes_path), "@@", glossaries=["the", "[0-9]+"])
    assert (want == plain) == (dropout == "0")  # dropout did change the units


@settings(max_examples=150, deadline=None)
@given(
    text=text_lines,
    dropout=st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.9, 1.0]),
    seed=st.integers(-(2**40), 2**40),
    glossaries=st.lists(glossary, max_size=2),
    with_vocabulary=st.booleans(),
)
def test_dropout_equals_subword_nmt_api_after_random_seed(text, dropout, seed, glossaries, with_vocabulary):
    vocabulary = {"US@@", "A", "ab@@", "abc", "c", "b@@", "x"} if with_vocabulary else None
    bpe = reference_bpe(CODES, glossaries=glossaries, vocab=vocabulary)
    random.seed(seed)
    expected = reference_apply(bpe, text + "\n" + text, dropout)  # the stream goes on over lines
    merges = classic.parse_codes(CODES)
    segmenter = classic.Segmenter(
        merges, "@@", glossaries=glossaries, vocabulary=vocabulary, dropout=dropout, seed=seed
    )
    assert segmenter.apply(text + "\n" + text) == expected


@pytest.mark.parametrize("value", ["-0.1", "1.5", "nan", "inf", "x"])
def test_dropout_outside_0_to_1_is_an_error_naming_the_flag(capsys, codes_path, value):
    """subword-nmt takes any float: 1.5 and nan drop every merge, -0.1 none, without a word."""
    if value in ("x", "nan", "inf"):  # not a number as the CLI writes them: argparse's usage error
        with pytest.raises(SystemExit) as exit_:
            main(["classic", "apply", "-c", str(codes_path), "--dropout", value])
        assert exit_.value.code == 2 and "--dropout" in capsys.readouterr().err
        with pytest.raises(ValueError, match="dropout must be|could not convert"):
            classic.apply("abc", [("a", "b")], dropout=float(value))
        return
    code, out, err = ours(capsys, "-c", str(codes_path), "--dropout", value)
    assert (code, out) == (2, "") and "--dropout must be" in err and "between 0 and 1" in err
    with pytest.raises(ValueError, match="dropout must be"):
        classic.apply("abc", [("a", "b")], dropout=float(value))


# ----- --merges ----------------------------------------------------------------------------


def test_merges_limit_reads_only_the_merges_it_applies(tmp_path, capsys):
    """subword-nmt's -m N reads the first N lines of the codes only; a malformed line after
    them (a codes file cut short while written, notes appended) was exit 2 here."""
    codes = tmp_path / "codes.txt"
    codes.write_text("#version: 0.2\nt h\nth e\nbad\ne r\n", encoding="utf-8")
    source = tmp_path / "in.txt"
    source.write_text("the there other\n", encoding="utf-8")
    for m in ("2", "0", "-3"):
        want = subword_nmt_command(tmp_path, "the there other\n", "-c", str(codes), "-m", m)
        assert ours(capsys, "-c", str(codes), "-m", m, str(source)) == (0, want, "")
    code, out, err = ours(capsys, "-c", str(codes), "-m", "3", str(source))
    assert (code, out) == (2, "") and "codes.txt:4" in err
    assert classic.parse_codes(codes.read_text(encoding="utf-8"), limit=2) == [("t", "h"), ("th", "e")]


# ----- --num-workers ----------------------------------------------------------------------------


@pytest.mark.parametrize("workers", ["1", "4", "-1"])
def test_num_workers_is_taken_as_subword_nmt_takes_it(tmp_path, capsys, codes_path, workers):
    """`apply-bpe --num-workers N` was 'unrecognized arguments'; subword-nmt's output does not
    depend on it (-1: every core), so it is taken and the output is the one process's."""
    text = corpus("tinyshakespeare.txt", 20_000)
    source = tmp_path / "in.txt"
    source.write_text(text, encoding="utf-8")
    want = subword_nmt_command(tmp_path, text, "-c", str(codes_path), "--num-workers", workers)
    assert ours(capsys, "-c", str(codes_path), "-i", str(source), "--num-workers", workers) == (0, want, "")


# ----- get-vocab ---------------------------------------------------------------------------------


def test_get_vocab_equals_the_subword_nmt_command(tmp_path, capsys, codes_path, held_out):
    """`subword-nmt get-vocab` (the vocabulary --vocabulary reads) had no counterpart here: the
    paper's workflow needed subword-nmt for one step. The units and counts, in its order (most
    frequent first, ties by first occurrence), with its line ends and spaces."""
    merges = classic.parse_codes(codes_path.read_text(encoding="utf-8"))
    text = classic.apply(held_out, merges, "@@") + "a  b\x0bb\r\n\u2028 a \x85b\n"
    want = subword_nmt_get_vocab(tmp_path, text).read_text(encoding="utf-8")
    assert classic.format_vocabulary(classic.count_units(text)) == want
    source, out = tmp_path / "segmented.txt", tmp_path / "vocab.txt"
    source.write_bytes(text.encode("utf-8"))
    assert ours_command(capsys, "get-vocab", str(source)) == (0, want, "")
    assert ours_command(capsys, "get-vocab", "-i", str(source), "-o", str(out)) == (0, "", "")
    assert out.read_text(encoding="utf-8") == want
    plain = classic.apply(held_out, merges, "@@")  # what --vocabulary reads back (no \x0b in a unit)
    units = classic.count_units(plain)
    assert classic.parse_vocabulary(classic.format_vocabulary(units)) == {unit for unit, _ in units}


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet="ab@ \n\r\t\x0b\x85\u2028", max_size=60))
def test_get_vocab_equals_subword_nmts_function_on_generated_text(text):
    out = io.StringIO()
    get_vocab.get_vocab(lines_as_codecs_reads(text), out)
    assert classic.format_vocabulary(classic.count_units(text)) == out.getvalue()


def lines_as_codecs_reads(text: str) -> list[str]:
    """The lines subword-nmt's command iterates: its codecs reader splits as str.splitlines."""
    return text.splitlines(keepends=True)


def ours_command(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["classic", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "args",
    [
        ["learn", "-s", "٣"],
        ["learn", "-s", "3", "--min-frequency", "２"],
        ["apply", "-m", "1_0"],
        ["apply", "--dropout", "٠.٥"],
        ["apply", "--dropout", "nan"],
        ["apply", "--num-workers", "٢"],
    ],
)
def test_numbers_take_ascii_digits_only(capsys, codes_path, args):
    """'classic learn -s ٣' learned 3 merges without a word (int() reads Arabic-Indic and
    fullwidth digits and '1_0'); like every other command's numbers, 0-9 only now, exit 2."""
    extra = ["-c", str(codes_path)] if args[0] == "apply" else []
    with pytest.raises(SystemExit) as exit_:  # argparse's usage error
        main(["classic", *args, *extra])
    out, err = capsys.readouterr()
    assert (exit_.value.code, out) == (2, "")
    assert "write it with the digits 0-9" in err and "Traceback" not in err

"""`classic apply`'s options beyond the merges (apply-bpe's --glossaries, --vocabulary,
--dropout), each against subword-nmt's own code: its Python API and its `subword-nmt` command."""

from __future__ import annotations

import io
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

"""tokenizer.stats against tiktoken: token counts, UDHR parity, the vocabulary-size sweep."""

from __future__ import annotations

import re

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA, corpus_text
from tests.oracles import tiktoken_reference
from tokenizer import get_encoding
from tokenizer.stats import (
    ENGLISH,
    MAX_LANGUAGES,
    check_languages,
    count_tokens,
    language_rows,
    prefix_tokenizer,
    sweep,
    text_stats,
    udhr_sections,
)

NAMES = ["gpt2", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [
        corpus_text("udhr_sample.txt", 150_000),
        corpus_text("code_python.txt", 100_000),
        corpus_text("emoji_cldr.txt", 50_000),
        "<|endoftext|> is ordinary text here <|fim_prefix|>",
    ]


@pytest.mark.parametrize("name", NAMES)
def test_counts_equal_tiktoken(name, texts):
    enc = tiktoken_reference(name)
    for text in texts:
        got = text_stats(get_encoding(name), text)
        assert got == {
            "tokens": len(enc.encode(text, disallowed_special=())),
            "bytes": len(text.encode("utf-8")),
            "chars": len(text),
            "words": len(re.findall(r"\S+", text)),
        }


@settings(max_examples=100, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs",)), max_size=80))
def test_count_equals_encode_on_any_text(text):
    tok = get_encoding("o200k_base")
    assert count_tokens(tok, text + " " + text) == len(tok.encode_ordinary(text + " " + text))


@pytest.mark.parametrize("name", NAMES)
def test_sweep_equals_tiktoken_with_cut_ranks(name, texts):
    enc = tiktoken_reference(name)
    sizes = [256, 300, 1000, 5000, 40000]
    got = sweep(get_encoding(name), texts, sizes, name=name)
    for row, v in zip(got, sizes, strict=True):
        cut = tiktoken.Encoding(
            f"{name}-{v}",
            pat_str=enc._pat_str,
            mergeable_ranks={t: r for t, r in enc._mergeable_ranks.items() if r < v},
            special_tokens={},
        )
        assert row == {
            "tokenizer": name,
            "vocab_size": v,
            "tokens": sum(len(cut.encode_ordinary(t)) for t in texts),
        }
    tokens = [row["tokens"] for row in got]
    assert tokens == sorted(tokens, reverse=True)  # more merges never give more tokens here


def test_full_size_sweep_equals_the_tokenizer(texts):
    tok = get_encoding("cl100k_base")
    [row] = sweep(tok, texts, [len(tok.mergeable_ranks)], name="cl100k")
    assert row["tokens"] == sum(len(tok.encode_ordinary(t)) for t in texts)


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ([1000, 1000], "strictly increasing: 1000 then 1000"),
        ([2000, 1000], "strictly increasing"),
        ([255], "out of range"),
        ([50257], "allow 256 to 50256"),
        # every size, checked before any cut: 200,000 sizes of o200k took over an hour
        (list(range(256, 50256)), "50,000 sweep sizes; give at most 100"),
    ],
)
def test_bad_sweep_sizes(sizes, message):
    with pytest.raises(ValueError, match=message):
        sweep(get_encoding("gpt2"), ["x"], sizes, name="gpt2")


def test_prefix_keeps_the_pattern_and_drops_later_ranks():
    tok = get_encoding("o200k_base")
    cut = prefix_tokenizer(tok, 1000)
    assert cut.pattern == tok.pattern and len(cut.mergeable_ranks) == 1000


def test_udhr_sections_cover_the_file():
    text = corpus_text("udhr_sample.txt")
    sections = udhr_sections(text, source="udhr_sample.txt")
    headers = [line for line in text.split("\n") if line.startswith("##### UDHR ")]
    assert len(sections) == len(headers) == 69
    assert "".join(h + "\n" + s.text for h, s in zip(headers, sections, strict=True)) == text
    first = sections[0]
    assert (first.code, first.name, first.line, first.fields["script"]) == ("eng", "English", 1, "Latin")
    assert sections[1].name == "Chinese, Mandarin (Simplified)"


@pytest.mark.parametrize("name", NAMES)
def test_parity_equals_tiktoken(name):
    enc = tiktoken_reference(name)
    sections = udhr_sections(corpus_text("udhr_sample.txt"))
    rows = language_rows(get_encoding(name), sections, name=name)
    english = len(enc.encode_ordinary(next(s.text for s in sections if s.code == ENGLISH)))
    by_code = {s.code: s for s in sections}
    for row in rows:
        section = by_code[row["code"]]
        tokens = len(enc.encode_ordinary(section.text))
        assert row == {
            "tokenizer": name,
            "code": section.code,
            "name": section.name,
            "tokens": tokens,
            "bytes": len(section.text.encode("utf-8")),
            "parity": tokens / english,
        }
    assert [r["parity"] for r in rows] == sorted((r["parity"] for r in rows), reverse=True)
    assert next(r["parity"] for r in rows if r["code"] == ENGLISH) == 1.0


def test_language_errors():
    with pytest.raises(ValueError, match=r"plain\.txt: no '##### UDHR"):
        udhr_sections("just text\n", source="plain.txt")
    twice = "##### UDHR code=eng name=English\nhi\n##### UDHR code=eng name=English\nho\n"
    with pytest.raises(ValueError, match="code=eng appears twice"):
        check_languages(udhr_sections(twice), source="f.txt")
    with pytest.raises(ValueError, match="no English section"):
        check_languages(udhr_sections("##### UDHR code=fra name=French\nsalut\n"), source="f.txt")
    with pytest.raises(ValueError, match=r"bad\.txt:2: UDHR header without code="):
        udhr_sections("x\n##### UDHR name=English\n", source="bad.txt")
    # both gave a row of 0 tokens and parity 0.000: an empty code, a header with no text under it
    with pytest.raises(ValueError, match=r"bad\.txt:3: UDHR header without code="):
        udhr_sections("##### UDHR code=eng name=English\nhi\n##### UDHR code=\nsalut\n", source="bad.txt")
    with pytest.raises(ValueError, match=r"bad\.txt:3: the section code=fra has no text"):
        udhr_sections(
            "##### UDHR code=eng name=English\nhi\n##### UDHR code=fra name=French\n\n", source="bad.txt"
        )


def test_language_errors_say_the_fix():
    # both said what is wrong ("UDHR header without code=", "no English section (code=eng);
    # parity is relative to English"), not what to write
    with pytest.raises(ValueError, match=r"f\.txt:1: UDHR header without code=: .*; give it one, e\.g\. "):
        udhr_sections("##### UDHR name=English\nhi\n", source="f.txt")
    with pytest.raises(
        ValueError, match=r"f\.txt: no English section .*; add the English text under a '##### UDHR code=eng"
    ):
        check_languages(udhr_sections("##### UDHR code=fra name=French\nsalut\n"), source="f.txt")


def test_text_before_the_first_header_is_refused_and_a_byte_order_mark_skipped():
    """A file starting with a UTF-8 byte-order mark hid its first header: that language (the
    first of udhr_all.txt is code=007) was left out without a word, or, when it was English,
    'no English section'; any other text before the first header was dropped silently too."""
    udhr = "##### UDHR code=eng name=English\nhi\n##### UDHR code=fra name=French\nsalut\n"
    assert [s.code for s in udhr_sections("\ufeff" + udhr)] == ["eng", "fra"]
    assert udhr_sections("\ufeff" + udhr) == udhr_sections(udhr)
    assert [s.code for s in udhr_sections("\n \n" + udhr)] == ["eng", "fra"]  # blank lines are no text
    with pytest.raises(
        ValueError, match=r"f\.txt:1: text before the first '##### UDHR' header belongs to no"
    ):
        udhr_sections("Universal Declaration\n" + udhr, source="f.txt")


def test_lone_surrogates_count_as_the_encoder_reads_them():
    # a str from JSON or the page may hold one; stats and sweep raised UnicodeEncodeError
    tok = get_encoding("cl100k_base")
    text = "a\ud800b \udc00 x \ud83d"
    read = "a\ufffdb \ufffd x \ufffd"
    assert text_stats(tok, text) == text_stats(tok, read)
    assert text_stats(tok, text)["tokens"] == len(tok.encode_ordinary(text))
    assert sweep(tok, [text], [300, 1000], name="c") == sweep(tok, [read], [300, 1000], name="c")
    udhr = "##### UDHR code=eng name=English\nhi \ud800\n##### UDHR code=fra name=French\nsalut\n"
    rows = language_rows(tok, udhr_sections(udhr), name="c")
    assert next(r for r in rows if r["code"] == "eng")["bytes"] == len("hi \ufffd\n".encode())


def test_udhr_headers_of_a_crlf_file():
    # the \r was the last field's: code=eng\r was "no English section", name=English\r
    text = "##### UDHR name=English code=eng\r\nhello\r\n##### UDHR code=fra name=French\r\nsalut\r\n"
    sections = udhr_sections(text, source="crlf.txt")
    check_languages(sections, source="crlf.txt")
    assert [(s.code, s.name, s.text) for s in sections] == [
        ("eng", "English", "hello\r\n"),
        ("fra", "French", "salut\r\n"),
    ]


def test_many_udhr_sections_are_bounded_and_counted_in_linear_time():
    # line numbers were counted from the start for each header: 50,000 sections took 21 s
    many = "".join(f"##### UDHR code=l{i} name=L{i}\nword{i}\n" for i in range(MAX_LANGUAGES + 1))
    with pytest.raises(ValueError, match=f"many.txt: 1,001 '##### UDHR' sections; at most {MAX_LANGUAGES:,}"):
        udhr_sections(many, source="many.txt")
    sections = udhr_sections(many[: many.index(f"##### UDHR code=l{MAX_LANGUAGES} ")])
    assert [s.line for s in sections] == list(range(1, 2 * MAX_LANGUAGES, 2))


def test_corpora_folder_is_there():
    assert (CORPORA / "udhr_all.txt").is_file()


def test_imported_tokenizer_json_counts_and_sweep_equal_hf_tokenizers(tmp_path):
    """A tokenizer.json counted by HF `tokenizers` itself, whole and cut to its first V ids
    (vocab entries below V, merges that make them), gives our text_stats and sweep figures."""
    import json

    hf = pytest.importorskip("tokenizers")
    from tokenizer.hf_export import export_hf
    from tokenizer.loading import load_any
    from tokenizer.train import train

    text = corpus_text("udhr_sample.txt", 120_000)
    held_out = corpus_text("pg_multilingual.txt", 60_000)
    path = tmp_path / "tokenizer.json"
    export_hf(train(text, 1200, pattern="gpt4", min_frequency=1), path)
    imported = load_any(str(path))
    whole = hf.Tokenizer.from_file(str(path))
    assert text_stats(imported, held_out)["tokens"] == len(whole.encode(held_out).ids)
    spec = json.loads(path.read_text(encoding="utf-8"))
    sizes = [256, 400, 900, 1200]
    for row, v in zip(sweep(imported, [held_out], sizes, name="hf"), sizes, strict=True):
        cut = json.loads(json.dumps(spec))
        cut["model"]["vocab"] = {s: i for s, i in spec["model"]["vocab"].items() if i < v}
        merges = [m.split(" ") if isinstance(m, str) else m for m in spec["model"]["merges"]]
        kept = cut["model"]["vocab"]
        cut["model"]["merges"] = [m for m in merges if all(x in kept for x in (*m, "".join(m)))]
        cut["added_tokens"] = []
        hf_cut = hf.Tokenizer.from_str(json.dumps(cut))
        assert row["tokens"] == len(hf_cut.encode(held_out).ids), v


def test_forked_workers_give_the_same_figures(monkeypatch, texts):
    """Forked children encode interleaved slices of the distinct chunks: the same lengths, in
    the same order, so every figure equals one process's (and tiktoken's)."""
    import tokenizer.stats as stats_module

    monkeypatch.setattr(stats_module, "PARALLEL_MIN_CHUNKS", 10)
    text = texts[0]
    tok = get_encoding("o200k_base")
    chunks = stats_module.chunk_counts(tok, [text])
    alone = stats_module.chunk_lengths(tok, chunks, workers=1)
    forked = stats_module.chunk_lengths(get_encoding("o200k_base"), chunks, workers=3)
    assert list(forked.items()) == list(alone.items())
    expected = len(tiktoken_reference("o200k_base").encode(text, disallowed_special=()))
    memo: dict[str, int] = {}
    assert count_tokens(tok, text, workers=2, memo=memo) == expected
    assert set(memo) == set(chunks)
    sections = udhr_sections(corpus_text("udhr_sample.txt", 200_000))
    assert language_rows(tok, sections, name="o", workers=2, memo=memo) == language_rows(
        get_encoding("o200k_base"), sections, name="o"
    )


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, None, 257, 100_000])
def test_workers_must_be_a_positive_integer(workers):
    with pytest.raises(ValueError, match="workers must be an integer from 1 to 256"):
        count_tokens(get_encoding("gpt2"), "text", workers=workers)


@pytest.mark.parametrize("bad", [None, b"hello", 5, ["hello"]])
def test_text_that_is_not_a_str_is_a_type_error(bad):
    """count_tokens(tok, b"hello") and text_stats(tok, None) raised AttributeError ('bytes' object
    has no attribute 'encode'); they now raise encode_ordinary's TypeError, which says what to do."""
    enc = get_encoding("gpt2")
    for call in (count_tokens, text_stats):
        with pytest.raises(TypeError, match=f"text must be a str, not {type(bad).__name__}"):
            call(enc, bad)


def test_sweep_of_one_str_is_one_text():
    """sweep(enc, "hello world", ...) iterated the str's characters and counted 11 tokens at
    the full vocabulary, where tiktoken gives 2: a str is the text itself, as in train()."""
    enc = get_encoding("gpt2")
    got = sweep(enc, "hello world", [256, 50256], name="gpt2")
    assert [r["tokens"] for r in got] == [11, len(tiktoken_reference("gpt2").encode_ordinary("hello world"))]
    assert got == sweep(enc, ["hello world"], [256, 50256], name="gpt2")


def test_udhr_header_fields_around_blanks():
    """A header with a trailing blank ('code=eng ', as an editor may leave it) gave the code
    'eng ', so the file "had no English section (code=eng)"; a tab between fields made
    'code=eng<TAB>name=English' one value. Fields are separated by any blanks, and a value
    ends before the blanks at the end of the line."""
    text = "##### UDHR code=eng name=English \nAll human beings.\n##### UDHR code=fra\tname=French\t\nTous.\n"
    sections = udhr_sections(text)
    assert [(s.code, s.name) for s in sections] == [("eng", "English"), ("fra", "French")]
    assert [s.text for s in sections] == ["All human beings.\n", "Tous.\n"]
    named = udhr_sections("##### UDHR code=cmn name=Chinese, Mandarin (Simplified)\nx\n")
    assert named[0].name == "Chinese, Mandarin (Simplified)"

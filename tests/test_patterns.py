"""The stdlib-`re` translation of the split patterns must split exactly like `regex`.

With the "regex" Unicode flavour, that is: the named patterns default to the "tiktoken"
flavour (Unicode 16.0), which tests/test_unicode_parity.py checks against tiktoken.
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tokenizer import _re_empty, _re_split, _unicode, patterns
from tokenizer.patterns import PATTERNS, REGEX, TIKTOKEN, compile_pattern, resolve_pattern

REPO = Path(__file__).resolve().parent.parent
WINDOW = 200_000  # characters per corpus window
DISTINCT = {"gpt2": PATTERNS["gpt2"], "cl100k": PATTERNS["cl100k"], "o200k": PATTERNS["o200k"]}

NASTY = (
    "Hello world! DON'T Don't don'T I'M YOU'LL WE'VE THEY'RE SHE'D it'S 'ſ 'S 'ſt 'K 'k ’s\n"
    "👩‍👩‍👧‍👦 🏳️‍🌈 🇺🇸🇯🇵 1️⃣ #️⃣ 👍🏽 🧑🏿‍💻 ☺︎ 𝐀𝐁𝐂 𝟏𝟐𝟑 𐐀𐐨 𞤀𞤢 🄰 🀄 𓀀 𠀀𪜀 \U000e0067\U000e0062\n"
    "中文字符，日本語のテキスト、한국어 텍스트. ｶﾀｶﾅ ＡＢＣ１２３\n"
    "العَرَبِيَّةُ لُغَةٌ ١٢٣٤ ۱۲۳ עִבְרִית हिन्दी देवनागरी १२३ বাংলা ১২৩ ไทย ๑๒๓ ລາວ ຖ ภาษา ၁၂၃ ༡༢༣ ០១២\n"
    "Ελληνικά Ωμέγα Кириллица ДОМ ქართული Ꮳꮃ ᐊᐃᐅ ǅungla ǈ ǋ ᾈ ʰʲ ˢ Ⅻⅻ ½ ² ³ ⁴ ₅ ① ⑴ ⒈\n"
    "e\u0301 a\u0308\u0323 Z\u0351\u0346\u0334\u0321 n\u0303 \u0489 \u20dd x\u20e3 \u0903\u093e\n"
    "tab\there\r\nCRLF\rCR\nLF \xa0nbsp\u2003emsp\u3000ideo\u2028ls\u2029ps\vvt\fff\x85nel\n"
    "\x1c\x1d\x1e\x1f fs gs rs us \u200bzwsp\ufeffbom\u180emvs \u200d\u200c \u2060 \u00ad\n"
    "   leading and trailing   \n\n\n  \t \r\n\r\n x  \n"
    "code: for (i = 0; i < n; i++) { x += y[i] * 3.14e-10; } // comment /* */ 'a' \"b\" `c`\n"
    "numbers 1234567890 12 123 1234 ١٢٣٤٥ 12,345.67 $100 €200 ¥300 100% #hashtag @user\n"
    "a'b a''b '' ''' ' s 's' '\n"
    "\U0010ffff\U000f0000 \ue000 \u0378 \U0003134a\U000323af \U0001f600\U0001f601 ends  "
)


def corpus_windows() -> list[tuple[str, str]]:
    """(label, text) windows from every corpus file: start, middle and end of each."""
    out = []
    for path in sorted(CORPORA.iterdir()):
        if path.suffix == ".xz":
            with lzma.open(path, "rt", encoding="utf-8") as f:
                out.append((f"{path.name}[:{WINDOW}]", f.read(WINDOW)))
            continue
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        starts = sorted({0, max(0, len(text) // 2 - WINDOW // 2), max(0, len(text) - WINDOW)})
        out += [(f"{path.name}[{s}:]", text[s : s + WINDOW]) for s in starts]
    return out


@pytest.fixture(scope="module")
def windows():
    if not CORPORA.is_dir():
        pytest.skip(f"corpora not found at {CORPORA}")
    return corpus_windows()


@pytest.mark.parametrize("name", DISTINCT)
def test_re_engine_equals_regex_on_every_corpus(name, windows):
    by_re, by_regex = compile_pattern(name, engine="re", unicode=REGEX), compile_pattern(name, engine="regex")
    for label, text in windows:
        chunks = by_re.findall(text)
        assert chunks == by_regex.findall(text), (name, label)
        assert "".join(chunks) == text


@pytest.mark.parametrize("name", PATTERNS)
def test_re_engine_equals_regex_on_nasty_sample(name):
    chunks = compile_pattern(name, engine="re", unicode=REGEX).findall(NASTY)
    assert chunks == compile_pattern(name, engine="regex").findall(NASTY)
    assert "".join(chunks) == NASTY
    for line in NASTY.splitlines(keepends=True):  # each line alone: other contexts, other edges
        by_re = compile_pattern(name, engine="re", unicode=REGEX).findall(line)
        assert by_re == regex.findall(PATTERNS[name], line)
    # NASTY has no code point whose category changed after Unicode 16.0: the flavours agree
    assert compile_pattern(name).findall(NASTY) == chunks


@pytest.mark.parametrize("name", DISTINCT)
def test_full_ranges_without_standins_equal_regex(name, windows):
    """The slower form (astral ranges kept) is what custom patterns may need; check it too."""
    full = patterns.ReSplitter(PATTERNS[name], bmp_fast_path=False, unicode=REGEX)
    assert full._standin_map is None
    texts = [NASTY] + [text[:50_000] for label, text in windows if "emoji" in label or "udhr" in label]
    for text in texts:
        assert full.findall(text) == regex.findall(PATTERNS[name], text)


def test_named_patterns_take_the_fast_path():
    for name in DISTINCT:
        for flavour in patterns.UNICODE_FLAVOURS:
            assert compile_pattern(name, engine="re", unicode=flavour)._standin_map is not None


INTERESTING = list(
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\x1c\x1d\x1e\x1f\u180e\u200b\ufeff"
    "'’sStTdDmMlLvVeErRſK\u212aiIıİ0123456789١۲३aZéÉǅʰ中あ한\u0301\u0903\u20dd"
    '!?.,;:-_/\\"#$%&()[]{}<>@^`|~+*=😀👍🏽\u200d🇺🇸𝐀𝐚𝟏𐐀𐐨\U000e0020\U0010fffd\U0003134a\ue000\u0378'
    "\u088f\u0c5c\ua7ce\u0295\U000323b0"  # categories changed after Unicode 16.0
)
texts_any = st.text(alphabet=st.characters(codec="utf-8"), max_size=200)
texts_mixed = st.text(
    alphabet=st.one_of(st.sampled_from(INTERESTING), st.characters(codec="utf-8")), max_size=200
)
texts_with_surrogates = st.text(
    alphabet=st.one_of(
        st.sampled_from(INTERESTING), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
    ),
    max_size=60,
)


def assert_same_split(text: str) -> None:
    for name, pattern in DISTINCT.items():
        chunks = compile_pattern(name, engine="re", unicode=REGEX).findall(text)
        assert chunks == regex.findall(pattern, text), name
        assert "".join(chunks) == text, name


@settings(max_examples=300, deadline=None)
@given(texts_any)
def test_re_engine_equals_regex_on_any_text(text):
    assert_same_split(text)


@settings(max_examples=400, deadline=None)
@given(texts_mixed)
def test_re_engine_equals_regex_on_whitespace_letters_digits_apostrophes(text):
    assert_same_split(text)


@settings(max_examples=100, deadline=None)
@given(texts_with_surrogates)
def test_re_engine_equals_regex_with_lone_surrogates(text):
    assert_same_split(text)


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts_any, texts_with_surrogates))
def test_astral_check_equals_the_astral_regex(text):
    # the splitter's quick test for astral code points (lone surrogates are BMP code points)
    assert _re_split._has_astral(text) == (_re_split._ASTRAL.search(text) is not None)


O200K_EDGE_ALPHABET = "aZ\u01c5\u02b0\u4e2d\u0301\u0903\u20dd1\u0661 \t\n\r'sStTdD./\u00a0\u2003!\u0345"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=O200K_EDGE_ALPHABET, max_size=40))
def test_o200k_split_form_equals_the_pattern_on_marks_cases_and_apostrophes(text):
    # Ll, Lu, Lt, Lm, Lo, Mn, Mc, Me, digits, whitespace, apostrophe suffixes, punctuation
    form = _re_split.ReSplitter(patterns.O200K_SPLIT_FORM, unicode=REGEX)
    assert form.findall(text) == regex.findall(patterns.O200K_PATTERN, text)


def test_o200k_splits_with_its_equivalent_form():
    assert compile_pattern("o200k").pattern == patterns.O200K_SPLIT_FORM
    assert compile_pattern("o200k", engine="regex").pattern == patterns.O200K_PATTERN


BMP_AND_SOME_ASTRAL = "".join(
    map(chr, [*range(0xD800), *range(0xE000, 0x10000), *range(0x10000, 0x110000, 101)])
)


def test_case_insensitive_contractions_match_regex():
    for text in ["'ſ", "'S", "'ſT", "'K", "'\u212a", "'Ll", "'LL", "'ſſ", "'İ", "'ı", "DON'T", "x'RE'VE'M"]:
        for name in ("cl100k", "o200k"):
            by_re = compile_pattern(name, engine="re", unicode=REGEX).findall(text)
            assert by_re == regex.findall(PATTERNS[name], text)
    dotted = "iIıİ i\u0307 I\u0307 xXkK\u212asSſ"
    for pattern in (
        r"(?i:i)|[\s\S]",
        r"(?i:I)|[\s\S]",
        r"(?i)ii|[^\s]|\s",
        r"(?i)[a-z]+|[^a-z]",
        r"(?i)[A-Z]+|[^A-Z]+",
        r"(?i)[iI]+|[^iI]+",
        r"(?i)[h-j]|[\S]|\s",
        r"(?i:[^j-z]+)|[\s\S]",
        r"(?i:[^a-i]+)|[\s\S]",
        r"(?i:[^\s\d]+)|[\s\S]",
    ):
        for text in (dotted, BMP_AND_SOME_ASTRAL):
            assert compile_pattern(pattern, engine="re").findall(text) == regex.findall(pattern, text), (
                pattern
            )


CUSTOM = [
    r"\p{Lu}+|\P{Lu}",
    r"\pL+|\PL",
    r"[\p{L}\p{M}]+|\p{^L}",
    r"\p{Letter}+|\p{gc=Nd}+|\p{General_Category=Other_Punctuation}|[\s\S]",
    r"[\p{Sc}\p{Sm}\p{So}]+|[^\p{Sc}\p{Sm}\p{So}]+",
    r"\d+|\D",
    r"\S+|\s+",
    r"[^\P{N}]+|[\P{N}]",
    r"(?:\p{Cn}|\p{Co})+|[^\p{Cn}\p{Co}]+",
    r"\p{L&}+|\p{LC}+|\p{Assigned}",
    r"[a-z]+|[A-Z]+|\x20|\u00e9|\N{EM SPACE}|[\s\S]",
    r"'(?i:s|t|re)|\w?".replace(r"\w?", r"[^\s]+|\s+"),
    r"[\U0001F600-\U0001F64F]+|[^\U0001F600-\U0001F64F]+",  # astral literals: no stand-ins
    r"(.)\1|[\s\S]",  # a backreference: no stand-ins
    r"(\p{L})(\p{N})?|[\s\S]",  # groups: findall returns them
    r"\p{Ll}++|\p{Lu}{1,3}+|(?>\s+)|(?=\S)\S",
    r"\s++$|\s+(?!\S)|[\s\S]",
    r"[[a]+|[^[a]+",  # a literal [ inside a class (no nested sets in regex V0)
    r"[]a]+|[^]a]+",
    r"[\p{L}-]+|[^\p{L}-]+",
    r"[\p{Lu}&&\p{Ll}]+|[\s\S]",  # && is literal in V0
    r"(?sm).|^\s+",
    r".+|\n",
    r"\s+\Z|\A\S+|\S+|\s+",
    r"\N{LATIN SMALL LETTER A}+|\141|\0|[^a\0]+",
    r"(?P<x>\p{L})(?P=x)|[\s\S]",
    r"\p{L}+?\p{L}|a{,2}b|[\s\S]",
    r"[^\S\n]+|[\p{Zs}\p{Cf}]|\S+|\n",
    r"\w+|\W",  # \w, \b, \B: the engine's own word class, and lookarounds on it
    r"'s|'t|'re|\w+|[^\w\s]+|\s+",
    r"\b\w+\b|\s+|[^\w\s]+",
    r"\B.|\b.",
    r"[\w-]+|[^\w-]",
    r"\w\b|\w+?|[\W\d]",
]


@pytest.mark.parametrize("pattern", CUSTOM)
def test_custom_patterns_translate_exactly(pattern):
    splitter = compile_pattern(pattern, engine="re")
    for text in [NASTY, *NASTY.splitlines(keepends=True)]:
        assert splitter.findall(text) == regex.findall(pattern, text), text


@settings(max_examples=60, deadline=None)
@given(texts_mixed)
def test_custom_patterns_on_random_text(text):
    for pattern in CUSTOM:
        assert compile_pattern(pattern, engine="re").findall(text) == regex.findall(pattern, text)


def test_none_pattern():
    for engine in patterns.REGEX_ENGINES:
        splitter = compile_pattern("none", engine=engine)
        assert splitter.findall("") == []
        assert splitter.findall("Hello, world 🙂\n") == ["Hello, world 🙂\n"]


@pytest.mark.parametrize("engine", ["re", "regex"])
@pytest.mark.parametrize("pattern", ["(", "[a-", "a)", "a{2,1}", r"\p{NoSuchThing}", "*", "x\\"])
def test_invalid_pattern_is_a_value_error(pattern, engine):
    with pytest.raises(ValueError, match="invalid split pattern"):
        compile_pattern(pattern, engine=engine)


@pytest.mark.parametrize("engine", ["re", "regex"])
@pytest.mark.parametrize("pattern", ["", "a*", r"\s*", "x|", "(?=a)", "$", "a?b?", r"(?:\p{L}|)+", "(a|b*)"])
def test_pattern_that_can_match_empty_is_rejected(pattern, engine):
    with pytest.raises(ValueError, match="empty"):
        compile_pattern(pattern, engine=engine)
    assert "" in regex.findall(pattern, "ab a(") or regex.fullmatch(pattern, "")


def test_named_patterns_cannot_match_empty():
    for pattern in PATTERNS.values():
        assert not _re_empty.can_match_empty(patterns.translate(pattern, unicode=TIKTOKEN).source)


@pytest.mark.parametrize("engine", ["re", "regex"])
def test_non_empty_patterns_are_accepted(engine):
    for pattern in ["a+", r"\s++$", "a|b", r"(?:ab)*c", r"x(?=y)", r"\p{L}{2,3}", *PATTERNS.values()]:
        compile_pattern(pattern, engine=engine)


@pytest.mark.parametrize(
    "pattern, reason",
    [
        (r"(?i)\w+", "case-insensitive"),
        (r"(?i:\bx)", "case-insensitive"),
        ("(?x) a b", "VERBOSE"),
        ("(?a)x", "ASCII"),
        ("[[:alpha:]]+", "POSIX"),
        ("(?:ab){e<=1}", "fuzzy"),
        (r"(?i)\p{Lu}", "case-insensitive"),
        ("(?i)é", "case-insensitive"),
        (r"\p{scx=Latin}", "general categories and scripts"),
        (r"\p{Alphabetic}", "unsupported property"),
    ],
)
def test_unsupported_syntax_under_re_is_a_clear_error(pattern, reason):
    with pytest.raises(ValueError, match=reason):
        compile_pattern(pattern, engine="re")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZé世\U00020000\u3042\u03b1\u0342\u3001 1!\n", max_size=30))
def test_scripts_under_re_split_as_the_regex_package(text):
    """\\p{Han} and other scripts were refused by the re translation (the page): now the
    regex flavour's Script table, astral characters matched as themselves (no stand-in)."""
    pattern = r"\p{Han}+|\p{Hiragana}+|\p{sc=Latin}+|\p{Script=Greek}+|[^\p{Han}\s]|\s+"
    assert compile_pattern(pattern, engine="re").findall(text) == regex.findall(pattern, text)


def test_engine_argument_and_cache():
    assert compile_pattern("gpt4", engine="re") is compile_pattern("gpt4", engine="re")
    assert compile_pattern("gpt4") is compile_pattern("gpt4", engine="re", unicode=TIKTOKEN)
    assert compile_pattern("gpt4", engine="re") is not compile_pattern("gpt4", engine="regex")
    assert isinstance(compile_pattern("gpt4", engine="re"), patterns.ReSplitter)
    assert isinstance(compile_pattern("gpt4", engine="regex"), regex.Pattern)
    with pytest.raises(ValueError, match="engine"):
        compile_pattern("gpt4", engine="pcre")
    with pytest.raises(TypeError):
        compile_pattern(None)


def test_unicode_argument():
    """Named patterns (by name or by their exact string) default to tiktoken's Unicode 16.0."""
    for name_or_string in ("gpt4", PATTERNS["gpt4"], "o200k", PATTERNS["gpt2"]):
        splitter = compile_pattern(name_or_string)
        assert isinstance(splitter, patterns.ReSplitter) and splitter.unicode == TIKTOKEN
        assert compile_pattern(name_or_string, unicode=REGEX).unicode == REGEX
    assert compile_pattern(r"\p{L}+|\P{L}", engine="re").unicode == REGEX
    assert compile_pattern(r"\p{L}+|\P{L}", unicode=TIKTOKEN).unicode == TIKTOKEN  # auto: re
    assert isinstance(compile_pattern("gpt4", engine="regex"), regex.Pattern)  # its own tables
    with pytest.raises(ValueError, match="only its own Unicode tables"):
        compile_pattern("gpt4", engine="regex", unicode=TIKTOKEN)
    with pytest.raises(ValueError, match="unicode flavour"):
        compile_pattern("gpt4", unicode="15.0")
    assert patterns.unicode_version(TIKTOKEN) == "16.0.0"


def test_named_patterns_split_new_letters_like_tiktoken():
    """U+088F became a letter in Unicode 17.0: not for tiktoken, so not for the named patterns."""
    text = "A\u088f's A\u0c5c1 \ua7ce"
    assert compile_pattern("gpt4").findall(text) == ["A", "\u088f'", "s", " A", "\u0c5c", "1", " \ua7ce"]
    assert compile_pattern("gpt4", unicode=REGEX).findall(text) == regex.findall(PATTERNS["gpt4"], text)
    assert regex.findall(PATTERNS["gpt4"], text) == ["A\u088f", "'s", " A\u0c5c", "1", " \ua7ce"]
    custom = r"\p{L}+|\P{L}"
    assert compile_pattern(custom, engine="re").findall(text) == regex.findall(custom, text)


def test_env_var_makes_auto_pick_re(monkeypatch):
    custom = r"\p{L}+|\s+|."
    monkeypatch.setenv("TOKENIZER_NO_REGEX", "1")
    assert patterns.default_engine() == "re"
    assert isinstance(compile_pattern(custom), patterns.ReSplitter)
    monkeypatch.setenv("TOKENIZER_NO_REGEX", "0")
    assert patterns.default_engine() == "regex"
    assert isinstance(compile_pattern(custom), regex.Pattern)


def test_named_patterns_use_the_fast_re_translation():
    """Only it has tiktoken's Unicode 16.0; faster than `regex`; the browser runs it too."""
    for name in ("gpt2", "gpt4", "o200k"):
        assert isinstance(compile_pattern(name), patterns.ReSplitter)
        assert compile_pattern(name).unicode == TIKTOKEN


BLOCK_REGEX = """
import sys, json
class BlockRegex:
    def find_spec(self, name, path=None, target=None):
        if name == "regex" or name.startswith("regex."):
            raise ImportError("regex is hidden for this test")
sys.meta_path.insert(0, BlockRegex())
from tokenizer import patterns
texts = json.loads(sys.stdin.read())
print(json.dumps({
    "engine": patterns.ENGINE,
    "regex_loaded": "regex" in sys.modules,
    "splitter": type(patterns.compile_pattern("gpt4")).__name__,
    "chunks": {name: [patterns.compile_pattern(name).findall(t) for t in texts] for name in ("gpt2", "gpt4", "o200k")},
    "tables": sorted(m for m in sys.modules if m.startswith("tokenizer._unicode_tables")),
}))
"""


def test_works_in_a_fresh_process_without_regex():
    texts = [NASTY, "Hello, world! 🙂 don't", ""]
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_REGEX],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin"},
        check=True,
    )
    out = json.loads(result.stdout)
    assert out["engine"] == "re" and not out["regex_loaded"] and out["splitter"] == "ReSplitter"
    assert out["tables"] == ["tokenizer._unicode_tables_16"]  # the other flavour is not imported
    for name in ("gpt2", "gpt4", "o200k"):
        assert out["chunks"][name] == [regex.findall(PATTERNS[name], t) for t in texts]


def test_tables_agree_with_installed_regex():
    """The "regex" tables must be the installed regex's Unicode version, code point by code point."""
    tables = patterns.unicode_tables(REGEX)
    every = "".join(map(chr, range(0x110000)))

    def regex_ranges(pattern):
        return [(m.start(), m.end() - 1) for m in regex.finditer(f"(?:{pattern})+", every)]

    for cat, hexes in tables.CATEGORY_RANGES.items():
        assert regex_ranges(rf"\p{{{cat}}}") == _unicode.parse_ranges(hexes), cat
    assert regex_ranges(r"\s") == _unicode.parse_ranges(tables.WHITE_SPACE)
    assert regex_ranges(r"\w") == _unicode.parse_ranges(tables.WORD)
    assert tables.UNICODE_VERSION == "18.0.0"  # what regex 2026.11.15 uses; tiktoken and Pyodide: 16.0


@pytest.mark.parametrize("flavour", patterns.UNICODE_FLAVOURS)
def test_standins_have_their_category_and_no_special_meaning(flavour):
    tables = patterns.unicode_tables(flavour)
    white = _unicode.white_space(flavour)
    for cat, candidates in tables.STANDINS.items():
        ranges = _unicode.categories_ranges((cat,), flavour)
        for cp in candidates:
            assert 0x100 <= cp <= 0xFFFF and any(a <= cp <= b for a, b in ranges), (cat, hex(cp))
            assert not any(a <= cp <= b for a, b in white)
    astral_categories = {
        cat for cat, hexes in tables.CATEGORY_RANGES.items() if _unicode.parse_ranges(hexes)[-1][1] > 0xFFFF
    }
    assert astral_categories == set(tables.STANDINS)


@pytest.mark.parametrize(
    ("encoding", "name"),
    [("r50k_base", "gpt2"), ("p50k_base", "gpt2"), ("cl100k_base", "gpt4"), ("o200k_base", "o200k")],
)
def test_encoding_names_name_their_patterns(encoding, name):
    # a tiktoken encoding name given as a pattern is that encoding's pattern, not a regex
    # matching only the literal text (which would encode everything else to nothing)
    assert resolve_pattern(encoding) == PATTERNS[name]
    text = "Hello world, cl100k_base 123!"
    assert compile_pattern(encoding).findall(text) == compile_pattern(name).findall(text)


@pytest.mark.parametrize(
    "pattern, text",
    [("b{start}|.", "b{start}"), (r"\b{end}|.", "{end}"), ("x{s}|.", "x{s}"), ("a{1<e<3}|.", "a{1<e<3}")],
)
def test_a_brace_regex_reads_as_fuzzy_is_refused_by_re(pattern, text):
    """`regex` reads a brace that begins like a fuzzy constraint as one, or fails on it: 'b{start}'
    is "expected }" there. The re translation took the brace for literal text and matched it."""
    try:
        assert text not in regex.findall(pattern, text)
    except regex.error:
        pass
    with pytest.raises(ValueError, match="fuzzy"):
        compile_pattern(pattern, engine="re", unicode="regex")


@pytest.mark.parametrize("pattern", [r"\pl+|.", r"\Pn|.", r"[\pl]+|.", r"a\pu|."])
def test_a_lowercase_one_letter_property_is_literal_text_as_in_regex(pattern):
    """`regex` reads \\pX as a property only for X in CLMNPSZ: '\\pl' is the text "pl". The re
    translation read it as \\p{L} and split every letter apart."""
    text = "apple Pnut pu lp"
    assert compile_pattern(pattern, engine="re", unicode="regex").findall(text) == regex.findall(
        pattern, text
    )


@pytest.mark.parametrize(
    "pattern", ["(?R)|.", "(?R)(c)", r"(a|b(?1))", r"(?P<n>a|b(?&n))", r"(?P<n>a(?P>n)?)"]
)
@pytest.mark.parametrize("engine", ["re", "regex"])
def test_a_recursive_pattern_is_a_value_error(pattern, engine):
    """engine="regex" raised MemoryError on '(?R)|.' (from `regex` itself, while checking for
    empty matches), and took '(?R)(c)', whose findall("abc") then raised MemoryError."""
    with pytest.raises(ValueError, match="recursion|invalid split pattern"):
        compile_pattern(pattern, engine=engine, unicode="regex")


@pytest.mark.parametrize("pattern", [r"[^\s\S]|x", r"[^]|[\s\S]", r"[^\d\P{Nd}]|x", r"[^\p{L}\P{L}a]|x"])
def test_a_negated_class_of_every_character_is_refused_by_re(pattern):
    """The regex package matches every character with '[^\\s\\S]' (a property and its complement
    in a negated class), re none: '[^]|[\\s\\S]' split everything apart under regex and gave
    nothing under the re translation."""
    text = "ab x 1é\n中"
    assert regex.findall(pattern, text) == list(text)
    with pytest.raises(ValueError, match="negated class of every character"):
        compile_pattern(pattern, engine="re", unicode="regex")


@pytest.mark.parametrize("engine", ["re", "regex"])
@pytest.mark.parametrize(
    "pattern", [r"\N{LATIN CAPITAL LETTER A WITH MACRON AND GRAVE}|.", r"[\N{KEYCAP NUMBER SIGN}]|."]
)
def test_a_named_sequence_is_a_value_error(pattern, engine):
    """\\N{..} naming a sequence of characters raised TypeError (ord() of two characters) in the
    re translation, and the regex package raises TypeError on it too."""
    with pytest.raises(ValueError, match="invalid split pattern"):
        compile_pattern(pattern, engine=engine, unicode="regex")

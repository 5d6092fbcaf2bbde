"""tokenizer/added_tokens.py: the special-token regex (HF's options are tested with `tokenizers`
itself in test_hf_import_added_tokens.py)."""

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from tokenizer import added_tokens
from tokenizer.added_tokens import literal_regex


def flat(tokens) -> re.Pattern[str]:
    """The obvious regex: every token, longest first."""
    return re.compile("|".join(re.escape(t) for t in sorted(tokens, key=lambda s: (-len(s), s))))


def spans(regex, text):
    return [(m.start(), m.end(), m.group()) for m in regex.finditer(text)]


tokens_st = st.sets(st.text("ab<|>.\\", min_size=1, max_size=7), min_size=1, max_size=12)


@settings(max_examples=400, deadline=None)
@given(tokens_st, st.text("ab<|>.\\x", max_size=40), st.sampled_from([0, 1, 2, 64]))
def test_the_trie_finds_what_the_flat_alternation_finds(tokens, text, depth):
    """Leftmost, then longest, at every depth limit (0: all flat; 1, 2: a trie cut short)."""
    old = added_tokens.MAX_TRIE_DEPTH
    added_tokens.MAX_TRIE_DEPTH = depth
    try:
        regex = literal_regex(tokens)
    finally:
        added_tokens.MAX_TRIE_DEPTH = old
    assert spans(regex, text) == spans(flat(tokens), text)
    # texts made of the tokens themselves, glued, hit every prefix relation
    glued = "".join(sorted(tokens)) + "".join(sorted(tokens, reverse=True))
    assert spans(regex, glued) == spans(flat(tokens), glued)


def test_long_tokens_and_chains_of_prefixes_compile():
    """A token of 10,000 characters, and 600 tokens each a prefix of the next (600 nested groups
    overflow stdlib re's parser; deeper than MAX_TRIE_DEPTH the rest is one flat alternation)."""
    chain = ["a" * n for n in range(1, 601)]
    regex = literal_regex([*chain, "b" * 10_000])
    assert spans(regex, "a" * 1000 + "b" * 10_000) == [
        (0, 600, "a" * 600),
        (600, 1000, "a" * 400),
        (1000, 11_000, "b" * 10_000),
    ]


def test_many_tokens_sharing_a_start_are_not_tried_one_by_one():
    """A hang regression, not a speed claim: 65,536 tokens "<tN>" took 75 us per "<" of the text
    with one flat alternation, 22 s for these 300,000 characters of "<t1<t1..." (70 s a MB); the
    trie tries one branch per character and takes ~0.02 s."""
    regex = literal_regex([f"<t{i}>" for i in range(65_536)])
    text = "<t1" * 100_000 + "<t65535>"
    started = time.perf_counter()
    assert spans(regex, text) == [(300_000, 300_008, "<t65535>")]
    assert time.perf_counter() - started < 2

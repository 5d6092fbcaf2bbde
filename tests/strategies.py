"""Hypothesis strategies shared by the trainer tests: texts full of ties."""

from hypothesis import strategies as st

# Tiny alphabets, repeated words, odd whitespace, a few multi-byte characters.
WORDS = [
    "ab",
    "ba",
    "aab",
    "abab",
    " ab",
    " ba",
    "aaa",
    "a",
    "b",
    " ",
    "  ",
    "\n",
    "é",
    "éé",
    "日本",
    "'s",
    "1",
]


def tie_heavy_texts(max_size: int = 80, max_words: int = 40, max_repeated: int = 6) -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(alphabet="ab \n", max_size=max_size),
        st.lists(st.sampled_from(WORDS), max_size=max_words).map("".join),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=max_repeated).map(lambda ws: " ".join(ws * 4)),
    )

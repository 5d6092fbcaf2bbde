"""Named split patterns (tiktoken's current strings) and a compiler for them.

Compiles with the `regex` package when it is importable; otherwise (Pyodide)
translates the pattern to stdlib `re` using generated Unicode tables.
"""

from __future__ import annotations

import functools

R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

PATTERNS: dict[str, str] = {
    "gpt2": R50K_PATTERN,
    "r50k": R50K_PATTERN,
    "p50k": R50K_PATTERN,
    "cl100k": CL100K_PATTERN,
    "gpt4": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "gpt4o": O200K_PATTERN,
}


def resolve_pattern(name_or_regex: str) -> str:
    """A pattern name (gpt2, gpt4, o200k, ...) -> its regex; anything else is taken as a regex."""
    return PATTERNS.get(name_or_regex, name_or_regex)


@functools.lru_cache(maxsize=32)
def compile_pattern(pattern: str):
    """Compile a split pattern (name or regex); the result has .findall(text) -> list[str]."""
    import regex

    return regex.compile(resolve_pattern(pattern))

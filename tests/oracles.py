"""Oracles shared by test files: the peers' own implementations, set up to read our data."""

from __future__ import annotations

import functools
from unittest import mock

import tiktoken
import tiktoken_ext.openai_public as openai_public

from tokenizer import get_encoding

RANKS_OF = {"p50k_edit": "p50k_base", "o200k_harmony": "o200k_base"}  # encodings sharing ranks


@functools.cache
def tiktoken_reference(name: str) -> tiktoken.Encoding:
    """tiktoken's own Encoding for `name` (its constructor: pattern, special tokens), its rank
    loaders answering with our shipped ranks (it would download them); everything else is
    tiktoken's. Any name of tiktoken's ENCODING_CONSTRUCTORS (p50k_edit and o200k_harmony too,
    whose ranks are another encoding's), built once."""
    ranks = get_encoding(RANKS_OF.get(name, name)).mergeable_ranks
    with mock.patch.multiple(
        openai_public,
        load_tiktoken_bpe=lambda *a, **k: ranks,
        data_gym_to_mergeable_bpe_ranks=lambda *a, **k: ranks,
    ):
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())

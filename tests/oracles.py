"""Oracles shared by test files: the peers' own implementations, set up to read our data."""

from __future__ import annotations

import functools
from unittest import mock

import tiktoken
import tiktoken_ext.openai_public as openai_public

from tokenizer import get_encoding


def tiktoken_reference(name: str) -> tiktoken.Encoding:
    """tiktoken's own constructor for `name` (its pattern and special tokens), fed our ranks.

    Only the rank loaders are replaced (it would download); everything else is tiktoken's.
    """
    ours = get_encoding(name)
    loaders = ("load_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks")
    originals = {loader: getattr(openai_public, loader) for loader in loaders}
    for loader in loaders:
        setattr(openai_public, loader, lambda *a, **k: ours.mergeable_ranks)
    try:
        params = getattr(openai_public, name)()
    finally:
        for loader, original in originals.items():
            setattr(openai_public, loader, original)
    return tiktoken.Encoding(**params)


RANKS_OF = {"p50k_edit": "p50k_base", "o200k_harmony": "o200k_base"}  # encodings sharing ranks


@functools.cache
def real(name: str) -> tiktoken.Encoding:
    """tiktoken's own Encoding for `name`, its rank loaders answering with our shipped ranks.

    Any name of tiktoken's ENCODING_CONSTRUCTORS (p50k_edit and o200k_harmony too, whose ranks are
    another encoding's), built once: tokenizer.compat's tests compare with it."""
    ranks = get_encoding(RANKS_OF.get(name, name)).mergeable_ranks
    with mock.patch.multiple(
        openai_public,
        load_tiktoken_bpe=lambda *a, **k: ranks,
        data_gym_to_mergeable_bpe_ranks=lambda *a, **k: ranks,
    ):
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())

"""Oracles shared by test files: the peers' own implementations, set up to read our data."""

from __future__ import annotations

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

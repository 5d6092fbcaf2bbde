"""A Tokenizer to and from its saved form: STEM.json's object, and the checked parts a file
reader returns (readers.py).

Kept out of core.py, which holds encoding and decoding: these functions take the Tokenizer (or
its class) as an argument, so this module never imports core (tests/test_layers.py forbids
cycles) and `Tokenizer.to_json` / `Tokenizer.from_parts` stay one-line methods.
"""

from __future__ import annotations

from typing import Any

from . import formats
from .readers import TokenizerParts
from .validate import TokenizerFileError


def tokenizer_json(tok: Any) -> dict[str, Any]:
    """STEM.json's object: everything but the ranks (those go to STEM.tiktoken)."""
    return {
        "format": formats.FORMAT_NAME,
        "version": formats.FORMAT_VERSION,
        "name": tok.name,
        "pattern": tok.pattern,
        "pattern_regex": tok.pattern_regex,
        "special_tokens": tok.special_tokens,
        "vocab_size": tok.n_vocab,
        "merges": [list(pair) for pair in tok.merges] if tok.merges is not None else None,
        "metadata": tok.metadata,
        **({"preparation": tok.preparation.to_json()} if tok.preparation else {}),
        **({} if tok.chunk_lookup else {"chunk_lookup": False}),
        **({"unicode": tok.unicode} if tok.unicode else {}),
        **formats.duplicate_ids_json(tok.merges, tok.duplicate_ids),
    }


def from_parts(cls: Any, parts: TokenizerParts) -> Any:
    """A `cls` (Tokenizer) built from what a file reader returned; an error names the file it is about."""
    ranks_source = parts.ranks_source or parts.source
    options = {
        "name": parts.name,
        "metadata": parts.metadata,
        "preparation": parts.preparation,
        "chunk_lookup": parts.chunk_lookup,
        "unicode": parts.unicode,
    }
    if parts.merges is None:  # a reader gives merges or ranks
        try:
            return cls(parts.ranks, parts.pattern, parts.special_tokens, decoder=parts.decoder, **options)
        except ValueError as e:
            raise TokenizerFileError(f"{ranks_source}: {e}") from None
    try:
        tok = cls.from_merges(parts.merges, parts.pattern, parts.special_tokens, **options)
    except ValueError as e:
        raise TokenizerFileError(f"{parts.source}: {e}") from None
    if parts.ranks is not None and parts.ranks != tok.mergeable_ranks:
        raise TokenizerFileError(
            f"{ranks_source}: its ranks disagree with the merges in {parts.source}; the two files "
            "belong to different tokenizers (save them again together, or remove one)"
        )
    return tok

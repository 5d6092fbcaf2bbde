"""A drop-in tiktoken: its public API on top of our pure-Python encoder.

    import tokenizer.compat as tiktoken

    enc = tiktoken.get_encoding("cl100k_base")       # or tiktoken.encoding_for_model("gpt-4o")
    enc.encode("hello <|endoftext|>", allowed_special="all")   # [15339, 220, 100257]

Code written for tiktoken then runs unchanged where tiktoken cannot: in the browser (Pyodide),
or wherever its Rust extension is not installed. tiktoken's own test suite (from its sdist)
passes against this module; tests/test_compat_tiktoken_suite.py runs it that way.

Why the ids are tiktoken's: an `Encoding` is a thin shell around `tokenizer.core.Tokenizer`,
whose encoder is tiktoken's algorithm (lowest-rank-first merges inside each regex chunk, with
tiktoken's Unicode 16.0 tables for every pattern). This module only adds tiktoken's surface:
its special-token rules and error text, its exception types (KeyError for unknown tokens),
and the few routines its Rust core has that ours lacks (`_encode_bytes` and
`encode_with_unstable`), written here from what tiktoken's Rust does, step by step.

Differences, all deliberate: the `num_threads` arguments are accepted and ignored (pure
Python holds the GIL, so threads would only add overhead, and Pyodide cannot start them);
a failed `explicit_n_vocab` check or a non-int `is_special_token` argument raises ValueError
or TypeError where tiktoken asserts; ranks must hold all 256 single bytes and distinct ids
(ValueError; tiktoken's Rust panics later, or at once); an empty `_encode_single_piece` is
[] (a panic in tiktoken); a str `disallowed_special` other than "all" is a TypeError
(tiktoken reads "<|endoftext|>" as the set of its characters and refuses any text holding a
"<"); and the reference encodings are built from the ranks this package ships, so nothing is
ever downloaded. Like tiktoken's, encode_with_unstable and
encode_to_numpy raise UnicodeEncodeError on a lone surrogate that `encode` would replace.
"""

from __future__ import annotations

import bisect
import functools
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, Literal

from . import encodings
from ._compat_checks import (
    _allowed_type_error,
    _is_str_set,
    _piece_bytes,
    _require_bytes,
    _require_sequence,
    _require_utf8,
    _tiktoken_ids,
    _token_id,
    _token_ids,
)
from .core import Tokenizer
from .openai_models import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING, encoding_name_for_model
from .patterns import TIKTOKEN, looks_like_a_name

__all__ = [  # tiktoken's package names, and its registry's and model table's
    "Encoding",
    "get_encoding",
    "list_encoding_names",
    "encoding_for_model",
    "encoding_name_for_model",
    "ENCODINGS",
    "ENCODING_CONSTRUCTORS",
    "MODEL_TO_ENCODING",
    "MODEL_PREFIX_TO_ENCODING",
    "TIKTOKEN_VERSION",
]
TIKTOKEN_VERSION = "0.14.0"  # the tiktoken release whose API and model table this mirrors

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
_WHITESPACE_BYTES = frozenset(b" \n\t")  # what tiktoken's "all space" check accepts


class Encoding:
    """tiktoken.Encoding: ranks + split pattern + special tokens, with tiktoken's methods."""

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        mergeable_ranks, special_tokens = _tiktoken_ids(mergeable_ranks), _tiktoken_ids(special_tokens)
        self.name = name
        self._pat_str = pat_str
        self._mergeable_ranks = mergeable_ranks
        self._special_tokens = special_tokens
        self.max_token_value = max(max(mergeable_ranks.values()), max(special_tokens.values(), default=0))
        if explicit_n_vocab:
            count = len(mergeable_ranks) + len(special_tokens)
            if count != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1:
                raise ValueError(
                    f"encoding {name!r}: explicit_n_vocab={explicit_n_vocab}, but it has {count} tokens "
                    f"and its largest id is {self.max_token_value}; they must be n and n - 1"
                )
        if len(set(mergeable_ranks.values())) != len(mergeable_ranks):
            raise ValueError(
                f"encoding {name!r}: two mergeable tokens share a rank; every token needs its own id"
            )
        self._special_token_values = set(special_tokens.values())
        # tiktoken's Rust regex is at Unicode 16.0, for any pat_str: the "tiktoken" tables. A special
        # token may reuse a merged token's id (a GPT-2 vocab.json holds <|endoftext|> at 50256).
        # tiktoken's pat_str is always a regex, "gpt2" or "none" too: matched as that literal text
        regex = f"(?:{pat_str})" if isinstance(pat_str, str) and looks_like_a_name(pat_str) else pat_str
        self._tokenizer = Tokenizer(
            mergeable_ranks, regex, special_tokens, name=name, unicode=TIKTOKEN, shared_special_ids=True
        )

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ----- encoding ---------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ignoring special tokens: `encode(text, disallowed_special=())`."""
        return self._tokenizer.encode_ordinary(text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encode; special-token text is an id if allowed, an error if disallowed, else text.

        By default every special token is disallowed: text from a user that spells
        "<|endoftext|>" must not silently become a control token.
        """
        allowed = self._allowed(text, allowed_special, disallowed_special)
        return self._tokenizer.encode(text, allowed_special=allowed, disallowed_special=())

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> Any:
        """`encode` as a numpy uint32 array (numpy is imported only here)."""
        import numpy as np

        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        _require_utf8(text)
        return np.array(ids, dtype=np.uint32)

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        return [self.encode_ordinary(t) for t in text]

    def encode_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        self._subtract_allowed(allowed_special, disallowed_special)  # tiktoken's, before any text
        if disallowed_special != "all" and not isinstance(disallowed_special, Iterable):
            raise TypeError(
                f"disallowed_special must be 'all' or a collection of special tokens, not {disallowed_special!r}"
            )
        return [
            self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special)
            for t in text
        ]

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """Stable tokens, and every token sequence the text's unfinished end could become.

        The last regex piece (widened over trailing whitespace tokens, whose split can move)
        is unstable: more text could merge into it. Completions are (1) every single token
        whose bytes start with those bytes, (2) for each split point inside them, the
        prefix joined to every token that starts with the rest, re-encoded and cut once it
        covers the unstable bytes, and (3) a split before a trailing whitespace character.
        Like tiktoken's, and like its answer an unordered set (here sorted).
        """
        allowed = self._allowed(text, allowed_special, disallowed_special)
        _require_utf8(text)
        tokens, last_len = self._encode_tracking_last_piece(text, allowed)
        if last_len == 0:  # nothing, or a special token, ends the text
            return tokens, []
        last_len = self._widen_over_whitespace(tokens, last_len)
        unstable = self.decode_bytes(tokens[-last_len:])
        stable = tokens[:-last_len]
        completions = {(self._mergeable_ranks[t],) for t in self._tokens_starting_with(unstable)}
        for i in range(1, len(unstable)):
            prefix, suffix = unstable[:i], unstable[i:]
            for token in self._tokens_starting_with(suffix):
                completions.add(self._covering_prefix(self._encode_maybe_text(prefix + token), len(unstable)))
        last = _last_char(unstable)
        if last and _is_white_space(last[0]) and len(unstable) > last[1]:  # \s+(?!\S) may split there
            cut = len(unstable) - last[1]
            head, tail = self._encode_single_piece(unstable[:cut]), self._encode_single_piece(unstable[cut:])
            completions.add((*head, *tail))
        return stable, [list(c) for c in sorted(completions)]

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of text that is exactly one token (special tokens included); else KeyError."""
        text_or_bytes = _piece_bytes(text_or_bytes)
        rank = self._mergeable_ranks.get(text_or_bytes)
        if rank is not None:
            return rank
        try:
            return self._special_tokens[text_or_bytes.decode("utf-8")]
        except (UnicodeDecodeError, KeyError):
            raise KeyError(text_or_bytes) from None

    # ----- decoding ---------------------------------------------------------------------

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        _require_sequence(tokens)  # decode_tokens_bytes, a loop in tiktoken's Python, takes any iterable
        tokens = _token_ids(tokens)
        try:
            return self._tokenizer.decode_bytes(tokens)
        except ValueError:
            bad = next(t for t in tokens if not self._is_known(t))
            raise KeyError(f"Invalid token for decoding: {bad}") from None

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Tokens -> text. Lossy by default: bytes that are not valid UTF-8 become U+FFFD."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """One token's bytes (special tokens included); KeyError for an unknown id."""
        try:
            return self._tokenizer.decode_single_token_bytes(_token_id(token))
        except ValueError:
            raise KeyError(str(token)) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        return [self.decode_single_token_bytes(t) for t in _token_ids(tokens)]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text, and for each token the index of the first character it has bytes of.

        Counting characters = counting bytes that are not UTF-8 continuation bytes
        (0x80-0xBF); a token that starts mid-character belongs to the character begun
        before it. Raises UnicodeDecodeError if the tokens are not valid UTF-8 together.
        """
        pieces = self.decode_tokens_bytes(tokens)
        offsets = []
        chars = 0
        for piece in pieces:
            starts_inside = 0x80 <= piece[0] < 0xC0
            offsets.append(max(0, chars - starts_inside))
            chars += sum(not 0x80 <= b < 0xC0 for b in piece)
        return b"".join(pieces).decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        return [self.decode_bytes(tokens) for tokens in batch]

    # ----- miscellaneous ----------------------------------------------------------------

    def token_byte_values(self) -> list[bytes]:
        """Every mergeable token's bytes, sorted (special tokens are not included)."""
        return list(self._sorted_token_bytes)

    @property
    def eot_token(self) -> int:
        return self._special_tokens[ENDOFTEXT]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        if not isinstance(token, int):
            raise TypeError(f"is_special_token takes a token id (int), not {type(token).__name__}")
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (tiktoken keeps it for backwards compatibility)."""
        return self.max_token_value + 1

    # ----- private, but reached for by tiktoken's users -------------------------------------

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE on the whole input as one chunk: no regex split, no special tokens."""
        text_or_bytes = _piece_bytes(text_or_bytes)
        rank = self._mergeable_ranks.get(text_or_bytes)
        if rank is not None:
            return [rank]
        # These bytes need not be UTF-8, so not `encode`: the merge loop on the bytes themselves.
        return self._tokenizer.bpe_merge(text_or_bytes)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """The regex split done here, BPE per chunk: the same ids as `encode_ordinary`."""
        return [i for chunk in self._tokenizer.split(text) for i in self._encode_single_piece(chunk)]

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Encode bytes that need not be valid UTF-8 (e.g. text cut mid-character).

        The valid prefix is encoded as text; its last piece (widened over trailing
        whitespace tokens) is then joined to the invalid rest and BPE'd as one piece, so a
        character cut in two still merges as far as the ranks allow. tiktoken's rule.
        """
        try:
            return self.encode_ordinary(_require_bytes(text).decode("utf-8"))
        except UnicodeDecodeError as e:
            valid_up_to = e.start
        tokens, last_len = self._encode_tracking_last_piece(text[:valid_up_to].decode("utf-8"), set())
        last_len = self._widen_over_whitespace(tokens, last_len)
        rest = text[valid_up_to:]
        if tokens and last_len:
            rest = self.decode_bytes(tokens[-last_len:]) + rest
            del tokens[-last_len:]
        return tokens + self._encode_single_piece(rest)

    # ----- pickling: registered encodings by name, others by value --------------------------

    def __getstate__(self) -> object:
        if self is ENCODINGS.get(self.name):
            return self.name
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value: object) -> None:
        if isinstance(value, str):
            self.__dict__ = get_encoding(value).__dict__
            return
        self.__init__(**value)  # type: ignore[misc]

    # ----- helpers ----------------------------------------------------------------------

    def _allowed(
        self, text: str, allowed_special: object, disallowed_special: Literal["all"] | Collection[str]
    ) -> set[str]:
        """The allowed special tokens, with tiktoken's errors in tiktoken's order: TypeError
        where its `special_tokens_set - allowed_special` fails, ValueError for a disallowed
        token in the text, then TypeError unless allowed_special is "all" or a set of str, which
        is all its Rust reads (a list of tokens was taken here, and code run here broke there)."""
        self._subtract_allowed(allowed_special, disallowed_special)
        if allowed_special == "all" or _is_str_set(allowed_special):
            return self._tokenizer.check_special(text, allowed_special, disallowed_special)  # type: ignore[arg-type]
        iterable = isinstance(allowed_special, Iterable) and not isinstance(allowed_special, str)
        tokens = {token for token in allowed_special if isinstance(token, str)} if iterable else set()  # type: ignore[union-attr]
        self._tokenizer.check_special(text, tokens, disallowed_special)  # type: ignore[arg-type]
        raise _allowed_type_error(allowed_special)

    def _subtract_allowed(self, allowed_special: object, disallowed_special: object) -> None:
        """tiktoken's `disallowed_special = special_tokens_set - allowed_special`, for its TypeError."""
        if disallowed_special == "all" and allowed_special != "all":
            try:
                self.special_tokens_set - allowed_special  # type: ignore[operator]  # noqa: B018
            except TypeError:
                raise _allowed_type_error(allowed_special) from None

    def _encode_tracking_last_piece(self, text: str, allowed: set[str]) -> tuple[list[int], int]:
        """`encode`, and how many of its tokens come from the text's last regex piece
        (0 when the text is empty or ends with an allowed special token)."""
        tokens = self._tokenizer.encode(text, allowed_special=allowed, disallowed_special=())
        allowed = allowed & self.special_tokens_set
        specials = list(self._tokenizer.special_regex(allowed).finditer(text)) if allowed else []
        tail = text[specials[-1].end() :] if specials else text
        pieces = self._tokenizer.split(tail)
        return tokens, len(self._encode_single_piece(pieces[-1])) if pieces else 0

    def _widen_over_whitespace(self, tokens: list[int], last_len: int) -> int:
        """Regex splits inside whitespace can move as text is added (cl100k's \\s*[\\r\\n]
        turns "\\n" + " " into "\\n \\n"), so whitespace tokens before an all-whitespace
        last piece count as unstable too."""
        if last_len and self._is_all_space(tokens[-last_len]):
            while last_len < len(tokens) and self._is_all_space(tokens[-last_len - 1]):
                last_len += 1
        return last_len

    def _is_all_space(self, token: int) -> bool:
        if token in self._special_token_values:
            return False
        return _WHITESPACE_BYTES.issuperset(self.decode_single_token_bytes(token))

    def _is_known(self, token: object) -> bool:
        try:
            self.decode_single_token_bytes(token)  # type: ignore[arg-type]
        except KeyError:
            return False
        return True

    @functools.cached_property
    def _sorted_token_bytes(self) -> list[bytes]:
        return sorted(self._mergeable_ranks)

    def _tokens_starting_with(self, prefix: bytes) -> list[bytes]:
        """Mergeable tokens whose bytes start with `prefix` (a range of the sorted list)."""
        tokens = self._sorted_token_bytes
        start = bisect.bisect_left(tokens, prefix)
        end = start
        while end < len(tokens) and tokens[end].startswith(prefix):
            end += 1
        return tokens[start:end]

    def _encode_maybe_text(self, data: bytes) -> list[int]:
        """Valid UTF-8 goes through the regex split (it may split where BPE alone would
        merge); other bytes are one piece."""
        try:
            return self.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError:
            return self._encode_single_piece(data)

    def _covering_prefix(self, tokens: list[int], length: int) -> tuple[int, ...]:
        """The shortest prefix of `tokens` whose bytes are at least `length` long."""
        covered = 0
        for n, token in enumerate(tokens, start=1):
            covered += len(self.decode_single_token_bytes(token))
            if covered >= length:
                return tuple(tokens[:n])
        return tuple(tokens)


def _last_char(data: bytes) -> tuple[str, int] | None:
    """The character the bytes end with and its UTF-8 length; None if they end invalidly."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            char = data[-size:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return (char, size) if len(char) == 1 else None
    return None


def _is_white_space(char: str) -> bool:
    """Unicode White_Space, as Rust's char::is_whitespace: str.isspace() minus the four
    information separators U+001C..U+001F, which Python counts as space and Unicode does not."""
    return char.isspace() and not "\x1c" <= char <= "\x1f"


# ----- the named encodings ----------------------------------------------------------------

FIM_TOKENS = {FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}  # p50k_edit's additions
HARMONY_NAMED = {  # o200k_harmony's named tokens; every other id in its range is <|reserved_ID|>
    199998: "<|startoftext|>",
    199999: ENDOFTEXT,
    200002: "<|return|>",
    200003: "<|constrain|>",
    200005: "<|channel|>",
    200006: "<|start|>",
    200007: "<|end|>",
    200008: "<|message|>",
    200012: "<|call|>",
}
HARMONY_IDS = range(199998, 201088)  # o200k_harmony's special ids (n_vocab 201088)


def _reference(
    name: str, *, base: str | None = None, extra: dict[str, int] | None = None, n_vocab: int | None = None
) -> dict[str, Any]:
    """Encoding arguments for a reference encoding: our shipped ranks, pattern and special
    tokens of `base` (default: `name`), plus `extra` special tokens."""
    tok = encodings.get_encoding(base or name)
    return {
        "name": name,
        "pat_str": tok.pattern_regex,
        "mergeable_ranks": tok.mergeable_ranks,
        "special_tokens": {**tok.special_tokens, **(extra or {})},
        "explicit_n_vocab": n_vocab,
    }


def _o200k_harmony() -> dict[str, Any]:
    # o200k_base's special tokens stay, so <|endofprompt|> and <|reserved_200018|> share 200018.
    # tiktoken decodes 200018 as <|endofprompt|> (the order of its FxHashMap, which has no random
    # seed: the same in every process); our decoder takes an id's last name, so that one goes last.
    extra = {HARMONY_NAMED.get(i, f"<|reserved_{i}|>"): i for i in HARMONY_IDS}
    args = _reference("o200k_harmony", base="o200k_base", extra=extra)
    args["special_tokens"]["<|endofprompt|>"] = args["special_tokens"].pop("<|endofprompt|>")
    return args


ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] = {
    "gpt2": functools.partial(_reference, "gpt2", n_vocab=50257),
    "r50k_base": functools.partial(_reference, "r50k_base", n_vocab=50257),
    "p50k_base": functools.partial(_reference, "p50k_base", n_vocab=50281),
    "p50k_edit": functools.partial(_reference, "p50k_edit", base="p50k_base", extra=FIM_TOKENS),
    "cl100k_base": functools.partial(_reference, "cl100k_base"),
    "o200k_base": functools.partial(_reference, "o200k_base"),
    "o200k_harmony": _o200k_harmony,
}
ENCODINGS: dict[str, Encoding] = {}  # built on first use; pickles of these hold only the name
_lock = threading.RLock()


def get_encoding(encoding_name: str) -> Encoding:
    """A named encoding, built once per process (the same object every time)."""
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    enc = ENCODINGS.get(encoding_name)
    if enc is not None:
        return enc
    with _lock:
        if encoding_name not in ENCODINGS:
            constructor = ENCODING_CONSTRUCTORS.get(encoding_name)
            if constructor is None:
                raise ValueError(
                    f"Unknown encoding {encoding_name}.\n"
                    f"Available encodings: {', '.join(ENCODING_CONSTRUCTORS)}"
                )
            ENCODINGS[encoding_name] = Encoding(**constructor())
        return ENCODINGS[encoding_name]


def list_encoding_names() -> list[str]:
    return list(ENCODING_CONSTRUCTORS)


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding a model uses (see encoding_name_for_model)."""
    return get_encoding(encoding_name_for_model(model_name))

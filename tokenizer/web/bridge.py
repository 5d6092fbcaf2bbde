"""The worker's Python side: one function per message op of web/worker.js.

The page talks to a Web Worker (web/worker.js) that boots Pyodide, unpacks our wheel and
imports this module; each request the worker gets becomes one call here, and the worker only
turns the answer into a reply. The tokenizers the page compares live in this module, by name.

Why the answers have these shapes: crossing from Python to JavaScript costs per object, so
- token data comes back as a few `bytes` (Pyodide hands each over as one Uint8Array): the ids
  and the byte length of every token as native int32 arrays, and all tokens' bytes
  concatenated; the worker views the int32 ones as Int32Arrays and transfers them to the page.
  80k tokens cost a few milliseconds this way, against a second as 80k Python ints;
- structured answers (info, merge trees, Learn runs) come back as JSON text, parsed once in JS.

Arguments from JavaScript arrive as Pyodide proxies; `_bytes` and `_ints` are the only place
that knows it (a CPython caller passes bytes and lists), so everything else is plain Python and
tests/test_bridge.py checks it against `Tokenizer.encode/split/decode` without a browser.
"""

from __future__ import annotations

import json
import time
from array import array
from typing import Any

from .. import formats
from .._arguments import check_text
from ..core import Tokenizer
from ..encodings import (
    ENCODING_PATTERN_NAMES,
    encoding_from_bytes,
    encoding_from_npm_json,
    list_encodings,
    register_encoding,
)
from ..loading import from_texts
from ..patterns import NO_SPLIT, compile_pattern, is_named
from ..stats import well_formed
from . import analysis, jsmerge
from . import learn as learn_mode
from .incremental import IncrementalEncoder

MAX_TREE_DEPTH = 64  # merge-tree levels sent to the page; a real token is never this deep
# bytes of all the nodes of a merge tree sent to the page (a real token's tree has a few hundred):
# a token of 2**k bytes made by self-merges has 2**(k+1) - 1 nodes, k bytes per byte of it, which
# at k = 16 was 17 MB of JSON and 131,000 nodes to draw (a frozen page), at k = 18 a worker restart
MAX_TREE_BYTES = 1 << 16
# list entries per id of the byte-length table before it is a dict: a list of n_vocab entries was
# 0.7 s and 200 MB for a file whose one merge has id 50,000,000, an OverflowError for 2**31 - 1
MAX_LEN_TABLE_SLACK = 4
# bytes the decode box's ids may decode to: its 1,000,000 ids are about 4 MB of text, but ids of
# long tokens (a 2 MB merge, a special token of megabytes) made 200 MB from 100 ids, and 2,000 of
# them an OverflowError from join()
MAX_DECODE_BYTES = 64 << 20
_toks: dict[str, Tokenizer] = {}
_merge_cache: dict[str, list[tuple[int, bytes]]] = {}
_editors: dict[str, tuple[int, IncrementalEncoder]] = {}  # panel key -> (serial, its text's encoding)
_serials = iter(range(1, 1 << 62))


def _bytes(buf: Any) -> bytes:
    """A JS Uint8Array (a Pyodide JsProxy: to_bytes() copies it at once, where bytes() would
    iterate 100x slower) or, from CPython, any bytes-like object."""
    to_bytes = getattr(buf, "to_bytes", None)
    return to_bytes() if to_bytes is not None else bytes(buf)


def _ints(values: Any) -> list[int]:
    """A JS Array of numbers (a JsProxy: to_py() converts it in one call), an Int32Array (its
    to_py() is a memoryview of int32s: one copy, then tolist() in C, where converting 200,000
    numbers one by one took most of a decode) or a Python iterable."""
    to_py = getattr(values, "to_py", None)
    values = to_py() if to_py is not None else values
    if isinstance(values, memoryview):
        if values.format not in ("i", "=i", "<i"):
            raise TypeError(f"ids must be an Int32Array, got items of format {values.format!r}")
        return values.cast("B").cast("i").tolist()
    return [int(v) for v in values]


def warm_up() -> None:
    """Compile the reference encodings' split patterns: a memory snapshot taken after this
    (scripts/pyodide_snapshot.mjs) boots with them ready, so the first encode is not slow."""
    for pattern in dict.fromkeys(ENCODING_PATTERN_NAMES.values()):
        compile_pattern(pattern)


def _custom_regexes(tok: Tokenizer) -> list[str]:
    """The tokenizer's split regexes that are not named patterns (its pre-splits, then its
    pattern): only these can backtrack catastrophically, so a too-slow encode names them, and
    with none the page says the time went into merging a long piece (web/panels.js)."""
    pre_splits = tok.preparation.pre_splits if tok.preparation is not None else ()
    return [p for p in (*pre_splits, tok.pattern) if p != NO_SPLIT and not is_named(p)]


def _info(tok: Tokenizer) -> str:
    return json.dumps(
        {
            "name": tok.name,
            "n_vocab": tok.n_vocab,
            "pattern": tok.pattern,
            "pattern_regex": tok.pattern_regex,
            "custom_regexes": _custom_regexes(tok),
            "special_tokens": tok.special_tokens,
            "n_ranks": len(tok.mergeable_ranks),
        }
    )


def _add(tok: Tokenizer) -> str:
    _toks[tok.name] = jsmerge.attach(tok)
    _merge_cache.pop(tok.name, None)
    _len_table(tok)  # now, in the load's time (see load_blob)
    return _info(tok)


def load_blob(name: str, buf: Any) -> str:
    """Register a reference encoding from its blob (tokenizer.encodings.pack_encoding).

    The table of token lengths is built here, not by the first encode: a load may take a minute
    (web/worker-client.js's deadlines), an encode 2 s, and the table of a file of 1.5 million ids
    took longer than that, so its first encode was stopped as "too slow" and never shown."""
    tok = register_encoding(_bytes(buf))
    _toks[name] = jsmerge.attach(tok)
    _len_table(tok)
    return _info(tok)


def prepare_merge(name: str) -> bool:
    """One step of building the tokenizer's JavaScript merge table (the worker calls it while
    idle, so that the first large encode does not pay for it); True when there is no more to
    do (complete, or not in the worker)."""
    merge = _toks[name].batch_merge
    return not isinstance(merge, jsmerge.JsMerge) or merge.prepare(1)


def merge_stats(enabled: bool | None = None) -> str:
    """What the JavaScript batch merge did so far ({enabled, batches, pieces, tables});
    `enabled` (True/False) turns it on or off first (bench/browser.py times both ways)."""
    if enabled is not None:
        jsmerge.stats.enabled = bool(enabled)
    s = jsmerge.stats
    return json.dumps({"enabled": s.enabled, "batches": s.batches, "pieces": s.pieces, "tables": s.tables})


def forget_chunks() -> None:
    """Empty every tokenizer's chunk cache: bench/browser.py times a cold encode, as CPython's
    with a fresh tokenizer (a warm one only looks its chunks up), and the JavaScript batch
    merge's cache of pair ranks."""
    for tok in _toks.values():
        tok._cache.clear()
        if isinstance(tok.batch_merge, jsmerge.JsMerge):
            tok.batch_merge.forget()


def _len_table(tok: Tokenizer) -> list[int] | dict[int, int]:
    """Byte length of every id, as a list: map(list.__getitem__, ids) runs at C speed. Ids with
    gaps (a file may hold the 256 bytes and one id of 2**31 - 1) get a dict, looked up in C too."""
    table = getattr(tok, "_playground_lens", None)
    if table is None:
        duplicates = tok.duplicate_ids  # a property that walks every id: read once
        n_vocab = tok.n_vocab  # the same
        ids = len(tok.mergeable_ranks) + len(duplicates) + len(tok.special_tokens)
        table = [0] * n_vocab if n_vocab <= MAX_LEN_TABLE_SLACK * ids else {}
        for token, rank in tok.mergeable_ranks.items():
            table[rank] = len(token)
        for token_id in duplicates:
            table[token_id] = len(tok.decode_single_token_bytes(token_id))
        for special, token_id in tok.special_tokens.items():
            table[token_id] = len(special.encode("utf-8"))
        tok._playground_lens = table
    return table


def _pack(tok: Tokenizer, ids: list[int], text: str | None = None) -> tuple[bytes, bytes, bytes]:
    """ids, per-token byte lengths (int32) and all tokens' bytes, concatenated.

    The concatenation is the text's UTF-8 (BPE is lossless), so it is not rebuilt token by token
    (that took 0.5 s for 80k tokens in Pyodide) unless the text has lone surrogates.
    """
    lens = array("i", map(_len_table(tok).__getitem__, ids))
    data = None
    if text is not None and tok.preparation is None:  # a prepared text is not the tokens' bytes
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = None
    if data is None or len(data) != sum(lens):
        data = b"".join(tok.decode_tokens_bytes(ids))
    return array("i", ids).tobytes(), lens.tobytes(), data


def encode(name: str, text: str) -> tuple[bytes, bytes, bytes, float]:
    """(ids, lens, bytes) as _pack, and the milliseconds the encoding took."""
    tok = _toks[name]
    t = time.perf_counter()
    ids = tok.encode(text, allowed_special="all")
    ms = (time.perf_counter() - t) * 1000
    return (*_pack(tok, ids, text), ms)


EditAnswer = tuple[int, int, bool, int, bytes, bytes, bytes, float, int]


def _answer(key: str, editor: IncrementalEncoder, text: str | None, t: float, **edit: Any) -> EditAnswer:
    """Apply one edit (a new `text`, or start/removed/inserted) and register the new serial.

    The key holds no editor while the edit runs: if it raises, the next call is whole.
    """
    patch = editor.update(text) if text is not None else editor.edit(**edit)
    serial = next(_serials)
    _editors[key] = (serial, editor)
    ms = (time.perf_counter() - t) * 1000
    data = _pack(editor.tok, patch.ids, patch.text)
    return (patch.start, patch.removed, patch.full, serial, *data, ms, editor.length)


def encode_edit(name: str, key: str, text: str, base: int, special: str = "allow") -> EditAnswer:
    """Encode `text` for panel `key`, re-encoding only what changed since the panel's last text.

    `base` is the serial of the result the panel shows (0: none). When it is the serial this
    module holds for `key`, with the same tokenizer, the answer is a patch: (start, removed, full,
    serial, ids, lens, bytes, ms, chars) means ids[start : start + removed] of the panel's result
    become the given ones (packed as by `encode`); chars is the text's length in code points.
    Otherwise (first text, another tokenizer or `special` choice, a worker restarted since) the
    text is encoded whole: start 0, full True. Exact: see incremental.py. `special` is what
    special-token text becomes (incremental.SPECIAL_MODES: allow, text, raise).
    """
    tok = _toks[name]
    t = time.perf_counter()
    serial, editor = _editors.pop(key, (0, None))
    if editor is None or editor.tok is not tok or serial != base or editor.special != special:
        editor = IncrementalEncoder(tok, special=special)
    return _answer(key, editor, text, t)


def encode_change(
    name: str, key: str, base: int, start: int, removed: int, inserted: str, special: str = "allow"
) -> EditAnswer | None:
    """As encode_edit, but given only the edit: `removed` code points at `start` of the text
    behind serial `base` become `inserted`. None when this module does not hold that text for
    `key` (another serial, tokenizer or `special` choice, a restarted worker, a range outside the text): the
    page then sends the whole text with encode_edit. So a lost or reordered message costs a
    full send, never a wrong result.
    """
    tok = _toks[name]
    t = time.perf_counter()
    serial, editor = _editors.get(key, (0, None))
    if editor is None or editor.tok is not tok or serial != base or editor.special != special:
        return None
    if not 0 <= start <= start + removed <= editor.length:
        return None
    del _editors[key]
    return _answer(key, editor, None, t, start=start, removed=removed, inserted=inserted)


def forget_edits(key: str) -> None:
    """Drop panel `key`'s kept encoding (the panel was removed)."""
    _editors.pop(key, None)


def split(name: str, text: str) -> tuple[bytes, bytes]:
    """The pattern's chunks: their UTF-8 lengths (int32) and their bytes, concatenated.

    The chunks of the text the encoder merges: a lone surrogate is U+FFFD there (well_formed),
    as in the token view; encoding it with "replace" made it "?", one byte where the tokens hold
    three, so the split view read otherwise than the tokens beside it."""
    check_text(text)  # a message that says what is wrong (well_formed would fail on a number)
    chunks = [c.encode("utf-8") for c in _toks[name].split(well_formed(text))]
    return array("i", map(len, chunks)).tobytes(), b"".join(chunks)


def decode(name: str, ids: Any) -> tuple[bytes, bytes, bytes, str]:
    """(ids, lens, bytes) as _pack, and the text (invalid UTF-8 replaced)."""
    tok = _toks[name]
    ids = _ints(ids)
    parts = tok.decode_tokens_bytes(ids)  # a clear error for an id the vocabulary lacks
    size = sum(map(len, parts))
    if size > MAX_DECODE_BYTES:
        raise ValueError(
            f"these {len(ids):,} ids decode to {size / 2**20:,.0f} MB; the decode box takes at most "
            f"{MAX_DECODE_BYTES >> 20} MB of text at a time: decode fewer ids"
        )
    data = b"".join(parts)
    lens = array("i", map(len, parts)).tobytes()
    return array("i", ids).tobytes(), lens, data, data.decode("utf-8", "replace")


def info(name: str) -> str:
    return _info(_toks[name])


def _unique_name(name: str) -> str:
    """`name`, or `name-2`, `name-3`...: never a tokenizer's already here, nor a reference
    encoding's, which the worker loads only on first use (a file named cl100k_base loaded before
    took that name, and the page's cl100k_base panel and share links showed its ids)."""
    base = name or "custom"
    name, n = base, 2
    while name in _toks or name in list_encodings():
        name, n = f"{base}-{n}", n + 1
    return name


def load_user(
    tiktoken_text: str | None,
    json_text: str | None,
    hf_text: str | None,
    source: str,
    force_name: str | None = None,
    tiktoken_source: str | None = None,
) -> str:
    """A tokenizer from the user's files: .tiktoken + .json, a lone .tiktoken, a HF tokenizer.json or
    a minbpe .model (as json_text), through the library's one validated loader (loading.from_texts).

    source names the .json (or the one file), tiktoken_source the .tiktoken of a pair, in messages.
    force_name (a tokenizer the server trained) replaces any earlier one of that name; otherwise a
    clashing name gets a suffix, so loading a file never hides a panel's tokenizer.
    """
    tok = from_texts(tiktoken_text, json_text, hf_text, source, tiktoken_source=tiktoken_source)
    tok.name = force_name or _unique_name(tok.name)
    return _add(tok)


def _split_token(tok: Tokenizer, token: bytes) -> tuple[bytes, bytes] | None:
    """The two tokens whose merge made 'token': BPE on its bytes, using only lower ranks."""
    rank = tok.mergeable_ranks[token]
    parts = [token[i : i + 1] for i in range(len(token))]
    get = tok.mergeable_ranks.get
    while len(parts) > 2:
        best, best_i = None, -1
        for i in range(len(parts) - 1):
            r = get(parts[i] + parts[i + 1])
            if r is not None and r < rank and (best is None or r < best):
                best, best_i = r, i
        if best is None:
            return None
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _node(tok: Tokenizer, token_id: int) -> dict[str, Any]:
    data = tok.decode_single_token_bytes(token_id)
    node: dict[str, Any] = {"id": token_id, "bytes": data.hex(), "rank": tok.mergeable_ranks.get(data)}
    if token_id in tok.special_tokens.values():
        node["special"] = True
    return node


def _children(tok: Tokenizer, node: dict[str, Any]) -> tuple[int, int] | None:
    """The two ids whose merge made the node's token: its merge, else BPE on its bytes."""
    token_id, data = node["id"], bytes.fromhex(node["bytes"])
    if node.get("special"):
        return None
    if tok.merges is not None and token_id >= 256 and token_id - 256 < len(tok.merges):
        return tok.merges[token_id - 256]
    pair = _split_token(tok, data) if len(data) > 1 else None
    return None if pair is None else (tok.mergeable_ranks[pair[0]], tok.mergeable_ranks[pair[1]])


def _tree(tok: Tokenizer, token_id: int) -> dict:
    """The merge tree, level by level, down to MAX_TREE_DEPTH and while the nodes' bytes fit in
    MAX_TREE_BYTES; a node whose children did not fit says so ("cut")."""
    root = _node(tok, token_id)
    budget = MAX_TREE_BYTES - len(root["bytes"]) // 2
    level = [root]
    for _ in range(MAX_TREE_DEPTH):
        below = []
        for node in level:
            pair = _children(tok, node)
            if pair is None:
                continue
            kids = [_node(tok, i) for i in pair]
            size = sum(len(kid["bytes"]) // 2 for kid in kids)
            if size > budget:
                node["cut"] = True
                continue
            budget -= size
            node["left"], node["right"] = kids
            below += kids
        level = below
    return root


def merge_tree(name: str, token_id: int) -> str:
    """How one token was built: nested {id, bytes (hex), rank, left, right} down to single bytes."""
    return json.dumps(_tree(_toks[name], int(token_id)))


def _by_rank(name: str) -> list[tuple[int, bytes]]:
    """Multi-byte tokens in rank order (the merge order), cached per tokenizer."""
    rows = _merge_cache.get(name)
    if rows is None:
        tok = _toks[name]
        rows = sorted((rank, token) for token, rank in tok.mergeable_ranks.items() if len(token) > 1)
        _merge_cache[name] = rows
    return rows


def _pair(tok: Tokenizer, rank: int, token: bytes) -> tuple[int, int]:
    if tok.merges is not None and 256 <= rank < 256 + len(tok.merges):
        return tok.merges[rank - 256]
    pair = _split_token(tok, token)
    if pair is None:
        return (-1, -1)
    return tok.mergeable_ranks[pair[0]], tok.mergeable_ranks[pair[1]]


def merge_list(name: str, query: str, offset: int, limit: int) -> str:
    """One page of the merges in order, optionally only those whose token contains the query.

    Only the rows shown are split into their pair: all of o200k's would take seconds here.
    """
    tok = _toks[name]
    rows = _by_rank(name)
    if query:
        q = well_formed(query).encode("utf-8")  # a lone surrogate as U+FFFD, as shown
        rows = [r for r in rows if q in r[1]]
    page = rows[offset : offset + limit]
    out = []
    for rank, token in page:
        a, b = _pair(tok, rank, token)
        out.append([rank, a, b, token.hex()])
    return json.dumps({"total": len(rows), "rows": out})


def learn(request_json: str) -> str:
    """Step-through training for the Learn view (tokenizer.web.learn owns the logic)."""
    return json.dumps(learn_mode.handle(json.loads(request_json)))


def learn_adopt(request_json: str) -> str:
    """Turn a Learn view result into a tokenizer that joins the comparison."""
    tok = learn_mode.to_tokenizer(json.loads(request_json))
    tok.name = _unique_name(tok.name)
    return _add(tok)


BENCH_FORMATS = ("blob", "json", "tiktoken")


def bench_load(name: str, fmt: str, buf: Any) -> tuple[float, int]:
    """Parse one reference encoding from one of BENCH_FORMATS: (milliseconds, number of ranks)."""
    data = _bytes(buf)
    t = time.perf_counter()
    if fmt == "blob":
        tok = encoding_from_bytes(data)
    elif fmt == "json":
        tok = encoding_from_npm_json(name, json.loads(data))
    elif fmt == "tiktoken":
        tok = Tokenizer(formats.parse_tiktoken(data.decode("ascii")), ENCODING_PATTERN_NAMES[name])
    else:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(BENCH_FORMATS)}")
    return (time.perf_counter() - t) * 1000, len(tok.mergeable_ranks)


# ----- know your tokenizer: audit, stats, sweep, diff (tokenizer.web.analysis) -------------


def audit(name: str, text: str | None) -> str:
    """The audit's counts and short lists; with the input text (a str), unused ids against it."""
    return json.dumps(analysis.audit_summary(_toks[name], text if isinstance(text, str) else None))


def audit_list(name: str, key: str, query: str, offset: int, limit: int) -> str:
    """One page of one of the last audit's lists, optionally searched."""
    return json.dumps(analysis.audit_page(_toks[name], key, query, int(offset), int(limit)))


def stats(request_json: str) -> str:
    """{names, text, udhr?} -> `stats --json` for the input text, by language with a UDHR text."""
    request = json.loads(request_json)
    toks = {name: _toks[name] for name in request["names"]}
    return json.dumps(analysis.stats(toks, request["text"], request.get("udhr")))


def sweep(name: str, text: str, sizes: Any) -> str:
    """Tokens of the text at each vocabulary size (none given: powers of two and the full size)."""
    return json.dumps(analysis.sweep_rows(_toks[name], text, _ints(sizes or []), name=name))


def vocab_diff(a: str, b: str) -> str:
    """`diff A B --json` for two loaded tokenizers."""
    return json.dumps(analysis.vocab_diff(_toks[a], _toks[b]))

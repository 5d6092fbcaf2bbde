// The encoder, off the UI thread: Pyodide running our `tokenizer` wheel in a module Web Worker.
//
// Why a worker: booting Pyodide on the main thread freezes the page for ~6 s, and encoding
// 100 KB takes longer than a frame. Here the UI stays responsive while this thread works.
// Why only local files: the page must work offline, as plain static files; so the Pyodide core
// comes from ./pyodide/ (copied by build_wasm.py), our package is a wheel unpacked straight into
// site-packages (no micropip, never `loadPackage`, which would try to fetch extra packages), and
// the reference encodings are blobs fetched lazily, one per encoding, the first time it is used.
//
// Protocol (main thread -> worker): {id, op, ...}; reply {id, ok: true, ...} or {id, ok: false, error}.
//   encode {name, text}       -> ids: Int32Array, lens: Int32Array (bytes per token), bytes: Uint8Array
//                                (all tokens' bytes, concatenated), ms (time in Python)
//   split  {name, text}       -> lens: Int32Array (bytes per regex chunk), bytes: Uint8Array
//   decode {name, ids}        -> lens, bytes (per token, as encode), text
//   load   {tiktoken, json, hf, filename} -> info of the new tokenizer (a user's file; see load_user)
//   info   {name}             -> info: {name, n_vocab, pattern, pattern_regex, special_tokens, ...}
//   merges {name, id}         -> tree: the merge tree of one token (nested {id, bytes, left, right})
//   merge_list {name, query, offset, limit} -> rows of [rank, left, right, bytes]
//   bench_load {name, format, url} -> {fetch_ms, parse_ms}: load an encoding from JSON/.tiktoken/blob
//   prefetch {names}          -> no reply: start downloading these encodings' blobs
//   learn {request}           -> tokenizer.learn.handle(request): step-through training for the Learn view
//   learn_adopt {request}     -> info of a tokenizer made from a Learn result (joins the comparison)
// Typed arrays are transferred, not copied. Unsolicited messages: {type: "progress", stage, ...}
// during boot, then {type: "ready", ...}; {type: "fatal", error} if booting failed.
import { loadPyodide } from "./pyodide/pyodide.mjs";

const BRIDGE = String.raw`
import json
import time
from array import array

from tokenizer import Tokenizer, formats
from tokenizer.encodings import encoding_from_npm_json, register_encoding
from tokenizer.hf_export import from_hf_json

_toks = {}
_merge_cache = {}


def _info(tok):
    return json.dumps({
        "name": tok.name,
        "n_vocab": tok.n_vocab,
        "pattern": tok.pattern,
        "pattern_regex": tok.pattern_regex,
        "special_tokens": tok.special_tokens,
        "n_ranks": len(tok.mergeable_ranks),
    })


def load_blob(name, buf):
    tok = register_encoding(buf.to_bytes())
    _toks[name] = tok
    return _info(tok)


def _len_table(tok):
    """Byte length of every id, as a list: map(list.__getitem__, ids) runs at C speed."""
    table = getattr(tok, "_playground_lens", None)
    if table is None:
        table = [0] * tok.n_vocab
        for token, rank in tok.mergeable_ranks.items():
            table[rank] = len(token)
        for token_id in tok.duplicate_ids:
            table[token_id] = len(tok.decode_single_token_bytes(token_id))
        for special, token_id in tok.special_tokens.items():
            table[token_id] = len(special.encode("utf-8"))
        tok._playground_lens = table
    return table


def _pack(tok, ids, text=None):
    """ids, per-token byte lengths (int32) and all tokens' bytes, concatenated.

    The concatenation is the text's UTF-8 (BPE is lossless), so it is not rebuilt token by token
    (that took 0.5 s for 80k tokens in Pyodide) unless the text has lone surrogates.
    """
    lens = array("i", map(_len_table(tok).__getitem__, ids))
    data = None
    if text is not None:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = None
    if data is None or len(data) != sum(lens):
        data = b"".join(tok.decode_tokens_bytes(ids))
    return array("i", ids).tobytes(), lens.tobytes(), data


def encode(name, text):
    tok = _toks[name]
    t = time.perf_counter()
    ids = tok.encode(text, allowed_special="all")
    ms = (time.perf_counter() - t) * 1000
    return (*_pack(tok, ids, text), ms)


def split(name, text):
    tok = _toks[name]
    data = text.encode("utf-8", "replace")
    chunks = [c.encode("utf-8", "replace") for c in tok.split(text)]
    return array("i", map(len, chunks)).tobytes(), b"".join(chunks) if chunks else data[:0]


def decode(name, ids):
    tok = _toks[name]
    ids = [int(i) for i in ids.to_py()]
    parts = tok.decode_tokens_bytes(ids)  # a clear error for an id the vocabulary lacks
    data = b"".join(parts)
    lens = array("i", map(len, parts)).tobytes()
    return array("i", ids).tobytes(), lens, data, data.decode("utf-8", "replace")


def info(name):
    return _info(_toks[name])


def _unique_name(name):
    base = name or "custom"
    name, n = base, 2
    while name in _toks:
        name, n = f"{base}-{n}", n + 1
    return name


def load_user(tiktoken_text, json_text, hf_text, source, force_name=None):
    """A tokenizer from the user's files: .tiktoken + .json, a lone .tiktoken, or HF tokenizer.json.

    force_name (a tokenizer the server trained) replaces any earlier one of that name; otherwise a
    clashing name gets a suffix, so loading a file never hides a panel's tokenizer.
    """
    if hf_text:
        try:
            obj = json.loads(hf_text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{source}:{e.lineno}: invalid JSON: {e.msg}") from None
        tok = from_hf_json(obj, source)
    else:
        ranks = formats.parse_tiktoken(tiktoken_text, source) if tiktoken_text else None
        if json_text:
            try:
                meta = json.loads(json_text)
            except json.JSONDecodeError as e:
                raise ValueError(f"{source}:{e.lineno}: invalid JSON: {e.msg}") from None
            if not isinstance(meta, dict):
                raise ValueError(f"{source}: expected a JSON object at the top level")
            if "model" in meta and "merges" not in meta:
                return load_user(None, None, json_text, source, force_name)
            tok = Tokenizer.from_json(meta, ranks, source=source)
        elif ranks is not None:
            tok = Tokenizer(ranks, "gpt4", name=source.rsplit(".", 1)[0])
        else:
            raise ValueError("no file given")
    tok.name = force_name or _unique_name(tok.name)
    _toks[tok.name] = tok
    _merge_cache.pop(tok.name, None)
    return _info(tok)


def _split_token(tok, token):
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
    return tuple(parts) if len(parts) == 2 else None


def _tree(tok, token_id, depth=0):
    data = tok.decode_single_token_bytes(token_id)
    node = {"id": token_id, "bytes": data.hex(), "rank": tok.mergeable_ranks.get(data)}
    if token_id in tok.special_tokens.values():
        node["special"] = True
        return node
    if tok.merges is not None and token_id >= 256 and token_id - 256 < len(tok.merges):
        left, right = tok.merges[token_id - 256]
    elif len(data) > 1:
        pair = _split_token(tok, data)
        if pair is None:
            return node
        left, right = tok.mergeable_ranks[pair[0]], tok.mergeable_ranks[pair[1]]
    else:
        return node
    if depth < 64:
        node["left"] = _tree(tok, left, depth + 1)
        node["right"] = _tree(tok, right, depth + 1)
    return node


def merge_tree(name, token_id):
    return json.dumps(_tree(_toks[name], int(token_id)))


def _by_rank(name):
    """Multi-byte tokens in rank order (the merge order), cached per tokenizer."""
    rows = _merge_cache.get(name)
    if rows is None:
        tok = _toks[name]
        rows = sorted((rank, token) for token, rank in tok.mergeable_ranks.items() if len(token) > 1)
        _merge_cache[name] = rows
    return rows


def _pair(tok, rank, token):
    if tok.merges is not None and 256 <= rank < 256 + len(tok.merges):
        return tok.merges[rank - 256]
    pair = _split_token(tok, token)
    if pair is None:
        return (-1, -1)
    return tok.mergeable_ranks[pair[0]], tok.mergeable_ranks[pair[1]]


def merge_list(name, query, offset, limit):
    """One page of the merges in order, optionally only those whose token contains the query.

    Only the rows shown are split into their pair: all of o200k's would take seconds here.
    """
    tok = _toks[name]
    rows = _by_rank(name)
    if query:
        q = query.encode("utf-8")
        rows = [r for r in rows if q in r[1]]
    page = rows[offset : offset + limit]
    out = []
    for rank, token in page:
        a, b = _pair(tok, rank, token)
        out.append([rank, a, b, token.hex()])
    return json.dumps({"total": len(rows), "rows": out})


def learn(request_json):
    """Step-through training for the Learn view (tokenizer.learn owns the logic)."""
    from tokenizer import learn as learn_mode

    return json.dumps(learn_mode.handle(json.loads(request_json)))


def learn_adopt(request_json):
    """Turn a Learn view result into a tokenizer that joins the comparison."""
    from tokenizer import learn as learn_mode

    tok = learn_mode.to_tokenizer(json.loads(request_json))
    tok.name = _unique_name(tok.name)
    _toks[tok.name] = tok
    _merge_cache.pop(tok.name, None)
    return _info(tok)


def bench_load(name, fmt, buf):
    from tokenizer.encodings import ENCODING_PATTERN_NAMES, encoding_from_bytes

    data = buf.to_bytes()
    t = time.perf_counter()
    if fmt == "blob":
        tok = encoding_from_bytes(data)
    elif fmt == "json":
        tok = encoding_from_npm_json(name, json.loads(data))
    elif fmt == "tiktoken":
        tok = Tokenizer(formats.parse_tiktoken(data.decode("ascii")), ENCODING_PATTERN_NAMES[name])
    else:
        raise ValueError(fmt)
    return (time.perf_counter() - t) * 1000, len(tok.mergeable_ranks)
`;

const post = (msg, transfer = []) => self.postMessage(msg, transfer);
const progress = (stage, extra = {}) => post({ type: "progress", stage, t: performance.now(), ...extra });
const t0 = performance.now();

let manifest = null;
let py = null;
let api = null;

const manifestP = fetch("manifest.json", { cache: "no-cache" }).then((r) => {
  if (!r.ok) throw new Error(`manifest.json: HTTP ${r.status}`);
  return r.json();
});
// The wheel download overlaps the Pyodide boot.
const wheelP = manifestP.then((m) =>
  fetch(m.wheel).then((r) => {
    if (!r.ok) throw new Error(`${m.wheel}: HTTP ${r.status}`);
    return r.arrayBuffer();
  }),
);

// A memory snapshot (made by build_wasm.py in Node, with our package already imported) boots
// several times faster than a cold CPython start; without one, or if it fails, boot normally.
async function startPython() {
  const indexURL = new URL("pyodide/", self.location.href).href;
  const m = await manifestP;
  if (m.snapshot && m.snapshot.wheel === m.wheel) {
    try {
      const r = await fetch(m.snapshot.file);
      if (r.ok) {
        const py = await loadPyodide({ indexURL, _loadSnapshot: r.arrayBuffer() });
        progress("snapshot", { label: "Started from snapshot" });
        return py;
      }
    } catch (e) {
      progress("snapshot-failed", { label: errorText(e) });
    }
  }
  return loadPyodide({ indexURL });
}

const booted = (async () => {
  progress("boot", { label: "Starting Python (Pyodide)…" });
  const pyodideP = startPython();
  manifest = await manifestP;
  const [pyodide, wheel] = await Promise.all([pyodideP, wheelP]);
  py = pyodide;
  progress("wheel", { label: "Installing the tokenizer…", boot_ms: performance.now() - t0 });
  py.unpackArchive(wheel, "wheel");
  py.runPython(BRIDGE);
  const g = py.globals;
  api = Object.fromEntries(
    ["load_blob", "encode", "split", "decode", "info", "load_user", "merge_tree", "merge_list", "bench_load", "learn", "learn_adopt"].map(
      (n) => [n, g.get(n)],
    ),
  );
  post({ type: "ready", ms: performance.now() - t0, pyodide: manifest.pyodide.version });
})();
booted.catch((e) => post({ type: "fatal", error: errorText(e) }));

// Reference encodings load on first use, inside the request queue, so the encoding the first
// request needs is ready first; their blobs are downloaded early (prefetch), outside the queue.
const blobs = new Map(); // name -> Promise<Uint8Array>
const loaded = new Map(); // name -> info

function fetchBlob(name) {
  let p = blobs.get(name);
  if (!p) {
    p = manifestP.then(async (m) => {
      const entry = m.encodings[name];
      if (!entry) throw new Error(`unknown tokenizer ${name}`);
      const r = await fetch(entry.file);
      if (!r.ok) throw new Error(`${entry.file}: HTTP ${r.status}`);
      return new Uint8Array(await r.arrayBuffer());
    });
    blobs.set(name, p);
    p.catch(() => blobs.delete(name));
  }
  return p;
}

async function ensureEncoding(name) {
  if (loaded.has(name)) return loaded.get(name);
  const data = await fetchBlob(name);
  await booted;
  if (loaded.has(name)) return loaded.get(name);
  progress("encoding", { name, label: `Loading ${name}…` });
  const t = performance.now();
  const info = JSON.parse(api.load_blob(name, data));
  info.load_ms = performance.now() - t;
  loaded.set(name, info);
  blobs.delete(name); // Python holds it now
  return info;
}

function errorText(e) {
  // A PythonError's message is a whole traceback; the last line says what went wrong.
  const text = String((e && e.message) || e).trim();
  const lines = text.split("\n").filter((l) => l.trim());
  return lines.length ? lines[lines.length - 1] : text;
}

function asInt32(u8) {
  // toJs() copies bytes into a fresh Uint8Array, so its buffer is ours and aligned.
  return new Int32Array(u8.buffer, u8.byteOffset, u8.byteLength >> 2);
}

function call(fn, ...args) {
  const r = fn(...args);
  if (r && typeof r.toJs === "function") {
    const js = r.toJs();
    r.destroy();
    return js;
  }
  return r;
}

async function handle(msg) {
  await booted;
  const { op, name } = msg;
  if (name && op !== "load") await ensureEncoding(name);
  switch (op) {
    case "prepare":
      return { result: { info: await ensureEncoding(name) } };
    case "encode": {
      const [ids, lens, bytes, ms] = call(api.encode, name, msg.text);
      const a = asInt32(ids);
      const b = asInt32(lens);
      return { result: { ids: a, lens: b, bytes, ms }, transfer: [a.buffer, b.buffer, bytes.buffer] };
    }
    case "split": {
      const [lens, bytes] = call(api.split, name, msg.text);
      const a = asInt32(lens);
      return { result: { lens: a, bytes }, transfer: [a.buffer, bytes.buffer] };
    }
    case "decode": {
      const [ids, lens, bytes, text] = call(api.decode, name, Array.from(msg.ids));
      const a = asInt32(ids);
      const b = asInt32(lens);
      return { result: { ids: a, lens: b, bytes, text }, transfer: [a.buffer, b.buffer, bytes.buffer] };
    }
    case "info":
      return { result: { info: JSON.parse(api.info(name)) } };
    case "load": {
      const info = JSON.parse(
        api.load_user(
          msg.tiktoken || null,
          msg.json || null,
          msg.hf || null,
          msg.filename || "uploaded",
          msg.forceName || null,
        ),
      );
      loaded.set(info.name, info);
      return { result: { info } };
    }
    case "merges":
      return { result: { tree: JSON.parse(api.merge_tree(name, msg.tokenId)) } };
    case "merge_list":
      return {
        result: JSON.parse(api.merge_list(name, msg.query || "", msg.offset || 0, msg.limit || 100)),
      };
    case "learn":
      return { result: JSON.parse(api.learn(JSON.stringify(msg.request))) };
    case "learn_adopt": {
      const info = JSON.parse(api.learn_adopt(JSON.stringify(msg.request)));
      loaded.set(info.name, info);
      return { result: { info } };
    }
    case "bench_load": {
      const t = performance.now();
      const data = new Uint8Array(await (await fetch(msg.url)).arrayBuffer());
      const fetch_ms = performance.now() - t;
      const [parse_ms, n] = call(api.bench_load, msg.encoding, msg.format, data);
      return { result: { fetch_ms, parse_ms, n, bytes: data.byteLength } };
    }
    default:
      throw new Error(`unknown op ${op}`);
  }
}

// One message at a time, in order: Python is single-threaded anyway, and this keeps replies
// in request order so the UI's stale-reply check stays simple.
let queue = Promise.resolve();
self.onmessage = (ev) => {
  const msg = ev.data;
  if (msg.op === "prefetch") {
    // Download these blobs now, overlapping the boot; no reply.
    for (const n of msg.names || []) if (!loaded.has(n)) fetchBlob(n).catch(() => {});
    return;
  }
  queue = queue.then(async () => {
    try {
      const { result, transfer } = await handle(msg);
      post({ id: msg.id, op: msg.op, ok: true, ...result }, transfer || []);
    } catch (e) {
      post({ id: msg.id, op: msg.op, ok: false, error: errorText(e) });
    }
  });
};

// The encoder, off the UI thread: Pyodide running our `tokenizer` wheel in a module Web Worker.
//
// Why a worker: booting Pyodide on the main thread freezes the page for ~6 s, and encoding
// 100 KB takes longer than a frame. Here the UI stays responsive while this thread works.
// The Python this thread runs is tokenizer/web/bridge.py (one function per op below); this file
// only boots Pyodide, installs the wheel, fetches blobs and turns replies into typed arrays.
// Why only local files: the page must work offline, as plain static files; so the Pyodide core
// comes from ./pyodide/ (copied by build_wasm.py), our package is a wheel unpacked straight into
// site-packages (no micropip, never `loadPackage`, which would try to fetch extra packages), and
// the reference encodings are blobs fetched lazily, one per encoding, the first time it is used.
//
// Protocol (main thread -> worker): {id, op, ...}; reply {id, ok: true, ...} or {id, ok: false, error}.
//   prepare {name}            -> info: the encoding loaded (its blob fetched) if it was not yet
//   encode {name, text}       -> ids: Int32Array, lens: Int32Array (bytes per token), bytes: Uint8Array
//                                (all tokens' bytes, concatenated), ms (time in Python)
//   encode_edit {name, key, text, base, special?} -> start, removed, full, serial, ids, lens, bytes, ms: a
//                                patch of panel `key`'s previous result (bridge.encode_edit)
//                                (and chars: the text's length in code points)
//   encode_change {name, key, base, start, removed, inserted, special?} -> the same patch, given only the
//                                edit (UTF-16 offsets into the text behind serial `base`), or
//                                {stale: true} when this worker does not hold that text (the page
//                                then sends it whole with encode_edit)
//   forget_edits {key}        -> drops panel `key`'s kept encoding
//   split  {name, text}       -> lens: Int32Array (bytes per regex chunk), bytes: Uint8Array
//   decode {name, ids}        -> ids, lens, bytes (per token, as encode), text; ids: an Int32Array or
//                                an array of integers (anything else, or an unknown id, is refused)
//   load   {tiktoken, json, hf, filename, tiktokenName?, forceName?} -> info of the new tokenizer (a
//                                user's file; see load_user: filename names the .json or the one file
//                                in messages; forceName, a tokenizer the server trained, replaces one
//                                of that name)
//   info   {name}             -> info: {name, n_vocab, pattern, pattern_regex, special_tokens, ...}
//   merges {name, tokenId}    -> tree: the merge tree of one token (nested {id, bytes, rank, left, right})
//   merge_list {name, query, offset, limit} -> rows of [rank, left, right, bytes]
//   bench_load {encoding, format, url} -> {fetch_ms, parse_ms, n, bytes}: load an encoding from
//                                JSON/.tiktoken/blob (n: its ranks; bytes: the file's size)
//   prefetch {names}          -> no reply: start downloading these encodings' blobs
//   learn {request}           -> tokenizer.web.learn.handle(request): step-through training for the Learn view
//   learn_adopt {request}     -> info of a tokenizer made from a Learn result (joins the comparison)
// (An absent argument is passed as undefined, which Pyodide turns into None; null would arrive
// as pyodide.ffi.jsnull.)
//   audit {name, text?}       -> counts, longest, by_script of tokenizer.audit (text: unused against it)
//   audit_list {name, key, query, offset, limit} -> {total, rows: [id, hex(, first id)]}: one page of a list
//   stats {names, text, udhr?} -> `stats --json` for the text ({results, languages?})
//   sweep {name, text, sizes?} -> {sweep: [{vocab_size, tokens}], bytes}
//   vocab_diff {name, other}  -> `diff --json` of two loaded tokenizers
//   merge_stats {enabled?}    -> {enabled, batches, pieces, tables} of the JavaScript batch merge
//                                (bridge.merge_stats; enabled true/false switches it first)
//   forget_chunks {}          -> {}: empties every tokenizer's chunk cache (bench/browser.py)
// Typed arrays are transferred, not copied. Unsolicited messages: {type: "progress", stage, ...}
// during boot, then {type: "ready", ...}; {type: "fatal", error} if booting failed.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { withRoom } from "./result.js";
import { isHigh, isLow } from "./utf16.js";

// web/bpe-merge.js, as the Python module tokenizer/web/jsmerge.py imports (its JS_MODULE): the
// merge loop of many new chunks at once, faster here than WebAssembly CPython's.
const MERGE_MODULE = "bpe_merge_js";
// Not a static import: fetched while Pyodide boots. Without it Python merges alone (jsmerge.py).
const mergeModuleP = import("./bpe-merge.js").catch(() => null);

// tokenizer/web/bridge.py, in our wheel: the functions handle() below calls.
const BRIDGE_MODULE = "tokenizer.web.bridge";
const BRIDGE_FUNCTIONS = [
  "load_blob",
  "encode",
  "encode_edit",
  "encode_change",
  "forget_edits",
  "split",
  "decode",
  "info",
  "load_user",
  "merge_tree",
  "merge_list",
  "bench_load",
  "learn",
  "learn_adopt",
  "audit",
  "audit_list",
  "stats",
  "sweep",
  "vocab_diff",
  "prepare_merge",
  "merge_stats",
  "forget_chunks",
];

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
  const [pyodide, wheel, merge] = await Promise.all([pyodideP, wheelP, mergeModuleP]);
  py = pyodide;
  progress("wheel", { label: "Installing the tokenizer…", boot_ms: performance.now() - t0 });
  py.unpackArchive(wheel, "wheel");
  if (merge) {
    const { mergeBatch, rankTable, forgetPairs } = merge;
    py.registerJsModule(MERGE_MODULE, { mergeBatch, rankTable, forgetPairs });
  }
  // Already imported when booted from the snapshot. The module proxy lives as long as this
  // worker: destroying it would destroy the function proxies borrowed from it.
  const bridge = py.pyimport(BRIDGE_MODULE);
  api = Object.fromEntries(BRIDGE_FUNCTIONS.map((n) => [n, bridge[n]]));
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
      const entry = Object.hasOwn(m.encodings, name) ? m.encodings[name] : null; // not "toString"
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
  unprepared.add(name);
  return info;
}

// The JavaScript merge's table of a tokenizer (a Map of every token; 120 ms for cl100k_base,
// 300 ms for o200k_base in Pyodide, 14 MB) is built while this worker is idle, so that the first
// large paste does not pay for it (it would, on first use, otherwise): after IDLE_MS without a
// request, one step of it per task (bridge.prepare_merge: PREPARE_STEP tokens, 10-35 ms), so a
// request arriving meanwhile waits for one step at most.
const IDLE_MS = 100; // quiet time after the last reply: the page's requests for one edit come together
const unprepared = new Set(); // tokenizers whose table is not complete yet
let pending = 0; // requests queued or running
let idleTimer = 0;

function whenIdle(delay = IDLE_MS) {
  clearTimeout(idleTimer);
  if (!unprepared.size) return;
  idleTimer = setTimeout(() => {
    if (pending || !unprepared.size) return;
    const [name] = unprepared;
    pending++;
    queue = queue
      .then(() => {
        if (api.prepare_merge(name)) unprepared.delete(name);
      })
      .catch(() => unprepared.delete(name)) // only speed depends on it: the first large encode builds it
      .finally(() => {
        pending--;
        whenIdle(0); // the next step, unless a request came meanwhile (it restarts the wait)
      });
  }, delay);
}

// The library's own refusals (ValueError, TypeError and its TokenizerFileError) say what is wrong
// and how to fix it: shown without Python's class name ("tokenizer.validate.TokenizerFileError:
// x.json:1: invalid JSON" reads "x.json:1: invalid JSON"). Other exceptions keep theirs.
const LIBRARY_ERROR = /^(?:[\w.]+\.)?(?:TokenizerFileError|ValueError|TypeError): /;

function errorText(e) {
  // A PythonError's message is a whole traceback; the last line says what went wrong.
  const text = String((e && e.message) || e).trim();
  const lines = text.split("\n").filter((l) => l.trim());
  return (lines.length ? lines[lines.length - 1] : text).replace(LIBRARY_ERROR, "");
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

// encode_change: the page sends an edit in UTF-16 offsets, Python counts code points: a code
// point offset is the UTF-16 offset minus the surrogate pairs before it. An edit range is first
// widened so that it never cuts a pair in two (a cut between the halves would make the two
// pieces convert to other code points than the whole text does); widening is harmless
// (IncrementalEncoder.edit).
//
// Why this thread keeps no copy of the text: applying an edit to a JS string of megabytes and
// slicing it again flattens it (V8 copies all of it), twice per panel per keystroke, 10-25 ms
// at 5 MB. The translation only needs the text's surrogate code units, so that is what is kept
// per panel: their offsets (sorted) and values, or nothing while the text has none (the common
// case: offsets are then used as they are). An edit drops the marks in its range, shifts those
// after it and adds the inserted text's.
const texts = new Map(); // panel key -> {serial, length, marks: {pos: Int32Array, unit: Uint16Array} | null}
const SURROGATES = /[\uD800-\uDFFF]/g;

// The surrogate code units of `text` from offset `base` on: their offsets and values, or null.
function surrogateMarks(text, base = 0) {
  SURROGATES.lastIndex = 0;
  if (!SURROGATES.test(text)) return null;
  const pos = [];
  const unit = [];
  SURROGATES.lastIndex = 0;
  for (let m; (m = SURROGATES.exec(text)); ) {
    pos.push(base + m.index);
    unit.push(text.charCodeAt(m.index));
  }
  return { pos: Int32Array.from(pos), unit: Uint16Array.from(unit) };
}

// The first mark at or after offset `at`.
function lowerBound(pos, at) {
  let lo = 0;
  let hi = pos.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (pos[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The code unit at offset `at` if it is a surrogate, else 0.
function unitAt(marks, at) {
  const k = lowerBound(marks.pos, at);
  return k < marks.pos.length && marks.pos[k] === at ? marks.unit[k] : 0;
}

// Surrogate pairs (a high unit followed by a low one) lying within [a, b).
function pairsIn(marks, a, b) {
  const { pos, unit } = marks;
  let n = 0;
  for (let k = lowerBound(pos, a); k + 1 < pos.length && pos[k + 1] < b; k++) {
    if (pos[k + 1] === pos[k] + 1 && isHigh(unit[k]) && isLow(unit[k + 1])) n++, k++;
  }
  return n;
}

// The marks after units [s, e) became `inserted`.
function editMarks(marks, s, e, inserted) {
  const added = surrogateMarks(inserted, s);
  if (!marks) return added;
  const a = lowerBound(marks.pos, s);
  const b = lowerBound(marks.pos, e);
  const nAdded = added ? added.pos.length : 0;
  const n = a + nAdded + (marks.pos.length - b);
  if (!n) return null;
  const pos = new Int32Array(n);
  const unit = new Uint16Array(n);
  pos.set(marks.pos.subarray(0, a));
  unit.set(marks.unit.subarray(0, a));
  if (added) pos.set(added.pos, a), unit.set(added.unit, a);
  const delta = inserted.length - (e - s);
  for (let k = b, j = a + nAdded; k < marks.pos.length; k++, j++) {
    pos[j] = marks.pos[k] + delta;
    unit[j] = marks.unit[k];
  }
  return { pos, unit };
}

// A whole result of at least ROOMY_TOKENS tokens goes with room to grow (result.js withRoom):
// copying it here, off the page's thread, spares the first keystroke's patch the copy there.
const ROOMY_TOKENS = 1 << 16; // below, the page's copy is a few milliseconds

function editReply([start, removed, full, serial, ids, lens, bytes, ms, chars]) {
  let a = asInt32(ids);
  let b = asInt32(lens);
  if (full && a.length >= ROOMY_TOKENS) [a, b, bytes] = [withRoom(a), withRoom(b), withRoom(bytes)];
  return {
    result: { start, removed, full, serial, ids: a, lens: b, bytes, ms, chars },
    transfer: [a.buffer, b.buffer, bytes.buffer],
  };
}

// What special-token text becomes (bridge.encode_edit): "allow" (its id), "text" or "raise".
const special = (msg) => msg.special || "allow";

function encodeChange(msg) {
  const kept = texts.get(msg.key);
  let s = msg.start;
  let e = msg.start + msg.removed;
  if (!kept || kept.serial !== msg.base || s < 0 || e > kept.length) return { result: { stale: true } };
  const marks = editMarks(kept.marks, s, e, msg.inserted);
  const length = kept.length - (e - s) + msg.inserted.length;
  let inserted = msg.inserted;
  let cpStart = s;
  let cpRemoved = e - s;
  if (kept.marks) {
    const before = s > 0 ? unitAt(kept.marks, s - 1) : 0;
    const after = e < kept.length ? unitAt(kept.marks, e) : 0;
    if (isHigh(before)) s--, (inserted = String.fromCharCode(before) + inserted);
    if (isLow(after)) e++, (inserted += String.fromCharCode(after));
    cpStart = s - pairsIn(kept.marks, 0, s);
    cpRemoved = e - s - pairsIn(kept.marks, s, e);
  }
  texts.delete(msg.key);
  const answer = call(api.encode_change, msg.name, msg.key, msg.base, cpStart, cpRemoved, inserted, special(msg));
  if (answer == null) return { result: { stale: true } };
  const reply = editReply(answer);
  texts.set(msg.key, { serial: reply.result.serial, length, marks });
  return reply;
}

// decode's ids as sent, for the library to check (an unknown id is named as it was sent): the
// decode box's Int32Array as it is, other arrays as int32s when every id fits. Int32Array.from
// alone wrapped 2**32 + 15339 to 15339 and read "x" as 0 and 1.5 as 1: a wrong id decoded as
// another token without a word. Beyond 2**53 a number is no longer the id that was typed.
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function decodeIds(ids) {
  if (ids instanceof Int32Array) return ids;
  if (ids == null || typeof ids !== "object" || typeof ids.length !== "number") {
    throw new Error(`ids must be an array of token ids, got ${typeof ids}`);
  }
  const list = Array.from(ids);
  let fits = true;
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (!Number.isSafeInteger(v)) {
      const shown = (typeof v === "string" ? JSON.stringify(v) : String(v)).slice(0, 40);
      throw new Error(`ids[${i}], ${shown}, is not a token id: ids are integers like 9906`);
    }
    if (v < INT32_MIN || v > INT32_MAX) fits = false;
  }
  return fits ? Int32Array.from(list) : list;
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
    case "encode_edit": {
      texts.delete(msg.key);
      const reply = editReply(call(api.encode_edit, name, msg.key, msg.text, msg.base, special(msg)));
      texts.set(msg.key, { serial: reply.result.serial, length: msg.text.length, marks: surrogateMarks(msg.text) });
      return reply;
    }
    case "encode_change":
      return encodeChange(msg);
    case "forget_edits":
      texts.delete(msg.key);
      api.forget_edits(msg.key);
      return { result: {} };
    case "split": {
      const [lens, bytes] = call(api.split, name, msg.text);
      const a = asInt32(lens);
      return { result: { lens: a, bytes }, transfer: [a.buffer, bytes.buffer] };
    }
    case "decode": {
      const [ids, lens, bytes, text] = call(api.decode, name, decodeIds(msg.ids));
      const a = asInt32(ids);
      const b = asInt32(lens);
      return { result: { ids: a, lens: b, bytes, text }, transfer: [a.buffer, b.buffer, bytes.buffer] };
    }
    case "info":
      return { result: { info: JSON.parse(api.info(name)) } };
    case "load": {
      const info = JSON.parse(
        api.load_user(
          // An empty file is "" (read, and refused as empty); an absent one null or undefined,
          // passed as undefined (None: a null would arrive as jsnull, see above).
          msg.tiktoken ?? undefined,
          msg.json ?? undefined,
          msg.hf ?? undefined,
          msg.filename || "uploaded",
          msg.forceName || null,
          msg.tiktokenName || undefined,
        ),
      );
      loaded.set(info.name, info);
      unprepared.add(info.name);
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
      unprepared.add(info.name);
      return { result: { info } };
    }
    case "audit":
      return { result: JSON.parse(api.audit(name, msg.text ?? undefined)) };
    case "audit_list":
      return {
        result: JSON.parse(api.audit_list(name, msg.key, msg.query || "", msg.offset || 0, msg.limit || 100)),
      };
    case "stats":
      for (const n of msg.names) await ensureEncoding(n);
      return { result: JSON.parse(api.stats(JSON.stringify({ names: msg.names, text: msg.text, udhr: msg.udhr }))) };
    case "sweep":
      return { result: JSON.parse(api.sweep(name, msg.text, msg.sizes ?? undefined)) };
    case "merge_stats":
      return { result: JSON.parse(api.merge_stats(msg.enabled ?? undefined)) };
    case "forget_chunks":
      api.forget_chunks();
      return { result: {} };
    case "vocab_diff":
      await ensureEncoding(msg.other);
      return { result: JSON.parse(api.vocab_diff(name, msg.other)) };
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
  pending++;
  clearTimeout(idleTimer);
  queue = queue.then(async () => {
    try {
      const { result, transfer } = await handle(msg);
      post({ id: msg.id, op: msg.op, ok: true, ...result }, transfer || []);
    } catch (e) {
      post({ id: msg.id, op: msg.op, ok: false, error: errorText(e) });
    } finally {
      pending--;
      whenIdle();
    }
  });
};

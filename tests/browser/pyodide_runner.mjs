// Runs our tokenizer under Pyodide in Node, the same wasm Python the page's worker uses.
//
// Usage: node tests/browser/pyodide_runner.mjs DIST_DIR
// Boots Pyodide from node_modules/pyodide (never the network), unpacks the wheel that
// build_wasm.py put in DIST_DIR, imports the library and the worker's Python side
// (tokenizer.web.bridge) with pyimport, then answers one JSON request per stdin line with one
// JSON line on stdout:
//   {"id": 1, "op": "encode", "encoding": "cl100k_base", "texts": ["..."]}  -> {"id": 1, "ids": [[...]]}
//   {"id": 2, "op": "split", "encoding": "...", "texts": [...]}             -> {"id": 2, "chunks": [[...]]}
//   {"id": 3, "op": "info"}                                                  -> {"id": 3, "info": {...}}
//   {"id": 4, "op": "import", "modules": ["tokenizer.core", ...]}            -> {"id": 4, "imported": N}
//   {"id": 5, "op": "bridge", "fn": "merge_tree", "args": [...]}            -> {"id": 5, "result": ...}
// A bridge answer is converted as the worker converts it (toJs), with each Uint8Array written as
// {"hex": "..."} so that it survives JSON. An encoding's blob is loaded into the bridge (as the
// worker does) the first time a request names it. The first line written is
// {"ready": true, "boot_ms": N}. One process serves many requests: booting Pyodide costs seconds.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { loadPyodide } from "pyodide";

const dist = process.argv[2];
if (!dist) {
  console.error("usage: node tests/browser/pyodide_runner.mjs DIST_DIR");
  process.exit(2);
}
const t0 = performance.now();
const manifest = JSON.parse(readFileSync(join(dist, "manifest.json"), "utf8"));
const py = await loadPyodide();
py.unpackArchive(new Uint8Array(readFileSync(join(dist, manifest.wheel))), "wheel");
const sys = py.pyimport("sys");
const encodings = py.pyimport("tokenizer.encodings");
const bridge = py.pyimport("tokenizer.web.bridge");
const loaded = new Set();
process.stdout.write(JSON.stringify({ ready: true, boot_ms: Math.round(performance.now() - t0) }) + "\n");

// Python's answer as plain JS (what the worker gets from toJs), bytes as {hex}.
function plain(value) {
  if (value && typeof value.toJs === "function") {
    const js = value.toJs({ dict_converter: Object.fromEntries });
    value.destroy();
    return plain(js);
  }
  if (value instanceof Uint8Array) return { hex: Buffer.from(value).toString("hex") };
  if (Array.isArray(value)) return value.map(plain);
  return value;
}

function hasModule(name) {
  try {
    py.pyimport(name).destroy();
    return true;
  } catch {
    return false;
  }
}

function ensureEncoding(name) {
  const entry = manifest.encodings[name];
  if (entry && !loaded.has(name)) {
    bridge.load_blob(name, new Uint8Array(readFileSync(join(dist, entry.file))));
    loaded.add(name);
  }
}

function eachText(encoding, texts, method) {
  ensureEncoding(encoding);
  const tok = encodings.get_encoding(encoding);
  const fn = tok[method];
  try {
    return texts.map((text) => plain(fn(text)));
  } finally {
    fn.destroy();
    tok.destroy();
  }
}

function callBridge(name, args) {
  const fn = bridge[name];
  try {
    return plain(fn(...args));
  } finally {
    fn.destroy();
  }
}

function handle(req) {
  switch (req.op) {
    case "info":
      return { info: { python: sys.version, platform: sys.platform, has_regex: hasModule("regex") } };
    case "encode":
      return { ids: eachText(req.encoding, req.texts, "encode_ordinary") };
    case "split":
      return { chunks: eachText(req.encoding, req.texts, "split") };
    case "import":
      for (const name of req.modules) py.pyimport(name).destroy();
      return { imported: req.modules.length };
    case "bridge":
      if (typeof req.args[0] === "string") ensureEncoding(req.args[0]);
      return { result: callBridge(req.fn, req.args) };
    default:
      throw new Error(`unknown op ${req.op}`);
  }
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let id = null;
  let reply;
  try {
    const req = JSON.parse(line);
    id = req.id;
    reply = { id, ...handle(req) };
  } catch (e) {
    reply = { id, error: String(e.message || e).split("\n").slice(-12).join("\n") };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}

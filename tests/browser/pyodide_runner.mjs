// Runs our tokenizer under Pyodide in Node, the same wasm Python the page's worker uses.
//
// Usage: node tests/pyodide_runner.mjs DIST_DIR
// Boots Pyodide from node_modules/pyodide (never the network), unpacks the wheel that
// build_wasm.py put in DIST_DIR, registers every encoding blob listed in DIST_DIR/manifest.json,
// then answers one JSON request per stdin line with one JSON line on stdout:
//   {"id": 1, "op": "encode", "encoding": "cl100k_base", "texts": ["..."]}  -> {"id": 1, "ids": [[...]]}
//   {"id": 2, "op": "split", "encoding": "...", "texts": [...]}             -> {"id": 2, "chunks": [[...]]}
//   {"id": 3, "op": "info"}                                                  -> {"id": 3, "info": {...}}
// The first line written is {"ready": true, "boot_ms": N}. One process serves many requests,
// because booting Pyodide costs seconds.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { loadPyodide } from "pyodide";

const dist = process.argv[2];
if (!dist) {
  console.error("usage: node tests/pyodide_runner.mjs DIST_DIR");
  process.exit(2);
}
const t0 = performance.now();
const manifest = JSON.parse(readFileSync(join(dist, "manifest.json"), "utf8"));
const py = await loadPyodide();
py.unpackArchive(new Uint8Array(readFileSync(join(dist, manifest.wheel))), "wheel");
py.runPython(`
import json, sys
import tokenizer
from tokenizer.encodings import get_encoding, register_encoding

def _register(buf):
    return register_encoding(buf.to_bytes()).name

def _handle(line):
    req = json.loads(line)
    rid = req.get("id")
    try:
        op = req["op"]
        if op == "info":
            try:
                import regex  # noqa: F401
                has_regex = True
            except ImportError:
                has_regex = False
            out = {"python": sys.version, "has_regex": has_regex, "platform": sys.platform}
            return json.dumps({"id": rid, "info": out})
        tok = get_encoding(req["encoding"])
        if op == "encode":
            return json.dumps({"id": rid, "ids": [tok.encode_ordinary(t) for t in req["texts"]]})
        if op == "split":
            return json.dumps({"id": rid, "chunks": [tok.split(t) for t in req["texts"]]})
        raise ValueError(f"unknown op {op!r}")
    except Exception as e:
        return json.dumps({"id": rid, "error": f"{type(e).__name__}: {e}"})
`);
const register = py.globals.get("_register");
const handle = py.globals.get("_handle");
const registered = new Set();
process.stdout.write(JSON.stringify({ ready: true, boot_ms: Math.round(performance.now() - t0) }) + "\n");

// Encodings are registered lazily, as the page's worker does; a failure is that request's error.
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let reply;
  try {
    const req = JSON.parse(line);
    const enc = manifest.encodings[req.encoding];
    if (enc && !registered.has(req.encoding)) {
      register(new Uint8Array(readFileSync(join(dist, enc.file))));
      registered.add(req.encoding);
    }
    reply = handle(line);
  } catch (e) {
    let id = null;
    try { id = JSON.parse(line).id; } catch {}
    reply = JSON.stringify({ id, error: String(e.message || e).split("\n").slice(-12).join("\n") });
  }
  process.stdout.write(reply + "\n");
}

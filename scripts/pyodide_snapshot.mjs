// Make the Pyodide memory snapshot the page's worker boots from (run by build_wasm.py).
//
// Usage: node scripts/pyodide_snapshot.mjs PYODIDE_MJS WHEEL OUT
// Boots Pyodide in Node from PYODIDE_MJS (node_modules/pyodide, never the network), unpacks our
// wheel, imports the worker's Python side (tokenizer.web.bridge, and with it the library) and
// compiles the reference split patterns, then writes the memory image to OUT. Restoring it skips
// CPython's start-up and those imports: about 0.7 s instead of 5.5 s in Node. The worker unpacks
// the same wheel again after restoring, so the snapshot is only valid for that wheel (build_wasm.py
// keys its file name by the wheel and the Pyodide version).
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const BRIDGE_MODULE = "tokenizer.web.bridge"; // what web/worker.js imports

const [pyodideMjs, wheel, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node scripts/pyodide_snapshot.mjs PYODIDE_MJS WHEEL OUT");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(pyodideMjs).href);
const py = await loadPyodide({ _makeSnapshot: true });
py.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel");
const bridge = py.pyimport(BRIDGE_MODULE);
const warmUp = bridge.warm_up;
warmUp();
warmUp.destroy();
bridge.destroy();
writeFileSync(out, py.makeMemorySnapshot());

// Runs web/result.js in Node for tests/browser/test_result_js.py.
//
// Usage: node tests/browser/result_runner.mjs < cases.json
// Each case: {ids, lens, bytes, roomy, patches: [{start, removed, ids, lens, bytes}, ...]}: a
// whole result (made with withRoom when roomy, as the worker sends a large one) patched in turn.
// Prints, per case, the final {ids, lens, bytes, starts} and whether the first patch wrote into
// the whole result's own buffers (no copy).
import { readFileSync } from "node:fs";
import { patchResult, wholeResult, withRoom } from "../../web/result.js";

const cases = JSON.parse(readFileSync(0, "utf8"));
const out = cases.map((c) => {
  let [ids, lens, bytes] = [Int32Array.from(c.ids), Int32Array.from(c.lens), Uint8Array.from(c.bytes)];
  if (c.roomy) [ids, lens, bytes] = [withRoom(ids), withRoom(lens), withRoom(bytes)];
  let res = wholeResult({ ids, lens, bytes, ms: 0, chars: 0 });
  const buffers = [res.ids.buffer, res.lens.buffer, res.bytes.buffer, res.starts.buffer];
  let inPlace = null;
  for (const p of c.patches) {
    res = patchResult(res, {
      start: p.start,
      removed: p.removed,
      ids: Int32Array.from(p.ids),
      lens: Int32Array.from(p.lens),
      bytes: Uint8Array.from(p.bytes),
      ms: 0,
      chars: 0,
    });
    if (inPlace === null) {
      const now = [res.ids.buffer, res.lens.buffer, res.bytes.buffer, res.starts.buffer];
      inPlace = now.every((b, i) => b === buffers[i]);
    }
  }
  return {
    ids: Array.from(res.ids),
    lens: Array.from(res.lens),
    bytes: Array.from(res.bytes),
    starts: Array.from(res.starts),
    inPlace,
  };
});
process.stdout.write(JSON.stringify(out));

// Runs web/bpe-merge.js in Node for tests/browser/test_bpe_merge.py.
//
// Usage: node tests/browser/bpe_merge_runner.mjs DIR
// DIR holds tokens.bin, lens.i32, ranks.i32 (tokenizer.web.jsmerge.rank_arrays) and data.bin,
// pieces.i32 (batch_arrays); the runner writes ids.i32 and counts.i32 there (mergeBatch's answer)
// or prints "declined" when mergeBatch returns null.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mergeBatch, rankTable } from "../../web/bpe-merge.js";

const dir = process.argv[2];
const bytes = (name) => new Uint8Array(readFileSync(join(dir, name)));
const ints = (name) => {
  const b = readFileSync(join(dir, name));
  return new Int32Array(b.buffer, b.byteOffset, b.length / 4);
};
const table = rankTable(bytes("tokens.bin"), ints("lens.i32"), ints("ranks.i32"));
const res = mergeBatch(table, bytes("data.bin"), ints("pieces.i32"));
if (res === null) {
  console.log("declined");
} else {
  writeFileSync(join(dir, "ids.i32"), new Uint8Array(res.ids.buffer));
  writeFileSync(join(dir, "counts.i32"), new Uint8Array(res.counts.buffer));
  console.log("merged");
}

// Runs web/format.js's tryDecode in Node for tests/browser/test_format_js.py.
//
// Usage: node tests/browser/format_runner.mjs
// Prints {checked, wrong: [first disagreements with the fatal decoder], thrown: how many
// decode calls threw while tryDecode ran}. TextDecoder.prototype.decode is counted before
// format.js is imported, so its own decoder is counted too.
const realDecode = TextDecoder.prototype.decode;
let thrown = 0;
TextDecoder.prototype.decode = function (...args) {
  try {
    return realDecode.apply(this, args);
  } catch (e) {
    thrown++;
    throw e;
  }
};
const { tryDecode } = await import("../../web/format.js");
const fatal = new TextDecoder("utf-8", { fatal: true });
function reference(bytes) {
  try {
    return realDecode.call(fatal, bytes);
  } catch {
    return null;
  }
}

// Byte values at every edge UTF-8 cares about, and a deterministic pseudo-random source.
const EDGES = [0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff];
let seed = 12345;
const random = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
const cases = [];
for (let a = 0; a < 256; a++) {
  cases.push([a]);
  for (let b = 0; b < 256; b++) cases.push([a, b]);
  for (const b of EDGES) for (const c of EDGES) cases.push([a, b, c]);
}
for (const a of EDGES) for (const b of EDGES) for (const c of EDGES) for (const d of EDGES) cases.push([a, b, c, d]);
const lead = [0x41, 0xc3, 0xe4, 0xed, 0xf0, 0xf4, 0x80, 0xa0, 0xbf];
for (let k = 0; k < 200000; k++) {
  const n = 1 + random(9);
  const bytes = [];
  for (let i = 0; i < n; i++) bytes.push(random(3) ? lead[random(lead.length)] + random(16) : random(256));
  cases.push(bytes);
}
// Whole characters, as tokens hold them: every scalar value's own encoding.
const enc = new TextEncoder();
for (let cp = 0; cp <= 0x10ffff; cp += cp < 0x3000 ? 1 : 97) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  cases.push([...enc.encode(String.fromCodePoint(cp))]);
}
thrown = 0;
const wrong = [];
for (const c of cases) {
  const bytes = Uint8Array.from(c);
  const got = tryDecode(bytes);
  if (got !== reference(bytes) && wrong.length < 10) wrong.push({ bytes: c, got, want: reference(bytes) });
}
// reference() threw through the real decode, uncounted: only tryDecode's throws are counted.
console.log(JSON.stringify({ checked: cases.length, wrong, thrown }));

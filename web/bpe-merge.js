// The merge loop for many new chunks at once, in JavaScript: for the worker, where WebAssembly
// CPython runs the pure-Python loop (tokenizer/_bpe.py `_bpe_scan`) below CPython's speed on
// text where nearly every chunk is new (multilingual: 0.60-0.69x in bench/browser.py).
//
// Exact, for the same reason `_bpe_scan` is: it is tiktoken's loop. A chunk starts as its single
// bytes; repeatedly the adjacent pair whose concatenated bytes have the lowest rank is merged, the
// leftmost on a tie (`<` keeps the first minimum), until no adjacent pair is a token; the ids are
// the ranks of the parts. Bytes are held as a string of char codes 0-255 (one per byte), so that
// a token's bytes are a Map key and a part is a slice.
//
// Wired in by web/worker.js (registered as a Python module) and tokenizer/web/jsmerge.py (set as
// every tokenizer's `batch_merge`: the library hands it the new chunks of an encode when there
// are thousands). tests/browser/test_bpe_merge.py proves the ids equal tiktoken's and
// `_bpe_scan`'s on real multilingual text and random bytes (Node runs this module);
// tests/browser/test_browser_jsmerge.py that the page takes it and still equals tiktoken.

const NO_RANK = Infinity; // "this pair is not a token": above every rank
const CHARS = 8192; // bytes turned into a string per String.fromCharCode call (its argument limit)

// A string of char codes 0-255, one per byte.
function byteString(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += CHARS) s += String.fromCharCode.apply(null, bytes.subarray(i, i + CHARS));
  return s;
}

// The tokens' table: token bytes (as a byte string) -> rank. `tokens` is every token's bytes
// concatenated, `lens` their lengths and `ranks` their ranks, in the same order. Given a
// `table`, they are added to it (the worker builds a large table in steps, between requests).
export function rankTable(tokens, lens, ranks, table = new Map()) {
  const all = byteString(tokens);
  let at = 0;
  for (let i = 0; i < lens.length; i++) {
    table.set(all.slice(at, at + lens[i]), ranks[i]);
    at += lens[i];
  }
  return table;
}

// One chunk's ids appended to `out`; false if one of its bytes is not a token (then the caller
// merges it in Python, which says why).
function mergeOne(table, s, out) {
  const bounds = []; // part k is s[bounds[k], bounds[k + 1])
  for (let i = 0; i <= s.length; i++) bounds.push(i);
  const pairs = []; // pairs[k]: rank of parts k and k + 1 together
  for (let i = 0; i + 1 < s.length; i++) pairs.push(rankOf(table, s.slice(i, i + 2)));
  while (pairs.length) {
    let best = NO_RANK;
    let k = -1;
    for (let i = 0; i < pairs.length; i++) {
      if (pairs[i] < best) {
        best = pairs[i];
        k = i;
      }
    }
    if (k < 0) break;
    bounds.splice(k + 1, 1);
    pairs.splice(k, 1);
    if (k < pairs.length) pairs[k] = rankOf(table, s.slice(bounds[k], bounds[k + 2]));
    if (k > 0) pairs[k - 1] = rankOf(table, s.slice(bounds[k - 1], bounds[k + 1]));
  }
  for (let i = 0; i + 1 < bounds.length; i++) {
    const id = table.get(s.slice(bounds[i], bounds[i + 1]));
    if (id === undefined) return false;
    out.push(id);
  }
  return true;
}

function rankOf(table, key) {
  const r = table.get(key);
  return r === undefined ? NO_RANK : r;
}

// The chunks data[0, lens[0]), data[lens[0], lens[0] + lens[1]), ... merged: all their ids in
// order and how many each chunk has; null if a chunk holds a byte that is not a token.
export function mergeBatch(table, data, lens) {
  const all = byteString(data);
  const ids = [];
  const counts = new Int32Array(lens.length);
  let at = 0;
  for (let i = 0; i < lens.length; i++) {
    const before = ids.length;
    if (!mergeOne(table, all.slice(at, at + lens[i]), ids)) return null;
    counts[i] = ids.length - before;
    at += lens[i];
  }
  return { ids: Int32Array.from(ids), counts };
}

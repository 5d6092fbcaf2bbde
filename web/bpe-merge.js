// The merge loop for many new chunks at once, in JavaScript: for the worker, where WebAssembly
// CPython runs the pure-Python loop (tokenizer/_bpe.py `_bpe_scan`) below CPython's speed on
// text where nearly every chunk is new (multilingual: 0.60-0.69x in bench/browser.py).
//
// Exact, for the same reason `_bpe_scan` is: it is tiktoken's loop. A chunk starts as its single
// bytes; repeatedly the adjacent pair whose concatenated bytes have the lowest rank is merged, the
// leftmost on a tie (`<` keeps the first minimum), until no adjacent pair is a token; the ids are
// the ranks of the parts. A part is held as its rank (a rank names one token), and a pair's rank
// is looked up by the two ranks (`PairRanks`), which asks the table of token bytes -> rank (a Map
// keyed by byte strings: char codes 0-255, one per byte) only for pairs it has not met yet.
// Holding parts as byte strings instead, sliced and hashed at every step, took 2-4x longer.

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
// Beside it (`states`) each rank's bytes and each single byte's rank are kept, in the same steps.
export function rankTable(tokens, lens, ranks, table = new Map()) {
  const all = byteString(tokens);
  const state = stateOf(table);
  let at = 0;
  for (let i = 0; i < lens.length; i++) {
    const token = all.slice(at, at + lens[i]);
    table.set(token, ranks[i]);
    state.tokenOf[ranks[i]] = token;
    if (lens[i] === 1) state.byteId[all.charCodeAt(at)] = ranks[i];
    at += lens[i];
  }
  state.pairs = null; // a pair that was no token may be one now
  return table;
}

// What a batch merge needs besides the table: each rank's bytes (tokenOf), each single byte's
// rank (byteId, -1: not a token) and a cache of pair ranks, made on first use. Kept beside the
// table, not in it, so that the table stays the plain Map of token bytes -> rank.
const states = new WeakMap(); // table -> {tokenOf, byteId, pairs}

function stateOf(table) {
  let state = states.get(table);
  if (state === undefined) {
    state = { tokenOf: [], byteId: new Int32Array(256).fill(-1), pairs: null };
    states.set(table, state);
  }
  return state;
}

// Pair (left rank, right rank) -> rank of their bytes joined, or NO_RANK: an open-addressing table
// of int32 keys, filled from the Map on a miss. A merge then looks up two ints instead of slicing
// a string and hashing it; a batch meets a few thousand to ~100 K distinct pairs and looks each
// up many times. Emptied when half full (it is only a cache).
const PAIR_SLOTS = 1 << 18; // 3 MB of Int32Arrays per tokenizer
const PAIR_FULL = PAIR_SLOTS >> 1; // pairs kept before the cache is emptied (probes stay short)
const NOT_A_TOKEN = -1; // a cached pair whose bytes are no token (NO_RANK in the merge loop)

class PairRanks {
  constructor(table, tokenOf) {
    this.table = table;
    this.tokenOf = tokenOf;
    this.lefts = new Int32Array(PAIR_SLOTS).fill(-1);
    this.rights = new Int32Array(PAIR_SLOTS);
    this.ranks = new Int32Array(PAIR_SLOTS);
    this.count = 0;
  }

  get(a, b) {
    const mask = PAIR_SLOTS - 1;
    let i = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) & mask;
    while (this.lefts[i] !== -1) {
      if (this.lefts[i] === a && this.rights[i] === b) {
        const rank = this.ranks[i];
        return rank === NOT_A_TOKEN ? NO_RANK : rank;
      }
      i = (i + 1) & mask;
    }
    const rank = this.table.get(this.tokenOf[a] + this.tokenOf[b]);
    if (this.count >= PAIR_FULL) {
      this.lefts.fill(-1);
      this.count = 0;
      return rank === undefined ? NO_RANK : rank; // not kept: its slot belonged to the old contents
    }
    this.lefts[i] = a;
    this.rights[i] = b;
    this.ranks[i] = rank === undefined ? NOT_A_TOKEN : rank;
    this.count++;
    return rank === undefined ? NO_RANK : rank;
  }
}

// The ids of data[at, end) appended to `out`; false if one of its bytes is not a token (then the
// caller merges it in Python, which says why). A part is an id: the merged pair's rank is the id
// of the token the two parts make, so a merge needs no bytes at all.
function mergeOne(state, data, at, end, out) {
  const cache = state.pairs;
  const parts = [];
  for (let i = at; i < end; i++) {
    const id = state.byteId[data[i]];
    if (id < 0) return false;
    parts.push(id);
  }
  const pairs = []; // pairs[k]: rank of parts k and k + 1 together
  for (let k = 0; k + 1 < parts.length; k++) pairs.push(cache.get(parts[k], parts[k + 1]));
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
    parts[k] = best;
    parts.splice(k + 1, 1);
    pairs.splice(k, 1);
    if (k < pairs.length) pairs[k] = cache.get(best, parts[k + 1]);
    if (k > 0) pairs[k - 1] = cache.get(parts[k - 1], best);
  }
  for (const id of parts) out.push(id);
  return true;
}

// The chunks data[0, lens[0]), data[lens[0], lens[0] + lens[1]), ... merged: all their ids in
// order and how many each chunk has; null if a chunk holds a byte that is not a token.
export function mergeBatch(table, data, lens) {
  const state = stateOf(table);
  state.pairs ??= new PairRanks(table, state.tokenOf);
  const ids = [];
  const counts = new Int32Array(lens.length);
  let at = 0;
  for (let i = 0; i < lens.length; i++) {
    const before = ids.length;
    if (!mergeOne(state, data, at, at + lens[i], ids)) return null;
    counts[i] = ids.length - before;
    at += lens[i];
  }
  return { ids: Int32Array.from(ids), counts };
}

// Forget the pair ranks met so far (bench/browser.py times a cold encode: tokenizer/web/bridge.py's
// forget_chunks empties every cache an encode fills).
export function forgetPairs(table) {
  stateOf(table).pairs = null;
}

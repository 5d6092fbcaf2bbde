// A panel's whole encode result, patched in place: ids, per-token byte lengths, all tokens'
// bytes and the byte offset where each token starts.
//
// Why in place: 5 MB of text is 1.2 M tokens. Building new arrays for every keystroke (ids,
// lens, bytes: 15 MB, plus a pass over all lens for the starts) cost 30-60 ms a panel and
// made the garbage collector stop the page. Here the arrays have room to grow; a patch moves
// the tail within them (copyWithin: a memmove) and writes the new tokens, and only the tail's
// starts are shifted by the change in bytes. The views (ids, lens, bytes, starts) always have
// exactly the result's length; anything that keeps a view across a patch must copy what it
// needs first (render.js keeps the previous window's ids: freezeWindow below).

export const GROW = 1.25; // capacity after a patch that does not fit: 25 % room for typing

// Byte offsets of the tokens: starts[i] is where token i begins, starts[n] the total.
export function tokenStarts(lens, out = new Int32Array(lens.length + 1), from = 0, base = 0) {
  out[from] = base;
  for (let i = from; i < lens.length; i++) out[i + 1] = out[i] + lens[i];
  return out;
}

// A whole result as the worker sent it (transferred arrays; views of the first `length`
// elements when the worker gave them room to grow: withRoom).
export function wholeResult({ ids, lens, bytes, ms, chars }) {
  const starts = tokenStarts(lens, new Int32Array(capacity(lens) + 1));
  const cap = { ids: whole(ids), lens: whole(lens), bytes: whole(bytes), starts };
  return { ids, lens, bytes, starts: starts.subarray(0, lens.length + 1), ms, chars, cap };
}

// All of a view's buffer from its start: the room a patch may grow into.
function whole(view) {
  return new view.constructor(view.buffer, view.byteOffset, capacity(view));
}

function capacity(view) {
  return (view.buffer.byteLength - view.byteOffset) / view.BYTES_PER_ELEMENT;
}

function room(array, need) {
  if (array.length >= need) return array;
  const out = new array.constructor(Math.ceil(need * GROW) + 16);
  out.set(array);
  return out;
}

// `array` copied into a buffer with GROW's room, as a view of its length: the worker sends a
// large whole result this way, so the first keystroke's patch (on the page's thread) finds room
// instead of copying every array (5 MB of text: 20 MB, 25-110 ms with the garbage collection).
export function withRoom(array) {
  return room(array, array.length + 1).subarray(0, array.length);
}

// The view `win` (a window of `all`: ids, starts; starts index into all.bytes) copied, so that
// it still shows the old tokens after `all` is patched.
export function freezeWindow(win) {
  if (!win || !win.starts.length) return;
  const s0 = win.starts[0];
  const s1 = win.starts[win.starts.length - 1];
  win.ids = win.ids.slice();
  win.bytes = win.bytes.slice(s0, s1);
  win.starts = win.starts.map((x) => x - s0);
}

// ids[start, start + removed) of `all` become the patch's tokens; returns the patched result
// (the same buffers when they had room) with `patch` saying what changed.
export function patchResult(all, { start, removed, ids, lens, bytes, ms, chars }) {
  const n = all.ids.length;
  if (start === 0 && removed === n) return { ...wholeResult({ ids, lens, bytes, ms, chars }), patch: { start, removed, added: ids.length } };
  const end = start + removed;
  if (start < 0 || end > n) throw new Error(`internal: a patch of tokens ${start}+${removed} of ${n}`);
  const added = ids.length;
  const newN = n - removed + added;
  const b0 = all.starts[start];
  const b1 = all.starts[end];
  const nBytes = all.starts[n];
  const newBytes = nBytes - (b1 - b0) + bytes.length;
  const cap = {
    ids: room(all.cap.ids, newN),
    lens: room(all.cap.lens, newN),
    bytes: room(all.cap.bytes, newBytes),
    starts: room(all.cap.starts, newN + 1),
  };
  cap.ids.copyWithin(start + added, end, n);
  cap.ids.set(ids, start);
  cap.lens.copyWithin(start + added, end, n);
  cap.lens.set(lens, start);
  cap.bytes.copyWithin(b0 + bytes.length, b1, nBytes);
  cap.bytes.set(bytes, b0);
  const shift = bytes.length - (b1 - b0);
  const st = cap.starts;
  st.copyWithin(start + added + 1, end + 1, n + 1);
  for (let i = start; i < start + added; i++) st[i + 1] = st[i] + lens[i - start];
  if (shift) for (let i = start + added + 1; i <= newN; i++) st[i] += shift;
  return {
    ids: cap.ids.subarray(0, newN),
    lens: cap.lens.subarray(0, newN),
    bytes: cap.bytes.subarray(0, newBytes),
    starts: st.subarray(0, newN + 1),
    ms,
    chars,
    cap,
    patch: { start, removed, added },
  };
}

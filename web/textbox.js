// The text the panels encode, and the textarea that edits it: a log of edits, and a window.
//
// Edits, not texts. A keystroke changes a few characters; sending megabytes to the worker for
// each panel (and converting them to a Python string there) cost most of a keystroke in a large
// text. So every change is recorded as an edit {start, removed, inserted} (UTF-16 offsets into
// the previous text) with a version number, and a panel asks editSince(itsVersion) for the one
// edit that turns the text it last sent into today's. Composing edits is exact: an edit keeps
// the first `start` and the last `after - start - inserted.length` characters of the text, so a
// sequence keeps at least the smallest such prefix p and suffix q of all of them; that p + q
// never exceeds either text's length (it is at most the first edit's prefix + suffix, and at
// most the last's); one edit replacing the middle between them does the same. An old version
// (beyond the log) gives null: send the whole text.
//
// The text is kept as pieces (Pieces below), not as one string: V8 flattens a string built by
// an edit (slice + insert + slice) the next time it is sliced, which copied all 5 MB (7 ms) at
// every keystroke. An edit rebuilds the piece or two it touches; the whole string is joined
// only when asked for (getText: a whole send, the share link, the analysis views).
//
// The window. Chromium's own textarea is slow on megabytes (measured, a bare textarea holding
// 5 MB: 0.4-0.9 s of layout and paint per keystroke, before any tokens). Above LIVE_MAX
// characters the textarea holds WINDOW characters of the text around the caret, the whole text
// lives here; a change of the box is an edit at boxStart + its offset. Moving the caret (or
// scrolling) near an edge of the box moves the window. Selecting all the box holds and typing,
// pasting or deleting replaces the whole text, as select-all would in any editor. A script
// that sets the box's value and sends a plain `input` Event (not an InputEvent) replaces the
// whole text too, as it would without a window.

import { groupDigits as fmt } from "./format.js";
import { $, input } from "./state.js";
import { isHigh, isLow } from "./utf16.js";

// The box's cost grows with what it holds: laying out (shaping) 128 K characters anew took
// ~100 ms on the test machine, a keystroke in 5 MB 0.4-0.9 s, in 64 K ~25 ms under load.
const LIVE_MAX = 1 << 17; // characters (UTF-16 units) the box holds whole
const WINDOW = 1 << 15; // characters the box holds of a longer text (a keystroke there: ~10-25 ms)
const EDGE = WINDOW >> 3; // a caret this close to an edge of the box (text beyond it) moves the window
const LOG_MAX = 256; // edits remembered: a panel further behind gets the whole text

const PIECE = 1 << 14; // characters per piece of the text: an edit copies one or two (< 4 * PIECE)

// A text as pieces of at most 2 * PIECE characters (none empty) and their end offsets.
class Pieces {
  constructor(value) {
    this.pieces = [];
    for (let i = 0; i < value.length; i += PIECE) this.pieces.push(value.slice(i, i + PIECE));
    this.ends = [];
    this.reindex();
    this.flat = value; // the whole text as one string, or null until someone asks
  }

  get length() {
    return this.ends.length ? this.ends[this.ends.length - 1] : 0;
  }

  reindex() {
    let end = 0;
    this.ends = this.pieces.map((p) => (end += p.length));
  }

  // The piece holding character `at` (the last one for at >= length).
  find(at) {
    let lo = 0;
    let hi = this.ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ends[mid] <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  startOf(i) {
    return this.ends[i] - this.pieces[i].length;
  }

  slice(a, b) {
    if (this.flat !== null) return this.flat.slice(a, b);
    b = Math.min(b, this.length);
    if (a >= b) return "";
    const i = this.find(a);
    const j = this.find(b - 1);
    if (i === j) return this.pieces[i].slice(a - this.startOf(i), b - this.startOf(i));
    const parts = [this.pieces[i].slice(a - this.startOf(i))];
    for (let k = i + 1; k < j; k++) parts.push(this.pieces[k]);
    parts.push(this.pieces[j].slice(0, b - this.startOf(j)));
    return parts.join("");
  }

  toString() {
    if (this.flat === null) this.flat = this.pieces.join("");
    return this.flat;
  }

  // UTF-8 bytes of text[0, at), as the worker encodes it (a lone surrogate as U+FFFD, 3 bytes):
  // each piece through the browser's encoder; a pair that two pieces split is 4 bytes, not 3 + 3.
  utf8Before(at) {
    let bytes = 0;
    for (let i = 0; i < this.pieces.length && this.startOf(i) < at; i++) {
      const piece = this.pieces[i];
      const part = this.ends[i] <= at ? piece : piece.slice(0, at - this.startOf(i));
      bytes += utf8.encodeInto(part, scratch(part.length)).written;
      const next = this.pieces[i + 1];
      const split = part === piece && next && isHigh(piece.charCodeAt(piece.length - 1)) && isLow(next.charCodeAt(0));
      if (split && this.ends[i] < at) bytes -= 2;
    }
    return bytes;
  }

  // Characters [start, start + removed) become `inserted`.
  replace(start, removed, inserted) {
    let i = 0;
    let j = -1;
    let middle = inserted;
    if (this.pieces.length) {
      i = this.find(start);
      j = Math.max(i, this.find(Math.max(start, start + removed - 1)));
      const head = this.pieces[i].slice(0, start - this.startOf(i));
      middle = head + inserted + this.pieces[j].slice(start + removed - this.startOf(j));
    }
    const size = middle.length > 2 * PIECE ? PIECE : Math.max(middle.length, 1);
    const cut = [];
    for (let k = 0; k < middle.length; k += size) cut.push(middle.slice(k, k + size));
    this.pieces.splice(i, j - i + 1, ...cut);
    this.reindex();
    this.flat = null;
  }
}

const utf8 = new TextEncoder();
let scratchBytes = new Uint8Array(0);
// A buffer for encodeInto of `units` UTF-16 units (at most 3 bytes each).
function scratch(units) {
  if (scratchBytes.length < 3 * units) scratchBytes = new Uint8Array(3 * units);
  return scratchBytes;
}

let text = new Pieces(input.value);
let boxStart = 0; // the box shows text[boxStart, boxStart + boxValue.length)
let boxValue = input.value; // what the box held after our last change, to find the user's edit
let version = 0;
const log = []; // {version, start, removed, insertedLen, after: length after the edit}
const listeners = [];
let wholeSelected = false; // the user is replacing all the box holds (beforeinput saw it)

export const getText = () => text.toString(); // joins the pieces once after an edit
export const textLength = () => text.length;
export const textVersion = () => version;
export const isWindowed = () => text.length > LIVE_MAX;
export const utf8Before = (at) => text.utf8Before(at); // bytes of the UTF-8 text before character `at`

// Fn(timeStamp) after every change of the text.
export function onTextChange(fn) {
  listeners.push(fn);
}

// Fn(version, bytes) when the caret has moved and settled (CARET_SETTLE_MS), not by typing:
// `bytes` is the caret's offset in the UTF-8 text of `version` (the panels' tokens are byte
// ranges). Only large texts are told: a shorter one is shown whole.
const CARET_SETTLE_MS = 120; // arrow keys held down: one call once they stop
const CARET_TOLD_MIN = LIVE_MAX; // characters: shorter texts fit the panels' token windows anyway
const caretListeners = [];
let caretTimer = 0;
export function onCaretMove(fn) {
  caretListeners.push(fn);
}

function caretMoved() {
  clearTimeout(caretTimer);
  if (text.length < CARET_TOLD_MIN || !caretListeners.length) return;
  caretTimer = setTimeout(() => {
    const at = boxStart + (input.selectionEnd ?? 0);
    const bytes = text.utf8Before(Math.min(at, text.length));
    for (const fn of caretListeners) fn(version, bytes);
  }, CARET_SETTLE_MS);
}

// Replaces the whole text (a file, a share link, a script), then tells the listeners.
export function setText(value, timeStamp = performance.now()) {
  applyEdit(0, text.length, value);
  placeWindow(0);
  changed(timeStamp);
}

// The one edit from version `from` to now: {start, removed, inserted}, or null if that version
// is no longer in the log (or is in the future: a panel of a page that was reset).
export function editSince(from) {
  if (from === version) return { start: 0, removed: 0, inserted: "" };
  const first = log.findIndex((e) => e.version === from + 1);
  if (first < 0 || log[log.length - 1].version !== version) return null;
  let before = null; // the text's length at `from`
  let p = Infinity;
  let q = Infinity;
  for (let k = first; k < log.length; k++) {
    const e = log[k];
    if (before === null) before = e.after - e.insertedLen + e.removed;
    p = Math.min(p, e.start);
    q = Math.min(q, e.after - e.start - e.insertedLen);
  }
  return { start: p, removed: before - q - p, inserted: slice(p, text.length - q) };
}

// text.slice(a, b), from the box's copy when it holds that part: slicing the whole text right
// after an edit would first copy all of it into one flat string (megabytes, every keystroke).
function slice(a, b) {
  if (a >= boxStart && b <= boxStart + boxValue.length) return boxValue.slice(a - boxStart, b - boxStart);
  return text.slice(a, b);
}

function applyEdit(start, removed, inserted) {
  if (start === 0 && removed === text.length) text = new Pieces(inserted);
  else text.replace(start, removed, inserted);
  version++;
  log.push({ version, start, removed, insertedLen: inserted.length, after: text.length });
  if (log.length > LOG_MAX) log.splice(0, log.length - LOG_MAX);
}

function changed(timeStamp) {
  for (const fn of listeners) fn(timeStamp);
}

// Common prefix and suffix of two strings (the box before and after one input event): blocks
// compared natively first, then characters.
const COMPARE_BLOCK = 2048;
function diffStrings(a, b) {
  const n = Math.min(a.length, b.length);
  const B = COMPARE_BLOCK;
  let p = 0;
  while (p + B <= n && a.substring(p, p + B) === b.substring(p, p + B)) p += B;
  while (p < n && a.charCodeAt(p) === b.charCodeAt(p)) p++;
  const la = a.length;
  const lb = b.length;
  let q = 0;
  while (q + B <= n - p && a.substring(la - q - B, la - q) === b.substring(lb - q - B, lb - q)) q += B;
  while (q < n - p && a.charCodeAt(la - 1 - q) === b.charCodeAt(lb - 1 - q)) q++;
  return [p, q];
}

// Shows text[start, start + WINDOW) in the box (the whole text if short), caret at `caret`.
function placeWindow(caret) {
  const start = isWindowed() ? Math.max(0, Math.min(caret - (WINDOW >> 1), text.length - WINDOW)) : 0;
  const value = isWindowed() ? text.slice(start, start + WINDOW) : text.toString();
  if (start !== boxStart || value !== boxValue) {
    boxStart = start;
    boxValue = value;
    input.value = value;
    input.setSelectionRange(caret - start, caret - start);
  }
  showWindowNote();
}

// Puts the caret at `offset` of the text (moving the window there): for tests and the benchmark.
export function moveCaret(offset) {
  placeWindow(offset);
  input.focus();
  input.setSelectionRange(offset - boxStart, offset - boxStart);
  caretMoved();
}

function showWindowNote() {
  const note = $("#input-window");
  if (!note) return;
  note.hidden = !isWindowed();
  if (!isWindowed()) return;
  note.textContent =
    `The box holds characters ${fmt(boxStart + 1)}–${fmt(boxStart + boxValue.length)} of ${fmt(text.length)} ` +
    "(all of them are encoded); it follows the caret and the scroll. Select all in the box to replace the whole text.";
}

// After a caret move or a scroll: re-centre the window when the caret nears an edge with text beyond.
function followCaret() {
  if (!isWindowed() || input.selectionStart !== input.selectionEnd) return; // never undo a selection
  const c = input.selectionEnd;
  const nearStart = c < EDGE && boxStart > 0;
  const nearEnd = c > boxValue.length - EDGE && boxStart + boxValue.length < text.length;
  if (nearStart || nearEnd) placeWindow(boxStart + c);
}

function followScroll() {
  if (!isWindowed() || input.selectionStart !== input.selectionEnd) return;
  const top = input.scrollTop;
  const max = input.scrollHeight - input.clientHeight;
  if (top <= 0 && boxStart > 0) placeWindow(boxStart + EDGE);
  else if (top >= max - 1 && boxStart + boxValue.length < text.length) placeWindow(boxStart + boxValue.length - EDGE);
  else return;
  // Keep the old edge in view: the caret was put there; scroll to it.
  const frac = (input.selectionEnd || 0) / Math.max(1, input.value.length);
  input.scrollTop = frac * input.scrollHeight - input.clientHeight / 2;
}

// Chromium's insertText command (Playwright's fill(), an extension filling the box,
// document.execCommand) inserts its text one line at a time: 20,000 characters of short lines
// held the page 0.3-0.8 s, 120,000 characters 6.5 s, in one task, where a paste of the same text
// takes 13-46 ms. A longer insert is put in by the page, as a big paste is (the box's own undo
// then does not cover it, as it does not cover a big paste).
const INSERT_SELF_MIN = 1024; // characters: typing and an input method's commits are far shorter

input.addEventListener("beforeinput", (ev) => {
  wholeSelected = isWindowed() && input.selectionStart === 0 && input.selectionEnd === input.value.length;
  if (ev.inputType !== "insertText" || !ev.cancelable || !ev.data || ev.data.length < INSERT_SELF_MIN) return;
  ev.preventDefault();
  wholeSelected = false;
  insertHere(ev.data.replace(/\r\n?/g, "\n"), ev.timeStamp);
});

// A big paste goes straight into the text: never megabytes into the box (seconds of its layout).
// Its line breaks are normalized as the box normalizes a small paste (a textarea's value holds
// no CR: CRLF and CR become LF), so the same clipboard gives the same text and tokens at any size.
input.addEventListener("paste", (ev) => {
  const raw = ev.clipboardData && ev.clipboardData.getData("text/plain");
  const pasted = raw && raw.replace(/\r\n?/g, "\n");
  if (!pasted || boxValue.length + pasted.length <= LIVE_MAX) return;
  ev.preventDefault();
  insertHere(pasted, ev.timeStamp);
});

// `inserted` replaces the box's selection (all the text, if the box's all is selected); the box
// then shows the text, or a window of it, with the caret after the insert.
function insertHere(inserted, timeStamp) {
  const a = input.selectionStart;
  const b = input.selectionEnd;
  const whole = a === 0 && b === input.value.length;
  if (whole) applyEdit(0, text.length, inserted);
  else applyEdit(boxStart + a, b - a, inserted);
  placeWindow(whole ? inserted.length : boxStart + a + inserted.length);
  changed(timeStamp);
}

input.addEventListener("input", (ev) => {
  const value = input.value;
  if (!(ev instanceof InputEvent) || (wholeSelected && isWindowed())) {
    // A script's value (or all the box replaced): the whole text.
    const caret = input.selectionEnd ?? 0;
    wholeSelected = false;
    applyEdit(0, text.length, value);
    boxStart = 0;
    boxValue = value; // what the box holds now; placeWindow cuts it down if the text is long
    placeWindow(Math.min(caret, text.length));
  } else {
    const [p, q] = diffStrings(boxValue, value);
    const inserted = value.slice(p, value.length - q);
    const caret = input.selectionEnd;
    applyEdit(boxStart + p, boxValue.length - q - p, inserted);
    boxValue = value;
    if (isWindowed() && boxStart === 0 && value.length === text.length) {
      placeWindow(caret); // the text just grew past LIVE_MAX: cut the box down to a window
    } else if (!isWindowed() && (boxStart > 0 || boxValue.length !== text.length)) {
      placeWindow(boxStart + caret); // it shrank below: the box holds it all again
    } else {
      showWindowNote();
    }
  }
  changed(ev.timeStamp || performance.now());
});

// A key that moved the caret (not one that typed: typing's edit moves the panels' windows).
const CARET_KEYS = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End"]);
input.addEventListener("keyup", (ev) => {
  followCaret();
  if (CARET_KEYS.has(ev.key)) caretMoved();
});
input.addEventListener("click", () => {
  followCaret();
  caretMoved();
});
input.addEventListener("scroll", followScroll, { passive: true });

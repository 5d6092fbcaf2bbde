// How the page writes tokens as text: one module for the playground (app.js and its modules) and
// the Learn view (learn.js), so a space, a tab or a byte looks the same everywhere.
//
// - Whitespace is made visible with one glyph per character: a space as ·, a tab as →, a carriage
//   return as ␍, a line feed as ↵ (issue 5's glyphs; the merge list's "made of" arrow is ←, and
//   the Learn view's words never hold a tab, so its "makes" arrow → is never a token there).
// - A token is a byte range. Its text is decoded with a *fatal* UTF-8 decoder; a token that is not
//   valid UTF-8 on its own (a piece of an emoji or of a CJK character) is written as its bytes in
//   hex, <E4 BD>, never as U+FFFD.

const GLYPHS = { " ": "·", "\t": "→", "\r": "␍", "\n": "↵" };
const fatal = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");

// 1234567 -> "1,234,567", as toLocaleString("en") writes an integer, without ICU: the page's first
// ICU number format loads its data, a 47 ms task on an idle machine, which fell into the first
// large text's input task (the text box's window note) and render (the panel's pager).
export function groupDigits(n) {
  const digits = String(Math.trunc(Math.abs(n))).replace(/\B(?=(\d{3})+$)/g, ",");
  return n < 0 ? `-${digits}` : digits;
}

// visible("a b\n") === "a·b↵". With { breaks: true } a line feed keeps its line break after the
// glyph ("a·b↵\n"), so a token view still breaks lines where the text does.
export function visible(text, { breaks = false } = {}) {
  return text.replace(/[ \t\r\n]/g, (c) => (breaks && c === "\n" ? "↵\n" : GLYPHS[c]));
}

// Explicit bidi controls (embeddings, overrides, isolates: U+202A-U+202E, U+2066-U+2069). One
// inside a token is invisible, yet it reorders the text after it up to the end of the line
// block: o200k's token " \u202b" drew the line's ↵ left of the tokens it follows. Such a token
// gets the class "bidi" (style.css: unicode-bidi: isolate), so its control stops at its own edge.
// (Marks such as U+200F only steer their neighbours' direction, as in the text itself.)
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;

// " bidi" if `text` holds an explicit bidi control, else "": a suffix for a span's classes.
export function bidiClass(text) {
  return BIDI_CONTROL.test(text) ? " bidi" : "";
}

// hex(Uint8Array [0xe4, 0xbd]) === "E4 BD"
export function hex(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += (i ? " " : "") + bytes[i].toString(16).toUpperCase().padStart(2, "0");
  return s;
}

export function bytesFromHex(h) {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(i * 2, 2), 16);
  return out;
}

// Bytes of one token written out in the lists (audit, vocabulary diff, merge list and tree): a
// crafted file's token can be megabytes (20 self-merges of "a" make 2 MB), and an audit's 20
// longest tokens written whole (4 MB of text and hex) froze the page for 2.5 s. A cut shows "…".
export const SHOWN_TOKEN_BYTES = 1024;

// The first SHOWN_TOKEN_BYTES of a token given as hex, cut at a UTF-8 character boundary:
// {bytes, cut, total (the token's length in bytes)}. Only what is shown is converted.
export function previewFromHex(h) {
  const total = h.length / 2;
  if (total <= SHOWN_TOKEN_BYTES) return { bytes: bytesFromHex(h), cut: false, total };
  const bytes = bytesFromHex(h.slice(0, 2 * (SHOWN_TOKEN_BYTES + 1)));
  let end = SHOWN_TOKEN_BYTES;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // a continuation byte: not a boundary
  return { bytes: bytes.subarray(0, end || SHOWN_TOKEN_BYTES), cut: true, total };
}

// The text of `bytes` if they are valid UTF-8 on their own, else null. The bytes are checked
// first: asking the fatal decoder and catching its TypeError made and threw an exception for
// every partial-character token (most of a CJK or emoji text's tokens in cl100k_base), ~200 ms
// of a 300 K CJK render plus the garbage collection of the exceptions, on the page's thread.
export function tryDecode(bytes) {
  return isUtf8(bytes) ? fatal.decode(bytes) : null;
}

// What the fatal decoder accepts: shortest forms only, no surrogates, nothing above U+10FFFF
// (the second byte's range after E0, ED, F0 and F4 is what rules those out).
function isUtf8(b) {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let more;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) more = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f;
    } else return false;
    if (i + more >= n) return false; // cut short
    if (b[i + 1] < lo || b[i + 1] > hi) return false;
    for (let k = 2; k <= more; k++) if ((b[i + k] & 0xc0) !== 0x80) return false;
    i += more + 1;
  }
  return true;
}

// Best-effort text (U+FFFD for broken sequences): for tooltips and split chunks, never for tokens.
export function decodeLenient(bytes) {
  return lenient.decode(bytes);
}

// A token's label: its text passed through `show` (e.g. visible), or <HEX> if it is not UTF-8.
export function tokenLabel(bytes, show = visible) {
  const s = tryDecode(bytes);
  return s === null ? `<${hex(bytes)}>` : show(s);
}

// One of 16 colour classes (style.css .c0-.c15), the same for the same id in every panel.
export function colorClass(id) {
  return "c" + (Math.imul(id + 1, 2654435761) >>> 28);
}

// Labels for the names the library defines (manifest.json "names"); a name without one is shown
// as itself, so a pattern or rule the library adds later still appears, just unlabelled.
const LABELS = {
  pattern: {
    gpt2: "GPT-2",
    gpt4: "GPT-4 (cl100k)",
    o200k: "GPT-4o (o200k)",
    none: "none (no pre-tokenization)",
    custom: "custom regex…",
  },
  tie_break: { first: "first occurrence (minbpe)", lexical: "smallest ids (rustbpe)" },
};

export function nameLabel(kind, name) {
  return LABELS[kind][name] || name;
}

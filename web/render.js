// Token rendering: a panel's encode result as coloured spans, one per token.
//
// Text is handled as UTF-8 bytes, never as JS string offsets: a token is a byte range, its text
// is decoded per token (format.js), and tokens that form one character only together (the two
// halves of 東 in cl100k_base) are grouped under that character.
//
// A panel's spans are indexed: panel.spans[i] is token i's span and span._i is i, so hovering,
// highlighting and diff marks find a token's bytes (panel.starts[i], panel.starts[i + 1]) in
// constant time. Both are kept up to date when lines are reused or patched.

import { el } from "./dom.js";
import { updateDiff } from "./diff.js";
import { bidiClass, colorClass, groupDigits as fmt, hex, tryDecode, visible } from "./format.js";
import { tokenStarts } from "./result.js";
import { state } from "./state.js";

// The window's DOM is built in slices bounded by time, not by tokens: 1,000 tokens took 20 ms on
// an idle machine but 95-136 ms at load 3 (a Chromium trace), and each slice is one main-thread
// task. The first slice runs with the reply, so it also holds the edit: it goes on, past its
// time, until the edit's tokens are built, if they are at most EDIT_REACH tokens away.
const SLICE_MS = 12; // a slice stops after this (time checked every SLICE_CHECK tokens)
const SLICE_CHECK = 32; // tokens: about 1 ms
const SLICE_MAX = 1500; // tokens in one slice, whatever the clock says
// The first slices are smaller: their layout is not counted by the clock, and the first glyphs of
// a script (font fallback for CJK) made the first 1,500-token layout a 100+ ms task.
const FIRST_SLICE_MAX = 300;
const EDIT_REACH = 400; // tokens the first slice builds past its time to show the edit (~10-30 ms)

// Token text as the view options say: whitespace made visible (keeping line breaks) or raw.
export function shown(s) {
  return state.options.whitespace ? visible(s, { breaks: true }) : s;
}

// The span's text: its id in the ids view, else its text without the final line break (that
// break is the one between line blocks).
export function displayText(span) {
  if (state.options.ids) return span.dataset.id;
  const t = span.dataset.text;
  return t.endsWith("\n") ? t.slice(0, -1) : t;
}

export function rerenderAll() {
  for (const p of state.panels) if (p.result) render(p, p.result.all, p.result.length, { full: true });
}

// A large result is shown through a window of at most VIEW_TOKENS tokens, so the DOM stays
// bounded (5 MB of text is 1.2 M tokens: as spans, seconds of layout and a gigabyte of memory).
// The window follows the edits (a keystroke outside it moves it there) and the pager's buttons.
const VIEW_TOKENS = 10000; // a window's DOM is built in ~0.2 s of idle slices (40,000: ~1.5 s, restarted by typing)
const JUMP_BEFORE = 100; // tokens shown before an edit the window jumps to (a few lines: the first slice reaches the edit)
const VIEW_SLACK = 2500; // typing may grow a window by this much before it is cut back to VIEW_TOKENS
// Tokens in one line block: a longer line (1 MB of CJK or minified code has no newline) goes on in
// the next block. One block of 30,000 spans took Chromium 100-300 ms to lay out after every slice
// that grew it; blocks of 1,000 keep each layout small (content-visibility skips the rest).
const LINE_MAX = 1000;

function viewRange(panel, total, patch, full) {
  if (total <= VIEW_TOKENS) return [0, total];
  const old = panel.result;
  const clamp = (a) => Math.max(0, Math.min(a, total - VIEW_TOKENS));
  if (old && patch && !full) {
    const o0 = old.offset;
    const o1 = o0 + old.ids.length;
    const end = o1 + patch.added - patch.removed;
    // Nothing changed (a panel asked again for the text it has): the window stays.
    if (!patch.removed && !patch.added) return [o0, o1];
    // An edit inside the window: same start, the end moves with the edit (so the old and new
    // windows differ only around it and render() rebuilds just that).
    if (patch.start >= o0 && patch.start + patch.removed <= o1 && end - o0 <= VIEW_TOKENS + VIEW_SLACK) {
      return [o0, Math.min(total, end)];
    }
    // Elsewhere: the window jumps there, starting a little before the edit so that the first
    // slice (built at once) shows the edit; near the end the window is shorter, never moved back
    // (typing at the end of 100 KB made a window whose first 10,000 tokens came before the edit).
    const a = Math.max(0, patch.start - JUMP_BEFORE);
    return [a, Math.min(total, a + VIEW_TOKENS)];
  }
  const a = clamp(panel.viewStart || 0);
  return [a, a + VIEW_TOKENS];
}

// The caret moved (textbox.js onCaretMove) to byte `bytes` of the text: a large result's window
// moves there unless it shows that token already, so the tokens around the caret are on screen
// and the next keystroke is an edit inside the window (a jump at a keystroke costs it ~50 ms
// more: two slices and a whole new window laid out). Only a result for that very text moves.
export function showTokenAt(panel, textVersion, bytes) {
  const r = panel.result;
  if (!r || r.all.ids.length <= VIEW_TOKENS || panel.textVersion !== textVersion || panel.inflight) return;
  const starts = r.allStarts;
  let lo = 0;
  let hi = r.all.ids.length - 1;
  while (lo < hi) {
    // the last token starting at or before `bytes`
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= bytes) lo = mid;
    else hi = mid - 1;
  }
  if (lo >= r.offset && lo < r.offset + r.ids.length) return;
  panel.viewStart = Math.max(0, lo - JUMP_BEFORE);
  render(panel, r.all, r.length, { full: true });
}

// "tokens a-b of n" and buttons that move the window; hidden while the whole result is shown.
function showPager(panel, w0, w1, total) {
  if (!panel.pagerEl) {
    const move = (by) => {
      const r = panel.result;
      panel.viewStart = r.offset + by;
      render(panel, r.all, r.length, { full: true });
    };
    panel.pagerEl = el(
      "div",
      { class: "pager muted", "data-testid": "pager" },
      el("button", { type: "button", text: "◀ earlier", onclick: () => move(-VIEW_TOKENS / 2) }),
      el("span", { "data-testid": "pager-range" }),
      el("button", { type: "button", text: "later ▶", onclick: () => move(VIEW_TOKENS / 2) }),
    );
    panel.tokensEl.before(panel.pagerEl);
  }
  panel.pagerEl.hidden = w0 === 0 && w1 === total;
  panel.pagerEl.children[1].textContent =
    ` showing tokens ${fmt(w0 + 1)}–${fmt(w1)} of ${fmt(total)} (the window follows your edits) `;
}

// The token view is a list of line blocks (split after tokens that end with a newline, and after
// LINE_MAX tokens of a longer line), each
// `content-visibility: auto`, so the browser lays out and paints only the lines on screen. A new
// result re-renders only the blocks between the common prefix and the common suffix of the old
// and new ids: a keystroke in 100 KB of text touches one or two lines, not 25,000 spans.
// panel.result.length is the length (UTF-16 units) of the text the result is for.
// Large results: panel.result holds the window's tokens (ids, lens and starts are views; starts
// are byte offsets into the whole text's `bytes`), `all` the whole result, `offset` the window's
// first token.
export function render(panel, res, length, { full = false } = {}) {
  const total = res.ids.length;
  const allStarts = res.starts || tokenStarts(res.lens); // result.js keeps them
  const [w0, w1] = viewRange(panel, total, res.patch, full);
  const whole = w0 === 0 && w1 === total;
  const ids = whole ? res.ids : res.ids.subarray(w0, w1);
  const lens = whole ? res.lens : res.lens.subarray(w0, w1);
  const starts = whole ? allStarts : allStarts.subarray(w0, w1 + 1);
  const bytes = res.bytes;
  const n = ids.length;
  const old = panel.result;
  const oldBlocks = panel.blocks || [];
  const oldSpans = panel.spans || [];
  panel.result = { ids, lens, bytes, starts, length, complete: false, all: res, allStarts, offset: w0 };
  panel.starts = starts;
  const gen = ++panel.renderGen;
  panel.countEl.textContent = String(total);
  const chars = res.chars; // code points: the worker counts them (bridge.encode_edit)
  panel.statsEl.textContent = total
    ? `· ${(chars / total).toFixed(2)} chars/token · ${(bytes.length / total).toFixed(2)} bytes/token`
    : "";
  if (!whole || panel.pagerEl) showPager(panel, w0, w1, total);

  // Which old blocks survive: closed ones (by a newline, or full) inside the common prefix, and
  // those inside the common suffix whose preceding block boundary is in the suffix too. An unfinished sliced
  // render (typing while a window is built) keeps its finished lines before the edit and goes on
  // from there, instead of starting the window again at every keystroke.
  const incremental = !full && old && old.offset === w0;
  let head = 0;
  let tail = 0;
  if (incremental) {
    const on = old.ids.length;
    const m = Math.min(on, n);
    let p = 0;
    while (p < m && old.ids[p] === ids[p]) p++;
    let q = 0;
    while (q < m - p && old.ids[on - 1 - q] === ids[n - 1 - q]) q++;
    tail = oldBlocks.length;
    while (head < oldBlocks.length && oldBlocks[head].end <= p && oldBlocks[head].closed) head++;
    while (tail > head && oldBlocks[tail - 1].start > on - q) tail--;
    if (!old.complete) {
      // Its blocks stop where it stopped: none of them is a suffix; all after the head go.
      for (let k = head; k < oldBlocks.length; k++) oldBlocks[k].el.remove();
      tail = oldBlocks.length;
    } else {
      if (tail - head === 1 && patchLine(panel, old, oldBlocks, oldSpans, head, p, on - q)) return;
      for (let k = head; k < tail; k++) oldBlocks[k].el.remove();
    }
  } else if (oldSpans.length > STALE_MIN) {
    dropLater(panel); // also drops the blocks of an unfinished sliced render
  } else {
    clearTokens(panel); // also drops the blocks of an unfinished sliced render
  }
  const delta = n - (old ? old.ids.length : 0);
  const headBlocks = oldBlocks.slice(0, head);
  const tailBlocks = incremental ? oldBlocks.slice(tail) : [];
  const from = head ? oldBlocks[head - 1].end : 0;
  const spans = new Array(n);
  for (let i = 0; i < from; i++) spans[i] = oldSpans[i];
  for (const b of tailBlocks) {
    for (let i = b.start; i < b.end; i++) {
      const sp = oldSpans[i];
      spans[i + delta] = sp;
      if (sp) sp._i = i + delta;
    }
    b.start += delta;
    b.end += delta;
  }
  panel.spans = spans;
  const middle = [];
  panel.blocks = [...headBlocks, ...tailBlocks];
  // New lines go before the old window's lines that are still being removed (dropLater).
  const anchor = () => (tailBlocks.length ? tailBlocks[0].el : firstStale(panel));
  const realTo = tailBlocks.length ? tailBlocks[0].start : n;

  // The edit's tokens (window indices before editTo) are what the user waits for.
  const patch = res.patch;
  const editTo = patch && !full ? Math.min(realTo, Math.max(from, patch.start + patch.added - w0)) : from;
  // panel.result.built: window tokens in the DOM so far; slices: tokens each slice built (tests).
  Object.assign(panel.result, { built: from, editTo, slices: [] });

  let i = from;
  let open = null; // a line longer than a slice stays open into the next slice
  let sliceMax = FIRST_SLICE_MAX; // doubles each slice up to SLICE_MAX
  const step = (mustReach) => {
    if (gen !== panel.renderGen || panel.removed) return;
    const frag = document.createDocumentFragment();
    const first = i;
    const cap = Math.max(i + sliceMax, mustReach); // the edit is shown in this slice whatever its size
    sliceMax = Math.min(2 * sliceMax, SLICE_MAX);
    const t0 = performance.now();
    // The clock is read every SLICE_CHECK tokens (not calls: a group of partial-character tokens
    // is one call). Once it says stop, every later call says so too: the outer loop (a new line
    // block) asks again after the inner one stopped, and that call would not read the clock.
    let look = i + SLICE_CHECK;
    let late = false;
    const more = () => {
      if (late || i >= realTo || i >= cap) return false;
      if (i < mustReach || i < look) return true;
      look = i + SLICE_CHECK;
      late = performance.now() - t0 >= SLICE_MS;
      return !late;
    };
    while (more()) {
      let block = open;
      if (!block) {
        block = { el: el("div", { class: "line" }), start: i, end: i, closed: false };
        middle.push(block);
        frag.append(block.el);
      }
      open = block;
      while (more()) {
        i = appendToken(panel, block.el, i, n);
        if (bytes[starts[i] - 1] === 0x0a || i - block.start >= LINE_MAX) {
          block.closed = true; // by a newline, or full: a new block starts either way
          open = null;
          break;
        }
      }
      block.end = i;
    }
    if (i >= realTo) open = null;
    panel.tokensEl.insertBefore(frag, anchor());
    panel.blocks = [...headBlocks, ...middle, ...tailBlocks];
    panel.result.built = i;
    panel.result.slices.push(i - first);
    if (i < realTo) {
      setTimeout(() => step(0), 0);
      return;
    }
    panel.result.complete = true;
    markRendered(panel);
  };
  panel.tokensEl.setAttribute("aria-busy", "true");
  panel.tokensEl.dataset.rendered = "";
  step(Math.min(editTo, from + EDIT_REACH));
}

// An edit inside one long line (a 100 KB paragraph, minified code) patches that line's spans in
// place instead of rebuilding the whole line: old tokens [a, b) become new tokens [a, b + delta).
const PATCH_MIN_LINE = 600; // shorter lines are simply rebuilt
const PATCH_MAX_TOKENS = 4000; // bigger edits go through the sliced rebuild

function groupOf(span) {
  const g = span && span.parentElement;
  return g && g.classList.contains("group") ? g : null;
}

function patchLine(panel, old, blocks, oldSpans, k, a, b) {
  const block = blocks[k];
  const { ids, bytes, starts } = panel.result;
  const n = ids.length;
  const on = old.ids.length;
  const delta = n - on;
  if (block.end - block.start < PATCH_MIN_LINE) return false;
  a = Math.max(a, block.start);
  b = Math.max(a, Math.min(b, block.end));
  // Never cut a group of partial-character tokens: take whole groups.
  const ga = groupOf(oldSpans[a]);
  if (ga) a = ga.firstElementChild._i;
  const gb = b > a ? groupOf(oldSpans[b - 1]) : groupOf(oldSpans[b]);
  if (gb) b = gb.lastElementChild._i + 1;
  if (b > block.end || a < block.start) return false;
  if (b - a + (b + delta - a) > PATCH_MAX_TOKENS) return false;
  // A newline removed or added changes the line structure: rebuild instead.
  for (let i = a; i < b; i++) if (old.bytes[old.starts[i + 1] - 1] === 0x0a) return false;
  for (let i = a; i < b + delta; i++) if (bytes[starts[i + 1] - 1] === 0x0a) return false;

  const anchorSpan = b < block.end ? oldSpans[b] : null;
  const anchor = anchorSpan ? groupOf(anchorSpan) || anchorSpan : null;
  for (let i = a; i < b; i++) {
    const sp = oldSpans[i];
    const g = groupOf(sp);
    sp.remove();
    if (g && !g.firstElementChild) g.remove();
  }
  const spans = new Array(n);
  for (let i = 0; i < a; i++) spans[i] = oldSpans[i];
  for (let i = b; i < on; i++) {
    const sp = oldSpans[i];
    spans[i + delta] = sp;
    sp._i = i + delta;
  }
  panel.spans = spans;
  const frag = document.createDocumentFragment();
  let i = a;
  while (i < b + delta) i = appendToken(panel, frag, i, b + delta);
  block.el.insertBefore(frag, anchor);
  block.end += delta;
  for (let j = k + 1; j < blocks.length; j++) {
    blocks[j].start += delta;
    blocks[j].end += delta;
  }
  panel.blocks = blocks;
  panel.result.complete = true;
  markRendered(panel);
  return true;
}

// The DOM shows the whole window (and nothing else) once its lines are built and the previous
// window's lines are gone: tests and the bench wait for data-rendered.
function markRendered(panel) {
  if (!panel.result || !panel.result.complete || panel.stale) return;
  panel.tokensEl.removeAttribute("aria-busy");
  panel.tokensEl.dataset.rendered = String(panel.result.all.ids.length); // the whole result's count
  if (state.options.diff) updateDiff();
}

// A window that jumps (a keystroke far from it, the pager) replaces 10,000 tokens' spans: removing
// them at once was a 60-80 ms task plus a 120 ms frame (style, pre-paint and layout of the removal;
// a Chromium trace at load 3). They are removed in time-bounded slices instead, after the new
// window's lines, which are inserted before them; content-visibility keeps the off-screen ones
// cheap meanwhile. Not tied to a render: a newer render leaves the sweep running.
const STALE_MIN = 2000; // tokens in the DOM below which the old lines simply go at once
const STALE_CHECK = 16; // lines removed between two looks at the clock

function dropLater(panel) {
  const els = [...panel.tokensEl.children];
  panel.stale = panel.stale ? { els: panel.stale.els.concat(els), next: panel.stale.next } : { els, next: 0 };
  if (!panel.sweeping) {
    panel.sweeping = true;
    setTimeout(() => sweep(panel), 0);
  }
}

function firstStale(panel) {
  const st = panel.stale;
  return st && st.next < st.els.length ? st.els[st.next] : null;
}

function sweep(panel) {
  const st = panel.stale;
  if (!st) {
    panel.sweeping = false;
    return;
  }
  const t0 = performance.now();
  while (st.next < st.els.length) {
    st.els[st.next++].remove();
    if (st.next % STALE_CHECK === 0 && performance.now() - t0 >= SLICE_MS) break;
  }
  if (st.next < st.els.length) {
    setTimeout(() => sweep(panel), 0);
    return;
  }
  panel.stale = null;
  panel.sweeping = false;
  markRendered(panel);
}

// Drops the old lines at once (an error replaces the tokens).
export function clearTokens(panel) {
  panel.stale = null;
  panel.tokensEl.replaceChildren();
}

// Appends token i (or a group of tokens forming one character) to `parent`; returns the next index.
function appendToken(panel, parent, i, n) {
  const { bytes, starts } = panel.result;
  const b = bytes.subarray(starts[i], starts[i + 1]);
  const s = tryDecode(b);
  if (s !== null) {
    parent.append(tokenSpan(panel, i, s, b));
    return i + 1;
  }
  // Not valid UTF-8 alone: find the run of following tokens that completes the character(s),
  // and group them visually under the text they form together.
  let j = i + 1;
  let joined = null;
  while (j < n && j - i < 8) {
    joined = tryDecode(bytes.subarray(starts[i], starts[j + 1]));
    j++;
    if (joined !== null) break;
  }
  if (joined === null) {
    parent.append(tokenSpan(panel, i, null, b));
    return i + 1;
  }
  const group = el("span", {
    class: `group${bidiClass(joined)}`,
    "data-char": shown(joined).replace(/\n$/, ""),
    title: `${j - i} tokens form ${JSON.stringify(joined)}`,
  });
  for (let k = i; k < j; k++) {
    const bk = bytes.subarray(starts[k], starts[k + 1]);
    group.append(tokenSpan(panel, k, tryDecode(bk), bk));
  }
  parent.append(group);
  return j;
}

function tokenSpan(panel, i, s, b) {
  const id = panel.result.ids[i];
  const span = el("span", {
    class: s === null ? `tok ${colorClass(id)} bytes` : `tok ${colorClass(id)}${bidiClass(s)}`,
    "data-testid": "token",
    "data-id": id,
    // A final newline is the line block's break; the ↵ marks it in the visible-whitespace view.
    "data-text": s === null ? `<${hex(b)}>` : shown(s),
  });
  span.textContent = displayText(span);
  span._i = i; // index in panel.spans (kept up to date when lines are reused)
  if (panel.spans) panel.spans[i] = span;
  return span;
}

// A decode reply's tokens as spans, outside any panel (the decode box): the first `limit` of them
// (a few more if the last ones form one character together).
export function tokenFragment(res, limit = Infinity) {
  const n = Math.min(res.ids.length, limit);
  const owner = { result: { ids: res.ids, bytes: res.bytes, starts: tokenStarts(res.lens) }, spans: null };
  const frag = document.createDocumentFragment();
  let i = 0;
  while (i < n) i = appendToken(owner, frag, i, n);
  return frag;
}

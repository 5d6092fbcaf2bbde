// The panels: one per tokenizer, side by side, each kept in step with the text box.
//
// The main thread never tokenizes: it sends the worker the edit since the text behind the
// panel's result (textbox.js; the whole text the first time, or when the worker no longer holds
// that one) and patches in what comes back (ids, per-token byte lengths, the tokens' bytes, as
// transferable typed arrays; result.js). At most one encode per panel is in flight; a keystroke
// during it marks the panel dirty and the edits since are sent, as one, when the reply arrives,
// so typing never queues up work. Replies older than what a panel already shows are dropped by
// request id.
//
// No silent stale panel: a panel says when its tokens are pending (data-state="pending", and a
// visible note if the answer takes a moment) or when its encode failed (data-state="error", the
// message in place of the tokens). A tokenizer too slow on a text (the worker's watchdog stopped
// it) is not asked again until the text or the tokenizer changes.

import { el } from "./dom.js";
import { updateDiff } from "./diff.js";
import { bidiClass, decodeLenient, groupDigits as fmt } from "./format.js";
import { clearTokens, render, showTokenAt, shown } from "./render.js";
import { freezeWindow, patchResult, wholeResult } from "./result.js";
import { writeLiveLink, writeShareLinkSoon } from "./share.js";
import { $, metrics, panelByName, state } from "./state.js";
import { editSince, getText, onCaretMove, onTextChange, textLength, textVersion } from "./textbox.js";
import { nextRequestId, rpc, WorkerTimeout } from "./worker-client.js";

const panelsEl = $("#panels");
const SPLIT_MAX_CHUNKS = 20000; // the split view shows at most this many chunks
const PENDING_NOTE_MS = 300; // "encoding…" shows only past this, so typing does not flicker it

// Shows a panel for tokenizer `name` (or refreshes it). `info` replaces the tokenizer's facts
// when it was reloaded under the same name.
export function addPanel(name, { info = null } = {}) {
  let panel = panelByName(name);
  if (panel) {
    if (info) {
      // A replaced tokenizer (retrained under the same name): same ids may mean other bytes,
      // so the next render must not reuse any line.
      panel.info = info;
      panel.version++;
      if (panel.result) panel.result.complete = false;
    }
    schedule(panel);
    return panel;
  }
  const countEl = el("b", { "data-testid": "token-count", text: "…" });
  const statsEl = el("span", { class: "muted", "data-testid": "stats" });
  const stateEl = el("span", { class: "muted", "data-testid": "panel-state", role: "status" });
  const errorEl = el("div", { class: "message error", "data-testid": "panel-error", role: "alert", hidden: true });
  const chunksEl = el("div", {
    class: "chunks scroll-box",
    "data-testid": "chunks",
    hidden: true,
    tabIndex: 0, // it scrolls: the keyboard must reach it
    role: "group",
    "aria-label": `regex split of ${name}`,
  });
  // Tab lands on the token view; arrow keys then walk its tokens (inspect.js).
  const tokensEl = el("div", { class: "tokens", "data-testid": "tokens", tabIndex: 0 });
  const section = el(
    "section",
    {
      class: "panel",
      "data-testid": "panel",
      "data-encoding": name,
      "data-state": "pending",
      "aria-label": `tokens of ${name}`,
    },
    el(
      "header",
      { class: "panel-head" },
      el("h2", { class: "panel-name", text: name }),
      el("span", { class: "stats" }, countEl, " tokens ", statsEl, " ", stateEl),
      el("span", { class: "spacer" }),
      el("button", { type: "button", class: "baseline", title: "use as the diff baseline", text: "baseline", onclick: () => setBaseline(name) }),
      el("button", { type: "button", class: "remove", "aria-label": "remove this panel", title: "remove", text: "×", onclick: () => removePanel(name) }),
    ),
    errorEl,
    chunksEl,
    tokensEl,
  );
  panel = {
    name,
    info,
    el: section,
    tokensEl,
    chunksEl,
    countEl,
    statsEl,
    stateEl,
    errorEl,
    version: 0, // bumped when the tokenizer behind the panel is replaced
    failed: null, // {tv, version} of an encode that failed (text version, tokenizer version): not retried until either changes
    result: null,
    spans: [],
    starts: null,
    shownId: 0,
    inflight: false,
    dirty: false,
    renderGen: 0,
    encSerial: 0, // serial of the worker's kept encoding behind panel.result (bridge.encode_edit)
    textVersion: -1, // textbox.js's version of the text behind encSerial (-1: none)
  };
  state.panels.push(panel);
  panelsEl.append(section);
  refreshSelects();
  if (state.ready) schedule(panel);
  return panel;
}

export function removePanel(name) {
  const i = state.panels.findIndex((p) => p.name === name);
  if (i < 0) return;
  const [p] = state.panels.splice(i, 1);
  p.removed = true;
  p.el.remove();
  if (state.ready) rpc("forget_edits", { key: name }).catch(() => {}); // a restarted worker forgot it already
  refreshSelects();
  updateDiff();
  writeLiveLink();
}

// Moves panel `name` to just after panel `anchor` (train.js: an extension next to its base).
export function placePanelAfter(name, anchor) {
  const p = panelByName(name);
  const a = panelByName(anchor);
  if (!p || !a || p === a) return;
  state.panels.splice(state.panels.indexOf(p), 1);
  state.panels.splice(state.panels.indexOf(a) + 1, 0, p);
  a.el.after(p.el);
  refreshSelects();
  updateDiff();
  writeLiveLink();
}

function setBaseline(name) {
  const i = state.panels.findIndex((p) => p.name === name);
  if (i > 0) {
    const [p] = state.panels.splice(i, 1);
    state.panels.unshift(p);
    panelsEl.prepend(p.el);
    updateDiff();
  }
}

function refreshSelects() {
  for (const sel of [$("#decode-encoding"), $("#merge-encoding")]) {
    const keep = sel.value;
    sel.replaceChildren(...state.panels.map((p) => new Option(p.name, p.name)));
    if (state.panels.some((p) => p.name === keep)) sel.value = keep;
  }
}

// ----- encoding pump ------------------------------------------------------------------------

let inputSeq = 0;
let lastInput = { seq: 0, t: 0 };

export function refreshAll() {
  state.panels.forEach(schedule);
  writeShareLinkSoon();
}

export function schedule(panel) {
  panel.dirty = true;
  pump(panel);
}

async function pump(panel) {
  if (panel.inflight || !panel.dirty || !state.ready || panel.removed) return;
  panel.dirty = false;
  // The text's version, not the text: joining a long text's pieces costs a copy of all of it
  // (textbox.js), which only a whole send needs.
  let tv = textVersion();
  if (panel.failed && panel.failed.tv === tv && panel.failed.version === panel.version) return;
  panel.inflight = true;
  const version = panel.version;
  const seq = inputSeq;
  const t = lastInput.t;
  setPanelState(panel, "pending");
  try {
    // The tokenizer's facts first (the first use of a reference encoding parses it): the
    // message of a too-slow encode names its pattern.
    if (!panel.info) panel.info = (await rpc("prepare", { name: panel.name })).info;
    const base = panel.encSerial;
    panel.awaiting = textVersion();
    let sent;
    try {
      sent = await encode(panel, base);
    } finally {
      panel.awaiting = null;
    }
    const { id, patch, length } = sent;
    tv = sent.tv;
    const turn = renderTurn(tv);
    if (turn) await turn;
    const res = applyPatch(panel, patch, base);
    panel.encSerial = patch.serial; // the panel's arrays are this result now (patched in place)
    panel.textVersion = tv;
    if (id <= panel.shownId) panel.encSerial = 0; // never happens (one request at a time); if it did: whole next time
    if (!panel.removed && id > panel.shownId) {
      panel.shownId = id;
      panel.failed = null;
      if (!panel.dirty) setPanelState(panel, "ok");
      const r0 = performance.now();
      render(panel, res, length);
      panel.lastRenderMs = performance.now() - r0;
      if (tv === textVersion()) noteDropped(panel, res);
      if (state.options.split) renderSplit(panel);
      if (seq === inputSeq && t) noteLatency(panel, t, length, res.ms);
      if (metrics.firstTokens === null) metrics.firstTokens = performance.now() - metrics.t0;
    }
  } catch (e) {
    if (!panel.removed) {
      panel.encSerial = 0; // the worker's kept encoding is gone or suspect: the next is whole
      panel.failed = { tv, version };
      showEncodeError(panel, e instanceof WorkerTimeout ? tooSlowMessage(panel, e) : e.message);
    }
  } finally {
    panel.inflight = false;
    if (panel.dirty) pump(panel);
  }
}

// The worker answers one panel at a time, so the replies to one keystroke arrive one after the
// other; rendering each at once made the browser lay out and paint twice, and the second reply
// waited behind the first one's frame (a keystroke in 5 MB: 130 and 203 ms for two panels, in a
// Chromium trace). A reply therefore waits, at most TURN_WAIT_MS, for the other panels still
// waiting for their reply for the same text; the last one lets all of them render in one task.
const TURN_WAIT_MS = 40;
let turn = null; // {waiting: resolvers, timer}

function renderTurn(tv) {
  if (!state.panels.some((p) => p.awaiting === tv && !p.removed)) {
    endTurn();
    return null;
  }
  if (!turn) turn = { waiting: [], timer: setTimeout(endTurn, TURN_WAIT_MS) };
  return new Promise((resolve) => turn.waiting.push(resolve));
}

function endTurn() {
  if (!turn) return;
  clearTimeout(turn.timer);
  const { waiting } = turn;
  turn = null;
  for (const resolve of waiting) resolve();
}

// Only the edit since the text behind the panel's result goes to the worker (textbox.js), unless
// there is no such result, the edit is unknown or the worker no longer holds that text ("stale":
// restarted, or a reply lost): then the whole text. {id: the rpc id, patch: the reply, tv and
// length: the version and length of the text it encodes, taken when the request was made}.
async function encode(panel, base) {
  const edit = base && panel.textVersion >= 0 ? editSince(panel.textVersion) : null;
  if (edit) {
    const id = nextRequestId(); // the id rpc() is about to use: replies are ordered by it
    const [tv, length] = [textVersion(), textLength()];
    const payload = { name: panel.name, key: panel.name, base, ...edit, size: length, special: state.options.special };
    const patch = await rpc("encode_change", payload);
    if (!patch.stale) {
      metrics.sent.edits++;
      return { id, patch, tv, length };
    }
  }
  metrics.sent.texts++;
  const id = nextRequestId();
  const [tv, text] = [textVersion(), getText()];
  const patch = await rpc("encode_edit", { name: panel.name, key: panel.name, text, base, special: state.options.special });
  return { id, patch, tv, length: text.length };
}

// The worker answers with a patch of the result the panel shows (ids[start, start + removed)
// replaced), or the whole result; this makes the whole result from either (result.js). The
// window render.js shows is copied first: the patch overwrites the arrays it views.
function applyPatch(panel, patch, base) {
  if (patch.full) return wholeResult(patch);
  const old = panel.result;
  if (!old || base !== panel.encSerial) throw new Error("internal: a patch for a result the panel no longer shows");
  freezeWindow(old);
  return patchResult(old.all, patch);
}

// A custom split pattern that does not match some of the text drops it silently (tiktoken does
// the same; decode then gives the text without it): the panel says how much, so its tokens are
// never taken for the whole text. Named patterns match every character (tests/test_patterns.py),
// so only a custom one (its name is its regex) is checked; both sides count UTF-8 bytes, a lone
// surrogate as U+FFFD on both.
const utf8 = new TextEncoder();
function noteDropped(panel, res) {
  const info = panel.info || {};
  if (info.pattern !== info.pattern_regex) {
    delete panel.el.dataset.dropped;
    return;
  }
  const total = utf8.encode(getText()).length;
  const dropped = total - res.bytes.length;
  panel.el.dataset.dropped = String(dropped);
  if (dropped > 0) {
    panel.stateEl.textContent =
      `its split pattern skips ${fmt(dropped)} of ${fmt(total)} bytes ` +
      "of this text (left out of the tokens)";
  }
}

// Only a split regex that is not a named pattern can backtrack catastrophically (bridge.py's
// custom_regexes: the named ones never do, tests/test_patterns.py); with none, the time went
// into merging a long piece the pattern cannot cut, and the message says so, not "backtracks".
function tooSlowMessage(panel, e) {
  const info = panel.info || {};
  const custom = info.custom_regexes || [info.pattern_regex || info.pattern || "?"];
  const chars = countChars(getText());
  const head =
    `${panel.name} is too slow on this text: encoding ${fmt(chars)} characters did not ` +
    `finish within ${(e.ms / 1000).toFixed(1)} s`;
  const why = custom.length
    ? ` with its split pattern ${custom.join(" then ")} (a pattern with nested repeats such as (?:a+)+ ` +
      "can backtrack for hours)"
    : `; its split pattern, ${info.pattern}, cannot backtrack: the text holds a run the pattern cannot ` +
      "cut (one character repeated many times, say), and merging it as one piece takes longer: shorten that run";
  return `${head}${why}. The worker was restarted; this panel is encoded again when the text or the tokenizer changes.`;
}

function countChars(text) {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

// A failed panel shows the error instead of tokens of some older text.
function showEncodeError(panel, message) {
  panel.renderGen++; // stops an unfinished sliced render
  panel.result = null;
  panel.starts = null;
  panel.spans = [];
  panel.blocks = [];
  clearTokens(panel);
  panel.tokensEl.removeAttribute("aria-busy");
  panel.tokensEl.dataset.rendered = "";
  panel.chunksEl.replaceChildren();
  panel.countEl.textContent = "–";
  panel.statsEl.textContent = "";
  setPanelState(panel, "error", message);
  updateDiff();
}

// data-state is what tests read: "pending" (an encode is on its way), "ok", "error".
function setPanelState(panel, value, message = "") {
  panel.el.dataset.state = value;
  clearTimeout(panel.pendingTimer);
  panel.errorEl.hidden = value !== "error";
  panel.errorEl.textContent = message;
  panel.stateEl.textContent = value === "error" ? "error" : "";
  if (value === "pending") {
    panel.pendingTimer = setTimeout(() => {
      if (panel.el.dataset.state === "pending") panel.stateEl.textContent = "encoding…";
    }, PENDING_NOTE_MS);
  }
}

// Input event -> the edit's tokens in the DOM (render.js builds a window in slices: the first
// one holds the edit unless it is far; then a later one) -> the next frame painted.
function noteLatency(panel, t, length, pyMs) {
  const res = panel.result;
  const frame = () =>
    requestAnimationFrame(() => {
      const shown = res.complete || res.built >= res.editTo;
      if (!shown && panel.result === res && !panel.removed) return frame();
      setTimeout(() => {
        metrics.renders.push({
          panel: panel.name,
          ms: performance.now() - t,
          len: length,
          py_ms: pyMs,
          render_ms: panel.lastRenderMs,
          slices: res.slices ? res.slices.length : 0,
        });
        if (metrics.renders.length > 2000) metrics.renders.splice(0, 1000);
      }, 0);
    });
  frame();
}

onTextChange((timeStamp) => {
  inputSeq++;
  lastInput = { seq: inputSeq, t: timeStamp };
  refreshAll();
});

// One panel's window per frame: a new window's first layout is ~40-50 ms, two at once made one
// ~100 ms frame (a Chromium trace, 5 MB).
onCaretMove((version, bytes) => {
  const panels = state.panels.filter((p) => !p.removed);
  const next = (i) => {
    if (i >= panels.length) return;
    showTokenAt(panels[i], version, bytes);
    requestAnimationFrame(() => setTimeout(() => next(i + 1), 0)); // after this frame is painted
  };
  next(0);
});

// ----- split view (regex pre-tokenization chunks) -------------------------------------------

export async function renderSplit(panel) {
  const tv = textVersion();
  if (panel.failed && panel.failed.tv === tv) return; // its pattern is too slow on this text
  let res;
  try {
    res = await rpc("split", { name: panel.name, text: getText() });
  } catch (e) {
    panel.chunksEl.textContent = e.message;
    panel.chunksEl.hidden = false;
    return;
  }
  if (panel.removed || textVersion() !== tv) return;
  const frag = document.createDocumentFragment();
  let off = 0;
  for (let i = 0; i < res.lens.length && i < SPLIT_MAX_CHUNKS; i++) {
    const b = res.bytes.subarray(off, off + res.lens[i]);
    off += res.lens[i];
    const text = decodeLenient(b);
    frag.append(el("span", { class: `chunk${bidiClass(text)}`, "data-testid": "chunk", text: shown(text) }));
  }
  // The cut is said: chunks stopping at 20,000 read as if the text ended there.
  if (res.lens.length > SPLIT_MAX_CHUNKS) {
    const of = `${fmt(SPLIT_MAX_CHUNKS)} of ${fmt(res.lens.length)}`;
    frag.append(el("p", { class: "muted", "data-testid": "chunks-more", text: `showing the first ${of} chunks` }));
  }
  panel.chunksEl.replaceChildren(frag);
  panel.chunksEl.hidden = false;
  panel.chunksEl.dataset.count = String(res.lens.length);
}

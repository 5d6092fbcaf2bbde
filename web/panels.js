// The panels: one per tokenizer, side by side, each kept in step with the text box.
//
// The main thread never tokenizes: it sends the text to the worker and renders what comes back
// (ids, per-token byte lengths, the tokens' bytes, as transferable typed arrays). At most one
// encode per panel is in flight; a keystroke during it marks the panel dirty and the newest text
// is sent when the reply arrives, so typing never queues up work. Replies older than what a
// panel already shows are dropped by request id.

import { el } from "./dom.js";
import { updateDiff } from "./diff.js";
import { decodeLenient } from "./format.js";
import { render, shown } from "./render.js";
import { writeShareLink, writeShareLinkSoon } from "./share.js";
import { $, input, metrics, panelByName, state } from "./state.js";
import { nextRequestId, rpc } from "./worker-client.js";

const panelsEl = $("#panels");
const SPLIT_MAX_CHUNKS = 20000; // the split view shows at most this many chunks

// Shows a panel for tokenizer `name` (or refreshes it). `info` replaces the tokenizer's facts
// when it was reloaded under the same name.
export function addPanel(name, { info = null } = {}) {
  let panel = panelByName(name);
  if (panel) {
    if (info) {
      // A replaced tokenizer (retrained under the same name): same ids may mean other bytes,
      // so the next render must not reuse any line.
      panel.info = info;
      if (panel.result) panel.result.complete = false;
    }
    schedule(panel);
    return panel;
  }
  const countEl = el("b", { "data-testid": "token-count", text: "…" });
  const statsEl = el("span", { class: "muted", "data-testid": "stats" });
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
    { class: "panel", "data-testid": "panel", "data-encoding": name, "aria-label": `tokens of ${name}` },
    el(
      "header",
      { class: "panel-head" },
      el("h2", { class: "panel-name", text: name }),
      el("span", { class: "stats" }, countEl, " tokens ", statsEl),
      el("span", { class: "spacer" }),
      el("button", { type: "button", class: "baseline", title: "use as the diff baseline", text: "baseline", onclick: () => setBaseline(name) }),
      el("button", { type: "button", class: "remove", "aria-label": "remove this panel", title: "remove", text: "×", onclick: () => removePanel(name) }),
    ),
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
    result: null,
    spans: [],
    starts: null,
    shownId: 0,
    inflight: false,
    dirty: false,
    renderGen: 0,
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
  refreshSelects();
  updateDiff();
  writeShareLink();
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
  panel.inflight = true;
  const text = input.value;
  const seq = inputSeq;
  const t = lastInput.t;
  const id = nextRequestId(); // the id rpc() is about to use: replies are ordered by it
  try {
    const res = await rpc("encode", { name: panel.name, text });
    if (!panel.removed && id > panel.shownId) {
      panel.shownId = id;
      const r0 = performance.now();
      render(panel, res, text);
      panel.lastRenderMs = performance.now() - r0;
      if (state.options.split) renderSplit(panel, text);
      if (seq === inputSeq && t) noteLatency(panel, t, text, res.ms);
      if (metrics.firstTokens === null) metrics.firstTokens = performance.now() - metrics.t0;
      if (!panel.info) rpc("info", { name: panel.name }).then((r) => (panel.info = r.info), () => {});
    }
  } catch (e) {
    panel.countEl.textContent = "error";
    panel.statsEl.textContent = e.message;
  } finally {
    panel.inflight = false;
    if (panel.dirty) pump(panel);
  }
}

function noteLatency(panel, t, text, pyMs) {
  // Input event -> DOM updated -> next frame painted.
  requestAnimationFrame(() =>
    setTimeout(() => {
      metrics.renders.push({
        panel: panel.name,
        ms: performance.now() - t,
        len: text.length,
        py_ms: pyMs,
        render_ms: panel.lastRenderMs,
      });
      if (metrics.renders.length > 2000) metrics.renders.splice(0, 1000);
    }, 0),
  );
}

input.addEventListener("input", (ev) => {
  inputSeq++;
  lastInput = { seq: inputSeq, t: ev.timeStamp || performance.now() };
  refreshAll();
});

// ----- split view (regex pre-tokenization chunks) -------------------------------------------

export async function renderSplit(panel, text) {
  const res = await rpc("split", { name: panel.name, text });
  if (panel.removed || input.value !== text) return;
  const frag = document.createDocumentFragment();
  let off = 0;
  for (let i = 0; i < res.lens.length && i < SPLIT_MAX_CHUNKS; i++) {
    const b = res.bytes.subarray(off, off + res.lens[i]);
    off += res.lens[i];
    frag.append(el("span", { class: "chunk", "data-testid": "chunk", text: shown(decodeLenient(b)) }));
  }
  panel.chunksEl.replaceChildren(frag);
  panel.chunksEl.hidden = false;
  panel.chunksEl.dataset.count = String(res.lens.length);
}

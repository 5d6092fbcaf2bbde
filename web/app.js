// BPE Playground, the page: tokenizer panels side by side, fed by the Pyodide worker (worker.js).
//
// The main thread never tokenizes: it sends the text to the worker and renders what comes back
// (ids, per-token byte lengths, the tokens' bytes, as transferable typed arrays). At most one
// encode per panel is in flight; a keystroke during it marks the panel dirty and the newest text
// is sent when the reply arrives, so typing never queues up work. Replies older than what a
// panel already shows are dropped by request id.
//
// Text is handled as UTF-8 bytes, never as JS string offsets: a token is a byte range, its text is
// decoded per token with a fatal TextDecoder, and a token that is not valid UTF-8 on its own
// (part of an emoji or a CJK character) is shown as its bytes, e.g. <E4 BD>, never as U+FFFD.
//
// Integration contract for the training panel (web/train.js, written separately):
//   train.js exports `mountTrainPanel(root, app)`. After boot, if manifest.json lists train.js,
//   this module imports it and calls mountTrainPanel(document.getElementById("train-panel"), appApi)
//   where appApi is:
//     addTokenizerFromServer(name) -> Promise<info>: fetches /api/tokenizers/NAME.tiktoken and
//       NAME.json, loads them into the worker under exactly that name (replacing an older one) and
//       shows (or refreshes) a panel with data-encoding=NAME.
//     addTokenizerFromFiles(tiktokenText, jsonText, filename?) -> Promise<info>: the same from file
//       contents already read; the panel is named after the tokenizer (suffixed if taken).
//     removeTokenizer(name): removes that panel.
//     listTokenizers() -> names of the panels shown, in order.
//     getText() -> the text in the input box.
//   Both add* functions reject with an Error whose message is fit to show to the user.
// The Learn view (web/learn.js) is mounted the same way: mountLearnView(#learn-panel, appApi),
//   using two more members: rpc(op, payload) -> Promise<result> (the worker protocol, see
//   worker.js: ops "learn" and "learn_adopt") and addLearnedTokenizer(request) -> Promise<info>.

const $ = (sel) => document.querySelector(sel);
const input = $("#input");
const statusEl = $("#status");
const panelsEl = $("#panels");
const tooltip = $("#tooltip");
const utf8 = new TextEncoder();
const fatal = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");

const FIRST_SLICE = 1500; // tokens rendered synchronously; the rest follow in idle slices
const SLICE = 1000;

const state = {
  manifest: null,
  panels: [], // {name, info, el, tokensEl, chunksEl, countEl, statsEl, result, shownId, inflight, dirty, ...}
  ready: false,
  options: { whitespace: true, ids: false, split: false, diff: false },
  hoverRange: null,
};
// Timings the benchmark (bench/browser.py) reads; nothing in the UI depends on them.
const metrics = { t0: performance.now(), ready: null, firstTokens: null, renders: [], bootStages: [] };
window.__bpe = { metrics, state };

// ----- worker RPC ---------------------------------------------------------------------------

const worker = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
let nextId = 1;
const pending = new Map();
const bootListeners = [];

worker.onmessage = ({ data }) => {
  if (data.type) return bootListeners.forEach((f) => f(data));
  const p = pending.get(data.id);
  if (!p) return;
  pending.delete(data.id);
  if (data.ok) p.resolve(data);
  else p.reject(new Error(data.error));
};
worker.onerror = (e) => showFatal(e.message || "the worker failed to start");

function rpc(op, payload = {}, transfer = []) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, ...payload }, transfer);
  });
}

// ----- boot ---------------------------------------------------------------------------------

const STAGES = { boot: 10, wheel: 70, encoding: 85 };

function setStatus(text, detail = "") {
  statusEl.textContent = text;
  $("#boot-detail").textContent = detail;
}

function showFatal(msg) {
  setStatus("error", msg);
  statusEl.classList.add("error");
}

const workerReady = new Promise((resolve) => bootListeners.push((m) => m.type === "ready" && resolve(m)));
bootListeners.push((m) => {
  if (m.type === "progress") {
    metrics.bootStages.push([m.stage, performance.now() - metrics.t0]);
    $("#boot-progress").value = Math.max($("#boot-progress").value, STAGES[m.stage] || 0);
    if (!state.ready) setStatus("loading", m.label || m.stage);
  } else if (m.type === "fatal") {
    showFatal(m.error);
  }
});

async function boot() {
  const res = await fetch("manifest.json", { cache: "no-cache" });
  if (!res.ok) throw new Error(`manifest.json: HTTP ${res.status}`);
  state.manifest = await res.json();
  const names = Object.keys(state.manifest.encodings);
  const addSel = $("#add-encoding");
  for (const n of names) addSel.append(new Option(n, n));

  const fromHash = readShareLink();
  if (fromHash && fromHash.text != null) input.value = fromHash.text;
  const wanted = (fromHash && fromHash.encodings.filter((n) => names.includes(n))) || [];
  const initial = wanted.length ? wanted : state.manifest.default_encodings;
  worker.postMessage({ op: "prefetch", names: initial }); // downloads overlap the boot
  for (const n of initial) addPanel(n);
  await workerReady;

  state.ready = true;
  metrics.ready = performance.now() - metrics.t0;
  $("#boot-progress").value = 100;
  $("#boot-progress").hidden = true;
  setStatus("ready", `Pyodide ${state.manifest.pyodide.version} · ready in ${(metrics.ready / 1000).toFixed(1)} s`);
  input.disabled = false;
  refreshAll();
  if (state.manifest.modules.includes("train.js")) {
    import("./train.js")
      .then((m) => m.mountTrainPanel(document.getElementById("train-panel"), appApi))
      .catch((e) => console.error("train panel:", e));
  }
  if (state.manifest.modules.includes("learn.js")) {
    import("./learn.js")
      .then((m) => m.mountLearnView(document.getElementById("learn-panel"), appApi))
      .catch((e) => console.error("learn view:", e));
  }
}

// ----- panels -------------------------------------------------------------------------------

function panelByName(name) {
  return state.panels.find((p) => p.name === name);
}

function addPanel(name, { info = null } = {}) {
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
  const el = document.createElement("section");
  el.className = "panel";
  el.dataset.testid = "panel";
  el.dataset.encoding = name;
  el.setAttribute("aria-label", `tokens of ${name}`);
  el.innerHTML = `
    <header class="panel-head">
      <h2 class="panel-name"></h2>
      <span class="stats"><b data-testid="token-count">…</b> tokens
        <span class="muted" data-testid="stats"></span></span>
      <span class="spacer"></span>
      <button type="button" class="baseline" title="use as the diff baseline">baseline</button>
      <button type="button" class="remove" aria-label="remove this panel" title="remove">×</button>
    </header>
    <div class="chunks" data-testid="chunks" hidden></div>
    <div class="tokens" data-testid="tokens"></div>`;
  el.querySelector(".panel-name").textContent = name;
  panel = {
    name,
    info,
    el,
    tokensEl: el.querySelector(".tokens"),
    chunksEl: el.querySelector(".chunks"),
    countEl: el.querySelector("[data-testid=token-count]"),
    statsEl: el.querySelector("[data-testid=stats]"),
    result: null,
    spans: [],
    starts: null,
    shownId: 0,
    inflight: false,
    dirty: false,
    renderGen: 0,
  };
  panel.tokensEl.tabIndex = 0; // Tab lands on the panel; arrow keys then walk its tokens
  el.querySelector(".remove").onclick = () => removePanel(name);
  el.querySelector(".baseline").onclick = () => setBaseline(name);
  state.panels.push(panel);
  panelsEl.append(el);
  refreshSelects();
  if (state.ready) schedule(panel);
  return panel;
}

function removePanel(name) {
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

function refreshAll() {
  state.panels.forEach(schedule);
  writeShareLinkSoon();
}

function schedule(panel) {
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
  const id = nextId; // the id rpc() is about to use: replies are ordered by it
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

// ----- rendering ----------------------------------------------------------------------------

function colorClass(id) {
  return "c" + (Math.imul(id + 1, 2654435761) >>> 28);
}

function hex(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += (i ? " " : "") + bytes[i].toString(16).toUpperCase().padStart(2, "0");
  return s;
}

function tryDecode(bytes) {
  try {
    return fatal.decode(bytes);
  } catch {
    return null;
  }
}

function visible(s) {
  if (!state.options.whitespace) return s;
  return s.replace(/ /g, "·").replace(/\t/g, "→").replace(/\r/g, "␍").replace(/\n/g, "↵\n");
}

// The token view is a list of line blocks (split after tokens that end with a newline), each
// `content-visibility: auto`, so the browser lays out and paints only the lines on screen. A new
// result re-renders only the blocks between the common prefix and the common suffix of the old
// and new ids: a keystroke in 100 KB of text touches one or two lines, not 25,000 spans.
function render(panel, res, text, { full = false } = {}) {
  const { ids, lens, bytes } = res;
  const n = ids.length;
  const starts = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) starts[i + 1] = starts[i] + lens[i];
  const old = panel.result;
  const oldBlocks = panel.blocks || [];
  const oldSpans = panel.spans || [];
  panel.result = { ids, lens, bytes, starts, text, complete: false };
  panel.starts = starts;
  const gen = ++panel.renderGen;
  panel.countEl.textContent = String(n);
  const chars = countCodePoints(text);
  panel.statsEl.textContent = n
    ? `· ${(chars / n).toFixed(2)} chars/token · ${(bytes.length / n).toFixed(2)} bytes/token`
    : "";

  // Which old blocks survive: those inside the common prefix, ending on a newline, and those
  // inside the common suffix whose preceding newline is in the suffix too.
  const incremental = !full && old && old.complete;
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
    while (head < oldBlocks.length && oldBlocks[head].end <= p && oldBlocks[head].hard) head++;
    while (tail > head && oldBlocks[tail - 1].start > on - q) tail--;
    if (tail - head === 1 && patchLine(panel, old, oldBlocks, oldSpans, head, p, on - q)) return;
    for (let k = head; k < tail; k++) oldBlocks[k].el.remove();
  } else {
    panel.tokensEl.replaceChildren(); // also drops the blocks of an unfinished sliced render
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
  const before = tailBlocks.length ? tailBlocks[0].el : null;
  const realTo = tailBlocks.length ? tailBlocks[0].start : n;

  let i = from;
  let open = null; // a line longer than a slice stays open into the next slice
  const step = (limit) => {
    if (gen !== panel.renderGen || panel.removed) return;
    const frag = document.createDocumentFragment();
    const budget = i + limit;
    while (i < realTo && i < budget) {
      let block = open;
      if (!block) {
        block = { el: document.createElement("div"), start: i, end: i, hard: false };
        block.el.className = "line";
        middle.push(block);
        frag.append(block.el);
      }
      open = block;
      while (i < realTo && i < budget) {
        i = appendToken(panel, block.el, i, n);
        if (bytes[starts[i] - 1] === 0x0a) {
          block.hard = true;
          open = null;
          break;
        }
      }
      block.end = i;
    }
    if (i >= realTo) open = null;
    panel.tokensEl.insertBefore(frag, before);
    panel.blocks = [...headBlocks, ...middle, ...tailBlocks];
    if (i < realTo) {
      setTimeout(() => step(SLICE), 0);
      return;
    }
    panel.result.complete = true;
    panel.tokensEl.removeAttribute("aria-busy");
    panel.tokensEl.dataset.rendered = String(n);
    if (state.options.diff) updateDiff();
  };
  panel.tokensEl.setAttribute("aria-busy", "true");
  panel.tokensEl.dataset.rendered = "";
  step(FIRST_SLICE);
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
  panel.tokensEl.removeAttribute("aria-busy");
  panel.tokensEl.dataset.rendered = String(n);
  if (state.options.diff) updateDiff();
  return true;
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
  const group = document.createElement("span");
  group.className = "group";
  group.dataset.char = visible(joined).replace(/\n$/, "");
  group.title = `${j - i} tokens form ${JSON.stringify(joined)}`;
  for (let k = i; k < j; k++) {
    const bk = bytes.subarray(starts[k], starts[k + 1]);
    group.append(tokenSpan(panel, k, tryDecode(bk), bk));
  }
  parent.append(group);
  return j;
}

function tokenSpan(panel, i, s, b) {
  const id = panel.result.ids[i];
  const span = document.createElement("span");
  span.className = `tok ${colorClass(id)}`;
  span.dataset.testid = "token";
  span.dataset.id = id;
  if (s === null) {
    span.classList.add("bytes");
    span.dataset.text = `<${hex(b)}>`;
  } else {
    // A final newline is the line block's break; the ↵ marks it in the visible-whitespace view.
    span.dataset.text = visible(s);
  }
  span.textContent = state.options.ids ? String(id) : displayText(span.dataset.text);
  span._i = i; // index in panel.spans (kept up to date when lines are reused)
  if (panel.spans) panel.spans[i] = span;
  return span;
}

function displayText(t) {
  return t.endsWith("\n") ? t.slice(0, -1) : t;
}

function countCodePoints(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

function rerenderAll() {
  for (const p of state.panels) if (p.result) render(p, p.result, p.result.text, { full: true });
}

// ----- split view (regex pre-tokenization chunks) -------------------------------------------

async function renderSplit(panel, text) {
  const res = await rpc("split", { name: panel.name, text });
  if (panel.removed || input.value !== text) return;
  const frag = document.createDocumentFragment();
  let off = 0;
  for (let i = 0; i < res.lens.length && i < 20000; i++) {
    const b = res.bytes.subarray(off, off + res.lens[i]);
    off += res.lens[i];
    const span = document.createElement("span");
    span.className = "chunk";
    span.dataset.testid = "chunk";
    span.textContent = visible(lenient.decode(b));
    frag.append(span);
  }
  panel.chunksEl.replaceChildren(frag);
  panel.chunksEl.hidden = false;
  panel.chunksEl.dataset.count = String(res.lens.length);
}

// ----- diff mode ----------------------------------------------------------------------------

// A token is marked when the baseline has no token with exactly its byte span: it starts or ends
// where the baseline has no boundary, or the baseline splits it further.
function updateDiff() {
  const base = state.panels[0];
  for (const p of state.panels) {
    p.el.classList.toggle("is-baseline", p === base);
    const mark = state.options.diff && p !== base && base && base.result && p.result;
    let next = null;
    if (mark) {
      next = new Map();
      for (let k = 0; k + 1 < base.starts.length; k++) next.set(base.starts[k], base.starts[k + 1]);
    }
    const n = p.result ? p.result.ids.length : 0;
    let differing = 0;
    for (let i = 0; i < n; i++) {
      const span = p.spans[i];
      if (!span) continue;
      const d = mark && next.get(p.starts[i]) !== p.starts[i + 1];
      if (d) {
        differing++;
        span.dataset.diff = "1";
      } else if (span.dataset.diff) {
        delete span.dataset.diff;
      }
    }
    if (mark) p.el.dataset.diffCount = String(differing);
    else delete p.el.dataset.diffCount;
  }
}

// ----- hover / focus: tooltip + the same bytes highlighted in every panel --------------------

function tokenInfo(span) {
  const panelEl = span.closest("[data-testid=panel]");
  if (!panelEl) return null;
  const panel = panelByName(panelEl.dataset.encoding);
  if (!panel || !panel.result) return null;
  const i = span._i;
  if (i === undefined || panel.spans[i] !== span) return null;
  return { panel, i, start: panel.starts[i], end: panel.starts[i + 1] };
}

function highlight(range) {
  for (const el of document.querySelectorAll(".tok.hl")) el.classList.remove("hl");
  if (!range) return;
  for (const p of state.panels) {
    if (!p.starts) continue;
    // first token ending after range.start
    let lo = 0;
    let hi = p.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (p.starts[mid + 1] <= range.start) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < p.starts.length - 1 && p.starts[k] < range.end; k++) {
      if (p.spans[k]) p.spans[k].classList.add("hl");
    }
  }
}

function showTooltip(span) {
  const t = tokenInfo(span);
  if (!t) return;
  const id = t.panel.result.ids[t.i];
  const b = t.panel.result.bytes.subarray(t.start, t.end);
  tooltip.replaceChildren();
  const rows = [
    ["tokenizer", t.panel.name],
    ["id", String(id)],
    ["rank", isSpecial(t.panel, id) ? "special token" : String(id)],
    ["bytes", hex(b)],
    ["text", JSON.stringify(lenient.decode(b))],
    ["position", `token ${t.i + 1} · bytes ${t.start}–${t.end}`],
  ];
  for (const [k, v] of rows) {
    const row = document.createElement("div");
    const kEl = document.createElement("span");
    kEl.className = "muted";
    kEl.textContent = k + " ";
    row.append(kEl, v);
    tooltip.append(row);
  }
  tooltip.hidden = false;
  const r = span.getBoundingClientRect();
  tooltip.style.left = `${Math.max(4, Math.min(window.innerWidth - 260, r.left + window.scrollX))}px`;
  tooltip.style.top = `${r.bottom + window.scrollY + 4}px`;
  highlight({ start: t.start, end: t.end });
}

function isSpecial(panel, id) {
  const sp = panel.info && panel.info.special_tokens;
  return sp ? Object.values(sp).includes(id) : false;
}

function hideTooltip() {
  hoverSpan = null;
  tooltip.hidden = true;
  highlight(null);
}

// mousemove, not mouseover: while a long text renders, spans keep appearing under a resting
// pointer, and each mouseover would force a layout of the whole panel to place the tooltip.
let hoverTarget = null;
let hoverSpan = null;
let hoverFrame = 0;
panelsEl.addEventListener("mousemove", (e) => {
  hoverTarget = e.target;
  if (hoverFrame) return;
  hoverFrame = requestAnimationFrame(() => {
    hoverFrame = 0;
    const span = hoverTarget && hoverTarget.closest ? hoverTarget.closest(".tok") : null;
    if (span === hoverSpan) return;
    hoverSpan = span;
    if (span) showTooltip(span);
    else hideTooltip();
  });
});
panelsEl.addEventListener("mouseleave", () => {
  hoverTarget = hoverSpan = null;
  hideTooltip();
});
panelsEl.addEventListener("focusin", (e) => {
  const span = e.target.closest(".tok");
  if (span) showTooltip(span);
});
panelsEl.addEventListener("focusout", hideTooltip);
panelsEl.addEventListener("click", (e) => {
  const span = e.target.closest(".tok");
  if (span) {
    focusToken(span);
    showMergeTree(span);
  }
});
panelsEl.addEventListener("keydown", (e) => {
  // Arrow keys move between tokens; Enter opens the merge tree.
  const span = e.target.closest(".tok");
  if (!span) return;
  const t = tokenInfo(span);
  if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    const next = t.panel.spans[t.i + (e.key === "ArrowRight" ? 1 : -1)];
    if (next) focusToken(next);
    e.preventDefault();
  } else if (e.key === "Enter") {
    showMergeTree(span);
  }
});
// Tab into a panel lands on its first token.
panelsEl.addEventListener("focusin", (e) => {
  if (e.target.classList.contains("tokens")) {
    const first = e.target.querySelector(".tok");
    if (first) focusToken(first);
  }
});

function focusToken(span) {
  if (!span.hasAttribute("tabindex")) span.tabIndex = -1; // focusable on demand, not 25,000 tab stops
  span.focus();
}

// ----- merge explorer ------------------------------------------------------------------------

async function showMergeTree(span) {
  const t = tokenInfo(span);
  if (!t) return;
  const id = t.panel.result.ids[t.i];
  const box = $("#merge-box");
  box.open = true;
  const treeEl = $("#merge-tree");
  treeEl.textContent = "…";
  try {
    const { tree } = await rpc("merges", { name: t.panel.name, tokenId: id });
    treeEl.replaceChildren(treeNode(tree));
    treeEl.dataset.encoding = t.panel.name;
    treeEl.dataset.root = String(id);
  } catch (e) {
    treeEl.textContent = e.message;
  }
}

function bytesFromHex(h) {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(i * 2, 2), 16);
  return out;
}

function tokenLabel(hexBytes) {
  const b = bytesFromHex(hexBytes);
  const s = tryDecode(b);
  return s === null ? `<${hex(b)}>` : visible(s);
}

function treeNode(node) {
  const li = document.createElement("div");
  li.className = "node";
  li.dataset.testid = "merge-node";
  li.dataset.id = node.id;
  const label = document.createElement("span");
  label.className = `tok ${colorClass(node.id)}`;
  label.textContent = tokenLabel(node.bytes);
  const meta = document.createElement("span");
  meta.className = "muted";
  meta.textContent = node.special ? ` special id ${node.id}` : ` id ${node.id} · rank ${node.rank}`;
  li.append(label, meta);
  if (node.left && node.right) {
    const kids = document.createElement("div");
    kids.className = "kids";
    kids.append(treeNode(node.left), treeNode(node.right));
    li.append(kids);
  }
  return li;
}

let mergeQueryGen = 0;
const MERGE_PAGE = 200;

function mergeRow([rank, a, b, h]) {
  const li = document.createElement("li");
  li.value = rank;
  li.dataset.testid = "merge-row";
  li.dataset.rank = rank;
  li.textContent = `${tokenLabel(h)}  ←  ${a} + ${b}`;
  return li;
}

// The merges in order (optionally only tokens containing the query), a page at a time.
async function refreshMergeList({ more = false } = {}) {
  const name = $("#merge-encoding").value;
  if (!name || !$("#merge-box").open) return;
  const gen = ++mergeQueryGen;
  const list = $("#merge-list");
  const offset = more ? list.children.length : 0;
  list.setAttribute("aria-busy", "true");
  try {
    const query = $("#merge-query").value;
    const res = await rpc("merge_list", { name, query, offset, limit: MERGE_PAGE });
    if (gen !== mergeQueryGen) return;
    const rows = res.rows.map(mergeRow);
    if (more) list.append(...rows);
    else list.replaceChildren(...rows);
    list.dataset.total = String(res.total);
    $("#merge-more").hidden = list.children.length >= res.total;
    $("#merge-count").textContent = `${list.children.length} of ${res.total} merges`;
  } catch (e) {
    list.textContent = e.message;
  } finally {
    list.removeAttribute("aria-busy");
  }
}
$("#merge-encoding").addEventListener("change", () => refreshMergeList());
$("#merge-query").addEventListener("input", () => refreshMergeList());
$("#merge-more").addEventListener("click", () => refreshMergeList({ more: true }));
$("#merge-box").addEventListener("toggle", () => refreshMergeList());

// ----- decode box ----------------------------------------------------------------------------

async function runDecode() {
  const name = $("#decode-encoding").value;
  const out = $("#decode-output");
  const ids = ($("#decode-ids").value.match(/-?\d+/g) || []).map(Number);
  try {
    const res = await rpc("decode", { name, ids });
    out.textContent = res.text;
    out.classList.remove("error");
    const fake = { name, result: null, spans: [] };
    const starts = new Int32Array(res.ids.length + 1);
    for (let i = 0; i < res.ids.length; i++) starts[i + 1] = starts[i] + res.lens[i];
    fake.result = { ids: res.ids, lens: res.lens, bytes: res.bytes, starts };
    const frag = document.createDocumentFragment();
    let i = 0;
    while (i < res.ids.length) i = appendToken(fake, frag, i, res.ids.length);
    $("#decode-tokens").replaceChildren(frag);
  } catch (e) {
    out.textContent = e.message;
    out.classList.add("error");
    $("#decode-tokens").replaceChildren();
  }
}
$("#decode-run").addEventListener("click", runDecode);
$("#decode-ids").addEventListener("keydown", (e) => e.key === "Enter" && runDecode());

// ----- toolbar --------------------------------------------------------------------------------

$("#opt-whitespace").addEventListener("change", (e) => {
  state.options.whitespace = e.target.checked;
  rerenderAll();
});
$("#opt-ids").addEventListener("change", (e) => {
  state.options.ids = e.target.checked;
  document.body.classList.toggle("ids-view", state.options.ids);
  for (const p of state.panels)
    for (const s of p.spans) if (s) s.textContent = state.options.ids ? s.dataset.id : displayText(s.dataset.text);
});
$("#opt-split").addEventListener("change", (e) => {
  state.options.split = e.target.checked;
  for (const p of state.panels) {
    if (state.options.split) renderSplit(p, input.value);
    else p.chunksEl.hidden = true;
  }
});
$("#opt-diff").addEventListener("change", (e) => {
  state.options.diff = e.target.checked;
  document.body.classList.toggle("diff-mode", state.options.diff);
  updateDiff();
});
$("#add-encoding").addEventListener("change", async (e) => {
  const name = e.target.value;
  e.target.value = "";
  if (name) {
    addPanel(name);
    writeShareLink();
  }
});

// ----- loading tokenizers: files from disk, or from the server (train.js) --------------------

function showLoadMessage(msg, isError) {
  const el = $("#load-message");
  el.textContent = msg;
  el.hidden = false;
  el.classList.toggle("error", !!isError);
}

async function loadIntoWorker(payload) {
  const { info } = await rpc("load", payload);
  await addPanel(info.name, { info });
  return info;
}

async function addTokenizerFromFiles(tiktokenText, jsonText, filename = "uploaded") {
  return loadIntoWorker({ tiktoken: tiktokenText, json: jsonText, filename });
}

async function addTokenizerFromServer(name) {
  const get = async (ext) => {
    const r = await fetch(`/api/tokenizers/${encodeURIComponent(name)}.${ext}`);
    if (!r.ok) throw new Error(`tokenizer ${name}: ${ext} file: HTTP ${r.status}`);
    return r.text();
  };
  const [tiktoken, json] = await Promise.all([get("tiktoken"), get("json")]);
  const info = await loadIntoWorker({ tiktoken, json, filename: `${name}.json`, forceName: name });
  const panel = panelByName(name);
  if (panel) schedule(panel);
  return info;
}

async function loadFiles(fileList) {
  const files = [...fileList];
  const stems = new Map();
  for (const f of files) {
    const m = f.name.match(/^(.*?)(\.tiktoken|\.json)$/i);
    if (!m) {
      showLoadMessage(`${f.name}: expected a .tiktoken or .json file`, true);
      return;
    }
    const entry = stems.get(m[1]) || {};
    entry[m[2].toLowerCase() === ".json" ? "json" : "tiktoken"] = f;
    stems.set(m[1], entry);
  }
  const loaded = [];
  for (const [stem, entry] of stems) {
    try {
      const payload = { filename: entry.json ? entry.json.name : entry.tiktoken.name };
      if (entry.tiktoken) payload.tiktoken = await entry.tiktoken.text();
      if (entry.json) {
        const text = await entry.json.text();
        if (/"model"\s*:/.test(text.slice(0, 4096)) && !entry.tiktoken) payload.hf = text;
        else payload.json = text;
      }
      const info = await loadIntoWorker(payload);
      loaded.push(`${info.name} (${info.n_vocab} ids)`);
    } catch (e) {
      showLoadMessage(`${stem}: ${e.message}`, true);
      return;
    }
  }
  if (loaded.length) showLoadMessage(`loaded ${loaded.join(", ")}`, false);
}

$("#load-files").addEventListener("change", (e) => {
  loadFiles(e.target.files);
  e.target.value = "";
});
document.addEventListener("dragover", (e) => {
  if (e.dataTransfer && [...e.dataTransfer.types].includes("Files")) {
    e.preventDefault();
    document.body.classList.add("dropping");
  }
});
document.addEventListener("dragleave", () => document.body.classList.remove("dropping"));
document.addEventListener("drop", (e) => {
  if (!e.dataTransfer || !e.dataTransfer.files.length) return;
  e.preventDefault();
  document.body.classList.remove("dropping");
  loadFiles(e.dataTransfer.files);
});

// ----- share link: text + reference panels in the URL fragment ------------------------------

function readShareLink() {
  if (!location.hash || location.hash.length < 2) return null;
  const params = new URLSearchParams(location.hash.slice(1));
  return {
    text: params.get("text"),
    encodings: (params.get("enc") || "").split(",").filter(Boolean),
  };
}

function shareLink() {
  const params = new URLSearchParams();
  params.set("enc", state.panels.map((p) => p.name).filter((n) => n in state.manifest.encodings).join(","));
  params.set("text", input.value);
  return `${location.origin}${location.pathname}#${params.toString()}`;
}

function writeShareLink() {
  if (!state.ready) return;
  history.replaceState(null, "", shareLink());
}

// Kept current while typing, except for long text: encoding 100 KB into the URL on every pause
// would be a long main-thread task; the share button still writes it.
const LIVE_LINK_MAX = 20000;
let shareTimer = 0;
function writeShareLinkSoon() {
  clearTimeout(shareTimer);
  if (input.value.length <= LIVE_LINK_MAX) shareTimer = setTimeout(writeShareLink, 300);
}

$("#share").addEventListener("click", async () => {
  writeShareLink();
  const url = shareLink();
  try {
    await navigator.clipboard.writeText(url);
    showLoadMessage("share link copied to the clipboard", false);
  } catch {
    showLoadMessage(url, false);
  }
});

// ----- the public API of this page (see the contract at the top) ------------------------------

// Learn view (web/learn.js): a step-through result becomes a tokenizer in the comparison.
async function addLearnedTokenizer(request) {
  const { info } = await rpc("learn_adopt", { request });
  await addPanel(info.name, { info });
  return info;
}

const appApi = {
  addTokenizerFromServer,
  addTokenizerFromFiles,
  addLearnedTokenizer,
  rpc,
  removeTokenizer: removePanel,
  listTokenizers: () => state.panels.map((p) => p.name),
  getText: () => input.value,
};
window.__bpe.app = appApi;
window.__bpe.rpc = rpc;

boot().catch((e) => showFatal(e.message));

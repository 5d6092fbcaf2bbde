// The Train panel: send a corpus to the local server (server.py), follow the job live, and put
// the finished tokenizer next to the others.
//
// Why it looks like this:
// - Training needs the server (native CPython, all cores, the disk). The page itself works as
//   static files, so first we ask /api/health; without an answer the form stays disabled and
//   says how to start the server.
// - The corpus goes up as multipart files. Pasted text is sent as a file too (a Blob), because a
//   plain form string would have its line breaks rewritten to CRLF by the browser, and the
//   tokenizer would then learn merges for "\r\n" the user never typed.
// - The upload uses XMLHttpRequest only for its upload progress (fetch has none); progress of
//   the job itself arrives as Server-Sent Events: one JSON snapshot of the job per change.
// - All text from the user or the server goes into the DOM with textContent, never as HTML.
//
// - "start from" extends a tokenizer instead (tokenizer.extend on the server): a reference
//   encoding, one trained on this server, or one the user loaded from disk, plus a number of new
//   merges. The base's ids, split pattern and special tokens are kept, so the form hides those
//   fields and shows the base's pattern; the result is placed in the comparison right after its
//   base's panel.
// - A base loaded from disk is uploaded as the very File objects the user gave (io.js keeps
//   them), in the field base_file: the server reads the same bytes with the same library reader
//   the worker used, so it extends exactly the tokenizer of the panel, by construction. Writing
//   the worker's tokenizer back out would take a worker round trip and our writer, a second
//   path whose exactness for every file the reader accepts would itself need proving.
// - A job's warnings (a custom regex that drops text, an extension that stopped early) are shown
//   under the progress bar as they arrive and stay after the job ends.
//
// Export: mountTrainPanel(root, app), app being the page's API (see web/app.js): we call
// app.addTokenizerFromServer(name) when a job is done (app.addEncoding and app.placeAfter to put
// an extension next to its base), and offer the split patterns and tie-break rules of app.names
// (manifest.json), the names the library defines. The list of stored tokenizers (and broken
// entries) is train-saved.js.

import { el } from "./dom.js";
import { nameLabel } from "./format.js";
import { loadedFromDisk } from "./io.js";
import { errorMessage, extensionLine, savedList } from "./train-saved.js";

const HEALTH_TIMEOUT_MS = 4000;
// Where each phase of a job spans the bar, in percent: counting is usually the short one, and an
// extension also encodes the corpus's distinct chunks with its base before merging.
const PHASES = {
  train: { count: [0, 10], merge: [10, 100] },
  extend: { count: [0, 10], encode: [10, 25], merge: [25, 100] },
};
const PHASE_WORDS = { count: "counting chunks", encode: "encoding chunks with the base", merge: "merging" };
const FROM_BYTES = ""; // the "start from" value of training from bytes
const FILE_PREFIX = "file:"; // "start from" values of tokenizers loaded from disk (never a server name)
// A paste longer than this (UTF-16 units) joins the corpus as a file instead of the text box:
// Chromium lays a textarea of megabytes out again at every change of the page (20 MB in it made
// each keystroke in the input box a 415-825 ms task). The input box's LIVE_MAX (textbox.js).
const PASTE_BOX_MAX = 1 << 17;
const PASTED_NAME = "pasted.txt"; // the name the text box's text is uploaded under, too


function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB"];
  let i = -1;
  do {
    n /= 1024;
    i++;
  } while (n >= 1024 && i < units.length - 1);
  return `${n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

function formatSeconds(s) {
  if (s == null || !isFinite(s)) return "";
  if (s < 1) return "<1 s";
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

function ensureStylesheet() {
  if (document.querySelector('link[data-train-css]')) return;
  const href = new URL("train.css", import.meta.url).href;
  document.head.append(el("link", { rel: "stylesheet", href, "data-train-css": "1" }));
}

export function mountTrainPanel(root, app) {
  ensureStylesheet();
  root.classList.add("train-panel");
  root.setAttribute("aria-label", "Train a tokenizer");
  root.replaceChildren();

  // ----- the form -------------------------------------------------------------------------
  const fileInput = el("input", { type: "file", multiple: true, "data-testid": "train-file", class: "train-file-input" });
  const fileList = el("ul", { class: "train-file-list", "data-testid": "train-file-list" });
  const drop = el(
    "div",
    // Not a button itself: the keyboard reaches "choose files…" (the file input) inside it.
    { class: "train-drop", "data-testid": "train-drop" },
    el("span", { text: "Drop corpus files here, or " }),
    el("label", { class: "train-choose" }, el("span", { text: "choose files…" }), fileInput),
    fileList,
  );
  const text = el("textarea", {
    class: "train-text",
    rows: 4,
    placeholder: "…or paste training text here",
    spellcheck: false,
    "data-testid": "train-text",
    "aria-label": "training text",
  });
  const base = el("select", { "data-testid": "train-base", class: "train-base" }, new Option("nothing (train from bytes)", FROM_BYTES));
  const add = el("input", { type: "number", value: "100", min: "1", step: "1", "data-testid": "train-add", class: "train-vocab" });
  const basePattern = el("span", { class: "train-base-pattern", "data-testid": "train-base-pattern" });
  const vocab = el("input", { type: "number", value: "1000", min: String(app.names.min_vocab), step: "1", required: true, "data-testid": "train-vocab", class: "train-vocab" });
  const pattern = el("select", { "data-testid": "train-pattern" });
  const regex = el("input", {
    type: "text",
    class: "train-regex",
    placeholder: "custom split regex, e.g.  ?\\p{L}+| ?\\p{N}+|\\s+|.",
    spellcheck: false,
    "data-testid": "train-regex",
    "aria-label": "custom split regex",
    hidden: true,
  });
  const tieBreak = el("select", { "data-testid": "train-tie-break" });
  for (const t of app.names.tie_breaks) tieBreak.append(new Option(nameLabel("tie_break", t), t));
  tieBreak.value = app.names.default_tie_break;
  const special = el("input", {
    type: "text",
    placeholder: "<|endoftext|>, <|pad|>",
    spellcheck: false,
    "data-testid": "train-special",
    class: "train-special",
  });
  const name = el("input", { type: "text", placeholder: "automatic", spellcheck: false, "data-testid": "train-name", class: "train-name", maxLength: 64 });
  const start = el("button", { type: "submit", class: "train-start", "data-testid": "train-start", text: "Train" });
  const cancel = el("button", { type: "button", class: "train-cancel", "data-testid": "train-cancel", text: "Cancel", disabled: true });
  const progress = el("progress", { max: 100, value: 0, class: "train-progress", "data-testid": "train-progress", "aria-label": "training progress" });
  const status = el("span", { class: "train-status", "data-testid": "train-status", role: "status", "aria-live": "polite" });
  const error = el("div", { class: "train-error", "data-testid": "train-error", role: "alert", hidden: true });
  const warnings = el("ul", { class: "train-warnings", "data-testid": "train-warnings", "aria-label": "warnings of the job", hidden: true });
  const saved = savedList(app, {
    onError: showError,
    onListing: (l) => {
      listing = l;
      fillBases();
    },
  });

  const field = (label, control, extra) => el("label", { class: "train-field" }, el("span", { class: "train-label", text: label }), control, extra);
  const vocabField = field("vocab size", vocab);
  const addField = field("new merges", add);
  const patternField = field("pattern", pattern);
  const specialField = field("special tokens", special);
  const basePatternField = el("div", { class: "train-field" }, el("span", { class: "train-label", text: "pattern" }), basePattern);
  const form = el(
    "form",
    { class: "train-form", noValidate: true },
    drop,
    text,
    el(
      "div",
      { class: "train-options" },
      field("start from", base),
      vocabField,
      addField,
      patternField,
      basePatternField,
      field("tie-break", tieBreak),
      specialField,
      field("name", name),
    ),
    regex,
    el("div", { class: "train-actions" }, start, cancel, progress, status),
    warnings,
  );
  root.append(el("h2", { class: "train-title", text: "Train a tokenizer" }), error, form, saved.element);

  // ----- state ----------------------------------------------------------------------------
  let files = [];
  let limits = null;
  let job = null; // {id, name, events, xhr, done, base: {kind, panel} of an extension}
  let serverOk = false;
  let bases = new Map(); // "start from" value -> {kind: "reference"|"trained"|"file", panel, pattern, files?}
  let listing = null; // the last GET /api/tokenizers

  function showError(message) {
    error.textContent = message;
    error.hidden = !message;
  }

  function setStatus(message) {
    status.textContent = message;
  }

  function setRunning(running) {
    start.disabled = running || !serverOk;
    cancel.disabled = !running;
    for (const control of [fileInput, text, base, add, vocab, pattern, regex, tieBreak, special, name]) control.disabled = running || !serverOk;
    root.classList.toggle("train-running", running);
  }

  function renderFiles() {
    fileList.replaceChildren(
      ...files.map((f, i) => {
        const remove = el("button", { type: "button", class: "train-remove", text: "×", "aria-label": `remove ${f.name}` });
        remove.addEventListener("click", (e) => {
          e.stopPropagation();
          files.splice(i, 1);
          renderFiles();
        });
        return el("li", { "data-testid": "train-file-item" }, el("span", { text: `${f.name} (${formatBytes(f.size)})` }), remove);
      }),
    );
  }

  function addFiles(list) {
    for (const f of list) {
      if (!files.some((g) => g.name === f.name && g.size === f.size && g.lastModified === f.lastModified)) files.push(f);
    }
    renderFiles();
  }

  fileInput.addEventListener("change", () => {
    addFiles(fileInput.files);
    fileInput.value = "";
  });
  // Its line breaks normalized as the box normalizes a paste (a textarea's value holds no CR), so
  // the same clipboard trains on the same bytes at any size.
  text.addEventListener("paste", (e) => {
    const pasted = e.clipboardData && e.clipboardData.getData("text/plain");
    if (!pasted || pasted.length <= PASTE_BOX_MAX) return;
    e.preventDefault();
    addFiles([new File([pasted.replace(/\r\n?/g, "\n")], PASTED_NAME, { type: "text/plain" })]);
  });
  // The page loads .tiktoken/.json files dropped anywhere; drops on this zone are corpora.
  drop.addEventListener("dragover", (e) => {
    if (!e.dataTransfer || ![...e.dataTransfer.types].includes("Files")) return;
    e.preventDefault();
    e.stopPropagation();
    drop.classList.add("train-drop-active");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("train-drop-active"));
  drop.addEventListener("drop", (e) => {
    if (!e.dataTransfer || !e.dataTransfer.files.length) return;
    e.preventDefault();
    e.stopPropagation();
    drop.classList.remove("train-drop-active");
    if (!fileInput.disabled) addFiles(e.dataTransfer.files);
  });
  pattern.addEventListener("change", () => {
    regex.hidden = pattern.value !== "custom";
    if (!regex.hidden) regex.focus();
  });

  // ----- start from: training from bytes, or extending a tokenizer ---------------------------
  function showMode() {
    const from = bases.get(base.value);
    for (const f of [vocabField, patternField, specialField]) f.hidden = !!from;
    regex.hidden = !!from || pattern.value !== "custom";
    addField.hidden = basePatternField.hidden = !from;
    basePattern.textContent = from ? `${from.pattern || "?"} (the base's)` : "";
    start.textContent = from ? "Extend" : "Train";
  }
  base.addEventListener("change", showMode);

  // The listing's reference encodings and trained tokenizers, and the panels of tokenizers
  // loaded from disk, become the "start from" choices.
  function fillBases() {
    if (!listing) return;
    const keep = base.value;
    bases = new Map();
    const patternOf = (t) => (t.pattern === t.pattern_regex && t.pattern_regex ? "custom" : t.pattern);
    const group = (label, entries, kind) => {
      const g = el("optgroup", { label });
      for (const t of entries) {
        bases.set(t.name, { kind, panel: t.name, pattern: patternOf(t) });
        g.append(new Option(t.name, t.name));
      }
      return g;
    };
    const loaded = el("optgroup", { label: "loaded from files" });
    for (const { name: panel, files, info } of loadedFromDisk()) {
      bases.set(FILE_PREFIX + panel, { kind: "file", panel, files, pattern: patternOf(info) });
      loaded.append(new Option(`${panel} (loaded file: ${files.map((f) => f.name).join(" + ")})`, FILE_PREFIX + panel));
    }
    base.replaceChildren(
      new Option("nothing (train from bytes)", FROM_BYTES),
      group("reference encodings", listing.reference, "reference"),
      group("trained on this server", listing.trained, "trained"),
      ...(loaded.children.length ? [loaded] : []),
    );
    base.value = bases.has(keep) ? keep : FROM_BYTES;
    showMode();
  }
  // Panels come and go (a file loaded, a panel closed): the loaded-file choices follow them.
  const panelsRoot = document.getElementById("panels");
  if (panelsRoot) new MutationObserver(fillBases).observe(panelsRoot, { childList: true });

  function showWarnings(list) {
    warnings.replaceChildren(...(list || []).map((w) => el("li", { "data-testid": "train-warning", text: `warning: ${w}` })));
    warnings.hidden = !warnings.children.length;
  }

  // ----- progress -------------------------------------------------------------------------
  function showProgress(snap) {
    showWarnings(snap.warnings);
    const p = snap.progress || {};
    const span = PHASES[snap.params && snap.params.base ? "extend" : "train"][p.phase];
    let value = Number(progress.value);
    let line = "";
    if (snap.state === "queued") {
      line = `queued (position ${snap.queue_position ?? "?"})`;
    } else if (span) {
      if (p.percent != null) value = span[0] + ((span[1] - span[0]) * p.percent) / 100;
      const done = (p.done ?? 0).toLocaleString();
      if (p.phase === "count") line = `${PHASE_WORDS.count}: ${p.percent != null ? p.percent.toFixed(0) + "%" : formatBytes(p.done || 0)}`;
      else line = `${PHASE_WORDS[p.phase]}: ${done} / ${(p.total ?? 0).toLocaleString()}${p.phase === "merge" ? " merges" : ""}`;
      if (p.rate) line += p.phase === "count" ? ` · ${formatBytes(p.rate)}/s` : ` · ${Math.round(p.rate).toLocaleString()}/s`;
    } else if (snap.state === "running") {
      line = "starting the training process…";
    }
    if (p.eta != null && snap.state === "running" && p.eta > 0) line += ` · ETA ${formatSeconds(p.eta)}`;
    if (line) setStatus(line);
    progress.value = Math.max(Number(progress.value), Math.min(100, value));
  }

  function finish() {
    if (job && job.events) job.events.close();
    job = null;
    setRunning(false);
    if (serverOk) saved.refresh();
  }

  // An extension goes right after its base's panel (shown first if it is not; a loaded file's
  // panel closed meanwhile cannot be, and the extension then simply joins the comparison).
  async function showNextToBase(name, from) {
    if (!app.listTokenizers().includes(from.panel)) {
      if (from.kind === "trained") await app.addTokenizerFromServer(from.panel);
      else if (from.kind === "reference") app.addEncoding(from.panel);
    }
    await app.addTokenizerFromServer(name);
    if (app.listTokenizers().includes(from.panel)) app.placeAfter(name, from.panel);
  }

  async function onFinal(snap) {
    const current = job;
    if (!current || current.done) return;
    current.done = true;
    if (current.events) current.events.close();
    showWarnings(snap.warnings);
    if (snap.state === "done") {
      progress.value = 100;
      const r = snap.result || {};
      const took = snap.elapsed != null ? ` in ${formatSeconds(snap.elapsed)}` : "";
      const what = r.extension ? `extended ${snap.tokenizer}: ${extensionLine(r.extension)}` : `trained ${snap.tokenizer}: ${r.merges ?? "?"} merges`;
      setStatus(`${what}${took}; adding it to the comparison…`);
      try {
        if (r.extension && current.base) await showNextToBase(snap.tokenizer, current.base);
        else await app.addTokenizerFromServer(snap.tokenizer);
        setStatus(`${what}${took}; added to the comparison`);
      } catch (e) {
        showError(`trained ${snap.tokenizer}, but the page could not load it: ${e.message}`);
      }
    } else if (snap.state === "cancelled") {
      setStatus("cancelled; nothing was saved");
    } else {
      showError(`${snap.params && snap.params.base ? "extension" : "training"} failed: ${snap.error || "unknown error"}`);
      setStatus("failed");
    }
    finish();
  }

  function follow(id) {
    const events = new EventSource(`/api/jobs/${encodeURIComponent(id)}/events`);
    job.events = events;
    const handle = (e) => {
      let snap;
      try {
        snap = JSON.parse(e.data);
      } catch {
        return;
      }
      if (!job || job.id !== id) return;
      if (["done", "failed", "cancelled"].includes(snap.state)) onFinal(snap);
      else showProgress(snap);
    };
    for (const type of ["progress", "done", "failed", "cancelled", "message"]) events.addEventListener(type, handle);
    events.onerror = async () => {
      if (!job || job.id !== id || job.done) return;
      if (events.readyState !== EventSource.CLOSED) return; // the browser reconnects by itself
      try {
        const res = await fetch(`/api/jobs/${encodeURIComponent(id)}`);
        if (res.ok) {
          const snap = await res.json();
          if (["done", "failed", "cancelled"].includes(snap.state)) return onFinal(snap);
        }
      } catch {
        /* the server is gone */
      }
      showError("lost the connection to the training server (was it stopped?)");
      finish();
    };
  }

  // ----- submit / cancel ------------------------------------------------------------------
  function validate() {
    const hi = limits ? limits.max_vocab : Infinity;
    if (base.value !== FROM_BYTES) {
      const n = Number(add.value);
      if (!Number.isInteger(n) || n < 1 || n > hi) return `new merges must be a whole number from 1 to ${hi}`;
    } else {
      const v = Number(vocab.value);
      const lo = limits ? limits.min_vocab : app.names.min_vocab;
      if (!Number.isInteger(v) || v < lo || v > hi) return `vocab size must be a whole number from ${lo} to ${hi}`;
      if (pattern.value === "custom" && !regex.value) return "enter a custom split regex, or pick a named pattern";
    }
    if (!files.length && !text.value) return "add a corpus: drop or choose files, or paste text";
    const baseFiles = bases.get(base.value)?.files || [];
    const total = [...files, ...baseFiles].reduce((n, f) => n + f.size, 0) + new Blob([text.value]).size;
    if (limits && total > limits.max_upload_bytes) {
      return `the corpus is ${formatBytes(total)}; this server accepts up to ${formatBytes(limits.max_upload_bytes)} per job`;
    }
    return null;
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (job) return;
    showError("");
    const problem = validate();
    if (problem) {
      showError(problem);
      return;
    }
    const body = new FormData();
    for (const f of files) body.append("corpus", f, f.name);
    if (text.value) body.append("corpus", new Blob([text.value], { type: "text/plain" }), PASTED_NAME);
    const from = bases.get(base.value);
    if (from) {
      if (from.kind === "file") for (const f of from.files) body.append("base_file", f, f.name);
      else body.append("base", base.value);
      body.append("add", String(Number(add.value)));
    } else {
      body.append("vocab_size", String(Number(vocab.value)));
      body.append("pattern", pattern.value);
      if (pattern.value === "custom") body.append("regex", regex.value);
      if (special.value.trim()) body.append("special_tokens", special.value);
    }
    body.append("tie_break", tieBreak.value);
    if (name.value.trim()) body.append("name", name.value.trim());

    const xhr = new XMLHttpRequest();
    job = { id: null, xhr, events: null, done: false, base: from && { kind: from.kind, panel: from.panel } };
    setRunning(true);
    progress.value = 0;
    showWarnings([]);
    setStatus("uploading…");
    xhr.upload.addEventListener("progress", (ev) => {
      if (ev.lengthComputable && ev.total > 0) setStatus(`uploading: ${Math.floor((100 * ev.loaded) / ev.total)}% of ${formatBytes(ev.total)}`);
    });
    xhr.addEventListener("load", () => {
      let reply = null;
      try {
        reply = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON */
      }
      if (xhr.status !== 202 || !reply || !reply.job) {
        showError((reply && reply.error) || `the server answered HTTP ${xhr.status}`);
        setStatus("");
        finish();
        return;
      }
      job.id = reply.job;
      job.name = reply.name;
      setStatus(reply.state === "queued" ? "queued" : "starting the training process…");
      follow(reply.job);
    });
    xhr.addEventListener("error", () => {
      showError("could not reach the training server (was it stopped?)");
      setStatus("");
      finish();
    });
    xhr.addEventListener("abort", () => {
      setStatus("upload cancelled");
      finish();
    });
    xhr.open("POST", "/api/train");
    xhr.setRequestHeader("Accept", "application/json");
    xhr.send(body);
  });

  cancel.addEventListener("click", async () => {
    if (!job) return;
    if (!job.id) {
      job.xhr.abort();
      return;
    }
    cancel.disabled = true;
    setStatus("cancelling…");
    try {
      const res = await fetch(`/api/jobs/${encodeURIComponent(job.id)}`, { method: "DELETE" });
      if (!res.ok && res.status !== 409) showError(`cancel failed: ${await errorMessage(res)}`);
      // The final state (cancelled, or done if it won the race) arrives on the event stream.
    } catch {
      showError("could not reach the training server to cancel");
      finish();
    }
  });

  // ----- is the server there? -------------------------------------------------------------
  showMode();
  setRunning(false);
  start.disabled = true;
  setStatus("looking for the training server…");
  (async () => {
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), HEALTH_TIMEOUT_MS);
    let health = null;
    try {
      // Served as plain files there is no /api, and requesting it would log a 404 console
      // error; the server marks every response, so look at a file that exists either way.
      const probe = await fetch(new URL("manifest.json", import.meta.url), { method: "HEAD", cache: "no-store", signal: ctrl.signal });
      if (probe.headers.get("X-Playground-Server")) {
        const res = await fetch("/api/health", { signal: ctrl.signal, headers: { Accept: "application/json" } });
        if (res.ok && (res.headers.get("Content-Type") || "").includes("json")) health = await res.json();
      }
    } catch {
      /* no server: static files */
    } finally {
      clearTimeout(timer);
    }
    if (!health || health.status !== "ok") {
      serverOk = false;
      root.classList.add("train-offline");
      showError("Training needs the local server: run `make run` (or `python server.py`) and open the address it prints.");
      setStatus("");
      setRunning(false);
      return;
    }
    if (health.trainer === false) {
      serverOk = false;
      showError("The server is running but its trainer (tokenizer/train.py) is missing.");
      setStatus("");
      setRunning(false);
      return;
    }
    serverOk = true;
    limits = health.limits;
    vocab.min = String(limits.min_vocab);
    vocab.max = String(limits.max_vocab);
    for (const p of [...app.names.patterns, "custom"]) pattern.append(new Option(nameLabel("pattern", p), p));
    pattern.value = app.names.default_pattern;
    add.max = String(limits.max_vocab);
    setStatus("");
    setRunning(false);
    saved.refresh();
  })();
}

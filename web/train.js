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
// Export: mountTrainPanel(root, app), app being the page's API (see web/app.js): we call
// app.addTokenizerFromServer(name) when a job is done, and offer the split patterns and tie-break
// rules of app.names (manifest.json), the names the library defines.

import { el } from "./dom.js";
import { nameLabel } from "./format.js";

const HEALTH_TIMEOUT_MS = 4000;
// The bar spans both phases: counting is usually the short one.
const COUNT_SHARE = 10;
const DEFAULT_PATTERN = "gpt4";


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

async function errorMessage(res) {
  try {
    const body = await res.json();
    if (body && body.error) return body.error;
  } catch {
    /* not JSON */
  }
  return `HTTP ${res.status} ${res.statusText}`.trim();
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
  const saved = el("ul", { class: "train-saved-list", "data-testid": "train-saved" });

  const field = (label, control, extra) => el("label", { class: "train-field" }, el("span", { class: "train-label", text: label }), control, extra);
  const form = el(
    "form",
    { class: "train-form", noValidate: true },
    drop,
    text,
    el(
      "div",
      { class: "train-options" },
      field("vocab size", vocab),
      field("pattern", pattern),
      field("tie-break", tieBreak),
      field("special tokens", special),
      field("name", name),
    ),
    regex,
    el("div", { class: "train-actions" }, start, cancel, progress, status),
  );
  root.append(
    el("h2", { class: "train-title", text: "Train a tokenizer" }),
    error,
    form,
    el("details", { class: "train-saved" }, el("summary", { text: "Trained on this server" }), saved),
  );

  // ----- state ----------------------------------------------------------------------------
  let files = [];
  let limits = null;
  let job = null; // {id, name, events, xhr, done}
  let serverOk = false;

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
    for (const control of [fileInput, text, vocab, pattern, regex, tieBreak, special, name]) control.disabled = running || !serverOk;
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

  // ----- progress -------------------------------------------------------------------------
  function showProgress(snap) {
    const p = snap.progress || {};
    let value = Number(progress.value);
    let line = "";
    if (snap.state === "queued") {
      line = `queued (position ${snap.queue_position ?? "?"})`;
    } else if (p.phase === "count") {
      value = p.percent != null ? (p.percent * COUNT_SHARE) / 100 : value;
      line = `counting chunks: ${p.percent != null ? p.percent.toFixed(0) + "%" : formatBytes(p.done || 0)}`;
      if (p.rate) line += ` · ${formatBytes(p.rate)}/s`;
    } else if (p.phase === "merge") {
      value = COUNT_SHARE + ((p.percent ?? 0) * (100 - COUNT_SHARE)) / 100;
      line = `merging: ${(p.done ?? 0).toLocaleString()} / ${(p.total ?? 0).toLocaleString()} merges`;
      if (p.rate) line += ` · ${Math.round(p.rate).toLocaleString()}/s`;
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
    refreshSaved();
  }

  async function onFinal(snap) {
    const current = job;
    if (!current || current.done) return;
    current.done = true;
    if (current.events) current.events.close();
    if (snap.state === "done") {
      progress.value = 100;
      const r = snap.result || {};
      const took = snap.elapsed != null ? ` in ${formatSeconds(snap.elapsed)}` : "";
      setStatus(`trained ${snap.tokenizer}: ${r.merges ?? "?"} merges${took}; adding it to the comparison…`);
      try {
        await app.addTokenizerFromServer(snap.tokenizer);
        setStatus(`trained ${snap.tokenizer}: ${r.merges ?? "?"} merges${took}; added to the comparison`);
      } catch (e) {
        showError(`trained ${snap.tokenizer}, but the page could not load it: ${e.message}`);
      }
    } else if (snap.state === "cancelled") {
      setStatus("cancelled; nothing was saved");
    } else {
      showError(`training failed: ${snap.error || "unknown error"}`);
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
    const v = Number(vocab.value);
    const lo = limits ? limits.min_vocab : app.names.min_vocab;
    const hi = limits ? limits.max_vocab : Infinity;
    if (!Number.isInteger(v) || v < lo || v > hi) return `vocab size must be a whole number from ${lo} to ${hi}`;
    if (!files.length && !text.value) return "add a corpus: drop or choose files, or paste text";
    if (pattern.value === "custom" && !regex.value) return "enter a custom split regex, or pick a named pattern";
    const total = files.reduce((n, f) => n + f.size, 0) + new Blob([text.value]).size;
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
    if (text.value) body.append("corpus", new Blob([text.value], { type: "text/plain" }), "pasted.txt");
    body.append("vocab_size", String(Number(vocab.value)));
    body.append("pattern", pattern.value);
    if (pattern.value === "custom") body.append("regex", regex.value);
    body.append("tie_break", tieBreak.value);
    if (special.value.trim()) body.append("special_tokens", special.value);
    if (name.value.trim()) body.append("name", name.value.trim());

    const xhr = new XMLHttpRequest();
    job = { id: null, xhr, events: null, done: false };
    setRunning(true);
    progress.value = 0;
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

  // ----- tokenizers already trained on this server ----------------------------------------
  async function refreshSaved() {
    if (!serverOk) return;
    let listing;
    try {
      const res = await fetch("/api/tokenizers");
      if (!res.ok) return;
      listing = await res.json();
    } catch {
      return;
    }
    const shown = new Set(app.listTokenizers ? app.listTokenizers() : []);
    saved.replaceChildren(
      ...listing.trained.map((t) => {
        const add = el("button", { type: "button", text: shown.has(t.name) ? "shown" : "compare", disabled: shown.has(t.name) });
        add.addEventListener("click", async () => {
          add.disabled = true;
          try {
            await app.addTokenizerFromServer(t.name);
            add.textContent = "shown";
          } catch (e) {
            add.disabled = false;
            showError(`${t.name}: ${e.message}`);
          }
        });
        const del = el("button", { type: "button", text: "delete", "aria-label": `delete ${t.name}` });
        del.addEventListener("click", async () => {
          if (!confirm(`Delete the trained tokenizer ${t.name} from the server?`)) return;
          const res = await fetch(`/api/tokenizers/${encodeURIComponent(t.name)}`, { method: "DELETE" });
          if (!res.ok) showError(`delete ${t.name}: ${await errorMessage(res)}`);
          else if (app.removeTokenizer && shown.has(t.name)) app.removeTokenizer(t.name);
          refreshSaved();
        });
        const training = (t.metadata && t.metadata.training) || {};
        const facts = [`${t.vocab_size} ids`, t.pattern === t.pattern_regex ? "custom pattern" : t.pattern, training.tie_break].filter(Boolean);
        return el(
          "li",
          { "data-testid": "train-saved-item", "data-name": t.name },
          el("span", { class: "train-saved-name", text: t.name }),
          el("span", { class: "train-muted", text: facts.join(" · ") }),
          el("a", { href: t.files.tiktoken, download: `${t.name}.tiktoken`, text: ".tiktoken" }),
          el("a", { href: t.files.json, download: `${t.name}.json`, text: ".json" }),
          add,
          del,
        );
      }),
    );
    if (!listing.trained.length) saved.append(el("li", { class: "train-muted", text: "none yet" }));
  }

  // ----- is the server there? -------------------------------------------------------------
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
    pattern.value = DEFAULT_PATTERN;
    setStatus("");
    setRunning(false);
    refreshSaved();
  })();
}

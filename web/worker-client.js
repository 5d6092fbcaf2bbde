// The page's side of the worker protocol (web/worker.js runs Pyodide in a Web Worker), and its
// watchdog.
//
// A request is {id, op, ...payload}; the reply carries the same id and either ok + the result or
// an error message, so rpc() is a promise per request. Messages with a `type` instead of an id
// are the boot's progress reports ("progress", "ready", "fatal"). Replies can be ordered by id:
// nextRequestId() tells a caller the id its next rpc() will get, which is how a panel drops a
// reply older than the one it shows.
//
// Why one request at a time, queued here: Python in the worker is single-threaded and answers in
// order anyway, so nothing is lost, and a request's deadline can then run from the moment the
// worker starts on it, not from when it was queued behind the others.
//
// The watchdog: a request the worker has not answered by its deadline (a split regex that
// backtracks catastrophically never returns: `(?:a+)+b` on 34 `a`s would take hours) fails with
// a WorkerTimeout; the worker is terminated, a fresh one boots (from the memory snapshot, about a
// second), the hooks given to onRestart() load the user's tokenizers into it again, and the queue
// goes on. The same happens when Pyodide reports a fatal error. While a request runs longer than
// BUSY_AFTER_MS, the status says what the worker is busy with, never "ready".

import { $, metrics, state } from "./state.js";

// How long the worker may take, from the moment it starts on a request. Encoding typed text takes
// milliseconds and 100 KB well under a second here, so 2 s plus a generous allowance per
// character (a slow CI machine, a slow but honest pattern) only ever stops a runaway regex.
const DEADLINE_MS = {
  encode: 2000,
  encode_edit: 2000, // a patch: usually a few ms, but the first text (or a reset) is encoded whole
  encode_change: 2000, // the same given only the edit; `size` (the text's length) adds as text does
  forget_edits: 5000,
  split: 2000,
  decode: 5000, // 1,000,000 ids take about 1 s
  info: 5000,
  merges: 5000,
  merge_list: 10000, // the first call sorts the whole vocabulary
  prepare: 60000, // parses a reference encoding: o200k_base takes a second or two
  load: 60000, // a user's file: up to the size io.js accepts
  learn_adopt: 60000,
  // step-through training in the Learn view: its limits (100 KB, TRACE_BUDGET) keep a run under 5 s
  // here (4 s the slowest seen); a custom regex that backtracks catastrophically on the corpus (Pyodide
  // cannot probe or stop one) held every panel's encoding for the 300 s this was before
  learn: 30000,
  bench_load: 300000, // bench/browser.py parses every format of every encoding
};
const DEFAULT_DEADLINE_MS = 60000; // ops added later get a minute until they say otherwise
// encode/split: extra per 1,000 characters. Most text encodes at 0.2-1 us a character in CPython,
// but a long run the split pattern cannot cut is merged as one piece, superlinearly: 1,000,000
// no-break spaces take gpt2 7 s in CPython, 15-16 s in Pyodide on a busy 2-core machine; at 20
// (22 s for them) the page stopped that text as too slow.
const MS_PER_KCHAR = 40;
const MS_PER_KID = 5; // decode: extra per 1,000 ids
const FIRST_USE_MS = DEADLINE_MS.prepare; // a tokenizer's first request in a worker also parses it
const BUSY_AFTER_MS = 400; // a request this old shows in the status (typing never flickers it)

// What to do about an op that ran out of time (the panels write their own message, panels.js):
// the command line runs the same library without a deadline.
const TIMEOUT_HINTS = {
  audit: "the command line has no time limit: python -m tokenizer audit",
  stats: "the command line has no time limit: python -m tokenizer stats",
  sweep: "the command line has no time limit: python -m tokenizer stats --sweep",
  vocab_diff: "the command line has no time limit: python -m tokenizer diff",
  merge_list: "a shorter search, or the command line's audit, may do",
  learn: "a shorter corpus, fewer merges or another split regex: one with nested repeats can backtrack for hours",
};
const DEFAULT_TIMEOUT_HINT = "try a shorter text or fewer ids";

export class WorkerTimeout extends Error {
  constructor(op, name, ms) {
    super(
      `${op}${name ? ` with ${name}` : ""} took over ${(ms / 1000).toFixed(1)} s; the worker was restarted ` +
        `(${TIMEOUT_HINTS[op] || DEFAULT_TIMEOUT_HINT})`,
    );
    this.name = "WorkerTimeout";
    this.op = op;
    this.tokenizer = name;
    this.ms = ms;
  }
}

let worker = null;
let workerUp = false; // booted and not being replaced
let restoring = false; // a new worker is getting the user's tokenizers back
let restarts = 0;
let nextId = 1;
let current = null; // the request the worker is working on
const queue = [];
const warm = new Set(); // tokenizers the current worker has already parsed
const restartHooks = [];
const bootListeners = [];

function startWorker() {
  const w = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
  w.onmessage = ({ data }) => {
    if (w !== worker) return; // a terminated worker's last words
    if (data.type) return bootListeners.forEach((f) => f(data));
    if (!current || current.id !== data.id) return;
    const req = current;
    finish(req);
    if (data.ok) {
      if (req.payload.name) warm.add(req.payload.name);
      if (data.info && data.info.name) warm.add(data.info.name);
      req.resolve(data);
    } else {
      req.reject(new Error(data.error));
      // After a fatal error (a stack overflow inside Pyodide) every later call would fail too.
      if (/fatal error/i.test(data.error)) restart(`the worker failed: ${data.error}`);
    }
    send();
  };
  w.onerror = (e) => {
    if (w !== worker) return;
    if (!state.ready && !restarts) showFatal(e.message || "the worker failed to start");
    else restart(`the worker failed: ${e.message || "unknown error"}`);
  };
  return w;
}

function deadlineFor(op, payload) {
  let ms = DEADLINE_MS[op] ?? DEFAULT_DEADLINE_MS;
  if (typeof payload.text === "string") ms += (payload.text.length / 1000) * MS_PER_KCHAR;
  if (typeof payload.size === "number") ms += (payload.size / 1000) * MS_PER_KCHAR;
  if (payload.ids) ms += (payload.ids.length / 1000) * MS_PER_KID;
  if (payload.name && !warm.has(payload.name)) ms += FIRST_USE_MS;
  return ms;
}

export function rpc(op, payload = {}, transfer = [], { restore = false } = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    queue.push({ id, op, payload, transfer, restore, resolve, reject });
    send();
  });
}

export function nextRequestId() {
  return nextId;
}

function send() {
  if (current || !workerUp) return;
  const i = restoring ? queue.findIndex((r) => r.restore) : 0;
  if (i < 0 || !queue.length) return;
  const [req] = queue.splice(i, 1);
  current = req;
  req.deadline = deadlineFor(req.op, req.payload);
  req.timer = setTimeout(() => timeout(req), req.deadline);
  req.busyTimer = setTimeout(() => showBusy(req), BUSY_AFTER_MS);
  worker.postMessage({ id: req.id, op: req.op, ...req.payload }, req.transfer);
}

function finish(req) {
  clearTimeout(req.timer);
  clearTimeout(req.busyTimer);
  current = null;
  if (busyShown && !queue.length) showReady();
}

function timeout(req) {
  if (current !== req) return;
  finish(req);
  req.reject(new WorkerTimeout(req.op, req.payload.name, req.deadline));
  restart(`${req.op}${req.payload.name ? ` with ${req.payload.name}` : ""} did not finish in ${(req.deadline / 1000).toFixed(1)} s`);
}

// Hooks run when a fresh worker is up, before any queued request: each gets `rpc` bound to the
// restore lane and returns a promise (the tokenizers it loaded back).
export function onRestart(hook) {
  restartHooks.push(hook);
}

function restart(reason) {
  restarts++;
  worker.terminate();
  workerUp = false;
  warm.clear();
  if (current) {
    const req = current;
    finish(req);
    req.reject(new Error(reason));
  }
  setStatus("restarting", `${reason}; starting a fresh worker…`);
  worker = startWorker();
}

async function restored() {
  restoring = true;
  workerUp = true;
  const restoreRpc = (op, payload) => rpc(op, payload, [], { restore: true });
  const results = await Promise.allSettled(restartHooks.map((h) => h(restoreRpc)));
  for (const r of results) if (r.status === "rejected") console.warn("restoring after a restart:", r.reason);
  restoring = false;
  showReady(`worker restarted (${restarts}×)`);
  send();
}

// Start downloading these tokenizers' files while Pyodide is still booting (no reply).
export function prefetch(names) {
  worker.postMessage({ op: "prefetch", names });
}

// ----- status ---------------------------------------------------------------------------------

const STAGES = { boot: 10, wheel: 70, encoding: 85 }; // progress bar percent per boot stage
let readyDetail = "";
let busyShown = false;

export function setStatus(text, detail = "") {
  if (text === "ready") readyDetail = detail;
  $("#status").textContent = text;
  $("#boot-detail").textContent = detail;
}

// "ready" with its detail (remembered, so that a busy spell can put it back).
export function showReady(detail = readyDetail) {
  readyDetail = detail;
  busyShown = false;
  if (workerUp && !restoring) setStatus("ready", detail);
}

function showBusy(req) {
  if (current !== req || !state.ready) return;
  busyShown = true;
  setStatus("busy", `${req.op}${req.payload.name ? ` with ${req.payload.name}` : ""}…`);
}

export function showFatal(msg) {
  setStatus("error", msg);
  $("#status").classList.add("error");
}

bootListeners.push((m) => {
  if (m.type === "progress") {
    metrics.bootStages.push([m.stage, performance.now() - metrics.t0]);
    $("#boot-progress").value = Math.max($("#boot-progress").value, STAGES[m.stage] || 0);
    if (!state.ready) setStatus("loading", m.label || m.stage);
  } else if (m.type === "ready") {
    if (restarts) restored();
    else {
      workerUp = true;
      send();
    }
  } else if (m.type === "fatal") {
    showFatal(restarts ? `the fresh worker failed: ${m.error}` : m.error);
  }
});
export const workerReady = new Promise((resolve) => bootListeners.push((m) => m.type === "ready" && resolve(m)));
worker = startWorker();

// manifest.json, fetched once: what build_wasm.py put in web/dist, and the library's names
// (split patterns, tie-break rules, the smallest vocabulary) that the page's selects offer.
let manifest = null;
export function loadManifest() {
  manifest ||= fetch("manifest.json", { cache: "no-cache" }).then((res) => {
    if (!res.ok) throw new Error(`manifest.json: HTTP ${res.status}`);
    return res.json();
  });
  return manifest;
}

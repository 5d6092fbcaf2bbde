// The page's side of the worker protocol (web/worker.js runs Pyodide in a Web Worker).
//
// A request is {id, op, ...payload}; the reply carries the same id and either ok + the result or
// an error message, so rpc() is a promise per request. Messages with a `type` instead of an id
// are the boot's progress reports ("progress", "ready", "fatal"). Replies can be ordered by id:
// nextRequestId() tells a caller the id its next rpc() will get, which is how a panel drops a
// reply older than the one it shows.

import { $, metrics, state } from "./state.js";

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

export function rpc(op, payload = {}, transfer = []) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, ...payload }, transfer);
  });
}

export function nextRequestId() {
  return nextId;
}

// Start downloading these tokenizers' files while Pyodide is still booting (no reply).
export function prefetch(names) {
  worker.postMessage({ op: "prefetch", names });
}

// ----- boot status ----------------------------------------------------------------------------

const STAGES = { boot: 10, wheel: 70, encoding: 85 }; // progress bar percent per boot stage

export function setStatus(text, detail = "") {
  $("#status").textContent = text;
  $("#boot-detail").textContent = detail;
}

export function showFatal(msg) {
  setStatus("error", msg);
  $("#status").classList.add("error");
}

export const workerReady = new Promise((resolve) => bootListeners.push((m) => m.type === "ready" && resolve(m)));
bootListeners.push((m) => {
  if (m.type === "progress") {
    metrics.bootStages.push([m.stage, performance.now() - metrics.t0]);
    $("#boot-progress").value = Math.max($("#boot-progress").value, STAGES[m.stage] || 0);
    if (!state.ready) setStatus("loading", m.label || m.stage);
  } else if (m.type === "fatal") {
    showFatal(m.error);
  }
});

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

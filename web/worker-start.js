// Starts the page's Web Worker as soon as the HTML names this script, while the page's modules
// are still arriving: the worker's Pyodide boot is the longest part of loading the page, and
// worker-client.js runs only once the whole module graph has arrived and run. It adopts this
// worker (self.__bpeEarlyWorker) with the events the worker sent meanwhile, or, if it ran
// first, marks the slot taken so that no second worker starts. A classic script, not a module:
// it runs the moment it arrives.
"use strict";
if (!self.__bpeEarlyWorker) {
  const worker = new Worker("worker.js", { type: "module" });
  const events = [];
  worker.onmessage = worker.onerror = (ev) => {
    events.push(ev);
  };
  self.__bpeEarlyWorker = { worker, events };
}

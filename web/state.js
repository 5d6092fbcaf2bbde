// What the playground's modules share: the panels shown, the view options, boot timings.
//
// One object, not a module per panel, because the features cut across panels: the tooltip
// highlights the same bytes in every panel, diff mode compares each panel with the first, the
// share link lists them all.

export const $ = (sel) => document.querySelector(sel);
export const input = $("#input");

export const state = {
  manifest: null, // web/dist/manifest.json: encodings, modules, Pyodide version, the library's names
  panels: [], // {name, info, el, tokensEl, chunksEl, countEl, statsEl, result, spans, starts, shownId, ...}
  ready: false,
  // special: what special-token text becomes, as `encode --special` (allow, text, raise)
  options: { whitespace: true, ids: false, split: false, diff: false, special: "allow" },
};

// Timings the benchmark (bench/browser.py) reads; nothing in the UI depends on them.
export const metrics = {
  t0: performance.now(),
  ready: null,
  firstTokens: null,
  renders: [],
  bootStages: [],
  sent: { edits: 0, texts: 0 }, // panels.js: encodes sent as an edit / as the whole text
};
window.__bpe = { metrics, state };

export function panelByName(name) {
  return state.panels.find((p) => p.name === name);
}

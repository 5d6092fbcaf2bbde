// BPE Playground, the page: tokenizer panels side by side, fed by the Pyodide worker (worker.js).
//
// This module wires the others together and boots the page; each concern lives in its own module:
//   state.js          what the modules share (panels, view options, boot timings)
//   worker-client.js  the worker protocol (rpc), boot progress, manifest.json
//   panels.js         one panel per tokenizer, the encode pump, the regex split view
//   render.js         token spans, line blocks, in-place patching of long lines
//   diff.js           diff mode: tokens the baseline panel cuts differently
//   inspect.js        tooltip, cross-panel highlight, keyboard walking, merge tree and list
//   io.js             files from disk or the server, the share button, the decode box
//   share.js          the share link in the URL fragment
//   textbox.js        the text: its edits (what the worker is sent) and the box's window
//   result.js         a panel's ids and token lengths, patched in place after an edit
//   format.js         whitespace glyphs, hex, labels: shared with the Learn view
//   dom.js            el(), the one way the modules build elements
//   utf16.js          surrogates: UTF-16 offsets against code points (textbox.js, worker.js)
// The worker's own: worker.js, and bpe-merge.js (its batch merge in JavaScript). Mounted below
// when the build has them: train.js (with train-saved.js, the server's stored list), learn.js,
// analysis.js (with analysis-ui.js, audit-view.js, stats-view.js, charts.js, vocab-diff-view.js).
//
// Integration contract for the training panel (web/train.js) and the Learn view (web/learn.js):
//   after boot, if manifest.json lists train.js, this module imports it and calls
//   mountTrainPanel(document.getElementById("train-panel"), appApi), where appApi is:
//     addTokenizerFromServer(name) -> Promise<info>: fetches /api/tokenizers/NAME.tiktoken and
//       NAME.json, loads them into the worker under exactly that name (replacing an older one) and
//       shows (or refreshes) a panel with data-encoding=NAME.
//     addTokenizerFromFiles(tiktokenText, jsonText, filename?) -> Promise<info>: the same from file
//       contents already read; the panel is named after the tokenizer (suffixed if taken).
//     removeTokenizer(name): removes that panel.
//     addEncoding(name): shows a panel for the reference encoding `name` (manifest.json's).
//     placeAfter(name, anchor): moves panel `name` to just after panel `anchor`.
//     listTokenizers() -> names of the panels shown, in order.
//     getText() -> the text in the input box.
//     names: the library's names, defaults and limits from manifest.json (build_wasm.page_names:
//       patterns, default_pattern, tie_breaks, default_tie_break, min_vocab,
//       default_min_frequency, learn_merges {default, max}), which the forms offer instead of
//       values of their own.
//   Both add* functions reject with an Error whose message is fit to show to the user.
// The Learn view is mounted the same way: mountLearnView(#learn-panel, appApi), using two more
//   members: rpc(op, payload) -> Promise<result> (the worker protocol, see worker.js: ops "learn"
//   and "learn_adopt") and addLearnedTokenizer(request) -> Promise<info>.
// The "know your tokenizer" views (analysis.js: Audit, Stats, Compare vocabularies) are mounted
//   the same way into #analysis-panel; they use rpc (ops audit, audit_list, stats, sweep,
//   vocab_diff), listTokenizers() and getText().

import { updateDiff } from "./diff.js";
import "./inspect.js";
import {
  addLearnedTokenizer,
  addTokenizerFromFiles,
  addTokenizerFromServer,
  clearLoadMessage,
  showLoadMessage,
} from "./io.js";
import { addPanel, placePanelAfter, refreshAll, removePanel, renderSplit } from "./panels.js";
import { displayText, rerenderAll } from "./render.js";
import { readShareLink, shareLinkProblem, showingLink, writeLiveLink } from "./share.js";
import { $, input, metrics, state } from "./state.js";
import { getText, moveCaret, setText, textLength, textVersion, utf8Before } from "./textbox.js";
import { loadManifest, prefetch, rpc, setStatus, showFatal, workerReady } from "./worker-client.js";

// ----- toolbar --------------------------------------------------------------------------------

$("#opt-whitespace").addEventListener("change", (e) => {
  state.options.whitespace = e.target.checked;
  rerenderAll();
});
$("#opt-ids").addEventListener("change", (e) => {
  state.options.ids = e.target.checked;
  document.body.classList.toggle("ids-view", state.options.ids);
  for (const p of state.panels) for (const s of p.spans) if (s) s.textContent = displayText(s);
});
$("#opt-split").addEventListener("change", (e) => {
  state.options.split = e.target.checked;
  for (const p of state.panels) {
    if (state.options.split) renderSplit(p);
    else p.chunksEl.hidden = true;
  }
});
$("#opt-diff").addEventListener("change", (e) => {
  state.options.diff = e.target.checked;
  document.body.classList.toggle("diff-mode", state.options.diff);
  updateDiff();
});
$("#opt-special").addEventListener("change", (e) => {
  state.options.special = e.target.value;
  // Every panel again, whole (the worker's kept encodings are of the other choice), also one
  // whose encode failed (raise) on this very text.
  for (const p of state.panels) {
    p.failed = null;
    p.encSerial = 0;
  }
  refreshAll();
});
$("#add-encoding").addEventListener("change", async (e) => {
  const name = e.target.value;
  e.target.value = "";
  if (name) showEncoding(name);
});

function showEncoding(name) {
  addPanel(name);
  writeLiveLink();
}

// ----- boot -----------------------------------------------------------------------------------

const appApi = {
  addTokenizerFromServer,
  addTokenizerFromFiles,
  addLearnedTokenizer,
  rpc,
  removeTokenizer: removePanel,
  addEncoding: showEncoding,
  placeAfter: placePanelAfter,
  listTokenizers: () => state.panels.map((p) => p.name),
  getText,
  names: null, // set from manifest.json before any panel module is mounted
};
window.__bpe.app = appApi;
window.__bpe.rpc = rpc;
window.__bpe.text = { getText, moveCaret, setText, textLength, textVersion, utf8Before }; // tests and bench/browser.py

// The train panel, the Learn view and the analysis views are optional modules: mounted only if
// the build has them, after `ready`, one per frame: the first style and layout of their forms
// cost 40-100 ms together on the test machine, one long task if done at once. (Mounting them
// while the worker boots instead measured no better: on 2 busy cores it delays `ready`.)
const OPTIONAL = [
  ["train.js", "mountTrainPanel", "train-panel"],
  ["learn.js", "mountLearnView", "learn-panel"],
  ["analysis.js", "mountAnalysis", "analysis-panel"],
];
const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

async function mountOptionals() {
  for (const [file, mount, rootId] of OPTIONAL) {
    if (!state.manifest.modules.includes(file)) continue;
    try {
      const module = await import(`./${file}`);
      await nextFrame();
      module[mount](document.getElementById(rootId), appApi);
    } catch (e) {
      console.error(`${file}:`, e);
    }
  }
}

async function boot() {
  state.manifest = await loadManifest();
  appApi.names = state.manifest.names;
  const names = Object.keys(state.manifest.encodings);
  const addSel = $("#add-encoding");
  for (const n of names) addSel.append(new Option(n, n));

  const fromHash = readShareLink();
  if (fromHash && fromHash.text != null) setText(fromHash.text);
  const wanted = (fromHash && fromHash.encodings.filter((n) => names.includes(n))) || [];
  const problem = shareLinkProblem(fromHash, names);
  if (problem) showLoadMessage(problem, true, "link");
  const initial = wanted.length ? wanted : state.manifest.default_encodings;
  prefetch(initial); // downloads overlap the boot
  for (const n of initial) addPanel(n);
  await workerReady;

  state.ready = true;
  metrics.ready = performance.now() - metrics.t0;
  $("#boot-progress").value = 100;
  $("#boot-progress").hidden = true;
  setStatus("ready", `Pyodide ${state.manifest.pyodide.version} · ready in ${(metrics.ready / 1000).toFixed(1)} s`);
  input.disabled = false;
  refreshAll();
  mountOptionals();
}

// A share link opened in a tab that already shows the page (pasted into its address bar, or a
// link to it clicked there) changes only the fragment: no new page loads, so without this the
// tab went on showing its old text under the link's address (and its next keystroke wrote that
// text over the link). The link's reference panels replace the others; a loaded one stays.
// The link is read from the event, not the address bar: the live link's timer (share.js) may
// have written the old view there between the navigation and this event.
// The address bar then follows the view as share.js showingLink says (a long text's link stays).
window.addEventListener("hashchange", (e) => {
  const link = readShareLink(new URL(e.newURL).hash);
  if (!link || !state.manifest) return;
  const names = Object.keys(state.manifest.encodings);
  showingLink(
    () => {
      if (link.text != null) setText(link.text);
      const wanted = link.encodings.filter((n) => names.includes(n));
      if (wanted.length) {
        for (const p of [...state.panels]) if (names.includes(p.name) && !wanted.includes(p.name)) removePanel(p.name);
        for (const n of wanted) addPanel(n);
      }
    },
    { hasText: link.text != null },
  );
  const problem = shareLinkProblem(link, names);
  if (problem) showLoadMessage(problem, true, "link");
  else clearLoadMessage("link");
});

boot().catch((e) => showFatal(e.message));

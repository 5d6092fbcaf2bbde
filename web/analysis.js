// "Know your tokenizer": the Audit, Stats and Compare vocabularies views (issue 14), under the
// panels. Each view is its own module; this one mounts them in collapsed sections and keeps
// their tokenizer choices in step with the panels shown (a panel added, loaded or removed).
//
// Mounted by app.js like the train panel: mountAnalysis(root, appApi), using appApi.rpc (the
// worker ops audit, audit_list, stats, sweep, vocab_diff), listTokenizers() and getText().
// Everything is computed in the worker; the views only draw the answers.

import { mountAuditView } from "./audit-view.js";
import { el } from "./dom.js";
import { mountStatsView } from "./stats-view.js";
import { mountVocabDiffView } from "./vocab-diff-view.js";

const VIEWS = [
  ["audit", "Audit a vocabulary", mountAuditView],
  ["stats", "Stats: compression, parity per language, vocabulary-size sweep", mountStatsView],
  ["vdiff", "Compare vocabularies", mountVocabDiffView],
];

export function mountAnalysis(root, app) {
  root.classList.add("analysis");
  root.setAttribute("aria-label", "Know your tokenizer");
  const views = [];
  for (const [id, title, mount] of VIEWS) {
    const body = el("div", { class: "analysis-body" });
    const box = el("details", { id: `${id}-box`, "data-testid": `${id}-box` }, el("summary", { text: title }), body);
    root.append(box);
    const view = mount(body, app);
    views.push(view);
    box.addEventListener("toggle", () => box.open && view.refresh());
  }
  // The panels come and go (add, load from disk, train, remove): keep the choices current.
  new MutationObserver(() => views.forEach((v) => v.refresh())).observe(document.getElementById("panels"), {
    childList: true,
  });
}

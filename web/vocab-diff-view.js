// The "Compare vocabularies" view: tokenizer.vocab_diff for two panels, as `python -m tokenizer
// diff A B --json`: tokens in both, in one only, the first rank where the orders part, examples
// from each side, and, for two tokenizers trained here, why they diverged at that rank.

import { dataTable, panelSelect, statusLine, tokenItem } from "./analysis-ui.js";
import { el } from "./dom.js";

export function mountVocabDiffView(root, app) {
  const a = panelSelect(app, "first tokenizer (A)", "vdiff-a");
  const b = panelSelect(app, "second tokenizer (B)", "vdiff-b");
  const run = el("button", { type: "button", text: "compare", "data-testid": "vdiff-run" });
  const status = statusLine("vdiff-status");
  const out = el("div", { class: "analysis-out", "data-testid": "vdiff-out" });
  root.append(el("div", { class: "row" }, "A", a.select, "B", b.select, run), status.line, out);

  const refresh = () => {
    a.refresh();
    b.refresh();
    if (a.select.value === b.select.value && b.select.options.length > 1) b.select.selectedIndex = 1;
  };
  refresh();

  run.addEventListener("click", async () => {
    const [na, nb] = [a.select.value, b.select.value];
    if (!na || !nb) return status.fail(new Error("add two tokenizer panels first"));
    status.busy();
    run.disabled = true;
    try {
      show(na, nb, await app.rpc("vocab_diff", { name: na, other: nb }));
      status.done(`A = ${na}, B = ${nb}`);
    } catch (e) {
      status.fail(e);
    } finally {
      run.disabled = false;
    }
  });

  function examples(title, entries, testid) {
    const list = el("ol", { class: "token-list", "data-testid": testid });
    for (const e of entries) list.append(tokenItem(e.id, e.hex));
    return el("div", {}, el("h3", { text: title }), list);
  }

  function show(na, nb, r) {
    const first = r.first_difference == null ? "identical rank orders" : r.first_difference;
    const parts = [
      dataTable(
        `${na} (A) against ${nb} (B)`,
        ["measure", "value"],
        [
          ["tokens in both", r.common],
          ["only in A", r.only_a],
          ["only in B", r.only_b],
          ["first rank that differs", first],
        ],
        { testid: "vdiff-table" },
      ),
      el(
        "div",
        { class: "analysis-grid" },
        examples(`Lowest-ranked only in A (${na})`, r.examples_only_a, "vdiff-only-a"),
        examples(`Lowest-ranked only in B (${nb})`, r.examples_only_b, "vdiff-only-b"),
      ),
    ];
    if (r.divergence) {
      parts.push(el("p", { "data-testid": "vdiff-reason", text: `Why at rank ${r.divergence.rank}: ${r.divergence.reason}` }));
    }
    out.replaceChildren(...parts);
  }

  return { refresh };
}

// The "Audit" view: tokenizer.audit for a panel's tokenizer, as `python -m tokenizer audit --json`.
//
// The worker computes (op "audit": seconds for o200k, cached per tokenizer) and sends the counts,
// the longest tokens and the scripts; a list (partial UTF-8, unreachable, unused against the input
// text, duplicates) comes a page at a time (op "audit_list"), filtered by the search in the worker,
// because "unused" on a short text is nearly the whole vocabulary: 200k rows would freeze the page.

import { dataTable, panelSelect, statusLine, tokenItem } from "./analysis-ui.js";
import { el } from "./dom.js";

const PAGE = 100; // rows per request; "more" asks for the next page
const LISTS = {
  partial_utf8: "partial UTF-8 (pieces of a character)",
  unreachable: "unreachable (encoding its bytes never gives it)",
  unused: "unused in the input text",
  duplicates: "duplicates (same bytes as an earlier id)",
};

export function mountAuditView(root, app) {
  const pick = panelSelect(app, "tokenizer to audit", "audit-tokenizer");
  const withText = el("input", { type: "checkbox", checked: true, "data-testid": "audit-with-text" });
  const run = el("button", { type: "button", text: "audit", "data-testid": "audit-run" });
  const status = statusLine("audit-status");
  const summary = el("div", { class: "analysis-out", "data-testid": "audit-summary" });
  const listKey = el("select", { "aria-label": "list to show", "data-testid": "audit-list-key" });
  const query = el("input", {
    type: "search",
    placeholder: "search tokens (text)",
    "aria-label": "search the list",
    "data-testid": "audit-query",
  });
  const list = el("ol", {
    class: "token-list scroll-box",
    tabIndex: 0,
    "aria-label": "tokens of the list",
    "data-testid": "audit-list",
  });
  const count = el("span", { class: "muted", "data-testid": "audit-list-count" });
  const more = el("button", { type: "button", text: "more", hidden: true, "data-testid": "audit-more" });
  const lists = el(
    "div",
    { class: "analysis-lists", hidden: true },
    el("div", { class: "row" }, listKey, query),
    list,
    el("div", { class: "row" }, count, more),
  );
  root.append(
    el(
      "div",
      { class: "row" },
      pick.select,
      el("label", {}, withText, " unused against the input text"),
      run,
    ),
    status.line,
    summary,
    lists,
  );

  let shown = null; // {name, offset}: the list on screen, so "more" and the search continue it
  let token = 0; // drops a page that arrives after a newer request

  run.addEventListener("click", async () => {
    const name = pick.select.value;
    if (!name) return status.fail(new Error("add a tokenizer panel first"));
    status.busy();
    run.disabled = true;
    try {
      const res = await app.rpc("audit", { name, text: withText.checked ? app.getText() : null });
      showSummary(name, res);
      status.done(`${name}: audited in ${(res.ms / 1000).toFixed(1)} s`);
      listKey.replaceChildren(
        ...Object.keys(res.counts).map((k) => new Option(`${LISTS[k]}: ${res.counts[k]}`, k)),
      );
      lists.hidden = false;
      shown = { name, offset: 0 };
      await loadList(false);
    } catch (e) {
      status.fail(e);
    } finally {
      run.disabled = false;
    }
  });

  function showSummary(name, res) {
    const r = res.result;
    const counts = [
      ["n_vocab", r.n_vocab],
      ["mergeable ids", res.mergeable],
      ...Object.entries(res.counts).map(([k, n]) => [LISTS[k], n]),
    ];
    const longest = el("ol", { class: "token-list", "data-testid": "audit-longest" });
    for (const [id, h] of res.longest) longest.append(tokenItem(id, h, `${h.length / 2} bytes`));
    const scripts = Object.entries(r.by_script).map(([s, n]) => [s, n, n / res.mergeable]);
    summary.replaceChildren(
      el("div", { class: "analysis-grid" },
        dataTable(`${name}: counts`, ["measure", "ids"], counts, { testid: "audit-counts" }),
        dataTable(`${name}: ids by script`, ["script", "ids", "share"], scripts, { testid: "audit-scripts" }),
      ),
      el("h3", { text: `The ${res.longest.length} longest tokens` }),
      longest,
    );
  }

  async function loadList(append) {
    const mine = ++token;
    const key = listKey.value;
    const res = await app.rpc("audit_list", {
      name: shown.name,
      key,
      query: query.value,
      offset: append ? shown.offset : 0,
      limit: PAGE,
    });
    if (mine !== token) return;
    if (!append) {
      list.replaceChildren();
      shown.offset = 0;
    }
    for (const [id, h, first] of res.rows) list.append(tokenItem(id, h, first == null ? null : `= ${first}`));
    shown.offset += res.rows.length;
    count.textContent = `${shown.offset} of ${res.total} shown`;
    count.dataset.total = res.total;
    more.hidden = shown.offset >= res.total;
  }

  const reload = (append) => shown && loadList(append).catch((e) => status.fail(e));
  listKey.addEventListener("change", () => reload(false));
  query.addEventListener("input", () => reload(false));
  more.addEventListener("click", () => reload(true));
  return { refresh: pick.refresh };
}

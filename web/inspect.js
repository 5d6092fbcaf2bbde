// Inspecting tokens: the tooltip (id, rank, bytes), the same bytes highlighted in every panel,
// keyboard walking through a panel's tokens, and the merge explorer (the merge tree of one
// token, the merge list of a tokenizer).

import { el } from "./dom.js";
import { colorClass, hex, previewFromHex, tokenLabel, tryDecode } from "./format.js";
import { shown } from "./render.js";
import { $, panelByName, state } from "./state.js";
import { rpc } from "./worker-client.js";

const panelsEl = $("#panels");
const tooltip = $("#tooltip");
const TOOLTIP_WIDTH = 260; // px kept free at the right edge of the window
const MERGE_PAGE = 200; // merge-list rows per request

// ----- hover / focus: tooltip + the same bytes highlighted in every panel --------------------

function tokenInfo(span) {
  const panelEl = span.closest("[data-testid=panel]");
  if (!panelEl) return null;
  const panel = panelByName(panelEl.dataset.encoding);
  if (!panel || !panel.result) return null;
  const i = span._i;
  if (i === undefined || panel.spans[i] !== span) return null;
  return { panel, i, start: panel.starts[i], end: panel.starts[i + 1] };
}

function highlight(range) {
  for (const node of document.querySelectorAll(".tok.hl")) node.classList.remove("hl");
  if (!range) return;
  for (const p of state.panels) {
    if (!p.starts) continue;
    // first token ending after range.start
    let lo = 0;
    let hi = p.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (p.starts[mid + 1] <= range.start) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < p.starts.length - 1 && p.starts[k] < range.end; k++) {
      if (p.spans[k]) p.spans[k].classList.add("hl");
    }
  }
}

function isSpecial(panel, id) {
  const sp = panel.info && panel.info.special_tokens;
  return sp ? Object.values(sp).includes(id) : false;
}

// The token's text, or for a piece of a character (not UTF-8 on its own) what it is part of:
// never U+FFFD, which a lenient decode would show in place of the piece.
function tokenText(span, b) {
  const s = tryDecode(b);
  if (s !== null) return JSON.stringify(s);
  const group = span.parentElement && span.parentElement.classList.contains("group") ? span.parentElement : null;
  return `part of a character (not UTF-8 on its own)${group ? `: ${group.title}` : ""}`;
}

function showTooltip(span) {
  const t = tokenInfo(span);
  if (!t) return;
  const id = t.panel.result.ids[t.i];
  const b = t.panel.result.bytes.subarray(t.start, t.end);
  const rows = [
    ["tokenizer", t.panel.name],
    ["id", String(id)],
    ["rank", isSpecial(t.panel, id) ? "special token" : String(id)],
    ["bytes", hex(b)],
    ["text", tokenText(span, b)],
    // t.i counts from the window's first token (render.js shows a window of a large result)
    ["position", `token ${t.i + t.panel.result.offset + 1} · bytes ${t.start}–${t.end}`],
  ];
  tooltip.replaceChildren(...rows.map(([k, v]) => el("div", {}, el("span", { class: "muted", text: k + " " }), v)));
  tooltip.hidden = false;
  const r = span.getBoundingClientRect();
  tooltip.style.left = `${Math.max(4, Math.min(window.innerWidth - TOOLTIP_WIDTH, r.left + window.scrollX))}px`;
  tooltip.style.top = `${r.bottom + window.scrollY + 4}px`;
  highlight({ start: t.start, end: t.end });
}

let hoverTarget = null;
let hoverSpan = null;
let hoverFrame = 0;

function hideTooltip() {
  hoverSpan = null;
  tooltip.hidden = true;
  highlight(null);
}

function focusToken(span) {
  if (!span.hasAttribute("tabindex")) span.tabIndex = -1; // focusable on demand, not 25,000 tab stops
  span.focus();
}

// mousemove, not mouseover: while a long text renders, spans keep appearing under a resting
// pointer, and each mouseover would force a layout of the whole panel to place the tooltip.
panelsEl.addEventListener("mousemove", (e) => {
  hoverTarget = e.target;
  if (hoverFrame) return;
  hoverFrame = requestAnimationFrame(() => {
    hoverFrame = 0;
    const span = hoverTarget && hoverTarget.closest ? hoverTarget.closest(".tok") : null;
    if (span === hoverSpan) return;
    hoverSpan = span;
    if (span) showTooltip(span);
    else hideTooltip();
  });
});
panelsEl.addEventListener("mouseleave", () => {
  hoverTarget = hoverSpan = null;
  hideTooltip();
});
panelsEl.addEventListener("focusin", (e) => {
  const span = e.target.closest(".tok");
  if (span) showTooltip(span);
});
panelsEl.addEventListener("focusout", hideTooltip);
panelsEl.addEventListener("click", (e) => {
  const span = e.target.closest(".tok");
  if (span) {
    focusToken(span);
    showMergeTree(span);
  }
});
panelsEl.addEventListener("keydown", (e) => {
  // Arrow keys move between tokens; Enter opens the merge tree.
  const span = e.target.closest(".tok");
  if (!span) return;
  const t = tokenInfo(span);
  if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    const next = t.panel.spans[t.i + (e.key === "ArrowRight" ? 1 : -1)];
    if (next) focusToken(next);
    e.preventDefault();
  } else if (e.key === "Enter") {
    showMergeTree(span);
  }
});
// Tab into a panel lands on its first token.
panelsEl.addEventListener("focusin", (e) => {
  if (e.target.classList.contains("tokens")) {
    const first = e.target.querySelector(".tok");
    if (first) focusToken(first);
  }
});

// ----- merge explorer ------------------------------------------------------------------------

// At most format.js SHOWN_TOKEN_BYTES of a token: a merge list or tree of megabyte tokens froze the page.
const label = (hexBytes) => {
  const { bytes, cut } = previewFromHex(hexBytes);
  return tokenLabel(bytes, shown) + (cut ? "…" : "");
};

async function showMergeTree(span) {
  const t = tokenInfo(span);
  if (!t) return;
  const id = t.panel.result.ids[t.i];
  // The merge list follows the clicked token's tokenizer.
  const select = $("#merge-encoding");
  const listChanged = select.value !== t.panel.name;
  select.value = t.panel.name;
  $("#merge-box").open = true;
  if (listChanged) refreshMergeList();
  const treeEl = $("#merge-tree");
  treeEl.textContent = "…";
  try {
    const { tree } = await rpc("merges", { name: t.panel.name, tokenId: id });
    treeEl.replaceChildren(treeNode(tree));
    treeEl.dataset.encoding = t.panel.name;
    treeEl.dataset.root = String(id);
  } catch (e) {
    treeEl.textContent = e.message;
  }
}

function treeNode(node) {
  return el(
    "div",
    { class: "node", "data-testid": "merge-node", "data-id": node.id },
    el("span", { class: `tok ${colorClass(node.id)}`, text: label(node.bytes) }),
    el("span", { class: "muted", text: node.special ? ` special id ${node.id}` : ` id ${node.id} · rank ${node.rank}` }),
    // bridge.py MAX_TREE_BYTES: a tree of megabytes of tokens (self-merges of a long run) stops here
    node.cut ? el("span", { class: "muted", "data-testid": "merge-cut", text: " · parts not shown (too big a tree)" }) : null,
    node.left && node.right ? el("div", { class: "kids" }, treeNode(node.left), treeNode(node.right)) : null,
  );
}

// bridge.merge_list gives -1 + -1 for a token no two earlier tokens make (a file's token with no
// merge path): shown as such, not as ids -1 + -1.
function mergeRow([rank, a, b, h]) {
  const made = a < 0 ? "no merge of earlier tokens makes it" : `${a} + ${b}`;
  return el("li", { value: rank, "data-testid": "merge-row", "data-rank": rank, text: `${label(h)}  ←  ${made}` });
}

// The merges in order (optionally only tokens containing the query), a page at a time.
let mergeQueryGen = 0;
async function refreshMergeList({ more = false } = {}) {
  const name = $("#merge-encoding").value;
  if (!name || !$("#merge-box").open) return;
  const gen = ++mergeQueryGen;
  const list = $("#merge-list");
  const offset = more ? list.children.length : 0;
  list.setAttribute("aria-busy", "true");
  try {
    const query = $("#merge-query").value;
    const res = await rpc("merge_list", { name, query, offset, limit: MERGE_PAGE });
    if (gen !== mergeQueryGen) return;
    const rows = res.rows.map(mergeRow);
    if (more) list.append(...rows);
    else list.replaceChildren(...rows);
    list.dataset.total = String(res.total);
    $("#merge-more").hidden = list.children.length >= res.total;
    $("#merge-count").textContent = `${list.children.length} of ${res.total} merges`;
  } catch (e) {
    list.textContent = e.message;
  } finally {
    list.removeAttribute("aria-busy");
  }
}
$("#merge-encoding").addEventListener("change", () => refreshMergeList());
$("#merge-query").addEventListener("input", () => refreshMergeList());
$("#merge-more").addEventListener("click", () => refreshMergeList({ more: true }));
$("#merge-box").addEventListener("toggle", () => refreshMergeList());

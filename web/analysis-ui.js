// Pieces the "know your tokenizer" views share (audit-view.js, stats-view.js, vocab-diff-view.js):
// tokens written as the panels write them, tables whose cells keep their exact number, and the
// controls that pick among the panels shown.
//
// Why every number cell carries data-value: the cell shows a readable form (1,234 or 1.083), the
// attribute the exact figure, so the browser tests compare the page with the CLI's JSON exactly.

import { el } from "./dom.js";
import { colorClass, hex, previewFromHex, tokenLabel, tryDecode } from "./format.js";

// Made on first use: building the first Intl.NumberFormat loads ICU's number data, a 60-70 ms
// main-thread task, which at module load would fall into the page's boot.
let integers = null;

export function formatNumber(value, digits = 3) {
  if (value == null) return "–";
  if (!Number.isInteger(value)) return value.toFixed(digits);
  integers ||= new Intl.NumberFormat("en-US");
  return integers.format(value);
}

// A token as the panels show it: coloured by id, whitespace visible, <HEX> when not UTF-8; a
// long one cut (format.js SHOWN_TOKEN_BYTES).
export function tokenSpan(id, hexBytes) {
  const { bytes, cut } = previewFromHex(hexBytes);
  const partial = tryDecode(bytes) === null;
  return el("span", {
    class: `tok ${colorClass(id)}${partial ? " bytes" : ""}`,
    text: tokenLabel(bytes) + (cut ? "…" : ""),
    "data-testid": "analysis-token",
    "data-id": id,
  });
}

// One list item: id, the token, its bytes in hex (and an extra note, e.g. "= 256").
export function tokenItem(id, hexBytes, note = null) {
  const { bytes, cut, total } = previewFromHex(hexBytes);
  return el(
    "li",
    { class: "token-row", "data-testid": "token-row", "data-id": id },
    el("span", { class: "token-id", text: String(id) }),
    tokenSpan(id, hexBytes),
    el("code", { class: "token-hex", text: hex(bytes) + (cut ? " …" : ""), title: `${total} bytes` }),
    note == null ? null : el("span", { class: "muted", text: note }),
  );
}

// A table: headers, then rows of cells; a number becomes a right-aligned cell with data-value.
export function dataTable(caption, headers, rows, { testid = null } = {}) {
  const table = el("table", { class: "data", "data-testid": testid });
  table.append(el("caption", { text: caption }));
  table.append(el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { scope: "col", text: h })))));
  const body = el("tbody");
  for (const row of rows) {
    const tr = el("tr");
    row.forEach((value, k) => {
      const tag = k === 0 ? "th" : "td";
      if (typeof value === "number") {
        tr.append(el(tag, { class: "num", text: formatNumber(value), "data-value": String(value) }));
      } else if (value instanceof Node) {
        tr.append(el(tag, {}, value));
      } else {
        tr.append(el(tag, { text: value == null ? "–" : String(value), scope: k === 0 ? "row" : null }));
      }
    });
    body.append(tr);
  }
  table.append(body);
  // Wide tables scroll inside their own box at narrow widths; the box takes focus to scroll.
  return el("div", { class: "table-box scroll-box", tabIndex: 0, role: "group", "aria-label": caption }, table);
}

// A select listing the panels shown, kept current: refresh() when panels may have changed.
export function panelSelect(app, label, testid) {
  const select = el("select", { "aria-label": label, "data-testid": testid });
  const refresh = () => {
    const keep = select.value;
    const names = app.listTokenizers();
    select.replaceChildren(...names.map((n) => new Option(n, n)));
    if (names.includes(keep)) select.value = keep;
  };
  refresh();
  return { select, refresh };
}

// A row of checkboxes, one per panel shown (all checked at first); names() gives the checked ones.
export function panelChecks(app, label, testid) {
  const box = el("fieldset", { class: "panel-checks", "data-testid": testid }, el("legend", { text: label }));
  const checked = new Map();
  const refresh = () => {
    const names = app.listTokenizers();
    box.replaceChildren(box.firstChild);
    for (const n of names) {
      const input = el("input", { type: "checkbox", checked: checked.get(n) ?? true, value: n });
      input.addEventListener("change", () => checked.set(n, input.checked));
      box.append(el("label", {}, input, " " + n));
    }
  };
  refresh();
  const names = () => [...box.querySelectorAll("input:checked")].map((i) => i.value);
  return { box, refresh, names };
}

// A status line for a view: "computing…", the time it took, or an error.
export function statusLine(testid) {
  const line = el("p", { class: "message", role: "status", "data-testid": testid });
  return {
    line,
    busy(text = "computing in the worker…") {
      line.className = "message muted";
      line.textContent = text;
    },
    done(text = "") {
      line.className = "message muted";
      line.textContent = text;
    },
    fail(error) {
      line.className = "message error";
      line.textContent = error.message || String(error);
    },
  };
}

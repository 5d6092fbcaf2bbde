// The "Stats" view: compression, language parity and the vocabulary-size sweep, as
// `python -m tokenizer stats FILE -t A -t B [--by-language] [--sweep ...] --json` on the input text.
//
// Three plots (charts.js), each with its numbers in a table below it:
// - bytes per token of each chosen tokenizer on the input text (more is better compression);
// - parity per language (tokens / English tokens for the same declaration, Petrov et al. 2023)
//   from a UDHR-style text the user pastes or loads: the page is offline and ships no corpora;
// - the sweep: tokens (or bytes per token) of the input text when the tokenizer is cut to its
//   first V ids, V on a log axis: what a smaller vocabulary would have cost.

import { dataTable, panelChecks, statusLine } from "./analysis-ui.js";
import { destroyChartsIn, drawChart } from "./charts.js";
import { el } from "./dom.js";
import { readUtf8 } from "./io.js";

const BAR_ROW_PX = 18; // per bar in a horizontal bar chart: room for a 12 px label
const CHART_PAD_PX = 70; // axis title, ticks and legend around the bars
const SWEEP_HEIGHT_PX = 300;
const EXAMPLE_HEADER = "##### UDHR code=eng lang=en name=English";
// A UDHR text longer than this (UTF-16 units) is used without being put in the box: Chromium lays
// a textarea of megabytes out again at every change near it (a 20 MB file: its load a 275 ms
// task, then each status line or click 130-515 ms). The input box's LIVE_MAX, measured there.
const UDHR_BOX_MAX = 1 << 17;

// "1000, 2000,4000" -> [1000, 2000, 4000], read as the CLI's --sweep is (cli/analyze.py
// parse_sizes): every item an integer, so "512," or "512,,1024" is an empty item, not a size 0,
// and "1e3" or "0x100" is not read as some other number. Order and range are checked in the worker.
export function parseSizes(value) {
  return value.split(",").map((part) => {
    const item = part.trim();
    if (!/^[+-]?\d+$/.test(item)) throw new Error(`'${item}' is not an integer (give e.g. 1000,2000,4000)`);
    const n = Number(item);
    if (!Number.isSafeInteger(n)) throw new Error(`sweep size ${item} is out of range: sizes are below 2^31`);
    return n;
  });
}

export function mountStatsView(root, app) {
  const checks = panelChecks(app, "tokenizers", "stats-tokenizers");
  const udhrHint = `optional, for parity: a UDHR-style text, each language after a header line such as\n${EXAMPLE_HEADER}`;
  const udhr = el("textarea", {
    rows: 4,
    spellcheck: false,
    placeholder: udhrHint,
    "aria-label": "UDHR-style text for parity per language",
    "data-testid": "stats-udhr",
  });
  // A UDHR text too long for the box (a file or a paste), used while the box stays empty: the
  // box's placeholder names it, and typing in the box replaces it as it would a text in the box.
  let udhrAside = null;
  const putAside = (name, text) => {
    udhr.value = "";
    udhrAside = text;
    udhr.placeholder = `${name} (${text.length} characters) is used, not shown (too long for this box); type here to use your own text instead`;
  };
  const dropAside = () => {
    udhrAside = null;
    udhr.placeholder = udhrHint;
  };
  udhr.addEventListener("input", () => udhrAside !== null && udhr.value && dropAside());
  udhr.addEventListener("paste", (e) => {
    const text = e.clipboardData && e.clipboardData.getData("text/plain");
    if (!text || text.length <= UDHR_BOX_MAX) return;
    e.preventDefault();
    putAside("the pasted text", text);
  });
  const udhrFile = el("input", { type: "file", accept: ".txt,text/plain", "data-testid": "stats-udhr-file" });
  // Read as the CLI reads a corpus: UTF-8 or refused. File.text() put U+FFFD for the bytes of a
  // Latin-1 file, and the parity of its languages was computed on that without a word.
  udhrFile.addEventListener("change", async () => {
    const file = udhrFile.files[0];
    udhrFile.value = "";
    if (!file) return;
    try {
      const text = await readUtf8(file);
      if (text.length > UDHR_BOX_MAX) putAside(file.name, text);
      else {
        dropAside();
        udhr.value = text;
      }
      status.done(`${file.name}: loaded`);
    } catch (e) {
      status.fail(e);
    }
  });
  const run = el("button", { type: "button", text: "compute stats", "data-testid": "stats-run" });
  const status = statusLine("stats-status");
  const out = el("div", { class: "analysis-out", "data-testid": "stats-out" });

  const sizes = el("input", {
    placeholder: "vocab sizes, e.g. 512,1024,4096 (default: powers of two)",
    "aria-label": "vocabulary sizes for the sweep",
    "data-testid": "sweep-sizes",
  });
  const metric = el("select", { "aria-label": "what the sweep plots", "data-testid": "sweep-metric" });
  metric.append(new Option("tokens", "tokens"), new Option("bytes per token", "bpt"));
  const sweepRun = el("button", { type: "button", text: "sweep", "data-testid": "sweep-run" });
  const sweepStatus = statusLine("sweep-status");
  const sweepOut = el("div", { class: "analysis-out", "data-testid": "sweep-out" });
  let lastSweep = null;

  root.append(
    checks.box,
    el("label", { class: "file-button" }, "load a UDHR file…", udhrFile),
    udhr,
    el("div", { class: "row" }, run),
    status.line,
    out,
    el("h3", { text: "Vocabulary-size sweep (the chosen tokenizers cut to their first V ids)" }),
    el("div", { class: "row" }, sizes, metric, sweepRun),
    sweepStatus.line,
    sweepOut,
  );

  run.addEventListener("click", async () => {
    const names = checks.names();
    if (!names.length) return status.fail(new Error("choose at least one tokenizer"));
    status.busy();
    run.disabled = true;
    try {
      const t = performance.now();
      const udhrText = udhr.value.trim() ? udhr.value : udhrAside;
      const res = await app.rpc("stats", { names, text: app.getText(), udhr: udhrText });
      await showStats(res);
      status.done(`computed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    } catch (e) {
      status.fail(e);
    } finally {
      run.disabled = false;
    }
  });

  async function showStats(res) {
    destroyChartsIn(out);
    const first = res.results[0];
    const rows = res.results.map((r) => [
      r.tokenizer,
      r.tokens,
      r.bytes,
      r.chars,
      r.words,
      r.tokens ? r.bytes / r.tokens : null,
      r.tokens ? r.chars / r.tokens : null,
      r.words ? r.tokens / r.words : null,
      first.tokens ? r.tokens / first.tokens : null,
    ]);
    const parts = [
      await drawChart({
        type: "bar",
        labels: res.results.map((r) => r.tokenizer),
        datasets: [{ label: "bytes per token", data: rows.map((r) => r[5]) }],
        axes: { horizontal: true, x: { title: "bytes per token (input text; more = better compression)" } },
        height: CHART_PAD_PX + BAR_ROW_PX * 1.6 * rows.length,
        label: "Bytes per token of each tokenizer on the input text",
        testid: "chart-bpt",
      }),
      dataTable(
        "Compression on the input text",
        ["tokenizer", "tokens", "bytes", "chars", "words", "bytes/token", "chars/token", "tokens/word", "ratio"],
        rows,
        { testid: "stats-table" },
      ),
    ];
    if (res.languages) parts.push(...(await parityParts(res.languages)));
    out.replaceChildren(...parts);
  }

  async function parityParts(languages) {
    const names = [...new Set(languages.map((r) => r.tokenizer))];
    const by = new Map(); // code -> {name, per tokenizer row}
    for (const r of languages) {
      if (!by.has(r.code)) by.set(r.code, { code: r.code, name: r.name, rows: {} });
      by.get(r.code).rows[r.tokenizer] = r;
    }
    const langs = [...by.values()]; // worst first for the first tokenizer (its rows come sorted)
    const chart = await drawChart({
      type: "bar",
      labels: langs.map((l) => l.name),
      datasets: names.map((n) => ({ label: n, data: langs.map((l) => l.rows[n].parity) })),
      axes: { horizontal: true, x: { title: "parity: tokens / English tokens (English = 1)" } },
      height: CHART_PAD_PX + BAR_ROW_PX * langs.length * Math.max(1, names.length * 0.75),
      label: "Parity per language, worst first",
      testid: "chart-parity",
    });
    const table = dataTable(
      "Parity per language (worst first for the first tokenizer)",
      ["language", "code", ...names.flatMap((n) => [`${n} tokens`, `${n} parity`])],
      langs.map((l) => [l.name, l.code, ...names.flatMap((n) => [l.rows[n].tokens, l.rows[n].parity])]),
      { testid: "parity-table" },
    );
    table.classList.add("tall");
    return [el("h3", { text: "Parity per language" }), chart, table];
  }

  sweepRun.addEventListener("click", async () => {
    const names = checks.names();
    if (!names.length) return sweepStatus.fail(new Error("choose at least one tokenizer"));
    let wanted = null;
    try {
      wanted = sizes.value.trim() ? parseSizes(sizes.value) : null;
    } catch (e) {
      return sweepStatus.fail(e);
    }
    sweepStatus.busy();
    sweepRun.disabled = true;
    try {
      const text = app.getText();
      const runs = [];
      for (const name of names) runs.push({ name, ...(await app.rpc("sweep", { name, text, sizes: wanted })) });
      lastSweep = runs;
      await showSweep();
      sweepStatus.done(`${names.join(", ")}: ${runs[0].sweep.length} sizes`);
    } catch (e) {
      sweepStatus.fail(e);
    } finally {
      sweepRun.disabled = false;
    }
  });
  metric.addEventListener("change", () => lastSweep && showSweep());

  async function showSweep() {
    destroyChartsIn(sweepOut);
    const bpt = metric.value === "bpt";
    const value = (run, r) => (bpt ? (r.tokens ? run.bytes / r.tokens : null) : r.tokens);
    const chart = await drawChart({
      type: "line",
      labels: undefined,
      datasets: lastSweep.map((run) => ({
        label: run.name,
        data: run.sweep.map((r) => ({ x: r.vocab_size, y: value(run, r) })),
      })),
      axes: { x: { title: "vocabulary size (log scale)", log: true }, y: { title: bpt ? "bytes per token" : "tokens" } },
      height: SWEEP_HEIGHT_PX,
      label: `Sweep: ${bpt ? "bytes per token" : "tokens"} of the input text against vocabulary size`,
      testid: "chart-sweep",
    });
    const rows = lastSweep.flatMap((run) =>
      run.sweep.map((r) => [run.name, r.vocab_size, r.tokens, r.tokens ? run.bytes / r.tokens : null]),
    );
    const table = dataTable("Sweep on the input text", ["tokenizer", "vocab size", "tokens", "bytes/token"], rows, {
      testid: "sweep-table",
    });
    table.classList.add("tall");
    sweepOut.replaceChildren(chart, table);
  }

  return { refresh: checks.refresh };
}

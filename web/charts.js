// Plots of the Stats view, drawn with Chart.js (npm `chart.js`, copied by build_wasm.py to
// vendor/chart.umd.min.js; never from a CDN: the page works offline).
//
// - The library is loaded on first use (it is ~200 KB and only the Stats view needs it). It is
//   a UMD build: imported as a module, it defines globalThis.Chart.
// - Colours come from the page's CSS variables (analysis.css), read when a chart is drawn and
//   again when the colour scheme changes, so a plot is readable in light and in dark mode.
// - Each plot sits in a box whose height the caller gives (bars per row, so labels never
//   overlap) and whose width follows the page, down to 420 px and below.
// - A canvas is an image to assistive technology: it gets role="img" and a label, and the view
//   shows the same numbers in a table next to it.

import { el } from "./dom.js";

let chartLib = null;
const charts = new Set();

export function loadChartLibrary() {
  chartLib ||= import("./vendor/chart.umd.min.js").then(() => {
    if (!globalThis.Chart) throw new Error("vendor/chart.umd.min.js did not define Chart");
    return globalThis.Chart;
  });
  return chartLib;
}

function theme() {
  const css = getComputedStyle(document.documentElement);
  const v = (name) => css.getPropertyValue(name).trim();
  return {
    fg: v("--fg"),
    muted: v("--muted"),
    grid: v("--border"),
    series: [1, 2, 3, 4, 5, 6].map((k) => v(`--chart-${k}`)),
  };
}

function styleOptions(t, options) {
  const axis = (a) =>
    a && {
      ...a,
      ticks: { ...a.ticks, color: t.fg },
      grid: { ...a.grid, color: t.grid },
      title: a.title && { ...a.title, color: t.fg },
    };
  return { ...options, scales: { x: axis(options.scales.x), y: axis(options.scales.y) } };
}

function colour(datasets, t, fill) {
  return datasets.map((d, k) => {
    const c = t.series[k % t.series.length];
    return { ...d, backgroundColor: c, borderColor: c, pointBackgroundColor: c, fill };
  });
}

// A chart in a fresh box: {type: "bar"|"line", labels, datasets: [{label, data}], axes, height}.
// axes: {x: {title, log}, y: {title}, horizontal}. Returns the box (append it where it belongs).
export async function drawChart({ type, labels, datasets, axes, height, label, testid }) {
  const Chart = await loadChartLibrary();
  const canvas = el("canvas", { role: "img", "aria-label": `${label} (the numbers are in the table below)` });
  const box = el("div", { class: "chart-box", "data-testid": testid }, canvas);
  box.style.height = `${height}px`;
  const t = theme();
  const valueAxis = (title, log = false) => ({
    type: log ? "logarithmic" : "linear",
    beginAtZero: !log,
    title: { display: true, text: title, font: { size: 12 } },
    ticks: {},
    grid: {},
  });
  const horizontal = Boolean(axes.horizontal);
  const options = {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    indexAxis: horizontal ? "y" : "x",
    plugins: {
      legend: { display: datasets.length > 1, labels: { color: t.fg, boxWidth: 14 } },
      tooltip: { enabled: true },
    },
    scales: {
      x: type === "line" ? valueAxis(axes.x.title, axes.x.log) : horizontal ? valueAxis(axes.x.title) : { ticks: {}, grid: {} },
      y: horizontal ? { ticks: { autoSkip: false }, grid: {} } : valueAxis(axes.y.title),
    },
  };
  if (type === "line") options.scales.x.ticks = { callback: (v) => compactTick(v) };
  const chart = new Chart(canvas, {
    type,
    data: { labels, datasets: colour(datasets, t, false) },
    options: styleOptions(t, options),
  });
  chart.$base = { datasets, options };
  charts.add(chart);
  return box;
}

// 1000 -> "1k", 131072 -> "131k": log-axis ticks stay short at 420 px.
function compactTick(v) {
  if (!/^[125]0*$/.test(String(v))) return "";
  return v >= 1000 ? `${v / 1000}k` : String(v);
}

// Forget charts whose box left the page (a view redrew), so recolouring skips them.
export function destroyChartsIn(node) {
  for (const chart of charts) {
    if (node.contains(chart.canvas)) {
      chart.destroy();
      charts.delete(chart);
    }
  }
}

matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
  const t = theme();
  for (const chart of charts) {
    chart.options = styleOptions(t, chart.$base.options);
    chart.options.plugins.legend.labels.color = t.fg;
    chart.data.datasets = colour(chart.$base.datasets, t, false);
    chart.update();
  }
});

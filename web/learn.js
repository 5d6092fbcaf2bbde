// The Learn view: watch BPE training merge by merge, on a small corpus, in the page.
//
// Why it looks like this:
// - The worker computes the whole run at once (tokenizer.learn.handle, Python): every step's
//   winning pair, its count, the top pairs before the merge, the tie rule, and for the shown
//   part of the corpus one number per unit boundary: the step that removed it. So Step, Back
//   and Play never wait for the worker; after k merges the tokens are the runs between
//   boundaries not yet removed (cut < 0 or cut >= k), and the newest token is the one holding
//   a boundary with cut == k - 1. tokenizer.learn.render is the same rule in Python, and the
//   browser test compares the two.
// - Changing the corpus or an option only marks the result stale; the next Step / Play / Reset
//   asks the worker again, so typing never queues training runs.
// - All text from the user goes into the DOM with textContent, never as HTML.
//
// Export: mountLearnView(root, app); app.rpc(op, payload) talks to the worker,
// app.addLearnedTokenizer(request) puts a byte-level result into the comparison, and app.names
// (manifest.json) lists the split patterns and tie-break rules the library knows.

import { el } from "./dom.js";
import { nameLabel, visible } from "./format.js";

const PRESETS = {
  "nation station ration": "nation station ration",
  "the cat sat the mat": "the cat sat the mat",
  "low lower lowest newer wider (Sennrich et al.)":
    "low low low low low lower lower newer newer newer newer newer newer wider wider wider new new",
  "a paragraph": [
    "Byte pair encoding starts from single bytes and repeatedly merges the most frequent adjacent pair",
    "into a new token. Frequent words end up as single tokens, rare words are spelled out in pieces,",
    "and nothing is ever out of vocabulary: every string can still be written with the 256 bytes.",
    "The order of the merges is the tokenizer: encoding replays them, lowest rank first.",
  ].join("\n"),
};
const SPEEDS = [1, 2, 5, 10, 25];
const utf8 = new TextEncoder();


function ensureStylesheet() {
  if (document.querySelector("link[data-learn-css]")) return;
  const href = new URL("learn.css", import.meta.url).href;
  document.head.append(el("link", { rel: "stylesheet", href, "data-learn-css": "1" }));
}

// Tokens of one piece after k merges: [id, text, newest] each (tokenizer.learn.render's rule).
export function pieceTokens(result, piece, k) {
  const [text, cuts] = piece;
  const units = result.mode === "bytes" ? utf8.encode(text) : Array.from(text);
  const tokens = [];
  let start = 0;
  for (let j = 0; j < units.length; j++) {
    const last = j === units.length - 1;
    if (!last && cuts[j] >= 0 && cuts[j] < k) continue;
    let top = -1;
    for (let i = start; i < j; i++) top = Math.max(top, cuts[i]);
    let id;
    let shown;
    if (result.mode === "bytes") {
      id = top >= 0 ? result.steps[top].id : units[start];
      shown = result.vocab[id];
    } else {
      shown = units.slice(start, j + 1).join("") + (last ? "</w>" : "");
      id = top >= 0 ? result.steps[top].id : result.symbolId.get(shown);
    }
    tokens.push([id, shown, k > 0 && top === k - 1]);
    start = j + 1;
  }
  return tokens;
}

export function mountLearnView(root, app) {
  ensureStylesheet();
  root.classList.add("learn-view");
  root.setAttribute("aria-label", "Learn: step through BPE training");
  root.replaceChildren();

  // ----- controls ---------------------------------------------------------------------------
  const preset = el("select", { "data-testid": "learn-preset", "aria-label": "example corpus" });
  preset.append(new Option("examples…", ""));
  for (const name of Object.keys(PRESETS)) preset.append(new Option(name, name));
  const corpus = el("textarea", {
    "data-testid": "learn-corpus",
    class: "learn-corpus",
    rows: 3,
    spellcheck: false,
    "aria-label": "corpus to learn from",
  });
  corpus.value = PRESETS["nation station ration"];
  const mode = el("select", { "data-testid": "learn-mode", "aria-label": "kind of BPE" });
  mode.append(new Option("byte-level (GPT style)", "bytes"), new Option("classic (characters + </w>)", "classic"));
  const pattern = el("select", { "data-testid": "learn-pattern", "aria-label": "split pattern" });
  for (const p of [...app.names.patterns, "custom"]) pattern.append(new Option(nameLabel("pattern", p), p));
  pattern.value = app.names.default_pattern;
  const regex = el("input", {
    type: "text", class: "learn-regex", spellcheck: false, placeholder: String.raw`e.g. \p{L}+|\p{N}+|\s+`,
    value: String.raw` ?\p{L}+| ?\p{N}+| ?[^\p{L}\p{N}\s]+|\s+`, "data-testid": "learn-regex", "aria-label": "custom split regex",
  });
  const tie = el("select", { "data-testid": "learn-tie-break", "aria-label": "tie-break rule" });
  for (const t of app.names.tie_breaks) tie.append(new Option(nameLabel("tie_break", t), t));
  tie.value = app.names.default_tie_break;
  // The library's defaults and limit (manifest.json's names, from tokenizer/web/learn.py and
  // train.py): an empty count field means the default.
  const learnMerges = app.names.learn_merges;
  const merges = el("input", {
    type: "number", min: 0, max: learnMerges.max, value: learnMerges.default, class: "learn-num",
    "data-testid": "learn-num-merges", "aria-label": "number of merges",
  });
  const minFreq = el("input", {
    type: "number", min: 1, value: app.names.default_min_frequency, class: "learn-num",
    "data-testid": "learn-min-frequency", "aria-label": "minimum pair count",
  });
  const field = (label, control) => el("label", { class: "learn-field" }, el("span", { class: "learn-label", text: label }), control);
  const patternField = field("pattern", pattern);
  const regexField = field("split regex", regex);
  const tieField = field("tie-break", tie);

  const back = el("button", { type: "button", "data-testid": "learn-back", text: "◀ Back", "aria-keyshortcuts": "ArrowLeft" });
  const step = el("button", { type: "button", "data-testid": "learn-step", text: "Step ▶", "aria-keyshortcuts": "ArrowRight" });
  const play = el("button", { type: "button", "data-testid": "learn-play", text: "Play", "aria-pressed": "false" });
  const reset = el("button", { type: "button", "data-testid": "learn-reset", text: "Reset" });
  const speed = el("select", { "data-testid": "learn-speed", "aria-label": "play speed" });
  for (const s of SPEEDS) speed.append(new Option(`${s} / s`, String(s)));
  speed.value = "2";
  const stepCount = el("span", { "data-testid": "learn-step-count", class: "learn-step-count", role: "status", text: "" });
  const use = el("button", { type: "button", "data-testid": "learn-use", text: "Use as tokenizer" });
  const useNote = el("span", { "data-testid": "learn-use-note", class: "learn-note", role: "status" });
  const status = el("div", { "data-testid": "learn-status", class: "learn-status", role: "status", "aria-live": "polite" });
  const error = el("div", { "data-testid": "learn-error", class: "learn-error", role: "alert", hidden: true });

  // ----- what one step shows ------------------------------------------------------------------
  const winner = el("div", { "data-testid": "learn-winner", class: "learn-winner" });
  const tieNote = el("div", { "data-testid": "learn-tie", class: "learn-note" });
  const pairsBody = el("tbody");
  const pairs = el(
    "table",
    { "data-testid": "learn-pairs", class: "learn-pairs" },
    el("caption", { class: "learn-caption", text: "Top pairs" }),
    el("thead", {}, el("tr", {}, el("th", { text: "pair" }), el("th", { text: "makes" }), el("th", { text: "count" }))),
    pairsBody,
  );
  // The two boxes that scroll take focus, so the keyboard can scroll them (and arrows still step).
  const rendered = el("div", {
    "data-testid": "learn-rendered",
    class: "learn-rendered scroll-box",
    role: "group",
    "aria-label": "the corpus as tokens",
    tabIndex: 0,
  });
  const truncNote = el("div", { class: "learn-note", hidden: true });
  const mergeList = el("ol", { "data-testid": "learn-merges", class: "learn-merges scroll-box", "aria-label": "merges so far", tabIndex: 0 });

  root.append(
    el("h2", { class: "learn-title", text: "Learn: step through BPE training" }),
    el("div", { class: "learn-row" }, field("examples", preset), field("mode", mode), patternField, regexField, tieField,
      field("merges (max)", merges), field("min count", minFreq)),
    corpus,
    el("div", { class: "learn-row", role: "toolbar", "aria-label": "training steps" },
      reset, back, step, play, field("speed", speed), stepCount, el("span", { class: "learn-spacer" }), use, useNote),
    status,
    error,
    el("div", { class: "learn-grid" },
      el("div", { class: "learn-col" }, winner, tieNote, pairs),
      el("div", { class: "learn-col learn-wide" }, rendered, truncNote),
      el("div", { class: "learn-col" }, el("div", { class: "learn-caption", text: "Merges" }), mergeList)),
  );

  // ----- state --------------------------------------------------------------------------------
  let result = null; // the worker's answer for `request`
  let request = null;
  let k = 0; // merges applied
  let timer = null;
  let busy = null; // the pending learn promise

  // A count field as the library is to read it: an empty field (or one the browser could not
  // read as a number) is the library's default; anything else goes as typed, so that the
  // library's error says what is wrong (0 read as empty learned 200 merges, 5000 was quietly 2000,
  // 1.5 merges learned 1, a min count of 0 or -5 learned with 1). Only a count past 2**53
  // ("1e21"), which would reach Python as a float, is cut to 2**53 - 1: no pair occurs that often.
  function countField(input, fallback) {
    const typed = input.value.trim() === "" ? Number.NaN : Number(input.value);
    return Number.isFinite(typed) ? Math.min(Number.MAX_SAFE_INTEGER, typed) : fallback;
  }

  function currentRequest() {
    const req = {
      corpus: corpus.value,
      mode: mode.value,
      tie_break: tie.value,
      num_merges: countField(merges, learnMerges.default),
      min_frequency: countField(minFreq, app.names.default_min_frequency),
    };
    if (mode.value === "bytes") req.pattern = pattern.value === "custom" ? regex.value : pattern.value;
    return req;
  }

  function stale() {
    stop();
    result = null;
    stepCount.textContent = "";
    root.classList.add("learn-stale");
    status.textContent = "options changed: Step, Play or Reset learns again";
    syncButtons();
  }

  function showError(message) {
    error.textContent = message;
    error.hidden = !message;
  }

  async function ensureResult() {
    if (result) return true;
    if (busy) return busy;
    const req = currentRequest();
    status.textContent = "learning… (in the worker; the page stays usable)";
    showError("");
    const t0 = performance.now();
    busy = app
      .rpc("learn", { request: req })
      .then((res) => {
        result = res;
        root.classList.remove("learn-stale");
        result.symbolId = new Map(res.vocab.map((s, i) => [s, i]));
        request = req;
        k = 0;
        mergeList.replaceChildren();
        renderedK = -1;
        const ms = Math.round(performance.now() - t0);
        const n = res.steps.length;
        const dropped = res.dropped_bytes
          ? ` · its split regex skips ${res.dropped_bytes.toLocaleString("en")} of ` +
            `${res.stats.bytes.toLocaleString("en")} bytes of the corpus (not learned from)`
          : "";
        status.textContent =
          `${n} merge${n === 1 ? "" : "s"} learned in ${ms} ms` +
          (res.stop_reason ? ` · stopped: ${res.stop_reason}` : "") +
          dropped;
        return true;
      })
      .catch((e) => {
        status.textContent = "";
        showError(e && e.message ? e.message : String(e));
        return false;
      })
      .finally(() => {
        busy = null;
        syncButtons();
      });
    syncButtons();
    return busy;
  }

  function pairText(a, b) {
    return `${visible(result.vocab[a])} + ${visible(result.vocab[b])}`;
  }

  function show() {
    const n = result ? result.steps.length : 0;
    stepCount.textContent = result ? `step ${k} / ${n}` : "";
    stepCount.dataset.step = String(k);
    if (!result) return syncButtons();
    // the pair table: counts before merge k-1 (what decided it), or before merge 0 at the start
    const shown = k > 0 ? result.steps[k - 1] : result.steps[0];
    pairsBody.replaceChildren();
    if (shown) {
      for (const [a, b, count] of shown.top) {
        const isWinner = k > 0 && a === shown.pair[0] && b === shown.pair[1];
        const made = isWinner ? visible(result.vocab[shown.id]) : visible(result.vocab[a] + result.vocab[b]);
        pairsBody.append(
          el("tr", { "data-testid": "learn-pair-row", class: isWinner ? "learn-win" : "", "aria-current": isWinner ? "true" : null },
            el("td", { class: "learn-mono", text: pairText(a, b) }),
            el("td", { class: "learn-mono", text: made }),
            el("td", { class: "learn-count", text: String(count) })),
        );
      }
    }
    pairs.querySelector("caption").textContent =
      k > 0 ? `Pair counts before merge ${k}` : shown ? "Pair counts now: Step merges the top one" : "No pairs to merge";
    if (k > 0) {
      const s = result.steps[k - 1];
      winner.textContent = `${pairText(s.pair[0], s.pair[1])} → ${visible(result.vocab[s.id])} ×${s.count}`;
      const others = result.mode === "classic" ? s.n_tied : s.tied_with.length;
      tieNote.textContent = s.tied
        ? `tie: ${others}${result.mode === "bytes" && others >= 5 ? "+" : ""} other pair${others === 1 ? "" : "s"} also occur ${s.count}×; decided by ${s.rule}`
        : "the count alone decided";
      tieNote.dataset.tied = String(s.tied);
    } else {
      winner.textContent = n ? "Press Step to make the first merge" : "Nothing to merge";
      tieNote.textContent = "";
      delete tieNote.dataset.tied;
    }
    renderCorpus(false);
    syncMergeList();
    syncButtons();
  }

  // The corpus view. A piece's tokens change only at the steps that removed one of its
  // boundaries, so moving from step a to b re-renders just the pieces with a cut in
  // [min(a, b) - 1, max(a, b)) (the -1: the previous newest token loses its highlight).
  let pieceEls = [];
  let piecesAt = []; // step -> indices of the pieces holding a boundary removed at that step
  let renderedK = -1;

  function wordElement(piece) {
    const word = el("span", { class: "learn-word" });
    for (const [id, text, newest] of pieceTokens(result, piece, k)) {
      const span = el("span", { "data-testid": "learn-token", class: newest ? "learn-tok learn-new" : "learn-tok", title: `id ${id}` });
      span.dataset.id = String(id);
      if (result.mode === "classic" && text.endsWith("</w>")) {
        span.append(text.slice(0, -4), el("small", { class: "learn-eow", text: "</w>" }));
      } else span.textContent = text;
      word.append(span);
    }
    return word;
  }

  function renderCorpus(full) {
    const pieces = result.view.pieces;
    if (full || renderedK < 0) {
      piecesAt = result.steps.map(() => []);
      pieces.forEach((piece, p) => {
        if (typeof piece === "string") return;
        for (const c of piece[1]) {
          const list = c >= 0 && c < piecesAt.length ? piecesAt[c] : null;
          if (list && list[list.length - 1] !== p) list.push(p);
        }
      });
      pieceEls = pieces.map((piece) => (typeof piece === "string" ? el("span", { class: "learn-gap", text: piece }) : wordElement(piece)));
      rendered.replaceChildren(...pieceEls);
      truncNote.hidden = !result.view.truncated;
      truncNote.textContent = result.view.truncated ? "Showing the start of the corpus; training used all of it." : "";
    } else if (renderedK !== k) {
      const touched = new Set();
      for (let s = Math.max(0, Math.min(renderedK, k) - 1); s < Math.max(renderedK, k); s++) {
        for (const p of piecesAt[s] || []) touched.add(p);
      }
      for (const p of touched) {
        const fresh = wordElement(pieces[p]);
        pieceEls[p].replaceWith(fresh);
        pieceEls[p] = fresh;
      }
    }
    renderedK = k;
  }

  function syncMergeList() {
    const items = mergeList.children;
    while (items.length > k) items[items.length - 1].remove();
    for (let i = items.length; i < k; i++) {
      const s = result.steps[i];
      mergeList.append(
        el("li", { "data-testid": "learn-merge", class: "learn-mono" },
          `${visible(result.vocab[s.id])}`, el("span", { class: "learn-muted", text: ` = ${pairText(s.pair[0], s.pair[1])} (${s.count})` })),
      );
    }
    for (const li of items) li.classList.remove("learn-new");
    if (k > 0) {
      items[k - 1].classList.add("learn-new");
      if (timer) items[k - 1].scrollIntoView({ block: "nearest" });
    }
  }

  function syncButtons() {
    const n = result ? result.steps.length : 0;
    const waiting = !!busy;
    back.disabled = waiting || !result || k === 0;
    step.disabled = waiting || (!!result && k >= n);
    play.disabled = waiting || (!!result && k >= n && !timer);
    reset.disabled = waiting;
    const classicMode = mode.value === "classic";
    use.disabled = waiting || classicMode || !result || k === 0;
    use.title = classicMode
      ? "Classic BPE (characters + </w>, words split at spaces) is not byte-level, so it cannot join the byte-level comparison."
      : "Add a tokenizer made of the merges so far to the comparison above";
    if (classicMode) useNote.textContent = "classic BPE is not byte-level: it cannot join the comparison";
    else if (useNote.dataset.kind === "classic") useNote.textContent = "";
    useNote.dataset.kind = classicMode ? "classic" : "";
    patternField.hidden = classicMode;
    regexField.hidden = classicMode || pattern.value !== "custom";
    tieField.hidden = classicMode;
  }

  // `to(k)` is evaluated after a (re)learn, which starts again from step 0.
  async function go(to) {
    if (!(await ensureResult())) return;
    k = Math.max(0, Math.min(result.steps.length, to(k)));
    show();
  }

  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    play.textContent = "Play";
    play.setAttribute("aria-pressed", "false");
  }

  async function togglePlay() {
    if (timer) {
      stop();
      return syncButtons();
    }
    if (!(await ensureResult())) return;
    if (k >= result.steps.length) k = 0;
    play.textContent = "Pause";
    play.setAttribute("aria-pressed", "true");
    const tick = () => {
      if (!result || k >= result.steps.length) {
        stop();
        return syncButtons();
      }
      k += 1;
      show();
      if (k >= result.steps.length) {
        stop();
        syncButtons();
      }
    };
    timer = setInterval(tick, 1000 / Number(speed.value));
    tick();
  }

  step.addEventListener("click", () => go((i) => i + 1));
  back.addEventListener("click", () => {
    stop();
    go((i) => i - 1);
  });
  reset.addEventListener("click", () => {
    stop();
    result = null;
    go(() => 0);
  });
  play.addEventListener("click", togglePlay);
  speed.addEventListener("change", () => {
    if (timer) {
      stop();
      togglePlay();
    }
  });
  for (const control of [corpus, regex, mode, pattern, tie, merges, minFreq]) {
    control.addEventListener(control === corpus || control === regex ? "input" : "change", stale);
  }
  preset.addEventListener("change", () => {
    if (!preset.value) return;
    corpus.value = PRESETS[preset.value];
    preset.value = "";
    stale();
  });
  // Arrow keys step when focus is in the view but not in a text field.
  root.addEventListener("keydown", (e) => {
    if (e.target.closest("textarea, input, select") || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowRight" && !step.disabled) {
      e.preventDefault();
      go((i) => i + 1);
    } else if (e.key === "ArrowLeft" && !back.disabled) {
      e.preventDefault();
      stop();
      go((i) => i - 1);
    }
  });
  use.addEventListener("click", async () => {
    if (!result || !request) return;
    use.disabled = true;
    useNote.textContent = "adding…";
    try {
      const info = await app.addLearnedTokenizer({ ...request, step: k });
      useNote.textContent = `added as ${info.name}`;
      useNote.dataset.name = info.name;
    } catch (e) {
      useNote.textContent = "";
      showError(e && e.message ? e.message : String(e));
    } finally {
      syncButtons();
    }
  });

  syncButtons();
  status.textContent = "Step, Play or Reset learns merges from the corpus above.";
}

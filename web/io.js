// Input and output besides typing: tokenizer files loaded from disk (or dropped on the page),
// tokenizers fetched from the local server (for train.js), the share button, the decode box.

import { el } from "./dom.js";
import { groupDigits as fmt } from "./format.js";
import { addPanel, schedule } from "./panels.js";
import { tokenFragment } from "./render.js";
import { MAX_LINK_CHARS, shareLink, shareLinkIfOpenable, writeShareLink } from "./share.js";
import { $, panelByName } from "./state.js";
import { onRestart, rpc } from "./worker-client.js";

// A tokenizer file bigger than this is refused before it is read: o200k_base's HF tokenizer.json,
// the biggest real one, is about 9 MB, and Python needs several times a file's size to parse it.
const MAX_LOAD_BYTES = 64 << 20;
// JSON nesting refused before parsing: a tokenizer file nests 5 levels, and Python's json parser
// recurses once per level, so 100,000 `[` would overflow Pyodide's stack (a fatal error).
const MAX_JSON_DEPTH = 100;

// `about` says what the message is about ("link": an opened share link), so that a message
// about one thing is taken away only by news of that thing (clearLoadMessage).
export function showLoadMessage(msg, isError, about = "") {
  const box = $("#load-message");
  box.textContent = msg;
  box.hidden = false;
  box.classList.toggle("error", !!isError);
  box.dataset.about = about;
}

// Hides the message if it is about `about`: a share link opened without a problem takes away
// what the page said about the link before it, which otherwise stood under the new link as if
// it named an encoding the page lacks; a message about files stays.
export function clearLoadMessage(about) {
  const box = $("#load-message");
  if (box.hidden || box.dataset.about !== about) return;
  box.hidden = true;
  box.textContent = "";
  box.classList.remove("error");
}

// ----- loading tokenizers: files from disk, or from the server (train.js) --------------------

// The user's tokenizers by name, with what made them: a restarted worker (worker-client.js's
// watchdog) gets back those with a panel, and loading the same files again shows the loaded one.
const userTokenizers = new Map(); // name -> {op, payload, info}

const sameFiles = (a, b) => a.tiktoken === b.tiktoken && a.json === b.json && a.hf === b.hf;

onRestart((restoreRpc) =>
  Promise.all(
    [...userTokenizers].map(([name, entry]) => {
      if (!panelByName(name)) {
        userTokenizers.delete(name); // gone from the new worker: a later load starts afresh
        return null;
      }
      const payload = entry.op === "load" ? { ...entry.payload, forceName: name } : entry.payload;
      return restoreRpc(entry.op, payload);
    }),
  ),
);

// train.js: the tokenizers loaded from the user's disk that have a panel, with the File objects
// as the user gave them, so that one can be sent to the server as the base of an extension.
export function loadedFromDisk() {
  return [...userTokenizers]
    .filter(([name, entry]) => entry.files && panelByName(name))
    .map(([name, entry]) => ({ name, files: entry.files, info: entry.info }));
}

export async function loadIntoWorker(payload, files = null) {
  if (!payload.forceName) {
    for (const [name, entry] of userTokenizers) {
      if (entry.op === "load" && sameFiles(entry.payload, payload)) {
        const shown = !!panelByName(name);
        if (!shown) addPanel(name, { info: entry.info });
        return { ...entry.info, alreadyShown: shown };
      }
    }
  }
  const { info } = await rpc("load", payload);
  userTokenizers.set(info.name, { op: "load", payload, info, files });
  await addPanel(info.name, { info });
  return info;
}

export async function addTokenizerFromFiles(tiktokenText, jsonText, filename = "uploaded") {
  return loadIntoWorker({ tiktoken: tiktokenText, json: jsonText, filename });
}

export async function addTokenizerFromServer(name) {
  const get = async (ext) => {
    const r = await fetch(`/api/tokenizers/${encodeURIComponent(name)}.${ext}`);
    if (!r.ok) throw new Error(`tokenizer ${name}: ${ext} file: HTTP ${r.status}`);
    return r.text();
  };
  const [tiktoken, json] = await Promise.all([get("tiktoken"), get("json")]);
  const info = await loadIntoWorker({ tiktoken, json, filename: `${name}.json`, forceName: name });
  const panel = panelByName(name);
  if (panel) schedule(panel);
  return info;
}

// Learn view (web/learn.js): a step-through result becomes a tokenizer in the comparison.
export async function addLearnedTokenizer(request) {
  const { info } = await rpc("learn_adopt", { request });
  userTokenizers.set(info.name, { op: "learn_adopt", payload: { request }, info });
  await addPanel(info.name, { info });
  return info;
}

// How deep a JSON text nests, strings skipped; stops counting past `limit`.
export function jsonDepth(text, limit = MAX_JSON_DEPTH) {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote, past escapes
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return max;
}

// A tokenizer file's text as the library reads one (formats.decode_utf8): UTF-8, a byte-order
// mark kept for the library to name, and a byte that is not UTF-8 refused with its offset.
// file.text() made such a byte U+FFFD, so a broken .model loaded as another tokenizer (a special
// token "caf\uFFFD") where the command line refuses the file.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export async function readUtf8(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new Error(`${file.name}: not UTF-8 text (byte offset ${firstInvalidUtf8(bytes)})`);
  }
}

// Where the first sequence that is not UTF-8 starts, as Python's UnicodeDecodeError.start says.
function firstInvalidUtf8(b) {
  for (let i = 0; i < b.length; ) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    const n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80; // no overlong forms
    const hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf; // no surrogates, nothing past U+10FFFF
    if (c < 0xc2 || c > 0xf4 || !(b[i + 1] >= lo && b[i + 1] <= hi)) return i;
    for (let k = 2; k < n; k++) if (!(b[i + k] >= 0x80 && b[i + k] <= 0xbf)) return i;
    i += n;
  }
  return b.length;
}

async function readChecked(file) {
  if (file.size > MAX_LOAD_BYTES) {
    throw new Error(
      `${file.name} is ${(file.size / 2 ** 20).toFixed(0)} MB; tokenizer files up to ` +
        `${MAX_LOAD_BYTES / 2 ** 20} MB can be loaded`,
    );
  }
  const text = await readUtf8(file);
  if (/\.json$/i.test(file.name) && jsonDepth(text) > MAX_JSON_DEPTH) {
    throw new Error(
      `${file.name} nests JSON more than ${MAX_JSON_DEPTH} levels deep; a tokenizer file nests ` +
        "about 5: this is not a tokenizer file",
    );
  }
  return text;
}

// A .tiktoken holds ranks only: alone, it is split with the library's default pattern, which
// is not the one its tokenizer may use (tiktoken's own r50k_base.tiktoken is gpt2's pattern), so
// its ids would differ from that tokenizer's without a word.
const LONE_TIKTOKEN = (info) =>
  `with the ${info.pattern} split pattern: a .tiktoken file holds no pattern (or special tokens); ` +
  "load it together with its .json for its own";

async function loadFiles(fileList) {
  const files = [...fileList];
  const stems = new Map();
  for (const f of files) {
    const m = f.name.match(/^(.*?)\.(tiktoken|json|model)$/i);
    if (!m) {
      showLoadMessage(`${f.name}: expected a .tiktoken, .json (ours or a Hugging Face tokenizer.json) or minbpe .model file`, true);
      return;
    }
    const entry = stems.get(m[1]) || {};
    const kind = m[2].toLowerCase();
    if (entry[kind]) {
      // from two folders, or a.json and a.JSON: the later one replaced the first without a word
      showLoadMessage(`${entry[kind].name} and ${f.name}: two .${kind} files for ${m[1]}; load them one at a time`, true);
      return;
    }
    entry[kind] = f;
    stems.set(m[1], entry);
  }
  // Each tokenizer is loaded or refused on its own: a refused one stopped the loop, so the ones
  // after it were never loaded and the message named neither them nor those loaded before it.
  const loaded = [];
  const refused = [];
  for (const [stem, entry] of stems) {
    try {
      if (entry.model && (entry.json || entry.tiktoken)) {
        throw new Error(`a minbpe .model holds the whole tokenizer: load ${entry.model.name} on its own`);
      }
      const payload = { filename: (entry.model || entry.json || entry.tiktoken).name };
      // A minbpe .model goes as text; the library's reader knows it by the .model name.
      if (entry.model) payload.json = await readChecked(entry.model);
      if (entry.tiktoken) {
        payload.tiktoken = await readChecked(entry.tiktoken);
        payload.tiktokenName = entry.tiktoken.name; // an error in it names it, not the .json
      }
      // Ours or a Hugging Face tokenizer.json: the library tells them apart by their keys. (The
      // page guessed from the text, and took our .json with a "model" in its metadata for HF's.)
      if (entry.json) payload.json = await readChecked(entry.json);
      const info = await loadIntoWorker(payload, [entry.model, entry.tiktoken, entry.json].filter(Boolean));
      if (info.alreadyShown) loaded.push(`nothing new: ${stem} is already loaded, as ${info.name}`);
      else if (entry.tiktoken && !entry.json) loaded.push(`loaded ${info.name} (${info.n_vocab} ids) ${LONE_TIKTOKEN(info)}`);
      else loaded.push(`loaded ${info.name} (${info.n_vocab} ids)`);
    } catch (e) {
      refused.push(`${stem}: ${e.message}`);
    }
  }
  if (refused.length || loaded.length) showLoadMessage([...refused, ...loaded].join("; "), refused.length > 0);
}

$("#load-files").addEventListener("change", (e) => {
  loadFiles(e.target.files);
  e.target.value = "";
});
document.addEventListener("dragover", (e) => {
  if (e.dataTransfer && [...e.dataTransfer.types].includes("Files")) {
    e.preventDefault();
    document.body.classList.add("dropping");
  }
});
document.addEventListener("dragleave", () => document.body.classList.remove("dropping"));
document.addEventListener("drop", (e) => {
  if (!e.dataTransfer || !e.dataTransfer.files.length) return;
  e.preventDefault();
  document.body.classList.remove("dropping");
  loadFiles(e.dataTransfer.files);
});

// ----- share button --------------------------------------------------------------------------

$("#share").addEventListener("click", async () => {
  writeShareLink();
  const url = shareLinkIfOpenable();
  if (!url) {
    const mb = (shareLink().length / 2 ** 20).toFixed(1);
    showLoadMessage(
      `this text is too long for a share link: the link would be ${mb} MB of address, and browsers ` +
        `open links of at most ${MAX_LINK_CHARS / 2 ** 20} MB; share a shorter text (or send the text as a file)`,
      true,
    );
    return;
  }
  try {
    await navigator.clipboard.writeText(url);
    showLoadMessage("share link copied to the clipboard", false);
  } catch {
    showLoadMessage(url, false);
  }
});

// ----- decode box ----------------------------------------------------------------------------

// Ids are read strictly: non-negative integers separated by commas and/or whitespace, optionally
// inside one pair of brackets (a Python or JSON list). Anything else ("abc", "1.5", "1e3",
// "0x10", "-1") is an error naming the item, never read as some other ids.
const MAX_DECODE_IDS = 1_000_000; // about 4 MB of text; beyond that the box is the wrong tool
const MAX_ID = 2 ** 31 - 1; // ids are int32 everywhere (the library's limit too)
const PARSE_SLICE = 1 << 18; // characters parsed per main-thread task (a few ms)
// What the box shows of a long result: each costs layout time in one main-thread task.
const SHOW_TOKENS = 1000; // decoded tokens shown as spans
const SHOW_CHARS = 20_000; // decoded characters shown
// Bytes of the decoded tokens shown as spans: the spans hold each token's whole text, and 10 ids
// of a 2 MB token made 20 MB of spans, a 2.5 s freeze of the page.
const SHOW_TOKEN_BYTES = 1 << 16;

const isDigit = (c) => c >= 0x30 && c <= 0x39;
const isSeparator = (c) => c === 0x2c || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

export class IdsError extends Error {}

// -> Int32Array of the ids; throws IdsError. Parses in slices, yielding between them, so a
// million ids never block the page.
export async function parseIds(source) {
  let text = source.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  const ids = new Int32Array(Math.min(MAX_DECODE_IDS, (text.length >> 1) + 1));
  let n = 0;
  let i = 0;
  while (i < text.length) {
    const stop = Math.min(text.length, i + PARSE_SLICE);
    while (i < stop) {
      const c = text.charCodeAt(i);
      if (isSeparator(c)) {
        i++;
        continue;
      }
      let j = i;
      let value = 0;
      while (j < text.length && isDigit(text.charCodeAt(j))) value = value * 10 + text.charCodeAt(j++) - 0x30;
      if (j === i || (j < text.length && !isSeparator(text.charCodeAt(j)))) {
        while (j < text.length && !isSeparator(text.charCodeAt(j))) j++;
        const item = text.slice(i, Math.min(j, i + 40));
        throw new IdsError(`item ${n + 1}, "${item}", is not an id: ids are non-negative integers like 9906`);
      }
      if (value > MAX_ID) {
        throw new IdsError(`item ${n + 1}, ${text.slice(i, Math.min(j, i + 40))}, is too big: ids are below 2^31`);
      }
      if (n === MAX_DECODE_IDS) {
        throw new IdsError(`more than ${fmt(MAX_DECODE_IDS)} ids: decode at most that many at a time`);
      }
      ids[n++] = value;
      i = j;
    }
    if (i < text.length) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  if (!n) throw new IdsError("no ids: type some, like 9906, 11, 1917");
  return ids.slice(0, n);
}

// How many of the first tokens (of byte lengths `lens`) are shown: at most SHOW_TOKENS, and no
// more than SHOW_TOKEN_BYTES of them.
function shownTokens(lens) {
  let n = 0;
  let bytes = 0;
  while (n < Math.min(lens.length, SHOW_TOKENS) && (bytes += lens[n]) <= SHOW_TOKEN_BYTES) n++;
  return n;
}

let decodeGen = 0;
async function runDecode() {
  const gen = ++decodeGen;
  const name = $("#decode-encoding").value;
  const out = $("#decode-output");
  const tokensEl = $("#decode-tokens");
  const fail = (message) => {
    out.textContent = message;
    out.classList.add("error");
    tokensEl.replaceChildren();
  };
  out.setAttribute("aria-busy", "true");
  try {
    // The select lists the panels: with none, there is no tokenizer to decode with.
    if (!name) throw new Error("no tokenizer to decode with: add a tokenizer panel first");
    const ids = await parseIds($("#decode-ids").value);
    const res = await rpc("decode", { name, ids }, [ids.buffer]);
    if (gen !== decodeGen) return;
    const n = res.ids.length;
    out.textContent = res.text.length > SHOW_CHARS ? res.text.slice(0, SHOW_CHARS) : res.text;
    out.classList.remove("error");
    out.dataset.ids = String(n);
    out.dataset.chars = String(res.text.length);
    await new Promise((resolve) => setTimeout(resolve, 0)); // the text's layout and the spans' apart
    if (gen !== decodeGen) return;
    const shown = shownTokens(res.lens);
    const frag = tokenFragment(res, shown);
    if (shown < n || res.text.length > SHOW_CHARS) {
      frag.append(
        el("p", {
          class: "muted",
          "data-testid": "decode-more",
          text:
            `showing the first ${fmt(shown)} of ${fmt(n)} tokens` +
            ` and ${fmt(Math.min(res.text.length, SHOW_CHARS))} of ` +
            `${fmt(res.text.length)} characters`,
        }),
      );
    }
    tokensEl.replaceChildren(frag);
  } catch (e) {
    if (gen === decodeGen) fail(e.message);
  } finally {
    if (gen === decodeGen) out.removeAttribute("aria-busy");
  }
}
$("#decode-run").addEventListener("click", runDecode);
// A textarea, not a one-line input: 200,000 pasted ids on one unwrapped line took 100-400 ms
// of layout per change. Enter decodes; Shift+Enter is a line break.
$("#decode-ids").addEventListener("keydown", (e) => {
  if (e.key !== "Enter" || e.shiftKey) return;
  e.preventDefault();
  runDecode();
});

// Input and output besides typing: tokenizer files loaded from disk (or dropped on the page),
// tokenizers fetched from the local server (for train.js), the share button, the decode box.

import { addPanel, schedule } from "./panels.js";
import { tokenFragment } from "./render.js";
import { shareLink, writeShareLink } from "./share.js";
import { $, panelByName } from "./state.js";
import { rpc } from "./worker-client.js";

export function showLoadMessage(msg, isError) {
  const box = $("#load-message");
  box.textContent = msg;
  box.hidden = false;
  box.classList.toggle("error", !!isError);
}

// ----- loading tokenizers: files from disk, or from the server (train.js) --------------------

export async function loadIntoWorker(payload) {
  const { info } = await rpc("load", payload);
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
  await addPanel(info.name, { info });
  return info;
}

async function loadFiles(fileList) {
  const files = [...fileList];
  const stems = new Map();
  for (const f of files) {
    const m = f.name.match(/^(.*?)(\.tiktoken|\.json)$/i);
    if (!m) {
      showLoadMessage(`${f.name}: expected a .tiktoken or .json file`, true);
      return;
    }
    const entry = stems.get(m[1]) || {};
    entry[m[2].toLowerCase() === ".json" ? "json" : "tiktoken"] = f;
    stems.set(m[1], entry);
  }
  const loaded = [];
  for (const [stem, entry] of stems) {
    try {
      const payload = { filename: entry.json ? entry.json.name : entry.tiktoken.name };
      if (entry.tiktoken) payload.tiktoken = await entry.tiktoken.text();
      if (entry.json) {
        const text = await entry.json.text();
        if (/"model"\s*:/.test(text.slice(0, 4096)) && !entry.tiktoken) payload.hf = text;
        else payload.json = text;
      }
      const info = await loadIntoWorker(payload);
      loaded.push(`${info.name} (${info.n_vocab} ids)`);
    } catch (e) {
      showLoadMessage(`${stem}: ${e.message}`, true);
      return;
    }
  }
  if (loaded.length) showLoadMessage(`loaded ${loaded.join(", ")}`, false);
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
  const url = shareLink();
  try {
    await navigator.clipboard.writeText(url);
    showLoadMessage("share link copied to the clipboard", false);
  } catch {
    showLoadMessage(url, false);
  }
});

// ----- decode box ----------------------------------------------------------------------------

async function runDecode() {
  const name = $("#decode-encoding").value;
  const out = $("#decode-output");
  const ids = ($("#decode-ids").value.match(/-?\d+/g) || []).map(Number);
  try {
    const res = await rpc("decode", { name, ids });
    out.textContent = res.text;
    out.classList.remove("error");
    $("#decode-tokens").replaceChildren(tokenFragment(res));
  } catch (e) {
    out.textContent = e.message;
    out.classList.add("error");
    $("#decode-tokens").replaceChildren();
  }
}
$("#decode-run").addEventListener("click", runDecode);
$("#decode-ids").addEventListener("keydown", (e) => e.key === "Enter" && runDecode());

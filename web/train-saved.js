// The Train panel's list of what the server stores (GET /api/tokenizers): the tokenizers trained
// or extended there, each with its downloads, "compare" and "delete", and the broken entries.
//
// A broken entry is a name the data folder holds half of (a .json without its .tiktoken after a
// crash or a half copy, a .json that does not parse, a symlink). The server lists it with the
// reason rather than hiding it, because a hidden one would keep its name taken for ever; here
// it is shown with that reason and a delete button, and the list's summary counts them.
//
// Export: savedList(app, {onError, onListing}) -> {element, refresh()}. refresh() fetches the
// listing, redraws, and hands the listing to onListing (train.js fills its "start from" select).

import { el } from "./dom.js";

export async function errorMessage(res) {
  try {
    const body = await res.json();
    if (body && body.error) return body.error;
  } catch {
    /* not JSON */
  }
  return `HTTP ${res.status} ${res.statusText}`.trim();
}

// "gpt2 + 20 merges: corpus 1,234 → 1,100 tokens (-10.9 %)", from an entry's or a job's extension;
// a base uploaded from the user's disk also names its files: "swift (swift.model) + 20 merges: …".
export function extensionLine(ext) {
  const before = ext.corpus_tokens_before;
  const after = ext.corpus_tokens_after;
  const change = before ? ` (${((100 * (after - before)) / before).toFixed(1)} %)` : "";
  const files = ext.base_files ? ` (${ext.base_files.join(" + ")})` : "";
  return `${ext.base}${files} + ${ext.added} merges: corpus ${before.toLocaleString()} → ${after.toLocaleString()} tokens${change}`;
}

export function savedList(app, { onError, onListing }) {
  const list = el("ul", { class: "train-saved-list", "data-testid": "train-saved" });
  const summary = el("summary", { text: "Trained on this server" });
  const element = el("details", { class: "train-saved" }, summary, list);

  async function remove(name, what) {
    if (!confirm(`Delete the ${what} ${name} from the server?`)) return;
    const res = await fetch(`/api/tokenizers/${encodeURIComponent(name)}`, { method: "DELETE" });
    if (!res.ok) onError(`delete ${name}: ${await errorMessage(res)}`);
    else if (app.removeTokenizer && app.listTokenizers().includes(name)) app.removeTokenizer(name);
    refresh();
  }

  function trainedItem(t, shown) {
    const add = el("button", { type: "button", text: shown ? "shown" : "compare", disabled: shown, "aria-label": `compare ${t.name}` });
    add.addEventListener("click", async () => {
      add.disabled = true;
      try {
        await app.addTokenizerFromServer(t.name);
        add.textContent = "shown";
      } catch (e) {
        add.disabled = false;
        onError(`${t.name}: ${e.message}`);
      }
    });
    const del = el("button", { type: "button", text: "delete", "aria-label": `delete ${t.name}` });
    del.addEventListener("click", () => remove(t.name, "trained tokenizer"));
    const training = (t.metadata && t.metadata.training) || {};
    const how = t.extension ? extensionLine(t.extension) : training.tie_break;
    const facts = [`${t.vocab_size} ids`, t.pattern === t.pattern_regex ? "custom pattern" : t.pattern, how].filter(Boolean);
    return el(
      "li",
      { "data-testid": "train-saved-item", "data-name": t.name },
      el("span", { class: "train-saved-name", text: t.name }),
      el("span", { class: "train-muted", text: facts.join(" · ") }),
      el("a", { href: t.files.tiktoken, download: `${t.name}.tiktoken`, text: ".tiktoken" }),
      el("a", { href: t.files.json, download: `${t.name}.json`, text: ".json" }),
      add,
      del,
    );
  }

  function brokenItem(b) {
    const del = el("button", { type: "button", text: "delete", "aria-label": `delete broken ${b.name}` });
    del.addEventListener("click", () => remove(b.name, "broken entry"));
    return el(
      "li",
      { class: "train-broken", "data-testid": "train-broken-item", "data-name": b.name },
      el("span", { class: "train-saved-name", text: b.name }),
      el("span", { class: "train-broken-tag", text: "broken" }),
      el("span", { class: "train-broken-reason", "data-testid": "train-broken-reason", text: b.reason }),
      del,
    );
  }

  async function refresh() {
    let listing;
    try {
      const res = await fetch("/api/tokenizers");
      if (!res.ok) return;
      listing = await res.json();
    } catch {
      return;
    }
    const broken = listing.broken || [];
    const shown = new Set(app.listTokenizers ? app.listTokenizers() : []);
    list.replaceChildren(...listing.trained.map((t) => trainedItem(t, shown.has(t.name))), ...broken.map(brokenItem));
    if (!listing.trained.length && !broken.length) list.append(el("li", { class: "train-muted", text: "none yet" }));
    const counts = [listing.trained.length, broken.length && `${broken.length} broken`].filter(Boolean);
    summary.textContent = `Trained on this server${counts.length ? ` (${counts.join(", ")})` : ""}`;
    onListing(listing);
  }

  return { element, refresh };
}

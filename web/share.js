// The share link: the text and the reference panels in the URL fragment (#enc=...&text=...).
// The fragment never reaches a server, so a shared text stays between the two people.

import { state } from "./state.js";
import { getText, textLength } from "./textbox.js";

// Kept current while typing, except for long text: encoding 100 KB into the URL on every pause
// would be a long main-thread task; the share button still writes it.
const LIVE_LINK_MAX = 20000; // characters
const LIVE_LINK_DELAY_MS = 300;

export function readShareLink() {
  if (!location.hash || location.hash.length < 2) return null;
  const params = new URLSearchParams(location.hash.slice(1));
  return {
    text: params.get("text"),
    encodings: (params.get("enc") || "").split(",").filter(Boolean),
  };
}

// Only the built-in encodings: a tokenizer loaded from disk or trained is not in the recipient's page.
export function shareLink() {
  const params = new URLSearchParams();
  params.set("enc", state.panels.map((p) => p.name).filter((n) => n in state.manifest.encodings).join(","));
  params.set("text", getText());
  return `${location.origin}${location.pathname}#${params.toString()}`;
}

export function writeShareLink() {
  if (!state.ready) return;
  history.replaceState(null, "", shareLink());
}

let shareTimer = 0;
export function writeShareLinkSoon() {
  clearTimeout(shareTimer);
  if (textLength() <= LIVE_LINK_MAX) shareTimer = setTimeout(writeShareLink, LIVE_LINK_DELAY_MS);
}

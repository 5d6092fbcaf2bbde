// The share link: the text and the reference panels in the URL fragment (#enc=...&text=...).
// The fragment never reaches a server, so a shared text stays between the two people.

import { state } from "./state.js";
import { getText, textLength } from "./textbox.js";

// Kept current while typing, except for long text: encoding 100 KB into the URL on every pause
// would be a long main-thread task; the share button still writes it.
const LIVE_LINK_MAX = 20000; // characters
const LIVE_LINK_DELAY_MS = 300;
// The longest URL Chromium opens (url::kMaxURLChars, 2 MiB): a longer link is refused when opened
// (net::ERR_ABORTED, a blank tab), so it is never handed out as a share link. A character of text
// takes 1-12 characters of link (percent-encoded UTF-8): 700,000 characters of CJK are too many.
export const MAX_LINK_CHARS = 2 * 1024 * 1024;

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

// The link if it fits in MAX_LINK_CHARS, else null.
export function shareLinkIfOpenable() {
  const url = shareLink();
  return url.length <= MAX_LINK_CHARS ? url : null;
}

// The address bar follows the view; a text too long for a link leaves it out (an address holding
// an older text, or one no browser opens, would be copied from the bar as if it were the view).
export function writeShareLink() {
  if (!state.ready) return;
  const url = shareLinkIfOpenable();
  history.replaceState(null, "", url || `${location.origin}${location.pathname}`);
}

let shareTimer = 0;
export function writeShareLinkSoon() {
  clearTimeout(shareTimer);
  if (textLength() <= LIVE_LINK_MAX) shareTimer = setTimeout(writeShareLink, LIVE_LINK_DELAY_MS);
}

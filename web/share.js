// The share link: the text and the reference panels in the URL fragment (#enc=...&text=...).
// The fragment never reaches a server, so a shared text stays between the two people.

import { state } from "./state.js";
import { getText, textLength, textVersion } from "./textbox.js";

// Kept current while typing, except for long text: encoding 100 KB into the URL on every pause
// would be a long main-thread task; the share button still writes it.
const LIVE_LINK_MAX = 20000; // characters
const LIVE_LINK_DELAY_MS = 300;
// The longest URL Chromium opens (url::kMaxURLChars, 2 MiB): a longer link is refused when opened
// (net::ERR_ABORTED, a blank tab), so it is never handed out as a share link. A character of text
// takes 1-12 characters of link (percent-encoded UTF-8): 700,000 characters of CJK are too many.
export const MAX_LINK_CHARS = 2 * 1024 * 1024;

// The link in a fragment ("#enc=...&text=..."), by default the address bar's; null if none.
export function readShareLink(hash = location.hash) {
  if (!hash || hash.length < 2) return null;
  const params = new URLSearchParams(hash.slice(1));
  return {
    text: params.get("text"),
    encodings: (params.get("enc") || "").split(",").filter(Boolean),
    damaged: textDamaged(hash.slice(1)),
  };
}

// URLSearchParams reads a broken escape (a link cut inside "%E6%9D", or edited) as U+FFFD or
// as the literal "%..." without a word, so a damaged text would be shown as if it were shared.
function textDamaged(fragment) {
  for (const part of fragment.split("&")) {
    const eq = part.indexOf("=");
    // the key as URLSearchParams reads it ("t%65xt" is "text"): the first "text" is the text
    if (new URLSearchParams(`${eq < 0 ? part : part.slice(0, eq)}=`).keys().next().value !== "text") continue;
    try {
      decodeURIComponent(part.slice(eq + 1).replace(/\+/g, " "));
      return false;
    } catch {
      return true;
    }
  }
  return false;
}

const MAX_NAMES_SHOWN = 5; // unknown names quoted in the message (a crafted link may hold thousands)
const MAX_NAME_CHARS = 40;

// What is wrong with an opened share link, or null: names this page has no encoding of (a link
// cut short, edited, or from a page with other encodings) and a damaged text.
export function shareLinkProblem(link, known) {
  if (!link) return null;
  const problems = [];
  const unknown = [...new Set(link.encodings.filter((n) => !known.includes(n)))];
  if (unknown.length) {
    const quoted = unknown.slice(0, MAX_NAMES_SHOWN).map((n) => JSON.stringify(n.slice(0, MAX_NAME_CHARS)));
    const more = unknown.length > MAX_NAMES_SHOWN ? ` and ${unknown.length - MAX_NAMES_SHOWN} more` : "";
    problems.push(
      `this share link names ${quoted.join(", ")}${more}, which this page has no encoding of ` +
        `(it has ${known.join(", ")}): add the one you meant with the "add" menu`,
    );
  }
  if (link.damaged) {
    problems.push(
      "this share link's text is damaged (cut short or edited: a broken %-escape), so parts of it " +
        "may show as \uFFFD or as %-codes: ask for the link again",
    );
  }
  return problems.length ? problems.join("; ") : null;
}

// Only the built-in encodings: a tokenizer loaded from disk or trained is not in the recipient's page.
// (Own keys: a loaded tokenizer named "toString" or "constructor" is `in` every object.)
export function shareLink() {
  const params = new URLSearchParams();
  params.set("enc", state.panels.map((p) => p.name).filter((n) => Object.hasOwn(state.manifest.encodings, n)).join(","));
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
  linkedVersion = textVersion();
}

// The text version the address bar's link holds (null until the first write: the address the
// page was opened with holds the text it shows).
let linkedVersion = null;
let shareTimer = 0;
let opening = false; // a link is being shown (showingLink): its changes are the address bar's own

// After a change of the panels (one added, removed or moved): the live link, as an edit gets
// it. The whole link of a text too long for the live link is never written here: replacing the
// address with one of megabytes is itself a long task in Chromium (history.replaceState of a
// 1.5 MB link: a panel added 159 ms, removed 251 ms), and it put back the link an edit of the
// text had taken out of the bar. Such a text leaves the bare address; the share button writes it.
export function writeLiveLink() {
  if (opening || !state.ready) return;
  if (textLength() <= LIVE_LINK_MAX) {
    writeShareLink();
    return;
  }
  clearTimeout(shareTimer);
  if (location.hash) history.replaceState(null, "", `${location.origin}${location.pathname}`);
}

// Runs `show`, which puts a link just opened in this tab (a hashchange) on the page, then makes
// the address bar follow: a short text's link is written at once (without the names the page
// lacks); a long text's link stays as it was opened, as at boot: the bar holds this very text,
// and writing it again cost the same long task as above (a 1.5 MB link opened: a 1,061 ms task).
// A link without a text ("#enc=gpt2") leaves a long text the bare address.
export function showingLink(show, { hasText }) {
  opening = true;
  try {
    show();
  } finally {
    opening = false;
  }
  if (textLength() <= LIVE_LINK_MAX) {
    writeShareLink();
  } else if (hasText) {
    clearTimeout(shareTimer);
    linkedVersion = textVersion();
  } else {
    writeLiveLink();
  }
}

// After an edit: the live link, or for a text too long for one, no link at all. Leaving the
// bar alone kept the last short text's link there, which copied from the bar shared that text.
export function writeShareLinkSoon() {
  clearTimeout(shareTimer);
  if (opening) return;
  if (textLength() <= LIVE_LINK_MAX) {
    shareTimer = setTimeout(writeShareLink, LIVE_LINK_DELAY_MS);
    return;
  }
  linkedVersion ??= textVersion();
  if (linkedVersion !== textVersion() && location.hash) {
    history.replaceState(null, "", `${location.origin}${location.pathname}`);
  }
}

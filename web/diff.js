// Diff mode: tokens of each panel whose bytes the baseline (the first panel) does not cut the
// same way.

import { state } from "./state.js";

// Whether the baseline has a token spanning exactly bytes [a, b): `starts` are the byte offsets
// of all its tokens (sorted; the last is the text's length).
function hasToken(starts, a, b) {
  let lo = 0;
  let hi = starts.length - 1; // a token starts at one of starts[0 .. n-1]
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid] < a) lo = mid + 1;
    else hi = mid;
  }
  return lo < starts.length - 1 && starts[lo] === a && starts[lo + 1] === b;
}

// A token is marked when the baseline has no token with exactly its byte span: it starts or ends
// where the baseline has no boundary, or the baseline splits it further. The baseline's whole
// result is looked in, not the window of it that its panel shows (render.js shows at most
// VIEW_TOKENS tokens of a large result): a token past the baseline's window is not a difference.
export function updateDiff() {
  const base = state.panels[0];
  for (const p of state.panels) {
    p.el.classList.toggle("is-baseline", p === base);
    const mark = state.options.diff && p !== base && base && base.result && p.result;
    const baseStarts = mark ? base.result.allStarts || base.starts : null;
    const n = p.result ? p.result.ids.length : 0;
    let differing = 0;
    for (let i = 0; i < n; i++) {
      const span = p.spans[i];
      if (!span) continue;
      const d = mark && !hasToken(baseStarts, p.starts[i], p.starts[i + 1]);
      if (d) {
        differing++;
        span.dataset.diff = "1";
      } else if (span.dataset.diff) {
        delete span.dataset.diff;
      }
    }
    if (mark) p.el.dataset.diffCount = String(differing);
    else delete p.el.dataset.diffCount;
  }
}

// Diff mode: tokens of each panel whose bytes the baseline (the first panel) does not cut the
// same way.

import { state } from "./state.js";

// A token is marked when the baseline has no token with exactly its byte span: it starts or ends
// where the baseline has no boundary, or the baseline splits it further.
export function updateDiff() {
  const base = state.panels[0];
  for (const p of state.panels) {
    p.el.classList.toggle("is-baseline", p === base);
    const mark = state.options.diff && p !== base && base && base.result && p.result;
    let next = null;
    if (mark) {
      next = new Map();
      for (let k = 0; k + 1 < base.starts.length; k++) next.set(base.starts[k], base.starts[k + 1]);
    }
    const n = p.result ? p.result.ids.length : 0;
    let differing = 0;
    for (let i = 0; i < n; i++) {
      const span = p.spans[i];
      if (!span) continue;
      const d = mark && next.get(p.starts[i]) !== p.starts[i + 1];
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

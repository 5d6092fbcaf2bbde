// Prints, one a line, "CP PARTS": every code point (hex) CP whose normalization is not trivial in
// this Node's ICU: it decomposes (NFD or NFKD) or has a non-zero canonical combining class
// (probed by canonical reordering against U+0334, ccc 1, and U+0345, ccc 240), and the code
// points of its canonical decomposition (PARTS, hex, comma-separated; CP itself if none).
// Used by scripts/gen_hf_normalization.py for code points newer than Python's unicodedata.
const out = [];
for (let cp = 0; cp < 0x110000; cp++) {
  if (cp >= 0xd800 && cp < 0xe000) continue;
  const c = String.fromCodePoint(cp);
  const decomposes = c.normalize("NFD") !== c || c.normalize("NFKD") !== c;
  const reorders =
    (c + "\u0334").normalize("NFD") !== c + "\u0334" || ("\u0345" + c).normalize("NFD") !== "\u0345" + c;
  if (decomposes || reorders) {
    const parts = [...c.normalize("NFD")].map((x) => x.codePointAt(0).toString(16));
    out.push(`${cp.toString(16)} ${parts.join(",")}`);
  }
}
console.log(`# unicode ${process.versions.unicode}`);
console.log(out.join("\n"));

// Small DOM helper shared by the page's modules (train.js, learn.js).

// el("button", {class: "x", text: "Go", "data-testid": "go", onclick}, child...) -> the element.
// Attributes named data-*, aria-*, role and for are set as attributes; anything else as a property.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "role" || key === "for") {
      node.setAttribute(key, value);
    } else node[key] = value;
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

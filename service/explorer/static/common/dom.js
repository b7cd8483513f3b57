// Building DOM nodes without innerHTML: tokens come from table files and are never markup.
//
// A panel owns its root element: the page's entry module (main.js, training.js) finds each
// panel's root by id and hands it over, and the panel reaches its own elements through
// parts(root), by their data-part names, never by ids across modules.

/** An element with attributes (class, dataset, on* handlers, others) and children. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  node.append(...children.flat(Infinity).filter((child) => child !== null && child !== undefined));
  return node;
}

/** Replace every child of `node`. */
export function fill(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((child) => child !== null && child !== undefined));
}

/** The page's element with this id: for entry modules, to find the panels' roots. */
export function byId(id) {
  return document.getElementById(id);
}

/** A panel's elements by their data-part names: {name: element}. */
export function parts(root) {
  const found = { root };
  for (const node of root.querySelectorAll("[data-part]")) found[node.dataset.part] = node;
  return found;
}

/** Show a status line, in red when it reports a refusal. */
export function setStatus(node, text, isError = false) {
  node.textContent = text;
  node.classList.toggle("error", isError);
}

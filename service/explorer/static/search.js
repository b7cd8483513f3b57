// The search box: the exact token first, then substring or regular-expression matches among
// the plotted points (at most MAX_MATCHES). Enter chooses the word from the whole table.

import { byId, el, fill } from "./dom.js";
import { integer } from "./format.js";

export const MAX_MATCHES = 100;

/** Wire the search form to `app` (its points, plot and select). */
export function setUpSearch(app) {
  const input = byId("search");
  let timer = null;
  const update = () => showMatches(app, input.value);
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(update, 120);
  });
  byId("search-regex").addEventListener("change", update);
  byId("search-case").addEventListener("change", update);
  byId("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = input.value.trim();
    if (!query) return;
    const { ignoreCase } = options();
    const folded = app.points.find((point) => sameToken(point.token, query, ignoreCase));
    app.select(app.indexOfToken.has(query) ? query : folded?.token ?? query);
  });
}

function options() {
  return { regex: byId("search-regex").checked, ignoreCase: byId("search-case").checked };
}

/** Indexes of points whose token matches: exact matches first, then row order; capped. */
export function findMatches(points, query, { regex, ignoreCase }) {
  const test = matcher(query, regex, ignoreCase);
  const exact = [];
  const others = [];
  for (let i = 0; i < points.length; i++) {
    const token = points[i].token;
    if (sameToken(token, query, ignoreCase)) exact.push(i);
    else if (others.length <= MAX_MATCHES && test(token)) others.push(i);
  }
  return [...exact, ...others];
}

function sameToken(token, query, ignoreCase) {
  return token === query || (ignoreCase && token.toLowerCase() === query.toLowerCase());
}

function matcher(query, regex, ignoreCase) {
  if (regex) {
    const pattern = new RegExp(query, ignoreCase ? "iu" : "u");
    return (token) => pattern.test(token);
  }
  if (ignoreCase) {
    const folded = query.toLowerCase();
    return (token) => token.toLowerCase().includes(folded);
  }
  return (token) => token.includes(query);
}

function showMatches(app, rawQuery) {
  const query = rawQuery.trim();
  const list = byId("matches");
  const status = byId("search-status");
  status.classList.remove("error");
  if (!query) {
    fill(list);
    status.textContent = "";
    app.plot.setMatches([]);
    return;
  }
  let indexes;
  try {
    indexes = findMatches(app.points, query, options());
  } catch (error) {
    status.textContent = `Not a valid regular expression: ${error.message}`;
    status.classList.add("error");
    return;
  }
  const shown = indexes.slice(0, MAX_MATCHES);
  const more = indexes.length > MAX_MATCHES ? ` (the first ${MAX_MATCHES})` : "";
  status.textContent = `${shown.length}${more} of the ${integer(app.points.length)} plotted ` +
    "points match. Enter looks the word up in the whole table.";
  fill(list, shown.map((i) => el("li", {}, el("button", {
    type: "button", class: "word", onclick: () => app.select(app.points[i].token),
  }, app.points[i].token))));
  app.plot.setMatches(shown);
}

// The Search panel: the exact token first, then substring or regular-expression matches among
// the plotted points (at most MAX_MATCHES). Enter chooses the word from the whole table;
// "Isolate matches" re-projects only the matches. On a language model's table words are
// matched and listed as they read ("·king" for Ġking), and a typed word is the word itself
// first (common/words.js).

import { el, fill, parts, setStatus } from "../common/dom.js";
import { integer, readableToken } from "../common/format.js";
import { describe } from "../common/messages.js";
import { tokensOf, typedText, writesPieces } from "../common/words.js";

export const MAX_MATCHES = 100;

export class SearchPanel {
  constructor(root, app) {
    this.app = app;
    this.parts = parts(root);
    this.shown = [];
    const { input, regex, form, isolate } = this.parts;
    let timer = null;
    const update = () => this.showMatches(input.value);
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(update, 120);
    });
    regex.addEventListener("change", update);
    this.parts.case.addEventListener("change", update);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      // The matches now, not after the word's answer: their status would cover its refusal.
      clearTimeout(timer);
      update();
      const query = input.value.trim();
      if (query) this.choose(query);
    });
    isolate.addEventListener("click", () =>
      app.isolate(this.shown.map((i) => app.points[i].token)));
  }

  /** Look `query` up in the whole table: a language model's word as its word's row. */
  async choose(query) {
    const { app } = this;
    if (writesPieces(app.table)) {
      let token;
      try {
        [token] = await tokensOf(app, [query]);
      } catch (error) {
        setStatus(this.parts.status, describe(error, app.table.name), true);
        return;
      }
      app.select(token);
      return;
    }
    const { ignoreCase } = this.options();
    const folded = app.points.find((point) => sameToken(point.token, query, ignoreCase));
    app.select(app.indexOfToken.has(query) ? query : folded?.token ?? query);
  }

  options() {
    return { regex: this.parts.regex.checked, ignoreCase: this.parts.case.checked };
  }

  showMatches(rawQuery) {
    const { app, parts: p } = this;
    const query = rawQuery.trim();
    setStatus(p.status, "");
    if (!query) {
      this.showList([], "");
      return;
    }
    let indexes;
    try {
      indexes = findMatches(app.points, query, this.options());
    } catch (error) {
      setStatus(p.status, `Not a valid regular expression: ${error.message}`, true);
      return;
    }
    const shown = indexes.slice(0, MAX_MATCHES);
    const more = indexes.length > MAX_MATCHES ? ` (the first ${MAX_MATCHES})` : "";
    this.showList(shown, `${shown.length}${more} of the ${integer(app.points.length)} plotted ` +
      "points match. Enter looks the word up in the whole table.");
  }

  showList(shown, text) {
    const { app, parts: p } = this;
    this.shown = shown;
    setStatus(p.status, text);
    fill(p.list, shown.map((i) => {
      const { token } = app.points[i];
      const text = readableToken(app.points[i]);
      return el("li", {}, el("button", {
        type: "button", class: "word", title: text === token ? null : token,
        onclick: () => app.select(token),
      }, text));
    }));
    p.isolate.hidden = shown.length < 2;
    app.plot.setMatches(shown);
  }
}

/**
 * Indexes of points whose token or readable text matches: the typed word's own row first (a
 * language model's " king" for "king"), then exact matches, then row order; capped.
 */
export function findMatches(points, query, { regex, ignoreCase }) {
  const test = matcher(query, regex, ignoreCase);
  const typed = regex ? query : typedText(query);
  const testText = typed === query ? test : matcher(typed, regex, ignoreCase);
  const words = [];
  const exact = [];
  const others = [];
  for (let i = 0; i < points.length; i++) {
    const { token, text } = points[i];
    if (sameToken(text, ` ${typed.trimStart()}`, ignoreCase)) words.push(i);
    else if (sameToken(token, query, ignoreCase) || sameToken(text, typed, ignoreCase)) {
      exact.push(i);
    } else if (others.length <= MAX_MATCHES && (test(token) || (text != null && testText(text)))) {
      others.push(i);
    }
  }
  return [...words, ...exact, ...others];
}

function sameToken(token, query, ignoreCase) {
  if (token == null) return false;
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

// A ranked list of words with their cosine scores, as the neighbour and analogy panels show it.

import { el } from "../common/dom.js";
import { readableToken, score } from "../common/format.js";

/**
 * <li> items for [{token, id, score}]: each word a button, its score to three places (the exact
 * value in data-score), and "(not plotted)" for words outside the plotted set.
 */
export function resultItems(results, placed, onPick) {
  return results.map((result) => {
    const plotted = (placed.get(result.token)?.index ?? -1) >= 0;
    const text = readableToken(result);  // the raw token stays the key, and the tooltip
    const title = text === result.token ? null : result.token;
    return el("li", { dataset: { token: result.token, id: result.id, score: result.score } },
      el("button", { type: "button", class: "word", title, onclick: () => onPick(result.token) },
        text),
      el("span", { class: "score" }, score(result.score)),
      plotted ? null : el("span", { class: "not-plotted" }, "(not plotted)"),
    );
  });
}

/** Marks for the plot: one per placed word, in `role`. */
export function marksOf(tokens, placed, role) {
  return tokens.filter((token) => placed.has(token)).map((token) => ({ ...placed.get(token), role }));
}

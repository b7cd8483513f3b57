// A ranked list of words with their cosine scores, as the neighbour and analogy panels show it.

import { el } from "./dom.js";
import { score } from "./format.js";

/**
 * <li> items for [{token, id, score}]: each word a button, its score to three places (the exact
 * value in data-score), and "(not plotted)" for words outside the plotted set.
 */
export function resultItems(results, placed, onPick) {
  return results.map((result) => {
    const plotted = (placed.get(result.token)?.index ?? -1) >= 0;
    return el("li", { dataset: { token: result.token, id: result.id, score: result.score } },
      el("button", { type: "button", class: "word", onclick: () => onPick(result.token) },
        result.token),
      el("span", { class: "score" }, score(result.score)),
      plotted ? null : el("span", { class: "not-plotted" }, "(not plotted)"),
    );
  });
}

/** Marks for the plot: one per placed word, in `role`. */
export function marksOf(tokens, placed, role) {
  return tokens.filter((token) => placed.has(token)).map((token) => ({ ...placed.get(token), role }));
}

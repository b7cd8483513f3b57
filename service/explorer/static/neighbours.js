// A chosen word's top-k neighbours from POST /neighbors, computed in the full space.

import { post } from "./api.js";
import { byId, fill } from "./dom.js";
import { describe, quote } from "./messages.js";
import { place } from "./placement.js";
import { marksOf, resultItems } from "./results.js";

// Refusals that concern the word, shown beside the list rather than as a failure.
const WORD_ERRORS = new Set(["UnknownToken", "ZeroVector"]);

/** List the neighbours of `token` and return the plot's marks (the word and its neighbours). */
export async function showNeighbours(app, token) {
  const table = app.table;
  setStatus(`Neighbours of ${quote(token)}\u2026`);
  let answer;
  try {
    answer = await post(table.name, "neighbors", { token, k: app.state.k });
  } catch (error) {
    if (!WORD_ERRORS.has(error.type)) throw error;
    fill(byId("neighbours"));
    byId("neighbours-word").textContent = "";
    setStatus(describe(error, table.name), true);
    return null;
  }
  const word = answer.matched[token] ?? token;
  const tokens = answer.neighbors.map((neighbour) => neighbour.token);
  const placed = await place(app, [word, ...tokens]);
  byId("neighbours-word").textContent = word;
  fill(byId("neighbours"), resultItems(answer.neighbors, placed, (t) => app.select(t)));
  const outside = placed.get(word).index < 0 ? ` ${quote(word)} itself is not plotted.` : "";
  setStatus(`Top ${answer.neighbors.length} by cosine.${outside}`);
  byId("full-space-note").textContent = `Computed in the full ${table.width}-dimensional ` +
    "space, not in the picture. The plot is a lossy 2-D shadow of that space: " +
    "when they disagree, believe the list.";
  return [...marksOf([word], placed, "selected"), ...marksOf(tokens, placed, "neighbour")];
}

/** Empty the panel (another table, or an analogy took over the picture). */
export function clearNeighbours() {
  fill(byId("neighbours"));
  byId("neighbours-word").textContent = "";
  setStatus("Search or click a word to list its nearest neighbours.");
}

function setStatus(text, isError = false) {
  const status = byId("neighbours-status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

// The Neighbours panel: a chosen word's top-k neighbours from POST /neighbors, computed in the
// full space, and "Isolate" to re-project only the word and them.

import { post } from "../common/api.js";
import { fill, parts, setStatus } from "../common/dom.js";
import { readableToken } from "../common/format.js";
import { Latest } from "../common/latest.js";
import { describe, quote } from "../common/messages.js";
import { place } from "../plot/placement.js";
import { marksOf, resultItems } from "./results.js";

// Refusals that concern the word, shown beside the list rather than as a failure.
const WORD_ERRORS = new Set(["UnknownToken", "ZeroVector"]);

export class NeighboursPanel {
  constructor(root, app) {
    this.app = app;
    this.parts = parts(root);
    this.listed = [];
    this.latest = new Latest(); // words asked for, and clears: only the latest answer is shown
    const { k, isolate } = this.parts;
    k.value = String(app.state.k);
    k.addEventListener("change", () => {
      app.state.k = Math.max(1, Number.parseInt(k.value, 10) || app.state.k);
      if (app.state.token) app.select(app.state.token);
    });
    isolate.addEventListener("click", () => app.isolate(this.listed));
  }

  /** List the neighbours of `token` and return the plot's marks (the word and its neighbours):
   * null when the word is refused, undefined when another word or a clear came first. */
  async show(token) {
    const { app, parts: p } = this;
    const table = app.table;
    const current = this.latest.ask();
    setStatus(p.status, `Neighbours of ${quote(token)}\u2026`);
    let answer;
    try {
      answer = await post(table.name, "neighbors", { token, k: app.state.k });
    } catch (error) {
      if (!current()) return undefined;
      if (!WORD_ERRORS.has(error.type)) throw error;
      this.clear();
      setStatus(p.status, describe(error, table.name), true);
      return null;
    }
    const word = answer.matched[token] ?? token;
    const tokens = answer.neighbors.map((neighbour) => neighbour.token);
    const placed = await place(app, [word, ...tokens]);
    if (!current()) return undefined;
    p.word.textContent = readableToken(placed.get(word)?.point ?? { token: word });
    fill(p.list, resultItems(answer.neighbors, placed, (t) => app.select(t)));
    const outside = placed.has(word) && placed.get(word).index >= 0 ? ""
      : ` ${quote(word)} itself is not plotted.`;
    setStatus(p.status, `Top ${answer.neighbors.length} by cosine.${outside}`);
    p.note.textContent = `Computed in the full ${table.width}-dimensional ` +
      "space, not in the picture. The plot is a lossy shadow of that space: " +
      "when they disagree, believe the list.";
    this.listed = [word, ...tokens];
    p.isolate.hidden = false;
    return [...marksOf([word], placed, "selected"), ...marksOf(tokens, placed, "neighbour")];
  }

  /** Empty the panel (another table, or an analogy took over the picture); an answer still
   * on its way is then dropped. */
  clear() {
    this.latest.drop();
    const p = this.parts;
    fill(p.list);
    p.word.textContent = "";
    p.note.textContent = "";
    p.isolate.hidden = true;
    this.listed = [];
    setStatus(p.status, "Search or click a word to list its nearest neighbours.");
  }
}

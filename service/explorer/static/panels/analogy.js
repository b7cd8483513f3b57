// Analogies a - b + c (3CosAdd or 3CosMul) from POST /analogy, with the result placed. Words
// are typed as people type them (common/words.js).

import { post } from "../common/api.js";
import { fill, parts, setStatus } from "../common/dom.js";
import { Latest } from "../common/latest.js";
import { describe } from "../common/messages.js";
import { tokensOf } from "../common/words.js";
import { place, placesOthers, placeVector } from "../plot/placement.js";
import { marksOf, resultItems } from "./results.js";

export class AnalogyPanel {
  /** `onSubmit()` runs when the person asks for an analogy. */
  constructor(root, onSubmit) {
    this.parts = parts(root);
    this.latest = new Latest(); // analogies asked for, and clears: the latest answer is shown
    this.parts.form.addEventListener("submit", (event) => {
      event.preventDefault();
      onSubmit();
    });
  }

  /** Answer the analogy in the form; returns the plot's marks, null when it was refused,
   * undefined when another analogy or a clear came first. */
  show(app) {
    return showAnalogy(app, this.parts, this.latest.ask());
  }

  /** Empty the panel; an answer still on its way is then dropped. */
  clear() {
    this.latest.drop();
    fill(this.parts.list);
    setStatus(this.parts.status, "");
  }
}

async function showAnalogy(app, p, current) {
  const [a, b, c] = [p.a, p.b, p.c].map((input) => input.value.trim());
  const method = p.method.value;
  if (!a || !b || !c) {
    setStatus(p.status, "Fill in all three words: a \u2212 b + c.", true);
    return null;
  }
  const table = app.table.name;
  let tokens;
  let answer;
  try {
    tokens = await tokensOf(app, [a, b, c]);
    const [ta, tb, tc] = tokens;
    const body = { positive: [ta, tc], negative: [tb], k: app.state.k, method };
    answer = await post(table, "analogy", body);
  } catch (error) {
    if (!current()) return undefined;
    if (!["UnknownToken", "SeveralPieces", "ZeroVector"].includes(error.type)) throw error;
    fill(p.list);
    setStatus(p.status, describe(error, table), true);
    return null;
  }
  const terms = tokens.map((term) => answer.matched[term] ?? term);
  const answers = answer.neighbors.map((neighbour) => neighbour.token);
  const placed = await place(app, [...terms, ...answers]);
  if (!current()) return undefined;
  fill(p.list, resultItems(answer.neighbors, placed, (t) => app.select(t)));
  const marks = [...marksOf(terms, placed, "term"), ...marksOf(answers, placed, "answer")];
  if (method === "add" && placesOthers(app)) {
    const result = await resultMark(app, terms, [a, b, c]);
    if (!current()) return undefined;
    marks.push(result);
    setStatus(p.status, "The star is a \u2212 b + c itself, placed on the picture.");
  } else if (method === "add") {
    setStatus(p.status, "The star a \u2212 b + c is placed on PCA pictures of the table's " +
      "basis only: a layout, or a PCA fitted on isolated rows, has no place for a vector it " +
      "was not given.");
  } else {
    setStatus(p.status, "3CosMul has no single result vector: only its answers are placed.");
  }
  return marks;
}

// 3CosAdd's query direction: unit(a) - unit(b) + unit(c), from the rows /lookup returns; the
// star is named by the words as typed.
async function resultMark(app, tokens, [a, b, c]) {
  const answer = await post(app.table.name, "lookup", { tokens });
  const units = answer.items.map((item) => item.vector.map((v) => v / item.norm));
  const direction = units[0].map((_, i) => units[0][i] - units[1][i] + units[2][i]);
  const point = await placeVector(app, direction);
  return { point: { ...point, token: `${a} \u2212 ${b} + ${c}` }, index: -1, role: "result" };
}

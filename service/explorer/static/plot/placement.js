// Where words are on the picture: plotted rows are looked up, the others placed via /project
// (in the table's PCA basis, so only on a PCA picture drawn in it: a UMAP or t-SNE layout has
// no place for a row it was not given, and a PCA fitted on isolated rows is not that basis).

import { post } from "../common/api.js";

/** Whether the picture is the table's PCA basis, where /project places any row or vector. */
export function placesOthers(app) {
  return app.state.projection === "pca" && app.projection?.fit !== "selection";
}

/**
 * Place `tokens` (stored tokens of the table) on the current picture.
 * Returns a Map token -> {point, index}, index -1 for words outside the plotted set.
 */
export async function place(app, tokens) {
  const placed = new Map();
  const missing = [];
  for (const token of new Set(tokens)) {
    const index = app.indexOfToken.get(token);
    if (index === undefined) missing.push(token);
    else placed.set(token, { point: app.points[index], index });
  }
  if (missing.length && placesOthers(app)) {
    const answer = await post(app.table.name, "project", { tokens: missing, dims: app.state.dims });
    for (const point of answer.points) placed.set(point.token, { point, index: -1 });
  }
  return placed;
}

/** A raw vector's place on a PCA picture (normalised by the server like every row). */
export async function placeVector(app, vector) {
  const answer = await post(app.table.name, "project", { vectors: [vector], dims: app.state.dims });
  return answer.points[0];
}

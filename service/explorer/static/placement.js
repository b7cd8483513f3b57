// Where words are on the picture: plotted rows are looked up, the others placed via /project
// (in the PCA basis, so only on a PCA picture: a UMAP or t-SNE layout has no place for a row
// it was not given).

import { post } from "./api.js";

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
  if (missing.length && app.state.projection === "pca") {
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

// The k-nearest-neighbour graph UMAP and t-SNE need, from the service's exact full-space
// cosine neighbours, never computed over the plotted sample in the page.
//
// The first N rows: batch POST /neighbors, one query per plotted row (by id) with
// `restrict` = the last plotted row + 1 and `exact`, so each answer is the row's exact top k
// among the plotted rows (zero rows are neither plotted nor ever neighbours). Batches are cut
// to the server's limits (max_batch queries, max_results = k summed over a batch); a server
// configured lower answers 422 LimitExceeded with its limit, and the batch is cut to fit.
// A few isolated rows (at most max_matrix_tokens): POST /similarity's matrix of their exact
// cosines, each row's top k taken in the page.

import { post } from "./api.js";

// The server's defaults (max_batch, max_results): the first guess before any 422.
const MAX_BATCH = 256;
const MAX_RESULTS = 32768;

/**
 * For each point, its k nearest other points: {indices: [[position, ...]], distances:
 * [[1 - cosine, ...]], source, answers}, nearest first. `onProgress(done, total)` as batches
 * come back.
 */
export async function fetchGraph(table, points, k, { restricted, onProgress = () => {} }) {
  if (!restricted) return similarityGraph(table, points, k);
  const position = new Map(points.map((point, i) => [point.id, i]));
  const restrict = Math.max(...points.map((point) => point.id)) + 1;
  const queries = points.map((point) => ({ id: point.id, k, restrict, exact: true }));
  const answers = [];
  let size = Math.max(1, Math.min(MAX_BATCH, Math.floor(MAX_RESULTS / k)));
  while (answers.length < queries.length) {
    const batch = queries.slice(answers.length, answers.length + size);
    try {
      const answer = await post(table, "neighbors", { queries: batch });
      answers.push(...answer.results.map((result) => result.neighbors));
      onProgress(answers.length, queries.length);
    } catch (error) {
      const { limit, got } = error.details ?? {};
      if (error.type !== "LimitExceeded" || !limit || !got || size === 1) throw error;
      size = Math.max(1, Math.floor((size * limit) / got));
    }
  }
  const graph = { indices: [], distances: [], answers, queries: { k, restrict, exact: true } };
  for (const neighbours of answers) {
    graph.indices.push(neighbours.map((neighbour) => positionOf(position, neighbour)));
    graph.distances.push(neighbours.map((neighbour) => 1 - neighbour.score));
  }
  graph.source = `/neighbors: each row's ${k} exact full-space cosine neighbours among the ` +
    `plotted rows (restrict ${restrict})`;
  return graph;
}

function positionOf(position, neighbour) {
  const i = position.get(neighbour.id);
  if (i === undefined) throw new Error(`neighbour ${neighbour.token} is not a plotted row`);
  return i;
}

// Exact cosines among a few rows, from /similarity; each row's top k in the page.
async function similarityGraph(table, points, k) {
  const tokens = points.map((point) => point.token);
  const answer = await post(table, "similarity", { tokens });
  const graph = { indices: [], distances: [], answers: answer.matrix };
  answer.matrix.forEach((row, i) => {
    const order = row.map((_, j) => j).filter((j) => j !== i)
      .sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
    graph.indices.push(order);
    graph.distances.push(order.map((j) => 1 - row[j]));
  });
  graph.source = `/similarity: the exact full-space cosines among the ${points.length} ` +
    `isolated rows, each row's ${k} nearest taken in the page`;
  return graph;
}

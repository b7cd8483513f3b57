// The k-nearest-neighbour graph UMAP and t-SNE need, from the service's exact full-space
// cosine neighbours, never computed over the plotted sample in the page.
//
// Whatever rows are plotted (the first N, a seeded random sample, isolated rows): batch
// POST /neighbors, one query per plotted row (by id), with `among` = the plotted ids, so each
// answer is the row's exact top k among exactly the plotted rows (never the row itself, never a
// zero row), whatever index the table has. Batches are cut to the server's limits (max_batch
// queries, max_results = k summed over a batch); a server configured lower answers 422
// LimitExceeded with its limit, and the batch is cut to fit. A server whose max_among is below
// the plotted rows cannot answer at all, and the error says so.

import { post } from "../common/api.js";

// The server's defaults (max_batch, max_results): the first guess before any 422.
const MAX_BATCH = 256;
const MAX_RESULTS = 32768;

/**
 * For each point, its k nearest other points: {indices: [[position, ...]], distances:
 * [[1 - cosine, ...]], source, answers, request}, nearest first. `onProgress(done, total)` as
 * batches come back.
 */
export async function fetchGraph(table, points, k, { onProgress = () => {} } = {}) {
  const position = new Map(points.map((point, i) => [point.id, i]));
  const among = points.map((point) => point.id);
  const queries = points.map((point) => ({ id: point.id, k }));
  const answers = [];
  let size = Math.max(1, Math.min(MAX_BATCH, Math.floor(MAX_RESULTS / k)));
  while (answers.length < queries.length) {
    const batch = queries.slice(answers.length, answers.length + size);
    try {
      const answer = await post(table, "neighbors", { queries: batch, among });
      answers.push(...answer.results.map((result) => result.neighbors));
      onProgress(answers.length, queries.length);
    } catch (error) {
      size = smallerBatch(error, size, among.length);
    }
  }
  const graph = { indices: [], distances: [], answers, request: { k, among } };
  for (const neighbours of answers) {
    graph.indices.push(neighbours.map((neighbour) => positionOf(position, neighbour)));
    graph.distances.push(neighbours.map((neighbour) => 1 - neighbour.score));
  }
  graph.source = `/neighbors: each row's ${k} exact full-space cosine neighbours among the ` +
    `${points.length.toLocaleString("en-US")} plotted rows`;
  return graph;
}

// The batch size after a refusal, or the refusal itself when a smaller batch cannot help.
function smallerBatch(error, size, plotted) {
  const { limit, got } = error.details ?? {};
  if (error.type !== "LimitExceeded" || !limit || !got || size === 1) throw error;
  if (/among/.test(error.message)) {
    error.message = `the server searches among at most ${limit} rows (its max_among), and ` +
      `${plotted} are plotted: plot fewer rows.`;
    throw error;
  }
  return Math.max(1, Math.floor((size * limit) / got));
}

function positionOf(position, neighbour) {
  const i = position.get(neighbour.id);
  if (i === undefined) throw new Error(`neighbour ${neighbour.token} is not a plotted row`);
  return i;
}

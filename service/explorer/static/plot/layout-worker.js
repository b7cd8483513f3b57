// The layout worker: UMAP (umap-js) or t-SNE (@keckelt/tsne) of a neighbour graph the page
// fetched from the service, iterated off the page's thread so the page stays responsive.
//
// A classic worker, not a module: the vendored libraries are a UMD bundle and a CommonJS file.
// In: {method: "umap" | "tsne", count, dims, knn: {indices, distances}, params, seed}, where
// knn.indices[i] lists row i's neighbours (positions in 0..count-1, nearest first, without i)
// and knn.distances[i] their cosine distances (1 - cosine). Out: {type: "progress", step,
// steps, coords}, then {type: "done", ...}; or {type: "error", message}. The page stops a run
// by terminating the worker.

"use strict";

const PROGRESS_MS = 120;

/** A seeded uniform random number in [0, 1): mulberry32, the same sequence for a seed. */
function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function flatten(rows, dims) {
  const coords = new Float64Array(rows.length * dims);
  rows.forEach((row, i) => {
    for (let d = 0; d < dims; d++) coords[i * dims + d] = row[d];
  });
  return coords;
}

/** Run `steps` steps of `step`, posting the coordinates every PROGRESS_MS and at the end. */
function iterate(steps, step, coordinates, extra = () => ({})) {
  let posted = performance.now();
  for (let s = 1; s <= steps; s++) {
    step(s);
    const now = performance.now();
    if (s === steps || now - posted > PROGRESS_MS) {
      posted = now;
      const coords = coordinates();
      const type = s === steps ? "done" : "progress";
      self.postMessage({ type, step: s, steps, coords, ...extra() }, [coords.buffer]);
    }
  }
}

// UMAP with the page's graph: umap-js builds its fuzzy graph from precomputed neighbours
// (each row's list starts with the row itself at distance 0, as umap-js expects) and uses X
// only for its length.
function runUmap({ count, dims, knn, params, seed }) {
  importScripts("../vendor/umap-js.js");
  const nNeighbors = knn.indices[0].length + 1;
  const umap = new self.UMAP.UMAP({
    nComponents: dims, nNeighbors, minDist: params.minDist, nEpochs: params.epochs,
    random: seededRandom(seed),
  });
  umap.setPrecomputedKNN(knn.indices.map((row, i) => [i, ...row]),
    knn.distances.map((row) => [0, ...row]));
  const epochs = umap.initializeFit(Array.from({ length: count }, () => []));
  iterate(epochs, () => umap.step(), () => flatten(umap.getEmbedding(), dims));
}

// t-SNE on the page's graph: squared distances of unit rows (2 - 2 cosine) for neighbour
// pairs, infinite (zero affinity) for every other pair, as bh-tsne keeps only neighbours.
function runTsne({ count, dims, knn, params, seed }) {
  self.exports = {};
  importScripts("../vendor/tsne.js");
  const random = seededRandom(seed);
  const model = new SeededTsne(self.exports.TSNE, random,
    { perplexity: params.perplexity, dim: dims, epsilon: params.learningRate });
  const distances = Array.from({ length: count }, () => new Float64Array(count).fill(Infinity));
  knn.indices.forEach((row, i) => row.forEach((j, n) => {
    const squared = 2 * knn.distances[i][n];
    distances[i][j] = Math.min(distances[i][j], squared);
    distances[j][i] = distances[i][j];
  }));
  model.initDataDist(distances);
  iterate(params.iterations, () => model.step(), () => flatten(model.getSolution(), dims),
    () => ({ cost: model.lastCost }));
}

// The library's model with two methods replaced: gaussRandom draws from the seeded generator
// (the library calls Math.random), and costGrad computes the same exact gradient in one pass
// over the pairs without allocating two N x N arrays a step.
class SeededTsne {
  constructor(TSNE, random, options) {
    const model = new TSNE(options);
    model.gaussRandom = () => gaussian(model, random);
    model.costGrad = (Y) => tsneGradient(model, Y);
    return model;
  }
}

function gaussian(model, random) {
  if (model.returnV) {
    model.returnV = false;
    return model.vValue;
  }
  for (;;) {
    const u = 2 * random() - 1;
    const v = 2 * random() - 1;
    const r = u * u + v * v;
    if (r === 0 || r > 1) continue;
    const c = Math.sqrt((-2 * Math.log(r)) / r);
    model.vValue = v * c;
    model.returnV = true;
    return u * c;
  }
}

// grad_i = 4 sum_j (m p_ij - q_ij) w_ij (y_i - y_j), w_ij = 1 / (1 + |y_i - y_j|^2),
// q_ij = w_ij / Z, m = 4 for the first 100 steps (early exaggeration): the library's formula,
// split as 4 (m sum_j p_ij w_ij (y_i - y_j) - sum_j w_ij^2 (y_i - y_j) / Z). The attraction
// runs over the neighbour pairs only: the library floors every other p_ij at 1e-100, whose
// terms are below the last bit of the sums they would join.
function tsneGradient(model, Y) {
  const { N, dim } = model;
  const m = model.iter < 100 ? 4 : 1;
  const y = new Float64Array(N * 3); // three to a row (z = 0 in 2-D): no inner loop
  Y.forEach((row, i) => {
    for (let d = 0; d < dim; d++) y[i * 3 + d] = row[d];
  });
  const { Z, repel } = repulsion(y, N);
  model.pairs ??= neighbourPairs(model.P, N);
  const { attract, cost } = attraction(y, model.pairs);
  const grad = [];
  for (let i = 0; i < N; i++) {
    const g = new Array(dim);
    for (let d = 0; d < dim; d++) g[d] = 4 * (m * attract[i * 3 + d] - repel[i * 3 + d] / Z);
    grad.push(g);
  }
  // KL(P || Q) = sum p log p - sum p log w + log Z sum p, over the neighbour pairs.
  const { sum, entropy } = model.pairs;
  model.lastCost = entropy + cost + Math.log(Z) * sum;
  return { cost: model.lastCost, grad };
}

// Z = sum over i != j of w_ij, and each row's sum_j w_ij^2 (y_i - y_j).
function repulsion(y, N) {
  const repel = new Float64Array(N * 3);
  let Z = 0;
  for (let i = 0; i < N; i++) {
    const xi = y[i * 3];
    const yi = y[i * 3 + 1];
    const zi = y[i * 3 + 2];
    let rx = 0;
    let ry = 0;
    let rz = 0;
    for (let j = i + 1; j < N; j++) {
      const dx = xi - y[j * 3];
      const dy = yi - y[j * 3 + 1];
      const dz = zi - y[j * 3 + 2];
      const w = 1 / (1 + dx * dx + dy * dy + dz * dz);
      const ww = w * w;
      Z += 2 * w;
      rx += ww * dx;
      ry += ww * dy;
      rz += ww * dz;
      repel[j * 3] -= ww * dx;
      repel[j * 3 + 1] -= ww * dy;
      repel[j * 3 + 2] -= ww * dz;
    }
    repel[i * 3] += rx;
    repel[i * 3 + 1] += ry;
    repel[i * 3 + 2] += rz;
  }
  return { Z, repel };
}

// Each row's sum_j p_ij w_ij (y_i - y_j) over its neighbour pairs, and -sum p_ij log w_ij.
function attraction(y, { rows, cols, values }) {
  const attract = new Float64Array(y.length);
  let cost = 0;
  for (let k = 0; k < values.length; k++) {
    const [i, j, p] = [rows[k] * 3, cols[k] * 3, values[k]];
    const dx = y[i] - y[j];
    const dy = y[i + 1] - y[j + 1];
    const dz = y[i + 2] - y[j + 2];
    const w = 1 / (1 + dx * dx + dy * dy + dz * dz);
    cost -= p * Math.log(w);
    attract[i] += p * w * dx;
    attract[i + 1] += p * w * dy;
    attract[i + 2] += p * w * dz;
  }
  return { attract, cost };
}

// The pairs of P above its 1e-100 floor (both orders), with sum p and sum p log p: P does not
// change while the layout iterates.
function neighbourPairs(P, N) {
  const [rows, cols, values] = [[], [], []];
  let [sum, entropy] = [0, 0];
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) {
      const p = P[i * N + j];
      if (i === j || p <= 1e-50) continue;
      rows.push(i);
      cols.push(j);
      values.push(p);
      sum += p;
      entropy += p * Math.log(p);
    }
  }
  return { rows: Int32Array.from(rows), cols: Int32Array.from(cols),
    values: Float64Array.from(values), sum, entropy };
}

self.onmessage = (event) => {
  try {
    if (event.data.method === "umap") runUmap(event.data);
    else if (event.data.method === "tsne") runTsne(event.data);
    else throw new Error(`no layout method ${event.data.method}`);
  } catch (error) {
    self.postMessage({ type: "error", message: String(error?.message ?? error) });
  }
};

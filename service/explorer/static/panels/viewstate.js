// The explorer's view, as its link carries it: the table, the rows plotted, the projection and
// its parameters, the chosen word, the isolated rows, the colouring and the camera.
//
// e.g. /explorer?table=minilm&token=king&k=8&projection=umap&dims=3&layoutSeed=1

import { LinkState } from "../common/state.js";

export const PROJECTIONS = ["pca", "umap", "tsne"];

export const EXPLORER_LINK = new LinkState({
  table: { value: "" },
  token: { value: "" },
  k: { value: 8, kind: "count" },
  points: { value: 5000, kind: "count" },
  // Rows plotted: whole words first (the default: /projection's "words"), the first rows, or
  // seeded random rows.
  selection: { value: "words", kind: ["words", "first", "random"] },
  seed: { value: 0, kind: "count", when: (state) => state.selection === "random" },
  labels: { value: "" },
  projection: { value: "pca", kind: PROJECTIONS },
  dims: { value: 2, kind: [2, 3] },
  // UMAP: neighbours per row (the row itself included, as umap-js counts), min-dist, epochs
  // (0: umap-js's default for the number of rows).
  neighbours: { value: 15, kind: "count", when: (state) => state.projection === "umap" },
  minDist: { value: 0.1, kind: "number", when: (state) => state.projection === "umap" },
  epochs: { value: 0, kind: "count", when: (state) => state.projection === "umap" },
  // t-SNE: perplexity (3 x perplexity neighbours per row, as bh-tsne takes) and iterations.
  perplexity: { value: 30, kind: "number", when: (state) => state.projection === "tsne" },
  iterations: { value: 500, kind: "count", when: (state) => state.projection === "tsne" },
  layoutSeed: { value: 0, kind: "count", when: (state) => state.projection !== "pca" },
  // Rows re-projected alone (a word and its neighbours, or a search's matches).
  isolate: { value: [], kind: "list" },
  color: { value: "" },
  size: { value: "" },
  // The camera once the person zoomed, panned or rotated: centre x, centre y, scale, and in
  // 3-D yaw and pitch (radians). Empty: the whole picture fitted.
  camera: { value: [], kind: "numbers" },
});

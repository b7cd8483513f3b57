// A UMAP or t-SNE run in the layout worker (layout-worker.js): started with a neighbour graph,
// reporting each step's coordinates, stopped at any moment by ending the worker.

const WORKER = new URL("./layout-worker.js", import.meta.url);

export class LayoutRun {
  /**
   * Start `method` ("umap" | "tsne") on `count` points; `onStep({step, steps, coords, cost})`
   * for every frame the worker posts. `done` resolves to the last frame (stopped: true when
   * stopped), or rejects with the worker's error.
   */
  constructor({ method, count, dims, graph, params, seed }, onStep) {
    this.worker = new Worker(WORKER);
    this.last = null;
    this.done = new Promise((resolve, reject) => {
      this.finish = resolve;
      this.worker.onmessage = ({ data }) => {
        if (data.type === "error") {
          this.worker.terminate();
          reject(new Error(data.message));
          return;
        }
        this.last = data;
        onStep(data);
        if (data.type === "done") {
          this.worker.terminate();
          resolve({ ...data, stopped: false });
        }
      };
      this.worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message || "the layout worker failed"));
      };
    });
    const knn = { indices: graph.indices, distances: graph.distances };
    this.worker.postMessage({ method, count, dims, knn, params, seed });
  }

  /** End the run where it is; `done` resolves to the last frame it reached. */
  stop() {
    this.worker.terminate();
    this.finish({ ...(this.last ?? { step: 0, steps: 0, coords: null }), stopped: true });
  }
}

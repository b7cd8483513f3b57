// The Projection panel: PCA from the service (POST /projection, 2-D or 3-D), or UMAP and t-SNE
// computed in this page (layout.js) on the service's exact full-space neighbours among the
// plotted rows, whichever they are (graph.js);
// their progress, Stop, and the caption that says which projection, on how many rows, and
// where its neighbours come from. Isolating re-projects only chosen rows (a word and its
// neighbours, or a search's matches: a PCA fitted on them alone), with "Show all rows" to go
// back.

import { describe } from "../common/messages.js";
import { parts, setStatus } from "../common/dom.js";
import { fetchGraph } from "../plot/graph.js";
import { integer, percent } from "../common/format.js";
import { LayoutRun } from "../plot/layout.js";

const NAMES = { pca: "PCA", umap: "UMAP", tsne: "t-SNE" };
// The most rows that can be isolated: their tokens travel in the link (`isolate`).
export const MOST_ISOLATED = 256;
const NUMBER_FIELDS = ["neighbours", "minDist", "epochs", "perplexity", "iterations", "seed"];

export class ProjectionPanel {
  constructor(root, app) {
    this.app = app;
    this.parts = parts(root);
    this.run = null;
    this.setUpControls();
  }

  setUpControls() {
    const { app, parts: p } = this;
    const { state } = app;
    p.method.value = state.projection;
    p.dims.value = String(state.dims);
    const fields = this.fields();
    for (const [name, field] of Object.entries(fields)) p[name].value = String(state[field]);
    this.showParameters();
    p.method.addEventListener("change", () => {
      state.projection = p.method.value;
      this.showParameters();
      app.reproject();
    });
    p.dims.addEventListener("change", () => {
      state.dims = Number(p.dims.value);
      app.reproject();
    });
    p.form.addEventListener("submit", (event) => {
      event.preventDefault();
      for (const [name, field] of Object.entries(fields)) {
        const value = Number(p[name].value);
        if (Number.isFinite(value) && value >= 0) state[field] = value;
      }
      app.writeLink();
      this.runLayout();
    });
    p.stop.addEventListener("click", () => this.stop());
    p.showAll.addEventListener("click", () => app.isolate([]));
  }

  // The form's number inputs and the state fields they set.
  fields() {
    return Object.fromEntries(NUMBER_FIELDS.map((name) =>
      [name, name === "seed" ? "layoutSeed" : name]));
  }

  showParameters() {
    const method = this.app.state.projection;
    for (const node of this.parts.root.querySelectorAll("[data-method]")) {
      node.hidden = !node.dataset.method.split(" ").includes(method);
    }
  }

  /** The /projection request for the current state (the isolated rows, or the sample). */
  request() {
    const { points, selection, seed, dims, isolate } = this.app.state;
    if (isolate.length) {
      // A PCA of the isolated rows alone, as the Projector does, once they span the dims.
      const fit = isolate.length > dims ? { fit: "selection" } : {};
      const selection = { tokens: isolate };
      return { method: "pca", dims, points: isolate.length, selection, ...fit };
    }
    return { method: "pca", dims, points, selection, seed };
  }

  /** Show the isolated rows' note (or hide it). */
  showIsolated() {
    const { isolate } = this.app.state;
    this.parts.isolated.hidden = !isolate.length;
    this.parts.isolatedText.textContent = isolate.length
      ? `Only ${integer(isolate.length)} isolated rows are projected. ` : "";
  }

  /** The caption of the PCA picture /projection answered. */
  pcaCaption(projection) {
    const { app } = this;
    const ratios = projection.explained_variance_ratio;
    const components = ratios.map((ratio, i) => `PC${i + 1} ${percent(ratio)}`);
    const last = components.pop();
    const fitted = projection.fit === "selection"
      ? `PCA fitted on the ${integer(projection.sample_rows)} isolated rows alone (spherized)`
      : `PCA of ${integer(projection.sample_rows)} spherized rows` +
        (app.state.isolate.length ? " (the table's basis)" : "");
    return `${fitted}: ${components.join(", ")} and ${last} of the variance. ` +
      `${this.rowsPlotted()}` +
      ` Neighbour lists are computed in the full ${app.table.width}-dimensional space.`;
  }

  rowsPlotted() {
    const { app } = this;
    return `${integer(app.points.length)} of ${integer(app.table.rows)} rows plotted ` +
      `(${this.sample("")}).`;
  }

  rowsProjected() {
    const { app } = this;
    return `${integer(app.points.length)} of the table's ${integer(app.table.rows)} rows ` +
      `(${this.sample("the ")})`;
  }

  // Which rows were plotted, as /projection answered: for words, how many are words.
  sample(article) {
    const { app } = this;
    if (app.state.isolate.length) return `${article}isolated rows`;
    if (app.state.selection !== "words") return `${article}${app.state.selection} rows`;
    const words = app.projection?.words ?? 0;
    const others = app.points.length - words;
    return others > 0
      ? `the table's ${integer(words)} whole-word rows, then the first ${integer(others)} others`
      : "the first whole-word rows";
  }

  /** UMAP or t-SNE of the plotted points, when the state asks for one. */
  async runLayout() {
    this.stop();
    const { app } = this;
    const method = app.state.projection;
    if (method === "pca" || !app.points.length) return;
    const params = this.parameters(method, app.points.length);
    if (params.refusal) {
      this.refuse(params.refusal);
      return;
    }
    const table = app.table;
    const token = (this.token = {});
    performance.mark("explorer:layout-start");
    this.setRunning(true, `Fetching each row's ${params.k} neighbours\u2026`);
    let graph;
    try {
      graph = await fetchGraph(table.name, app.points, params.k, {
        onProgress: (done, total) => this.progress(done / total,
          `Neighbours from /neighbors: ${integer(done)} of ${integer(total)} rows\u2026`),
      });
    } catch (error) {
      if (this.token === token) this.fail(error, table);
      return;
    }
    if (this.token !== token || app.table !== table) return;
    performance.mark("explorer:layout-graph");
    this.startRun(method, params, graph);
  }

  // The method's parameters, within what the number of points allows.
  parameters(method, count) {
    const { state } = this.app;
    if (count < 3) return { refusal: `${NAMES[method]} needs at least 3 rows.` };
    if (method === "umap") {
      const neighbours = Math.max(2, Math.min(state.neighbours, count - 1));
      return { k: neighbours - 1, neighbours, minDist: state.minDist, epochs: state.epochs };
    }
    const perplexity = Math.max(1, Math.min(state.perplexity, (count - 1) / 3));
    return { k: Math.min(count - 1, Math.ceil(3 * perplexity)), perplexity,
      iterations: Math.max(1, state.iterations), learningRate: 10 };
  }

  startRun(method, params, graph) {
    const { app } = this;
    const dims = app.state.dims;
    const seed = app.state.layoutSeed;
    app.layout = { method, params, graph, dims, seed, state: "running", step: 0 };
    const canvas = app.plot.canvas;
    canvas.dataset.layout = "running";
    this.run = new LayoutRun({ method, count: app.points.length, dims, graph, params, seed },
      (frame) => this.showFrame(frame));
    const run = this.run;
    app.plot.moving = true;
    run.done.then((frame) => {
      if (this.run !== run) return;
      this.run = null;
      app.plot.moving = false;
      app.plot.redraw();
      if (!frame.stopped) performance.mark("explorer:layout-done");
      app.layout.state = frame.stopped ? "stopped" : "done";
      canvas.dataset.layout = app.layout.state;
      this.setRunning(false, frame.stopped
        ? `Stopped at step ${integer(frame.step)} of ${integer(frame.steps)}.`
        : `Finished: ${integer(frame.steps)} ${method === "umap" ? "epochs" : "iterations"}.`);
      this.parts.progress.hidden = !frame.stopped;
      app.layoutSettled();
    }, (error) => {
      if (this.run === run) this.fail(error, app.table);
    });
  }

  showFrame(frame) {
    const { app } = this;
    const dims = app.state.dims;
    const n = app.points.length;
    const column = (d) => Float64Array.from({ length: n }, (_, i) => frame.coords[i * dims + d]);
    app.plot.moveTo(column(0), column(1), dims === 3 ? column(2) : undefined);
    app.layout.step = frame.step;
    app.layout.steps = frame.steps;
    app.plot.canvas.dataset.layoutStep = String(frame.step);
    const cost = frame.cost === undefined ? "" : `, KL divergence ${frame.cost.toFixed(3)}`;
    const unit = app.layout.method === "umap" ? "epoch" : "iteration";
    this.progress(frame.step / frame.steps, `${NAMES[app.layout.method]}: ${unit} ` +
      `${integer(frame.step)} of ${integer(frame.steps)}${cost}.`);
    this.setCaption();
  }

  /** The caption: which projection, on how many rows, from which neighbours. */
  setCaption() {
    const { app } = this;
    const layout = app.layout;
    if (!layout) return;
    const { method, params, graph, dims, seed } = layout;
    const settings = method === "umap"
      ? `${params.neighbours} neighbours (the row itself included), min-dist ${params.minDist}, ` +
        `${integer(layout.steps ?? 0)} epochs`
      : `perplexity ${params.perplexity}, ${integer(layout.steps ?? 0)} iterations`;
    const library = method === "umap" ? "umap-js" : "@keckelt/tsne";
    const state = layout.state === "running" ? " (running)" : layout.state === "stopped"
      ? " (stopped early)" : "";
    app.setCaption(`${NAMES[method]}${state} (${dims}-D) of ${this.rowsProjected()}, on a ` +
      `neighbour graph from ${graph.source}; ${settings}, seed ${seed}; coordinates computed ` +
      `in this page by ${library}. Neighbour lists are full-space, not read off the picture.`);
  }

  stop() {
    this.token = null;
    if (this.run) this.run.stop();
  }

  setRunning(running, text) {
    this.parts.stop.disabled = !running;
    this.parts.run.disabled = running;
    this.parts.progress.hidden = !running;
    if (running) this.parts.progress.value = 0;
    setStatus(this.parts.status, text);
  }

  progress(fraction, text) {
    this.parts.progress.value = fraction;
    setStatus(this.parts.status, text);
  }

  refuse(text) {
    this.app.plot.canvas.dataset.layout = "refused";
    this.setRunning(false, "");
    setStatus(this.parts.status, text, true);
  }

  fail(error, table) {
    this.run = null;
    this.app.plot.moving = false;
    this.app.plot.canvas.dataset.layout = "failed";
    this.setRunning(false, "");
    setStatus(this.parts.status, `The layout failed: ${describe(error, table?.name ?? "")}`, true);
  }
}

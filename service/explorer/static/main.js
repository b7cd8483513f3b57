// The explorer: a table's picture (PCA from the service, or UMAP and t-SNE computed here on the
// service's exact neighbours) with full-space neighbours, analogies and text splits.
//
// Every number shown comes from the JSON API: GET /v1/tables, POST .../projection, .../project,
// .../neighbors, .../analogy, .../lookup, .../diagnostics and .../tokenize; UMAP and t-SNE
// coordinates are computed in this page from /neighbors' answers among the plotted rows, and
// the caption says so. This module finds each panel's root and hands it over.

import { post, onKeyNeeded } from "./common/api.js";
import { AnalogyPanel } from "./panels/analogy.js";
import { BookmarksPanel } from "./panels/bookmarks.js";
import { ColourPanel } from "./panels/colouring.js";
import { byId, el, fill } from "./common/dom.js";
import { Latest } from "./common/latest.js";
import { setUpExport } from "./panels/export.js";
import { askForKey } from "./common/keys.js";
import { describe, quote, Messages } from "./common/messages.js";
import { NeighboursPanel } from "./panels/neighbours.js";
import { Plot } from "./plot/plot.js";
import { MOST_ISOLATED, ProjectionPanel } from "./panels/projection.js";
import { defaultRanking, labelOrder, rankings } from "./plot/ranking.js";
import { SearchPanel } from "./panels/search.js";
import { SplitPanel } from "./panels/split.js";
import { SuspectsPanel } from "./panels/suspects.js";
import { fetchTables, TablePicker } from "./common/tables.js";
import { showTooltip } from "./common/tooltip.js";
import { EXPLORER_LINK } from "./panels/viewstate.js";

const CAMERA_WRITE_MS = 250;

const app = {
  state: EXPLORER_LINK.read(),
  tables: [],
  table: null,
  request: null,
  projection: null,
  // Pictures asked for: the answer for one that another has replaced is dropped.
  pictures: new Latest(),
  points: [],
  indexOfToken: new Map(),
  layout: null,
  plot: null,
  select: (token) => select(token),
  isolate: (tokens) => isolate(tokens),
  reproject: () => reproject(),
  writeLink: () => EXPLORER_LINK.write(app.state),
  setCaption: (text) => {
    byId("plot-caption").textContent = text;
  },
  layoutSettled: () => layoutSettled(),
  plottedPoints: () => plottedPoints(),
};
window.explorer = app;

async function start() {
  onKeyNeeded(askForKey);
  app.messages = new Messages(byId("plot-area"));
  const tooltip = byId("tooltip");
  app.plot = new Plot(byId("plot"), {
    onHover: (hit, sx, sy) => showTooltip(tooltip, hit, sx, sy),
    onPick: (hit) => select(hit.point.token),
    onView: cameraMoved,
  });
  app.picker = new TablePicker(byId("header"));
  app.search = new SearchPanel(byId("search-panel"), app);
  app.projectionPanel = new ProjectionPanel(byId("projection-panel"), app);
  app.neighbours = new NeighboursPanel(byId("neighbours-panel"), app);
  app.split = new SplitPanel(byId("split-panel"), app);
  app.analogy = new AnalogyPanel(byId("analogy-panel"), runAnalogy);
  app.colours = new ColourPanel(byId("colour-panel"), app);
  app.suspectsPanel = new SuspectsPanel(byId("suspects-panel"));
  app.bookmarks = new BookmarksPanel(byId("bookmarks-panel"), app, EXPLORER_LINK);
  setUpExport(byId("export-panel"), app);
  // Under fingers (phone.css shows it): what double-click does with a mouse.
  byId("fit-view").addEventListener("click", () => app.plot.fit());
  setUpHeader();
  // A link that names its table starts the projection at once, beside the table list.
  if (app.state.table) startProjection(app.state.table);
  try {
    app.tables = await fetchTables();
  } catch (error) {
    fail(error);
    return;
  }
  const wanted = app.state.table || app.tables[0]?.name;
  app.picker.show(app.tables, wanted, (name) => openTable(name, { keepView: false }));
  if (!app.tables.length) {
    nothingToPlot("This server serves no tables yet: nothing to explore.");
  } else if (!app.tables.some((table) => table.name === wanted)) {
    nothingToPlot(`No table named ${quote(wanted)}. Served tables: ` +
      `${app.tables.map((table) => table.name).join(", ")}. Pick one above.`);
  } else {
    await openTable(wanted, { keepView: true });
  }
}

async function openTable(name, { keepView }) {
  app.messages.clear();
  app.table = app.tables.find((table) => table.name === name);
  app.picker.show(app.tables, name, (other) => openTable(other, { keepView: false }));
  app.state.table = name;
  if (!keepView) Object.assign(app.state, { token: "", isolate: [], camera: [] });
  app.picker.showFacts(app.table);
  app.suspects = null;
  if (!(await showPicture({ keepCamera: keepView }))) return;
  const suspects = app.suspectsPanel.show(app);
  if (app.state.token) await select(app.state.token);
  else await app.split.show();
  await suspects;
}

// Project the rows the state asks for (again), and start a layout if it asks for one. False
// when another picture (another table, another selection) was asked for meanwhile.
async function showPicture({ keepCamera }) {
  const current = app.pictures.ask();
  app.projectionPanel.stop();
  app.layout = null;
  delete byId("plot").dataset.layout; // no layout until the next one starts
  app.neighbours.clear();
  app.analogy.clear();
  app.split.clear();
  app.points = [];
  app.indexOfToken = new Map();
  app.plot.setPoints([], []);
  app.plot.axes = app.state.projection === "pca";
  app.setCaption("");
  // The camera a link asks for stays in the state until the picture is there to take it.
  if (!keepCamera) app.state.camera = [];
  const camera = app.state.camera;
  app.messages.showOverlay(`Projecting ${app.table.name}\u2026`);
  const [key, answer] = takeProjection(app.table.name);
  let projection;
  try {
    projection = await answer;
  } catch (error) {
    if (!current()) return false;
    app.projection = null;
    fail(error);
    return true;
  }
  if (!current()) return false;
  app.projection = projection;
  app.answered = key;
  performance.mark("explorer:projection");
  plotProjection(app.projection);
  app.projectionPanel.showIsolated();
  app.writeLink();
  const layout = app.state.projection !== "pca";
  if (layout) {
    app.pendingCamera = camera.length ? camera : null;
    app.projectionPanel.runLayout();
  } else if (camera.length) {
    app.plot.setCamera(camera);
  }
  return true;
}

function startProjection(name) {
  const request = app.projectionPanel.request();
  const answer = post(name, "projection", request);
  answer.catch(() => {}); // reported when taken
  app.started = { name, request: JSON.stringify(request), answer };
}

// [key, answer]: the projection the state asks for, and what names it (app.answered once
// drawn).
function takeProjection(name) {
  const wanted = JSON.stringify(app.projectionPanel.request());
  const key = `${name}\n${wanted}`;
  // Another method on the same rows (PCA to UMAP, say) needs no new answer.
  if (app.projection && app.answered === key) return [key, Promise.resolve(app.projection)];
  if (app.started?.name !== name || app.started.request !== wanted) startProjection(name);
  const { answer } = app.started;
  app.started = null;
  app.request = JSON.parse(wanted);
  app.answered = null;
  return [key, answer];
}

function plotProjection(projection) {
  app.points = projection.points;
  app.indexOfToken = new Map(app.points.map((point, i) => [point.token, i]));
  showRankings();
  app.colours.show(app.points);
  app.suspectsPanel.flag(app);
  app.messages.showOverlay(app.points.length ? "" : "The selection has no rows with a direction.");
  app.setCaption(app.projectionPanel.pcaCaption(projection));
  requestAnimationFrame(() => {
    performance.mark("explorer:plotted");
    byId("plot").dataset.plotted = String(app.points.length);
  });
}

/** The points with the coordinates they are drawn at (a layout's, or /projection's). */
function plottedPoints() {
  if (app.state.projection === "pca") return app.points;
  const { px, py, pz, dims } = app.plot;
  return app.points.map((point, i) => {
    const placed = { ...point, x: px[i], y: py[i] };
    if (dims === 3) placed.z = pz[i];
    else delete placed.z;
    return placed;
  });
}

function layoutSettled() {
  app.projectionPanel.setCaption();
  if (app.pendingCamera?.length) app.plot.setCamera(app.pendingCamera);
  app.pendingCamera = null;
}

async function select(token) {
  if (!app.table) return;
  app.state.token = token;
  app.writeLink();
  app.analogy.clear();
  await mark(() => app.neighbours.show(token));
}

async function runAnalogy() {
  if (!app.table) return;
  app.neighbours.clear();
  app.state.token = "";
  app.writeLink();
  await mark(() => app.analogy.show(app));
}

/** Mark on the plot the rows a panel's `show` answers, unless the table changed meanwhile. */
async function mark(show) {
  const table = app.table;
  try {
    const marks = await show();
    if (marks !== undefined && app.table === table) app.plot.setMarks(marks ?? []);
  } catch (error) {
    fail(error);
  }
}

/** Re-project only `tokens` (none: every row again), keeping the chosen word. */
async function isolate(tokens) {
  if (tokens.length > MOST_ISOLATED) {
    app.messages.show(`At most ${MOST_ISOLATED} rows can be isolated.`);
    return;
  }
  app.state.isolate = [...new Set(tokens)];
  await reproject();
}

async function reproject() {
  if (!app.table) return;
  if (!(await showPicture({ keepCamera: false }))) return;
  if (app.state.token) await select(app.state.token);
}

// The camera in the link, a moment after the person stops moving it.
function cameraMoved(plot) {
  clearTimeout(app.cameraTimer);
  app.cameraTimer = setTimeout(() => {
    if (!app.points.length || app.pendingCamera || !plot.points.length) return;
    app.state.camera = plot.camera();
    app.writeLink();
  }, CAMERA_WRITE_MS);
}

function setUpHeader() {
  const { state } = app;
  const points = byId("points");
  const selection = byId("selection");
  const seed = byId("seed");
  [points.value, selection.value, seed.value] = [state.points, state.selection, state.seed];
  seed.hidden = state.selection !== "random";
  const reopen = () => {
    state.isolate = [];
    if (app.table) openTable(app.table.name, { keepView: true });
  };
  points.addEventListener("change", () => {
    state.points = Math.max(1, Number.parseInt(points.value, 10) || state.points);
    reopen();
  });
  selection.addEventListener("change", () => {
    state.selection = selection.value;
    seed.hidden = state.selection !== "random";
    reopen();
  });
  seed.addEventListener("change", () => {
    state.seed = Math.max(0, Number.parseInt(seed.value, 10) || 0);
    reopen();
  });
  byId("labels").addEventListener("change", () => {
    state.labels = byId("labels").value;
    app.writeLink();
    app.plot.setLabelOrder(labelOrder(app.points, state.labels));
  });
}

// The label ranking picker, kept when the new points offer the same ranking.
function showRankings() {
  const picker = byId("labels");
  const choices = rankings(app.points);
  if (!choices.some((choice) => choice.value === app.state.labels)) {
    app.state.labels = defaultRanking(app.points);
  }
  fill(picker, choices.map((choice) => el("option", { value: choice.value }, choice.text)));
  picker.value = app.state.labels;
  app.plot.setPoints(app.points, labelOrder(app.points, app.state.labels), app.state.dims);
}

function nothingToPlot(text) {
  app.messages.show(text);
  app.messages.showOverlay(text);
}

function fail(error) {
  const text = describe(error, app.table?.name ?? "");
  app.messages.show(text);
  if (!app.points.length) app.messages.showOverlay(text);
}

start();

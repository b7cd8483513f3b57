// The explorer: a table's PCA picture with full-space neighbours and analogies.
//
// Every number shown comes from the JSON API: GET /v1/tables, POST .../projection,
// .../project, .../neighbors, .../analogy, .../lookup, .../diagnostics and .../tokenize.

import { post, onKeyNeeded } from "./api.js";
import { showAnalogy, clearAnalogy } from "./analogy.js";
import { byId, el, fill } from "./dom.js";
import { integer, percent } from "./format.js";
import { setUpExport } from "./export.js";
import { askForKey } from "./keys.js";
import { describe, quote, showMessage, clearMessage, showPlotMessage } from "./messages.js";
import { showNeighbours, clearNeighbours } from "./neighbours.js";
import { Plot } from "./plot.js";
import { defaultRanking, labelOrder, rankings } from "./ranking.js";
import { setUpSearch } from "./search.js";
import { showSuspects } from "./suspects.js";
import { clearSplit, setUpSplit, showSplit } from "./split.js";
import { readLink, writeLink } from "./state.js";
import { fetchTables, showFacts, showTables } from "./tables.js";
import { showTooltip } from "./tooltip.js";

const app = {
  state: readLink(),
  tables: [],
  table: null,
  request: null,
  projection: null,
  points: [],
  indexOfToken: new Map(),
  plot: null,
  select: (token) => select(token),
};
window.explorer = app;

async function start() {
  onKeyNeeded(askForKey);
  app.plot = new Plot(byId("plot"), {
    onHover: showTooltip,
    onPick: (hit) => select(hit.point.token),
  });
  setUpControls();
  setUpSearch(app);
  setUpSplit(app);
  setUpExport(app);
  // A link that names its table starts the projection at once, beside the table list.
  if (app.state.table) startProjection(app.state.table);
  try {
    app.tables = await fetchTables();
  } catch (error) {
    fail(error);
    return;
  }
  const wanted = app.state.table || app.tables[0]?.name;
  showTables(app.tables, wanted, (name) => openTable(name, { keepWord: false }));
  if (!app.tables.length) {
    nothingToPlot("This server serves no tables yet: nothing to explore.");
  } else if (!app.tables.some((table) => table.name === wanted)) {
    byId("table").value = "";
    nothingToPlot(`No table named ${quote(wanted)}. Served tables: ` +
      `${app.tables.map((table) => table.name).join(", ")}. Pick one above.`);
  } else {
    await openTable(wanted, { keepWord: true });
  }
}

async function openTable(name, { keepWord }) {
  clearMessage();
  app.table = app.tables.find((table) => table.name === name);
  app.state.table = name;
  if (!keepWord) app.state.token = "";
  showFacts(app.table);
  clearNeighbours();
  clearAnalogy();
  clearSplit();
  app.points = [];
  app.indexOfToken = new Map();
  app.plot.setPoints([], []);
  setCaption("");
  showPlotMessage(`Projecting ${name}\u2026`);
  try {
    app.projection = await takeProjection(name);
    performance.mark("explorer:projection");
  } catch (error) {
    fail(error);
    return;
  }
  plotProjection(app.projection);
  writeLink(app.state);
  const suspects = showSuspects(app);
  if (app.state.token) await select(app.state.token);
  else await showSplit(app);
  await suspects;
}

function startProjection(name) {
  const { points, selection, seed } = app.state;
  const request = { method: "pca", dims: 2, points, selection, seed };
  const answer = post(name, "projection", request);
  answer.catch(() => {}); // reported when taken
  app.started = { name, request, answer };
}

function takeProjection(name) {
  const started = app.started?.name === name ? app.started : null;
  app.started = null;
  if (!started) {
    startProjection(name);
    return takeProjection(name);
  }
  app.request = started.request;
  return started.answer;
}

function plotProjection(projection) {
  app.points = projection.points;
  app.indexOfToken = new Map(app.points.map((point, i) => [point.token, i]));
  showRankings();
  showPlotMessage(app.points.length ? "" : "The selection has no rows with a direction.");
  const [first, second] = projection.explained_variance_ratio;
  setCaption(`PCA of ${integer(projection.sample_rows)} spherized rows: PC1 ${percent(first)}` +
    ` and PC2 ${percent(second)} of the variance. ${integer(app.points.length)} of ` +
    `${integer(app.table.rows)} rows plotted (${app.state.selection} rows).`);
  requestAnimationFrame(() => {
    performance.mark("explorer:plotted");
    byId("plot").dataset.plotted = String(app.points.length);
  });
}

async function select(token) {
  if (!app.table) return;
  app.state.token = token;
  writeLink(app.state);
  clearAnalogy();
  const table = app.table;
  try {
    const marks = await showNeighbours(app, token);
    if (app.table === table) app.plot.setMarks(marks ?? []);
  } catch (error) {
    fail(error);
  }
}

async function runAnalogy() {
  if (!app.table) return;
  clearNeighbours();
  app.state.token = "";
  writeLink(app.state);
  try {
    app.plot.setMarks((await showAnalogy(app)) ?? []);
  } catch (error) {
    fail(error);
  }
}

function setUpControls() {
  const { state } = app;
  const points = byId("points");
  const selection = byId("selection");
  const seed = byId("seed");
  const k = byId("k");
  [points.value, selection.value, seed.value, k.value] = [state.points, state.selection,
    state.seed, state.k];
  seed.hidden = state.selection !== "random";
  const reopen = () => app.table && openTable(app.table.name, { keepWord: true });
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
  k.addEventListener("change", () => {
    state.k = Math.max(1, Number.parseInt(k.value, 10) || state.k);
    if (state.token) select(state.token);
  });
  byId("labels").addEventListener("change", () => {
    state.labels = byId("labels").value;
    writeLink(state);
    app.plot.setLabelOrder(labelOrder(app.points, state.labels));
  });
  byId("analogy-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runAnalogy();
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
  app.plot.setPoints(app.points, labelOrder(app.points, app.state.labels));
}

function setCaption(text) {
  byId("plot-caption").textContent = text;
}

function nothingToPlot(text) {
  showMessage(text);
  showPlotMessage(text);
}

function fail(error) {
  const text = describe(error, app.table?.name ?? "");
  showMessage(text);
  if (!app.points.length) showPlotMessage(text);
}

start();

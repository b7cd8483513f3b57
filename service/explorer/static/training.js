// Watch training and Drift: a table's checkpoints played in order in one PCA picture, and two
// versions of a table compared.
//
// Every number shown comes from the JSON API: GET /v1/tables, POST .../trajectory and
// .../drift (and the pages' API key dialog as in the explorer).

import { onKeyNeeded } from "./api.js";
import { byId } from "./dom.js";
import { integer } from "./format.js";
import { showDrift, showVersions } from "./drift.js";
import { askForKey } from "./keys.js";
import { describe, showMessage, clearMessage, showPlotMessage } from "./messages.js";
import { drawMovementChart } from "./movementchart.js";
import { Player } from "./player.js";
import { Plot } from "./plot.js";
import { fetchTables, showFacts, showTables } from "./tables.js";
import { showTooltip } from "./tooltip.js";
import { Frames, fetchTrajectory } from "./trajectory.js";

// Rows followed, at most; and rows x checkpoints, within the server's default limit
// (max_trajectory_values). A server configured lower answers 422 with its limit, and the page
// asks again within it.
const POINTS = 2000;
const VALUES = 20000;
const DEFAULTS = { table: "", view: "training", threshold: 10, from: "", to: "" };

const app = {
  state: readLink(),
  tables: [],
  table: null,
  frames: null,
  position: 0,
  plot: null,
  player: null,
  searchDrift: (word) => {
    byId("drift-word").value = word;
    return showDrift(app);
  },
};
window.training = app;

async function start() {
  onKeyNeeded(askForKey);
  app.plot = new Plot(byId("plot"), { onHover: hover });
  app.player = new Player({
    slider: byId("checkpoint"),
    train: byId("train"),
    pause: byId("pause"),
    onFrame: showFrame,
  });
  setUpControls();
  try {
    app.tables = await fetchTables();
  } catch (error) {
    fail(error);
    return;
  }
  const withCheckpoints = app.tables.find((table) => table.checkpoints.length > 1);
  const wanted = app.state.table || (withCheckpoints ?? app.tables[0])?.name;
  showTables(app.tables, wanted, (name) => openTable(name));
  if (!app.tables.some((table) => table.name === wanted)) {
    const text = app.tables.length ? `No table named \u201c${wanted}\u201d.` : "No tables served.";
    showMessage(text);
    showPlotMessage(text);
    return;
  }
  await openTable(wanted);
}

async function openTable(name) {
  clearMessage();
  app.table = app.tables.find((table) => table.name === name);
  app.state.table = name;
  showFacts(app.table);
  writeLink();
  showVersions(app.table, app.tables, app.state);
  await showView(app.state.view);
}

async function showView(view) {
  app.state.view = view;
  writeLink();
  byId("training-view").hidden = view !== "training";
  byId("drift-view").hidden = view !== "drift";
  byId("tab-training").setAttribute("aria-selected", String(view === "training"));
  byId("tab-drift").setAttribute("aria-selected", String(view === "drift"));
  if (view === "drift") {
    app.player.pause();
    await showDrift(app);
  } else {
    await showTraining();
  }
}

async function showTraining() {
  const table = app.table;
  if (app.frames?.table === table) return;
  app.frames = null;
  app.plot.setPoints([], []);
  showPlotMessage(`Following ${table.name}'s rows through ${table.checkpoints.length} ` +
    "checkpoints\u2026");
  let answer;
  try {
    const points = Math.min(POINTS, table.rows, Math.floor(VALUES / table.checkpoints.length));
    answer = await fetchTrajectory(table.name, Math.max(1, points));
  } catch (error) {
    fail(error);
    return;
  }
  if (app.table !== table) return;
  const frames = new Frames(answer);
  frames.table = table;
  app.frames = frames;
  showPlotMessage(frames.points.length ? "" : "No rows with a direction to follow.");
  app.plot.setPoints(frames.points, frames.points.map((_, i) => i));
  const all = frames.all();
  app.plot.view.fit(all.xs, all.ys); // one frame for the whole animation
  app.plot.fitted = false;
  byId("checkpoint-status").dataset.checkpoints = String(frames.count);
  app.player.load(frames.count);
  byId("plot").dataset.plotted = String(frames.points.length);
}

function showFrame(position) {
  const frames = app.frames;
  if (!frames) return;
  app.position = position;
  const { xs, ys } = frames.at(position);
  app.plot.moveTo(xs, ys);
  const c = Math.floor(position);
  const checkpoint = frames.checkpoints[c];
  const exact = Number.isInteger(position);
  byId("frame-label").textContent = exact
    ? `Checkpoint ${c} of ${frames.count - 1}: ${checkpoint.label}`
    : `Interpolated frame between checkpoint ${c} (${checkpoint.label}) and checkpoint ` +
      `${c + 1} (${frames.checkpoints[c + 1].label}): not a real version of the rows.`;
  byId("checkpoint-status").textContent = `${checkpoint.label}: mean norm ` +
    `${checkpoint.mean_norm.toFixed(3)}, mean distance from the initial rows ` +
    `${checkpoint.mean_distance_to_initial.toFixed(3)} (whole table).`;
  byId("plot").dataset.checkpoint = exact ? String(c) : "";
  if (c !== app.shown || exact) showRare(c);
}

function showRare(c) {
  app.shown = c;
  const frames = app.frames;
  const threshold = app.state.threshold;
  const counts = frames.counts();
  const rare = [];
  counts.forEach((count, i) => count < threshold && rare.push(i));
  app.plot.setSuspects(rare);
  byId("rare-status").textContent = frames.countColumn === null
    ? "This table has no count column: no rare rows to mark."
    : `${integer(rare.length)} of ${integer(counts.length)} rows have a ${frames.countColumn} ` +
      `below ${integer(threshold)} (amber).`;
  drawMovementChart(byId("movement-chart"), byId("movement-note"), frames, c, threshold);
}

function hover(hit, sx, sy) {
  if (!hit || !app.frames) {
    showTooltip(null);
    return;
  }
  const i = app.frames.points.indexOf(hit.point);
  const c = Math.floor(app.position);
  const { xs, ys } = app.frames.at(app.position);
  const point = { ...hit.point, x: xs[i], y: ys[i], norm: hit.point.norm[c] };
  showTooltip({ ...hit, point }, sx, sy);
}

function setUpControls() {
  byId("tab-training").addEventListener("click", () => app.table && showView("training"));
  byId("tab-drift").addEventListener("click", () => app.table && showView("drift"));
  const threshold = byId("threshold");
  threshold.value = String(app.state.threshold);
  threshold.addEventListener("input", () => {
    app.state.threshold = Math.max(1, Number.parseInt(threshold.value, 10) || 1);
    writeLink();
    if (app.frames) showRare(Math.floor(app.position));
  });
  byId("drift-form").addEventListener("submit", (event) => {
    event.preventDefault();
    showDrift(app).then(writeLink);
  });
  byId("drift-word-form").addEventListener("submit", (event) => {
    event.preventDefault();
    showDrift(app);
  });
}

function readLink() {
  const params = new URLSearchParams(window.location.search);
  const state = { ...DEFAULTS };
  for (const name of ["table", "view", "from", "to"]) {
    if (params.has(name)) state[name] = params.get(name);
  }
  const threshold = Number.parseInt(params.get("threshold") ?? "", 10);
  if (threshold > 0) state.threshold = threshold;
  if (!["training", "drift"].includes(state.view)) state.view = DEFAULTS.view;
  return state;
}

function writeLink() {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(app.state)) {
    if (value !== DEFAULTS[name] || name === "table") params.set(name, String(value));
  }
  window.history.replaceState(null, "", `${window.location.pathname}?${params}`);
}

function fail(error) {
  const text = describe(error, app.table?.name ?? "");
  showMessage(text);
  if (!app.frames) showPlotMessage(text);
}

start();

// Watch training and Drift: a table's checkpoints played in order in one PCA picture, and two
// versions of a table compared.
//
// Every number shown comes from the JSON API: GET /v1/tables, POST .../trajectory and
// .../drift (and the pages' API key dialog as in the explorer).

import { onKeyNeeded } from "./common/api.js";
import { byId } from "./common/dom.js";
import { integer } from "./common/format.js";
import { DriftPanel } from "./training/drift.js";
import { askForKey } from "./common/keys.js";
import { describe, Messages } from "./common/messages.js";
import { drawMovementChart } from "./training/movementchart.js";
import { Player } from "./training/player.js";
import { Plot } from "./plot/plot.js";
import { LinkState } from "./common/state.js";
import { fetchTables, TablePicker } from "./common/tables.js";
import { showTooltip } from "./common/tooltip.js";
import { Frames, fetchTrajectory } from "./training/trajectory.js";

// Rows followed, at most; and rows x checkpoints, within the server's default limit
// (max_trajectory_values). A server configured lower answers 422 with its limit, and the page
// asks again within it.
const POINTS = 2000;
const VALUES = 20000;
const LINK = new LinkState({
  table: { value: "" },
  view: { value: "training", kind: ["training", "drift"] },
  threshold: { value: 10, kind: "count" },
  from: { value: "" },
  to: { value: "" },
});

const app = {
  state: LINK.read(),
  tables: [],
  table: null,
  frames: null,
  position: 0,
  plot: null,
  player: null,
};
window.training = app;

async function start() {
  onKeyNeeded(askForKey);
  app.messages = new Messages(byId("plot-area"));
  app.picker = new TablePicker(byId("header"));
  app.drift = new DriftPanel(byId("drift-view"), app, writeLink);
  app.plot = new Plot(byId("plot"), { onHover: hover, refitOnMove: false });
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
  app.picker.show(app.tables, wanted, (name) => openTable(name));
  if (!app.tables.some((table) => table.name === wanted)) {
    const text = app.tables.length ? `No table named \u201c${wanted}\u201d.` : "No tables served.";
    app.messages.show(text);
    app.messages.showOverlay(text);
    return;
  }
  await openTable(wanted);
}

async function openTable(name) {
  app.messages.clear();
  app.table = app.tables.find((table) => table.name === name);
  app.picker.show(app.tables, name, (other) => openTable(other));
  app.state.table = name;
  app.picker.showFacts(app.table);
  writeLink();
  app.drift.showVersions(app.table, app.tables, app.state);
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
    await app.drift.show();
  } else {
    await showTraining();
  }
}

async function showTraining() {
  const table = app.table;
  if (app.frames?.table === table) return;
  app.frames = null;
  app.plot.setPoints([], []);
  app.messages.showOverlay(`Following ${table.name}'s rows through ${table.checkpoints.length} ` +
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
  app.messages.showOverlay(frames.points.length ? "" : "No rows with a direction to follow.");
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
  // Checkpoints are numbered from 0: "checkpoint 20, the 21st of 21", never "20 of 20".
  byId("frame-label").textContent = exact
    ? `Checkpoint ${c} (${c + 1} of ${frames.count}): ${checkpoint.label}`
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
  const card = byId("tooltip");
  if (!hit || !app.frames) {
    showTooltip(card, null);
    return;
  }
  const c = Math.floor(app.position);
  const point = { ...hit.point, norm: hit.point.norm[c] };
  showTooltip(card, { ...hit, point }, sx, sy);
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
}

function writeLink() {
  LINK.write(app.state);
}

function fail(error) {
  const text = describe(error, app.table?.name ?? "");
  app.messages.show(text);
  if (!app.frames) app.messages.showOverlay(text);
}

start();

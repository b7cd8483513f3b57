// Movement by count at one checkpoint: each plotted row's L2 distance from its initial row
// (y) against its count (x, log scale), rare rows (count below the threshold) in amber; the
// whole table's Spearman rho of log count with that distance, from /trajectory's summary.

import { clearedChart, drawAxes, MARGIN } from "../plot/countchart.js";
import { COLORS } from "../plot/marks.js";
import { compact, score } from "../common/format.js";

const ROW = "rgba(52, 84, 145, 0.45)";

/** Draw the chart for checkpoint `c`, or hide it when the table has no counts. */
export function drawMovementChart(canvas, note, frames, c, threshold) {
  const counts = frames.counts();
  const rows = counts.map((count, i) => [count, frames.points[i].distance_to_initial[c]])
    .filter(([count, distance]) => count > 0 && Number.isFinite(distance));
  canvas.hidden = frames.countColumn === null || rows.length === 0;
  if (canvas.hidden) {
    note.textContent = "This table has no count column: no movement by count to draw.";
    return;
  }
  const figure = frames.checkpoints[c].spearman_distance;
  note.textContent = `Checkpoint ${c}: distance from the initial row by ${frames.countColumn}, ` +
    `${compact(rows.length)} plotted rows. ` + (figure
    ? `Over the whole table (${compact(figure.n)} rows), Spearman \u03c1(log count, distance) ` +
      `= ${score(figure.rho)}.`
    : "No correlation at this checkpoint (the rows have not moved, or too few have counts).");
  draw(canvas, rows, threshold);
  canvas.dataset.rows = String(rows.length);
  canvas.dataset.rare = String(rows.filter(([count]) => count < threshold).length);
}

function draw(canvas, rows, threshold) {
  const { ctx, width, height } = clearedChart(canvas);
  const scale = scales(rows, width, height);
  drawAxes(ctx, scale, width, height, "distance from init");
  for (const rare of [false, true]) {
    ctx.fillStyle = rare ? COLORS.suspect : ROW;
    ctx.beginPath();
    for (const [count, distance] of rows) {
      if ((count < threshold) !== rare) continue;
      const [x, y] = [scale.x(count), scale.y(distance)];
      ctx.moveTo(x + 2, y);
      ctx.arc(x, y, 2, 0, 2 * Math.PI);
    }
    ctx.fill();
  }
}

function scales(rows, width, height) {
  let [lowX, highX, highY] = [Infinity, -Infinity, 0];
  for (const [count, distance] of rows) {
    lowX = Math.min(lowX, Math.log10(count));
    highX = Math.max(highX, Math.log10(count));
    highY = Math.max(highY, distance);
  }
  const spanX = highX - lowX || 1;
  highY = highY * 1.08 || 1;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  return {
    x: (count) => MARGIN.left + ((Math.log10(count) - lowX) / spanX) * plotW,
    y: (distance) => MARGIN.top + (1 - distance / highY) * plotH,
    lowX, highX, lowY: 0, highY,
  };
}

// The norm-by-count chart of a table with counts: the rows' norm quartiles per count decile
// (boxes, from /diagnostics' `counts.bins`), and the suspects at their count and norm (amber).
// The seed's observation: rare words stall near their initialisation.

import { COLORS } from "./marks.js";
import { compact, score } from "../common/format.js";

export const MARGIN = { left: 44, right: 10, top: 10, bottom: 30 };
const BAND = "rgba(52, 84, 145, 0.18)";
const LINE = "rgba(52, 84, 145, 0.9)";
const BOX = 8;

/** Draw the chart on `canvas` and its figures in `note`, or hide it when there are no counts. */
export function drawCountChart(canvas, note, answer, suspects) {
  const counts = answer.counts;
  canvas.hidden = !counts || !counts.bins.length;
  note.textContent = "";
  if (canvas.hidden) return;
  const rho = counts.spearman_norm;
  note.textContent = `Norm by ${counts.column}, ${compact(counts.rows)} rows with a count` +
    (rho ? `: Spearman \u03c1(log ${counts.column}, norm) = ${score(rho.rho)}.` : ".");
  const withCounts = suspects.filter((s) => typeof s.count === "number" && s.count > 0);
  draw(canvas, counts.bins, withCounts);
  canvas.dataset.bins = String(counts.bins.length);
  canvas.dataset.suspects = String(withCounts.length);
}

function draw(canvas, bins, suspects) {
  const { ctx, width, height } = clearedChart(canvas);
  const scale = scales(bins, suspects, width, height);
  drawAxes(ctx, scale, width, height);
  drawBins(ctx, bins, scale);
  ctx.fillStyle = COLORS.suspect;
  for (const suspect of suspects) {
    ctx.beginPath();
    ctx.arc(scale.x(suspect.count), scale.y(suspect.norm), 2.5, 0, 2 * Math.PI);
    ctx.fill();
  }
}

function scales(bins, suspects, width, height) {
  const counts = [...bins.flatMap((b) => [b.low, b.high]), ...suspects.map((s) => s.count)];
  const norms = [...bins.flatMap((b) => b.norm_quartiles), ...suspects.map((s) => s.norm)];
  const [lowX, highX] = [Math.log10(Math.min(...counts)), Math.log10(Math.max(...counts))];
  const [least, most] = [Math.min(...norms), Math.max(...norms)];
  const pad = (most - least) * 0.08 || 0.05;
  const [lowY, highY] = [Math.max(0, least - pad), most + pad];
  const spanX = highX - lowX || 1;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  return {
    x: (count) => MARGIN.left + ((Math.log10(count) - lowX) / spanX) * plotW,
    y: (norm) => MARGIN.top + (1 - (norm - lowY) / (highY - lowY)) * plotH,
    lowX, highX, lowY, highY,
  };
}

/** The chart's 2-D context, sized to the canvas in CSS pixels and cleared. */
export function clearedChart(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || 300;
  const height = canvas.clientHeight || 160;
  [canvas.width, canvas.height] = [width * ratio, height * ratio];
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return { ctx, width, height };
}

/** Axes with a log-count x axis and the y axis named `yLabel`, ticks at the ends. */
export function drawAxes(ctx, scale, width, height, yLabel = "norm") {
  ctx.strokeStyle = "#adb5bd";
  ctx.fillStyle = "#495057";
  ctx.font = "11px system-ui, sans-serif";
  ctx.beginPath();
  ctx.moveTo(MARGIN.left, MARGIN.top);
  ctx.lineTo(MARGIN.left, height - MARGIN.bottom);
  ctx.lineTo(width - MARGIN.right, height - MARGIN.bottom);
  ctx.stroke();
  ctx.textAlign = "center";
  ctx.fillText("count (log scale)", (MARGIN.left + width - MARGIN.right) / 2, height - 4);
  ctx.fillText(compact(10 ** scale.lowX), MARGIN.left, height - MARGIN.bottom + 12);
  ctx.fillText(compact(10 ** scale.highX), width - MARGIN.right - 8, height - MARGIN.bottom + 12);
  ctx.textAlign = "right";
  ctx.fillText(score(scale.highY), MARGIN.left - 4, MARGIN.top + 8);
  ctx.fillText(score(scale.lowY), MARGIN.left - 4, height - MARGIN.bottom);
  ctx.save();
  ctx.translate(10, (height - MARGIN.bottom) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center";
  ctx.fillText(yLabel, 0, 0);
  ctx.restore();
}

// Each decile as a box: its norm quartiles at the middle of its count range, the medians
// joined by a line.
function drawBins(ctx, bins, scale) {
  const middle = (bin) => scale.x(Math.sqrt(bin.low * bin.high));
  ctx.fillStyle = BAND;
  ctx.strokeStyle = LINE;
  for (const bin of bins) {
    const [low, median, high] = bin.norm_quartiles.map(scale.y);
    const x = middle(bin);
    ctx.fillRect(x - BOX / 2, high, BOX, low - high);
    ctx.beginPath();
    ctx.moveTo(x - BOX / 2, median);
    ctx.lineTo(x + BOX / 2, median);
    ctx.stroke();
  }
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  bins.forEach((bin, i) => {
    const [x, y] = [middle(bin), scale.y(bin.norm_quartiles[1])];
    if (i === 0) ctx.moveTo(x, y);
    else ctx.lineTo(x, y);
  });
  ctx.stroke();
  ctx.lineWidth = 1;
}

// The scatter plot on a <canvas>: every plotted row, the marked words, labels, zoom and pan.
//
// Plotted rows are dots; words placed through /project because they are not in the plotted
// set are hollow diamonds. Suspects (rows /diagnostics ranks as possibly under-trained, see
// suspects.js; or a point with `suspect: true`) are drawn in amber.

import { listenToGestures } from "./gestures.js";
import { LabelLayer } from "./labels.js";
import { View } from "./view.js";

export const COLORS = {
  point: "rgba(52, 84, 145, 0.45)",
  suspect: "#f59f00",
  match: "#e8590c",
  selected: "#c92a2a",
  neighbour: "#0b7285",
  term: "#5c940d",
  answer: "#7048e8",
  result: "#7048e8",
  piece: "#1971c2",
};
const HIT_RADIUS = 8;
const MATCH_LABELS = 40;

export class Plot {
  constructor(canvas, { onHover = () => {}, onPick = () => {} } = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.view = new View();
    this.labels = new LabelLayer();
    this.onHover = onHover;
    this.onPick = onPick;
    this.fitted = true;
    this.setPoints([], []);
    listenToGestures(this);
    new ResizeObserver(() => this.resize()).observe(canvas.parentElement);
    this.resize();
  }

  /** Plot `points` ({token, id, x, y, ...}); `labelOrder` ranks their indexes for labels. */
  setPoints(points, labelOrder) {
    this.points = points;
    this.xs = Float64Array.from(points, (p) => p.x);
    this.ys = Float64Array.from(points, (p) => p.y);
    this.labelOrder = labelOrder;
    this.matches = new Set();
    this.suspects = new Set();
    delete this.canvas.dataset.suspects;
    this.marks = [];
    this.hovered = null;
    this.canvas.dataset.points = String(points.length);
    this.fit();
  }

  /** New coordinates for the same points (a frame of an animation); the view stays. */
  moveTo(xs, ys) {
    this.xs = xs;
    this.ys = ys;
    this.redraw();
  }

  /** A new ranking of the points for labels (indexes, first to label first). */
  setLabelOrder(labelOrder) {
    this.labelOrder = labelOrder;
    this.redraw();
  }

  /** Indexes of plotted points that match the search. */
  setMatches(indexes) {
    this.matches = new Set(indexes);
    this.redraw();
  }

  /** Indexes of plotted points that /diagnostics ranks as suspects (drawn in amber). */
  setSuspects(indexes) {
    this.suspects = new Set(indexes);
    this.canvas.dataset.suspects = String(this.suspects.size);
    this.redraw();
  }

  /** Marked words: [{point, role, index}], index -1 for one placed but not plotted. */
  setMarks(marks) {
    this.marks = marks;
    if (this.fitted) this.fit();
    else this.redraw();
  }

  fit() {
    const xs = [...this.xs, ...this.marks.filter((m) => m.index < 0).map((m) => m.point.x)];
    const ys = [...this.ys, ...this.marks.filter((m) => m.index < 0).map((m) => m.point.y)];
    this.view.fit(xs, ys);
    this.fitted = true;
    this.redraw();
  }

  /** Where a point is drawn, in CSS pixels from the canvas's top left corner. */
  screenOf(point) {
    return { x: this.view.screenX(point.x), y: this.view.screenY(point.y) };
  }

  resize() {
    const box = this.canvas.parentElement.getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.max(1, Math.round(box.width * ratio));
    this.canvas.height = Math.max(1, Math.round(box.height * ratio));
    this.canvas.style.width = `${box.width}px`;
    this.canvas.style.height = `${box.height}px`;
    this.view.resize(box.width, box.height);
    // Until the person zooms or pans, the whole picture stays in view.
    if (this.fitted) this.fit();
    else this.redraw();
  }

  redraw() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.draw();
    });
  }

  draw() {
    const { ctx, view } = this;
    const ratio = this.canvas.width / Math.max(view.width, 1);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, view.width, view.height);
    this.drawAxes();
    this.drawDots();
    this.drawLinks();
    for (const mark of this.marks) this.drawMark(mark);
    if (this.hovered) this.drawRing(this.hovered.point);
    this.drawLabels();
  }

  drawAxes() {
    const { ctx, view } = this;
    ctx.strokeStyle = "rgba(0, 0, 0, 0.08)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(view.screenX(0), 0);
    ctx.lineTo(view.screenX(0), view.height);
    ctx.moveTo(0, view.screenY(0));
    ctx.lineTo(view.width, view.screenY(0));
    ctx.stroke();
  }

  dotRadius() {
    const n = this.points.length;
    return n > 8000 ? 1.6 : n > 2000 ? 2.1 : 2.8;
  }

  drawDots() {
    const { ctx, view, points } = this;
    const r = this.dotRadius();
    const layers = { point: [], suspect: [], match: [] };
    for (let i = 0; i < points.length; i++) {
      const suspect = this.suspects.has(i) || points[i].suspect;
      const layer = this.matches.has(i) ? "match" : suspect ? "suspect" : "point";
      layers[layer].push(i);
    }
    for (const [layer, indexes] of Object.entries(layers)) {
      const radius = layer === "match" ? r + 1.5 : r;
      ctx.fillStyle = COLORS[layer];
      ctx.beginPath();
      for (const i of indexes) {
        const [sx, sy] = [view.screenX(this.xs[i]), view.screenY(this.ys[i])];
        if (sx < -5 || sy < -5 || sx > view.width + 5 || sy > view.height + 5) continue;
        ctx.moveTo(sx + radius, sy);
        ctx.arc(sx, sy, radius, 0, 2 * Math.PI);
      }
      ctx.fill();
    }
  }

  // From the selected word to its neighbours, and from the analogy's terms to its result.
  drawLinks() {
    const { ctx } = this;
    const hubs = { neighbour: "selected", term: "result" };
    for (const [role, hubRole] of Object.entries(hubs)) {
      const hub = this.marks.find((m) => m.role === hubRole);
      if (!hub) continue;
      const from = this.screenOf(hub.point);
      ctx.strokeStyle = COLORS[role];
      ctx.globalAlpha = 0.35;
      ctx.setLineDash(role === "term" ? [4, 4] : []);
      ctx.beginPath();
      for (const mark of this.marks.filter((m) => m.role === role)) {
        const to = this.screenOf(mark.point);
        ctx.moveTo(from.x, from.y);
        ctx.lineTo(to.x, to.y);
      }
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.globalAlpha = 1;
    }
  }

  drawMark(mark) {
    const { ctx } = this;
    const { x, y } = this.screenOf(mark.point);
    const size = mark.role === "selected" || mark.role === "result" ? 6 : 4.5;
    ctx.lineWidth = 2;
    ctx.beginPath();
    if (mark.role === "result") {
      star(ctx, x, y, size + 2);
    } else if (mark.index < 0) {
      diamond(ctx, x, y, size + 1);
    } else {
      ctx.arc(x, y, size, 0, 2 * Math.PI);
    }
    const color = mark.color ?? COLORS[mark.role];
    if (mark.index < 0 && mark.role !== "result") {
      ctx.fillStyle = "#ffffff";
      ctx.fill();
      ctx.strokeStyle = color;
      ctx.stroke();
      return;
    }
    ctx.fillStyle = color;
    ctx.fill();
    ctx.strokeStyle = "#ffffff";
    ctx.stroke();
  }

  drawRing(point) {
    const { x, y } = this.screenOf(point);
    this.ctx.strokeStyle = "#111827";
    this.ctx.lineWidth = 1.5;
    this.ctx.beginPath();
    this.ctx.arc(x, y, 7, 0, 2 * Math.PI);
    this.ctx.stroke();
  }

  drawLabels() {
    const { labels, view } = this;
    labels.begin(this.ctx, view.width, view.height);
    for (const mark of this.marks) {
      const { x, y } = this.screenOf(mark.point);
      const color = mark.color ?? COLORS[mark.role];
      labels.place(mark.label ?? mark.point.token, x, y, { bold: true, color });
    }
    let shown = 0;
    for (const i of this.matches) {
      if (shown++ >= MATCH_LABELS) break;
      labels.place(this.points[i].token, view.screenX(this.xs[i]), view.screenY(this.ys[i]));
    }
    const budget = Math.max(12, Math.round((view.width * view.height) / 7000));
    const scanned = Math.min(this.labelOrder.length, 6000);
    for (let n = 0; n < scanned && labels.count < budget; n++) {
      const i = this.labelOrder[n];
      const [sx, sy] = [view.screenX(this.xs[i]), view.screenY(this.ys[i])];
      if (sx < 0 || sy < 0 || sx > view.width || sy > view.height) continue;
      labels.place(this.points[i].token, sx, sy, { color: "#52606d" });
    }
  }

  /** The marked word or plotted point nearest to (sx, sy), within HIT_RADIUS pixels. */
  hit(sx, sy) {
    let best = null;
    let bestDistance = HIT_RADIUS * HIT_RADIUS;
    for (const mark of this.marks) {
      const { x, y } = this.screenOf(mark.point);
      const distance = (x - sx) ** 2 + (y - sy) ** 2;
      if (distance <= bestDistance) [best, bestDistance] = [mark, distance];
    }
    if (best) return { point: best.point, plotted: best.index >= 0, role: best.role };
    let index = -1;
    for (let i = 0; i < this.points.length; i++) {
      const distance = (this.view.screenX(this.xs[i]) - sx) ** 2 +
        (this.view.screenY(this.ys[i]) - sy) ** 2;
      if (distance < bestDistance) [index, bestDistance] = [i, distance];
    }
    return index < 0 ? null : { point: this.points[index], plotted: true, role: null };
  }

  hover(hit, sx, sy) {
    const changed = hit?.point !== this.hovered?.point;
    this.hovered = hit;
    this.canvas.style.cursor = hit ? "pointer" : "";
    this.onHover(hit, sx, sy);
    if (changed) this.redraw();
  }
}

function diamond(ctx, x, y, r) {
  ctx.moveTo(x, y - r);
  ctx.lineTo(x + r, y);
  ctx.lineTo(x, y + r);
  ctx.lineTo(x - r, y);
  ctx.closePath();
}

function star(ctx, x, y, r) {
  for (let i = 0; i < 10; i++) {
    const radius = i % 2 ? r * 0.45 : r;
    const angle = (Math.PI / 5) * i - Math.PI / 2;
    const [px, py] = [x + radius * Math.cos(angle), y + radius * Math.sin(angle)];
    if (i === 0) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.closePath();
}

// The scatter plot on a <canvas>: every plotted row, the marked words, labels, zoom and pan,
// and in 3-D a rotation (camera.js).
//
// Plotted rows are dots; words placed through /project because they are not in the plotted
// set are hollow diamonds. Suspects (rows /diagnostics ranks as possibly under-trained, see
// suspects.js; or a point with `suspect: true`) are drawn in amber unless the points are
// coloured by a column. Marks and their labels are drawn above everything else.

import { bounds, Rotation } from "./camera.js";
import { readableToken } from "../common/format.js";
import { listenToGestures } from "./gestures.js";
import { LabelLayer } from "./labels.js";
import { COLORS, drawLinks, drawMark } from "./marks.js";
import { View } from "./view.js";

const HIT_RADIUS = 8;
const MATCH_LABELS = 40;

export class Plot {
  constructor(canvas, { onHover = () => {}, onPick = () => {}, onView = () => {},
    refitOnMove = true } = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.view = new View();
    this.rotation = new Rotation();
    this.labels = new LabelLayer();
    this.onHover = onHover;
    this.onPick = onPick;
    this.onView = onView;
    this.fitted = true;
    this.refitOnMove = refitOnMove;
    this.dims = 2;
    this.colours = null;
    this.sizes = null;
    // PCA's axes mean something (the components); a UMAP or t-SNE layout's do not.
    this.axes = true;
    // While a layout iterates: dots as squares and only the marks' labels, which the browser
    // rasterises several times faster, so input is still handled between frames.
    this.moving = false;
    this.setPoints([], []);
    listenToGestures(this);
    new ResizeObserver(() => this.resize()).observe(canvas.parentElement);
    this.resize();
  }

  /** Plot `points` ({token, id, x, y[, z], ...}); `labelOrder` ranks their indexes for labels. */
  setPoints(points, labelOrder, dims = 2) {
    this.points = points;
    this.dims = dims;
    this.labelOrder = labelOrder;
    this.matches = new Set();
    this.suspects = new Set();
    delete this.canvas.dataset.suspects;
    this.marks = [];
    this.hovered = null;
    this.canvas.dataset.points = String(points.length);
    this.canvas.dataset.dims = String(dims);
    this.placeAt(Float64Array.from(points, (p) => p.x), Float64Array.from(points, (p) => p.y),
      Float64Array.from(points, (p) => p.z ?? 0));
    this.fit();
  }

  /** New coordinates for the same points (a frame of an animation or a layout's step). */
  moveTo(xs, ys, zs = new Float64Array(xs.length)) {
    this.placeAt(xs, ys, zs);
    if (this.fitted && this.refitOnMove) this.fit();
    else this.redraw();
  }

  // The points' own coordinates (px, py, pz) and where they are drawn (xs, ys: the 2-D view's
  // data coordinates, rotated in 3-D; depth in 3-D).
  placeAt(xs, ys, zs) {
    [this.px, this.py, this.pz] = [xs, ys, zs];
    this.box = bounds(xs, ys, zs);
    this.project();
  }

  project() {
    if (this.dims !== 3) {
      [this.xs, this.ys, this.depth] = [this.px, this.py, null];
      return;
    }
    const n = this.px.length;
    [this.xs, this.ys, this.depth] = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
    for (let i = 0; i < n; i++) {
      [this.xs[i], this.ys[i], this.depth[i]] =
        this.rotation.apply(this.px[i], this.py[i], this.pz[i], this.box.centre);
    }
    this.order = Array.from({ length: n }, (_, i) => i).sort((a, b) => this.depth[a] - this.depth[b]);
  }

  /** Turn the 3-D picture by a drag of (dx, dy) pixels. */
  turn(dx, dy) {
    this.rotation.turn(dx, dy);
    this.project();
    this.fitted = false;
    this.changedView();
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

  /** Each point's colour (CSS colours; null: the default), and its radius (null: by count). */
  setStyle(colours, sizes) {
    this.colours = colours;
    this.sizes = sizes;
    this.redraw();
  }

  /** Marked words: [{point, role, index}], index -1 for one placed but not plotted. */
  setMarks(marks) {
    this.marks = marks;
    if (this.fitted) this.fit();
    else this.redraw();
  }

  fit() {
    if (this.dims === 3) {
      const r = this.box.radius;
      this.view.fit([-r, r], [-r, r]);
    } else {
      const outside = this.marks.filter((m) => m.index < 0);
      this.view.fit([...this.xs, ...outside.map((m) => m.point.x)],
        [...this.ys, ...outside.map((m) => m.point.y)]);
    }
    this.fitted = true;
    this.changedView();
  }

  /** The camera once moved by the person ([] while fitted): x, y, scale[, yaw, pitch]. */
  camera() {
    if (this.fitted) return [];
    const { centerX, centerY, scale } = this.view;
    const camera = [centerX, centerY, scale];
    return this.dims === 3 ? [...camera, this.rotation.yaw, this.rotation.pitch] : camera;
  }

  /** Put the camera where camera() said it was (a link or a bookmark). */
  setCamera(camera) {
    if (camera.length >= 5) [this.rotation.yaw, this.rotation.pitch] = camera.slice(3, 5);
    this.project();
    if (camera.length < 3) {
      this.fit();
      return;
    }
    [this.view.centerX, this.view.centerY, this.view.scale] = camera;
    this.fitted = false;
    this.changedView();
  }

  changedView() {
    this.redraw();
    this.onView(this);
  }

  /** Where a mark or point is drawn, in CSS pixels from the canvas's top left corner. */
  screenOf(point, index = -1) {
    if (index >= 0) return { x: this.view.screenX(this.xs[index]), y: this.view.screenY(this.ys[index]) };
    let [x, y] = [point.x, point.y];
    if (this.dims === 3) [x, y] = this.rotation.apply(point.x, point.y, point.z, this.box.centre);
    return { x: this.view.screenX(x), y: this.view.screenY(y) };
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
    this.layOutLabels();
    this.drawAxes();
    this.drawDots();
    this.labels.draw({ marks: false, dim: this.marks.length > 0 });
    drawLinks(this);
    for (const mark of this.marks) drawMark(this, mark);
    if (this.hovered) this.drawRing(this.hovered);
    this.labels.draw({ marks: true });
    this.canvas.dataset.drawn = String((Number(this.canvas.dataset.drawn) || 0) + 1);
  }

  drawAxes() {
    if (!this.axes) return;
    const { ctx, view } = this;
    ctx.strokeStyle = "rgba(0, 0, 0, 0.08)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    if (this.dims === 3) {
      const r = this.box.radius;
      for (const axis of [[r, 0, 0], [0, r, 0], [0, 0, r]]) {
        const from = this.rotation.apply(-axis[0], -axis[1], -axis[2], [0, 0, 0]);
        const to = this.rotation.apply(axis[0], axis[1], axis[2], [0, 0, 0]);
        ctx.moveTo(view.screenX(from[0]), view.screenY(from[1]));
        ctx.lineTo(view.screenX(to[0]), view.screenY(to[1]));
      }
    } else {
      ctx.moveTo(view.screenX(0), 0);
      ctx.lineTo(view.screenX(0), view.height);
      ctx.moveTo(0, view.screenY(0));
      ctx.lineTo(view.width, view.screenY(0));
    }
    ctx.stroke();
  }

  dotRadius() {
    const n = this.points.length;
    return n > 8000 ? 1.6 : n > 2000 ? 2.1 : 2.8;
  }

  // Each point's fill: a match, else its column colour, else amber for a suspect, else blue.
  fillOf(i) {
    if (this.matches.has(i)) return COLORS.match;
    if (this.colours) return this.colours[i];
    return this.suspects.has(i) || this.points[i].suspect ? COLORS.suspect : COLORS.point;
  }

  // Far points first in 3-D (and a little smaller); runs of one colour are filled together.
  drawDots() {
    const { ctx, view } = this;
    const r = this.dotRadius();
    const order = this.dims === 3 ? this.order : [...this.points.keys()];
    const [near, far] = this.dims === 3 ? [this.box.radius, -this.box.radius] : [1, 0];
    const runs = new Map();
    for (const i of order) {
      const fill = this.fillOf(i);
      if (!runs.has(fill)) runs.set(fill, []);
      runs.get(fill).push(i);
    }
    const layers = [...runs.entries()].sort(([a], [b]) =>
      (a === COLORS.match) - (b === COLORS.match));
    for (const [fill, indexes] of layers) {
      ctx.fillStyle = fill;
      ctx.beginPath();
      for (const i of indexes) {
        const [sx, sy] = [view.screenX(this.xs[i]), view.screenY(this.ys[i])];
        if (sx < -5 || sy < -5 || sx > view.width + 5 || sy > view.height + 5) continue;
        let radius = this.sizes ? this.sizes[i] : r;
        if (this.matches.has(i)) radius += 1.5;
        if (this.depth) radius *= 0.75 + (0.5 * (this.depth[i] - far)) / (near - far);
        if (this.moving) {
          ctx.rect(sx - radius, sy - radius, 2 * radius, 2 * radius);
        } else {
          ctx.moveTo(sx + radius, sy);
          ctx.arc(sx, sy, radius, 0, 2 * Math.PI);
        }
      }
      ctx.fill();
    }
  }

  drawRing(hit) {
    const { x, y } = this.screenOf(hit.point, hit.index ?? -1);
    this.ctx.strokeStyle = "#111827";
    this.ctx.lineWidth = 1.5;
    this.ctx.beginPath();
    this.ctx.arc(x, y, 7, 0, 2 * Math.PI);
    this.ctx.stroke();
  }

  // Marks first, each always labelled; then the matches; then the ranked rows in what is left.
  layOutLabels() {
    const { labels, view } = this;
    labels.begin(this.ctx, view.width, view.height);
    for (const mark of this.marks) {
      const { x, y } = this.screenOf(mark.point, mark.index);
      const text = mark.label ?? readableToken(mark.point);
      labels.placeMark(text, x, y, mark.color ?? COLORS[mark.role]);
    }
    if (this.moving) return;
    let shown = 0;
    for (const i of this.matches) {
      if (shown++ >= MATCH_LABELS) break;
      const [sx, sy] = [view.screenX(this.xs[i]), view.screenY(this.ys[i])];
      labels.place(readableToken(this.points[i]), sx, sy);
    }
    const budget = Math.max(12, Math.round((view.width * view.height) / 7000));
    const scanned = Math.min(this.labelOrder.length, 6000);
    for (let n = 0; n < scanned && labels.count < budget; n++) {
      const i = this.labelOrder[n];
      const [sx, sy] = [view.screenX(this.xs[i]), view.screenY(this.ys[i])];
      if (sx < 0 || sy < 0 || sx > view.width || sy > view.height) continue;
      labels.place(readableToken(this.points[i]), sx, sy, { color: "#52606d" });
    }
  }

  /** The marked word or plotted point nearest to (sx, sy), within HIT_RADIUS pixels. */
  hit(sx, sy) {
    let best = null;
    let bestDistance = HIT_RADIUS * HIT_RADIUS;
    for (const mark of this.marks) {
      const { x, y } = this.screenOf(mark.point, mark.index);
      const distance = (x - sx) ** 2 + (y - sy) ** 2;
      if (distance <= bestDistance) [best, bestDistance] = [mark, distance];
    }
    if (best) return this.hitOf(best.point, best.index, best.role);
    let index = -1;
    for (let i = 0; i < this.points.length; i++) {
      const distance = (this.view.screenX(this.xs[i]) - sx) ** 2 +
        (this.view.screenY(this.ys[i]) - sy) ** 2;
      if (distance > HIT_RADIUS * HIT_RADIUS) continue;
      // In 3-D the point in front wins among those under the cursor; in 2-D the nearest.
      const better = this.depth ? index < 0 || this.depth[i] > this.depth[index]
        : distance < bestDistance;
      if (better) [index, bestDistance] = [i, distance];
    }
    return index < 0 ? null : this.hitOf(this.points[index], index, null);
  }

  // A hit: the point, its index (-1: not plotted), and where it is now (a layout moves points).
  hitOf(point, index, role) {
    if (index < 0) return { point, index, plotted: false, role, at: point };
    const at = { x: this.px[index], y: this.py[index] };
    if (this.dims === 3) at.z = this.pz[index];
    return { point, index, plotted: true, role, at };
  }

  hover(hit, sx, sy) {
    const changed = hit?.point !== this.hovered?.point;
    this.hovered = hit;
    this.canvas.style.cursor = hit ? "pointer" : "";
    this.onHover(hit, sx, sy);
    if (changed) this.redraw();
  }
}

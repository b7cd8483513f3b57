// The Colour panel: colour the points by any metadata column /projection returns (categories:
// a legend; numbers: a scale, logarithmic for counts spanning two decades or more), and size
// them by a count column where the table has one.

import { el, fill, parts } from "../common/dom.js";
import { compact, integer } from "../common/format.js";

// Colour-blind-safe categories (Okabe-Ito), then grey for every other value.
export const CATEGORY_COLORS = [
  "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000",
];
const OTHER = "#adb5bd";
// A sequential scale (viridis' stops), from the smallest value to the largest.
export const SCALE = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"];
const COUNT_COLUMN = /^(count|counts|freq|frequency|occurrences)$/i;

/** The columns the points carry, each "number" (every value a number) or "category". */
export function columnsOf(points) {
  const names = [...new Set(points.flatMap((point) => Object.keys(point.metadata ?? {})))];
  return names.map((name) => ({
    name,
    kind: points.every((p) => typeof p.metadata?.[name] === "number") ? "number" : "category",
  }));
}

/** {colours, legend} for colouring `points` by `column`: one CSS colour per point. */
export function colourBy(points, column) {
  const values = points.map((point) => point.metadata?.[column.name]);
  return column.kind === "number" ? numeric(values) : categorical(values);
}

function categorical(values) {
  const counts = new Map();
  for (const value of values) counts.set(String(value ?? ""), (counts.get(String(value ?? "")) ?? 0) + 1);
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = ranked.slice(0, CATEGORY_COLORS.length);
  const colourOf = new Map(shown.map(([value], i) => [value, CATEGORY_COLORS[i]]));
  const colours = values.map((value) => colourOf.get(String(value ?? "")) ?? OTHER);
  const legend = shown.map(([value, count], i) => ({ colour: CATEGORY_COLORS[i], value, count }));
  const others = ranked.slice(shown.length).reduce((sum, [, count]) => sum + count, 0);
  if (others) legend.push({ colour: OTHER, value: "other values", count: others });
  return { colours, legend: { kind: "category", entries: legend } };
}

function numeric(values) {
  const low = Math.min(...values);
  const high = Math.max(...values);
  const log = low > 0 && high / low >= 100;
  const scale = log ? Math.log10 : (value) => value;
  const [from, to] = [scale(low), scale(high)];
  const colours = values.map((value) => scaleColour(to > from ? (scale(value) - from) / (to - from) : 0));
  return { colours, legend: { kind: "number", low, high, log } };
}

/** The scale's colour at t in [0, 1], as "rgb(r, g, b)" (linear between the stops). */
export function scaleColour(t) {
  const position = Math.min(Math.max(t, 0), 1) * (SCALE.length - 1);
  const i = Math.min(Math.floor(position), SCALE.length - 2);
  const [a, b] = [rgb(SCALE[i]), rgb(SCALE[i + 1])];
  const mix = a.map((channel, c) => Math.round(channel + (position - i) * (b[c] - channel)));
  return `rgb(${mix.join(", ")})`;
}

function rgb(hex) {
  return [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16));
}

/** Radii from a count column: 1.4 to 5 px, by log count. */
export function sizesBy(points, column, base) {
  const logs = points.map((point) => Math.log10(Math.max(point.metadata?.[column] ?? 1, 1)));
  const [low, high] = [Math.min(...logs), Math.max(...logs)];
  return Float32Array.from(logs, (value) =>
    high > low ? 1.4 + ((value - low) / (high - low)) * 3.6 : base);
}

export class ColourPanel {
  constructor(root, app) {
    this.app = app;
    this.parts = parts(root);
    this.parts.column.addEventListener("change", () => {
      app.state.color = this.parts.column.value;
      app.writeLink();
      this.apply();
    });
    this.parts.size.addEventListener("change", () => {
      app.state.size = this.parts.size.checked ? this.countColumn ?? "" : "";
      app.writeLink();
      this.apply();
    });
  }

  /** New points: offer their columns, keeping the state's choice when they still have it. */
  show(points) {
    const { app, parts: p } = this;
    this.columns = columnsOf(points);
    fill(p.column, el("option", { value: "" }, "(none: suspects amber)"),
      this.columns.map((c) => el("option", { value: c.name }, `${c.name} (${c.kind})`)));
    if (!this.columns.some((c) => c.name === app.state.color)) app.state.color = "";
    p.column.value = app.state.color;
    this.countColumn = this.columns.find((c) => c.kind === "number" && COUNT_COLUMN.test(c.name))?.name;
    p.sizeLabel.hidden = !this.countColumn;
    p.sizeColumn.textContent = this.countColumn ?? "";
    if (app.state.size !== this.countColumn) app.state.size = "";
    p.size.checked = Boolean(app.state.size);
    this.apply();
  }

  apply() {
    const { app, parts: p } = this;
    const column = this.columns.find((c) => c.name === app.state.color);
    const coloured = column ? colourBy(app.points, column) : null;
    const sizes = app.state.size ? sizesBy(app.points, app.state.size, app.plot.dotRadius()) : null;
    app.plot.setStyle(coloured?.colours ?? null, sizes);
    app.plot.canvas.dataset.colour = column?.name ?? "";
    fill(p.legend, coloured ? legendOf(column.name, coloured.legend) : []);
  }
}

function legendOf(name, legend) {
  if (legend.kind === "category") {
    return el("ul", { class: "categories" }, legend.entries.map((entry) =>
      el("li", { dataset: { value: entry.value, colour: entry.colour } },
        swatch(entry.colour), ` ${entry.value || "(empty)"} `,
        el("span", { class: "count" }, integer(entry.count)))));
  }
  const bar = el("span", { class: "scale-bar" });
  bar.style.setProperty("--scale", `linear-gradient(90deg, ${SCALE.join(", ")})`);
  return el("p", { class: "scale", dataset: { low: legend.low, high: legend.high, log: legend.log } },
    el("span", { class: "low" }, compact(legend.low)), bar,
    el("span", { class: "high" }, compact(legend.high)),
    el("span", { class: "note" }, legend.log ? ` ${name}, log scale` : ` ${name}`));
}

// Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
function swatch(colour) {
  const node = el("i", { class: "swatch" });
  node.style.setProperty("--swatch", colour);
  return node;
}

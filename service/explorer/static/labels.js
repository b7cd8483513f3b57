// Labels that do not overlap: placed greedily in priority order, most important first.

const CELL = 48;
const FONT = "12px system-ui, 'DejaVu Sans', sans-serif";
const BOLD = "600 12px system-ui, 'DejaVu Sans', sans-serif";

export class LabelLayer {
  constructor() {
    this.widths = new Map();
  }

  /** Start a frame: nothing is placed yet. */
  begin(ctx, width, height) {
    this.ctx = ctx;
    this.width = width;
    this.height = height;
    this.cells = new Map();
    this.count = 0;
    this.font = null;
  }

  /** Draw `text` beside (x, y) if it fits on the canvas without covering another label. */
  place(text, x, y, { bold = false, color = "#1f2933" } = {}) {
    // The point's own spot is taken: no need to measure the text (the costly part).
    if (this.overlaps({ left: x + 5, top: y - 15, right: x + 12, bottom: y - 1 })) return false;
    this.setFont(bold ? BOLD : FONT);
    const width = this.measure(text, bold);
    const box = { left: x + 5, top: y - 15, right: x + 9 + width, bottom: y - 1 };
    if (box.left < 0 || box.top < 0 || box.right > this.width || box.bottom > this.height) {
      return false;
    }
    if (this.overlaps(box)) return false;
    this.occupy(box);
    const ctx = this.ctx;
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(255, 255, 255, 0.9)";
    ctx.strokeText(text, x + 6, y - 4);
    ctx.fillStyle = color;
    ctx.fillText(text, x + 6, y - 4);
    this.count += 1;
    return true;
  }

  // Setting a canvas font parses it, so it is set only when it changes.
  setFont(font) {
    if (this.font !== font) {
      this.ctx.font = font;
      this.font = font;
    }
  }

  measure(text, bold) {
    const key = bold ? `b:${text}` : text;
    let width = this.widths.get(key);
    if (width === undefined) {
      width = this.ctx.measureText(text).width;
      this.widths.set(key, width);
    }
    return width;
  }

  *cellsOf(box) {
    for (let cx = Math.floor(box.left / CELL); cx <= Math.floor(box.right / CELL); cx++) {
      for (let cy = Math.floor(box.top / CELL); cy <= Math.floor(box.bottom / CELL); cy++) {
        yield `${cx},${cy}`;
      }
    }
  }

  overlaps(box) {
    for (const cell of this.cellsOf(box)) {
      for (const other of this.cells.get(cell) ?? []) {
        if (box.left < other.right && other.left < box.right &&
            box.top < other.bottom && other.top < box.bottom) {
          return true;
        }
      }
    }
    return false;
  }

  occupy(box) {
    for (const cell of this.cellsOf(box)) {
      const list = this.cells.get(cell);
      if (list) list.push(box);
      else this.cells.set(cell, [box]);
    }
  }
}

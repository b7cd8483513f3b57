// Labels that do not overlap: laid out greedily in priority order, then drawn.
//
// Highlighted marks (the chosen word, its neighbours, analogy terms and answers, text pieces)
// are laid out first and always get a label: beside the point if there is room, else at the
// nearest free spot around it with a thin leader line, else beside it anyway. Ordinary labels
// take what room is left, and are drawn dimmed under the marks while any mark is shown.

const CELL = 48;
const HEIGHT = 14;
// Where a mark's label may go, in order: beside, left, above, below, then rings further out.
const OFFSETS = [[6, -4], [-6, -4], [0, -12], [0, 16]];
for (const radius of [18, 30, 44, 60]) {
  for (let k = 0; k < 12; k++) {
    const angle = (Math.PI / 6) * k;
    OFFSETS.push([radius * Math.cos(angle), radius * Math.sin(angle)]);
  }
}

export class LabelLayer {
  constructor() {
    this.widths = new Map();
    this.placed = [];
    this.fonts = null;
  }

  /** Start a frame: nothing is placed yet. */
  begin(ctx, width, height) {
    // Read at the first frame, once the page's stylesheet has surely been applied.
    this.fonts ??= labelFonts();
    this.ctx = ctx;
    this.width = width;
    this.height = height;
    this.cells = new Map();
    this.count = 0;
    this.placed = [];
    this.font = null;
  }

  /** Lay out a highlighted mark's label at (x, y): always placed. */
  placeMark(text, x, y, color) {
    const width = this.measure(text, true);
    let chosen = null;
    for (const [dx, dy] of OFFSETS) {
      const box = boxAt(x + dx, y + dy, width, dx < 0);
      if (this.inside(box) && !this.overlaps(box)) {
        chosen = { box, leader: Math.hypot(dx, dy) > 17 };
        break;
      }
    }
    chosen ??= { box: boxAt(x + 6, y - 4, width, false), leader: false };
    this.occupy(chosen.box);
    this.placed.push({ text, x, y, color, bold: true, mark: true, ...chosen });
  }

  /** Lay out an ordinary label beside (x, y) if it fits without covering another label. */
  place(text, x, y, { color = "#1f2933" } = {}) {
    // The point's own spot is taken: no need to measure the text (the costly part).
    if (this.overlaps({ left: x + 5, top: y - 15, right: x + 12, bottom: y - 1 })) return false;
    const box = boxAt(x + 6, y - 4, this.measure(text, false), false);
    if (!this.inside(box) || this.overlaps(box)) return false;
    this.occupy(box);
    this.placed.push({ text, x, y, color, bold: false, mark: false, box, leader: false });
    this.count += 1;
    return true;
  }

  /** Draw the laid-out labels of one kind: the marks', or the others (dimmed if asked). */
  draw({ marks, dim = false }) {
    const ctx = this.ctx;
    ctx.save();
    ctx.globalAlpha = dim ? 0.45 : 1;
    for (const label of this.placed) {
      if (label.mark !== marks) continue;
      this.setFont(label.bold ? this.fonts.bold : this.fonts.normal);
      const { box } = label;
      if (label.leader) {
        ctx.strokeStyle = label.color;
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(label.x, label.y);
        ctx.lineTo(box.left < label.x ? box.right : box.left, (box.top + box.bottom) / 2);
        ctx.stroke();
      }
      ctx.lineWidth = 3;
      ctx.strokeStyle = "rgba(255, 255, 255, 0.9)";
      ctx.strokeText(label.text, box.left + 1, box.bottom - 3);
      ctx.fillStyle = label.color;
      ctx.fillText(label.text, box.left + 1, box.bottom - 3);
    }
    ctx.restore();
    this.font = null;
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
      this.setFont(bold ? this.fonts.bold : this.fonts.normal);
      width = this.ctx.measureText(text).width;
      this.widths.set(key, width);
    }
    return width;
  }

  inside(box) {
    return box.left >= 0 && box.top >= 0 && box.right <= this.width && box.bottom <= this.height;
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

/** The labels' fonts: 12 px in the page's font stack (explorer.css's --font), so a CJK label
 * falls back to the same CJK fonts as the page's text. */
export function labelFonts() {
  const stack = getComputedStyle(document.documentElement).getPropertyValue("--font").trim();
  const family = stack || "system-ui, sans-serif";
  return { normal: `12px ${family}`, bold: `600 12px ${family}` };
}

// A label's box with its text's baseline start at (x, y), or its end there when `before`.
function boxAt(x, y, width, before) {
  const left = before ? x - width - 3 : x - 1;
  return { left, top: y - HEIGHT + 3, right: left + width + 3, bottom: y + 3 };
}

// The plot's view: data coordinates <-> canvas pixels, with zoom around a point and panning.

const MARGIN = 28;

export class View {
  constructor() {
    this.centerX = 0;
    this.centerY = 0;
    this.scale = 1;
    this.width = 1;
    this.height = 1;
  }

  /** Frame every point (xs, ys are arrays of data coordinates). */
  fit(xs, ys) {
    let [minX, maxX, minY, maxY] = [Infinity, -Infinity, Infinity, -Infinity];
    for (let i = 0; i < xs.length; i++) {
      minX = Math.min(minX, xs[i]);
      maxX = Math.max(maxX, xs[i]);
      minY = Math.min(minY, ys[i]);
      maxY = Math.max(maxY, ys[i]);
    }
    if (!Number.isFinite(minX)) [minX, maxX, minY, maxY] = [-1, 1, -1, 1];
    this.centerX = (minX + maxX) / 2;
    this.centerY = (minY + maxY) / 2;
    const spanX = Math.max(maxX - minX, 1e-9);
    const spanY = Math.max(maxY - minY, 1e-9);
    this.scale = Math.min((this.width - 2 * MARGIN) / spanX, (this.height - 2 * MARGIN) / spanY);
  }

  resize(width, height) {
    this.width = width;
    this.height = height;
  }

  screenX(x) {
    return this.width / 2 + (x - this.centerX) * this.scale;
  }

  // Data y grows upwards, screen y downwards.
  screenY(y) {
    return this.height / 2 - (y - this.centerY) * this.scale;
  }

  dataX(sx) {
    return this.centerX + (sx - this.width / 2) / this.scale;
  }

  dataY(sy) {
    return this.centerY - (sy - this.height / 2) / this.scale;
  }

  /** Zoom by `factor`, keeping the data point under screen position (sx, sy) where it is. */
  zoom(factor, sx, sy) {
    const [x, y] = [this.dataX(sx), this.dataY(sy)];
    this.scale *= factor;
    this.centerX = x - (sx - this.width / 2) / this.scale;
    this.centerY = y + (sy - this.height / 2) / this.scale;
  }

  pan(dx, dy) {
    this.centerX -= dx / this.scale;
    this.centerY += dy / this.scale;
  }
}

// The 3-D camera: a rotation (yaw about the vertical axis, then pitch about the horizontal)
// of the points about their centre, seen orthographically. Screen x, y come from the rotated
// x, y; the rotated z is depth (larger: nearer), used to draw far points first.

const PITCH_LIMIT = Math.PI / 2;

export class Rotation {
  constructor(yaw = 0.6, pitch = 0.35) {
    this.yaw = yaw;
    this.pitch = pitch;
  }

  /** Turn by (dx, dy) pixels of dragging. */
  turn(dx, dy) {
    this.yaw += dx * 0.01;
    this.pitch = Math.max(-PITCH_LIMIT, Math.min(PITCH_LIMIT, this.pitch + dy * 0.01));
  }

  /** [x, y, depth] of the point (x, y, z) relative to `centre`. */
  apply(x, y, z, centre) {
    const [a, b, c] = [x - centre[0], y - centre[1], (z ?? 0) - centre[2]];
    const [cy, sy, cp, sp] = [Math.cos(this.yaw), Math.sin(this.yaw),
      Math.cos(this.pitch), Math.sin(this.pitch)];
    const x1 = cy * a + sy * c;
    const z1 = -sy * a + cy * c;
    return [x1, cp * b - sp * z1, sp * b + cp * z1];
  }
}

/** The middle of the points' bounding box, and the largest distance from it. */
export function bounds(xs, ys, zs) {
  const low = [Infinity, Infinity, Infinity];
  const high = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < xs.length; i++) {
    [xs[i], ys[i], zs[i]].forEach((value, d) => {
      low[d] = Math.min(low[d], value);
      high[d] = Math.max(high[d], value);
    });
  }
  if (!xs.length) return { centre: [0, 0, 0], radius: 1 };
  const centre = low.map((value, d) => (value + high[d]) / 2);
  let radius = 0;
  for (let i = 0; i < xs.length; i++) {
    const distance = Math.hypot(xs[i] - centre[0], ys[i] - centre[1], zs[i] - centre[2]);
    radius = Math.max(radius, distance);
  }
  return { centre, radius: radius || 1 };
}

// Rows through a table's checkpoints, from POST /trajectory: every checkpoint's coordinates in
// one PCA basis (the explorer's, fitted on the last checkpoint), each row's norm and distance
// from its initial row, and the table's per-checkpoint summary.

import { post } from "../common/api.js";

/** The trajectory of `points` seeded random rows (rare ones too, not only the most frequent
 * first rows); asks for fewer when the server's limit says so. */
export async function fetchTrajectory(table, points) {
  const request = { points, selection: "random", seed: 0 };
  try {
    return await post(table, "trajectory", request);
  } catch (error) {
    if (error.type !== "LimitExceeded" || !error.details.limit || !error.details.got) throw error;
    const fewer = Math.max(1, Math.floor((points * error.details.limit) / error.details.got));
    return post(table, "trajectory", { ...request, points: fewer });
  }
}

/** Coordinates at any position between checkpoints (straight lines between checkpoints). */
export class Frames {
  constructor(answer) {
    this.points = answer.points;
    this.checkpoints = answer.checkpoints;
    this.count = answer.checkpoints.length;
    this.countColumn = answer.count_column ?? null;
    const column = (name, c) => Float64Array.from(this.points, (p) => p[name][c] ?? NaN);
    this.xs = this.checkpoints.map((_, c) => column("x", c));
    this.ys = this.checkpoints.map((_, c) => column("y", c));
  }

  /** {xs, ys} at `position` (a checkpoint, or between two). */
  at(position) {
    const low = Math.floor(position);
    const high = Math.min(low + 1, this.count - 1);
    const t = position - low;
    if (t === 0 || high === low) return { xs: this.xs[low], ys: this.ys[low] };
    const mix = (a, b) => a.map((value, i) => value + t * (b[i] - value));
    return { xs: mix(this.xs[low], this.xs[high]), ys: mix(this.ys[low], this.ys[high]) };
  }

  /** Every frame's coordinates at once, to frame the whole animation. */
  all() {
    return { xs: this.xs.flatMap((a) => [...a]), ys: this.ys.flatMap((a) => [...a]) };
  }

  /** Each point's count (NaN when the table has none). */
  counts() {
    const column = this.countColumn;
    return this.points.map((p) => (column === null ? NaN : Number(p.metadata[column] ?? NaN)));
  }
}

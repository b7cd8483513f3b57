// The marked words on the plot: the chosen word, its neighbours, analogy terms and answers,
// text pieces; drawn above every other point (plot.js draws them after the dots).

// Each role's colour, and the plain and suspect points' (the charts use them too).
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

/** Lines from the selected word to its neighbours, and from an analogy's terms to its result. */
export function drawLinks(plot) {
  const { ctx } = plot;
  const hubs = { neighbour: "selected", term: "result" };
  for (const [role, hubRole] of Object.entries(hubs)) {
    const hub = plot.marks.find((m) => m.role === hubRole);
    if (!hub) continue;
    const from = plot.screenOf(hub.point, hub.index);
    ctx.strokeStyle = COLORS[role];
    ctx.globalAlpha = 0.35;
    ctx.setLineDash(role === "term" ? [4, 4] : []);
    ctx.beginPath();
    for (const mark of plot.marks.filter((m) => m.role === role)) {
      const to = plot.screenOf(mark.point, mark.index);
      ctx.moveTo(from.x, from.y);
      ctx.lineTo(to.x, to.y);
    }
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.globalAlpha = 1;
  }
}

/** One marked word: a dot, a hollow diamond when not plotted, a star for a result. */
export function drawMark(plot, mark) {
  const { ctx } = plot;
  const { x, y } = plot.screenOf(mark.point, mark.index);
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

// The hover card: token, id, norm, coordinates and metadata of the point under the cursor.

import { el, fill } from "./dom.js";
import { coordinate, norm } from "./format.js";

/** Show `hit` (or hide the card when it is null) in `card`, near (sx, sy). */
export function showTooltip(card, hit, sx, sy) {
  if (!hit) {
    card.hidden = true;
    return;
  }
  const { point } = hit;
  const rows = [];
  if (point.id !== undefined) rows.push(["id", String(point.id)]);
  if (point.norm !== undefined) rows.push(["norm", norm(point.norm)]);
  const at = hit.at ?? point;
  const names = at.z === undefined ? "x, y" : "x, y, z";
  const values = [at.x, at.y, at.z].filter((c) => c !== undefined).map(coordinate).join(", ");
  rows.push([names, values]);
  for (const [name, value] of Object.entries(point.metadata ?? {})) {
    rows.push([name, String(value)]);
  }
  fill(card,
    el("strong", {}, point.token ?? ""),
    hit.plotted ? null : el("span", { class: "not-plotted" }, " (not plotted)"),
    el("dl", {}, rows.map(([name, value]) => [el("dt", {}, name), el("dd", {}, value)])),
  );
  card.hidden = false;
  const area = card.parentElement.getBoundingClientRect();
  const left = Math.min(sx + 14, area.width - card.offsetWidth - 4);
  const top = sy + 14 + card.offsetHeight > area.height ? sy - card.offsetHeight - 10 : sy + 14;
  card.style.left = `${Math.max(4, left)}px`;
  card.style.top = `${Math.max(4, top)}px`;
}

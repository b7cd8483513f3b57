// Export of the plotted coordinates as CSV or JSON, exactly as /projection answered them.

import { byId } from "./dom.js";

/** Wire the export buttons to the current projection of `app`. */
export function setUpExport(app) {
  byId("export-csv").addEventListener("click", () => {
    download(`${baseName(app)}.csv`, "text/csv", toCsv(app.points));
  });
  byId("export-json").addEventListener("click", () => {
    const body = { table: app.table.name, ...app.request, ...app.projection };
    download(`${baseName(app)}.json`, "application/json", JSON.stringify(body, null, 1));
  });
}

function baseName(app) {
  return `${app.table.name}-pca-${app.points.length}`;
}

/** token, id, x, y, norm, then one column per metadata field. */
export function toCsv(points) {
  const columns = [...new Set(points.flatMap((point) => Object.keys(point.metadata ?? {})))];
  const header = ["token", "id", "x", "y", "norm", ...columns];
  const lines = points.map((point) => [
    point.token, point.id, point.x, point.y, point.norm,
    ...columns.map((name) => point.metadata?.[name] ?? ""),
  ].map(csvField).join(","));
  return [header.map(csvField).join(","), ...lines].join("\r\n") + "\r\n";
}

function csvField(value) {
  const text = String(value);
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

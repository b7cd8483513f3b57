// The Export panel: the plotted coordinates as CSV or JSON, exactly as /projection answered
// them, or for UMAP and t-SNE as the page computed them (with the layout's parameters).

import { parts } from "../common/dom.js";

/** Wire the panel's buttons to the current picture of `app`. */
export function setUpExport(root, app) {
  const { csv, json } = parts(root);
  csv.addEventListener("click", () => {
    download(`${baseName(app)}.csv`, "text/csv", toCsv(app.plottedPoints()));
  });
  json.addEventListener("click", () => {
    const body = { table: app.table.name, ...app.request, ...app.projection };
    if (app.state.projection !== "pca" && app.layout) {
      const { method, params, dims, seed, steps, state, graph } = app.layout;
      body.layout = { method, dims, seed, steps, state, ...params, neighbours_from: graph.source };
      body.points = app.plottedPoints();
    }
    download(`${baseName(app)}.json`, "application/json", JSON.stringify(body, null, 1));
  });
}

function baseName(app) {
  return `${app.table.name}-${app.state.projection}-${app.points.length}`;
}

/** token, id, x, y (z in 3-D), norm, then one column per metadata field. */
export function toCsv(points) {
  const columns = [...new Set(points.flatMap((point) => Object.keys(point.metadata ?? {})))];
  const axes = points.some((point) => point.z !== undefined) ? ["x", "y", "z"] : ["x", "y"];
  const header = ["token", "id", ...axes, "norm", ...columns];
  const lines = points.map((point) => [
    point.token, point.id, ...axes.map((axis) => point[axis]), point.norm,
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

// Suspect rows from POST /diagnostics: drawn in amber on the plot, counted in their panel, and
// (for tables with a count column) the norm-by-count chart.
//
// The diagnostics rank the rows most likely under-trained (closest to the table's unused
// reference rows, or with the lowest norms); they are suspects, never a verdict.

import { post } from "./api.js";
import { drawCountChart } from "./countchart.js";
import { byId } from "./dom.js";
import { describe } from "./messages.js";
import { integer, percent } from "./format.js";

const PAGE = 1000;
// Never more suspects than the picture can hold (max_projection_points).
const MOST = 20000;

/** Fetch the table's suspects, flag the plotted ones, and fill the panel; never throws. */
export async function showSuspects(app) {
  const table = app.table;
  setStatus("Ranking suspect rows\u2026");
  let found;
  try {
    found = await fetchSuspects(table.name);
  } catch (error) {
    setStatus(`Suspect rows unavailable: ${describe(error, table.name)}`);
    return;
  }
  if (app.table !== table) return;
  const ids = new Set(found.suspects.map((suspect) => suspect.id));
  const plotted = [];
  app.points.forEach((point, i) => ids.has(point.id) && plotted.push(i));
  app.suspects = found;
  app.plot.setSuspects(plotted);
  describeSuspects(found.answer, found.suspects.length, plotted.length);
  drawCountChart(byId("count-chart"), found.answer, found.suspects);
}

/** The first page's answer and every suspect (page after page, at most MOST). */
export async function fetchSuspects(tableName) {
  let limit = PAGE;
  let answer;
  try {
    answer = await post(tableName, "diagnostics", { limit });
  } catch (error) {
    // A server configured with a lower max_diagnostics_limit says how many it allows.
    if (error.type !== "LimitExceeded" || !error.details.limit) throw error;
    limit = error.details.limit;
    answer = await post(tableName, "diagnostics", { limit });
  }
  const suspects = [...answer.suspects];
  const wanted = Math.min(answer.suspect_count, MOST);
  while (suspects.length < wanted) {
    const page = await post(tableName, "diagnostics", { limit, offset: suspects.length });
    if (!page.suspects.length) break;
    suspects.push(...page.suspects);
  }
  return { answer, suspects };
}

function describeSuspects(answer, listed, plotted) {
  const { indicator, suspect_count: count, ranked_rows: ranked } = answer;
  const how = indicator.name === "reference_cosine"
    ? `closest to the mean of ${integer(indicator.reference_rows)} unused reference rows`
    : "with the lowest row norms (no reference rows)";
  const zero = answer.norms.zero_rows ? `; ${integer(answer.norms.zero_rows)} zero rows` : "";
  setStatus(`${integer(count)} suspects: the ${percent(answer.fraction)} of ` +
    `${integer(ranked)} rows ${how}${zero}. ${integer(plotted)} of them are plotted (amber)` +
    `${listed < count ? `; the first ${integer(listed)} were fetched` : ""}. ` +
    "A suspect may be rare or untrained; a frequent function word can have a small norm too.");
  byId("suspects-status").title = indicator.why;
}

function setStatus(text) {
  byId("suspects-status").textContent = text;
}

// Suspect rows from POST /diagnostics: drawn in amber on the plot, counted in their panel, and
// (for tables with a count column) the norm-by-count chart.
//
// The diagnostics rank the rows most likely under-trained (closest to the table's unused
// reference rows, or with the lowest norms); they are suspects, never a verdict.

import { post } from "../common/api.js";
import { drawCountChart } from "../plot/countchart.js";
import { parts } from "../common/dom.js";
import { describe } from "../common/messages.js";
import { integer, percent } from "../common/format.js";

const PAGE = 1000;
// Never more suspects than the picture can hold (max_projection_points).
const MOST = 20000;

export class SuspectsPanel {
  constructor(root) {
    this.parts = parts(root);
  }

  /** Fetch the table's suspects, flag the plotted ones, and fill the panel; never throws. */
  async show(app) {
    const table = app.table;
    const status = this.parts.status;
    status.textContent = "Ranking suspect rows\u2026";
    let found;
    try {
      found = await fetchSuspects(table.name);
    } catch (error) {
      if (app.table === table) {
        status.textContent = `Suspect rows unavailable: ${describe(error, table.name)}`;
      }
      return;
    }
    if (app.table !== table) return;
    app.suspects = found;
    this.flag(app);
    drawCountChart(this.parts.chart, this.parts.note, found.answer, found.suspects);
  }

  /** Flag the plotted suspects (again, after the plotted rows changed). */
  flag(app) {
    const found = app.suspects;
    if (!found) return;
    const ids = new Set(found.suspects.map((suspect) => suspect.id));
    const plotted = [];
    app.points.forEach((point, i) => ids.has(point.id) && plotted.push(i));
    app.plot.setSuspects(plotted);
    describeSuspects(this.parts.status, found.answer, found.suspects.length, plotted.length);
  }
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

function describeSuspects(status, answer, listed, plotted) {
  const { indicator, suspect_count: count, ranked_rows: ranked } = answer;
  const how = indicator.name === "reference_cosine"
    ? `closest to the mean of ${integer(indicator.reference_rows)} unused reference rows`
    : "with the lowest row norms (no reference rows)";
  const zero = answer.norms.zero_rows ? `; ${integer(answer.norms.zero_rows)} zero rows` : "";
  status.textContent = (`${integer(count)} suspects: the ${percent(answer.fraction)} of ` +
    `${integer(ranked)} rows ${how}${zero}. ${integer(plotted)} of them are plotted (amber)` +
    `${listed < count ? `; the first ${integer(listed)} were fetched` : ""}. ` +
    "A suspect may be rare or untrained; a frequent function word can have a small norm too.");
  status.title = indicator.why;
}

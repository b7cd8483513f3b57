// The drift view: two versions of a table (two checkpoints, or this table and another one)
// compared with POST /drift: the rows that moved most and least, and a word's neighbours
// before and after, with what entered and what left.

import { post } from "./api.js";
import { byId, el, fill } from "./dom.js";
import { integer, score } from "./format.js";
import { describe, quote } from "./messages.js";

const LISTED = 20;
const K = 10;
// Refusals that concern the word, shown beside its lists rather than as a failure.
const WORD_ERRORS = new Set(["UnknownToken", "ZeroVector"]);

/** Fill the version pickers for `table` (its checkpoints, then other tables as wide). */
export function showVersions(table, tables, state) {
  const options = table.checkpoints.map((c) => el("option", { value: String(c.index) },
    `${table.name} \u00b7 checkpoint ${c.index} (${c.label})`));
  const others = tables.filter((t) => t.name !== table.name && t.width === table.width)
    .map((t) => el("option", { value: `table:${t.name}` }, `table ${t.name} (last)`));
  for (const [id, fallback] of [["drift-from", "0"], ["drift-to", String(table.checkpoints.length - 1)]]) {
    const picker = byId(id);
    fill(picker, options.map((o) => o.cloneNode(true)), others.map((o) => o.cloneNode(true)));
    const wanted = id === "drift-from" ? state.from : state.to;
    picker.value = [...picker.options].some((o) => o.value === wanted) ? wanted : fallback;
  }
}

/** The /drift request for the pickers (and a word, when one is searched). */
function request(word) {
  const version = (value) => (value.startsWith("table:") ? value.slice(6) : Number(value));
  const body = { from: version(byId("drift-from").value), to: version(byId("drift-to").value) };
  return { ...body, limit: LISTED, k: K, tokens: word ? [word] : [] };
}

/** Compare the chosen versions and list the movers (and the word's lists, if any). */
export async function showDrift(app) {
  const table = app.table;
  const word = byId("drift-word").value.trim();
  app.state.from = byId("drift-from").value;
  app.state.to = byId("drift-to").value;
  setStatus("drift-status", "Comparing\u2026");
  let answer;
  try {
    answer = await post(table.name, "drift", request(word));
  } catch (error) {
    if (word && WORD_ERRORS.has(error.type)) {
      setStatus("drift-word-status", describe(error, table.name), true);
      byId("drift-word").value = "";
      return showDrift(app);
    }
    setStatus("drift-status", describe(error, table.name), true);
    return null;
  }
  if (app.table !== table) return null;
  describeAnswer(answer);
  fill(byId("most-moved"), answer.most_moved.map((row) => moverItem(row, app)));
  fill(byId("least-moved"), answer.least_moved.map((row) => moverItem(row, app)));
  byId("most-moved").dataset.tokens = answer.most_moved.map((row) => row.token).join(" ");
  showWord(answer.tokens[0]);
  return answer;
}

function describeAnswer(answer) {
  const name = (side) => `${side.table} checkpoint ${side.index} (${side.label})`;
  const cosine = answer.mean_cosine === undefined ? "" :
    ` Mean cosine of a token's two rows: ${score(answer.mean_cosine)}.`;
  setStatus("drift-status", `${name(answer.from)} \u2192 ${name(answer.to)}: ` +
    `${integer(answer.shared_tokens)} shared tokens, ${integer(answer.compared_rows)} compared ` +
    `(a direction in both).${cosine} Movement is the cosine of a token's two rows.`);
}

function moverItem(row, app) {
  const count = row.count === undefined ? "" : ` \u00b7 count ${integer(row.count)}`;
  return el("li", { dataset: { token: row.token } },
    el("button", { type: "button", class: "word", onclick: () => app.searchDrift(row.token) },
      row.token),
    el("span", { class: "score" }, `cos ${score(row.cosine)}${count}`));
}

function showWord(report) {
  if (!report) {
    fill(byId("neighbours-before"));
    fill(byId("neighbours-after"));
    if (!byId("drift-word-status").classList.contains("error")) {
      setStatus("drift-word-status", "Search a word to see its neighbours in both versions.");
    }
    return;
  }
  const entered = new Set(report.entered);
  const left = new Set(report.left);
  fill(byId("neighbours-before"), report.before.map((n) => neighbourItem(n, left, "left")));
  fill(byId("neighbours-after"), report.after.map((n) => neighbourItem(n, entered, "entered")));
  setStatus("drift-word-status", `${quote(report.token)}: cosine ${score(report.cosine)} ` +
    `between its two rows; ${report.overlap} of its top ${report.k} neighbours are in both ` +
    `lists, ${report.entered.length} entered, ${report.left.length} left` +
    (report.unshared.length ? `, ${report.unshared.length} are not in the other version.` : "."));
}

function neighbourItem(neighbour, changed, kind) {
  const mark = changed.has(neighbour.token) ? kind : "kept";
  return el("li", { class: mark, dataset: { token: neighbour.token } },
    neighbour.token, el("span", { class: "score" }, score(neighbour.score)));
}

function setStatus(id, text, isError = false) {
  const status = byId(id);
  status.textContent = text;
  status.classList.toggle("error", isError);
}

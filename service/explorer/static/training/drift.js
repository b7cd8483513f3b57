// The drift view: two versions of a table (two checkpoints, or this table and another one)
// compared with POST /drift: the rows that moved most and least, and a word's neighbours
// before and after, with what entered and what left.

import { post } from "../common/api.js";
import { el, fill, parts, setStatus } from "../common/dom.js";
import { integer, score } from "../common/format.js";
import { Latest } from "../common/latest.js";
import { describe, quote } from "../common/messages.js";

const LISTED = 20;
const K = 10;
// Refusals that concern the word, shown beside its lists rather than as a failure.
const WORD_ERRORS = new Set(["UnknownToken", "ZeroVector"]);

export class DriftPanel {
  /** The drift view in `root`; `onCompared()` runs after the person compares two versions. */
  constructor(root, app, onCompared) {
    this.app = app;
    this.parts = parts(root);
    this.latest = new Latest(); // comparisons asked for: only the latest answer is shown
    this.parts.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.show().then(onCompared);
    });
    this.parts.wordForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.show();
    });
  }

  /** Fill the version pickers for `table` (its checkpoints, then other tables as wide). */
  showVersions(table, tables, state) {
    const options = table.checkpoints.map((c) => el("option", { value: String(c.index) },
      `${table.name} \u00b7 checkpoint ${c.index} (${c.label})`));
    const others = tables.filter((t) => t.name !== table.name && t.width === table.width)
      .map((t) => el("option", { value: `table:${t.name}` }, `table ${t.name} (last)`));
    const last = String(table.checkpoints.length - 1);
    for (const [picker, wanted, fallback] of [[this.parts.from, state.from, "0"],
      [this.parts.to, state.to, last]]) {
      fill(picker, options.map((o) => o.cloneNode(true)), others.map((o) => o.cloneNode(true)));
      picker.value = [...picker.options].some((o) => o.value === wanted) ? wanted : fallback;
    }
  }

  /** The /drift request for the pickers (and a word, when one is searched). */
  request(word) {
    const version = (value) => (value.startsWith("table:") ? value.slice(6) : Number(value));
    const body = { from: version(this.parts.from.value), to: version(this.parts.to.value) };
    return { ...body, limit: LISTED, k: K, tokens: word ? [word] : [] };
  }

  /** Compare the chosen versions and list the movers (and the word's lists, if any); null
   * when refused, or when another comparison or table was asked for meanwhile. */
  async show() {
    const { app, parts: p } = this;
    const table = app.table;
    const latest = this.latest.ask();
    const current = () => latest() && app.table === table;
    const word = p.word.value.trim();
    app.state.from = p.from.value;
    app.state.to = p.to.value;
    setStatus(p.status, "Comparing\u2026");
    let answer;
    try {
      answer = await post(table.name, "drift", this.request(word));
    } catch (error) {
      if (!current()) return null;
      if (word && WORD_ERRORS.has(error.type)) {
        setStatus(p.wordStatus, describe(error, table.name), true);
        p.word.value = "";
        return this.show();
      }
      setStatus(p.status, describe(error, table.name), true);
      return null;
    }
    if (!current()) return null;
    setStatus(p.status, describeAnswer(answer));
    const search = (token) => {
      p.word.value = token;
      return this.show();
    };
    fill(p.mostMoved, answer.most_moved.map((row) => moverItem(row, search)));
    fill(p.leastMoved, answer.least_moved.map((row) => moverItem(row, search)));
    p.mostMoved.dataset.tokens = answer.most_moved.map((row) => row.token).join(" ");
    this.showWord(answer.tokens[0]);
    return answer;
  }

  showWord(report) {
    const p = this.parts;
    if (!report) {
      fill(p.before);
      fill(p.after);
      if (!p.wordStatus.classList.contains("error")) {
        setStatus(p.wordStatus, "Search a word to see its neighbours in both versions.");
      }
      return;
    }
    const entered = new Set(report.entered);
    const left = new Set(report.left);
    fill(p.before, report.before.map((n) => neighbourItem(n, left, "left")));
    fill(p.after, report.after.map((n) => neighbourItem(n, entered, "entered")));
    setStatus(p.wordStatus, `${quote(report.token)}: cosine ${score(report.cosine)} ` +
      `between its two rows; ${report.overlap} of its top ${report.k} neighbours are in both ` +
      `lists, ${report.entered.length} entered, ${report.left.length} left` +
      (report.unshared.length ? `, ${report.unshared.length} are not in the other version.` : "."));
  }
}

function describeAnswer(answer) {
  const name = (side) => `${side.table} checkpoint ${side.index} (${side.label})`;
  const cosine = answer.mean_cosine === undefined ? "" :
    ` Mean cosine of a token's two rows: ${score(answer.mean_cosine)}.`;
  return `${name(answer.from)} \u2192 ${name(answer.to)}: ` +
    `${integer(answer.shared_tokens)} shared tokens, ${integer(answer.compared_rows)} compared ` +
    `(a direction in both).${cosine} Movement is the cosine of a token's two rows.`;
}

function moverItem(row, search) {
  const count = row.count === undefined ? "" : ` \u00b7 count ${integer(row.count)}`;
  return el("li", { dataset: { token: row.token } },
    el("button", { type: "button", class: "word", onclick: () => search(row.token) },
      row.token),
    el("span", { class: "score" }, `cos ${score(row.cosine)}${count}`));
}

function neighbourItem(neighbour, changed, kind) {
  const mark = changed.has(neighbour.token) ? kind : "kept";
  return el("li", { class: mark, dataset: { token: neighbour.token } },
    neighbour.token, el("span", { class: "score" }, score(neighbour.score)));
}

// The table picker and the chosen table's facts (rows x width, parameters), in the header.

import { get } from "./api.js";
import { el, fill, parts } from "./dom.js";
import { compact, integer, percent } from "./format.js";

/** The served tables ({name, rows, width, parameters, ...}) from GET /v1/tables. */
export async function fetchTables() {
  return (await get("v1/tables")).tables;
}

/** The header's picker and facts (its data-parts "table" and "facts"). */
export class TablePicker {
  constructor(root) {
    this.parts = parts(root);
  }

  /**
   * Fill the picker; `onPick(name)` runs when the person chooses another table. A wanted table
   * that is not served stays named in the picker, marked so, rather than leaving it blank.
   */
  show(tables, current, onPick) {
    const select = this.parts.table;
    const options = tables.map((table) => el("option", { value: table.name },
      `${table.name} \u00b7 ${integer(table.rows)} \u00d7 ${table.width}`));
    const served = tables.some((table) => table.name === current);
    if (!served && current) {
      options.unshift(el("option", { value: current, disabled: true }, `${current} (not served)`));
    }
    fill(select, options);
    select.value = current;
    select.disabled = tables.length === 0;
    select.onchange = () => onPick(select.value);
  }

  /** The chosen table's facts beside the picker. */
  showFacts(table) {
    const facts = this.parts.facts;
    if (!table) {
      facts.textContent = "";
      return;
    }
    const columns = table.metadata_columns.length
      ? ` \u00b7 metadata: ${table.metadata_columns.join(", ")}` : "";
    facts.textContent = `${integer(table.rows)} rows \u00d7 ${table.width} dimensions \u00b7 ` +
      `${compact(table.parameters)} parameters${modelFacts(table.model)}${columns}`;
    facts.title = `${integer(table.parameters)} parameters, from ${table.source}`;
  }
}

/** A language model's size table in a few words: its share of the model, padding, head. */
function modelFacts(model) {
  if (!model) return "";
  const share = model.total_parameters
    ? ` (${percent(model.embedding_share)} of ${compact(model.total_parameters)})` : "";
  const padding = model.padding_rows ? ` \u00b7 ${integer(model.padding_rows)} padding rows` : "";
  const head = model.head === "tied" ? "tied head"
    : `untied head ${model.head} (${percent(model.output_share ?? 0)})`;
  return `${share}${padding} \u00b7 ${head}`;
}

// The table picker: every served table with its size (rows x width, parameters).

import { get } from "./api.js";
import { byId, el, fill } from "./dom.js";
import { compact, integer } from "./format.js";

/** The served tables ({name, rows, width, parameters, ...}) from GET /v1/tables. */
export async function fetchTables() {
  return (await get("v1/tables")).tables;
}

/** Fill the picker; `onPick(name)` runs when the person chooses another table. */
export function showTables(tables, current, onPick) {
  const select = byId("table");
  fill(select, tables.map((table) => el("option", { value: table.name },
    `${table.name} \u00b7 ${integer(table.rows)} \u00d7 ${table.width}`)));
  select.value = current;
  select.disabled = tables.length === 0;
  select.onchange = () => onPick(select.value);
}

/** The chosen table's facts beside the picker. */
export function showFacts(table) {
  const facts = byId("table-facts");
  if (!table) {
    facts.textContent = "";
    return;
  }
  const columns = table.metadata_columns.length
    ? ` \u00b7 metadata: ${table.metadata_columns.join(", ")}` : "";
  facts.textContent = `${integer(table.rows)} rows \u00d7 ${table.width} dimensions \u00b7 ` +
    `${compact(table.parameters)} parameters${columns}`;
  facts.title = `${integer(table.parameters)} parameters, from ${table.source}`;
}

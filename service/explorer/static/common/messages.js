// Messages a person reads instead of a blank plot: unknown words and tables, no tables, failures.

import { el, fill, parts } from "./dom.js";

/** One sentence for an API error, naming what was not found or what failed. */
export function describe(error, table = "") {
  const details = error.details ?? {};
  switch (error.type) {
    case "UnknownToken":
      return `Not in table ${table}: ${(details.tokens ?? []).map(quote).join(", ")}.`;
    case "UnknownTable":
      return `No table named ${quote(details.table ?? "")}. ` +
        `Served tables: ${(details.available ?? []).join(", ") || "none"}.`;
    case "NetworkError":
      return error.message;
    case "Unauthorized":
      return "This server needs an API key, and none was accepted. Reload the page to enter one.";
    default:
      if (error.status >= 500) {
        return `The server failed (${error.status} ${error.type}): ${error.message}`;
      }
      return error.message ?? String(error);
  }
}

export function quote(text) {
  return `\u201c${text}\u201d`;
}

/** The plot area's two messages: the banner above the picture and the overlay in its place. */
export class Messages {
  constructor(root) {
    this.parts = parts(root);
  }

  /** The banner above the plot; kind is "error" or "info". */
  show(text, kind = "error") {
    const { banner } = this.parts;
    fill(banner, el("span", {}, text), el("button", {
      type: "button", class: "close", "aria-label": "Dismiss", onclick: () => this.clear(),
    }, "\u00d7"));
    banner.className = kind;
    banner.hidden = false;
  }

  clear() {
    this.parts.banner.hidden = true;
  }

  /** A message in place of the plot, for when there is nothing to plot. */
  showOverlay(text) {
    this.parts.overlay.textContent = text;
    this.parts.overlay.hidden = !text;
  }
}

// The Bookmarks panel: the whole view (its link state: table, rows, projection and parameters,
// chosen word, isolated rows, colouring, camera) as a link, as a small JSON file that loads
// back, and as named bookmarks kept in this browser (localStorage).
//
// The file: {"format": "embedding-explorer-view", "version": 1, "state": {...}, "link": "?..."}.

import { el, fill, parts, setStatus } from "../common/dom.js";

export const FORMAT = "embedding-explorer-view";
const ITEM = "embedding-explorer.bookmarks";

export class BookmarksPanel {
  constructor(root, app, link) {
    this.app = app;
    this.link = link;
    this.parts = parts(root);
    const p = this.parts;
    p.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save(p.name.value.trim() || this.defaultName());
      p.name.value = "";
    });
    p.copy.addEventListener("click", () => this.copyLink());
    p.download.addEventListener("click", () => this.download());
    p.file.addEventListener("change", () => this.load(p.file.files[0]));
    this.showList();
  }

  defaultName() {
    const { table, token, projection } = this.app.state;
    return [table, projection, token].filter(Boolean).join(" \u00b7 ");
  }

  /** The named bookmarks: [{name, query, saved}]. */
  list() {
    try {
      const list = JSON.parse(localStorage.getItem(ITEM) ?? "[]");
      return Array.isArray(list) ? list : [];
    } catch {
      return [];
    }
  }

  save(name) {
    const list = this.list().filter((bookmark) => bookmark.name !== name);
    list.push({ name, query: this.link.query(this.app.state), saved: new Date().toISOString() });
    localStorage.setItem(ITEM, JSON.stringify(list));
    this.showList();
    setStatus(this.parts.status, `Saved \u201c${name}\u201d in this browser.`);
  }

  remove(name) {
    localStorage.setItem(ITEM, JSON.stringify(this.list().filter((b) => b.name !== name)));
    this.showList();
  }

  showList() {
    fill(this.parts.list, this.list().map((bookmark) => el("li", { dataset: { name: bookmark.name } },
      el("a", { href: `${window.location.pathname}?${bookmark.query}`, class: "bookmark" },
        bookmark.name),
      el("button", { type: "button", class: "remove", title: "Delete this bookmark",
        "aria-label": `Delete ${bookmark.name}`, onclick: () => this.remove(bookmark.name) },
      "\u00d7"))));
  }

  async copyLink() {
    const link = window.location.href;
    try {
      await navigator.clipboard.writeText(link);
      setStatus(this.parts.status, "The link is copied.");
    } catch {
      setStatus(this.parts.status, `The link: ${link}`);
    }
  }

  /** The view as a JSON file. */
  file() {
    const state = this.link.read(`?${this.link.query(this.app.state)}`);
    return { format: FORMAT, version: 1, state, link: `?${this.link.query(state)}` };
  }

  download() {
    const text = JSON.stringify(this.file(), null, 1);
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const name = `${this.defaultName().replaceAll(" \u00b7 ", "-") || "view"}.json`;
    const anchor = Object.assign(document.createElement("a"), { href: url, download: name });
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  /** Open the view a bookmark file describes. */
  async load(file) {
    if (!file) return;
    let view;
    try {
      view = JSON.parse(await file.text());
    } catch (error) {
      setStatus(this.parts.status, `Not a bookmark file: ${error.message}`, true);
      return;
    }
    if (view?.format !== FORMAT || typeof view.state !== "object") {
      setStatus(this.parts.status, `Not a bookmark file: no "format": "${FORMAT}".`, true);
      return;
    }
    const state = { ...this.link.defaults(), ...view.state };
    window.location.assign(`${window.location.pathname}?${this.link.query(state)}`);
  }
}

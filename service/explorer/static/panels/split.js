// How the table splits typed text: POST /tokenize's pieces, coloured in the text and as chips,
// and their rows placed on the picture (plotted rows where they are, others through /project).

import { post } from "../common/api.js";
import { el, fill, parts, setStatus } from "../common/dom.js";
import { Latest } from "../common/latest.js";
import { describe, quote } from "../common/messages.js";
import { place } from "../plot/placement.js";

// Distinct hues, one per piece in turn; a word's pieces get neighbouring colours.
export const PIECE_COLORS = [
  "#c92a2a", "#1971c2", "#2f9e44", "#e8590c", "#7048e8", "#0b7285", "#a61e4d", "#5c940d",
];
const WAIT_MS = 150; // after the last keystroke, so typing a word asks once

export class SplitPanel {
  constructor(root, app) {
    this.app = app;
    this.parts = parts(root);
    this.latest = new Latest(); // texts asked for: only the latest answer is shown
    let timer = null;
    this.parts.input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.show(), WAIT_MS);
    });
    this.parts.form.addEventListener("submit", (event) => {
      event.preventDefault();
      clearTimeout(timer);
      this.show();
    });
  }

  /** Split the text box's text with the current table and show it; marks go on the picture. */
  async show() {
    const { app, parts: p } = this;
    const text = p.input.value;
    const current = this.latest.ask();
    if (!app.table || !text.trim()) {
      this.clear();
      return;
    }
    const table = app.table;
    let answer;
    try {
      answer = await post(table.name, "tokenize", { text });
    } catch (error) {
      if (!current()) return;
      this.clear();
      setStatus(p.status, describe(error, table.name), true);
      return;
    }
    const placed = await place(app, answer.pieces.map((piece) => piece.token));
    if (!current() || app.table !== table) return; // a newer text, or another table
    showPieces(p, answer, (token) => app.select(token));
    setStatus(p.status, summary(answer));
    app.plot.setMarks(marksOf(answer.pieces, placed));
  }

  clear() {
    fill(this.parts.text);
    fill(this.parts.pieces);
    setStatus(this.parts.status, "Type text to see how this table splits it into rows.");
  }
}

function showPieces(p, answer, onPick) {
  fill(p.text, colouredText(answer.text, answer.pieces));
  fill(p.pieces, answer.pieces.map((piece, i) =>
    el("li", { dataset: { token: piece.token, id: piece.id } },
      coloured(el("button", {
        type: "button", class: "piece", title: `id ${piece.id}`,
        onclick: () => onPick(piece.token),
      }, piece.token), i))));
}

// Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
function coloured(node, i) {
  node.style.setProperty("--piece", colorOf(i));
  return node;
}

// The text with each piece's characters in the piece's colour. Offsets count code points,
// as Python strings do; JavaScript strings count UTF-16 units, so the text is split first.
function colouredText(text, pieces) {
  const characters = Array.from(text);
  const nodes = [];
  let at = 0;
  pieces.forEach((piece, i) => {
    if (piece.word === undefined || piece.start < at) return; // special or overlapping
    if (piece.start > at) nodes.push(characters.slice(at, piece.start).join(""));
    nodes.push(coloured(el("span", { class: "piece-text" },
      characters.slice(piece.start, piece.end).join("")), i));
    at = piece.end;
  });
  if (at < characters.length) nodes.push(characters.slice(at).join(""));
  return nodes;
}

function summary(answer) {
  const split = answer.words.filter((word) => !word.one_row);
  const counts = `${answer.words.length} word(s), ${answer.pieces.length} piece(s).`;
  if (!split.length) return `${counts} Every word is one row.`;
  return `${counts} No row of their own: ` +
    split.map((word) => `${quote(word.text)} (${word.pieces} pieces)`).join(", ") + ".";
}

function marksOf(pieces, placed) {
  const seen = new Set();
  const marks = [];
  pieces.forEach((piece, i) => {
    if (seen.has(piece.token) || !placed.has(piece.token)) return;
    seen.add(piece.token);
    marks.push({ ...placed.get(piece.token), role: "piece", color: colorOf(i) });
  });
  return marks;
}

function colorOf(i) {
  return PIECE_COLORS[i % PIECE_COLORS.length];
}

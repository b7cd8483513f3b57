// How the table splits typed text: POST /tokenize's pieces, coloured in the text and as chips,
// and their rows placed on the picture (plotted rows where they are, others through /project).

import { post } from "./api.js";
import { byId, el, fill } from "./dom.js";
import { describe, quote } from "./messages.js";
import { place } from "./placement.js";

// Distinct hues, one per piece in turn; a word's pieces get neighbouring colours.
export const PIECE_COLORS = [
  "#c92a2a", "#1971c2", "#2f9e44", "#e8590c", "#7048e8", "#0b7285", "#a61e4d", "#5c940d",
];
const WAIT_MS = 150; // after the last keystroke, so typing a word asks once

let asked = 0;

/** Listen to the text box: each pause in typing shows the split of what it holds. */
export function setUpSplit(app) {
  let timer = null;
  byId("split-input").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => showSplit(app), WAIT_MS);
  });
  byId("split-form").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(timer);
    showSplit(app);
  });
}

/** Split the text box's text with the current table and show it; marks go on the picture. */
export async function showSplit(app) {
  const text = byId("split-input").value;
  const call = ++asked;
  if (!app.table || !text.trim()) {
    clearSplit();
    return;
  }
  const table = app.table;
  let answer;
  try {
    answer = await post(table.name, "tokenize", { text });
  } catch (error) {
    if (call !== asked) return;
    clearSplit();
    setStatus(describe(error, table.name), true);
    return;
  }
  const placed = await place(app, answer.pieces.map((piece) => piece.token));
  if (call !== asked || app.table !== table) return; // a newer text, or another table
  showPieces(answer, (token) => app.select(token));
  setStatus(summary(answer));
  app.plot.setMarks(marksOf(answer.pieces, placed));
}

export function clearSplit() {
  fill(byId("split-text"));
  fill(byId("split-pieces"));
  setStatus("Type text to see how this table splits it into rows.");
}

function showPieces(answer, onPick) {
  fill(byId("split-text"), colouredText(answer.text, answer.pieces));
  fill(byId("split-pieces"), answer.pieces.map((piece, i) =>
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

function setStatus(text, isError = false) {
  const status = byId("split-status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

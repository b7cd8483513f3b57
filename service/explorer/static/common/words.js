// Words as people type them. On a language model's table a word after a space is a row of its
// own (Ġking, ▁king), apart from the piece of the same letters inside a word (king, as in
// s|king): a typed word is the word's row, as the service splits it (POST .../tokenize, which
// reads a text alone as a word); "·king", the way the page shows that row, reads as " king";
// a token typed as it is stored (Ġking, <|endoftext|>) still finds itself. On word tables
// (MiniLM, GloVe) a typed word is a token as it is.

import { ApiError, post } from "./api.js";
import { readableToken } from "./format.js";
import { quote } from "./messages.js";

const PIECES = new Set(["byte-level", "sentencepiece"]);

/** Whether the table's tokens are a language model's pieces, written apart from their text. */
export function writesPieces(table) {
  return PIECES.has(table?.model?.pieces);
}

/** What a person typed, as text: the middle dot the page shows for a leading space, read back. */
export function typedText(typed) {
  return typed.replace(/^\u00b7/, " ");
}

/**
 * The stored tokens typed words stand for on the app's table, in order. ApiError (the
 * service's, or SeveralPieces) for a word that is no row.
 */
export function tokensOf(app, typed) {
  return Promise.all(typed.map((word) => tokenOf(app, word)));
}

async function tokenOf(app, typed) {
  const { table } = app;
  if (!writesPieces(table) || isPlottedPiece(app, typed)) return typed;
  const split = await post(table.name, "tokenize", { text: typedText(typed) });
  if (split.pieces.length === 1) return split.pieces[0].token;
  if (await isToken(table, typed)) return typed;
  if (!split.pieces.length) {
    throw new ApiError(404, "UnknownToken", "", { tokens: [typed] });
  }
  const pieces = split.pieces.map(readableToken).join(" ");
  throw new ApiError(422, "SeveralPieces", `${quote(typed)} is ${split.pieces.length} pieces ` +
    `in table ${table.name} (${pieces}): it has no row of its own.`);
}

// A plotted row's token typed as it is stored, where it reads otherwise (Ġthe reads " the").
function isPlottedPiece(app, typed) {
  const point = app.points[app.indexOfToken.get(typed)];
  return point !== undefined && readableToken(point) !== typed;
}

async function isToken(table, token) {
  try {
    await post(table.name, "lookup", { tokens: [token] });
    return true;
  } catch (error) {
    if (error.type === "UnknownToken") return false;
    throw error;
  }
}

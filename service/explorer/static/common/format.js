// How numbers and tokens are written on the page; the exact values stay in data attributes.

const INTEGER = new Intl.NumberFormat("en-US");
const COMPACT = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

export const integer = (n) => INTEGER.format(n);
export const compact = (n) => COMPACT.format(n);
export const score = (s) => s.toFixed(3);
export const percent = (ratio) => `${(100 * ratio).toFixed(1)}%`;
export const coordinate = (c) => c.toFixed(3);
export const norm = (n) => n.toFixed(3);

/**
 * What a person reads for a token: a language model's byte-level or SentencePiece token as the
 * text it stands for (the answer's "text": "Ġrunning" is " running", shown with its space as
 * a middle dot so it can be seen), else the token itself.
 */
export function readableToken(item) {
  if (item.text == null || item.text === item.token) return item.token;
  return item.text.replace(/^ /, "\u00b7");
}

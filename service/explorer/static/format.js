// How numbers are written on the page; the exact values stay in data attributes.

const INTEGER = new Intl.NumberFormat("en-US");
const COMPACT = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

export const integer = (n) => INTEGER.format(n);
export const compact = (n) => COMPACT.format(n);
export const score = (s) => s.toFixed(3);
export const percent = (ratio) => `${(100 * ratio).toFixed(1)}%`;
export const coordinate = (c) => c.toFixed(3);
export const norm = (n) => n.toFixed(3);

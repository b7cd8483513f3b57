// Which points get labels first: the most frequent (a count column) or else the largest norms.
//
// Rows with the largest norms are the clearest words in most tables; the rows a file lists
// first (frequency order in word2vec, GloVe and projector files) and any numeric metadata
// column can be chosen instead.

const COUNT_COLUMN = /^(count|counts|freq|frequency|occurrences)$/i;

/** The ways labels can be ranked for these points: [{value, text}]. */
export function rankings(points) {
  const choices = [
    { value: "norm", text: "largest norm" },
    { value: "row", text: "first rows" },
  ];
  for (const column of numericColumns(points)) {
    choices.push({ value: `metadata:${column}`, text: `largest ${column}` });
  }
  return choices;
}

/** A count column if the points have one, else the largest norms. */
export function defaultRanking(points) {
  const count = numericColumns(points).find((column) => COUNT_COLUMN.test(column));
  return count ? `metadata:${count}` : "norm";
}

/** Indexes of `points`, the first to label first. */
export function labelOrder(points, ranking) {
  const order = points.map((_, i) => i);
  const key = rankingKey(ranking);
  return order.sort((a, b) => key(points[b]) - key(points[a]) || points[a].id - points[b].id);
}

function rankingKey(ranking) {
  if (ranking === "row") return (point) => -point.id;
  if (ranking.startsWith("metadata:")) {
    const column = ranking.slice("metadata:".length);
    return (point) => point.metadata?.[column] ?? -Infinity;
  }
  return (point) => point.norm;
}

function numericColumns(points) {
  const first = points[0]?.metadata ?? {};
  return Object.keys(first).filter((column) =>
    points.every((point) => typeof point.metadata?.[column] === "number"));
}

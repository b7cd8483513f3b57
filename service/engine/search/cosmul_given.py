"""3CosMul with raw vector terms as given, as gensim's most_similar_cosmul scores them.

gensim does not normalise a raw vector passed to most_similar_cosmul: its factor is
(1 + v . row / |row|) / 2 = (1 + s cos) / 2 with s = |v|, which for s > 1 can be zero or
negative. The objective prod(positive factors) / (prod(negative factors) + 1e-6) is then no
longer monotone in each cosine and has poles, so such a query is ranked by the float64 objective
itself (ties by row id), not by its logarithm; no term is weighted (gensim has no weights here,
and a negative factor has no real power), so at the default max_terms no product under- or
overflows.

Candidates come from interval arithmetic: each factor's interval is computed from the float32
cosine minus and plus the kernel's error, with the very float64 operations of the exact step,
and the products and the quotient take the extremes of their endpoints' products in the same
order. Rounding is monotone, so the exact step's value lies within the interval; a denominator
whose interval holds 0 leaves the row unbounded, so it is always a candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.errors import InvalidQuery
from service.engine.search.queries import CosmulQuery, Term

# gensim's most_similar_cosmul adds this to the denominator to avoid dividing by zero.
COSMUL_EPSILON = 1e-6
# What a bound may not reach: -inf marks an excluded row in the candidate selection.
LOWEST = -np.finfo(np.float64).max


def given_scales(vectors: np.ndarray, terms: Sequence[Term]) -> tuple[np.ndarray, np.ndarray]:
    """Unit directions of 3CosMul terms and the scale of each one's cosine: a raw vector's norm
    (a zero vector scores 1/2 against every row), 1 for table rows and means of pieces, which
    `vectors` holds at unit length already. InvalidQuery for a weighted term."""
    weighted = [i for i, term in enumerate(terms) if term.weight != 1]
    if weighted:
        raise InvalidQuery(
            f"term {weighted[0]} has weight {terms[weighted[0]].weight}: 3CosMul with "
            "vector_terms as_given takes no weights (as gensim's most_similar_cosmul), since a "
            "raw vector's factor may be negative"
        )
    directions, scales = vectors.copy(), np.ones(len(terms))
    for i, term in enumerate(terms):
        if term.vector is not None and not term.unit:
            norm = float(np.sqrt(np.sum(vectors[i] * vectors[i])))
            scales[i] = norm
            directions[i] = vectors[i] / norm if norm > 0 else 0.0
    return directions, scales


def factors(cosines: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Each term's factor (1 + scale * cosine) / 2, from cosines (terms, rows)."""
    return (1 + scales[:, None] * cosines) / 2


def objectives(cosines: np.ndarray, query: CosmulQuery) -> np.ndarray:
    """The objective of each row from its float64 cosines (terms, rows): the product of the
    positive terms' factors over the product of the negative terms' + 1e-6, as gensim."""
    assert query.scales is not None
    values = factors(cosines, query.scales)
    positive = query.positives
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a pole is inf or NaN
        objective = _product(values[:positive])
        if positive < len(values):
            objective = objective / (_product(values[positive:]) + COSMUL_EPSILON)
    return objective


def _product(rows: np.ndarray) -> np.ndarray:
    """rows[0] * rows[1] * ..., multiplied left to right."""
    total = rows[0].copy()
    for row in rows[1:]:
        total *= row
    return total


def objective_bounds(
    cosines: np.ndarray, query: CosmulQuery, error: float
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the objective `objectives` computes, for rows whose float32
    cosines (terms, rows) are within `error` of the true ones."""
    assert query.scales is not None
    width = query.terms.shape[1]
    # The exact step's float64 cosine is itself within a float64 dot product's error.
    margin = error + 2 * (width + 2) * 2.0**-53
    wide = cosines.astype(np.float64)
    low = factors(wide - margin, query.scales)
    high = factors(wide + margin, query.scales)
    positive = query.positives
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lower, upper = _interval_product(low[:positive], high[:positive])
        if positive < len(low):
            below, above = _interval_product(low[positive:], high[positive:])
            lower, upper = _interval_quotient(
                (lower, upper), (below + COSMUL_EPSILON, above + COSMUL_EPSILON)
            )
    # NaN (0 x inf, past float64's range) bounds nothing.
    lower[np.isnan(lower)] = -np.inf
    upper[np.isnan(upper)] = np.inf
    return lower, np.maximum(upper, LOWEST)


def _interval_product(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the left-to-right product of factors within [low, high], row by row."""
    lower, upper = low[0].copy(), high[0].copy()
    for first, last in zip(low[1:], high[1:], strict=True):
        corners = (lower * first, lower * last, upper * first, upper * last)
        lower, upper = np.minimum.reduce(corners), np.maximum.reduce(corners)
    return lower, upper


def _interval_quotient(
    numerator: tuple[np.ndarray, np.ndarray], denominator: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of numerator / denominator; unbounded where the denominator may be 0."""
    (top_low, top_high), (bottom_low, bottom_high) = numerator, denominator
    corners = (
        top_low / bottom_low,
        top_low / bottom_high,
        top_high / bottom_low,
        top_high / bottom_high,
    )
    lower, upper = np.minimum.reduce(corners), np.maximum.reduce(corners)
    pole = (bottom_low <= 0) & (bottom_high >= 0)
    lower[pole], upper[pole] = -np.inf, np.inf
    return lower, upper

"""Pearson and Spearman correlations with scipy's two-sided p-values, in numpy alone.

scipy is not a runtime dependency (gensim brings it to the tests only), so the few statistics
the diagnostics and the word-pair evaluation report are computed here and tested against
scipy.stats.pearsonr / spearmanr.

Both p-values come from one function: for r from n pairs, scipy's pearsonr uses the beta
distribution of r under independence and spearmanr Student's t with n - 2 degrees of freedom,
and both equal the regularised incomplete beta I_{1 - r^2}((n - 2) / 2, 1 / 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# The continued fraction converges in a few dozen steps for any argument it is used with.
_MAX_STEPS = 500
_EPSILON = 1e-15
_TINY = 1e-300
# float64 spacing at 1: a correlation within a few of them of +-1 is +-1.
_ROUNDING = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient, its two-sided p-value and how many pairs it is over."""

    r: float
    p_value: float
    n: int


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of `values`, ties sharing the mean of their ranks (scipy's rankdata)."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], ordered.size]
    mean_ranks = (starts + ends + 1) / 2.0
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(mean_ranks, ends - starts)
    return ranks


def pearson(x: np.ndarray, y: np.ndarray) -> Correlation | None:
    """Pearson's r with its p-value; None when undefined (under 3 pairs, or a constant side)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.size < 3:
        return None
    dx, dy = _centred(x), _centred(y)
    scale = math.sqrt(float(dx @ dx)) * math.sqrt(float(dy @ dy))
    if not scale > 0:
        return None
    r = max(-1.0, min(1.0, float(dx @ dy) / scale))
    # Within the sums' rounding (about n ulps) of +-1, r is +-1: an exact linear relation
    # computed as -0.9999999999999999 would otherwise get p = 1e-8 instead of 0 (as scipy).
    if 1.0 - abs(r) <= x.size * _ROUNDING:
        r = math.copysign(1.0, r)
    return Correlation(r, two_sided_p(r, x.size), int(x.size))


def _centred(values: np.ndarray) -> np.ndarray:
    """`values` less their mean, scaled by their largest magnitude first: scores near 1e308
    would overflow the mean and the sums of squares (r does not depend on the scale)."""
    largest = float(np.max(np.abs(values)))
    scaled = values / largest if largest > 0 else values
    return scaled - scaled.mean()


def spearman(x: np.ndarray, y: np.ndarray) -> Correlation | None:
    """Spearman's rho (Pearson's r of the average ranks) with its p-value; None when undefined."""
    return pearson(average_ranks(x), average_ranks(y))


def two_sided_p(r: float, n: int) -> float:
    """P(|R| >= |r|) for n independent pairs: I_{1 - r^2}((n - 2) / 2, 1 / 2)."""
    if abs(r) >= 1.0:
        return 0.0
    return regularized_incomplete_beta((n - 2) / 2.0, 0.5, 1.0 - r * r)


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) by its continued fraction (Lentz's method), for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    # The fraction converges fast only below the mean a / (a + b); use the symmetry above it.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    c, d = 1.0, _nonzero(1.0 - (a + b) * x / (a + 1.0))
    d = 1.0 / d
    result = d
    for m in range(1, _MAX_STEPS + 1):
        for numerator in (_even_term(a, b, x, m), _odd_term(a, b, x, m)):
            d = 1.0 / _nonzero(1.0 + numerator * d)
            c = _nonzero(1.0 + numerator / c)
            result *= d * c
        if abs(d * c - 1.0) < _EPSILON:
            break
    return result


def _even_term(a: float, b: float, x: float, m: int) -> float:
    return m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))


def _odd_term(a: float, b: float, x: float, m: int) -> float:
    return -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))


def _nonzero(value: float) -> float:
    return value if abs(value) > _TINY else _TINY

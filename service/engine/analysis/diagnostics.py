"""A table's diagnostics: which rows not to trust, computed once per table load and cached.

The expensive parts (the first principal component of the table, the norm percentiles, the
ranking under the default reference) are computed once, on first use or by `warm` in the
background after a load; a reload makes a new ServedTable and so new diagnostics. Rankings
under a caller's own reference rows are cached too, the last `cached_references` of them.

Nothing here calls a row under-trained: a ranking orders rows by an indicator, and the
`fraction` most suspect of them are *suspects*.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.engine.analysis.indicators import (
    Component,
    Ranking,
    first_component,
    rank,
    reference_cosines,
)
from service.engine.analysis.references import DEFAULT_DESCRIPTION, default_rows
from service.engine.analysis.statistics import Correlation, spearman
from service.engine.search.store import RowStore
from service.engine.tables.table import EmbeddingTable

PERCENTILES = (1, 5, 25, 50, 75, 95, 99)
# The share of ranked rows reported as suspects unless a request asks for another.
DEFAULT_FRACTION = 0.02
# Rankings under callers' own reference rows kept per load: 24 bytes a row each.
CACHED_REFERENCES = 2
COUNT_COLUMN = "count"
COUNT_BINS = 10
NORM_WHY = "rows with the lowest L2 norm are the most suspect"


@dataclass(frozen=True)
class Reference:
    """Reference rows (known never to occur in training) and where they came from."""

    rows: np.ndarray
    description: str


@dataclass(frozen=True)
class NormSummary:
    """Percentiles of the row norms (zero rows included) and the zero rows themselves."""

    percentiles: dict[int, float]
    zero_rows: np.ndarray


@dataclass(frozen=True)
class CountBin:
    """Rows whose count lies in [low, high], and the quartiles of their norms."""

    low: float
    high: float
    rows: int
    norm_quartiles: tuple[float, float, float]


@dataclass(frozen=True)
class CountReport:
    """How norm and indicator follow the log count, over the rows with a positive count."""

    column: str
    rows: int
    norm: Correlation | None
    indicator: Correlation | None
    bins: list[CountBin]


@dataclass(frozen=True)
class Analysis:
    """One ranking, the row norms, and how both follow the counts when the table has them."""

    ranking: Ranking
    norms: np.ndarray
    counts: CountReport | None


class TableDiagnostics:
    """One table load's diagnostics; thread-safe, each part computed once."""

    def __init__(
        self, table: EmbeddingTable, store: RowStore, cached_references: int = CACHED_REFERENCES
    ) -> None:
        self.table = table
        self.store = store
        self.cached_references = cached_references
        self._lock = threading.RLock()
        self._component: Component | None = None
        self._norms: NormSummary | None = None
        self._counts: tuple[str, np.ndarray] | None = None
        self._fixed: dict[str, Analysis] = {}
        self._custom: OrderedDict[bytes, Analysis] = OrderedDict()

    def warm(self) -> Analysis:
        """Compute what every request needs: the default analysis and the norm summary."""
        self.norm_summary()
        return self.default()

    def norm_summary(self) -> NormSummary:
        """Norm percentiles and zero rows, computed once."""
        with self._lock:
            if self._norms is None:
                norms = self.store.norms64
                values = np.percentile(norms, PERCENTILES)
                percentiles = dict(zip(PERCENTILES, values.tolist(), strict=True))
                self._norms = NormSummary(percentiles, np.flatnonzero(norms == 0))
            return self._norms

    def counts(self) -> tuple[str, np.ndarray] | None:
        """(column, float64 count of every row) from a numeric `count` column, or None."""
        with self._lock:
            if self._counts is None:
                self._counts = count_column(self.table)
            return self._counts if self._counts[1].size else None

    def component(self) -> Component:
        """The table's first principal component, computed once."""
        with self._lock:
            if self._component is None:
                self._component = first_component(self.table.vectors)
            return self._component

    def default(self) -> Analysis:
        """Under the default reference pattern, or by norm when it matches no row (or most)."""
        with self._lock:
            if "default" not in self._fixed:
                self._fixed["default"] = self._default()
            return self._fixed["default"]

    def by_norm(self) -> Analysis:
        """Every non-zero row ranked by norm (the caller asked for no reference)."""
        with self._lock:
            if "norm" not in self._fixed:
                why = f"no reference rows (reference: null): {NORM_WHY}"
                self._fixed["norm"] = self._norm_analysis(why)
            return self._fixed["norm"]

    def by_reference(self, reference: Reference) -> Analysis:
        """Ranked by cosine with the mean of `reference`; the last few are cached."""
        key = hashlib.blake2b(np.ascontiguousarray(reference.rows).tobytes()).digest()
        with self._lock:
            if key in self._custom:
                self._custom.move_to_end(key)
                return self._custom[key]
            analysis = self._reference_analysis(reference)
            self._custom[key] = analysis
            while len(self._custom) > self.cached_references:
                self._custom.popitem(last=False)
            return analysis

    def _default(self) -> Analysis:
        rows, description = self._default_reference()
        if rows.size == 0 or rows.size > self.table.rows // 2:
            matched = "no row" if rows.size == 0 else f"{rows.size} rows, over half the table"
            return self._norm_analysis(f"{description} matches {matched}: {NORM_WHY}")
        return self._reference_analysis(Reference(rows, description))

    def _default_reference(self) -> tuple[np.ndarray, str]:
        """The reserved tokens, and a model's padding rows with a direction: no token ever
        selects a padding row, so no gradient reached it through the input."""
        named = default_rows(self.table.tokens)
        padding = self.store.indexed[self.store.directional(self.table.searchable_rows) :]
        if padding.size == 0:
            return named, DEFAULT_DESCRIPTION
        description = f"{DEFAULT_DESCRIPTION} and the model's {padding.size} padding rows"
        return np.union1d(named, padding), description

    def _norm_analysis(self, why: str) -> Analysis:
        norms = self.store.norms64
        ranking = rank("norm", why, norms, self.store.indexed, np.empty(0, dtype=np.int64))
        return self._with_counts(ranking)

    def _reference_analysis(self, reference: Reference) -> Analysis:
        rows = np.unique(reference.rows)
        values = reference_cosines(self.table.vectors, self.store.norms64, self.component(), rows)
        why = (
            f"{rows.size} reference rows from {reference.description}: rows most similar to "
            "their mean, the table's first principal component removed, are the most suspect"
        )
        candidates = np.setdiff1d(self.store.indexed, rows, assume_unique=True)
        return self._with_counts(rank("reference_cosine", why, values, candidates, rows))

    def _with_counts(self, ranking: Ranking) -> Analysis:
        norms, counts = self.store.norms64, self.counts()
        if counts is None:
            return Analysis(ranking, norms, None)
        column, values = counts
        return Analysis(ranking, norms, count_report(column, values, norms, ranking.values))


def count_column(table: EmbeddingTable) -> tuple[str, np.ndarray]:
    """The `count` metadata column (any case) as float64; an empty array when there is none."""
    for name, column in table.metadata.items():
        if name.casefold() == COUNT_COLUMN and _numeric(column):
            return name, np.asarray(column, dtype=np.float64)
    return COUNT_COLUMN, np.empty(0)


def _numeric(column: Sequence[object]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in column)


def count_report(
    column: str, counts: np.ndarray, norms: np.ndarray, values: np.ndarray
) -> CountReport:
    """Spearman of log count with norm and with the indicator, and norms by count bin."""
    rows = np.flatnonzero(counts > 0)
    logs = np.log(counts[rows])
    return CountReport(
        column=column,
        rows=int(rows.size),
        norm=spearman(logs, norms[rows]),
        indicator=spearman(logs, values[rows]),
        bins=count_bins(counts[rows], norms[rows]),
    )


def count_bins(counts: np.ndarray, norms: np.ndarray) -> list[CountBin]:
    """Up to COUNT_BINS bins of equal share of the rows by log count, with norm quartiles."""
    if counts.size == 0:
        return []
    logs = np.log(counts)
    edges = np.unique(np.quantile(logs, np.linspace(0.0, 1.0, COUNT_BINS + 1)))
    bins = np.clip(np.searchsorted(edges, logs, side="right") - 1, 0, max(edges.size - 2, 0))
    report = []
    for number in np.unique(bins).tolist():
        members = bins == number
        quartiles = np.percentile(norms[members], (25, 50, 75)).tolist()
        low, high = float(counts[members].min()), float(counts[members].max())
        report.append(CountBin(low, high, int(members.sum()), tuple(quartiles)))
    return report

"""/diagnostics and /evaluate answers: suspect rows, and gensim's evaluation figures."""

from __future__ import annotations

from dataclasses import dataclass, field

from embedding_service.models.answers import Matched, Metadata


@dataclass(frozen=True)
class Indicator:
    """Which indicator ranked the rows, and why."""

    name: str
    why: str
    reference_rows: int
    reference_sample: list[str]


@dataclass(frozen=True)
class RowReport:
    """A ranked row: its indicator, norm and percentile (share of rows at least as suspect)."""

    token: str
    id: int
    indicator: float
    norm: float
    percentile: float
    count: int | float | None = None
    metadata: Metadata = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class TokenReport(RowReport):
    """A named token's report, and whether it is a suspect or a reference row."""

    suspect: bool
    reference: bool


@dataclass(frozen=True)
class NormSummary:
    """Norm percentiles of all rows, and the zero rows."""

    percentiles: dict[str, float]
    zero_rows: int
    zero_tokens: list[str]


@dataclass(frozen=True)
class SpearmanFigure:
    """Spearman's rho with its p-value over n rows."""

    rho: float
    p_value: float
    n: int


@dataclass(frozen=True)
class CountBin:
    """The norm quartiles of one count decile."""

    low: float
    high: float
    rows: int
    norm_quartiles: tuple[float, float, float]


@dataclass(frozen=True)
class CountFigures:
    """How counts relate to norms and to the indicator."""

    column: str
    rows: int
    bins: list[CountBin]
    spearman_norm: SpearmanFigure | None = None
    spearman_indicator: SpearmanFigure | None = None


@dataclass(frozen=True)
class Diagnostics(Matched):
    """The rows most likely under-trained, a page of them, and the named tokens' reports."""

    indicator: Indicator
    rows: int
    ranked_rows: int
    fraction: float
    suspect_count: int
    offset: int
    limit: int
    suspects: list[RowReport]
    tokens: list[TokenReport]
    norms: NormSummary
    counts: CountFigures | None = None


Question = tuple[str, str, str, str]


@dataclass(frozen=True)
class SectionQuestions:
    """A section's questions (a, b, c, expected), as gensim's evaluate_word_analogies lists them."""

    correct: list[Question]
    incorrect: list[Question]


@dataclass(frozen=True)
class SectionScore:
    """Analogy questions right and wrong in one section (and the questions, when asked)."""

    section: str
    correct: int
    incorrect: int
    accuracy: float
    questions: SectionQuestions | None = None


@dataclass(frozen=True)
class AnalogyEvaluation:
    """gensim's evaluate_word_analogies figures, computed by the service."""

    kind: str
    source: str
    sections: list[SectionScore]
    total: SectionScore
    questions: int
    oov: int
    oov_percent: float
    invalid_lines: int


@dataclass(frozen=True)
class CorrelationFigure:
    """A correlation coefficient and its two-sided p-value."""

    r: float
    p_value: float


@dataclass(frozen=True)
class PairsEvaluation:
    """gensim's evaluate_word_pairs figures, computed by the service."""

    kind: str
    source: str
    pearson: CorrelationFigure
    spearman: CorrelationFigure
    pairs: int
    oov: int
    oov_percent: float
    invalid_lines: int

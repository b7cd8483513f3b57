"""Request and response models of /diagnostics and /evaluate: which rows not to trust, and how
good the table is overall.

Hard ceilings live here; the configured limits (max_diagnostics_limit, max_batch,
max_evaluation_questions, max_body_bytes) are checked by the runners and answered with 422
LimitExceeded (413 for the body).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from service.schemas.common import (
    MAX_ITEMS,
    NUMBER_ONLY,
    Flag,
    Matched,
    OneOf,
    Restrict,
    Strict,
    Token,
    exactly_one_of,
)

# Long enough for any list of alternatives a person writes; RE2 bounds the compiled program.
MAX_PATTERN_LENGTH = 256
MAX_LIMIT = 100_000
# The body limit (max_body_bytes, 4 MiB by default) is the real bound on an evaluation file.
MAX_TEXT_LENGTH = 64 * 1024 * 1024
BUILTIN_SETS = ("questions-words",)

Fraction = Annotated[
    float,
    Field(
        gt=0,
        le=0.5,
        allow_inf_nan=False,
        description="Share of the ranked rows reported as suspects, in (0, 0.5].",
    ),
]


class TokensReference(Strict):
    """Reference rows named one by one (tokens known never to occur in training)."""

    tokens: list[Token] = Field(min_length=1, max_length=MAX_ITEMS, fail_fast=True)


class PatternReference(Strict):
    """Reference rows: every token the pattern (RE2 syntax) matches somewhere in."""

    pattern: str = Field(min_length=1, max_length=MAX_PATTERN_LENGTH)


ReferenceChoice = Literal["default"] | TokensReference | PatternReference | None


class DiagnosticsRequest(Strict):
    reference: ReferenceChoice = Field(
        "default",
        description="default: the built-in pattern of unused/reserved tokens (BERT, Gemma, "
        "Llama 3), or the norm indicator when it matches no row; {tokens} or {pattern}: your "
        "reference rows; null: the norm indicator.",
    )
    fraction: Fraction = 0.02
    tokens: list[Token] = Field(
        default_factory=list,
        max_length=MAX_ITEMS,
        fail_fast=True,
        description="Rows to report on whatever their rank (at most max_batch).",
    )
    limit: Annotated[int, Field(ge=0, le=MAX_LIMIT), NUMBER_ONLY] | None = Field(
        None,
        description="Suspects in this page (at most max_diagnostics_limit); default 100, or "
        "max_diagnostics_limit when that is lower.",
    )
    offset: Annotated[int, Field(ge=0, le=2**53), NUMBER_ONLY] = Field(
        0, description="Suspects skipped before this page."
    )


class Indicator(Strict):
    name: Literal["reference_cosine", "norm"]
    why: str
    reference_rows: int = Field(description="Reference rows used (0 for the norm indicator).")
    reference_sample: list[str] = Field(description="The first reference tokens, in row order.")


class RowReport(Strict):
    token: str
    id: int
    indicator: float = Field(description="Cosine with the reference mean, or the row's norm.")
    norm: float
    percentile: float = Field(description="Share (%) of ranked rows at least as suspect.")
    count: int | float | None = Field(None, description="The row's count, if the table has counts.")
    metadata: dict[str, int | float | str | None] = Field(default_factory=dict)


class TokenReport(RowReport):
    suspect: bool = Field(description="Among the suspects, a reference row, or a zero row.")
    reference: bool


class NormSummary(Strict):
    percentiles: dict[str, float] = Field(description="Norm at percentiles 1 to 99 of all rows.")
    zero_rows: int
    zero_tokens: list[str] = Field(description="The first zero rows' tokens (at most `limit`).")


class SpearmanFigure(Strict):
    rho: float
    p_value: float
    n: int


class CountBin(Strict):
    low: float
    high: float
    rows: int
    norm_quartiles: tuple[float, float, float]


class CountFigures(Strict):
    column: str
    rows: int = Field(description="Rows with a positive count: the rows correlated.")
    spearman_norm: SpearmanFigure | None = Field(
        None, description="log count vs norm; absent when undefined (under 3 rows, constant)."
    )
    spearman_indicator: SpearmanFigure | None = Field(
        None, description="log count vs the indicator; absent when undefined."
    )
    bins: list[CountBin] = Field(description="Norm quartiles by count decile (rare first).")


class DiagnosticsResponse(Matched):
    indicator: Indicator
    rows: int
    ranked_rows: int = Field(description="Rows ranked: all but reference and zero rows.")
    fraction: float
    suspect_count: int
    offset: int
    limit: int
    suspects: list[RowReport]
    tokens: list[TokenReport]
    norms: NormSummary
    counts: CountFigures | None = Field(None, description="Present when the table has counts.")


# One source, and no question lists of a pairs evaluation: what the validators check.
_EVALUATE_SCHEMA: dict[str, Any] = {
    **exactly_one_of("analogies", "pairs", "builtin")["json_schema_extra"],  # type: ignore[dict-item]
    "if": {"required": ["pairs"], "properties": {"pairs": {"type": "string"}}},
    "then": {"properties": {"questions": {"const": False}}},
}


class EvaluateRequest(OneOf):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_EVALUATE_SCHEMA)

    analogies: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_TEXT_LENGTH,
        description="questions-words.txt format: ': section' lines, then 'a b c expected'.",
    )
    pairs: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_TEXT_LENGTH,
        description="word<TAB>word<TAB>human score lines; '#' starts a comment line.",
    )
    builtin: Literal[BUILTIN_SETS] | None = Field(  # type: ignore[valid-type]
        None, description="A set shipped with the service: questions-words (analogies)."
    )
    restrict: Restrict = Field(300_000, description="gensim's restrict_vocab.")
    case_insensitive: Flag = Field(True, description="Compare words upper-cased, as gensim.")
    dummy4unknown: Flag = Field(
        False,
        description="gensim's dummy4unknown: a pair out of vocabulary scores 0.0 and counts in "
        "the correlations; a question out of vocabulary counts as incorrect.",
    )
    questions: Flag = Field(
        False,
        description="Analogies only: each section's correct and incorrect questions too, as "
        "gensim's evaluate_word_analogies lists them; such an answer is at most max_body_bytes "
        "(422 LimitExceeded past it: send fewer questions).",
    )

    @model_validator(mode="after")
    def _questions_of_analogies(self) -> Self:
        if self.questions and self.pairs is not None:
            raise ValueError("questions lists analogy questions: a pairs evaluation has none")
        return self


Question = tuple[str, str, str, str]


class SectionQuestions(Strict):
    correct: list[Question]
    incorrect: list[Question]


class SectionScore(Strict):
    section: str
    correct: int
    incorrect: int
    accuracy: float
    questions: SectionQuestions | None = Field(
        None,
        description="With questions: true, the section's questions (a, b, c, expected; "
        "upper-cased when case_insensitive), in file order; not in the total.",
    )


class AnalogyEvaluationResponse(Strict):
    kind: Literal["analogies"]
    source: str
    sections: list[SectionScore]
    total: SectionScore
    questions: int = Field(description="Well-formed questions in the file.")
    oov: int = Field(
        description="Questions with a word outside the first `restrict`: skipped, or counted "
        "incorrect with dummy4unknown."
    )
    oov_percent: float
    invalid_lines: int


class CorrelationFigure(Strict):
    r: float
    p_value: float


class PairsEvaluationResponse(Strict):
    kind: Literal["pairs"]
    source: str
    pearson: CorrelationFigure
    spearman: CorrelationFigure
    pairs: int = Field(
        description="Pairs in the correlations (with dummy4unknown, those out of vocabulary "
        "too, scored 0)."
    )
    oov: int = Field(description="Pairs with a word outside the first `restrict` rows.")
    oov_percent: float
    invalid_lines: int


EvaluateResponse = AnalogyEvaluationResponse | PairsEvaluationResponse

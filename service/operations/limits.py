"""The configured limits of a request (settings), checked as a request is resolved.

Hard ceilings that no setting can lift live in service/schemas.py; these are the tunable ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.config import Settings
from service.engine.errors import LimitExceeded

# Suspects in a /diagnostics answer that gives no limit (lowered to max_diagnostics_limit).
DEFAULT_SUSPECTS = 100


@dataclass(frozen=True)
class Limits:
    """Each check raises LimitExceeded (422) when a request asks for more than its setting."""

    default_k: int
    max_k: int
    max_batch: int
    max_terms: int
    max_exclude: int
    max_matrix_tokens: int
    max_results: int
    max_directions: int
    max_projection_points: int
    projection_sample_rows: int
    max_diagnostics_limit: int
    max_evaluation_questions: int
    max_text_length: int
    checkpoint_views: int
    max_trajectory_points: int
    max_trajectory_values: int
    max_drift_limit: int
    max_drift_tokens: int

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The limits as configured."""
        return cls(
            default_k=settings.default_k,
            max_k=settings.max_k,
            max_batch=settings.max_batch,
            max_terms=settings.max_terms,
            max_exclude=settings.max_exclude,
            max_matrix_tokens=settings.max_matrix_tokens,
            max_results=settings.max_results,
            max_directions=settings.max_directions,
            max_projection_points=settings.max_projection_points,
            projection_sample_rows=settings.projection_sample_rows,
            max_diagnostics_limit=settings.max_diagnostics_limit,
            max_evaluation_questions=settings.max_evaluation_questions,
            max_text_length=settings.max_text_length,
            checkpoint_views=settings.checkpoint_views,
            max_trajectory_points=settings.max_trajectory_points,
            max_trajectory_values=settings.max_trajectory_values,
            max_drift_limit=settings.max_drift_limit,
            max_drift_tokens=settings.max_drift_tokens,
        )

    def checked_k(self, k: int | None) -> int:
        """The request's k, or the default when it gives none."""
        return within("k", self.default_k if k is None else k, self.max_k)

    def check_batch(self, size: int) -> None:
        """Queries in a batch, or tokens/ids/pairs in one request."""
        within("batch size", size, self.max_batch)

    def check_terms(self, count: int) -> None:
        """Positive + negative terms of one analogy."""
        within("analogy terms", count, self.max_terms)

    def check_exclusions(self, count: int) -> None:
        """Extra exclusions of one query."""
        within("exclusions", count, self.max_exclude)

    def check_results(self, count: int) -> None:
        """Results of one request: k summed over its queries (the answer's size)."""
        within("results (k summed over the queries)", count, self.max_results)

    def check_directions(self, count: int) -> None:
        """Directions one request scores against every row: a neighbour or 3CosAdd query is
        one, a 3CosMul query one per term."""
        within("query directions (a 3CosMul query counts one per term)", count, self.max_directions)

    def check_projection_points(self, points: int) -> None:
        """Points of one /projection request (the answer is ~75 bytes a point)."""
        within("projection points", points, self.max_projection_points)

    def suspects_page(self, limit: int | None) -> int:
        """Suspects listed in one /diagnostics answer: the request's, or the default."""
        if limit is None:
            return min(DEFAULT_SUSPECTS, self.max_diagnostics_limit)
        return within("diagnostics limit", limit, self.max_diagnostics_limit)

    def check_questions(self, count: int) -> None:
        """Analogy questions or word pairs of one /evaluate request."""
        within("evaluation questions", count, self.max_evaluation_questions)

    def check_text_length(self, characters: int) -> None:
        """Characters of text in one request, summed over its distinct texts."""
        within(
            "text length (characters, summed over the request's texts)",
            characters,
            self.max_text_length,
        )

    def check_piece_vectors(self, count: int) -> None:
        """Pieces answered with their rows (include_vector): as many as a lookup may have."""
        within("pieces with vectors", count, self.max_batch)

    def check_detokenize(self, count: int) -> None:
        """Ids of one detokenize: as many as the pieces of the longest text allowed."""
        within("ids to detokenize", count, self.max_text_length)

    def check_trajectory(self, rows: int, checkpoints: int) -> None:
        """Rows one /trajectory follows, and rows x checkpoints in its answer."""
        within("trajectory points", rows, self.max_trajectory_points)
        within(
            "trajectory values (rows x checkpoints)", rows * checkpoints, self.max_trajectory_values
        )

    def check_drift(self, limit: int, tokens: int) -> None:
        """Rows listed by one /drift (each way), and tokens whose neighbours it compares."""
        within("drift limit", limit, self.max_drift_limit)
        within("drift tokens", tokens, self.max_drift_tokens)

    def check_matrix(self, size: int) -> None:
        """Tokens of one similarity matrix (the answer is size x size)."""
        within("similarity matrix tokens", size, self.max_matrix_tokens)


def within(what: str, value: int, limit: int) -> int:
    """`value`, or LimitExceeded naming `what` when it is above `limit`."""
    if value > limit:
        raise LimitExceeded(what, limit, value)
    return value

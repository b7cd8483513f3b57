"""The configured limits of a request (settings), checked as a request is resolved: each read
under its setting's own name, each raising LimitExceeded (422) past it. Hard ceilings that no
setting can lift live in service/schemas/; these are the tunable ones.
"""

from __future__ import annotations

from service.config import Settings
from service.engine.errors import (
    LimitExceeded,
)

# Suspects in a /diagnostics answer that gives no limit (lowered to max_diagnostics_limit).
DEFAULT_SUSPECTS = 100


class Limits:
    """The request limits of `settings`, each read under its setting's own name; every check
    raises LimitExceeded (422) when a request asks for more."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def checked_k(self, k: int | None) -> int:
        """The request's k, or the default when it gives none."""
        return within("k", self.settings.default_k if k is None else k, self.settings.max_k)

    def check_batch(self, size: int) -> None:
        """Queries in a batch, or tokens/ids/pairs in one request."""
        within("batch size", size, self.settings.max_batch)

    def check_terms(self, count: int) -> None:
        """Positive + negative terms of one analogy."""
        within("analogy terms", count, self.settings.max_terms)

    def check_exclusions(self, count: int) -> None:
        """Extra exclusions of one query."""
        within("exclusions", count, self.settings.max_exclude)

    def check_among(self, count: int) -> None:
        """Rows of one request's candidate set (`among`)."""
        within("candidate rows (among)", count, self.settings.max_among)

    def check_results(self, count: int) -> None:
        """Results of one request: k summed over its queries (the answer's size)."""
        within("results (k summed over the queries)", count, self.settings.max_results)

    def check_directions(self, count: int) -> None:
        """Directions one request scores against every row: a neighbour or 3CosAdd query is
        one, a 3CosMul query one per term."""
        within(
            "query directions (a 3CosMul query counts one per term)",
            count,
            self.settings.max_directions,
        )

    def cosine_rows(self, limit: int | None, available: int, directions: int) -> int:
        """Rows of one /cosines answer: the request's limit, or as many as max_cosine_rows
        allows, at most the rows `available`; rows times directions within the setting."""
        most = self.settings.max_cosine_rows
        rows = min(available, max(1, most // directions) if limit is None else limit)
        within("cosine rows (rows x directions; 3CosMul counts one per term)",
               rows * directions, most)  # fmt: skip
        return rows

    def closer_rows(self, limit: int | None) -> int:
        """Closer rows listed by one /rank answer: the request's, or max_results."""
        most = self.settings.max_results
        return most if limit is None else within("closer rows listed", limit, most)

    def check_projection_points(self, points: int) -> None:
        """Points of one /projection request (the answer is ~75 bytes a point)."""
        within("projection points", points, self.settings.max_projection_points)

    def suspects_page(self, limit: int | None) -> int:
        """Suspects listed in one /diagnostics answer: the request's, or the default."""
        if limit is None:
            return min(DEFAULT_SUSPECTS, self.settings.max_diagnostics_limit)
        return within("diagnostics limit", limit, self.settings.max_diagnostics_limit)

    def check_questions(self, count: int) -> None:
        """Analogy questions or word pairs of one /evaluate request."""
        within("evaluation questions", count, self.settings.max_evaluation_questions)

    def check_listed_bytes(self, size: int) -> None:
        """Bytes of an /evaluate answer that lists its questions: at most a body's."""
        within(
            "bytes of an answer listing its questions (max_body_bytes)",
            size,
            self.settings.max_body_bytes,
        )

    def check_text_length(self, characters: int) -> None:
        """Characters of text in one request, summed over its distinct texts."""
        within(
            "text length (characters, summed over the request's texts)",
            characters,
            self.settings.max_text_length,
        )

    def check_piece_vectors(self, count: int) -> None:
        """Pieces answered with their rows (include_vector): as many as a lookup may have."""
        within("pieces with vectors", count, self.settings.max_batch)

    def check_detokenize(self, count: int) -> None:
        """Ids of one detokenize: as many as the pieces of the longest text allowed."""
        within("ids to detokenize", count, self.settings.max_text_length)

    def check_trajectory(self, rows: int, checkpoints: int) -> None:
        """Rows one /trajectory follows, and rows x checkpoints in its answer."""
        within("trajectory points", rows, self.settings.max_trajectory_points)
        within(
            "trajectory values (rows x checkpoints)",
            rows * checkpoints,
            self.settings.max_trajectory_values,
        )

    def check_drift(self, limit: int, tokens: int) -> None:
        """Rows listed by one /drift (each way), and tokens whose neighbours it compares."""
        within("drift limit", limit, self.settings.max_drift_limit)
        within("drift tokens", tokens, self.settings.max_drift_tokens)

    def check_matrix(self, size: int) -> None:
        """Tokens of one similarity matrix (the answer is size x size)."""
        within("similarity matrix tokens", size, self.settings.max_matrix_tokens)


def within(what: str, value: int, limit: int) -> int:
    """`value`, or LimitExceeded naming `what` when it is above `limit`."""
    if value > limit:
        raise LimitExceeded(what, limit, value)
    return value

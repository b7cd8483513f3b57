"""Projection plans: a PCA picture of a table, and rows or raw vectors placed on it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from embedding_service.decoding import decode, decode_list, encode_vector
from embedding_service.models.projection import ProjectedPoint, ProjectedVector, Projection
from embedding_service.plans import Answer, Plan, batched, one_call, post

Dims = Literal[2, 3]


def projection(
    table: str,
    *,
    dims: Dims = 2,
    points: int = 1000,
    selection: Literal["first", "random", "words"] | Sequence[str] = "first",
    seed: int = 0,
    fit: Literal["table", "selection"] = "table",
) -> Plan[Projection]:
    """A PCA picture: the first `points` rows, `points` seeded random rows, the first `points`
    whole-word rows (the explorer's default: docs/api.md), or these tokens; in the table's
    basis, or (fit="selection") a PCA fitted on exactly those rows."""
    chosen: Any = selection if isinstance(selection, str) else {"tokens": list(selection)}
    request = {"method": "pca", "dims": dims, "points": points, "selection": chosen, "seed": seed}
    if fit != "table":
        request["fit"] = fit
    if not isinstance(selection, str):
        del request["points"]
    call = post(table, "projection", request)
    return one_call(call, lambda answer: decode(Projection, answer))


def project(
    table: str,
    tokens: Sequence[str] | None = None,
    *,
    vectors: Sequence[np.ndarray] | np.ndarray | None = None,
    dims: Dims = 2,
) -> Plan[list[ProjectedPoint] | list[ProjectedVector]]:
    """Rows (by token) or raw vectors placed in the table's PCA basis, in order (in chunks)."""
    if (tokens is None) == (vectors is None):
        raise TypeError("give exactly one of tokens and vectors")
    kind: type[ProjectedPoint] | type[ProjectedVector] = ProjectedPoint
    if tokens is not None:
        field, items = "tokens", list(tokens)
    else:
        field, items, kind = (
            "vectors_b64",
            [encode_vector(v) for v in vectors or ()],
            ProjectedVector,
        )

    def read(answers: list[Answer]) -> Any:
        return [point for answer in answers for point in decode_list(kind, answer["points"])]

    return batched(post(table, "project", {"dims": dims}), field, items, read)

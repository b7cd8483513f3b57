"""Trajectory and drift plans: rows through a table's checkpoints, and two versions compared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from embedding_service.decoding import decode
from embedding_service.models.training import Drift, Trajectory
from embedding_service.plans import Plan, body, one_call, post


def trajectory(
    table: str,
    tokens: Sequence[str] | None = None,
    *,
    points: int | None = None,
    selection: Literal["first", "random"] = "first",
    seed: int = 0,
    dims: Literal[2, 3] = 2,
) -> Plan[Trajectory]:
    """These tokens' rows (or `points` first or random rows) at every checkpoint."""
    if (tokens is None) == (points is None):
        raise TypeError("give exactly one of tokens and points")
    chosen = body(tokens=None if tokens is None else list(tokens), points=points)
    request = {**chosen, "selection": selection, "seed": seed, "dims": dims}
    call = post(table, "trajectory", request)
    return one_call(call, lambda answer: decode(Trajectory, answer))


def drift(
    table: str,
    *,
    source: int | str = 0,
    target: int | str | None = None,
    tokens: Sequence[str] = (),
    k: int | None = None,
    limit: int | None = None,
) -> Plan[Drift]:
    """Two versions compared: `source` and `target` are checkpoints or other tables' names
    (default: checkpoint 0 against the last). Named tokens get their neighbours in both."""
    request = {"from": source, "tokens": list(tokens), **body(to=target, k=k, limit=limit)}
    call = post(table, "drift", request)
    return one_call(call, lambda answer: decode(Drift, answer))

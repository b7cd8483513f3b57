"""The one batch model: several queries in one request, their answers in one response.

A body is one query or {"queries": [...]}; `one_or_batch` is the body type that tells them
apart by that key alone, so a bad query is told what is wrong with the form it has.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, TypeVar

from pydantic import Discriminator, Field, Tag

from service.schemas.common import MAX_ITEMS, CheckpointIndex, Matched, Strict

Query = TypeVar("Query")
Result = TypeVar("Result")


class BatchRequest(Strict, Generic[Query]):
    """Queries answered in order, at one checkpoint if the batch names one."""

    queries: list[Query] = Field(min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    checkpoint: CheckpointIndex | None = None


class BatchResponse(Matched, Generic[Result]):
    """One result per query, in order; what every query matched, together."""

    results: list[Result]


# The tags of a one_or_batch body, which validation errors leave out of their locations.
ONE_OR_BATCH = frozenset({"query", "batch"})


def _batch_or_single(value: object) -> str:
    """A JSON object (or, when serialising, a model) with "queries" is a batch."""
    batch = "queries" in value if isinstance(value, dict) else hasattr(value, "queries")
    return "batch" if batch else "query"


def one_or_batch(single: type[Any], batch: type[BatchRequest[Any]]) -> Any:
    """The body type of one query or a batch of them: the presence of "queries" picks the
    model to validate with."""
    return Annotated[
        Annotated[single, Tag("query")] | Annotated[batch, Tag("batch")],
        Discriminator(_batch_or_single),
    ]

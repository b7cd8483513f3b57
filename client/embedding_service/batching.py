"""How a batch is cut into requests the server accepts: its published limit, or its refusals.

Before the first batch the client asks GET /v1/limits for the server's `max_batch` (a server too
old to publish it answers 404, and then a chunk holds the documented default,
DOCUMENTED_MAX_BATCH); a `max_batch` given to the client is used as it is. A LimitExceeded that
counts exactly the chunk's items ("batch size is 300, above the limit of 64") names the real
limit, and the client keeps it for every later batch. Other refusals that grow with the chunk (k
summed over the queries, 3CosMul directions, text length, pieces with vectors) shrink this
batch's chunks in proportion, and 413 halves them; a refusal that a smaller chunk does not
change (k above max_k) is raised as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from embedding_service.errors import BodyTooLarge, LimitExceeded, ServiceError

# The server's default max_batch (README, "Configuration"): the first chunk's size until the
# server refuses one with its own figure.
DOCUMENTED_MAX_BATCH = 256


class Limits:
    """What the client knows of the server's batch limit: given, learned, or the default."""

    def __init__(self, max_batch: int | None = None) -> None:
        if max_batch is not None and max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, not {max_batch}")
        self.max_batch = max_batch or DOCUMENTED_MAX_BATCH
        self.source = "given" if max_batch else "documented default"

    @property
    def unknown(self) -> bool:
        """Whether the server has not been asked for its limit yet (and none was given)."""
        return self.source == "documented default"

    def published(self, answer: object) -> None:
        """The server's GET /v1/limits answer (or None when it has none to give)."""
        limit = answer.get("max_batch") if isinstance(answer, dict) else None
        if isinstance(limit, int) and limit >= 1:
            self.max_batch = limit
            self.source = "published by the server"
        else:
            self.source = "documented default (the server publishes no limits)"

    def learn(self, limit: int) -> None:
        """The server refused a chunk for having more than `limit` items."""
        if limit < self.max_batch:
            self.max_batch = limit
            self.source = "learned from the server's LimitExceeded"


class Chunks:
    """A batch's items in chunks, in order; a refused chunk is cut smaller and sent again."""

    def __init__(self, items: Sequence[Any], limits: Limits) -> None:
        self.items = items
        self.limits = limits
        self.start = 0
        self.size = limits.max_batch
        self.refusals: set[tuple[int, int]] = set()

    def next(self) -> Sequence[Any] | None:
        """The next chunk to send, or None when every item has been answered."""
        if self.start >= len(self.items):
            return None
        return self.items[self.start : self.start + self.size]

    def answered(self, count: int) -> None:
        """The chunk just sent (of `count` items) was answered."""
        self.start += count

    def refused(self, error: ServiceError, count: int) -> None:
        """Cut the chunks smaller after `error` refused one of `count` items, or raise it."""
        self.size = self._smaller(error, count)

    def _smaller(self, error: ServiceError, count: int) -> int:
        if count <= 1:
            raise error
        if isinstance(error, BodyTooLarge):
            return count // 2
        if not isinstance(error, LimitExceeded) or not 0 < error.limit < error.got:
            raise error
        refusal = (error.limit, error.got)
        if refusal in self.refusals:  # a smaller chunk did not change it: a per-query limit
            raise error
        self.refusals.add(refusal)
        if error.got == count:
            self.limits.learn(error.limit)
        return max(1, count * error.limit // error.got)

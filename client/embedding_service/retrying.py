"""When a refused request is sent again: only 429 and 503, after the server's Retry-After.

Everything else (a 4xx, a 500, a connection that fails) is raised at once: a query that was
wrong stays wrong, and one that failed inside the server may fail again more expensively. (A
request reset on a kept-alive connection the server was closing is sent once more on a new
one before it counts as failed: exchange.STALE_CONNECTION.)
"""

from __future__ import annotations

from dataclasses import dataclass

from embedding_service.errors import Retryable, ServiceError

# Without a Retry-After header: 0.25 s, doubling, at most 4 s between attempts.
FIRST_BACKOFF_SECONDS = 0.25
MAX_BACKOFF_SECONDS = 4.0


@dataclass(frozen=True)
class RetryPolicy:
    """At most `retries` resends per request, none that would end past `timeout` seconds."""

    retries: int = 5
    timeout: float = 30.0

    def delay(self, error: ServiceError, attempt: int, elapsed: float) -> float | None:
        """Seconds to wait before resending after `attempt` resends, or None: give up."""
        if not isinstance(error, Retryable) or attempt >= self.retries:
            return None
        wait = error.retry_after
        if wait is None:
            wait = min(FIRST_BACKOFF_SECONDS * 2**attempt, MAX_BACKOFF_SECONDS)
        if elapsed + wait > self.timeout:
            return None
        return wait

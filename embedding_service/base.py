"""What Client and AsyncClient share: their settings, what they learn, and how steps are run."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any, TypeVar

from embedding_service.batching import Limits
from embedding_service.exchange import Outcome, Step, exchange
from embedding_service.plans import Plan
from embedding_service.retrying import RetryPolicy

T = TypeVar("T")

DEFAULT_TIMEOUT_SECONDS = 30.0


class BaseClient:
    """A server's address and key, the retry policy, and the batch limit learned so far."""

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        retries: int = 5,
        retry_timeout: float = 30.0,
        max_batch: int | None = None,
        http_options: Mapping[str, Any] | None = None,
    ) -> None:
        """`timeout` bounds each request; 429 and 503 are resent at most `retries` times,
        never past `retry_timeout` seconds after the call began; `max_batch` overrides the
        batch size the client starts with (the server's documented default, 256);
        `http_options` go to httpx as they are (verify, proxy, limits, event_hooks, ...)."""
        self.url = url.rstrip("/")
        self.limits = Limits(max_batch)
        self.retry_policy = RetryPolicy(retries, retry_timeout)
        headers = {"accept": "application/json", "user-agent": "embedding-service-client"}
        if api_key is not None:
            headers["authorization"] = f"Bearer {api_key}"
        options = {"base_url": self.url, "headers": headers, "timeout": timeout}
        self._connect({**options, **(http_options or {})})

    def _connect(self, options: dict[str, Any]) -> None:
        """Open the connection pool (httpx.Client or httpx.AsyncClient) with `options`."""
        raise NotImplementedError

    @property
    def max_batch(self) -> int:
        """Items per batch request: given, the documented default, or learned from the server."""
        return self.limits.max_batch

    def _steps(self, plan: Plan[T]) -> Generator[Step, Outcome, T]:
        return exchange(plan, self.limits, self.retry_policy)


def run_steps(steps: Generator[Step, Outcome, T], perform: Callable[[Step], Outcome]) -> T:
    """Drive `steps` to their result, carrying out each one with `perform`."""
    outcome: Outcome = None
    try:
        while True:
            outcome = perform(steps.send(outcome))
    except StopIteration as done:
        return done.value

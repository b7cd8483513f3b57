"""What Client and AsyncClient share: their settings, what they learn, and how steps are run."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any, TypeVar

from embedding_service.batching import Limits
from embedding_service.exchange import Outcome, Step, exchange
from embedding_service.plans import Plan
from embedding_service.receiving import ACCEPT_ENCODING
from embedding_service.retrying import RetryPolicy

T = TypeVar("T")

DEFAULT_TIMEOUT_SECONDS = 30.0
# The server's largest answers at its default limits are about 5.6 MB (a /cosines page of
# max_cosine_rows, 256 rows of a 4,096-wide table) and 8 MiB (a 404 naming every unknown token
# of a 4 MiB body): 64 MiB leaves room for wider tables and raised limits, and bounds what a
# broken or hostile server can make the client hold.
DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024


class BaseClient:
    """A server's address and key, the call bounds, and the batch limit learned so far."""

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
        retries: int = 5,
        retry_timeout: float = 30.0,
        max_batch: int | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        http_options: Mapping[str, Any] | None = None,
    ) -> None:
        """`timeout` bounds each call, its batch's requests, retries and waits included (None:
        no bound); 429 and 503 are resent at most `retries` times, never past `retry_timeout`
        seconds after the call began; `max_batch` overrides the batch size the client starts
        with (the server's documented default, 256); an answer longer than `max_answer_bytes`
        (decompressed) is refused; `http_options` go to httpx as they are (verify, proxy,
        limits, event_hooks, ...)."""
        if max_answer_bytes < 1:
            raise ValueError(f"max_answer_bytes must be at least 1, not {max_answer_bytes}")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.max_answer_bytes = max_answer_bytes
        self.limits = Limits(max_batch)
        waits = retry_timeout if timeout is None else min(retry_timeout, timeout)
        self.retry_policy = RetryPolicy(retries, waits)
        headers = {
            "accept": "application/json",
            "accept-encoding": ACCEPT_ENCODING,
            "user-agent": "embedding-service-client",
        }
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

    def _where(self, path: str) -> str:
        """The URL a request goes to, as error messages name it."""
        return f"{self.url}{path}"


def run_steps(steps: Generator[Step, Outcome, T], perform: Callable[[Step], Outcome]) -> T:
    """Drive `steps` to their result, carrying out each one with `perform`."""
    outcome: Outcome = None
    try:
        while True:
            outcome = perform(steps.send(outcome))
    except StopIteration as done:
        return done.value

"""Request batching: concurrent queries are coalesced into one pass over the table.

One exact query is a full scan of the table; a batch of queries is one matrix product, which
uses the machine's arithmetic instead of waiting on memory. A Batcher collects what arrives
while the previous batch computes (plus an optional short wait), runs `compute` on its own
worker thread, and hands each caller its own result.

Pipelining: a batch takes the queries of at most half the table requests in flight (never
fewer than PIPELINE_FLOOR requests'), so that while it computes, the event loop answers the
batch before it and reads the next requests, instead of the two taking turns. Taking
everything queued, at 32 connections on 2 cores, batches of 9 to 32 took turns with the event
loop: half of the requests in flight served distinct vectors 1.13-1.14x as fast at 0.94-0.96x
the CPU a request (BENCHMARKS.md, "Stop 39: batches of half the requests in flight").
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

from service.config import Settings
from service.errors import Overloaded
from service.metrics import BATCH_SIZE, QUEUE_SECONDS, SEARCH_SECONDS

Item = TypeVar("Item")
Result = TypeVar("Result")

# A pipelined batch may always take this many requests' queries: below it, halving a batch
# costs more in the pass (one core, the default table: 8 directions 932 q/s, 4 directions 586)
# than the overlap with the event loop gives back.
PIPELINE_FLOOR = 8


class InFlight:
    """Table requests being served: counted once their body has arrived, until they answer.

    Shared by the edge (service/api/edge.py), which counts them, the connection protocol
    (service/server/connections.py), which refuses a table request at once, without reading
    its body, while the count is at its limit, and the batchers, which size their batches by
    it. One event loop runs them all, so a plain counter is exact.
    """

    def __init__(self, limit: int, retry_after: int) -> None:
        self.limit = limit
        self.retry_after = retry_after
        self.count = 0

    def full(self) -> bool:
        """Whether another table request would go past the limit."""
        return self.count >= self.limit

    def overloaded(self) -> Overloaded:
        """The error a refused request gets."""
        return Overloaded("requests in flight", self.limit, self.retry_after)


# A queued item: the item, its caller's future, when it was queued, and which submission
# (request) it came with.
Entry = tuple[Item, "asyncio.Future[Result]", float, int]


class Batcher(Generic[Item, Result]):
    """Runs `compute(items) -> results` (same order, same length) over coalesced submissions.

    Batches form as the settings say: at most `batch_max_size` units of work (each item costs
    what `cost` says, 1 by default), waiting at most `batch_max_wait_ms` to fill, and with
    `batch_pipelining` and an `in_flight` count, the items of at most half the requests in
    flight (a submission's items are one request's; they are never split for this). With
    `batching` off, every item is computed alone, one after another on the same worker thread:
    the service still never runs more searches at once than the machine has room for. At most
    `max_queue` items wait; a submission past that is refused with Overloaded.
    """

    def __init__(
        self,
        operation: str,
        compute: Callable[[Sequence[Item]], list[Result]],
        settings: Settings,
        cost: Callable[[Item], int] = lambda item: 1,
        initializer: Callable[[], None] | None = None,
        in_flight: InFlight | None = None,
    ) -> None:
        self.operation = operation
        self.compute = compute
        self.settings = settings
        self.cost = cost
        self.in_flight = in_flight if settings.batch_pipelining else None
        self._queue: asyncio.Queue[Entry[Item, Result]] = asyncio.Queue()
        # An item taken from the queue that would have taken its batch past its bounds: it
        # opens the next batch.
        self._held: Entry[Item, Result] | None = None
        self._submissions = 0
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=operation, initializer=initializer
        )
        self._worker: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start collecting batches on the running event loop."""
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        """Stop the worker; queued callers get an error rather than waiting forever."""
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
            self._worker = None
        if self._held is not None:
            self._held[1].cancel()
            self._held = None
        while not self._queue.empty():
            _, future, _, _ = self._queue.get_nowait()
            future.cancel()
        self._executor.shutdown(wait=False)

    async def submit(self, item: Item) -> Result:
        """The result for one item, computed alone (batching off) or within a batch."""
        return (await self.submit_many([item]))[0]

    async def submit_many(self, items: Sequence[Item]) -> list[Result]:
        """Results for several items (one request's batch), in order; admitted all or none."""
        self._admit(len(items))
        self._submissions += 1
        submission = self._submissions
        if len(items) == 1:  # most requests: one future awaited, without gather's wrapping
            return [await self._enqueue(items[0], submission)]
        return list(await asyncio.gather(*(self._enqueue(item, submission) for item in items)))

    @property
    def queued(self) -> int:
        """Items waiting for a pass."""
        return self._queue.qsize() + (self._held is not None)

    def _admit(self, count: int) -> None:
        """Overloaded when `count` more items would overfill the queue.

        An empty queue admits any request, so one batch larger than the bound still runs.
        """
        waiting = self._queue.qsize()
        if waiting and waiting + count > self.settings.max_queue:
            limit = self.settings.max_queue
            raise Overloaded(
                f"the {self.operation} queue", limit, self.settings.retry_after_seconds
            )

    def _enqueue(self, item: Item, submission: int) -> asyncio.Future[Result]:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((item, future, time.perf_counter(), submission))
        return future

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._collect()
            now = time.perf_counter()
            for _, _, queued, _ in batch:
                QUEUE_SECONDS.labels(self.operation).observe(now - queued)
            try:
                items = [item for item, _, _, _ in batch]
                results = await loop.run_in_executor(self._executor, self._timed_compute, items)
            except Exception as error:
                for _, future, _, _ in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            for (_, future, _, _), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)

    async def _collect(self) -> list[Entry[Item, Result]]:
        """Wait for one item, then take what is queued up to max_size units of work (and the
        items of at most `requests_per_batch` requests), waiting up to max_wait for more. An
        item that would go past either bound opens the next batch."""
        first, self._held = self._held or await self._queue.get(), None
        batch, cost = [first], self.cost(first[0])
        if not self.settings.batching:
            return batch
        requests, submission, most = 1, first[3], self.requests_per_batch()
        deadline = time.perf_counter() + self.settings.batch_max_wait_ms / 1000
        while cost < self.settings.batch_max_size:
            if not self._queue.empty():
                item = self._queue.get_nowait()
            else:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    break
                try:
                    item = await asyncio.wait_for(self._queue.get(), remaining)
                except TimeoutError:
                    break
            work = self.cost(item[0])
            another = item[3] != submission
            if cost + work > self.settings.batch_max_size or (another and requests == most):
                self._held = item
                break
            batch.append(item)
            cost += work
            requests, submission = requests + another, item[3]
        return batch

    def requests_per_batch(self) -> int | None:
        """The most requests whose items one batch takes now: half of those in flight, at
        least PIPELINE_FLOOR; None (no bound) without an in-flight count."""
        if self.in_flight is None:
            return None
        return max(PIPELINE_FLOOR, (self.in_flight.count + 1) // 2)

    def _timed_compute(self, items: Sequence[Item]) -> list[Result]:
        started = time.perf_counter()
        try:
            return self.compute(items)
        finally:
            SEARCH_SECONDS.labels(self.operation).observe(time.perf_counter() - started)
            BATCH_SIZE.labels(self.operation).observe(len(items))

"""Request batching: concurrent queries are coalesced into one pass over the table.

One exact query is a full scan of the table; a batch of queries is one matrix product, which
uses the machine's arithmetic instead of waiting on memory. A Batcher collects what arrives
while the previous batch computes (plus an optional short wait), runs `compute` on its own
worker thread, and hands each caller its own result.
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


class Batcher(Generic[Item, Result]):
    """Runs `compute(items) -> results` (same order, same length) over coalesced submissions.

    Batches form as the settings say: at most `batch_max_size` units of work (each item costs
    what `cost` says, 1 by default), waiting at most `batch_max_wait_ms` to fill. With
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
    ) -> None:
        self.operation = operation
        self.compute = compute
        self.settings = settings
        self.cost = cost
        self._queue: asyncio.Queue[tuple[Item, asyncio.Future[Result], float]] = asyncio.Queue()
        # An item taken from the queue that would have taken its batch past max_size: it opens
        # the next batch.
        self._held: tuple[Item, asyncio.Future[Result], float] | None = None
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
            _, future, _ = self._queue.get_nowait()
            future.cancel()
        self._executor.shutdown(wait=False)

    async def submit(self, item: Item) -> Result:
        """The result for one item, computed alone (batching off) or within a batch."""
        self._admit(1)
        return await self._enqueue(item)

    async def submit_many(self, items: Sequence[Item]) -> list[Result]:
        """Results for several items (one request's batch), in order; admitted all or none."""
        self._admit(len(items))
        if len(items) == 1:  # most requests: one future awaited, without gather's wrapping
            return [await self._enqueue(items[0])]
        return list(await asyncio.gather(*(self._enqueue(item) for item in items)))

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

    def _enqueue(self, item: Item) -> asyncio.Future[Result]:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((item, future, time.perf_counter()))
        return future

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._collect()
            now = time.perf_counter()
            for _, _, queued in batch:
                QUEUE_SECONDS.labels(self.operation).observe(now - queued)
            try:
                items = [item for item, _, _ in batch]
                results = await loop.run_in_executor(self._executor, self._timed_compute, items)
            except Exception as error:
                for _, future, _ in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            for (_, future, _), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)

    async def _collect(self) -> list[tuple[Item, asyncio.Future[Result], float]]:
        """Wait for one item, then take what is queued up to max_size units of work, waiting up
        to max_wait for more. An item that would go past max_size opens the next batch."""
        first, self._held = self._held or await self._queue.get(), None
        batch, cost = [first], self.cost(first[0])
        if not self.settings.batching:
            return batch
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
            if cost + work > self.settings.batch_max_size:
                self._held = item
                break
            batch.append(item)
            cost += work
        return batch

    def _timed_compute(self, items: Sequence[Item]) -> list[Result]:
        started = time.perf_counter()
        try:
            return self.compute(items)
        finally:
            SEARCH_SECONDS.labels(self.operation).observe(time.perf_counter() - started)
            BATCH_SIZE.labels(self.operation).observe(len(items))

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
the CPU a request (BENCHMARKS.md, "Batching").
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable, Sequence
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
    (service/server/protocol.py), which refuses a table request at once, without reading
    its body, while the count is at its limit, and the batchers, which size their batches by
    it. One event loop runs them all, so plain counters are exact. Each queue of analyses
    counts the analyses it admits with one of its own (runtime/analyses.py).

    With `per_key`, one API key holds at most that many of the slots: a key flooding the
    server is refused 429 while the other keys' requests are still served. The counts are
    kept by the keys the edge has accepted, so they are at most one a configured key.
    """

    def __init__(
        self,
        limit: int,
        retry_after: int,
        what: str = "requests in flight",
        per_key: int | None = None,
    ) -> None:
        self.limit = limit
        self.retry_after = retry_after
        self.what = what
        self.count = 0
        # The most one key may hold; below this count no request is refused, whatever its key.
        self.per_key = limit if per_key is None else min(per_key, limit)
        self.by_key: dict[bytes, int] = {}

    def full(self) -> bool:
        """Whether another request would go past the limit, whatever its key."""
        return self.count >= self.limit

    def refusal(self, key: bytes | None) -> Overloaded | None:
        """The error a table request called with `key` (None: no key) gets now; None if it
        may take a slot."""
        if self.count < self.per_key:
            return None
        if self.count >= self.limit:
            return self.overloaded()
        if key is not None and self.by_key.get(key, 0) >= self.per_key:
            return Overloaded(f"{self.what} for one API key", self.per_key, self.retry_after)
        return None

    def take(self, key: bytes | None) -> None:
        """A request called with `key` holds a slot (refusal() said it may)."""
        self.count += 1
        if key is not None:
            self.by_key[key] = self.by_key.get(key, 0) + 1

    def give_back(self, key: bytes | None) -> None:
        """The request that took a slot with `key` has answered."""
        self.count -= 1
        if key is not None:
            held = self.by_key[key] - 1
            if held:
                self.by_key[key] = held
            else:
                del self.by_key[key]

    def overloaded(self) -> Overloaded:
        """The error a request refused at the limit gets."""
        return Overloaded(self.what, self.limit, self.retry_after)


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

    The worker thread takes each batch itself, the moment the one before it is computed: the
    event loop only queues items and hands out results. A worker fed by the event loop waited
    a turn of the loop after every batch (the results set, then the next batch collected,
    behind every request the loop had ready): at 32 connections the worker computed 86% of
    the time (BENCHMARKS.md, "Batching").
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
        self.initializer = initializer
        self.in_flight = in_flight if settings.batch_pipelining else None
        # Items waiting for a batch, oldest first; the worker takes them under the lock, and
        # waits on `_arrived` while there are none (or, with batch_max_wait_ms, to fill).
        self._waiting: collections.deque[Entry[Item, Result]] = collections.deque()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        # Bumped by close(): a worker thread of an earlier start() sees it and stops.
        self._generation = 0
        self._submissions = 0
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the worker thread, answering on the running event loop."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._work,
                args=(asyncio.get_running_loop(), self._generation),
                name=f"{self.operation}_0",
                daemon=True,
            )
            self._thread.start()

    async def close(self) -> None:
        """Stop the worker (after the batch it computes); queued callers get an error rather
        than waiting forever."""
        with self._lock:
            self._generation += 1
            waiting, self._waiting = self._waiting, collections.deque()
            self._arrived.notify()
        for _, future, _, _ in waiting:
            future.cancel()
        self._thread = None

    async def submit(self, item: Item) -> Result:
        """The result for one item, computed alone (batching off) or within a batch."""
        return (await self.submit_many([item]))[0]

    async def submit_many(self, items: Sequence[Item]) -> list[Result]:
        """Results for several items (one request's batch), in order; admitted all or none."""
        self._admit(len(items))
        self._submissions += 1
        submission = self._submissions
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Result]] = [loop.create_future() for _ in items]
        queued = time.perf_counter()
        with self._lock:
            self._waiting.extend(
                (item, future, queued, submission)
                for item, future in zip(items, futures, strict=True)
            )
            self._arrived.notify()
        if len(items) == 1:  # most requests: one future awaited, without gather's wrapping
            return [await futures[0]]
        return list(await asyncio.gather(*futures))

    @property
    def queued(self) -> int:
        """Items waiting for a pass."""
        return len(self._waiting)

    def _admit(self, count: int) -> None:
        """Overloaded when `count` more items would overfill the queue.

        An empty queue admits any request, so one batch larger than the bound still runs.
        """
        waiting = len(self._waiting)
        if waiting and waiting + count > self.settings.max_queue:
            limit = self.settings.max_queue
            raise Overloaded(
                f"the {self.operation} queue", limit, self.settings.retry_after_seconds
            )

    def _work(self, loop: asyncio.AbstractEventLoop, generation: int) -> None:
        """The worker thread: take a batch, compute it, hand its outcome to `loop`."""
        if self.initializer is not None:
            self.initializer()
        while True:
            batch = self._take(generation)
            if batch is None:
                return
            items = [item for item, _, _, _ in batch]
            started = time.perf_counter()
            waited = QUEUE_SECONDS.labels(self.operation)
            for _, _, queued, _ in batch:
                waited.observe(started - queued)
            outcome: list[Result] | Exception
            try:
                outcome = self.compute(items)
            except Exception as failure:  # the callers get it; the worker serves on
                outcome = failure
            finally:
                SEARCH_SECONDS.labels(self.operation).observe(time.perf_counter() - started)
                BATCH_SIZE.labels(self.operation).observe(len(items))
            try:
                loop.call_soon_threadsafe(_answer, batch, outcome)
            except RuntimeError:  # the event loop is closed: nobody waits any more
                return

    def _take(self, generation: int) -> list[Entry[Item, Result]] | None:
        """The next batch, once there is an item (None when stopping): what is queued up to
        max_size units of work (and the items of at most `requests_per_batch` requests),
        waiting up to max_wait for more. An item that would go past either bound stays first
        in the queue, for the next batch."""
        with self._arrived:
            while not self._waiting and generation == self._generation:
                self._arrived.wait()
            if generation != self._generation:
                return None
            first = self._waiting.popleft()
            batch, cost = [first], self.cost(first[0])
            if not self.settings.batching:
                return batch
            requests, submission, most = 1, first[3], self.requests_per_batch()
            deadline = time.perf_counter() + self.settings.batch_max_wait_ms / 1000
            while cost < self.settings.batch_max_size:
                if not self._waiting:
                    remaining = deadline - time.perf_counter()
                    if remaining <= 0 or generation != self._generation:
                        break
                    self._arrived.wait(remaining)
                    continue
                item = self._waiting[0]
                work = self.cost(item[0])
                another = item[3] != submission
                if cost + work > self.settings.batch_max_size or (another and requests == most):
                    break
                batch.append(self._waiting.popleft())
                cost += work
                requests, submission = requests + another, item[3]
            return batch

    def requests_per_batch(self) -> int | None:
        """The most requests whose items one batch takes now: half of those in flight, at
        least PIPELINE_FLOOR; None (no bound) without an in-flight count."""
        if self.in_flight is None:
            return None
        return max(PIPELINE_FLOOR, (self.in_flight.count + 1) // 2)


def _answer(batch: Sequence[Entry[Item, Result]], outcome: list[Result] | Exception) -> None:
    """On the event loop: each caller of a computed batch gets its result, or the batch's
    error (a caller that went away has a cancelled future, left as it is)."""
    if isinstance(outcome, Exception):
        for _, future, _, _ in batch:
            if not future.done():
                future.set_exception(outcome)
        return
    for (_, future, _, _), result in zip(batch, outcome, strict=True):
        if not future.done():
            future.set_result(result)

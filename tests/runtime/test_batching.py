"""The Batcher: coalescing, per-caller results, errors, limits, its queue bound, the off switch."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from service.config import Settings
from service.errors import Overloaded
from service.runtime.batching import PIPELINE_FLOOR, Batcher, InFlight


class Recorder:
    """A compute function that doubles items, records batch sizes and can be held back."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.release = threading.Event()
        self.release.set()

    def __call__(self, items: Sequence[int]) -> list[int]:
        self.release.wait(timeout=5)
        self.batches.append(list(items))
        if any(item < 0 for item in items):
            raise ValueError("negative item")
        return [item * 2 for item in items]


async def run_held(recorder: Recorder, batcher: Batcher[int, int], items: list[int]) -> list:
    """Submit `items` while the first batch is held, so the rest queue up behind it."""
    batcher.start()
    recorder.release.clear()
    first = asyncio.ensure_future(batcher.submit(items[0]))
    await asyncio.sleep(0.05)
    rest = [asyncio.ensure_future(batcher.submit(item)) for item in items[1:]]
    await asyncio.sleep(0.05)
    recorder.release.set()
    return await asyncio.gather(first, *rest, return_exceptions=True)


def held(recorder: Recorder, batcher: Batcher[int, int], items: list[int]) -> list:
    """run_held, then close the batcher."""

    async def scenario() -> list:
        results = await run_held(recorder, batcher, items)
        await batcher.close()
        return results

    return asyncio.run(scenario())


def test_concurrent_items_share_a_batch_and_get_their_own_results() -> None:
    recorder = Recorder()
    batcher = Batcher("test", recorder, Settings(batch_max_size=100))
    results = held(recorder, batcher, list(range(10)))
    assert results == [item * 2 for item in range(10)]
    assert recorder.batches == [[0], list(range(1, 10))]


def test_batches_never_exceed_the_maximum_size() -> None:
    recorder = Recorder()
    batcher = Batcher("test", recorder, Settings(batch_max_size=4))
    results = held(recorder, batcher, list(range(11)))
    assert results == [item * 2 for item in range(11)]
    assert [len(batch) for batch in recorder.batches] == [1, 4, 4, 2]


def test_a_failing_batch_fails_its_callers_and_the_batcher_keeps_serving() -> None:
    recorder = Recorder()
    batcher = Batcher("test", recorder, Settings(batch_max_size=100))

    async def scenario() -> tuple[list, int]:
        failed = await run_held(recorder, batcher, [1, -1, 2])
        after = await batcher.submit(5)
        await batcher.close()
        return failed, after

    failed, after = asyncio.run(scenario())
    assert failed[0] == 2
    assert all(isinstance(result, ValueError) for result in failed[1:])
    assert after == 10


def test_a_wait_collects_items_that_arrive_later() -> None:
    recorder = Recorder()
    batcher = Batcher("test", recorder, Settings(batch_max_size=100, batch_max_wait_ms=200))

    async def scenario() -> list[int]:
        batcher.start()
        first = asyncio.ensure_future(batcher.submit(1))
        await asyncio.sleep(0.02)
        second = asyncio.ensure_future(batcher.submit(2))
        results = list(await asyncio.gather(first, second))
        await batcher.close()
        return results

    assert asyncio.run(scenario()) == [2, 4]
    assert recorder.batches == [[1, 2]]


def test_batching_off_computes_each_item_alone() -> None:
    recorder = Recorder()
    batcher = Batcher("test", recorder, Settings(batching=False))

    async def scenario() -> list[int]:
        batcher.start()
        results = await batcher.submit_many([1, 2, 3])
        await batcher.close()
        return results

    assert asyncio.run(scenario()) == [2, 4, 6]
    assert recorder.batches == [[1], [2], [3]]


def test_a_batch_holds_at_most_max_size_units_of_work() -> None:
    """Items cost what `cost` says (a 3CosMul query one per term): a batch stops before the
    item that would take it past max_size, and that item opens the next batch."""
    recorder = Recorder()
    batcher = Batcher("test", recorder, Settings(batch_max_size=10), cost=lambda item: item)
    results = held(recorder, batcher, [1, 4, 4, 3, 9, 12, 1])
    assert results == [2, 8, 8, 6, 18, 24, 2]
    assert recorder.batches == [[1], [4, 4], [3], [9], [12], [1]]
    assert all(sum(batch) <= 10 or len(batch) == 1 for batch in recorder.batches)


def pipelined(in_flight: int, **settings: object) -> tuple[Recorder, Batcher[int, int]]:
    """A batcher that reads an in-flight count of `in_flight` requests."""
    recorder = Recorder()
    count = InFlight(limit=1024, retry_after=1)
    count.count = in_flight
    return recorder, Batcher("test", recorder, Settings(**settings), in_flight=count)


def test_a_pipelined_batch_takes_half_the_requests_in_flight() -> None:
    """With 32 requests in flight, 31 queued behind the one computing are taken 16 and 15, so
    the event loop answers one half while the other computes."""
    recorder, batcher = pipelined(32)
    results = held(recorder, batcher, list(range(32)))
    assert results == [item * 2 for item in range(32)]
    assert recorder.batches == [[0], list(range(1, 17)), list(range(17, 32))]


def test_pipelining_off_takes_everything_queued() -> None:
    recorder, batcher = pipelined(32, batch_pipelining=False)
    held(recorder, batcher, list(range(32)))
    assert recorder.batches == [[0], list(range(1, 32))]


def test_a_pipelined_batch_always_takes_the_floors_requests() -> None:
    recorder, batcher = pipelined(4)
    held(recorder, batcher, list(range(12)))
    assert PIPELINE_FLOOR == 8
    assert recorder.batches == [[0], list(range(1, 9)), list(range(9, 12))]


def test_a_requests_queries_are_never_split_for_the_pipeline() -> None:
    """One request of 20 queries stays one batch (batch_max_size still bounds it), whatever
    the in-flight count; the bound counts requests."""
    recorder, batcher = pipelined(1, batch_max_size=100)

    async def scenario() -> list:
        batcher.start()
        recorder.release.clear()
        first = asyncio.ensure_future(batcher.submit(0))
        await asyncio.sleep(0.05)
        many = asyncio.ensure_future(batcher.submit_many(list(range(100, 120))))
        singles = [asyncio.ensure_future(batcher.submit(item)) for item in range(1, 12)]
        await asyncio.sleep(0.05)
        recorder.release.set()
        results = await asyncio.gather(first, many, *singles)
        await batcher.close()
        return results

    results = asyncio.run(scenario())
    assert results[1] == [item * 2 for item in range(100, 120)]
    # The floor's 8 requests: the batch of 20 and 7 single queries, then the other 4.
    assert recorder.batches == [[0], [*range(100, 120), *range(1, 8)], list(range(8, 12))]


def test_the_search_worker_runs_faiss_on_compute_threads() -> None:
    # OpenMP's thread count is per thread: set only on the event loop's thread, FAISS searches
    # in the batcher's worker used every core, spinning against the event loop.
    import faiss

    from service.config import Settings
    from service.runtime.runtime import Runtime

    runtime = Runtime(Settings(compute_threads=1))
    for served in (runtime.search, runtime.score):
        counted = Batcher(
            "test",
            lambda items: [faiss.omp_get_max_threads() for _ in items],
            Settings(),
            initializer=served.initializer,
        )

        async def scenario(batcher: Batcher[int, int] = counted) -> int:
            batcher.start()
            threads = await batcher.submit(0)
            await batcher.close()
            return threads

        assert asyncio.run(scenario()) == 1


def test_the_queue_refuses_items_past_its_bound_and_serves_the_rest() -> None:
    recorder = Recorder()
    batcher = Batcher(
        "test", recorder, Settings(batch_max_size=100, max_queue=3, retry_after_seconds=2)
    )

    async def scenario() -> tuple[list, int]:
        batcher.start()
        recorder.release.clear()
        first = asyncio.ensure_future(batcher.submit(0))  # taken by the worker, held
        await asyncio.sleep(0.05)
        queued = [asyncio.ensure_future(batcher.submit(item)) for item in (1, 2, 3, 4, 5)]
        await asyncio.sleep(0.05)
        assert batcher.queued == 3
        recorder.release.set()
        results = await asyncio.gather(first, *queued, return_exceptions=True)
        after = await batcher.submit(6)
        await batcher.close()
        return results, after

    results, after = asyncio.run(scenario())
    assert results[:4] == [0, 2, 4, 6]
    assert all(isinstance(result, Overloaded) for result in results[4:])
    assert results[4].retry_after == 2 and results[4].details["limit"] == 3
    assert after == 12


def test_a_request_batch_is_admitted_whole_or_not_at_all() -> None:
    recorder = Recorder()
    batcher = Batcher("test", recorder, Settings(batch_max_size=100, max_queue=4))

    async def scenario() -> tuple[object, list, list]:
        batcher.start()
        recorder.release.clear()
        first = asyncio.ensure_future(batcher.submit(0))
        await asyncio.sleep(0.05)
        fits = asyncio.ensure_future(batcher.submit_many([1, 2]))
        await asyncio.sleep(0.01)
        try:
            await batcher.submit_many([3, 4, 5])
            refused: object = None
        except Overloaded as error:
            refused = error
        assert batcher.queued == 2  # nothing of the refused batch was queued
        recorder.release.set()
        done = await asyncio.gather(first, fits)
        # An empty queue admits a batch larger than the bound: it could never fit otherwise.
        large = await batcher.submit_many(list(range(10)))
        await batcher.close()
        return refused, done, large

    refused, done, large = asyncio.run(scenario())
    assert isinstance(refused, Overloaded)
    assert done == [0, [2, 4]]
    assert large == [item * 2 for item in range(10)]


def test_one_key_holds_at_most_its_share_of_the_slots_in_flight() -> None:
    """Of 4 slots, one key holds at most 2; past that only that key is refused, and no key
    (or a key the edge never let in) is bounded by the total alone."""
    slots = InFlight(limit=4, retry_after=3, per_key=2)
    slots.take(b"a")
    assert slots.refusal(b"a") is None  # under the share: nothing is even looked up
    slots.take(b"a")
    refused = slots.refusal(b"a")
    assert isinstance(refused, Overloaded) and refused.retry_after == 3
    assert str(refused) == (
        "overloaded: requests in flight for one API key is at its limit of 2; retry after 3 s"
    )
    assert slots.refusal(b"b") is None and slots.refusal(None) is None
    slots.take(b"b")
    slots.take(None)
    assert str(slots.refusal(b"c")).startswith("overloaded: requests in flight is at its limit")
    assert slots.full()
    for key in (b"a", b"a", b"b", None):
        slots.give_back(key)
    assert slots.count == 0 and slots.by_key == {}  # a key's count goes with its last request


def test_without_a_share_only_the_total_bounds_a_key() -> None:
    slots = InFlight(limit=2, retry_after=1)
    slots.take(b"a")
    assert slots.refusal(b"a") is None
    slots.take(b"a")
    assert str(slots.refusal(b"b")).startswith("overloaded: requests in flight is at its limit")

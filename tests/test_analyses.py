"""The analyses' queue: its threads, its deadline, callers that go away, and stopping."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from prometheus_client import REGISTRY

from service.config import Settings
from service.engine.safe_points import Abandoned, safe_point
from service.errors import AnalysisTimeout, NotReady
from service.runtime.analyses import AnalysisQueue, Ticket

# Steps of at most a millisecond each: a hang guard of about a minute if nothing stops them.
MOST_STEPS = 60_000


class Steps:
    """Work that steps until released, a safe point between steps; records what ran and
    whether each run ended (returned or stopped)."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.ended: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, name: str) -> str:
        self.ran.append(name)
        self.started.set()
        try:
            for _ in range(MOST_STEPS):
                if self.release.wait(0.001):
                    return name
                safe_point()
            return name
        finally:
            self.ended.append(name)


def outcomes(kind: str = "analysis") -> dict[str, float]:
    """analyses_total of `kind`, by outcome."""
    names = ("answered", "dropped", "abandoned")
    return {
        name: REGISTRY.get_sample_value(
            "embedding_service_analyses_total", {"kind": kind, "outcome": name}
        )
        or 0.0
        for name in names
    }


def counted_since(before: dict[str, float]) -> dict[str, float]:
    """What analyses_total counted since `before`."""
    return {name: value - before[name] for name, value in outcomes().items()}


def started_queue(**settings: object) -> AnalysisQueue:
    """An analysis queue of one thread, started on the running loop."""
    queue = AnalysisQueue("analysis", 1, Settings(**settings))
    queue.start()
    return queue


async def running(steps: Steps, queue: AnalysisQueue, name: str) -> asyncio.Task[str]:
    """`steps(name)` submitted, once it has started on the queue's thread."""
    task = asyncio.ensure_future(queue.run(steps, name))
    await asyncio.to_thread(steps.started.wait, 30)
    return task


def test_work_runs_on_the_queues_own_threads() -> None:
    async def scenario() -> str:
        queue = started_queue()
        try:
            return await queue.run(lambda: threading.current_thread().name)
        finally:
            queue.close()

    assert asyncio.run(scenario()).startswith("analysis")


def test_a_caller_that_goes_away_leaves_its_work_unstarted_or_stopped_at_a_safe_point() -> None:
    steps = Steps()
    before = outcomes()

    async def scenario() -> list[str]:
        queue = started_queue()
        first = await running(steps, queue, "first")
        waiting = asyncio.ensure_future(queue.run(steps, "waiting"))
        await asyncio.sleep(0.05)
        first.cancel()
        waiting.cancel()
        for task in (first, waiting):
            with pytest.raises(asyncio.CancelledError):
                await task
        ended = await asyncio.to_thread(wait_for_end, steps, "first")
        queue.close()
        return ended

    ended = asyncio.run(scenario())
    assert steps.ran == ["first"]
    assert ended == ["first"] and not steps.release.is_set()  # stopped, not released
    assert counted_since(before) == {"answered": 0, "dropped": 1, "abandoned": 1}


def test_past_its_deadline_an_analysis_is_answered_503_and_stopped() -> None:
    steps = Steps()

    def slow_to_stop(name: str) -> str:
        """Steps that take 50 ms past their stop to return the thread: the one waiting is past
        its deadline when the thread is free, whenever the event loop gives it up."""
        try:
            return steps(name)
        except Abandoned:
            time.sleep(0.05)
            raise

    async def scenario() -> tuple[BaseException, BaseException, list[str]]:
        queue = started_queue(analysis_timeout_seconds=0.3, retry_after_seconds=2)
        first = asyncio.ensure_future(queue.run(slow_to_stop, "first"))
        waiting = asyncio.ensure_future(queue.run(steps, "waiting"))
        results = await asyncio.gather(first, waiting, return_exceptions=True)
        ended = await asyncio.to_thread(wait_for_end, steps, "first")
        queue.close()
        return results[0], results[1], ended

    first, waiting, ended = asyncio.run(scenario())
    for error in (first, waiting):
        assert isinstance(error, AnalysisTimeout), error
        assert error.retry_after == 2 and error.details["seconds"] == 0.3
    assert steps.ran == ["first"]  # the one that waited never started
    assert ended == ["first"] and not steps.release.is_set()  # stopped, not released


def test_a_ticket_past_its_deadline_never_starts() -> None:
    assert Ticket(time.monotonic() + 60).start()
    late = Ticket(time.monotonic() - 0.001)  # the loop has not given it up: the clock has
    assert not late.start() and not late.started


def test_stopping_answers_every_analysis_not_ready() -> None:
    steps = Steps()

    async def scenario() -> list[BaseException | str]:
        queue = started_queue()
        first = await running(steps, queue, "first")
        waiting = asyncio.ensure_future(queue.run(steps, "waiting"))
        await asyncio.sleep(0.05)
        queue.close()
        results = await asyncio.gather(first, waiting, return_exceptions=True)
        later = await asyncio.gather(queue.run(steps, "later"), return_exceptions=True)
        return [*results, *later]

    results = asyncio.run(scenario())
    assert all(isinstance(result, NotReady) for result in results), results
    assert steps.ran == ["first"] and steps.ended == ["first"]
    assert not steps.release.is_set()


def wait_for_end(steps: Steps, name: str) -> list[str]:
    """steps.ended once `name` is in it (a hang guard of MOST_STEPS' length)."""
    for _ in range(MOST_STEPS):
        if name in steps.ended:
            break
        threading.Event().wait(0.001)
    return list(steps.ended)

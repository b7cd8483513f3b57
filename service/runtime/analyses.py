"""Analyses: whole-table work on threads of their own, in a bounded queue, each within a
deadline, and given up when nobody waits for it any more.

An analysis (diagnostics, an evaluation, a drift, a projection) passes over the whole table
and takes up to seconds, where a query takes microseconds; 300 abandoned evaluations once held
every slot of max_in_flight, and neighbour queries were shed with 429 until they had all been
computed. So the edge admits an analysis into its kind's queue first (`admitted`: at most
`threads` running and `analysis_queue` waiting, else 429 at once), only then into a slot of
max_in_flight, and cancels it when its client disconnects (service/api/edge.py). `run` puts
the work on the queue's threads:

- cancelled, or past its deadline, while it waits: it never starts (the executor drops it);
- cancelled or past its deadline while it runs: its stop event is set, and the work ends at
  its next safe point (engine/safe_points.py) keeping nothing; past the deadline the caller
  gets AnalysisTimeout (503);
- `close` (the server stopping): everything queued is dropped and everything running stopped
  the same way, each caller answered NotReady (503), so no analysis holds the exit.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from service.config import Settings
from service.engine.safe_points import Abandoned, abandonable
from service.errors import AnalysisTimeout, NotReady
from service.metrics import ANALYSES
from service.runtime.batching import InFlight

T = TypeVar("T")


class AnalysisQueue:
    """One kind of analysis: `threads` at once on threads of its own, a bounded number
    admitted, each answered within analysis_timeout_seconds (module docstring)."""

    def __init__(
        self,
        kind: str,
        threads: int,
        settings: Settings,
        initializer: Callable[[], None] | None = None,
    ) -> None:
        self.kind = kind
        self.threads = threads
        self.deadline = settings.analysis_timeout_seconds
        self.retry_after = settings.retry_after_seconds
        self.initializer = initializer
        # Counted by the edge, from admission to answer: running and waiting together.
        what = f"the {kind} queue (running and waiting)"
        self.admitted = InFlight(threads + settings.analysis_queue, self.retry_after, what)
        self._executor: ThreadPoolExecutor | None = None
        # The work submitted and not yet answered, for close().
        self._tickets: set[Ticket] = set()

    def start(self) -> None:
        """Make the threads' executor (threads start as work arrives)."""
        self._executor = ThreadPoolExecutor(
            self.threads, thread_name_prefix=self.kind, initializer=self.initializer
        )

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` on one of the queue's threads, within the deadline (module docstring)."""
        executor = self._executor
        if executor is None:
            raise stopping()
        ticket = Ticket(time.monotonic() + self.deadline)
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(executor, _run_ticket, ticket, work, args)
        self._tickets.add(ticket)
        deadline = asyncio.timeout(self.deadline)
        outcome = "answered"
        try:
            async with deadline:
                return await future
        except TimeoutError:
            if not deadline.expired():
                raise
            outcome = ticket.give_up()
            raise AnalysisTimeout(self.deadline, self.retry_after) from None
        except (Abandoned, asyncio.CancelledError):
            outcome = ticket.give_up()
            task = asyncio.current_task()
            if self._executor is executor or (task is not None and task.cancelling()):
                raise  # the caller's own cancellation
            raise stopping() from None
        finally:
            ticket.give_up()  # answered, cancelled or late: nothing more to compute
            self._tickets.discard(ticket)
            ANALYSES.labels(self.kind, outcome).inc()

    def close(self) -> None:
        """Drop what waits and stop what runs at its next safe point (module docstring)."""
        executor, self._executor = self._executor, None
        for ticket in self._tickets:
            ticket.give_up()
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


def stopping() -> NotReady:
    """The answer of an analysis the stopping server will not compute."""
    return NotReady("the server is stopping: the analysis was not computed; retry elsewhere")


class Ticket:
    """One analysis as its caller and its thread both see it: whether it started, and whether
    it was given up (its stop event, which the engine's safe points read)."""

    def __init__(self, deadline: float = math.inf) -> None:
        self.stop = threading.Event()
        self.started = False
        # time.monotonic() past which it must not start, whether or not the event loop has
        # given it up yet (a thread freed at the deadline would otherwise start it).
        self.deadline = deadline
        self._lock = threading.Lock()

    def start(self) -> bool:
        """On the thread: start, unless it was given up first or its deadline has passed."""
        with self._lock:
            self.started = not self.stop.is_set() and time.monotonic() < self.deadline
            return self.started

    def give_up(self) -> str:
        """On the event loop: stop it; "abandoned" if it had started, else "dropped" (then it
        never will)."""
        with self._lock:
            self.stop.set()
            return "abandoned" if self.started else "dropped"


def _run_ticket(ticket: Ticket, work: Callable[..., T], args: tuple[Any, ...]) -> T:
    with abandonable(ticket.stop):
        if not ticket.start():
            raise Abandoned
        return work(*args)

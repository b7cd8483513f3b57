"""Safe points: where a long computation on a worker thread may be abandoned by its caller.

A thread cannot be stopped from outside. Work that its caller may give up on (its client
left, its deadline passed, the server is stopping) runs within `abandonable(stop)`, and the
engine's long loops call `safe_point()` between their steps: once `stop` is set, the next
safe point raises Abandoned, with nothing half-written (each step's results are its own).
Outside `abandonable`, a safe point costs one lookup and never raises.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# The stop event of the abandonable work running on this thread (contexts are per thread).
_STOP: ContextVar[threading.Event | None] = ContextVar("stop", default=None)


class Abandoned(Exception):
    """The caller gave the work up; raised at the first safe point after it did."""


@contextmanager
def abandonable(stop: threading.Event) -> Iterator[None]:
    """Within the block, a safe point raises Abandoned once `stop` is set."""
    token = _STOP.set(stop)
    try:
        yield
    finally:
        _STOP.reset(token)


def safe_point() -> None:
    """Raise Abandoned if the work running on this thread has been given up."""
    stop = _STOP.get()
    if stop is not None and stop.is_set():
        raise Abandoned

"""What a long command shows and how it stops: a progress line, and Ctrl-C between steps.

FAISS checks for signals inside its loops (its Python interrupt callback), from whichever
thread runs them; under load a KeyboardInterrupt raised there was lost (the build ran on to
the end and exited 0) or raised twice (exit -2 after the message). While an index builds,
Ctrl-C therefore only records the wish, says so, and the build stops at its next step (a block
of 65,536 rows, or the recall measurement), where Python raises it; a second Ctrl-C stops at
once.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TextIO


@contextmanager
def ctrl_c_between_steps(bar: ProgressBar) -> Iterator[Callable[[], None]]:
    """Within the block, Ctrl-C raises KeyboardInterrupt at the next `check()` (or at the
    block's end), not inside FAISS; the progress line is ended first."""
    asked: list[bool] = []

    def handler(number: int, frame: FrameType | None) -> None:
        bar.close()
        if asked:
            raise KeyboardInterrupt  # the second Ctrl-C: at once
        asked.append(True)
        say("stopping at the end of this step (Ctrl-C again to stop at once)")

    def check() -> None:
        if asked:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield check
        check()  # asked during the last step
    finally:
        signal.signal(signal.SIGINT, previous)
        bar.close()  # an error is then said on a line of its own


def say(message: str, stream: TextIO = sys.stderr) -> None:
    """A line of progress on stderr."""
    print(message, file=stream, flush=True)


class ProgressBar:
    """`label: done / total rows (share), elapsed, ETA` on one rewritten stderr line."""

    WIDTH = 30

    def __init__(self, label: str, total: int, stream: TextIO = sys.stderr) -> None:
        self.label, self.total, self.stream = label, total, stream
        self.started = time.monotonic()
        self.open = False  # a line drawn and not yet ended

    def update(self, done: int, total: int) -> None:
        """Redraw the line for `done` of `total` rows."""
        elapsed = time.monotonic() - self.started
        share = done / max(1, total)
        filled = int(self.WIDTH * share)
        eta = elapsed / done * (total - done) if done else float("nan")
        line = (
            f"\r{self.label} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
            f"{done:,}/{total:,} rows ({share:.0%}), {clock(elapsed)} elapsed, ETA {clock(eta)}"
        )
        self.open = done < total
        print(line, end="" if self.open else "\n", file=self.stream, flush=True)

    def close(self) -> None:
        """End a line left unfinished by a build that stopped."""
        if self.open:
            print(file=self.stream, flush=True)
            self.open = False


def clock(seconds: float) -> str:
    """Seconds as 1h02m03s / 2m03s / 3s ('?' when unknown)."""
    if seconds != seconds:  # NaN: no rate yet
        return "?"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"

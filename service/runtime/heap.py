"""Keeping the heap small: few malloc arenas, and their free pages handed back to the system
every few seconds, off the event loop.

glibc's malloc keeps what Python and numpy free for reuse: a freed block below the top of an
arena stays resident until malloc_trim(0) returns its pages (MADV_DONTNEED), and the mmap
threshold grows with the largest block freed, so a server that once answered large requests
keeps their memory in its arenas. After three rounds of the attack catalogue
(loadtests.attack --seconds 3 --rounds 3) the server held 850 MiB resident, and one
malloc_trim(0) (through gdb) took it to 744 MiB. A trim costs about 3 ms with little to return
and about 130 ms for 1.5 GB of freed blocks (the 2-core VM); it runs on its own thread, which
the call releases the GIL for, so no request waits on it.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any

# mallopt's parameter number for the most arenas malloc may create (glibc's malloc.h).
M_ARENA_MAX = -8

# Seconds between looks at the heap: often enough that memory freed after a burst (a reload,
# a large batch) is back within seconds.
TRIM_EVERY = 10.0

# A trim only when the arenas hold more free bytes than this (mallinfo2): a server answering
# small requests keeps the few megabytes it reuses, and pays no page faults for them again.
TRIM_ABOVE = 32 * 2**20


class MallInfo2(ctypes.Structure):
    """glibc's struct mallinfo2 (2.33 and later): the arenas' sizes in bytes."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                     "uordblks", "fordblks", "keepcost")
    ]  # fmt: skip


def _libc(name: str, argtypes: list[Any], restype: Any) -> Any:
    """The C library's function `name`, typed, or None where it has none (musl, macOS)."""
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None
    function.argtypes = argtypes
    function.restype = restype
    return function


def free_heap_bytes() -> Callable[[], int] | None:
    """A function answering the bytes free in malloc's arenas, or None without mallinfo2."""
    info = _libc("mallinfo2", [], MallInfo2)
    return None if info is None else lambda: int(info().fordblks)


def malloc_trim() -> Callable[[int], int] | None:
    """The C library's malloc_trim, or None where there is none."""
    trim: Callable[[int], int] | None = _libc("malloc_trim", [ctypes.c_size_t], ctypes.c_int)
    return trim


def limit_arenas(count: int) -> bool:
    """Let malloc create at most `count` arenas (0: leave the C library's default); whether it
    could be set. glibc gives each new thread an arena of its own, up to 8 per core, and a
    block freed in one arena serves only that arena's threads: the server's threads (event
    loop, batchers, reading and answering threads, BLAS, the tokenizers' pool) each kept
    megabytes the others could not reuse. Set before the threads start; threads past the
    limit share the arenas there are."""
    if count == 0:
        return True
    mallopt = _libc("mallopt", [ctypes.c_int, ctypes.c_int], ctypes.c_int)
    return mallopt is not None and mallopt(M_ARENA_MAX, count) == 1


class HeapTrimmer:
    """A daemon thread that, every `every` seconds until closed, calls malloc_trim(0) when the
    arenas hold more than `above` free bytes (always, where mallinfo2 is missing)."""

    def __init__(self, every: float = TRIM_EVERY, above: int = TRIM_ABOVE) -> None:
        self.every = every
        self.above = above
        self.trim = malloc_trim()
        self.free_bytes = free_heap_bytes()
        self.trims = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.trim is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="heap-trimmer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self.trim is not None
        while not self._stop.wait(self.every):
            if self.free_bytes is None or self.free_bytes() > self.above:
                self.trim(0)
                self.trims += 1

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

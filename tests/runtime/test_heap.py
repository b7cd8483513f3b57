"""Freed heap memory goes back to the system (service/runtime/heap.py): blocks freed below a
live one stay resident under glibc until malloc_trim, and the server's trimmer thread calls it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from service.runtime.heap import free_heap_bytes, malloc_trim

FRAGMENT_AND_TRIM = """
import time
import numpy as np
from service.runtime.heap import HeapTrimmer

def resident_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

kept, freed = [], []
for i in range(8000):  # 64-112 KB blocks, below glibc's mmap threshold: all on the heap
    block = np.ones(8000 + (i % 7) * 1000)
    (kept if i % 10 == 0 else freed).append(block)
freed.clear()  # a live block above every freed one: nothing at the top for free() to trim
held = resident_mib()
trimmer = HeapTrimmer(every={every}, above={above})
trimmer.start()
deadline = time.monotonic() + {wait}
while trimmer.trims == 0 and time.monotonic() < deadline:
    time.sleep(0.01)
trimmer.close()
print(held, resident_mib(), trimmer.trims)
"""


def run(every: float, wait: float, above: int = 32 * 2**20) -> tuple[float, float, int]:
    script = FRAGMENT_AND_TRIM.format(every=every, wait=wait, above=above)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    held, after, trims = out.stdout.split()
    return float(held), float(after), int(trims)


@pytest.mark.skipif(malloc_trim() is None, reason="no malloc_trim in this C library")
def test_the_trimmer_returns_freed_heap_pages() -> None:
    held, after, trims = run(every=0.05, wait=10)
    # ~590 MiB freed in the middle of the heap: at least 400 MiB of it is given back.
    assert trims >= 1
    assert held - after > 400, (held, after)


@pytest.mark.skipif(malloc_trim() is None, reason="no malloc_trim in this C library")
def test_without_a_trim_the_freed_pages_stay_resident() -> None:
    # The control: the same fragmentation, the trimmer not due before it is closed, and
    # the memory is still held; so the test above measures the trim, not free().
    held, after, trims = run(every=3600, wait=0.3)
    assert trims == 0
    assert abs(held - after) < 50, (held, after)


@pytest.mark.skipif(free_heap_bytes() is None, reason="no mallinfo2 in this C library")
def test_a_heap_with_little_free_is_left_alone() -> None:
    # ~590 MiB free, the bar above it: no trim, and the pages stay (the hot path keeps them).
    held, after, trims = run(every=0.05, wait=0.5, above=2**40)
    assert trims == 0
    assert abs(held - after) < 50, (held, after)


THREADS_ALLOCATE = """
import ctypes, threading
import numpy as np
from service.runtime.heap import limit_arenas

assert limit_arenas({arenas})
start = threading.Barrier(6)

def work():
    start.wait()  # every thread allocates at once, as a server's do under load
    blocks = [np.ones(1000 + i) for i in range(2000)]
    del blocks[::2]

threads = [threading.Thread(target=work) for _ in range(6)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
ctypes.CDLL(None).malloc_stats()  # one "Arena N:" line per arena, on stderr
"""


def arenas_after_six_threads(arenas: int) -> int:
    script = THREADS_ALLOCATE.format(arenas=arenas)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return sum(line.startswith("Arena ") for line in out.stderr.splitlines())


@pytest.mark.skipif(free_heap_bytes() is None, reason="not glibc's malloc")
def test_the_server_keeps_to_its_arenas_where_threads_take_their_own() -> None:
    # glibc's default: each thread that allocates gets an arena (the control, so the limit
    # is what the second count measures).
    assert arenas_after_six_threads(0) > 2
    assert arenas_after_six_threads(2) == 2

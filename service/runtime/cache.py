"""A byte-bounded LRU cache of serialised answers to queries that name only tokens and ids.

Such an answer is deterministic for a given load of a table, so the finished response bytes can
be reused. Keys are 16-byte digests of the validated query (service/operations/door.py), never
the request body: a body padded with whitespace or reordered keys is the same query, and the
cache holds no client bytes. Memory is bounded by a byte budget that counts each answer plus a
fixed per-entry overhead; answers above `max_answer_bytes` are never stored.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from service.metrics import CACHE_BYTES, CACHE_ENTRIES, CACHE_LOOKUPS

# What one entry costs besides its answer: the digest, the bytes object headers and the
# OrderedDict's node, measured with tracemalloc at ~190 bytes (rounded up).
ENTRY_OVERHEAD = 256


class ResultCache:
    """Least-recently-used answers within `max_bytes`; `max_bytes` 0 turns it off."""

    def __init__(self, max_bytes: int, max_answer_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.enabled = max_bytes > 0  # whether anything is ever stored
        self.max_answer_bytes = max_answer_bytes
        self.bytes = 0
        self._entries: OrderedDict[bytes, bytes] = OrderedDict()
        self._counters: dict[tuple[str, str], Any] = {}

    def get(self, operation: str, key: bytes) -> bytes | None:
        """The stored answer for `key`, counted as a hit or a miss."""
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        labels = (operation, "miss" if found is None else "hit")
        counter = self._counters.get(labels)
        if counter is None:
            counter = self._counters[labels] = CACHE_LOOKUPS.labels(*labels)
        counter.inc()
        return found

    def put(self, key: bytes, answer: bytes) -> None:
        """Store an answer, evicting the least recently used beyond the budget."""
        cost = len(answer) + ENTRY_OVERHEAD
        if len(answer) > self.max_answer_bytes or cost > self.max_bytes:
            return
        previous = self._entries.pop(key, None)
        if previous is not None:
            self.bytes -= len(previous) + ENTRY_OVERHEAD
        self._entries[key] = answer
        self.bytes += cost
        while self.bytes > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self.bytes -= len(evicted) + ENTRY_OVERHEAD
        CACHE_ENTRIES.set(len(self._entries))
        CACHE_BYTES.set(self.bytes)

    def __len__(self) -> int:
        return len(self._entries)

"""A bounded LRU cache of serialised responses to token-keyed queries.

Token-keyed answers are deterministic for a given table load, so the finished response bytes
can be reused; the key includes the table's load time, so a reloaded table never serves stale
answers.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from service.metrics import CACHE_ENTRIES, CACHE_LOOKUPS


class ResultCache:
    """Least-recently-used response bytes; `max_entries` 0 turns it off."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()

    @property
    def enabled(self) -> bool:
        """Whether anything is ever stored."""
        return self.max_entries > 0

    def get(self, operation: str, key: Hashable) -> bytes | None:
        """The stored response for `key`, counted as a hit or a miss."""
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        CACHE_LOOKUPS.labels(operation, "miss" if found is None else "hit").inc()
        return found

    def put(self, key: Hashable, response: bytes) -> None:
        """Store a response, evicting the least recently used beyond the bound."""
        self._entries[key] = response
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        CACHE_ENTRIES.set(len(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

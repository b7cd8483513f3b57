"""The registry: a load swaps its table in whole, and keys its answers apart from every other."""

from __future__ import annotations

import numpy as np

from service.engine.tables.table import EmbeddingTable
from service.loading.registry import Registry


def table_of(seed: int) -> EmbeddingTable:
    rows = np.random.default_rng(seed).normal(size=(20, 4)).astype(np.float32)
    return EmbeddingTable([f"t{i}" for i in range(20)], rows)


def test_every_load_keys_its_cached_answers_apart() -> None:
    # The answer cache keys by the load (service/operations/door.py cache_key): a reload, even of
    # the same name, must never find the answers of the table it replaced.
    registry = Registry()
    first = registry.load("t", lambda: table_of(1))
    reloaded = registry.load("t", lambda: table_of(2))
    other = registry.load("u", lambda: table_of(1))
    assert registry.get("t") is reloaded and reloaded.name == first.name
    assert len({first.cache_prefix, reloaded.cache_prefix, other.cache_prefix}) == 3

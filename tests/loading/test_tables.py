"""Loading configured tables: a reload frees the table it replaces by reference counting alone,
with no reference cycle keeping its rows until the cyclic collector runs."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from service.config import Settings, TableSpec
from service.loading.tables import TableLoader, load_registry


def test_a_reloaded_table_is_freed_by_reference_counting_alone(small_table_files: Path) -> None:
    settings = Settings(tables=[TableSpec(name="small", path=small_table_files)])
    registry = load_registry(settings)
    loader = TableLoader(registry, settings)
    old = weakref.ref(registry.get("small"))
    rows = weakref.ref(registry.get("small").table)
    gc.disable()
    try:
        loader.reload("small")
        assert old() is None and rows() is None
    finally:
        gc.enable()

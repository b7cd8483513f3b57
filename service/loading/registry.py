"""The tables a process serves, each under a name: loaded, swapped in whole, or pending."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from types import MappingProxyType

from service.engine.errors import EngineError, TableNotReady, UnknownTable
from service.engine.indexes.building import Indexing
from service.engine.search.cosine import CosineSearch
from service.engine.search.kernels import KernelName
from service.engine.served import ServedTable
from service.engine.tables.table import EmbeddingTable


class Registry:
    """Named tables; expected names that are not loaded yet keep the process unready.

    Loading a table that is already served (a reload) keeps the old one serving until the new
    one is indexed, then swaps it in; a failed load leaves whatever was served untouched.
    """

    def __init__(self, expected: Iterable[str] = ()) -> None:
        self._tables: dict[str, ServedTable] = {}
        # The served tables by name, read-only and live: a query's table is one read of it
        # (operations/door.py), with no lock and no call; `get` words the error of a miss.
        self.serving = MappingProxyType(self._tables)
        self._pending: dict[str, str] = {name: "not loaded" for name in expected}
        self._lock = threading.Lock()
        self._draining = False

    def load(
        self,
        name: str,
        loader: Callable[[], EmbeddingTable],
        case_insensitive: bool = False,
        kernel: KernelName = "compiled",
        attach: Callable[[CosineSearch], Indexing] | None = None,
    ) -> ServedTable:
        """Load a table and build its search, then swap it in under `name` in one step.

        `attach` gives the search its approximate index (read from a file, or to be built);
        its errors fail the load like the loader's.
        """
        started = time.perf_counter()
        self._mark_pending(name, "loading")
        try:
            table = loader()
            search = CosineSearch(table, kernel)
            indexing = attach(search) if attach is not None else None
        except EngineError as error:
            self._mark_pending(name, f"failed: {error.message}")
            raise
        served = ServedTable(
            name=name,
            table=table,
            search=search,
            case_insensitive=case_insensitive,
            loaded_at=datetime.now(UTC),
            load_seconds=time.perf_counter() - started,
            kernel=kernel,
            indexing=indexing,  # type: ignore[arg-type]
        )
        with self._lock:
            self._tables[name] = served
            self._pending.pop(name, None)
        return served

    def _mark_pending(self, name: str, state: str) -> None:
        """Record the state of an expected, not yet served table; others are not waited for."""
        with self._lock:
            if name in self._pending:
                self._pending[name] = state

    def remove(self, name: str) -> ServedTable:
        """Stop serving table `name` (UnknownTable if none is served so); requests already
        answering from it finish on it."""
        with self._lock:
            served = self._tables.pop(name, None)
            self._pending.pop(name, None)
        if served is None:
            raise UnknownTable(name, self.names())
        return served

    def drain(self) -> None:
        """Report unready from now on: the process is shutting down."""
        self._draining = True

    def get(self, name: str) -> ServedTable:
        """The table served as `name`; UnknownTable or TableNotReady otherwise."""
        served = self.serving.get(name)
        if served is not None:
            return served
        if name in self._pending:
            raise TableNotReady(name, self._pending[name])
        raise UnknownTable(name, self.names())

    def names(self) -> list[str]:
        """Every configured name, loaded or not, in configuration order."""
        return list(dict.fromkeys([*self._tables, *self._pending]))

    def served(self) -> list[ServedTable]:
        """The loaded tables."""
        return list(self._tables.values())

    def unready_reason(self) -> str | None:
        """Why the process is not ready, or None when every expected table is loaded."""
        if self._draining:
            return "shutting down"
        if not self._tables and not self._pending:
            return "no tables configured"
        if self._pending:
            waiting = ", ".join(f"{n} ({state})" for n, state in self._pending.items())
            return f"tables not ready: {waiting}"
        return None

"""The tables a process serves, each under a name, with its index and load facts."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from service.engine.approximate import IndexParameters
from service.engine.diagnostics import TableDiagnostics
from service.engine.errors import EngineError, TableNotReady, UnknownTable
from service.engine.index import SearchKernel, SimilarityIndex
from service.engine.indexing import Indexing
from service.engine.projection import Projector
from service.engine.table import EmbeddingTable
from service.engine.text import TextTokenizer, text_tokenizer


@dataclass(frozen=True)
class ServedTable:
    """A loaded, indexed table and how it got here."""

    name: str
    table: EmbeddingTable
    index: SimilarityIndex
    case_insensitive: bool
    loaded_at: datetime
    load_seconds: float
    # The approximate index (if any): read with the table, or built in the background.
    indexing: Indexing = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    # Fits its PCA basis on first use; a reload makes a new ServedTable, so the basis goes too.
    projector: Projector = field(init=False, repr=False, compare=False)
    # Likewise the diagnostics: computed once per load, dropped with it.
    diagnostics: TableDiagnostics = field(init=False, repr=False, compare=False)
    # Splits text into rows: the model's tokenizer, or the vocabulary with the case fallback.
    text: TextTokenizer = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.indexing is None:
            object.__setattr__(self, "indexing", Indexing(self.index, IndexParameters()))
        object.__setattr__(self, "projector", Projector(self.table, self.index.store))
        object.__setattr__(self, "diagnostics", TableDiagnostics(self.table, self.index.store))
        tokenizer = text_tokenizer(self.table, self.case_insensitive, self.name)
        object.__setattr__(self, "text", tokenizer)

    @cached_property
    def cache_prefix(self) -> bytes:
        """What keys this load's cached answers apart from any other table's or load's."""
        return f"{self.name}\0{self.loaded_at.isoformat()}\0".encode()


class Registry:
    """Named tables; expected names that are not loaded yet keep the process unready.

    Loading a table that is already served (a reload) keeps the old one serving until the new
    one is indexed, then swaps it in; a failed load leaves whatever was served untouched.
    """

    def __init__(self, expected: Iterable[str] = ()) -> None:
        self._tables: dict[str, ServedTable] = {}
        self._pending: dict[str, str] = {name: "not loaded" for name in expected}
        self._lock = threading.Lock()
        self._draining = False

    def load(
        self,
        name: str,
        loader: Callable[[], EmbeddingTable],
        case_insensitive: bool = False,
        kernel: SearchKernel = "blas",
        attach: Callable[[SimilarityIndex], Indexing] | None = None,
    ) -> ServedTable:
        """Load and index a table, then swap it in under `name` in one step.

        `attach` gives the index its approximate index (read from a file, or to be built);
        its errors fail the load like the loader's.
        """
        started = time.perf_counter()
        self._mark_pending(name, "loading")
        try:
            table = loader()
            index = SimilarityIndex(table, kernel)
            indexing = attach(index) if attach is not None else None
        except EngineError as error:
            self._mark_pending(name, f"failed: {error.message}")
            raise
        served = ServedTable(
            name=name,
            table=table,
            index=index,
            case_insensitive=case_insensitive,
            loaded_at=datetime.now(UTC),
            load_seconds=time.perf_counter() - started,
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

    def drain(self) -> None:
        """Report unready from now on: the process is shutting down."""
        self._draining = True

    def get(self, name: str) -> ServedTable:
        """The table served as `name`; UnknownTable or TableNotReady otherwise."""
        served = self._tables.get(name)
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

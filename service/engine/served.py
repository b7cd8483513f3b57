"""The tables a process serves, each under a name, with its index and load facts."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property

from service.engine.analysis.diagnostics import TableDiagnostics
from service.engine.analysis.projection import Projector
from service.engine.analysis.trajectory import TrainingSummary
from service.engine.errors import EngineError, TableNotReady, UnknownTable
from service.engine.indexes.building import Indexing
from service.engine.search.approximate import IndexParameters
from service.engine.search.cosine import SearchKernel, SimilarityIndex
from service.engine.tables.checkpoints import Versions
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.text import TextTokenizer, text_tokenizer


@dataclass(frozen=True)
class ServedTable:
    """A loaded, indexed table and how it got here."""

    name: str
    table: EmbeddingTable
    index: SimilarityIndex
    case_insensitive: bool
    loaded_at: datetime
    load_seconds: float
    kernel: SearchKernel = "blas"
    # The approximate index (if any): read with the table, or built in the background.
    indexing: Indexing = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    # Fits its PCA basis on first use; a reload makes a new ServedTable, so the basis goes too.
    projector: Projector = field(init=False, repr=False, compare=False)
    # Likewise the diagnostics: computed once per load, dropped with it.
    diagnostics: TableDiagnostics = field(init=False, repr=False, compare=False)
    # Splits text into rows: the model's tokenizer, or the vocabulary with the case fallback.
    text: TextTokenizer = field(init=False, repr=False, compare=False)
    # Its checkpoints (one for a plain table); the served one is the last.
    versions: Versions = field(init=False, repr=False, compare=False)
    views: CheckpointViews = field(init=False, repr=False, compare=False)
    # How far training moved the rows, per checkpoint: computed on first use, kept per load.
    training: TrainingSummary = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.indexing is None:
            object.__setattr__(self, "indexing", Indexing(self.index, IndexParameters()))
        object.__setattr__(self, "projector", Projector(self.table, self.index.store))
        object.__setattr__(self, "diagnostics", TableDiagnostics(self.table, self.index.store))
        tokenizer = text_tokenizer(self.table, self.case_insensitive, self.name)
        object.__setattr__(self, "text", tokenizer)
        object.__setattr__(self, "versions", Versions(self.table, self.name))
        object.__setattr__(self, "views", CheckpointViews(self))
        object.__setattr__(self, "training", TrainingSummary(self.versions))

    def at(self, checkpoint: int, keep: int = 1) -> ServedTable:
        """This table at one of its checkpoints: itself for the last; else a view with its own
        index, built on first use (slow: a pass over the checkpoint), `keep` of them kept."""
        if self.versions.check(checkpoint) == self.versions.last:
            return self
        return self.views.get(checkpoint, keep)

    @cached_property
    def cache_prefix(self) -> bytes:
        """What keys this load's cached answers apart from any other table's or load's."""
        return f"{self.name}\0{self.loaded_at.isoformat()}\0".encode()


class CheckpointViews:
    """The earlier checkpoints of one load as tables of their own, the most recent few kept.

    A view's index holds its rows' norms (and with search_kernel=faiss a unit float32 copy
    of its rows, as the served table's does), so only `keep` views live at a time; building
    one waits for any other build of the same load.
    """

    def __init__(self, served: ServedTable) -> None:
        self.served = served
        self._lock = threading.Lock()
        self._views: OrderedDict[int, ServedTable] = OrderedDict()

    def kept(self, checkpoint: int) -> ServedTable | None:
        """The view of `checkpoint` if it is built and kept (no waiting for a build)."""
        return self._views.get(checkpoint)

    def get(self, checkpoint: int, keep: int) -> ServedTable:
        """The view of `checkpoint`, built if it is not kept."""
        with self._lock:
            view = self._views.pop(checkpoint, None) or self._build(checkpoint)
            self._views[checkpoint] = view
            while len(self._views) > max(keep, 1):
                self._views.popitem(last=False)
            return view

    def _build(self, checkpoint: int) -> ServedTable:
        served, table = self.served, self.served.table
        rows = served.versions.vectors(checkpoint)
        source = f"checkpoint {checkpoint} ({served.versions.sources[checkpoint]}) of {served.name}"
        # The same Vocabulary object (its lookups shared, not rebuilt); the rows were checked
        # when the set loaded (loaders/checkpoints.py), so the view does not check them again.
        view = EmbeddingTable(
            table.tokens, rows, table.metadata, source, table.tokenizer, checked=True
        )
        index = SimilarityIndex(view, served.kernel)
        # Exhaustive: an approximate index was built over the last checkpoint's rows, not these.
        indexing = Indexing(index, IndexParameters())
        return replace(served, table=view, index=index, indexing=indexing)


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

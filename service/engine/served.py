"""A table ready to answer: its rows with their search, approximate index, projector,
diagnostics, text tokenizer and checkpoints, and how it was loaded."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property

from service.engine.analysis.diagnostics import TableDiagnostics
from service.engine.analysis.evaluation import KeptEvaluations
from service.engine.analysis.projection import Projector
from service.engine.analysis.trajectory import TrainingSummary
from service.engine.indexes.building import Indexing
from service.engine.search.approximate import IndexParameters
from service.engine.search.cosine import CosineSearch, KernelName
from service.engine.tables.checkpoints import Versions
from service.engine.tables.prepared import fingerprint
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.text import TextTokenizer, text_tokenizer


@dataclass(frozen=True)
class ServedTable:
    """A loaded, indexed table and how it got here."""

    name: str
    table: EmbeddingTable
    search: CosineSearch
    case_insensitive: bool
    loaded_at: datetime
    load_seconds: float
    kernel: KernelName = "compiled"
    # The approximate index (if any): read with the table, or built in the background.
    indexing: Indexing = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    # Fits its PCA basis on first use; a reload makes a new ServedTable, so the basis goes too.
    projector: Projector = field(init=False, repr=False, compare=False)
    # Likewise the diagnostics: computed once per load, dropped with it.
    diagnostics: TableDiagnostics = field(init=False, repr=False, compare=False)
    # And the evaluations by the built-in sets.
    evaluations: KeptEvaluations = field(init=False, repr=False, compare=False)
    # Splits text into rows: the model's tokenizer, or the vocabulary with the case fallback.
    text: TextTokenizer = field(init=False, repr=False, compare=False)
    # Its checkpoints (one for a plain table); the served one is the last.
    versions: Versions = field(init=False, repr=False, compare=False)
    views: CheckpointViews = field(init=False, repr=False, compare=False)
    # How far training moved the rows, per checkpoint: computed on first use, kept per load.
    training: TrainingSummary = field(init=False, repr=False, compare=False)
    # What names its content, alike in every process that loaded the same rows and tokens
    # (replicas behind a proxy), another once they change: computed here, on the loading
    # thread (tens of milliseconds for millions of rows), not by a first query.
    version: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.indexing is None:
            object.__setattr__(self, "indexing", Indexing(self.search, IndexParameters()))
        object.__setattr__(self, "projector", Projector(self.table, self.search.store))
        object.__setattr__(self, "diagnostics", TableDiagnostics(self.table, self.search.store))
        object.__setattr__(self, "evaluations", KeptEvaluations())
        tokenizer = text_tokenizer(self.table, self.case_insensitive, self.name)
        object.__setattr__(self, "text", tokenizer)
        object.__setattr__(self, "versions", Versions(self.table, self.name))
        object.__setattr__(self, "views", CheckpointViews(self))
        object.__setattr__(self, "training", TrainingSummary(self.versions))
        object.__setattr__(self, "version", fingerprint(self.table))

    def at(self, checkpoint: int, keep: int = 1) -> ServedTable:
        """This table at one of its checkpoints: itself for the last; else a view with its own
        search, built on first use (slow: a pass over the checkpoint), `keep` of them kept."""
        if self.versions.check(checkpoint) == self.versions.last:
            return self
        return self.views.get(checkpoint, keep)

    @cached_property
    def cache_prefix(self) -> bytes:
        """What keys this load's cached answers apart from any other table's or load's (the
        answer cache adds the indexes attached since: answers change with each)."""
        return f"{self.name}\0{self.loaded_at.isoformat()}\0".encode()


class CheckpointViews:
    """The earlier checkpoints of one load as tables of their own, the most recent few kept.

    A view's search holds its rows' norms (and with search_kernel=faiss a unit float32 copy
    of its rows, as the served table's does), so only `keep` views live at a time; building
    one waits for any other build of the same load.
    """

    def __init__(self, served: ServedTable) -> None:
        # A weak reference: the served table holds its views, and a cycle back to it kept every
        # reloaded table's rows until the cyclic collector ran (a reload of MiniLM left 28 MB
        # more resident each time, 178 -> 1,555 MiB over 50 reloads).
        self._served = weakref.ref(served)
        self._lock = threading.Lock()
        self._views: OrderedDict[int, ServedTable] = OrderedDict()

    @property
    def served(self) -> ServedTable:
        """The load these are views of (alive while anyone can ask for a view)."""
        served = self._served()
        assert served is not None, "a view asked of a table no longer held"
        return served

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
        search = CosineSearch(view, served.kernel)
        # Exhaustive: an approximate index was built over the last checkpoint's rows, not these.
        indexing = Indexing(search, IndexParameters())
        return replace(served, table=view, search=search, indexing=indexing)

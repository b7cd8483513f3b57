"""A served table's approximate index over its life: read or built, then measured.

The table serves from the exact path until its index is attached; a build runs on its own
thread (service/loading/indexes.py), reporting progress here, so neither this table nor any other
waits for it. Recall@10 is measured once the index is attached and kept with the facts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from service.engine.indexes.recall import Recall, Truth, exact_truth, held_out_rows, measure_recall
from service.engine.search.approximate import ApproximateIndex, IndexParameters, build_index
from service.engine.search.cosine import CosineSearch

State = str  # "exact" | "building" | "measuring" | "ready" | "failed"


@dataclass
class Progress:
    """How far a build is: rows added of all, and since when."""

    done: int = 0
    total: int = 0
    started: float = field(default_factory=time.monotonic)

    def eta_seconds(self) -> float | None:
        """Seconds left at the rate so far (None before the first rows are in)."""
        if not self.done or self.done >= self.total:
            return None
        elapsed = time.monotonic() - self.started
        return elapsed / self.done * (self.total - self.done)


class Indexing:
    """The approximate index of one served table, and what is known about it."""

    def __init__(self, search: CosineSearch, parameters: IndexParameters) -> None:
        self.search = search
        self.parameters = parameters
        self.state: State = "exact" if parameters.kind == "exact" else "pending"
        self.progress = Progress(total=search.table.rows)
        self.recall: Recall | None = None
        self.truth: Truth | None = None
        self.source: str | None = None
        self.error: str | None = None
        # Indexes attached so far: answers change with each, so the answer cache keys them.
        self.attached = 0
        # Called with the measured recall in place, before the state says "ready": whoever
        # sees "ready" then finds what on_ready published (the service's gauges).
        self.on_ready: Callable[[Indexing], None] | None = None
        self._lock = threading.Lock()

    @property
    def approximate(self) -> ApproximateIndex | None:
        """The attached index, if any."""
        return self.search.approximate

    def attach(self, approximate: ApproximateIndex, truth: Truth | None, source: str) -> None:
        """Serve candidates from `approximate` from now on (recall is measured by measure())."""
        with self._lock:
            self.parameters = approximate.parameters
            self.truth, self.source = truth, source
            self.search.approximate = approximate
            self.attached += 1
            self.state = "measuring"

    def measure(self) -> Recall:
        """Recall@10 of the attached index; an exhaustive pass first when no truth was saved."""
        approximate = self.approximate
        assert approximate is not None, "attach an index before measuring it"
        if self.truth is None:
            self.truth = exact_truth(self.search, held_out_rows(self.search.store))
        recall = measure_recall(self.search, approximate, self.truth)
        with self._lock:
            self.recall = recall
        if self.on_ready is not None:
            self.on_ready(self)
        with self._lock:
            self.state = "ready"
        return recall

    def build(
        self,
        report: Callable[[int, int], None] | None = None,
        measuring: Callable[[], None] | None = None,
    ) -> ApproximateIndex:
        """Build the index (the table keeps serving exactly), attach and measure it.

        `report(done, total)` follows the rows added; `measuring()` is called before the
        exhaustive pass that computes the recall truth.
        """
        with self._lock:
            self.state, self.progress = "building", Progress(total=self.search.table.rows)
        held = held_out_rows(self.search.store)

        def progress(done: int, total: int) -> None:
            self.progress.done = done
            if report is not None:
                report(done, total)

        approximate = build_index(self.search.store, self.parameters, held, progress)
        if measuring is not None:
            measuring()
        truth = exact_truth(self.search, held)
        self.attach(approximate, truth, "built")
        self.measure()
        return approximate

    def fail(self, message: str) -> None:
        """Record why the index is not there (the table keeps serving exactly)."""
        with self._lock:
            self.state, self.error = "failed", message

    def facts(self) -> dict[str, Any]:
        """What GET /v1/tables/{table} reports about the index."""
        with self._lock:
            approximate = self.search.approximate
            facts: dict[str, Any] = {
                "kind": self.parameters.kind,
                "state": self.state,
                "parameters": self.parameters.described(),
                "bytes": None if approximate is None else approximate.nbytes,
                "source": self.source,
                "build_seconds": None if approximate is None else approximate.build_seconds,
                "recall_at_10": None if self.recall is None else self.recall.at_k,
                "recall_queries": None if self.recall is None else self.recall.queries,
                "error": self.error,
            }
            if self.state == "building":
                facts["progress"] = self.progress.done / max(1, self.progress.total)
                facts["eta_seconds"] = self.progress.eta_seconds()
            return facts

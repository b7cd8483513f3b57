"""The per-process machinery around the engine: the batchers and the result cache."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from functools import partial
from operator import attrgetter
from typing import Any, TypeVar

import anyio

from service.config import Settings
from service.engine.search.cosine import CosineSearch, SearchItem, search_items
from service.engine.search.queries import Neighbors, ScoreQuery, Scores
from service.engine.search.scoring import score_items
from service.engine.tables.embedding import Embedded, TextItem, embed_items
from service.engine.threads import limit_compute_threads, limit_openmp
from service.runtime.analyses import AnalysisQueue
from service.runtime.batching import Batcher, InFlight
from service.runtime.cache import ResultCache
from service.runtime.heap import HeapTrimmer

T = TypeVar("T")


def settle_heap() -> None:
    """Move everything alive after start-up out of the garbage collector's sight.

    The loaded app holds ~80,000 tracked objects that live as long as the process; a full
    collection walked them all (16 ms, idle) every few hundred thousand allocations, and under
    load those pauses were the p99 (vectors at 32 connections: 44-50 ms before, 17-19 after).
    Objects created later, reloaded tables included, are collected as usual.
    """
    gc.collect()
    gc.freeze()


# A search item's work, as the item counted it (a C getter: no Python call per item).
item_cost = attrgetter("cost")


# Threads at once that prepare large requests and build large answers (lookups with vectors,
# similarity matrices, splits): anyio's default pool would run 40, each holding its answer's
# Python objects (~6 MB for 256 rows of JSON floats) while clients that do not read pile up.
WORK_THREADS = 4


class Runtime:
    """One search batcher (neighbours and analogies), one scoring batcher, one embedding
    batcher (texts), the count of table requests in flight they share, the two queues of
    analyses, one cache, and the thread that hands freed heap pages back to the system."""

    def __init__(self, settings: Settings) -> None:
        threads = partial(limit_openmp, settings.compute_threads)
        # Counted by the edge; the batchers take half of it a batch (batching.py).
        per_key = settings.max_in_flight_per_key or max(1, settings.max_in_flight // 2)
        self.in_flight = InFlight(
            settings.max_in_flight, settings.retry_after_seconds, per_key=per_key
        )
        batcher = partial(Batcher, settings=settings, initializer=threads, in_flight=self.in_flight)
        # Neighbours and analogies; an item costs its directions, as SearchItem counted them.
        self.search: Batcher[SearchItem, Neighbors] = batcher(
            "search", search_items, cost=item_cost
        )
        self.score: Batcher[tuple[CosineSearch, ScoreQuery], Scores] = batcher("score", score_items)
        # Texts to embed (/v1/embeddings, /embed): split and pooled on its own worker.
        # An item is one request's inputs, costing one a text: max_queue counts requests.
        self.embed: Batcher[TextItem, Embedded] = batcher("embed", embed_items, cost=item_cost)
        self.cache = ResultCache(settings.cache_bytes, settings.cache_max_answer_bytes)
        self.settings = settings
        self.heap = HeapTrimmer()
        # Diagnostics, evaluations, drifts and checkpoints' views; projections and trajectories.
        self.analyses = AnalysisQueue("analysis", settings.analysis_concurrency, settings, threads)
        self.projections = AnalysisQueue(
            "projection", settings.projection_concurrency, settings, threads
        )
        # By kind, as an operation names the queue it waits in (operations/catalog.py).
        self.queues = {queue.kind: queue for queue in (self.analyses, self.projections)}
        # Made in start(): an anyio limiter belongs to the running event loop.
        self.threads: anyio.CapacityLimiter | None = None

    def start(self) -> None:
        """Tune threads and the heap for serving, then start the batchers on the event loop."""
        limit_compute_threads(self.settings.compute_threads)
        sys.setswitchinterval(self.settings.switch_interval_ms / 1000)
        settle_heap()
        self.threads = anyio.CapacityLimiter(WORK_THREADS)
        self.analyses.start()
        self.projections.start()
        self.search.start()
        self.score.start()
        self.embed.start()
        self.heap.start()

    async def in_thread(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` on a worker thread, at most WORK_THREADS at once."""
        return await anyio.to_thread.run_sync(partial(work, *args), limiter=self.threads)

    def stop_analyses(self) -> None:
        """Answer every analysis queued or running NotReady, the running ones stopped at their
        next safe point: the server is stopping."""
        self.analyses.close()
        self.projections.close()

    async def close(self) -> None:
        """Stop the analyses, the batchers and the heap trimmer."""
        self.stop_analyses()
        await self.search.close()
        await self.score.close()
        await self.embed.close()
        self.heap.close()

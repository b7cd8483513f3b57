"""The per-process machinery around the engine: the batchers and the result cache."""

from __future__ import annotations

import faiss
from threadpoolctl import threadpool_limits

from service.batching import Batcher, BatchSettings
from service.cache import ResultCache
from service.config import Settings
from service.engine.grouped import answer_items, score_items
from service.engine.index import Prepared, SimilarityIndex
from service.engine.queries import Neighbors, ScoreQuery, Scores


def limit_compute_threads(threads: int) -> None:
    """Cap the BLAS and OpenMP pools of this process (numpy, FAISS) at `threads`."""
    threadpool_limits(limits=threads)
    faiss.omp_set_num_threads(threads)


class Runtime:
    """One search batcher (neighbours and analogies), one scoring batcher, one cache."""

    def __init__(self, settings: Settings) -> None:
        batching = BatchSettings(
            enabled=settings.batching,
            max_size=settings.batch_max_size,
            max_wait=settings.batch_max_wait_ms / 1000,
            max_queue=settings.max_queue,
            retry_after=settings.retry_after_seconds,
        )
        self.search: Batcher[tuple[SimilarityIndex, Prepared], Neighbors] = Batcher(
            "search", answer_items, batching
        )
        self.score: Batcher[tuple[SimilarityIndex, ScoreQuery], Scores] = Batcher(
            "score", score_items, batching
        )
        self.cache = ResultCache(settings.cache_entries)
        self.compute_threads = settings.compute_threads

    def start(self) -> None:
        """Size the compute thread pools, then start the batchers on the running event loop."""
        limit_compute_threads(self.compute_threads)
        self.search.start()
        self.score.start()

    async def close(self) -> None:
        """Stop the batchers."""
        await self.search.close()
        await self.score.close()

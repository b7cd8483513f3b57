"""What answering a query needs besides its body: the table, the limits and the runtime."""

from __future__ import annotations

from dataclasses import dataclass, replace

import anyio

from service.engine.served import ServedTable
from service.loading.registry import Registry
from service.operations.limits import Limits
from service.runtime.runtime import Runtime


@dataclass(frozen=True)
class Context:
    """One query's table (resolved once, from the path), limits, batchers and cache."""

    served: ServedTable
    limits: Limits
    runtime: Runtime
    # Every served table, for queries that compare the path's table with another (drift).
    tables: Registry | None = None

    async def at_checkpoint(self, checkpoint: int) -> Context:
        """This context with the table as it was at `checkpoint` (UnknownCheckpoint if it has
        none such). A view not kept is built on a worker thread, one build at a time."""
        served = self.served
        if served.versions.check(checkpoint) == served.versions.last:
            return self
        view = served.views.kept(checkpoint)
        if view is None:
            keep = self.limits.settings.checkpoint_views
            view = await anyio.to_thread.run_sync(
                served.at, checkpoint, keep, limiter=self.runtime.analyses
            )
        return replace(self, served=view)

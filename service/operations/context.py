"""What an operation answers a query with besides its body: the Context, the query's table,
limits, batchers and cache. The Limits it stays within are operations/limits.py, the Resolver
that turns its tokens into rows operations/resolving.py, and the pieces several operations
write their answers with operations/answers.py."""

from __future__ import annotations

from dataclasses import dataclass, replace

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
        none such). A view not kept is built as an analysis (runtime/analyses.py)."""
        served = self.served
        if served.versions.check(checkpoint) == served.versions.last:
            return self
        view = served.views.kept(checkpoint)
        if view is None:
            keep = self.limits.settings.checkpoint_views
            view = await self.runtime.analyses.run(served.at, checkpoint, keep)
        return replace(self, served=view)


# Writing answers: what several operations put into theirs (each operation writes its own
# answer with these, serialised once with orjson, in the shape of the response models its route
# declares; tests validate them against the models).

"""What answering a query needs besides its body: the table, the limits and the runtime."""

from __future__ import annotations

from dataclasses import dataclass

from service.api.limits import Limits
from service.engine.registry import ServedTable
from service.runtime import Runtime


@dataclass(frozen=True)
class Context:
    """One query's table (resolved once, from the path), limits, batchers and cache."""

    served: ServedTable
    limits: Limits
    runtime: Runtime

"""The facts of a table's search index: exact, or approximate (FAISS) with its recall."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class IndexInfo(BaseModel):
    """A table's search index: exact, or an approximate one with its measured recall."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["exact", "hnsw", "ivf", "ivfpq"]
    state: Literal["exact", "pending", "building", "measuring", "ready", "failed"] = Field(
        description="building: the table serves exactly until the index is ready."
    )
    parameters: dict[str, int | str]
    bytes: int | None = Field(description="Bytes the approximate index holds.")
    source: str | None = Field(description="The file it was read from, or built.")
    build_seconds: float | None
    recall_at_10: float | None = Field(
        description="Recall@10 against the exact path on held-out rows (token-neighbour "
        "queries), measured when the index was built or loaded."
    )
    recall_queries: int | None
    error: str | None
    progress: float | None = Field(None, description="While building: the share of rows added.")
    eta_seconds: float | None = Field(None, description="While building: seconds left.")

"""What GET /v1/tables and /v1/tables/{table} answer: a table's facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Checkpoint:
    """One version of a table's rows (a plain table has one, 0)."""

    index: int
    label: str
    source: str


@dataclass(frozen=True)
class IndexInfo:
    """How neighbour candidates are found, and an approximate index's state and recall."""

    kind: str
    state: str
    parameters: dict[str, int | float | str] = field(default_factory=dict)
    bytes: int | None = None
    source: str | None = None
    build_seconds: float | None = None
    recall_at_10: float | None = None
    recall_queries: int | None = None
    error: str | None = None
    progress: float | None = None
    eta_seconds: float | None = None


@dataclass(frozen=True)
class TableInfo:
    """A served table: its shape, memory, index, source and versions; the rows /score scores
    against (`head`), and as the server writes them, a language model's size table (`model`)
    and a static embedding model's recipe (`embedding`)."""

    name: str
    rows: int
    width: int
    parameters: int
    bytes: int
    index_type: str
    index: IndexInfo
    zero_rows: int
    source: str
    loaded_at: str
    load_seconds: float
    metadata_columns: list[str]
    case_insensitive: bool
    checkpoints: list[Checkpoint]
    head: str = "tied"
    # Names the rows served (every replica serving them says the same); answers carry it in
    # their Table-Version header.
    version: str = ""
    model: dict[str, Any] | None = None
    embedding: dict[str, Any] | None = None

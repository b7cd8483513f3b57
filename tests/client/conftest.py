"""One real server for the client tests that need no special limits: MiniLM, the small table
(zero row, case-insensitive fallback) and the synthetic checkpoint set."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.server import running_server
from embedding_service import Client
from tests.client.helpers import minilm_table


@pytest.fixture(scope="session")
def served(small_table_files: Path, run_folder: Path) -> Iterator[str]:
    """The base URL of a server of minilm, small and run."""
    small = {
        "name": "small",
        "path": str(small_table_files),
        "vocab": str(small_table_files.with_suffix(".vocab")),
        "case_insensitive": True,
    }
    run = {"name": "run", "checkpoints": str(run_folder)}
    tables = json.dumps([minilm_table(), small, run])
    with running_server({"EMBEDDING_SERVICE_TABLES": tables}) as base:
        yield base


@pytest.fixture(scope="session")
def sync_client(served: str) -> Iterator[Client]:
    """A Client of that server."""
    with Client(served) as opened:
        yield opened

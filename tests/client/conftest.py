"""The real servers client tests share: one for the tests that need no special limits (MiniLM,
the small table with its zero row and case-insensitive fallback, the synthetic checkpoint set,
WordLlama's static model), and one of the gensim parity tables."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from embedding_service import Client
from embedding_service.keyedvectors import RemoteKeyedVectors
from harness.server import running_server
from service.config import default_static_table
from tests.client.helpers import minilm_table

if TYPE_CHECKING:
    from tests.client.parity import Pair

# The gensim parity tables (tests/client/parity.py loads them in gensim).
PARITY_TABLES = ["minilm", "word2vec", "fasttext", "glove", "projector"]


@pytest.fixture(scope="session")
def served(small_table_files: Path, run_folder: Path) -> Iterator[str]:
    """The base URL of a server of minilm, small, run and WordLlama's static model."""
    small = {
        "name": "small",
        "path": str(small_table_files),
        "vocab": str(small_table_files.with_suffix(".vocab")),
        "case_insensitive": True,
    }
    run = {"name": "run", "checkpoints": str(run_folder)}
    wordllama = {"name": "wordllama", "path": str(default_static_table().path)}
    tables = json.dumps([minilm_table(), small, run, wordllama])
    with running_server({"EMBEDDING_SERVICE_TABLES": tables}) as base:
        yield base


@pytest.fixture(scope="session")
def sync_client(served: str) -> Iterator[Client]:
    """A Client of that server."""
    with Client(served) as opened:
        yield opened


@pytest.fixture(scope="session")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Pair]]:
    """The gensim parity tables, each as gensim loads it and as one server serves it."""
    from tests.client.parity import gensim_files  # gensim, only for the tests that use it

    files = gensim_files(tmp_path_factory.mktemp("parity"))
    tables = json.dumps([spec for spec, _ in files.values()])
    with running_server({"EMBEDDING_SERVICE_TABLES": tables}) as base:
        yield {name: (keyed, RemoteKeyedVectors(base, name)) for name, (_, keyed) in files.items()}


@pytest.fixture(params=PARITY_TABLES)
def pair(request: pytest.FixtureRequest, pairs: dict[str, Pair]) -> Pair:
    """One parity table, gensim's and the server's."""
    return pairs[request.param]

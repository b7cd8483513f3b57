"""Shared fixtures: the real MiniLM table, a small hand-made table with edge cases, apps."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings, TableSpec, default_static_table, default_table
from service.engine.loaders import load_huggingface
from service.engine.search.cosine import CosineSearch
from service.engine.session import Session
from service.engine.tables.table import EmbeddingTable
from service.loading.registry import Registry
from service.loading.tables import load_registry
from tests.checkpoint_sets import write_checkpoint_set

# A small table with the cases that matter: a zero (padding) row, case variants, metadata.
SMALL_TOKENS = ["[PAD]", "King", "king", "queen", "man", "woman", "apple", "pear", "zero"]
SMALL_WIDTH = 4


def small_vectors() -> np.ndarray:
    """Deterministic rows; row 0 is all zeros like a padding row."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(len(SMALL_TOKENS), SMALL_WIDTH)).astype(np.float32)
    vectors[0] = 0
    return vectors


@pytest.fixture(scope="session")
def minilm() -> EmbeddingTable:
    """The real default table."""
    spec = default_table()
    assert spec.path is not None
    return load_huggingface(spec.path)


@pytest.fixture(scope="session")
def minilm_session(minilm: EmbeddingTable) -> Session:
    """The engine over the real default table."""
    return Session(minilm, CosineSearch(minilm))


@pytest.fixture(scope="session")
def small_table_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small table written as .npy + vocabulary, for apps that load from files."""
    folder = tmp_path_factory.mktemp("small")
    np.save(folder / "small.npy", small_vectors())
    (folder / "small.vocab").write_text("\n".join(SMALL_TOKENS) + "\n", encoding="utf-8")
    return folder / "small.npy"


@pytest.fixture(scope="session")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic training run: a checkpoint set of five projector files with counts."""
    return write_checkpoint_set(tmp_path_factory.mktemp("run") / "run")


@pytest.fixture(scope="session")
def settings(small_table_files: Path, run_folder: Path) -> Settings:
    """MiniLM, the small table (case-insensitive fallback on), the checkpoint set `run` and
    the default static embedding model, WordLlama's."""
    small = TableSpec(
        name="small",
        path=small_table_files,
        vocab=small_table_files.with_suffix(".vocab"),
        case_insensitive=True,
    )
    run = TableSpec(name="run", checkpoints=run_folder)
    tables = [default_table(), small, run, default_static_table()]
    return Settings(tables=tables, max_k=500, max_batch=64)


@pytest.fixture(scope="session")
def registry(settings: Settings) -> Registry:
    """The tables of `settings`, loaded once for every in-process app of the run."""
    return load_registry(settings)


AppOf = Callable[..., AbstractContextManager[TestClient]]


@pytest.fixture(scope="session")
def app_of(settings: Settings, registry: Registry) -> AppOf:
    """A client (lifespan running) of an app over the shared tables, with settings changed by
    keyword: only what is served, never what is loaded, may differ."""

    @contextmanager
    def build(**changes: object) -> Iterator[TestClient]:
        with TestClient(create_app(settings.model_copy(update=changes), registry)) as client:
            yield client

    return build


@pytest.fixture(scope="session")
def client(app_of: AppOf) -> Iterator[TestClient]:
    """A client of the real app over the shared tables, lifespan included."""
    with app_of() as test_client:
        yield test_client

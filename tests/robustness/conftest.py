"""Fixtures for robustness tests: a small table on disk and apps built with chosen settings."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings, TableSpec
from tests.conftest import SMALL_TOKENS, small_vectors

AppFactory = Callable[..., AbstractContextManager[TestClient]]


def write_table(folder: Path, vectors: np.ndarray, name: str = "small") -> Path:
    """`vectors` as <name>.npy plus <name>.vocab (the small table's tokens, then extras)."""
    folder.mkdir(parents=True, exist_ok=True)
    tokens = [*SMALL_TOKENS, *(f"extra{i}" for i in range(len(vectors) - len(SMALL_TOKENS)))]
    np.save(folder / f"{name}.npy", vectors)
    (folder / f"{name}.vocab").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return folder / f"{name}.npy"


@pytest.fixture
def table_path(tmp_path: Path) -> Path:
    """The small test table as .npy + vocabulary in a fresh folder."""
    return write_table(tmp_path / "tables", small_vectors())


@pytest.fixture
def make_client(table_path: Path) -> AppFactory:
    """Build a TestClient (lifespan running) of an app serving the small table as 'small'."""

    @contextmanager
    def build(**overrides: Any) -> Iterator[TestClient]:
        if "admin_key" in overrides or "admin_key_file" in overrides:
            # An admin key needs a tables directory: the test's own folder, unless given.
            overrides.setdefault("admin_tables_dir", table_path.parent.parent)
        settings = Settings(tables=[TableSpec(name="small", path=table_path)], **overrides)
        with TestClient(create_app(settings)) as client:
            yield client

    return build


def assert_envelope(response: Any, status: int, error_type: str) -> dict:
    """The response is `status` with the one error envelope of type `error_type`."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == error_type, error
    assert error["message"]
    return error


@contextmanager
def counted_while_running(
    outcomes_of_one: Callable[[], list[str]], threads: int
) -> Iterator[Counter[str]]:
    """Call `outcomes_of_one` from `threads` threads over and over until the block ends,
    counting the outcomes each call names."""
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()
    running = threading.Event()
    running.set()

    def repeat() -> None:
        while running.is_set():
            named = outcomes_of_one()
            with lock:
                outcomes.update(named)

    workers = [threading.Thread(target=repeat) for _ in range(threads)]
    for worker in workers:
        worker.start()
    try:
        yield outcomes
    finally:
        running.clear()
        for worker in workers:
            worker.join()

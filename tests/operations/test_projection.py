"""Projections are computed at most projection_concurrency at a time; the rest wait their turn."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from service.operations import projection
from tests.conftest import AppOf


def test_projections_run_at_most_projection_concurrency_at_once(
    app_of: AppOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = 0
    most = 0
    lock = threading.Lock()
    real = projection._projection

    def slow_projection(*args: Any) -> bytes:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return real(*args)

    monkeypatch.setattr(projection, "_projection", slow_projection)
    with app_of(projection_concurrency=2) as client, ThreadPoolExecutor(8) as pool:
        calls = [
            pool.submit(client.post, "/v1/tables/small/projection", json={"points": 5})
            for _ in range(8)
        ]
        assert [call.result().status_code for call in calls] == [200] * 8
    assert most == 2

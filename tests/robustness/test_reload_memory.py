"""A reload frees the old table once nothing holds it: no reference cycle keeps its rows until
the cyclic collector happens to run (50 admin reloads of MiniLM took the server from 178 to
1,555 MiB resident before)."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest

from tests.robustness.conftest import AppFactory
from tests.robustness.servers import call, server_process

ADMIN = "an-admin-key-long-enough-1234"


def test_a_running_app_keeps_no_table_of_its_start_after_a_reload(
    make_client: AppFactory,
) -> None:
    # The lifespan once looped over the tables to start their diagnostics, and its suspended
    # frame kept the loop's last table for the life of the process: after a reload the first
    # copy of that table stayed resident, out of the collector's sight (gc.freeze).
    with make_client() as client:
        app = client.app
        registry = app.state.registry  # type: ignore[attr-defined]
        for thread in threading.enumerate():
            if thread.name.startswith("diagnostics-"):
                thread.join()
        old = weakref.ref(registry.get("small"))
        rows = weakref.ref(registry.get("small").table)
        gc.disable()
        try:
            app.state.loader.reload("small")  # type: ignore[attr-defined]
            assert old() is None and rows() is None
        finally:
            gc.enable()


def resident_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.slow
def test_a_hundred_reloads_keep_resident_memory_flat(tmp_path: Path) -> None:
    env = {
        "EMBEDDING_SERVICE_ADMIN_KEY": ADMIN,
        "EMBEDDING_SERVICE_ADMIN_TABLES_DIR": str(tmp_path),
    }
    headers = {"authorization": f"Bearer {ADMIN}"}
    with server_process(env) as (process, base):
        reload = f"{base}/v1/admin/tables/minilm/reload"
        for _ in range(10):  # the allocator and the first diagnostics settle
            assert call(reload, {}, headers)[0] == 200
        settled = resident_mib(process.pid)
        highest = settled
        for _ in range(90):
            assert call(reload, {}, headers)[0] == 200
            highest = max(highest, resident_mib(process.pid))
        # One more table's worth (45 MiB of rows, its norms, a reload in progress) at most.
        assert highest - settled < 120, (settled, highest)
        status, answer = call(f"{base}/v1/tables/minilm/neighbors", {"token": "king", "k": 1})
        assert status == 200 and answer["neighbors"][0]["token"] == "kings"

"""Files under a served table. A table read from its source is held in the
service's own memory: the source may be rewritten or truncated in place and the server answers
on. A prepared folder is memory-mapped: it may be replaced (by `prepare`, which writes a new
folder and renames it in, or by any rename), never rewritten in place; docs/big-tables.md says
which is which. Both are exercised here against a real server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from service.engine.loaders.formats import load_table
from service.engine.tables.layout import maps_a_file
from tests.conftest import small_vectors
from tests.robustness.conftest import write_table
from tests.robustness.servers import call, server_process

QUERY = {"token": "king", "k": 2}


def nearest(base: str) -> list[str]:
    status, answer = call(f"{base}/v1/tables/small/neighbors", QUERY)
    assert status == 200, answer
    return [neighbor["token"] for neighbor in answer["neighbors"]]


def served(path: Path) -> dict[str, str]:
    return {"EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(path)}])}


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_source_file_rewritten_or_truncated_in_place_is_served_on(
    tmp_path: Path, order: str
) -> None:
    # By columns ("F"), a float32 .npy is already in the served layout: it was once served as
    # a view of its mapped file, and the truncation below ended the server with SIGBUS.
    table_path = write_table(tmp_path / "tables", np.array(small_vectors(), order=order))
    with server_process(served(table_path)) as (process, base):
        before = nearest(base)
        data = table_path.read_bytes()
        with table_path.open("r+b") as handle:  # in place: same inode, as `cp` or an editor
            handle.truncate(0)
            handle.flush()
            os.fsync(handle.fileno())
            assert nearest(base) == before
            handle.write(data[: len(data) // 2])
        assert nearest(base) == before
        process.send_signal(signal.SIGHUP)  # the half file fails to load; the old one serves
        time.sleep(1.0)
        assert process.poll() is None
        assert nearest(base) == before


def prepare(source: Path, out: Path) -> None:
    command = [sys.executable, "-m", "service", "prepare", str(source), str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr


def test_a_served_prepared_folder_replaced_by_prepare_is_served_on(tmp_path: Path) -> None:
    first = write_table(tmp_path / "first", small_vectors())
    vectors = small_vectors()
    vectors[6] = vectors[2] * 2  # another table: a different nearest row for "king"
    second = write_table(tmp_path / "second", vectors)
    folder = tmp_path / "prepared"
    prepare(first, folder)
    with server_process(served(folder)) as (process, base):
        before = nearest(base)
        prepare(second, folder)  # replaces the folder under the server, by rename
        assert nearest(base) == before  # the mapped files were unlinked, never truncated
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 15
        while nearest(base) == before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert nearest(base) != before
        assert process.poll() is None


def test_a_table_loaded_from_a_npy_file_holds_no_view_of_it(tmp_path: Path) -> None:
    for order in ("C", "F"):
        path = write_table(tmp_path / order, np.array(small_vectors(), order=order))
        table = load_table(path)
        assert not maps_a_file(table.vectors)
        assert np.array_equal(table.vectors, small_vectors())

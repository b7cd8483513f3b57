"""Prepared folders through the real CLI, as a host and a container share them: written as the
umask says, served by the container's user, refused in one line where that user may not read
them, and never left half-made by Ctrl-C."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness.server import forget, free_port, start_server
from tests.integration.test_cli import call, errors_of
from tests.robustness.conftest import write_table
from tests.test_writes import snapshot

# The user the image runs the service as (Dockerfile: USER 10001:10001).
CONTAINER_USER = 10001


def as_container_user() -> list[str]:
    """The command prefix that runs a program as the container's user, as the image does:
    setpriv switches to it (as root; otherwise through sudo, as scripts/ install with it)."""
    switch = ["setpriv", f"--reuid={CONTAINER_USER}", f"--regid={CONTAINER_USER}"]
    return [*([] if os.geteuid() == 0 else ["sudo", "-n"]), *switch, "--clear-groups"]


def run(*args: str, umask: int = 0o022, **options: object) -> subprocess.CompletedProcess[str]:
    """`python -m service ARGS` with `umask`, as a user's shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        umask=umask, capture_output=True, text=True, timeout=120, check=False, **options,
    )  # fmt: skip


@pytest.fixture()
def shared() -> Iterator[Path]:
    """A folder the container's user can reach (pytest's own are its owner's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="prepared-folders-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def small_source(folder: Path, rows: int = 600) -> Path:
    rows_of = np.random.default_rng(0).normal(size=(rows, 8)).astype(np.float32)
    return write_table(folder / "source", rows_of)


def modes(folder: Path) -> dict[str, int]:
    """Each path's permission bits: the folder's as '.', then its files'."""
    paths = [folder, *sorted(folder.iterdir())]
    return {str(path.relative_to(folder)): stat.S_IMODE(path.stat().st_mode) for path in paths}


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_prepare_writes_as_the_umask_says(shared: Path, umask: int) -> None:
    out = shared / "prepared"
    result = run("prepare", str(small_source(shared)), str(out), "--index", "hnsw", umask=umask)
    assert result.returncode == 0, result.stderr
    found = modes(out)
    assert found.pop(".") == 0o777 & ~umask
    assert {"index.faiss", "index.json", "table.json", "vectors.npy"} <= set(found)
    assert set(found.values()) == {0o666 & ~umask}, found


def test_the_containers_user_serves_a_folder_prepared_on_the_host(shared: Path) -> None:
    out = shared / "prepared"
    result = run("prepare", str(small_source(shared)), str(out), "--index", "hnsw")
    assert result.returncode == 0, result.stderr
    assert os.stat(out).st_uid != CONTAINER_USER
    process, base = start_server({}, "--table", f"t={out}", runner=as_container_user())
    try:
        status, info = call(f"{base}/v1/tables/t")
        assert status == 200 and info["index"]["kind"] == "hnsw", info
        assert call(f"{base}/v1/tables/t/neighbors", {"id": 3, "k": 2})[0] == 200
    finally:
        process.terminate()
        process.wait(timeout=30)
        forget(process)


@pytest.mark.parametrize(("hidden", "named"), [("vectors.npy", "vectors.npy"), (".", "table.json")])
def test_what_the_server_may_not_read_stops_start_up_with_one_line(
    shared: Path, hidden: str, named: str
) -> None:
    out = shared / "prepared"
    assert run("prepare", str(small_source(shared)), str(out)).returncode == 0
    (out / hidden).chmod(0o700 if hidden == "." else 0o600)  # the owner's alone, as before
    serve = [sys.executable, "-m", "service", "serve", "--port", str(free_port())]
    result = subprocess.run(
        [*as_container_user(), *serve, "--table", f"t={out}"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    [line] = errors_of(result.stderr)
    assert line.startswith(f"embedding-service: error: {out / named}: cannot read: permission")
    assert f"uid {CONTAINER_USER}" in line and "chmod -R a+rX" in line


def interrupt(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m service ARGS`, sent SIGINT (Ctrl-C) once its index build has begun (its
    progress line says "building"); its exit status and output."""
    command = [sys.executable, "-m", "service", *args]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    with subprocess.Popen(command, **pipes) as process:  # type: ignore[call-overload]
        said = ""
        while "building" not in said:  # read and table done: the build runs
            character = process.stderr.read(1)
            assert character, f"ended before its build: {said}"
            said += character
        process.send_signal(signal.SIGINT)
        said += process.stderr.read()  # through the same buffer: communicate() would skip it
        stdout = process.stdout.read()
        code = process.wait(timeout=300)
    return subprocess.CompletedProcess(command, code, stdout, said)


def interrupt_prepare(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return interrupt("prepare", str(source), str(out), "--index", "hnsw")


@pytest.fixture(scope="module")
def big_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table whose HNSW build takes seconds, so SIGINT lands while it runs."""
    from harness.synthetic_table import write_table as write_binary

    path = tmp_path_factory.mktemp("interrupted") / "big.bin"
    write_binary(path, 60_000, 64, seed=5)
    return path


@pytest.mark.slow
def test_ctrl_c_during_the_index_build_leaves_no_folder(big_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "prepared"
    result = interrupt_prepare(big_source, out)
    assert result.returncode == 130, result.stderr
    assert result.stderr.split("\n")[-2] == (
        f"embedding-service: interrupted: nothing was written, {out} is as it was"
    )
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not list(tmp_path.iterdir())  # nor a hidden staging folder


@pytest.mark.slow
def test_ctrl_c_while_replacing_a_prepared_folder_keeps_the_old_one(
    big_source: Path, tmp_path: Path
) -> None:
    out = tmp_path / "prepared"
    assert run("prepare", str(small_source(tmp_path)), str(out)).returncode == 0
    before = snapshot(tmp_path)
    result = interrupt_prepare(big_source, out)
    assert result.returncode == 130, result.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.slow
def test_ctrl_c_during_index_build_leaves_no_file(big_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "big.faiss"
    result = interrupt("index", "build", str(big_source), "--out", str(out), "--index", "hnsw")
    assert result.returncode == 130, result.stderr
    assert result.stderr.split("\n")[-2].endswith(f"nothing was written, {out} is as it was")
    assert not list(tmp_path.iterdir())

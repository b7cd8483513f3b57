"""scripts/bootstrap installs once: a venv installed from the same lock and pyproject.toml is
left alone, so a second `scripts/serve` starts in seconds (it
once took 24 s of pip every start)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout(tmp_path: Path) -> tuple[Path, Path]:
    """The files bootstrap reads, and a venv whose python only records how it was called."""
    for name in ("scripts/bootstrap", "pyproject.toml", "client/pyproject.toml",
                 "deploy/requirements.lock", "deploy/requirements-test.lock",
                 "service/engine/search/dots.c"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    calls = tmp_path / "calls.log"
    python = tmp_path / ".venv/bin/python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    python.chmod(0o755)
    return tmp_path, calls


def bootstrap(folder: Path, *extras: str) -> str:
    """Run scripts/bootstrap; what it said on stderr."""
    return subprocess.run(
        ["bash", "scripts/bootstrap", *extras],
        cwd=folder, check=True, timeout=60, stderr=subprocess.PIPE, text=True,
    ).stderr  # fmt: skip


def installs(calls: Path) -> int:
    return (
        sum("pip install" in line for line in calls.read_text().splitlines())
        if calls.exists()
        else 0
    )


def test_a_second_run_installs_nothing(tmp_path: Path) -> None:
    folder, calls = checkout(tmp_path)
    bootstrap(folder)
    assert installs(calls) == 2  # the lock, then the project itself
    bootstrap(folder)
    assert installs(calls) == 2


def test_an_install_says_what_it_does_and_a_second_run_is_silent(tmp_path: Path) -> None:
    # The first scripts/serve installs for about a minute behind pip's -q: it must say so.
    folder, _ = checkout(tmp_path)
    said = bootstrap(folder).splitlines()
    assert said[0].startswith("bootstrap: installing the dependencies into .venv from deploy/")
    assert "about a minute" in said[0] and said[-1].startswith("bootstrap: done in ")
    assert bootstrap(folder) == ""


def test_a_changed_kernel_source_installs_again(tmp_path: Path) -> None:
    # The editable install compiles dots.c once: a changed source must be built again.
    folder, calls = checkout(tmp_path)
    bootstrap(folder)
    with (folder / "service/engine/search/dots.c").open("a") as source:
        source.write("/* changed */\n")
    bootstrap(folder)
    assert installs(calls) == 4


def test_a_changed_lock_or_extra_installs_again(tmp_path: Path) -> None:
    folder, calls = checkout(tmp_path)
    bootstrap(folder, "test")
    bootstrap(folder)  # a test venv serves as it is
    assert installs(calls) == 3  # the lock, the project, the client
    with (folder / "deploy/requirements-test.lock").open("a") as lock:
        lock.write("# changed\n")
    bootstrap(folder, "test")
    assert installs(calls) == 6

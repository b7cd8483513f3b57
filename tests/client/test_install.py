"""The README's client line, as a newcomer types it: `pip install ./client` in a fresh venv
installs the client, httpx and numpy, nothing of the server and no torch, in under 100 MB."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# The client and what httpx and numpy bring; anything else (FastAPI, FAISS, torch) is a leak.
EXPECTED = {
    "embedding-table-client", "httpx", "httpcore", "h11", "anyio", "idna", "certifi", "sniffio",
    "numpy", "typing-extensions", "pip", "setuptools", "wheel",
}  # fmt: skip


def test_the_client_installs_alone_from_a_clone(tmp_path: Path) -> None:
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = str(environment / "bin" / "python")
    install = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "./client"]
    result = subprocess.run(install, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    )
    installed = {line.split("==")[0].lower().replace("_", "-") for line in listed.stdout.split()}
    assert installed <= EXPECTED, installed - EXPECTED
    check = "from embedding_service import AsyncClient, Client, RemoteKeyedVectors"
    assert subprocess.run([python, "-c", check], timeout=60).returncode == 0
    site = next((environment / "lib").glob("python3*/site-packages"))
    size = sum(path.stat().st_size for path in site.rglob("*") if path.is_file())
    assert size < 100 * 2**20, f"{size / 2**20:.0f} MiB"

"""A real server process the test controls: its signals, its exit, its file of tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from loadtests.server import free_port, wait_until_ready


@contextmanager
def server_process(env: Mapping[str, str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`python -m service serve` with `env`; the process and its base URL; killed if still up."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(port)],
        env={**os.environ, "EMBEDDING_SERVICE_LOG_LEVEL": "warning", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(base, process)
        yield process, base
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def call(url: str, body: Any = None, headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
    """GET (or POST `body` as JSON); the status and parsed answer, for errors too."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"content-type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())

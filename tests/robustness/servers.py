"""A real server process the test controls: its signals, its exit, its file of tables."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from harness.server import forget, start_server


@contextmanager
def server_process(
    env: Mapping[str, str], open_files: int | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`python -m service serve` with `env`; the process and its base URL; killed if still up."""
    process, base = start_server(env, open_files=open_files)
    try:
        yield process, base
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        forget(process)


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

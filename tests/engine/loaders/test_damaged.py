"""Damaged files: a valid table or TableLoadError, never anything else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.errors import TableLoadError
from service.engine.loaders import load_table
from service.engine.tables.table import EmbeddingTable
from tests.engine.loaders.helpers import TOKENS, write_gensim


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("samples")
    vectors = np.random.default_rng(1).standard_normal((len(TOKENS), 3)).astype(np.float32)
    return {
        kind: write_gensim(folder / f"sample.{kind}", vectors, binary=kind == "bin").read_bytes()
        for kind in ("bin", "txt")
    }


def load_damaged(folder: Path, kind: str, data: bytes) -> None:
    path = folder / f"damaged.{kind}"
    path.write_bytes(data)
    try:
        table = load_table(path)
    except TableLoadError as error:
        assert error.path == str(path)
    else:
        assert isinstance(table, EmbeddingTable) and table.rows > 0


def truncated(sample: bytes, data: st.DataObject) -> bytes:
    """The sample cut anywhere."""
    return sample[: data.draw(st.integers(0, len(sample)), label="cut")]


def garbled(sample: bytes, data: st.DataObject) -> bytes:
    """The sample with one to four of its bytes overwritten."""
    damaged = bytearray(sample)
    changes = st.tuples(st.integers(0, len(damaged) - 1), st.integers(0, 255))
    for position, value in data.draw(st.lists(changes, min_size=1, max_size=4), label="changes"):
        damaged[position] = value
    return bytes(damaged)


@pytest.mark.parametrize("damage", [truncated, garbled])
@settings(max_examples=100, deadline=None)
@given(kind=st.sampled_from(["bin", "txt"]), data=st.data())
def test_any_damage_loads_or_fails_cleanly(
    samples: dict[str, bytes],
    tmp_path_factory: pytest.TempPathFactory,
    damage: Callable[[bytes, st.DataObject], bytes],
    kind: str,
    data: st.DataObject,
) -> None:
    load_damaged(tmp_path_factory.getbasetemp(), kind, damage(samples[kind], data))

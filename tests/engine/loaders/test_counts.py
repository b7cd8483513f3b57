"""Counts files: `token count` lines become the table's count column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from service.engine.errors import TableLoadError
from service.engine.loaders.counts import read_counts, with_counts
from service.engine.tables.table import EmbeddingTable


def test_counts_split_at_the_last_space_or_tab(tmp_path: Path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_text("the 100\nNew York\t7\n\nthe 3\n", encoding="utf-8")
    assert read_counts(path) == {"the": 100, "New York": 7}  # the first count of a token wins


def test_rows_without_a_count_get_zero(tmp_path: Path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_text("b 5\nzz 9\n", encoding="utf-8")
    table = EmbeddingTable(["a", "b"], np.ones((2, 3), dtype=np.float32), {"pos": ["x", "y"]})
    counted = with_counts(table, path)
    assert counted.metadata == {"pos": ["x", "y"], "count": [0, 5]}
    assert counted.vectors is table.vectors or np.shares_memory(counted.vectors, table.vectors)


@pytest.mark.parametrize("line", ["secret-token", "token -3", "token 1.5", "token many"])
def test_a_bad_line_is_named_without_quoting_it(tmp_path: Path, line: str) -> None:
    path = tmp_path / "vocab.txt"
    path.write_text(f"ok 1\n{line}\n", encoding="utf-8")
    with pytest.raises(TableLoadError, match="line 2") as raised:
        read_counts(path)
    assert line not in raised.value.message

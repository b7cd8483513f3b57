"""Drift between two versions: exact against a plain numpy reference, chunks and ties included."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from service.engine.analysis import drift
from service.engine.tables import checkpoints
from service.engine.tables.table import EmbeddingTable
from tests.checkpoint_sets import synthetic_rows


def reference(before: np.ndarray, after: np.ndarray) -> dict[str, np.ndarray]:
    """Row by row, in float64, the obvious way."""
    a, b = before.astype(np.float64), after.astype(np.float64)
    norms_a, norms_b = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosines = (a * b).sum(axis=1) / (norms_a * norms_b)
    cosines[(norms_a == 0) | (norms_b == 0)] = np.nan
    return {
        "cosines": cosines,
        "distances": np.linalg.norm(b - a, axis=1),
        "source_norms": norms_a,
        "target_norms": norms_b,
    }


def ranked(cosines: np.ndarray, rows: np.ndarray, limit: int, highest: bool) -> np.ndarray:
    keep = np.flatnonzero(~np.isnan(cosines))
    keys = -cosines[keep] if highest else cosines[keep]
    return keep[np.lexsort((rows[keep], keys))][:limit]


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 7 rows, so that every pass crosses chunk boundaries."""
    monkeypatch.setattr(checkpoints, "CHUNK_ROWS", 7)
    monkeypatch.setattr(drift, "CHUNK_ROWS", 7)


def test_movement_matches_numpy_row_by_row(small_chunks) -> None:
    _, _, rows = synthetic_rows(tokens=60, checkpoints=3)
    before, after = rows[0].copy(), rows[2].copy()
    before[5] = 0  # a zero row has no cosine
    every = np.arange(60)
    movement = drift.measure(before, after, every, every)
    expected = reference(before, after)
    for name, values in expected.items():
        np.testing.assert_allclose(getattr(movement, name), values, rtol=1e-12, equal_nan=True)
    assert movement.directed.size == 59


@pytest.mark.parametrize("limit", [1, 5, 40, 100])
def test_rankings_are_exact_with_ties(limit: int, small_chunks) -> None:
    _, _, rows = synthetic_rows(tokens=80, checkpoints=2)
    before, after = rows[0].copy(), rows[1].copy()
    # Twenty identical rows that did not move, and ten that moved identically: ties.
    before[20:40], after[20:40] = before[20], before[20]
    before[50:60], after[50:60] = before[50], after[50]
    every = np.arange(80)
    movement = drift.measure(before, after, every, every)
    for highest, function in ((False, drift.most_moved), (True, drift.least_moved)):
        expected = ranked(movement.cosines, every, limit, highest)
        np.testing.assert_array_equal(function(movement, limit), expected)


def test_two_tables_share_tokens_in_the_from_tables_order() -> None:
    rng = np.random.default_rng(1)
    source = EmbeddingTable(["a", "b", "c", "d"], rng.normal(size=(4, 3)))
    target = EmbeddingTable(["d", "x", "b", "a"], rng.normal(size=(4, 3)))
    source_rows, target_rows = drift.shared_rows(source, target)
    assert source_rows.tolist() == [0, 1, 3] and target_rows.tolist() == [3, 2, 0]
    movement = drift.measure(source.vectors, target.vectors, source_rows, target_rows)
    expected = reference(source.vectors[[0, 1, 3]], target.vectors[[3, 2, 0]])
    np.testing.assert_allclose(movement.cosines, expected["cosines"], rtol=1e-12)
    alone = EmbeddingTable(["q"], rng.normal(size=(1, 3)))
    assert drift.shared_rows(source, alone)[0].size == 0


def test_count_figures_are_scipys_spearman() -> None:
    _, counts, rows = synthetic_rows(tokens=50, checkpoints=2)
    every = np.arange(50)
    movement = drift.measure(rows[0], rows[1], every, every)
    counts = counts.astype(np.float64)
    counts[:3] = 0  # rows without a count are left out
    figures = drift.count_figures(movement, counts)
    expected = stats.spearmanr(np.log(counts[3:]), movement.distances[3:])
    assert figures.rows == 47
    assert figures.distance.r == pytest.approx(expected.statistic, abs=1e-12)
    assert figures.distance.p_value == pytest.approx(expected.pvalue, rel=1e-6)


def test_neighbour_lists_compared() -> None:
    source = EmbeddingTable(["a", "b", "c", "d", "e"], np.eye(5))
    target = EmbeddingTable(["a", "b", "c", "d", "f"], np.eye(5))
    change = drift.compare_neighbours(["b", "c", "e"], ["c", "d", "f"], source, target)
    assert change.overlap == 1
    assert (change.entered, change.left, change.unshared) == (["d"], ["b"], ["e", "f"])

"""Trajectories and the training summary against plain numpy (and scipy's Spearman)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from service.config import TableSpec
from service.engine.analysis import trajectory
from service.engine.analysis.projection import Projector
from service.engine.tables import checkpoints
from service.engine.tables.checkpoints import Versions
from service.loading.tables import read_spec
from tests.checkpoint_sets import synthetic_rows, write_checkpoint_set


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Versions:
    folder = write_checkpoint_set(tmp_path_factory.mktemp("run") / "run")
    return Versions(read_spec(TableSpec(name="run", checkpoints=folder)), "run")


def test_rows_are_followed_in_the_last_checkpoints_basis(versions: Versions) -> None:
    _, _, rows = synthetic_rows()
    projector = Projector(versions.table)
    basis = projector.basis()
    chosen = np.array([0, 3, 77, 150, 199])
    path = trajectory.follow(versions, chosen, basis, 2)
    start = rows[0][chosen].astype(np.float64)
    for c, matrix in enumerate(rows):
        raw = matrix[chosen].astype(np.float64)
        norms = np.linalg.norm(raw, axis=1)
        expected = (raw / norms[:, None] - basis.mean) @ basis.components[:2].T
        np.testing.assert_allclose(path.coordinates[c], expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(path.norms[c], norms, rtol=1e-12)
        cosines = (raw * start).sum(axis=1) / (norms * np.linalg.norm(start, axis=1))
        np.testing.assert_allclose(path.cosines[c], cosines, rtol=1e-12)
        np.testing.assert_allclose(path.distances[c], np.linalg.norm(raw - start, axis=1))
    # At the last checkpoint, exactly where /projection puts the rows.
    np.testing.assert_array_equal(path.coordinates[-1], projector.project_rows(basis, chosen, 2))


def test_summary_per_checkpoint_matches_numpy_and_scipy(versions: Versions, monkeypatch) -> None:
    monkeypatch.setattr(trajectory, "CHUNK_ROWS", 33)
    monkeypatch.setattr(checkpoints, "CHUNK_ROWS", 33)
    _, counts, rows = synthetic_rows()
    summary = trajectory.summarise(versions)
    assert (summary.count_column, summary.counted_rows) == ("count", 200)
    start = rows[0].astype(np.float64)
    for figures, matrix in zip(summary.checkpoints, rows, strict=True):
        raw = matrix.astype(np.float64)
        distances = np.linalg.norm(raw - start, axis=1)
        norms = np.linalg.norm(raw, axis=1)
        assert figures.mean_distance == pytest.approx(distances.mean(), rel=1e-12)
        assert figures.mean_norm == pytest.approx(norms.mean(), rel=1e-12)
        expected = stats.spearmanr(np.log(counts), norms).statistic
        assert figures.norm_by_count.r == pytest.approx(expected, abs=1e-12)
    # Checkpoint 0 has not moved at all: no distance correlation there, and rare rows stall.
    assert summary.checkpoints[0].distance_by_count is None
    assert summary.checkpoints[-1].distance_by_count.r > 0.9


def test_a_plain_table_without_counts_has_one_checkpoint_and_no_correlations(minilm) -> None:
    summary = trajectory.summarise(Versions(minilm, "minilm"))
    [only] = summary.checkpoints
    assert summary.count_column is None and summary.counted_rows == 0
    assert (only.mean_distance, only.distance_by_count, only.norm_by_count) == (0.0, None, None)
    assert only.mean_cosine == pytest.approx(1.0)

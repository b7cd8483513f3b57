"""PCA projection against an independent reference: numpy's SVD of the same centred sample."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from service.engine.analysis.projection import Basis, Projector, fit_sample
from service.engine.errors import DimensionMismatch, InvalidQuery, ZeroVector
from service.engine.tables.table import EmbeddingTable
from service.loading.registry import Registry


def reference(vectors: np.ndarray, rows: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """Components and explained variance ratios from the SVD of the centred unit rows."""
    sample = vectors[rows].astype(np.float64)
    sample /= np.linalg.norm(sample, axis=1, keepdims=True)
    centred = sample - sample.mean(axis=0)
    _, singular, right = np.linalg.svd(centred, full_matrices=False)
    variances = singular**2
    return right[:dims], variances[:dims] / variances.sum()


def assert_matches_reference(basis: Basis, vectors: np.ndarray, rows: np.ndarray) -> None:
    components, ratios = reference(vectors, rows, basis.dims)
    # Equal up to sign: |<ours, reference>| is 1 for every component.
    agreement = np.abs(np.sum(basis.components * components, axis=1))
    np.testing.assert_allclose(agreement, 1.0, atol=1e-9)
    np.testing.assert_allclose(basis.explained_variance_ratio, ratios, atol=1e-6, rtol=0)


def table_of(vectors: np.ndarray) -> EmbeddingTable:
    return EmbeddingTable([f"t{i}" for i in range(len(vectors))], vectors)


def anisotropic(rows: int, width: int, seed: int = 1) -> np.ndarray:
    """Gaussian rows with well separated variances, so the components are unique."""
    rng = np.random.default_rng(seed)
    scales = np.linspace(3.0, 0.2, width)
    return (rng.normal(size=(rows, width)) * scales + 0.5).astype(np.float32)


def test_the_default_table_matches_the_svd_reference(minilm: EmbeddingTable) -> None:
    projector = Projector(minilm)
    basis = projector.basis()
    assert basis.sample_rows == minilm.rows  # 30,522 rows: under the 50,000 cap, all are used
    assert_matches_reference(basis, minilm.vectors, projector.directional_rows)


def test_a_table_above_the_cap_is_fitted_from_its_seeded_sample() -> None:
    vectors = anisotropic(5_000, 12)
    projector = Projector(table_of(vectors))
    basis = projector.basis(sample_limit=700)
    assert basis.sample_rows == 700
    sample = fit_sample(projector.directional_rows, 700)
    assert sample.size == 700 and np.all(np.diff(sample) > 0)
    assert_matches_reference(basis, vectors, sample)
    # Seeded: a new projector of the same table draws the same sample and the same picture.
    again = Projector(table_of(vectors)).basis(sample_limit=700)
    np.testing.assert_array_equal(again.components, basis.components)


def test_zero_rows_are_left_out_of_the_fit_and_the_selections() -> None:
    vectors = anisotropic(60, 6)
    padded = np.concatenate([np.zeros((3, 6), np.float32), vectors])
    projector = Projector(table_of(padded))
    basis = projector.basis()
    assert basis.sample_rows == 60
    assert_matches_reference(basis, padded, np.arange(3, 63))
    assert projector.select("first", 5).tolist() == [3, 4, 5, 6, 7]
    assert 0 not in projector.select("random", 50, seed=3)
    assert projector.select("random", 1000).tolist() == list(range(3, 63))
    with pytest.raises(ZeroVector, match="row 1"):
        projector.named_rows([5, 1])
    with pytest.raises(ZeroVector):
        projector.project_vectors(basis, [[0.0] * 6], 2)


def test_signs_make_the_largest_coordinate_positive(minilm: EmbeddingTable) -> None:
    components = Projector(minilm).basis().components
    largest = components[np.arange(3), np.abs(components).argmax(axis=1)]
    assert np.all(largest > 0)


def test_rows_and_raw_vectors_land_on_the_same_coordinates(minilm: EmbeddingTable) -> None:
    projector = Projector(minilm)
    basis = projector.basis()
    rows = np.array([2332, 3035, 5465])  # king, queen, kings
    placed = projector.project_rows(basis, rows, 3)
    raw = projector.project_vectors(basis, (minilm.vectors[rows] * 7.5).tolist(), 3)
    np.testing.assert_allclose(raw, placed, atol=1e-9)
    # A row's coordinates do not depend on the other rows projected with it.
    everything = projector.project_rows(basis, np.arange(6000), 2)
    np.testing.assert_array_equal(projector.project_rows(basis, rows[:1], 2), placed[:1, :2])
    np.testing.assert_array_equal(everything[rows[:2]], placed[:2, :2])


def test_invalid_inputs_are_refused() -> None:
    projector = Projector(table_of(anisotropic(10, 2)))
    basis = projector.basis()
    assert basis.dims == 2
    with pytest.raises(InvalidQuery, match="at most 2 dims"):
        projector.check_dims(basis, 3)
    with pytest.raises(DimensionMismatch):
        projector.project_vectors(basis, [[1.0, 2.0, 3.0]], 2)
    lonely = np.zeros((3, 4), np.float32)
    lonely[1] = 1
    with pytest.raises(InvalidQuery, match="at least 2 rows"):
        Projector(table_of(lonely)).basis()


def test_the_basis_is_fitted_once_per_load_and_dropped_on_reload() -> None:
    registry = Registry()
    vectors = anisotropic(50, 5)
    first = registry.load("t", lambda: table_of(vectors))
    basis = first.projector.basis()
    assert first.projector.basis() is basis
    second = registry.load("t", lambda: table_of(vectors))
    assert second.projector is not first.projector
    assert second.projector.basis() is not basis


tables = st.integers(3, 40).flatmap(
    lambda rows: st.integers(2, 8).flatmap(
        lambda width: arrays(
            np.float32,
            (rows, width),
            elements=st.floats(-10, 10, width=32, allow_subnormal=False),
        )
    )
)


@settings(max_examples=60, deadline=None)
@given(vectors=tables, scale=st.floats(0.01, 100))
def test_pca_properties(vectors: np.ndarray, scale: float) -> None:
    projector = Projector(table_of(vectors))
    if projector.directional_rows.size < 2:
        return
    basis = projector.basis()
    components = basis.components
    # Orthonormal components, shares sorted and together at most the whole variance.
    np.testing.assert_allclose(components @ components.T, np.eye(basis.dims), atol=1e-9)
    ratios = basis.explained_variance_ratio
    assert np.all(np.diff(ratios) <= 1e-12) and 0 <= ratios.sum() <= 1 + 1e-9
    # The fitted rows are centred: their coordinates average to zero.
    coordinates = projector.project_rows(basis, projector.directional_rows, basis.dims)
    np.testing.assert_allclose(coordinates.mean(axis=0), 0, atol=1e-9)
    # Spherize: a raw vector lands where its direction does, whatever its length.
    rows = projector.directional_rows[:3]
    scaled = (vectors[rows].astype(np.float64) * scale).tolist()
    np.testing.assert_allclose(
        projector.project_vectors(basis, scaled, 2), coordinates[:3, :2], atol=1e-9
    )


@settings(max_examples=60, deadline=None)
@given(vectors=tables, points=st.integers(1, 50), seed=st.integers(0, 2**32 - 1))
def test_selection_properties(vectors: np.ndarray, points: int, seed: int) -> None:
    projector = Projector(table_of(vectors))
    usable = projector.directional_rows
    for selection in ("first", "random"):
        rows = projector.select(selection, points, seed)  # type: ignore[arg-type]
        assert rows.size == min(points, usable.size)
        assert np.all(np.diff(rows) > 0) and set(rows.tolist()) <= set(usable.tolist())
    np.testing.assert_array_equal(
        projector.select("random", points, seed), projector.select("random", points, seed)
    )


@pytest.mark.parametrize(("rows", "width"), [(9, 40), (2, 40), (60, 5)])
def test_a_fit_on_a_selection_is_the_pca_of_exactly_those_rows(rows: int, width: int) -> None:
    vectors = anisotropic(300, width)
    projector = Projector(table_of(vectors))
    chosen = np.random.default_rng(rows).choice(300, size=rows, replace=False)
    basis = projector.fit_selection(chosen)
    assert basis.sample_rows == rows and basis.dims == min(3, rows)
    if rows > 2:  # two rows have one direction of variance: the second component is arbitrary
        assert_matches_reference(basis, vectors, chosen)
    placed = projector.project_rows(basis, chosen, basis.dims)
    units = vectors[chosen].astype(np.float64)
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    expected = (units - units.mean(axis=0)) @ basis.components.T
    np.testing.assert_allclose(placed, expected, rtol=1e-9, atol=1e-12)
    assert basis is not projector.basis()

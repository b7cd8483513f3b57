"""The under-training indicators against independent numpy references, and their ranking."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from service.engine.analysis.diagnostics import Reference, TableDiagnostics, count_report
from service.engine.analysis.indicators import first_component, reference_cosines
from service.engine.analysis.references import (
    DEFAULT_PATTERN,
    check_reference,
    default_rows,
    matching_rows,
)
from service.engine.analysis.statistics import average_ranks, pearson, spearman
from service.engine.errors import InvalidQuery
from service.engine.search.store import RowStore
from service.engine.tables.table import EmbeddingTable


def table_of(vectors: np.ndarray, metadata: dict | None = None) -> EmbeddingTable:
    tokens = [f"[unused{i}]" if i < 6 else f"word{i}" for i in range(len(vectors))]
    return EmbeddingTable(tokens, vectors, metadata or {})


def random_table(rows: int = 300, width: int = 12, seed: int = 0) -> EmbeddingTable:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(rows, width)) * rng.uniform(0.2, 3.0, size=(rows, 1))
    vectors[:6] = rng.normal(0.5, 0.05, size=(6, width))  # alike, as never-trained rows are
    vectors[7] = 0  # a padding row
    return table_of(vectors.astype(np.float32))


def reference_indicator(vectors: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The paper's computation, written out with numpy's SVD on a float64 copy."""
    matrix = vectors.astype(np.float64)
    _, _, right = np.linalg.svd(matrix - matrix.mean(axis=0), full_matrices=False)
    first = right[0]
    without = matrix - np.outer(matrix @ first, first)
    mean = without[reference].mean(axis=0)
    scale = np.linalg.norm(without, axis=1) * np.linalg.norm(mean)
    return (without @ mean) / np.clip(scale, 1e-6, None)


def test_first_component_is_numpy_svds() -> None:
    table = random_table()
    component = first_component(table.vectors)
    matrix = table.vectors.astype(np.float64)
    _, _, right = np.linalg.svd(matrix - matrix.mean(axis=0), full_matrices=False)
    assert abs(component.direction @ right[0]) == pytest.approx(1.0, abs=1e-10)
    assert np.allclose(component.along, matrix @ component.direction)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_cosine_is_the_papers_computation(seed: int) -> None:
    table = random_table(seed=seed)
    store = RowStore.of(table)
    reference = np.array([0, 2, 4])
    ours = reference_cosines(
        table.vectors, store.norms64, first_component(table.vectors), reference
    )
    # The component comes from float32 chunk products (summed in float64): within 1e-5.
    assert np.allclose(ours, reference_indicator(table.vectors, reference), atol=1e-5)
    assert ours[7] == 0.0  # the zero row: the clipped denominator gives 0, as in the paper


def test_held_out_reference_rows_are_the_top_suspects() -> None:
    table = random_table()
    diagnostics = TableDiagnostics(table, RowStore.of(table))
    analysis = diagnostics.by_reference(Reference(np.array([0, 2, 4]), "even rows"))
    ranking = analysis.ranking
    assert set(ranking.order[:3].tolist()) == {1, 3, 5}  # the held-out alike rows
    assert not set(ranking.order.tolist()) & {0, 2, 4, 7}  # reference and zero rows unranked
    assert ranking.candidates == 300 - 3 - 1
    values = ranking.values[ranking.order]
    assert np.all(np.diff(values) <= 0)  # most similar first


def test_default_pattern_finds_reference_rows_else_ranks_by_norm() -> None:
    table = random_table()
    diagnostics = TableDiagnostics(table, RowStore.of(table))
    default = diagnostics.default().ranking
    assert default.indicator == "reference_cosine"
    assert default.reference.tolist() == [0, 1, 2, 3, 4, 5]
    llama = ["<|reserved_special_token_3|>", "<unused12>", "[unused]", "x[unused1]"]
    assert default_rows(llama).tolist() == [0, 1]
    plain = EmbeddingTable([f"w{i}" for i in range(table.rows)], table.vectors)
    fallback = TableDiagnostics(plain, RowStore.of(plain)).default().ranking
    assert fallback.indicator == "norm" and "matches no row" in fallback.why


def test_norm_ranking_orders_by_norm_and_leaves_zero_rows_out() -> None:
    table = random_table()
    store = RowStore.of(table)
    ranking = TableDiagnostics(table, store).by_norm().ranking
    assert 7 not in ranking.order
    expected = [row for row in np.argsort(store.norms64, kind="stable") if row != 7]
    assert ranking.order.tolist() == expected
    suspects = ranking.suspects(0.02)
    assert suspects.size == 5  # floor(0.02 * 299)
    percentiles = ranking.percentiles(suspects)
    assert percentiles.tolist() == pytest.approx([100 * (i + 1) / 299 for i in range(5)])


@settings(max_examples=30, deadline=None)
@given(
    fraction=st.floats(0.001, 0.5),
    ties=st.integers(1, 20),
)
def test_suspects_are_the_fraction_most_suspect(fraction: float, ties: int) -> None:
    rng = np.random.default_rng(ties)
    vectors = rng.normal(size=(200, 3)).astype(np.float32)
    vectors[:ties] = vectors[0]  # equal norms: ties keep row order
    table = EmbeddingTable([f"w{i}" for i in range(200)], vectors)
    ranking = TableDiagnostics(table, RowStore.of(table)).by_norm().ranking
    suspects = ranking.suspects(fraction)
    assert suspects.size == max(1, int(fraction * 200 + 1e-9))
    rest = np.setdiff1d(np.arange(200), suspects)
    norms = RowStore.of(table).norms64
    assert norms[suspects].max() <= norms[rest].min()
    assert np.all(np.diff(ranking.percentiles(suspects)) >= 0)


def test_norm_summary_percentiles_and_zero_rows() -> None:
    table = random_table()
    store = RowStore.of(table)
    summary = TableDiagnostics(table, store).norm_summary()
    expected = np.percentile(np.linalg.norm(table.vectors.astype(np.float64), axis=1), 25)
    assert summary.percentiles[25] == pytest.approx(expected)
    assert summary.zero_rows.tolist() == [7]


def test_count_report_is_scipys_spearman_on_log_counts() -> None:
    rng = np.random.default_rng(3)
    counts = np.round(np.exp(rng.uniform(0, 8, size=500)))
    counts[:20] = 0  # no count: left out
    norms = np.log1p(counts) + rng.normal(0, 0.5, size=500)
    values = -norms
    report = count_report("count", counts, norms, values)
    kept = counts > 0
    expected = stats.spearmanr(np.log(counts[kept]), norms[kept])
    assert report.rows == 480
    assert report.norm is not None and report.indicator is not None
    assert report.norm.r == pytest.approx(expected.statistic, abs=1e-12)
    assert report.norm.p_value == pytest.approx(expected.pvalue, rel=1e-6)
    assert report.indicator.r == pytest.approx(-expected.statistic, abs=1e-12)
    assert sum(b.rows for b in report.bins) == 480
    assert [b.low for b in report.bins] == sorted(b.low for b in report.bins)


def test_counts_come_from_a_numeric_count_column() -> None:
    table = random_table()
    counts = list(range(table.rows, 0, -1))
    with_counts = EmbeddingTable(table.tokens, table.vectors, {"Count": counts})
    analysis = TableDiagnostics(with_counts, RowStore.of(with_counts)).by_norm()
    assert analysis.counts is not None and analysis.counts.column == "Count"
    words = EmbeddingTable(table.tokens, table.vectors, {"count": ["x"] * table.rows})
    assert TableDiagnostics(words, RowStore.of(words)).by_norm().counts is None


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=3, max_size=40), st.integers(0, 2**32 - 1))
def test_statistics_equal_scipys(values: list[int], seed: int) -> None:
    x = np.array(values, dtype=np.float64)
    y = np.random.default_rng(seed).normal(size=x.size).round(1)
    assert np.array_equal(average_ranks(x), stats.rankdata(x))
    ours, theirs = spearman(x, y), None
    if np.ptp(x) > 0 and np.ptp(y) > 0:
        theirs = stats.spearmanr(x, y)
        linear = stats.pearsonr(x, y)
        assert ours is not None and ours.r == pytest.approx(theirs.statistic, abs=1e-9)
        mine = pearson(x, y)
        assert mine is not None
        # Where r is exactly +-1 (decided in exact arithmetic), p is 0: scipy's r there is
        # often 1 ulp short of 1, and its p (1e-8 for 3 pairs) is that rounding's, not r's.
        for result, exactly_one, oracle in (
            (ours, _exactly_one(stats.rankdata(x), stats.rankdata(y)), theirs.pvalue),
            (mine, _exactly_one(x, y), linear.pvalue),
        ):
            if exactly_one:
                assert abs(result.r) == 1.0 and result.p_value == 0.0
            else:
                assert result.p_value == pytest.approx(oracle, rel=1e-6, abs=1e-12)
    else:
        assert ours is None


def _exactly_one(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether Pearson's r of x and y is exactly +-1, in rational arithmetic (x and y hold
    integers, halves and tenths, each exact as a fraction of its decimal form)."""
    xs = [Fraction(str(v)) for v in x]
    ys = [Fraction(str(v)) for v in y]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True))
    sxx = sum((a - mx) ** 2 for a in xs)
    syy = sum((b - my) ** 2 for b in ys)
    return sxy * sxy == sxx * syy


def test_minilm_reference_rows_are_berts_unused_tokens(minilm: EmbeddingTable) -> None:
    rows = default_rows(minilm.tokens)
    assert np.array_equal(rows, matching_rows(minilm.tokens, DEFAULT_PATTERN))  # re == RE2
    assert rows.size == 994
    assert {minilm.tokens[r] for r in rows} == {f"[unused{i}]" for i in range(994)}


def test_catastrophic_pattern_is_matched_in_linear_time() -> None:
    # Python's re would take about 2**20000 steps here (the test would never end); RE2 is linear.
    tokens = ["a" * 20_000 + "!", "a" * 5_000, "b"]
    rows = matching_rows(tokens, "(a+)+$")
    assert rows.tolist() == [1]  # the run of a's before "!" does not end the token


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [("(", "missing )"), (r"(a)\1", "invalid escape"), ("(?=a)", "invalid perl operator")],
)
def test_patterns_re2_cannot_match_are_invalid_queries(pattern: str, problem: str) -> None:
    with pytest.raises(InvalidQuery, match="not a regular expression") as raised:
        matching_rows(["a"], pattern)
    assert problem in raised.value.message


def test_a_reference_must_be_some_rows_and_at_most_half() -> None:
    with pytest.raises(InvalidQuery, match="matches no row"):
        check_reference(np.empty(0, dtype=np.int64), 10, "the reference pattern")
    with pytest.raises(InvalidQuery, match="more than half"):
        check_reference(np.arange(6), 10, "the reference pattern")
    assert check_reference(np.arange(5), 10, "x").size == 5

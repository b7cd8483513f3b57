"""Approximate indexes (real FAISS): candidates rescored exactly, exclusions and restrict kept,
recall measured, a saved index checked against its table."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import faiss
import numpy as np
import pytest

from service.engine.errors import InvalidQuery, LimitExceeded, TableLoadError
from service.engine.indexes.building import Indexing
from service.engine.indexes.files import load_index, save_index
from service.engine.search.approximate import IndexParameters, check_options
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import AnalogyQuery, NeighborQuery, SearchOptions, Term
from service.engine.tables.prepared import fingerprint
from service.engine.tables.table import EmbeddingTable

ROWS, WIDTH = 6000, 24
EXACT = SearchOptions(exact=True)


def clustered(rows: int = ROWS, seed: int = 0) -> EmbeddingTable:
    """Rows around 60 centres (structure an index can find), one zero row."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(60, WIDTH))
    vectors = centres[rng.integers(0, 60, rows)] + 0.4 * rng.normal(size=(rows, WIDTH))
    vectors[7] = 0
    return EmbeddingTable([f"w{i}" for i in range(rows)], vectors.astype(np.float32))


@pytest.fixture(scope="module", params=["hnsw", "hnswsq", "ivf", "ivfpq", "fastscan"])
def indexed(request: pytest.FixtureRequest) -> Indexing:
    table = clustered()
    # Fast-scan at its defaults: one dimension a 4-bit code, k_factor 4.
    pq_m = 8 if request.param == "ivfpq" else 0
    parameters = IndexParameters(kind=request.param, pq_m=pq_m).resolved(ROWS, WIDTH, "test")
    parameters = replace(parameters, nprobe=parameters.nlist // 2)
    indexing = Indexing(CosineSearch(table), parameters)
    indexing.build()
    return indexing


def test_on_ready_sees_the_recall_before_the_state_says_ready() -> None:
    # The service publishes its gauges there: whoever sees "ready" must find them set.
    parameters = IndexParameters(kind="hnsw").resolved(2000, WIDTH, "test")
    indexing = Indexing(CosineSearch(clustered(rows=2000)), parameters)
    seen: list[tuple[str, float | None]] = []
    indexing.on_ready = lambda ready: seen.append(
        (ready.facts()["state"], ready.facts()["recall_at_10"])
    )
    indexing.build()
    [(state, recall)] = seen
    assert state == "measuring" and recall is not None
    assert indexing.facts()["state"] == "ready"


def row_query(index: CosineSearch, row: int, k: int, **options: object) -> NeighborQuery:
    direction = index.store.directions(np.array([row]))[0]
    return NeighborQuery(direction, k, frozenset({row}), **options)  # type: ignore[arg-type]


def test_recall_is_measured_against_the_exact_path(indexed: Indexing) -> None:
    facts = indexed.facts()
    assert facts["state"] == "ready" and facts["recall_queries"] == 200
    assert facts["recall_at_10"] >= 0.9
    assert facts["bytes"] > 0 and indexed.search.approximate is not None


def test_every_reported_score_is_the_exact_cosine(indexed: Indexing) -> None:
    index = indexed.search
    queries = [row_query(index, row, 10) for row in range(100, 160)]
    approximate = index.neighbors(queries)
    exact = index.neighbors([replace(q, options=EXACT) for q in queries])
    matched = 0
    for found, truth in zip(approximate, exact, strict=True):
        assert (np.diff(found.scores) <= 0).all() and len(found.ids) == 10
        common = np.intersect1d(found.ids, truth.ids)
        truth_scores = dict(zip(truth.ids.tolist(), truth.scores.tolist(), strict=True))
        assert all(found.scores[found.ids == row][0] == truth_scores[row] for row in common)
        matched += common.size
    assert matched >= 0.9 * 10 * len(queries)


def test_every_returned_score_is_the_float64_cosine_of_its_row(indexed: Indexing) -> None:
    # Codes only rank candidates: each answer's score is recomputed from the table's own row.
    index = indexed.search
    rows = index.table.vectors.astype(np.float64)
    for row in range(500, 520):
        query = row_query(index, row, 10)
        found = index.neighbors([query])[0]
        unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-300)
        expected = unit[found.ids] @ (rows[row] / np.linalg.norm(rows[row]))
        np.testing.assert_allclose(found.scores, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("indexed", ["ivfpq", "fastscan"], indirect=True)
def test_k_factor_deepens_the_candidates_of_code_indexes(indexed: Indexing) -> None:
    approximate = indexed.approximate
    assert approximate is not None and approximate.kind in ("ivfpq", "fastscan")
    direction = indexed.search.store.directions(np.array([3]))[None, 0].astype(np.float32)
    shallow = approximate.candidates(direction, 10, None, SearchOptions(k_factor=1))
    deep = approximate.candidates(direction, 10, None, SearchOptions(k_factor=8))
    assert shallow.shape == (1, 10) and deep.shape == (1, 80)
    np.testing.assert_array_equal(np.sort(shallow[0]), np.sort(deep[0, :10]))


@pytest.mark.parametrize("indexed", ["ivf", "ivfpq", "fastscan"], indirect=True)
def test_probe_margin_probes_the_lists_within_it_of_the_nearest(indexed: Indexing) -> None:
    """FAISS's own search over the n nearest lists is the oracle: a margin keeps the nearest
    lists down to the first more than the margin below the best, so it must answer as FAISS
    with nprobe = the lists kept; margin 2 keeps every one of nprobe, margin 0 the nearest."""
    approximate = indexed.approximate
    assert approximate is not None and approximate.kind not in ("hnsw", "hnswsq")
    nprobe = approximate.parameters.nprobe
    ivf = faiss.extract_index_ivf(approximate.index)
    for row in (3, 300, 4000):
        direction = indexed.search.store.directions(np.array([row]))[None, 0].astype(np.float32)
        scores = ivf.quantizer.search(direction, nprobe)[0][0]
        depths = set()
        for margin in (0.0, 0.1, 0.3, 1.0, 2.0):
            kept = int((scores >= scores[0] - np.float32(margin)).sum())
            depths.add(kept)
            found = approximate.candidates(direction, 10, None, SearchOptions(probe_margin=margin))
            params = faiss.SearchParametersIVF(nprobe=kept)
            depth = found.shape[1]
            np.testing.assert_array_equal(found, ivf.search(direction, depth, params=params)[1])
        assert kept == nprobe and len(depths) > 1  # margin 2 is plain nprobe; margins differ
    restricted = approximate.candidates(direction, 10, 2000, SearchOptions(probe_margin=0.1))
    assert (restricted[restricted >= 0] < 2000).all()
    # Directions of another dtype or layout are converted, with the same answer.
    wide = np.asfortranarray(np.repeat(direction, 3, axis=0).astype(np.float64))
    again = approximate.candidates(wide, 10, None, SearchOptions(probe_margin=0.3))
    once = approximate.candidates(direction, 10, None, SearchOptions(probe_margin=0.3))
    np.testing.assert_array_equal(again, np.repeat(once, 3, axis=0))


def test_exclusions_zero_rows_and_restrict_keep_their_meaning(indexed: Indexing) -> None:
    index = indexed.search
    plain = index.neighbors([row_query(index, 300, 10)])[0].ids
    excluded = frozenset(plain[:5].tolist()) | {300}
    query = replace(row_query(index, 300, 10), exclude=excluded)
    found = index.neighbors([query])[0].ids
    assert len(found) == 10 and not set(found.tolist()) & excluded
    assert 7 not in index.neighbors([row_query(index, 300, ROWS - 2, options=EXACT)])[0].ids
    restricted = index.neighbors([replace(row_query(index, 300, 10), restrict=2000)])[0].ids
    assert (restricted < 2000).all()


def test_exact_true_is_the_exhaustive_answer(indexed: Indexing) -> None:
    index = indexed.search
    query = row_query(index, 42, 10, options=EXACT)
    exhaustive = CosineSearch(index.table).neighbors([replace(query, options=SearchOptions())])
    np.testing.assert_array_equal(index.neighbors([query])[0].ids, exhaustive[0].ids)


def test_analogies_search_the_index_unless_told_otherwise(indexed: Indexing) -> None:
    index = indexed.search
    terms = {"positive": (Term(row=10), Term(row=20)), "negative": (Term(row=30),), "k": 5}
    approximate = index.analogies([AnalogyQuery(**terms)])[0]  # type: ignore[arg-type]
    exact = index.analogies([AnalogyQuery(**terms, options=EXACT)])[0]  # type: ignore[arg-type]
    assert len(np.intersect1d(approximate.ids, exact.ids)) >= 3
    assert not {10, 20, 30} & set(approximate.ids.tolist())


def test_per_query_options_are_checked_against_the_index() -> None:
    hnsw = IndexParameters(kind="hnsw", max_ef_search=200)
    check_options(hnsw, SearchOptions(ef_search=200))
    with pytest.raises(LimitExceeded, match="ef_search is 201, above the limit of 200"):
        check_options(hnsw, SearchOptions(ef_search=201))
    with pytest.raises(InvalidQuery, match="nprobe applies to an ivf"):
        check_options(hnsw, SearchOptions(nprobe=4))
    ivf = IndexParameters(kind="ivf", nlist=64, nprobe=4, max_nprobe=32)
    with pytest.raises(LimitExceeded, match="nprobe is 33"):
        check_options(ivf, SearchOptions(nprobe=33))
    with pytest.raises(InvalidQuery, match="ef_search applies to an hnsw or hnswsq"):
        check_options(IndexParameters(), SearchOptions(ef_search=8))
    fastscan = IndexParameters(kind="fastscan", nlist=64, nprobe=4, max_nprobe=64, max_k_factor=8)
    check_options(fastscan, SearchOptions(nprobe=64, k_factor=8))
    with pytest.raises(LimitExceeded, match="k_factor is 9, above the limit of 8"):
        check_options(fastscan, SearchOptions(k_factor=9))
    with pytest.raises(InvalidQuery, match="k_factor applies to an ivfpq or fastscan"):
        check_options(ivf, SearchOptions(k_factor=2))
    check_options(ivf, SearchOptions(probe_margin=0.0))
    check_options(fastscan, SearchOptions(probe_margin=2.0))
    with pytest.raises(LimitExceeded, match=r"probe_margin is 2\.5, above the limit of 2\.0"):
        check_options(fastscan, SearchOptions(probe_margin=2.5))
    with pytest.raises(InvalidQuery, match=r"probe_margin is -0\.1; it must be at least 0"):
        check_options(ivf, SearchOptions(probe_margin=-0.1))
    with pytest.raises(InvalidQuery, match="probe_margin applies to an ivf, ivfpq or fastscan"):
        check_options(hnsw, SearchOptions(probe_margin=0.3))


@pytest.mark.parametrize(
    ("parameters", "problem"),
    [
        (IndexParameters(kind="ivf", nlist=ROWS + 1), "nlist 6001 lists need at least as many"),
        (IndexParameters(kind="hnsw", ef_search=2000), "ef_search 2000 must be in [1, 1024]"),
        (IndexParameters(kind="ivfpq", pq_m=5), "pq_m 5 must divide the width 24"),
        (IndexParameters(kind="fastscan", pq_m=7), "pq_m 7 must divide the width 24"),
        (IndexParameters(kind="fastscan", k_factor=40), "k_factor 40 must be in [1, 32]"),
        (IndexParameters(kind="ivf", probe_margin=3), "probe_margin 3 must be in [0, 2]"),
    ],
)
def test_parameters_that_cannot_work_name_the_table(parameters, problem) -> None:
    with pytest.raises(TableLoadError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        parameters.resolved(ROWS, WIDTH, "/data/table.bin")


def test_a_saved_index_belongs_to_its_table(indexed: Indexing, tmp_path: Path) -> None:
    table, approximate = indexed.search.table, indexed.approximate
    assert approximate is not None and indexed.truth is not None and indexed.recall is not None
    path = tmp_path / "saved.faiss"
    save_index(path, approximate, fingerprint(table), indexed.truth, indexed.recall)
    loaded, truth = load_index(path, indexed.parameters, fingerprint(table), ROWS, WIDTH)
    assert truth is not None and loaded.kind == indexed.parameters.kind
    again = Indexing(CosineSearch(table), indexed.parameters)
    again.attach(loaded, truth, str(path))
    assert again.measure().at_k == indexed.recall.at_k  # the same answers from the mapped file
    other = clustered(seed=1)
    with pytest.raises(TableLoadError, match="built for another table"):
        load_index(path, indexed.parameters, fingerprint(other), ROWS, WIDTH)
    path.with_suffix(".json").unlink()  # a bare FAISS file: shape and metric are still checked
    with pytest.raises(TableLoadError, match="it holds 6000 rows, the table 5999"):
        load_index(path, indexed.parameters, fingerprint(other), ROWS - 1, WIDTH)
    with pytest.raises(TableLoadError, match="its width is 24, the table's 25"):
        load_index(path, indexed.parameters, "x", ROWS, WIDTH + 1)


def test_an_index_of_another_metric_or_a_broken_file_is_refused(tmp_path: Path) -> None:
    l2 = faiss.IndexHNSWFlat(WIDTH, 8)
    l2.add(np.zeros((ROWS, WIDTH), np.float32))
    faiss.write_index(l2, str(tmp_path / "l2.faiss"))
    with pytest.raises(TableLoadError, match="its metric is not inner product"):
        load_index(tmp_path / "l2.faiss", IndexParameters(), "x", ROWS, WIDTH)
    (tmp_path / "junk.faiss").write_bytes(b"not an index")
    with pytest.raises(TableLoadError, match="not a FAISS index file"):
        load_index(tmp_path / "junk.faiss", IndexParameters(), "x", ROWS, WIDTH)

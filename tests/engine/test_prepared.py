"""The prepared form: written once, opened memory-mapped, every bad file named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from service.engine.errors import TableLoadError
from service.engine.indexes.building import Indexing
from service.engine.loaders import load_table
from service.engine.search import dots
from service.engine.search.approximate import IndexParameters
from service.engine.search.cosine import CosineSearch
from service.engine.search.products import compiled_by_columns, compiled_serves
from service.engine.search.queries import NeighborQuery
from service.engine.tables.prepared import open_prepared, write_prepared
from service.engine.tables.table import EmbeddingTable
from tests.conftest import SMALL_TOKENS, small_vectors
from tests.engine.test_approximate import clustered


@pytest.fixture()
def table() -> EmbeddingTable:
    metadata = {
        "count": list(range(len(SMALL_TOKENS))),
        "weight": [0.5 * i for i in range(len(SMALL_TOKENS))],
        "pos": ["n", "v", "ñ", "", "a", "b", "c", "d", "e"],
    }
    return EmbeddingTable(SMALL_TOKENS, small_vectors(), metadata, source="small")


@pytest.fixture()
def folder(table: EmbeddingTable, tmp_path: Path) -> Path:
    return write_prepared(table, tmp_path / "small")


def test_a_prepared_table_opens_memory_mapped_and_equal(table, folder) -> None:
    opened = load_table(folder)  # the format is detected from the manifest
    assert isinstance(opened.vectors, np.memmap)
    np.testing.assert_array_equal(opened.vectors, table.vectors)
    np.testing.assert_array_equal(opened.norms64, table.norms64)
    assert list(opened.tokens) == SMALL_TOKENS
    assert opened.find("KING", case_insensitive=True) == table.find("KING", True) == 1
    assert opened.metadata_of(2) == table.metadata_of(2) == {"count": 2, "weight": 1.0, "pos": "ñ"}
    assert type(opened.metadata_of(2)["count"]) is int  # JSON-ready Python numbers
    # The mapped rows are searched in place by the compiled pass, as a table in memory is.
    if not dots.AVAILABLE:
        return
    directions = np.ones((3, opened.width), dtype=np.float32)
    assert compiled_serves(directions, opened.vectors)
    np.testing.assert_array_equal(
        compiled_by_columns(directions, opened.vectors),
        compiled_by_columns(directions, table.vectors),
    )


def test_the_real_table_keeps_its_tokenizer(minilm: EmbeddingTable, tmp_path: Path) -> None:
    opened = open_prepared(write_prepared(minilm, tmp_path / "minilm"))
    assert opened.tokenizer is not None
    assert opened.tokenizer.split("unbelievably").ids == minilm.tokenizer.split("unbelievably").ids


def test_writing_again_replaces_the_folder(table, folder) -> None:
    smaller = EmbeddingTable(SMALL_TOKENS[:3], small_vectors()[:3])
    write_prepared(smaller, folder)
    assert open_prepared(folder).rows == 3
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]


def queries(table: EmbeddingTable, count: int, seed: int = 0) -> list[NeighborQuery]:
    """Half table rows (each excluding itself), half random directions."""
    rng = np.random.default_rng(seed)
    search = CosineSearch(table)
    rows = rng.choice(np.flatnonzero(table.norms64 > 0), count // 2, replace=False)
    found = [
        NeighborQuery(d, 10, frozenset({int(r)}))
        for r, d in zip(rows, search.store.directions(rows), strict=True)
    ]
    vectors = [
        search.store.direction(v) for v in rng.normal(size=(count - len(found), table.width))
    ]
    return found + [NeighborQuery(v, 10, frozenset()) for v in vectors]


def answers(table: EmbeddingTable, asked: list[NeighborQuery], search: CosineSearch | None = None):
    search = search or CosineSearch(table)
    # One at a time (the one-direction kernel) and all at once (the batched product).
    return [search.neighbors([q])[0] for q in asked[:3]] + search.neighbors(asked)


def test_rows_stored_row_after_row_answer_as_by_columns(
    minilm: EmbeddingTable, tmp_path: Path
) -> None:
    by_columns = open_prepared(write_prepared(minilm, tmp_path / "columns"))
    by_rows = open_prepared(write_prepared(minilm, tmp_path / "rows", layout="rows"))
    assert json.loads((tmp_path / "rows" / "table.json").read_text())["layout"] == "rows"
    assert by_columns.vectors.flags.f_contiguous and not by_columns.vectors.flags.c_contiguous
    assert isinstance(by_rows.vectors, np.memmap) and by_rows.vectors.flags.c_contiguous
    np.testing.assert_array_equal(by_rows.vectors, minilm.vectors)
    np.testing.assert_array_equal(by_rows.norms64, minilm.norms64)
    asked = queries(minilm, 32)
    for got, expected in zip(answers(by_rows, asked), answers(by_columns, asked), strict=True):
        np.testing.assert_array_equal(got.ids, expected.ids)
        np.testing.assert_array_equal(got.scores, expected.scores)
    king = by_rows.find("king")
    [found] = CosineSearch(by_rows).neighbors([queries_of_row(by_rows, king)])
    assert (
        by_rows.tokens[int(found.ids[0])] == "kings" and round(float(found.scores[0]), 3) == 0.690
    )


def queries_of_row(table: EmbeddingTable, row: int) -> NeighborQuery:
    direction = CosineSearch(table).store.directions(np.array([row]))[0]
    return NeighborQuery(direction, 10, frozenset({row}))


def test_a_fast_scan_index_over_rows_stored_row_after_row_answers_alike(tmp_path: Path) -> None:
    table = clustered()
    searches = {}
    for layout in ("columns", "rows"):
        opened = open_prepared(write_prepared(table, tmp_path / layout, layout=layout))
        parameters = IndexParameters(kind="fastscan").resolved(opened.rows, opened.width, "t")
        indexing = Indexing(CosineSearch(opened), parameters)
        indexing.build()
        searches[layout] = indexing.search
    asked = queries(table, 40, seed=1)
    by_rows, by_columns = (answers(table, asked, searches[k]) for k in ("rows", "columns"))
    for got, expected in zip(by_rows, by_columns, strict=True):
        np.testing.assert_array_equal(got.ids, expected.ids)
        np.testing.assert_array_equal(got.scores, expected.scores)


def test_an_unknown_layout_is_refused_before_anything_is_written(table, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="layout 'diagonal'"):
        write_prepared(table, tmp_path / "out", layout="diagonal")
    assert not list(tmp_path.iterdir())


def corrupt(folder: Path, name: str) -> Path:
    path = folder / name
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda f: corrupt(f, "tokens.bin"), "checksum mismatch"),
        (lambda f: corrupt(f, "norms.npy"), "checksum mismatch"),
        (lambda f: corrupt(f, "token_slots.npy"), "checksum mismatch"),
        (lambda f: (f / "vectors.npy").unlink() or f / "vectors.npy", "no such file"),
        (lambda f: _truncate(f / "vectors.npy"), "not a readable .npy"),
        (lambda f: _truncate(f / "tokens.bin"), "truncated"),
        (lambda f: _write(f / "table.json", "{"), "invalid json"),
        (lambda f: _manifest(f, version=99), "format version 99"),
        (lambda f: _manifest(f, rows=8), "says 8 x 4"),
        (lambda f: _manifest(f, layout="rows") and f / "vectors.npy", "manifest's layout (rows)"),
        (lambda f: _manifest(f, layout="diagonal"), "layout 'diagonal' is not one of"),
    ],
)
def test_a_damaged_folder_names_the_file_and_the_problem(folder, damage, problem) -> None:
    path = damage(folder)
    with pytest.raises(TableLoadError) as caught:
        open_prepared(folder)
    assert str(path) in caught.value.message and problem in caught.value.message.lower()


def _truncate(path: Path) -> Path:
    path.write_bytes(path.read_bytes()[:-7])
    return path


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _manifest(folder: Path, **changes: object) -> Path:
    path = folder / "table.json"
    manifest = json.loads(path.read_text())
    manifest.update(changes)
    path.write_text(json.dumps(manifest))
    return path

"""Nothing the service writes deletes what it did not write.

Every writer (prepare, index build, the cache directory, train-demo, an index the server builds
and saves) is pointed at a place holding a file that must survive, and must refuse before any
work, leave the file and its folder exactly as they were, and leave nothing hidden behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from service.cli import main as cli
from service.config import TableSpec
from service.engine.errors import TableLoadError
from service.engine.files.writing import RefusedOverwrite
from service.engine.tables.prepared import INDEX, open_prepared, write_prepared
from service.engine.tables.table import EmbeddingTable
from tests.conftest import SMALL_TOKENS, small_vectors
from tests.robustness.conftest import write_table


def small_table(rows: int = len(SMALL_TOKENS)) -> EmbeddingTable:
    return EmbeddingTable(SMALL_TOKENS[:rows], small_vectors()[:rows])


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` (hidden ones too) and its bytes."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture()
def tables_folder(tmp_path: Path) -> Path:
    """A user's folder of 12 tables, as in the bug report."""
    folder = tmp_path / "tables"
    for i in range(12):
        write_table(folder, small_vectors(), name=f"table{i}")
    return folder


def test_prepare_refuses_a_folder_of_tables_and_deletes_nothing(
    tables_folder: Path, capsys
) -> None:
    before = snapshot(tables_folder.parent)
    status = cli.main(["prepare", str(tables_folder / "table0.npy"), str(tables_folder)])
    assert status == 2
    message = capsys.readouterr().err
    said = f"{tables_folder}: exists and is a directory of 24 entries (table0.npy, table0.vocab,"
    assert said in message and "table10.npy, ...), not a prepared table folder;" in message
    assert "nothing was written" in message
    assert snapshot(tables_folder.parent) == before


def test_prepare_refuses_a_plain_file_and_does_not_rename_it(tmp_path: Path, capsys) -> None:
    source = write_table(tmp_path / "source", small_vectors())
    precious = tmp_path / "notes.txt"
    precious.write_text("keep me")
    before = snapshot(tmp_path)
    assert cli.main(["prepare", str(source), str(precious)]) == 2
    assert "is a file, not a prepared table folder" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_a_prepared_folder_with_a_foreign_file_is_not_replaced(tmp_path: Path) -> None:
    out = write_prepared(small_table(), tmp_path / "prepared")
    (out / "README.txt").write_text("mine")
    before = snapshot(tmp_path)
    with pytest.raises(RefusedOverwrite, match=r"also holds 1 entry \(README.txt\) the service"):
        write_prepared(small_table(3), out)
    assert snapshot(tmp_path) == before


def test_an_empty_directory_is_written_into(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    write_prepared(small_table(), out)
    assert open_prepared(out).rows == len(SMALL_TOKENS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


def test_a_prepared_folder_is_replaced_whole_and_readers_keep_the_old_rows(
    tmp_path: Path,
) -> None:
    out = write_prepared(small_table(), tmp_path / "prepared")
    (out / INDEX).write_bytes(b"an index the service built")  # its own file: replaced too
    reader = open_prepared(out)
    old = np.array(reader.vectors)
    write_prepared(small_table(3), out)
    assert open_prepared(out).rows == 3
    np.testing.assert_array_equal(reader.vectors, old)  # the mapping still reads the old rows
    assert not (out / INDEX).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prepared"]  # nothing hidden left


def test_index_build_refuses_a_file_it_did_not_write_before_building(
    tmp_path: Path, capsys
) -> None:
    source = write_table(tmp_path / "source", small_vectors())
    table_file = tmp_path / "glove.faiss"
    table_file.write_bytes(b"not an index")
    sidecar_owner = tmp_path / "settings.faiss"
    (tmp_path / "settings.json").write_text('{"mine": true}')
    before = snapshot(tmp_path)
    for out in (table_file, sidecar_owner, tmp_path / "index.json"):
        assert cli.main(["index", "build", str(source), "--out", str(out), "--index", "ivf"]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert "a file the service did not write" in errors[0]
    assert "settings.json: exists and is a file the service did not write" in errors[1]
    assert "cannot end in .json" in errors[2]
    assert snapshot(tmp_path) == before


def test_a_cache_directory_keeps_the_files_it_did_not_write(tmp_path: Path) -> None:
    from service.loading.tables import read_spec

    source = write_table(tmp_path / "source", small_vectors())
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "notes.txt").write_text("keep me")
    spec = TableSpec(name="small", path=source)
    read_spec(spec, cache)
    assert read_spec(spec, cache).rows == len(SMALL_TOKENS)  # the second load opens it
    assert (cache / "notes.txt").read_text() == "keep me"
    names = sorted(p.name for p in cache.iterdir())
    assert names[0] == "notes.txt" and len(names) == 2 and names[1].startswith("small-")


def test_a_cache_entry_that_is_not_a_prepared_folder_is_refused(tmp_path: Path) -> None:
    from service.loading.cache_dir import entry_of
    from service.loading.tables import read_spec

    source = write_table(tmp_path / "source", small_vectors())
    cache = tmp_path / "cache"
    spec = TableSpec(name="small", path=source)
    entry = entry_of(spec, cache)
    entry.mkdir(parents=True)
    (entry / "mine.txt").write_text("keep me")
    with pytest.raises(TableLoadError, match=r"a directory of 1 entry \(mine.txt\), not a prep"):
        read_spec(spec, cache)
    assert (entry / "mine.txt").read_text() == "keep me"


def test_a_built_index_is_not_saved_over_a_foreign_sidecar(tmp_path: Path) -> None:
    """The server builds an index and saves it to index_path: a user's file where its sidecar
    goes is kept, and the index serves unsaved."""
    from service.engine.search.cosine import CosineSearch
    from service.loading.indexes import attach_for, index_table, save_target
    from service.loading.registry import Registry
    from service.loading.tables import read_spec

    source = write_table(tmp_path / "source", np.random.default_rng(0).normal(size=(600, 8)))
    spec = TableSpec(name="big", path=source, index="ivf", index_path=tmp_path / "notes.faiss")
    (tmp_path / "notes.json").write_text("my notes")
    registry = Registry()
    served = registry.load("big", lambda: read_spec(spec), attach=attach_for(spec))
    assert isinstance(served.search, CosineSearch)
    index_table(served, save_target(spec, served))
    assert served.indexing.state == "ready"
    assert (tmp_path / "notes.json").read_text() == "my notes"
    assert not (tmp_path / "notes.faiss").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_train_demo_refuses_a_folder_holding_a_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("keep me")
    assert cli.main(["train-demo", str(out), "--corpus", "lee", "--epochs", "1"]) == 2
    assert "must be a new or empty directory" in capsys.readouterr().err
    assert snapshot(tmp_path) == {"run/keep.txt": b"keep me"}


def test_an_index_written_by_the_service_is_replaced(tmp_path: Path) -> None:
    from service.engine.indexes.files import check_index_target

    sidecar = tmp_path / "ivf.json"
    sidecar.write_text(json.dumps({"format": "embedding-service-index", "version": 1,
                                   "truth_rows": [], "truth": []}))  # fmt: skip
    (tmp_path / "ivf.faiss").write_bytes(b"faiss bytes")
    check_index_target(tmp_path / "ivf.faiss")  # ours: no refusal
    os.remove(sidecar)
    with pytest.raises(RefusedOverwrite):
        check_index_target(tmp_path / "ivf.faiss")  # no sidecar: not known to be ours

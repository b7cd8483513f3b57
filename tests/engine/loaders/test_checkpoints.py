"""Checkpoint sets: files of one vocabulary read in order, checked alike, earlier ones mapped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from service.config import TableSpec
from service.engine.errors import TableLoadError, UnknownCheckpoint
from service.engine.loaders.checkpoints import checkpoint_files, checkpoint_label
from service.engine.tables.checkpoints import Versions
from service.loading.tables import read_spec
from tests.checkpoint_sets import synthetic_rows, write_checkpoint_set


def write_npy(folder: Path, name: str, rows: np.ndarray, tokens: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / f"{name}.npy", rows)
    (folder / f"{name}.vocab").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return folder / f"{name}.npy"


def test_a_directory_is_read_in_natural_order_and_every_checkpoint_is_kept(tmp_path):
    folder = write_checkpoint_set(tmp_path / "run", checkpoints=3)
    # A tenth checkpoint named without zero padding still comes last.
    _, counts, rows = synthetic_rows(checkpoints=3)
    (folder / "010-step10_tensors.bytes").write_bytes(rows[2].tobytes())
    (folder / "010-step10_labels.tsv").write_text(
        (folder / "000-step0_labels.tsv").read_text(), encoding="utf-8"
    )
    (folder / "notes.json").write_text("{}")  # not a table file: skipped
    table = read_spec(TableSpec(name="run", checkpoints=folder))
    versions = Versions(table, "run")
    assert versions.labels == ("000-step0", "001-step1", "002-step2", "010-step10")
    assert versions.sources[0] == "000-step0_tensors.bytes"
    for i, expected in enumerate([*rows, rows[2]]):
        np.testing.assert_array_equal(versions.vectors(i), expected)
    assert versions.vectors(3) is table.vectors
    assert all(isinstance(versions.vectors(i), np.memmap) for i in range(3))
    assert table.metadata["count"] == list(counts)


def test_earlier_checkpoints_are_private_copies(tmp_path):
    folder = write_checkpoint_set(tmp_path / "run", checkpoints=3)
    table = read_spec(TableSpec(name="run", checkpoints=folder))
    before = np.array(Versions(table, "run").vectors(0))
    # Rewriting (or truncating) a file under the server changes nothing it serves.
    (folder / "000-step0_tensors.bytes").write_bytes(b"\0" * 8)
    np.testing.assert_array_equal(Versions(table, "run").vectors(0), before)


def test_a_list_of_files_in_any_format_is_one_set(tmp_path):
    tokens, _, rows = synthetic_rows(checkpoints=2)
    first = write_npy(tmp_path / "a", "start", rows[0], tokens)
    last = tmp_path / "b" / "end.txt"
    last.parent.mkdir()
    lines = [f"{len(tokens)} {rows[1].shape[1]}"]
    pairs = zip(tokens, rows[1], strict=True)
    lines += [f"{t} " + " ".join(repr(float(v)) for v in row) for t, row in pairs]
    last.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = read_spec(TableSpec(name="set", checkpoints=[first, last]))
    versions = Versions(table, "set")
    assert versions.labels == ("start", "end")
    np.testing.assert_array_equal(versions.vectors(0), rows[0])
    np.testing.assert_array_equal(table.vectors, rows[1])


def test_a_different_vocabulary_names_the_first_differing_file_and_row(tmp_path):
    tokens, _, rows = synthetic_rows(checkpoints=3)
    paths = [write_npy(tmp_path, f"c{i}", rows[i], tokens) for i in range(2)]
    renamed = [*tokens[:7], "other", *tokens[8:]]
    paths.append(write_npy(tmp_path, "c2", rows[2], renamed))
    paths.append(write_npy(tmp_path, "c3", rows[2], ["x", *tokens[1:]]))
    with pytest.raises(TableLoadError) as caught:
        read_spec(TableSpec(name="set", checkpoints=paths))
    assert caught.value.path == str(paths[2])
    assert "row 7" in caught.value.problem and "c0.npy" in caught.value.problem
    assert "other" not in caught.value.message  # rows are named, tokens never quoted


def test_a_different_width_or_length_is_a_load_error(tmp_path):
    tokens, _, rows = synthetic_rows(checkpoints=2)
    first = write_npy(tmp_path, "c0", rows[0], tokens)
    narrow = write_npy(tmp_path, "c1", rows[1][:, :8], tokens)
    with pytest.raises(TableLoadError, match="rows are 8 wide, those of the first checkpoint"):
        read_spec(TableSpec(name="set", checkpoints=[first, narrow]))
    short = write_npy(tmp_path, "c2", rows[1][:-1], tokens[:-1])
    with pytest.raises(TableLoadError, match="has 199 rows, the first checkpoint"):
        read_spec(TableSpec(name="set", checkpoints=[first, short]))


def test_a_directory_without_tables_is_a_load_error(tmp_path):
    (tmp_path / "readme.md").write_text("no tables")
    with pytest.raises(TableLoadError, match="no table files"):
        checkpoint_files(tmp_path)
    with pytest.raises(TableLoadError, match="must be a directory or a list"):
        checkpoint_files(tmp_path / "readme.md")


def test_a_plain_table_is_a_set_of_one(tmp_path):
    tokens, _, rows = synthetic_rows(checkpoints=1)
    table = read_spec(TableSpec(name="one", path=write_npy(tmp_path, "one", rows[0], tokens)))
    versions = Versions(table, "one")
    assert (versions.count, versions.labels, versions.sources) == (1, ("table",), ("one.npy",))
    with pytest.raises(UnknownCheckpoint, match="has 1 checkpoint"):
        versions.check(1)


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("003-epoch-1_tensors.bytes", "003-epoch-1"),
        ("ckpt.bin.gz", "ckpt"),
        ("vectors.v2.txt", "vectors.v2"),
        ("checkpoint-500", "checkpoint-500"),
    ],
)
def test_labels_are_file_names_without_format_suffixes(name, label):
    assert checkpoint_label(Path(name)) == label


def test_a_spec_names_exactly_one_of_path_and_checkpoints(tmp_path):
    with pytest.raises(ValueError, match="exactly one of path and checkpoints"):
        TableSpec(name="x")
    with pytest.raises(ValueError, match="exactly one of path and checkpoints"):
        TableSpec(name="x", path=tmp_path, checkpoints=tmp_path)
    with pytest.raises(ValueError, match="at least 1 item"):
        TableSpec(name="x", checkpoints=[])

"""train-demo: a real gensim run written as a checkpoint set, reproducible, ready to serve."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from service.cli import main as cli
from service.cli.train_demo import DemoOptions, MissingExtra, train_demo
from service.config import TableSpec
from service.engine.tables.checkpoints import Versions
from service.loading.tables import read_spec

SMALL = DemoOptions(epochs=2, dim=8, snapshots_per_epoch=2, corpus="lee")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "run"
    train_demo(out, SMALL)
    return out


def test_the_run_is_a_checkpoint_set_with_counts(run: Path) -> None:
    table = read_spec(TableSpec(name="demo", checkpoints=run))
    versions = Versions(table, "demo")
    labels = ["000-init", "001-epoch-0.50", "002-epoch-1.00", "003-epoch-1.50", "004-epoch-2.00"]
    assert list(versions.labels) == labels
    report = json.loads((run / "training.json").read_text())
    assert [c["label"] for c in report["checkpoints"]] == labels
    assert report["vocabulary"] == table.rows and table.width == 8
    counts = table.metadata["count"]
    assert counts == sorted(counts, reverse=True) and min(counts) >= 5  # min_count 5
    words = [c["words_trained"] for c in report["checkpoints"]]
    assert words[0] == 0 and words[2] == report["corpus_tokens"] == words[4] // 2
    assert 0 < words[1] < words[2] < words[3] < words[4]


def test_checkpoint_zero_is_the_small_gaussian(run: Path) -> None:
    table = read_spec(TableSpec(name="demo", checkpoints=run))
    initial = np.asarray(Versions(table, "demo").vectors(0), dtype=np.float64)
    std = 1 / (8 * np.sqrt(12))
    assert abs(initial.mean()) < 0.05 * std
    assert initial.std() == pytest.approx(std, rel=0.05)
    # Gaussian, not gensim's uniform: values beyond the uniform's bound 0.5 / dim exist.
    assert np.abs(initial).max() > 0.5 / 8
    trained, started = (np.linalg.norm(m, axis=1).mean() for m in (table.vectors, initial))
    assert trained > 10 * started


def test_the_run_is_reproducible(run: Path, tmp_path: Path) -> None:
    train_demo(tmp_path / "again", SMALL)
    for path in sorted(run.glob("*_tensors.bytes")):
        assert (tmp_path / "again" / path.name).read_bytes() == path.read_bytes(), path.name


def test_without_gensim_the_message_names_the_extra(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setitem(sys.modules, "gensim", None)  # import gensim raises ImportError
    with pytest.raises(MissingExtra, match=r"pip install -e '\.\[train\]'"):
        train_demo(tmp_path / "out", SMALL)
    assert cli.main(["train-demo", str(tmp_path / "out")]) == 2
    assert "the optional 'train' extra" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (DemoOptions(epochs=0), "epochs must be between 1 and 1000"),
        (DemoOptions(snapshots_per_epoch=101), "snapshots per epoch must be between"),
        (DemoOptions(dim=2), "dim must be between 3 and 1000"),
    ],
)
def test_bad_options_are_refused(tmp_path: Path, options: DemoOptions, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        train_demo(tmp_path / "out", options)


def test_a_folder_with_files_is_not_overwritten(run: Path) -> None:
    with pytest.raises(ValueError, match="must be a new or empty directory"):
        train_demo(run, SMALL)


def test_the_table_flag_serves_a_directory_of_checkpoints() -> None:
    spec = cli.parse_table_flag("demo=/data/run,checkpoints=true")
    assert spec == {"name": "demo", "checkpoints": "/data/run"}
    assert TableSpec(**spec).checkpoints == Path("/data/run")

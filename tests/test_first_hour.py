"""What a newcomer meets in the first hour says what happened and what would work.

Each test was written against a message or behaviour of the previous main that said less, or
said it wrong: silently replaced tables, 'no model.safetensors' for a checkpoint set, 'bad
header' for a fastText model, a FAISS traceback for IVF on a small table, 'format=' where the
flag is --format, --config blamed as an environment variable, and no hint for 'King' on a
lower-case table. The admin routes' are in tests/robustness/test_admin_routes.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from service.cli import main as cli
from service.config import Settings, TableSpec
from service.engine.errors import TableLoadError
from service.engine.loaders import load_table
from tests.checkpoint_sets import write_checkpoint_set
from tests.conftest import AppOf
from tests.robustness.conftest import assert_envelope, write_table


def test_two_tables_of_one_name_are_refused_naming_both_sources() -> None:
    with pytest.raises(ValidationError, match=r"two tables are named 'a' \(/x.npy and /y.npy\)"):
        Settings(
            tables=[
                TableSpec(name="a", path=Path("/x.npy")),
                TableSpec(name="a", path=Path("/y.npy")),
            ]
        )


def test_a_missing_config_file_is_blamed_on_the_flag_that_named_it(capsys, monkeypatch) -> None:
    assert cli.main(["serve", "--config", "/nonexistent/service.toml"]) == 2
    assert "(given as --config) does not exist" in capsys.readouterr().err
    monkeypatch.setenv("EMBEDDING_SERVICE_CONFIG", "/nonexistent/service.toml")
    assert cli.main(["serve"]) == 2
    assert "(given as EMBEDDING_SERVICE_CONFIG) does not exist" in capsys.readouterr().err


def test_a_checkpoint_folder_served_as_one_table_says_checkpoints_true(tmp_path: Path) -> None:
    folder = write_checkpoint_set(tmp_path / "run")
    with pytest.raises(TableLoadError, match="a checkpoint set is served with checkpoints=true"):
        load_table(folder)


def test_a_fasttext_model_binary_says_what_it_is_and_what_loads(tmp_path: Path) -> None:
    path = tmp_path / "cc.en.300.bin"
    path.write_bytes((793712314).to_bytes(4, "little") + (12).to_bytes(4, "little") + b"\0" * 64)
    with pytest.raises(TableLoadError, match=r"is a fastText model binary.*the \.vec file"):
        load_table(path)


@pytest.mark.parametrize("name", ["lee_fasttext.bin", "cp852_fasttext.bin"])
def test_an_old_format_fasttext_binary_says_so_and_what_loads(name: str, tmp_path: Path) -> None:
    """gensim's own old-format fastText files (no magic number) were a "bad header"; the way
    out the message gives is run here: gensim writes the .vec, which serves."""
    from gensim.models.fasttext import load_facebook_vectors
    from gensim.test.utils import datapath

    with pytest.raises(TableLoadError, match="is a fastText model binary in the old format"):
        load_table(datapath(name))
    vectors = load_facebook_vectors(datapath(name))
    vectors.save_word2vec_format(str(tmp_path / "out.vec"))
    table = load_table(tmp_path / "out.vec")
    assert list(table.tokens) == list(vectors.index_to_key)
    np.testing.assert_array_equal(table.vectors, vectors.vectors)


def test_an_unknown_extension_names_the_flag_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "vectors.weird"
    path.write_text("x")
    with pytest.raises(TableLoadError, match="'format' in a table spec, --format on the command"):
        load_table(path)


def test_ivf_builds_on_a_small_table_and_a_too_large_nlist_says_what_works(
    tmp_path: Path, capsys
) -> None:
    rows = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
    source = write_table(tmp_path / "tables", rows)
    out = tmp_path / "small.faiss"
    assert cli.main(["index", "build", str(source), "--out", str(out), "--index", "ivf"]) == 0
    capsys.readouterr()
    refused = ["index", "build", str(source), "--out", str(tmp_path / "b.faiss"), "--index"]
    assert cli.main([*refused, "ivf", "--nlist", "48"]) == 2
    error = capsys.readouterr().err
    assert "45 of the 50 rows can train" in error and "or index hnsw, or no index" in error
    assert cli.main([*refused, "ivfpq"]) == 2
    assert "pq_bits 8 codes need 256 rows to train, the table has 50" in capsys.readouterr().err


def test_king_on_a_lower_case_table_is_told_the_text_form(app_of: AppOf) -> None:
    with app_of() as client:
        answer = client.post("/v1/tables/minilm/neighbors", json={"token": "King"})
    error = assert_envelope(answer, 404, "UnknownToken")
    assert error["tokens"] == ["King"]
    assert 'send {"text": "King"}' in error["message"]
    assert error["hint"] == {"token": "King", "row": "king", "by": "text"}

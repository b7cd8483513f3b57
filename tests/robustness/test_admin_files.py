"""The admin route reads only inside admin_tables_dir and never echoes a file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from service.config import Settings, default_table
from service.engine.errors import TableLoadError
from service.engine.files.reading import confined
from service.engine.indexes.files import load_index
from service.engine.search.approximate import IndexParameters
from service.engine.tables.prepared import write_prepared
from service.engine.tables.table import EmbeddingTable
from tests.checkpoint_sets import write_checkpoint_set
from tests.conftest import SMALL_TOKENS, small_vectors
from tests.robustness.conftest import AppFactory, assert_envelope

ADMIN = {"authorization": "Bearer admin-key"}
SECRET = "root:$6$c2VjcmV0LWhhc2gtdGhhdC1tdXN0LW5ldmVyLWxlYWs=:19000:0:99999:7:::"


def test_an_admin_key_without_a_tables_directory_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="admin_tables_dir"):
        Settings(admin_key="admin-key")
    (tmp_path / "admin").write_text("admin-key\n")
    run = subprocess.run(
        [sys.executable, "-m", "service", "serve", "--port", "1"],
        env={"EMBEDDING_SERVICE_ADMIN_KEY_FILE": str(tmp_path / "admin"), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "admin_tables_dir must be set" in run.stderr


def leaks(error: dict) -> bool:
    """Whether an error shows any piece of the secret file."""
    text = str(error)
    return any(piece in text for piece in ("$6$", "c2Vj", ":19000:", "99999"))


def add(client, spec: dict) -> dict:
    return assert_envelope(
        client.post("/v1/admin/tables", json=spec, headers=ADMIN), 422, "TableLoadError"
    )


def test_a_file_outside_the_directory_is_refused_without_reading_it(
    make_client: AppFactory, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "shadow"
    outside.parent.mkdir()
    outside.write_text(SECRET + "\n")
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    with make_client(admin_key="admin-key", admin_tables_dir=allowed) as client:
        error = add(client, {"name": "x", "path": str(outside), "format": "word2vec-binary"})
    assert "not under the admin tables directory" in error["message"]
    assert not leaks(error)


def test_a_symlink_inside_a_model_directory_may_not_lead_outside(
    make_client: AppFactory, tmp_path: Path
) -> None:
    """A model directory under the allowed folder whose vocab.txt points at a file outside it:
    the loader follows the directory's own files, so each is checked where it resolves."""
    allowed = tmp_path / "allowed"
    model = allowed / "model"
    model.mkdir(parents=True)
    source = Path(default_table().path)
    shutil.copy(source / "model.safetensors", model / "model.safetensors")
    outside = tmp_path / "vocab-outside.txt"
    shutil.copy(source / "vocab.txt", outside)
    (model / "vocab.txt").symlink_to(outside)
    with make_client(admin_key="admin-key", admin_tables_dir=allowed) as client:
        error = add(client, {"name": "linked", "path": str(model), "format": "huggingface"})
        assert "resolves outside the allowed tables directory" in error["message"]
        (model / "vocab.txt").unlink()
        shutil.copy(outside, model / "vocab.txt")  # the same file, really inside: loads
        added = client.post(
            "/v1/admin/tables", json={"name": "inside", "path": str(model)}, headers=ADMIN
        )
        assert added.status_code == 201, added.text


def test_a_file_that_is_not_a_table_is_refused_without_quoting_it(
    make_client: AppFactory, tmp_path: Path
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    for name, format in [("shadow.bin", "word2vec-binary"), ("shadow.txt", "glove")]:
        (allowed / name).write_text(SECRET + "\n" + SECRET + "\n")
        with make_client(admin_key="admin-key", admin_tables_dir=allowed) as client:
            error = add(client, {"name": "x", "path": str(allowed / name), "format": format})
        assert not leaks(error)


def test_a_checkpoint_set_is_confined_file_by_file(make_client: AppFactory, tmp_path: Path) -> None:
    """A set in the allowed folder loads; one naming a file outside, or holding a link that
    leads outside, is refused without reading it."""
    allowed = tmp_path / "allowed"
    run = write_checkpoint_set(allowed / "run", checkpoints=2)
    outside = tmp_path / "elsewhere" / "shadow.bytes"
    outside.parent.mkdir()
    outside.write_text(SECRET + "\n")
    with make_client(admin_key="admin-key", admin_tables_dir=allowed) as client:
        added = client.post(
            "/v1/admin/tables", json={"name": "run", "checkpoints": str(run)}, headers=ADMIN
        )
        assert added.status_code == 201, added.text
        assert len(added.json()["checkpoints"]) == 2
        listed = [str(run / "000-step0_tensors.bytes"), str(outside)]
        error = add(client, {"name": "x", "checkpoints": listed})
        assert "not under the admin tables directory" in error["message"]
        (run / "002-step2_tensors.bytes").symlink_to(outside)
        error = add(client, {"name": "y", "checkpoints": str(run)})
        assert "outside the allowed tables directory" in error["message"]
    assert not leaks(error)


def test_every_file_a_prepared_manifest_names_is_confined(
    make_client: AppFactory, tmp_path: Path
) -> None:
    """A prepared folder inside the allowed folder whose manifest names files outside it (by
    absolute path, or through a link in the folder) is refused, and the error says nothing of
    those files: neither their values (served by /lookup before), nor their size, dtype or
    shape (quoted by the checks before)."""
    allowed = tmp_path / "allowed"
    metadata = {"count": list(range(9)), "pos": ["n", "v", "x", "", "a", "b", "c", "d", "e"]}
    folder = write_prepared(
        EmbeddingTable(SMALL_TOKENS, small_vectors(), metadata, source="small"),
        allowed / "prepared",
    )
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    np.save(outside / "secret.npy", np.arange(9, dtype=np.int64) * 1000 + 777)
    np.save(outside / "other.npy", np.zeros((3, 5), dtype=np.float32))
    (outside / "secret.bin").write_bytes(SECRET.encode())
    cases = {
        "absolute": ("values", str(outside / "secret.npy")),
        "dtype-and-shape": ("values", str(outside / "other.npy")),
        "size": ("bytes", str(outside / "secret.bin")),
        "linked": ("values", "linked.npy"),
    }
    with make_client(admin_key="admin-key", admin_tables_dir=allowed) as client:
        for name, (part, named) in cases.items():
            copy = allowed / name
            shutil.copytree(folder, copy)
            (copy / "linked.npy").symlink_to(outside / "secret.npy")
            manifest = json.loads((copy / "table.json").read_text())
            column = manifest["metadata"][0 if part == "values" else 1]
            column[part] = {**column[part], "file": named, "crc32": None}
            (copy / "table.json").write_text(json.dumps(manifest))
            error = add(client, {"name": name, "path": str(copy)})
            assert "resolves outside the allowed tables directory" in error["message"], error
            text = str(error).replace(str(tmp_path), "<tmp>")  # its digits are no leak
            for quoted in ("777", "1777", "<f4", "<i8", "[3, 5]", "[9]", str(len(SECRET))):
                assert quoted not in text, (name, quoted, text)
            assert not leaks(error)


def test_an_index_sidecar_outside_the_folder_is_not_read(tmp_path: Path) -> None:
    """A prepared folder's index.json linked to a file outside: refused before it is read."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = tmp_path / "sidecar.json"
    outside.write_text(json.dumps({"format": "embedding-service-index", "version": 424242}))
    (allowed / "index.faiss").write_bytes(b"not read either")
    (allowed / "index.json").symlink_to(outside)
    with confined(allowed), pytest.raises(TableLoadError) as refused:
        load_index(allowed / "index.faiss", IndexParameters(), "fingerprint", 9, 4)
    assert "resolves outside the allowed tables directory" in refused.value.message
    assert "424242" not in refused.value.message

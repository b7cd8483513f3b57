"""The admin route reads only inside admin_tables_dir and never echoes a file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from service.config import Settings, default_table
from tests.checkpoint_sets import write_checkpoint_set
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

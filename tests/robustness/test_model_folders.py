"""A damaged model folder added by an admin: a one-line 422 naming the file, and the server
serves on."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.language_models import (
    LLAMA_INPUT,
    PADDED_ROWS,
    TOKENS,
    WIDTH,
    bfloat16_bits,
    write_bfloat16,
    write_json,
    write_llama,
)
from tests.robustness.conftest import AppFactory, assert_envelope

ADMIN = {"authorization": "Bearer admin-key"}
FIRST = "model-00001-of-00002.safetensors"
Damage = Callable[[Path], str]  # damages a folder; the file its error must name


def missing_shard(folder: Path) -> str:
    (folder / "model-00002-of-00002.safetensors").unlink()
    return "model.safetensors.index.json"


def wrong_rank(folder: Path) -> str:
    cube = bfloat16_bits(np.ones((PADDED_ROWS, WIDTH, 2)))
    write_bfloat16(folder / FIRST, {LLAMA_INPUT: cube, "model.layers.0.mlp.up_proj.weight": cube})
    return FIRST


def contradicting_config(folder: Path) -> str:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    write_json(folder / "config.json", {**config, "vocab_size": PADDED_ROWS + 64})
    return "config.json"


def tokenizer_bigger_than_the_table(folder: Path) -> str:
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    extra = [f"extra{i}" for i in range(PADDED_ROWS - TOKENS + 1)]
    tokenizer["model"]["vocab"].update({t: TOKENS + i for i, t in enumerate(extra)})
    write_json(folder / "tokenizer.json", tokenizer)
    return "tokenizer.json"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_llama(tmp_path_factory.mktemp("pristine") / "llama").folder


@pytest.mark.parametrize(
    "damage", [missing_shard, wrong_rank, contradicting_config, tokenizer_bigger_than_the_table]
)
def test_a_damaged_model_folder_is_one_line_naming_the_file(
    make_client: AppFactory, tmp_path: Path, pristine: Path, damage: Damage
) -> None:
    allowed = tmp_path / "allowed"
    folder = Path(shutil.copytree(pristine, allowed / "llama"))
    named = damage(folder)
    with make_client(admin_key="admin-key", admin_tables_dir=allowed) as client:
        spec = {"name": "llama", "path": str(folder)}
        response = client.post("/v1/admin/tables", json=spec, headers=ADMIN)
        error = assert_envelope(response, 422, "TableLoadError")
        assert error["message"].startswith(f"{folder / named}: ")
        assert "\n" not in error["message"]
        assert client.get("/v1/tables/small").status_code == 200  # serving on
        shutil.rmtree(folder)
        shutil.copytree(pristine, folder)
        added = client.post("/v1/admin/tables", json=spec, headers=ADMIN)
        assert added.status_code == 201, added.text
        assert added.json()["head"] == "lm_head.weight"

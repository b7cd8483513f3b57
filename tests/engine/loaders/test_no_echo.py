"""Errors name the file and the problem but never quote it: the path may be a secret file."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from service.engine.errors import TableLoadError
from service.engine.loaders import FORMATS, load_table
from tests.engine.loaders.helpers import BERT_TENSOR

MARKER = "QXJWKV"
# A line like /etc/shadow's, beginning with the marker so a quoted first byte shows too.
SECRET = f"{MARKER}:$6$salt$hash:19000:0:99999:7:::\nroot:{MARKER}:19000::::::\n"


def npy_with_header(header: str) -> bytes:
    text = header.encode().ljust(118) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def safetensors_with_header(header: dict) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text


CRAFTED = {
    "binary header": ("t.bin", f"{MARKER} 300\n".encode() + b"x" * 64),
    "text value": ("t.txt", f"2 2\nthe 1 2\nking 1 {MARKER}\n".encode()),
    "glove value": ("t.txt", f"the 1 2\nking 1 {MARKER}\n".encode()),
    "duplicate tokens": ("t.vec", f"2 2\n{MARKER} 1 2\n{MARKER} 3 4\n".encode()),
    "npy header": (
        "t.npy",
        npy_with_header(f"{{'descr': '{MARKER}', 'fortran_order': False, 'shape': (2, 2)}}"),
    ),
    "npy magic": ("t.npy", SECRET.encode()),
    "gzip magic": ("t.bin.gz", SECRET.encode()),
    "bz2 magic": ("t.txt.bz2", SECRET.encode()),
    "safetensors dtype": (
        "t.safetensors",
        safetensors_with_header({"w": {"dtype": MARKER, "shape": [1], "data_offsets": [0, 4]}}),
    ),
}


def assert_quiet(call_result: pytest.ExceptionInfo[TableLoadError]) -> None:
    message = str(call_result.value)
    assert MARKER[:2] not in message, message
    assert "b'" not in message and "\n" not in message, message


@pytest.mark.parametrize("format", FORMATS)
def test_a_secret_file_read_as_any_format(tmp_path: Path, format: str) -> None:
    path = tmp_path / "shadow"
    path.write_text(SECRET, encoding="utf-8")
    with pytest.raises(TableLoadError) as caught:
        load_table(path, format)
    assert_quiet(caught)


@pytest.mark.parametrize("case", list(CRAFTED))
def test_crafted_files(tmp_path: Path, case: str) -> None:
    name, content = CRAFTED[case]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(TableLoadError) as caught:
        load_table(path)
    assert_quiet(caught)


def crafted_side_files(folder: Path) -> list[Path]:
    """Tables whose side file (tokenizer, shard index, labels) is the crafted one."""
    tokenizer_model = folder / "tokenizer-model"
    tokenizer_model.mkdir()
    save_file(
        {BERT_TENSOR: np.ones((2, 2), np.float32)}, str(tokenizer_model / "model.safetensors")
    )
    tokenizer = {"model": {"vocab": {"a": MARKER, "b": 1}}}
    (tokenizer_model / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    sharded = folder / "sharded"
    sharded.mkdir()
    (sharded / "model.safetensors.index.json").write_text(f'{{"a": "\\{MARKER}', "utf-8")
    (folder / "t.bytes").write_bytes(np.ones(4, np.float32).tobytes())
    (folder / "t.tsv").write_text(f"{MARKER}\t{MARKER}\na\t1\nb\t2\n", encoding="utf-8")
    return [tokenizer_model, sharded, folder / "t.bytes"]


def test_crafted_side_files(tmp_path: Path) -> None:
    for path in crafted_side_files(tmp_path):
        with pytest.raises(TableLoadError) as caught:
            load_table(path)
        assert_quiet(caught)

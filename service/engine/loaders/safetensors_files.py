"""safetensors files read by their headers: every tensor's name, type, shape and place.

A safetensors file is 8 bytes (the header's length), a JSON header, then the tensors' bytes. A
model's tensors are in one file, a folder's `model.safetensors`, or shards listed by
`model.safetensors.index.json`. Only the headers are read to know them all (a few hundred KB
for a 16 GB model), so the model's parameters are counted and its tables found without reading
a weight; then only the chosen tensors are read, block by block, widened once into the table's
one float32 copy (tables/layout.py). No message quotes a header: a name, a type or a shard file
that is wrong is said by its position and its file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import open_file, read_error, read_json, require_file
from service.engine.loaders.checkpoints import checkpoint_hint
from service.engine.tables.layout import BLOCK_ROWS, Layout, blank

INDEX = "model.safetensors.index.json"
WEIGHTS = "model.safetensors"
# Header bytes at most: safetensors' own limit (100 MB); real models' are well under 1 MB.
MAX_HEADER_BYTES = 100_000_000
# Types whose rows can be read as a table, as numpy reads their bytes.
ROW_TYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F64": "<f8"}
_ITEM_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip


@dataclass(frozen=True)
class Tensor:
    """One tensor of a model: its type, shape, file and byte range in that file."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    path: Path
    start: int  # absolute offset of its first byte in `path`
    position: int  # its place in the header (1 for the first): how messages name it

    @property
    def named(self) -> str:
        """How a message names it without quoting the header."""
        return f"tensor {self.position} of the header"

    @property
    def parameters(self) -> int:
        """Its number of values."""
        return math.prod(self.shape)


@dataclass(frozen=True)
class ModelTensors:
    """Every tensor of a model, the files they came from, and the folder."""

    tensors: dict[str, Tensor]
    folder: Path
    described_by: Path  # the file a problem with the tensors is reported against

    @property
    def total_parameters(self) -> int:
        """Every tensor's values added up: the model's size, read from the headers alone."""
        return sum(tensor.parameters for tensor in self.tensors.values())


def model_tensors(path: Path) -> ModelTensors:
    """The tensors of a `.safetensors` file or a model folder (one file, or an index's shards)."""
    if not path.exists():
        raise TableLoadError(path, "no such file or directory")
    if not path.is_dir():
        return ModelTensors(read_header(path), path.parent, path)
    if (path / WEIGHTS).is_file():
        return ModelTensors(read_header(path / WEIGHTS), path, path / WEIGHTS)
    if (path / INDEX).is_file():
        return _sharded(path / INDEX)
    files = sorted(path.glob("*.safetensors"))
    if len(files) == 1:
        return ModelTensors(read_header(files[0]), path, files[0])
    raise TableLoadError(path, f"no {WEIGHTS} or {INDEX} here{checkpoint_hint(path)}")


def _sharded(index: Path) -> ModelTensors:
    weight_map = read_json(index).get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise TableLoadError(index, "no 'weight_map' object naming the shards")
    # Only the file's name: an index cannot point outside its folder.
    shards = {name: Path(str(shard)).name for name, shard in weight_map.items()}
    files = sorted(set(shards.values()))
    missing = [shard for shard in files if not (index.parent / shard).is_file()]
    if missing:
        raise TableLoadError(
            index, f"names {len(files)} shard files, {len(missing)} of them missing from the folder"
        )
    tensors: dict[str, Tensor] = {}
    for shard in files:
        tensors.update(read_header(index.parent / shard))
    absent = [position for position, name in enumerate(shards) if name not in tensors]
    if absent:
        raise TableLoadError(
            index, f"entry {absent[0] + 1} of the weight map is in no shard's header"
        )
    return ModelTensors(tensors, index.parent, index)


def read_header(path: Path) -> dict[str, Tensor]:
    """The tensors a safetensors file's header describes, checked against the file's size."""
    size = require_file(path)
    try:
        with open_file(path) as handle:
            length = int.from_bytes(handle.read(8), "little")
            if not 2 <= length <= min(MAX_HEADER_BYTES, size - 8):
                raise TableLoadError(path, "not a safetensors file: bad header length")
            header = json.loads(handle.read(length))
    except OSError as error:
        raise read_error(path, error) from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise TableLoadError(path, "not a safetensors file: the header is not JSON") from None
    if not isinstance(header, dict):
        raise TableLoadError(path, "not a safetensors file: the header is not a JSON object")
    data_start, data_size = 8 + length, size - 8 - length
    header.pop("__metadata__", None)
    return {
        str(name): _tensor(path, position, str(name), entry, data_start, data_size)
        for position, (name, entry) in enumerate(header.items(), start=1)
    }


def _tensor(
    path: Path, position: int, name: str, entry: object, data_start: int, data_size: int
) -> Tensor:
    try:
        assert isinstance(entry, dict)
        dtype, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        assert all(isinstance(n, int) and n >= 0 for n in (*shape, begin, end))
        assert dtype in _ITEM_BYTES and 0 <= begin <= end <= data_size
        assert end - begin == _ITEM_BYTES[dtype] * math.prod(shape)
    except (AssertionError, KeyError, TypeError, ValueError):
        raise TableLoadError(
            path, f"tensor {position} of the header has no valid type, shape and byte range"
        ) from None
    return Tensor(name, str(dtype), tuple(shape), path, data_start + begin, position)


def read_rows(
    tensor: Tensor, limit: int | None, what: str, layout: Layout = "columns"
) -> np.ndarray:
    """A 2-D tensor's first `limit` rows (all without one) as float32 held in `layout`: each
    block of rows widened on its own into the one copy, the file mapped, never read whole."""
    if len(tensor.shape) != 2:
        raise TableLoadError(
            tensor.path, f"{what} ({tensor.named}) has {len(tensor.shape)} dimensions, not 2"
        )
    if tensor.dtype not in ROW_TYPES:
        raise TableLoadError(
            tensor.path, f"{what} ({tensor.named}) is not of a floating-point type"
        )
    rows, width = tensor.shape
    wanted = rows if limit is None else min(limit, rows)
    require_file(tensor.path)
    try:
        stored = np.memmap(
            tensor.path, ROW_TYPES[tensor.dtype], "r", tensor.start, (rows, width), order="C"
        )
        held = blank(wanted, width, layout)
        for first in range(0, wanted, BLOCK_ROWS):
            last = min(first + BLOCK_ROWS, wanted)
            held[first:last] = widen(stored[first:last], tensor.dtype)
    except OSError as error:
        raise read_error(tensor.path, error) from None
    return held


def widen(block: np.ndarray, dtype: str) -> np.ndarray:
    """A block of stored rows as float32 (bfloat16 is a float32's top half: shifted back)."""
    if dtype == "BF16":
        return (block.astype(np.uint32) << 16).view(np.float32)
    return block.astype(np.float32)

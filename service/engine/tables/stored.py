"""Arrays on disk for prepared tables: written whole, opened memory-mapped and checked.

Each array is a .npy file (numpy's own format: a header with dtype and shape, then the data),
opened with mmap_mode="r", so opening reads nothing but headers and several processes share
one copy in the page cache. The small arrays carry a CRC-32 of their data in the manifest and
are verified at open (3,000,000 tokens: about 120 MB, tens of milliseconds); the rows are
checked by size and header only (reading 3.6 GB would cost seconds), so a flipped bit inside
a row goes unnoticed, as it would in any memory-mapped format.
"""

from __future__ import annotations

import mmap
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import check_confined
from service.engine.tables.vocabulary import PackedStrings

MetadataValue = int | float | str


def checksum(data: Any) -> int:
    """CRC-32 of an array's data or of bytes."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).view(np.uint8).data
    return zlib.crc32(data)


def save_array(
    folder: Path, name: str, array: np.ndarray, checksummed: bool = True
) -> dict[str, Any]:
    """Write `array` as folder/name.npy; its manifest entry (file, dtype, shape, checksum)."""
    np.save(folder / f"{name}.npy", array, allow_pickle=False)
    return {
        "file": f"{name}.npy",
        "dtype": array.dtype.str,
        "shape": list(array.shape),
        "crc32": checksum(array) if checksummed else None,
    }


def open_array(folder: Path, entry: dict[str, Any]) -> np.ndarray:
    """The array an entry names, memory-mapped; TableLoadError naming its file when it is
    outside the confining folder (files/reading.py), missing, of another dtype or shape than
    the manifest says, or fails its checksum."""
    path = folder / entry["file"]
    check_confined(path)
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise TableLoadError(path, "missing from the prepared table") from None
    except (OSError, ValueError) as error:
        raise TableLoadError(path, f"not a readable .npy array ({error})") from None
    if array.dtype.str != entry["dtype"] or list(array.shape) != entry["shape"]:
        raise TableLoadError(
            path,
            f"holds {array.dtype.str} {list(array.shape)}, the manifest says "
            f"{entry['dtype']} {entry['shape']}: truncated or replaced",
        )
    if entry.get("crc32") is not None and checksum(array) != entry["crc32"]:
        raise TableLoadError(path, "checksum mismatch: the file is corrupt")
    return array


def save_bytes(folder: Path, name: str, data: bytes) -> dict[str, Any]:
    """Write raw bytes as folder/name; their manifest entry."""
    (folder / name).write_bytes(data)
    return {"file": name, "bytes": len(data), "crc32": checksum(data)}


def open_bytes(folder: Path, entry: dict[str, Any]) -> Any:
    """The bytes an entry names, memory-mapped (b"" when empty), checked like open_array."""
    path = folder / entry["file"]
    check_confined(path)
    try:
        with path.open("rb") as handle:
            size = path.stat().st_size
            if size != entry["bytes"]:
                raise TableLoadError(
                    path, f"is {size} bytes, the manifest says {entry['bytes']}: truncated"
                )
            data: Any = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except FileNotFoundError:
        raise TableLoadError(path, "missing from the prepared table") from None
    if checksum(data) != entry["crc32"]:
        raise TableLoadError(path, "checksum mismatch: the file is corrupt")
    return data


# A text column is stored like the tokens: UTF-8 bytes and an offset per row.
TextColumn = PackedStrings


class NumberColumn(Sequence[int | float]):
    """A numeric column over an array, answering Python numbers (JSON needs them)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __len__(self) -> int:
        return int(self.values.size)

    @overload
    def __getitem__(self, index: int) -> int | float: ...

    @overload
    def __getitem__(self, index: slice) -> list[int | float]: ...

    def __getitem__(self, index: int | slice) -> int | float | list[int | float]:
        if isinstance(index, slice):
            return list(self.values[index].tolist())
        return self.values[index].item()

    def __iter__(self) -> Iterator[int | float]:
        return iter(self.values.tolist())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self.values, dtype=dtype)


def column_kind(values: Sequence[MetadataValue]) -> str:
    """How a metadata column is stored: int64, float64 or text."""
    if isinstance(values, NumberColumn):
        return "int64" if values.values.dtype.kind == "i" else "float64"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        if all(-(2**63) <= int(v) < 2**63 for v in values):
            return "int64"
    elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "float64"
    return "text"

"""Reading a checkpoint set: several files of one table, checked alike, the earlier ones mapped.

Each file is read by its own format's loader, one at a time, and checked against the first:
the same width, and the same tokens in the same order (row i is one token in every version).
The first file that differs stops the load, named with the first differing row. Every
checkpoint but the last is then copied as float32 into a private temporary file (already
unlinked, so it goes when the set does) and memory-mapped from there: the set costs one
table's memory while it loads, page cache afterwards, and a checkpoint file rewritten or
truncated under the server cannot change what it serves or crash it.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import compression, format_suffix
from service.engine.tables.checkpoints import Checkpoints
from service.engine.tables.table import EmbeddingTable

# The suffixes of table files (after any .gz / .bz2); a directory's other files are skipped.
TABLE_SUFFIXES = frozenset({".bin", ".vec", ".txt", ".bytes", ".npy", ".safetensors"})

LoadOne = Callable[[Path], EmbeddingTable]


def checkpoint_files(source: Path | Sequence[Path]) -> list[Path]:
    """The checkpoint files a spec names: its list as given, or a directory's table files and
    model directories in natural name order (`ckpt-2` before `ckpt-10`)."""
    if not isinstance(source, Path):
        return list(source)
    if not source.is_dir():
        raise TableLoadError(source, "checkpoints must be a directory or a list of files")
    found = sorted((p for p in source.iterdir() if _is_checkpoint(p)), key=natural_key)
    if not found:
        raise TableLoadError(source, "no table files or model directories in the directory")
    return found


def _is_checkpoint(path: Path) -> bool:
    if path.name.startswith("."):
        return False
    if path.is_dir():
        return any(path.glob("*.safetensors"))
    suffix = format_suffix(path)
    # A .txt beside a .npy of the same name is that matrix's vocabulary, not a table.
    vocabulary = suffix == ".txt" and not compression(path) and path.with_suffix(".npy").exists()
    return suffix in TABLE_SUFFIXES and not vocabulary


def checkpoint_hint(folder: Path) -> str:
    """What to say of a directory that is not a model folder but holds a checkpoint set's files
    ('' when it does not look like one)."""
    found = [p for p in folder.iterdir() if _is_checkpoint(p)]
    if not found and not (folder / "training.json").is_file():
        return ""
    what = f"{len(found)} table files" if found else "a training.json"
    return f"; it holds {what}: a checkpoint set is served with checkpoints=true"


def natural_key(path: Path) -> list[int | str]:
    """A sort key that orders the numbers inside names by value."""
    parts = re.split(r"(\d+)", path.name)
    return [int(part) if part.isdigit() else part for part in parts]


def checkpoint_label(path: Path) -> str:
    """A checkpoint's name: its file name without the format's suffixes (and `_tensors`)."""
    name = path.name
    if compression(path):
        name = name[: -len(path.suffix)]
    stem = Path(name).stem if Path(name).suffix.lower() in TABLE_SUFFIXES else name
    return stem.removesuffix("_tensors")


def load_checkpoints(paths: Sequence[Path], load_one: LoadOne) -> EmbeddingTable:
    """The last checkpoint as the table, carrying the earlier ones (checked and mapped)."""
    first: EmbeddingTable | None = None
    earlier: list[np.ndarray] = []
    for number, path in enumerate(paths):
        table = load_one(path)
        if first is None:
            first = table
        else:
            check_alike(first, paths[0], table, path)
        if number < len(paths) - 1:
            earlier.append(mapped_copy(table.vectors, path))
    assert first is not None, "a checkpoint set has at least one file"
    checkpoints = Checkpoints(
        labels=tuple(checkpoint_label(path) for path in paths),
        sources=tuple(path.name for path in paths),
        earlier=tuple(earlier),
    )
    return replace(table, checkpoints=checkpoints)


def check_alike(first: EmbeddingTable, first_path: Path, table: EmbeddingTable, path: Path) -> None:
    """TableLoadError naming `path` unless it has the first checkpoint's width and tokens."""
    where = f"the first checkpoint ({first_path.name})"
    if table.width != first.width:
        raise TableLoadError(path, f"rows are {table.width} wide, those of {where} {first.width}")
    if table.tokens == first.tokens:
        return
    if table.rows != first.rows:
        raise TableLoadError(path, f"has {table.rows} rows, {where} has {first.rows}")
    row = next(i for i, (a, b) in enumerate(zip(table.tokens, first.tokens, strict=True)) if a != b)
    # The row, never the tokens: a table file must not be quoted.
    raise TableLoadError(path, f"vocabulary differs from that of {where} at row {row}")


def mapped_copy(vectors: np.ndarray, path: Path) -> np.ndarray:
    """`vectors` as float32 stored by columns (as every table's rows: tables/layout.py) in a
    private, already unlinked temporary file, memory-mapped."""
    columns = vectors.T  # row j of `columns` is column j of the rows: what the file holds
    try:
        with tempfile.TemporaryFile(prefix="checkpoint-") as handle:
            for column in columns:
                handle.write(np.ascontiguousarray(column, np.float32).tobytes())
            handle.flush()
            # The mapping outlives the descriptor; the file's space is freed with the mapping.
            rows, width = vectors.shape
            mapped = np.memmap(handle, dtype=np.float32, mode="r", shape=(width, rows))
            return mapped.T
    except OSError as error:
        raise TableLoadError(path, f"cannot keep a copy to map ({error.strerror})") from None

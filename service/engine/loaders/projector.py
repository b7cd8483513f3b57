"""TensorFlow Embedding Projector tables: raw float32 `.bytes` plus a labels `.tsv`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import (
    check_vocabulary,
    first_existing,
    read_error,
    read_lines,
    require_file,
)
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.tables.table import EmbeddingTable, MetadataValue


def load_projector(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """Load an Embedding Projector table: raw float32 `.bytes` plus a labels `.tsv`."""
    tensor_path = Path(path)
    size = require_file(tensor_path)
    labels = options.labels or first_existing(tensor_path, _labels_files(tensor_path), "labels")
    tokens, metadata = _read_labels(labels, options.unicode_errors)
    width = _projector_width(tensor_path, size, len(tokens), options.width)
    check_vocabulary(labels, len(tokens), size // (4 * width), tensor_path)
    rows = min(len(tokens), options.limit or len(tokens))
    vectors = _read_float32(tensor_path, rows * width).reshape(-1, width)
    metadata = {name: column[:rows] for name, column in metadata.items()}
    return EmbeddingTable(
        tokens[:rows], vectors, metadata, source=str(tensor_path), layout=options.layout
    )


def _labels_files(tensor_path: Path) -> list[Path]:
    # The projector's own naming (NAME_tensors.bytes beside NAME_labels.tsv), then the stem's.
    stem = tensor_path.stem
    own = [tensor_path.with_name(f"{stem.removesuffix('_tensors')}_labels.tsv")]
    return [*(own if stem.endswith("_tensors") else []), tensor_path.with_suffix(".tsv")]


def _projector_width(path: Path, size: int, rows: int, width: int | None) -> int:
    if width is not None and (width <= 0 or size % (4 * width)):
        raise TableLoadError(path, f"{size} bytes do not divide into rows of {width} float32s")
    if width is None and size % (4 * rows):
        raise TableLoadError(
            path, f"{size} bytes do not divide into {rows} rows of float32s (one per label)"
        )
    return width or size // (4 * rows)


def _read_labels(path: Path, errors: str) -> tuple[list[str], dict[str, list[MetadataValue]]]:
    lines = read_lines(path, errors)
    # The projector's convention: only a file with several columns has a header row.
    if "\t" not in lines[0]:
        return lines, {}
    header = lines[0].split("\t")
    if len(set(header)) != len(header):
        first, again = _first_repeat(header)
        raise TableLoadError(path, f"line 1: columns {first + 1} and {again + 1} have one name")
    rows = [_label_fields(line, len(header), n, path) for n, line in enumerate(lines[1:], 2)]
    if not rows:
        raise TableLoadError(path, "no labels after the header row")
    columns = list(zip(*rows, strict=True))
    metadata = {
        name: _parse_column(column) for name, column in zip(header[1:], columns[1:], strict=True)
    }
    return list(columns[0]), metadata


def _first_repeat(names: Sequence[str]) -> tuple[int, int]:
    seen: dict[str, int] = {}
    for column, name in enumerate(names):
        if name in seen:
            return seen[name], column
        seen[name] = column
    raise ValueError("no repeated name")


def _label_fields(line: str, columns: int, number: int, path: Path) -> list[str]:
    fields = line.split("\t")
    if len(fields) != columns:
        raise TableLoadError(
            path, f"line {number}: expected {columns} tab-separated columns, found {len(fields)}"
        )
    return fields


def _parse_column(values: Sequence[str]) -> list[MetadataValue]:
    for kind in (int, float):
        try:
            return [kind(value) for value in values]
        except ValueError:
            continue
    return list(values)


def _read_float32(path: Path, count: int) -> np.ndarray:
    try:
        return np.fromfile(path, dtype="<f4", count=count)
    except OSError as error:
        raise read_error(path, error) from None

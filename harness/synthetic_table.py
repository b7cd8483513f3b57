"""Write a synthetic clustered word-vector table in word2vec binary format, for big-table tests
and benchmarks.

    python -m harness.synthetic_table OUT.bin --rows 3000000 --width 300 --seed 0

What the file is, exactly (the same arguments give the same bytes):

- `max(1, rows // 200)` cluster centres, each a Gaussian direction scaled to unit length.
- Each row belongs to one cluster, drawn with probability proportional to 1 / (k + 1) for
  cluster k (Zipf-like sizes: a few large clusters, a long tail of small ones). Rows are in
  random cluster order, as frequency-sorted real vocabularies are.
- A row is `scale * (centre + noise)`: noise is Gaussian with standard deviation
  `0.8 / sqrt(width)` per component (a norm of about 0.8), and `scale` is log-normal with
  median 2.5 and sigma 0.35, so row norms vary as real word vectors' do.
- Row i's token is `w` + i zero-padded to the digits of `rows - 1` + `_c` + its cluster,
  e.g. `w0000123_c45`: ASCII, unique, of varied length like real tokens.
- The layout is the word2vec C tool's (GoogleNews's): `rows width` + newline, then per row the
  token, a space, width little-endian float32s and a newline; `--no-newline` writes gensim's
  layout without the newline. Written in blocks, vectorised: 3M x 300 (3.6 GB) took 126 s on
  the shared 2-core development machine, most of it waiting to write.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

BLOCK_ROWS = 65_536
NOISE = 0.8
MEDIAN_NORM = 2.5
NORM_SIGMA = 0.35


def cluster_weights(clusters: int) -> np.ndarray:
    """Zipf-like probabilities of the clusters: proportional to 1 / (k + 1)."""
    weights = 1.0 / np.arange(1, clusters + 1)
    return weights / weights.sum()


def unit_centres(rng: np.random.Generator, clusters: int, width: int) -> np.ndarray:
    """`clusters` Gaussian directions of length 1."""
    centres = rng.standard_normal((clusters, width), dtype=np.float32)
    return centres / np.linalg.norm(centres, axis=1, keepdims=True)


def block_rows(rng: np.random.Generator, centres: np.ndarray, members: np.ndarray) -> np.ndarray:
    """The rows of one block: scale * (centre + noise), float32."""
    width = centres.shape[1]
    noise = rng.standard_normal((len(members), width), dtype=np.float32)
    noise *= np.float32(NOISE / np.sqrt(width))
    rows = centres[members] + noise
    scale = rng.lognormal(np.log(MEDIAN_NORM), NORM_SIGMA, len(members)).astype(np.float32)
    return rows * scale[:, None]


def block_bytes(
    first: int, digits: int, members: np.ndarray, rows: np.ndarray, end: bytes
) -> bytes:
    """One block in word2vec binary layout: token, space, float32s, `end` per row."""
    row_bytes = rows.shape[1] * 4
    floats = rows.astype("<f4").tobytes()
    parts: list[bytes] = []
    for i, cluster in enumerate(members.tolist()):
        token = f"w{first + i:0{digits}d}_c{cluster} ".encode()
        parts += (token, floats[i * row_bytes : (i + 1) * row_bytes], end)
    return b"".join(parts)


def write_table(path: Path, rows: int, width: int, seed: int, newline: bool = True) -> None:
    """Write the synthetic table described in the module docstring to `path`."""
    rng = np.random.default_rng(seed)
    clusters = max(1, rows // 200)
    centres = unit_centres(rng, clusters, width)
    weights = cluster_weights(clusters)
    digits = len(str(max(rows - 1, 0)))
    with path.open("wb") as out:
        out.write(f"{rows} {width}\n".encode())
        for first in range(0, rows, BLOCK_ROWS):
            members = rng.choice(clusters, size=min(BLOCK_ROWS, rows - first), p=weights)
            block = block_rows(rng, centres, members)
            out.write(block_bytes(first, digits, members, block, b"\n" if newline else b""))


def main(argv: list[str] | None = None) -> int:
    """Write the table and say how long it took."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the .bin file to write")
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--width", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-newline", action="store_true", help="gensim's layout")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    write_table(args.out, args.rows, args.width, args.seed, newline=not args.no_newline)
    size = args.out.stat().st_size
    print(f"wrote {args.out}: {args.rows} x {args.width}, {size / 1e9:.2f} GB "
          f"in {time.perf_counter() - started:.1f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

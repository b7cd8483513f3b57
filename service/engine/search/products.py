"""The float32 inner products a pass computes: a batch of directions against rows in either
layout.

Rows stored by columns (tables/layout.py) are multiplied by BLAS (by_columns) or, for the batch
sizes where it was measured to win, by the compiled pass of dots.c (compiled_by_columns:
AVX-512, COMPILED_FROM to COMPILED_UNTIL directions); rows stored row after row by FAISS's SIMD
inner products or BLAS (by_rows). float32_dot_error bounds how far any of them can be from the
exact product. The kernels (search/kernels.py) choose among them and divide by the rows' norms.
"""

from __future__ import annotations

import faiss
import numpy as np

from service.engine import threads
from service.engine.errors import DimensionMismatch
from service.engine.search import dots
from service.engine.search.store import FLOAT32

# Up to this many directions, one pass of inner products each beats a matrix product, which
# first packs the whole table (1 thread, 30,522 x 384: 2.5 ms per vector with FAISS's
# fvec_inner_products_ny over the raw rows, against 3.4 ms for numpy's matrix-vector product
# and about 10 ms for any matrix product of 2 to 4; BENCHMARKS.md).
SMALL_BATCH = 3
# Batches are scored in multiples of this many directions, padded with zeros: OpenBLAS's sgemm
# runs a batch whose size is not a multiple of its 4-wide micro-kernel at the cost of the next
# multiple, or worse (1 thread, the default table's columns: 11 directions 8.5 ms, 12
# directions 6.7 ms; 31 13.9 ms, 32 11.4 ms). rows @ directions.T, faster at 4 and 8 directions
# in a quiet moment, lost to directions @ columns at 8 in every round of a loaded CI run
# (525-582 against 685-809 q/s), and at 3 and 4 on 2026-12-02 (123-183 against 309-419 q/s,
# one run each): every batch of three or more is directions @ columns.
PAD_TO = 4
# float32 spacing at 1 (unit roundoff u = 2**-24).
UNIT_ROUNDOFF = 2.0**-24


def by_columns(directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(batch, rows) float32 inner products with rows stored by columns (rows.T is C order).

    BLAS (BlasKernel.scores calls the compiled pass first, where it serves): one direction a
    1-row matrix product; two a matrix-vector product each; more: directions @ rows.T, one
    plain matrix product, the directions padded to a multiple of PAD_TO. Three or four were
    once rows @ directions.T, transposed (1.16x and 0.97x the best layout when chosen), but on
    another day's machine that tall product ran at 0.36-0.43x while the padded one held
    0.86-1.09x. Measured on the default table, one thread (benchmarks/engine_throughput.py
    measures the result in one run).
    """
    columns = rows.T
    count = len(directions)
    if count == 1:
        return directions @ columns
    if count == 2:
        return np.stack([direction @ columns for direction in directions])
    padded = padded_batch(directions)
    products = padded @ columns
    return products if len(padded) == count else products[:count]


def compiled_runs() -> bool:
    """Whether passes over columns are compiled here: dots.c is built and runs on this CPU, and
    compute threads are not capped above one (BLAS can use them; the compiled pass is one
    thread)."""
    return dots.AVAILABLE and (threads.compute_cap or 1) == 1


# The batch sizes the compiled pass serves; BLAS's matrix product over the columns the others.
# A hand-written kernel stays only where it wins by 1.15x at the batch sizes a server forms
# (docs/exact-pass.md). At 32 connections the server forms batches of 9-16; there, on an Intel
# Xeon with AVX-512 (2026-12-06), the whole search ran 1.09-1.13x in-process and the server
# 1.39x req/s at 0.78x the CPU a request (vectors); the earlier AMD EPYC figures put it at 1.46x
# a plain sgemm. One direction: 0.90-1.02x BLAS (AMD 0.90x the sgemm); 24 0.98x, 32 0.85-0.92x.
COMPILED_FROM = 2
COMPILED_UNTIL = 24


def compiled_serves(directions: np.ndarray, rows: np.ndarray) -> bool:
    """Whether compiled_by_columns computes this pass: compiled_runs(), float32 rows stored by
    columns (`rows.T` C order, or a slice of rows of one), and COMPILED_FROM to COMPILED_UNTIL
    (exclusive) directions."""
    return (
        compiled_runs()
        and COMPILED_FROM <= len(directions) < COMPILED_UNTIL
        and rows.ndim == 2
        and rows.dtype == np.float32
        and rows.strides[0] == FLOAT32
        and rows.strides[1] % FLOAT32 == 0
    )


def compiled_by_columns(
    directions: np.ndarray, rows: np.ndarray, scales: np.ndarray | None = None
) -> np.ndarray:
    """(batch, len(rows)) float32 `directions @ rows.T` by dots.c, each column times `scales` if
    given. Only where dots.AVAILABLE (compiled_serves() says where it is served)."""
    assert dots.LIBRARY is not None
    directions = np.ascontiguousarray(directions, dtype=np.float32)
    count, width = directions.shape
    if rows.shape[1] != width:
        raise DimensionMismatch(rows.shape[1], width)
    n = rows.shape[0]
    out = np.empty((count, n), dtype=np.float32)
    if scales is not None:
        scales = np.ascontiguousarray(scales, dtype=np.float32)
        if scales.shape != (n,):
            raise ValueError(f"{scales.shape[0]} scales for {n} rows")
    if n:
        dots.LIBRARY.dots_by_columns(
            dots.SIMD,
            directions.ctypes.data,
            count,
            width,
            rows.ctypes.data,
            rows.strides[1] // FLOAT32,
            n,
            None if scales is None else scales.ctypes.data,
            out.ctypes.data,
        )
    return out


def padded_batch(directions: np.ndarray) -> np.ndarray:
    """`directions` with zero rows appended up to a multiple of PAD_TO (itself when it is one)."""
    count, width = directions.shape
    size = -(-count // PAD_TO) * PAD_TO
    if size == count:
        return directions
    padded = np.zeros((size, width), dtype=directions.dtype)
    padded[:count] = directions
    return padded


def by_rows(directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(batch, rows) float32 inner products with rows stored row after row."""
    if len(directions) <= SMALL_BATCH:
        return inner_products(directions, rows)
    return directions @ rows.T


def inner_products(directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(len(directions), len(rows)) float32 inner products, one streaming pass per direction.

    FAISS's SIMD kernel over row-major rows: faster than BLAS's matrix-vector product on
    them, which has to read each row as a column of the transposed matrix.
    """
    out = np.empty((len(directions), len(rows)), dtype=np.float32)
    width = rows.shape[1]
    for i, direction in enumerate(directions):
        faiss.fvec_inner_products_ny(  # type: ignore[attr-defined]
            faiss.swig_ptr(out[i]),
            faiss.swig_ptr(direction),
            faiss.swig_ptr(rows),
            width,
            len(rows),
        )
    return out


def float32_dot_error(width: int, scale: float = 1.0) -> float:
    """A bound on the rounding error of a float32 dot product of `width` terms.

    |error| <= width * 2^-24 * sum |a_i b_i| <= width * 2^-24 * |a| |b|; doubled for safety.
    `scale` is |a| |b| (1 for unit vectors).
    """
    return width * 2.0**-23 * scale

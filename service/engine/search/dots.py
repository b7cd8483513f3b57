"""The exact pass over rows stored by columns, compiled (dots.c), without BLAS's packing.

BLAS's matrix product copies the whole table into its own panels on every call; at the batch
sizes a server forms that copy costs about as much as the products (BENCHMARKS.md). dots.c reads
the columns in place (up to 8 directions in strips of 8 columns over every row, more a tile of
rows at a time), and is used for every batch unless this process capped its compute threads
above one (served: one). It is built
with the package (pyproject.toml's ext-modules) and loaded with ctypes; where it was not built (no C
compiler) or the CPU has no AVX2 and FMA, `available()` is False and the pass stays with BLAS.

Each score is one float32 FMA chain in the order of the columns, times the row's scale: the same
bits whatever else is in the batch, on AVX-512 and AVX2 alike.
"""

from __future__ import annotations

import ctypes
import importlib.util

import numpy as np

from service.engine.threads import compute_threads

_FLOAT = 4


def _load() -> tuple[ctypes.CDLL | None, int]:
    spec = importlib.util.find_spec("service.engine.search._dots")
    if spec is None or spec.origin is None:
        return None, 0
    library = ctypes.CDLL(spec.origin)
    library.dots_simd.restype = ctypes.c_int
    library.dots_simd.argtypes = []
    library.dots_by_columns.restype = ctypes.c_int
    library.dots_by_columns.argtypes = [
        ctypes.c_int,  # simd
        ctypes.c_void_p,  # directions
        ctypes.c_int64,  # count
        ctypes.c_int64,  # width
        ctypes.c_void_p,  # columns
        ctypes.c_int64,  # stride
        ctypes.c_int64,  # rows
        ctypes.c_void_p,  # scales
        ctypes.c_void_p,  # out
    ]
    return library, int(library.dots_simd())


_LIBRARY, SIMD = _load()


def available() -> bool:
    """Whether the compiled pass runs here (built, and the CPU has AVX2 and FMA at least)."""
    return _LIBRARY is not None and SIMD > 0


def runs() -> bool:
    """Whether this process's passes over columns are compiled: available(), and compute
    threads not capped above one (BLAS can use them; this pass is one thread)."""
    return available() and (compute_threads() or 1) == 1


def serves(directions: np.ndarray, rows: np.ndarray) -> bool:
    """Whether by_columns() computes this pass: the library runs here, the process computes on
    one thread, float32 rows stored by columns."""
    return (
        runs()
        and len(directions) >= 1
        and rows.dtype == np.float32
        and rows.strides[0] == _FLOAT
        and rows.strides[1] % _FLOAT == 0
        and rows.ndim == 2
    )


def by_columns(
    directions: np.ndarray, rows: np.ndarray, scales: np.ndarray | None = None, simd: int = 0
) -> np.ndarray:
    """(batch, len(rows)) float32 `directions @ rows.T`, each column times `scales` if given.

    `rows` is a (rows, width) float32 view of a table stored by columns (`rows.T` is C order,
    or a slice of rows of one); `simd` 512 or 256 forces an instruction set (0: the widest).
    Call only where serves() is True.
    """
    assert _LIBRARY is not None
    directions = np.ascontiguousarray(directions, dtype=np.float32)
    count, width = directions.shape
    if rows.shape[1] != width:
        raise ValueError(f"directions of width {width} against rows of width {rows.shape[1]}")
    n = rows.shape[0]
    out = np.empty((count, n), dtype=np.float32)
    if scales is not None:
        scales = np.ascontiguousarray(scales, dtype=np.float32)
        if scales.shape != (n,):
            raise ValueError(f"{scales.shape[0]} scales for {n} rows")
    if n:
        _LIBRARY.dots_by_columns(
            min(simd, SIMD) if simd else SIMD,
            directions.ctypes.data,
            count,
            width,
            rows.ctypes.data,
            rows.strides[1] // _FLOAT,
            n,
            None if scales is None else scales.ctypes.data,
            out.ctypes.data,
        )
    return out

"""The compiled exact pass over rows stored by columns (dots.c), loaded.

BLAS's matrix product copies the whole table into its own panels on every call; at the batch
sizes a server forms that copy costs about as much as the products. dots.c reads the columns in
place with AVX-512 (up to 7 directions in strips of 8 columns over every row, more a tile of 16
rows at a time). It is built with the package (pyproject.toml's ext-modules) and loaded here
with ctypes, once; products.py's `compiled_by_columns` calls it for the batch sizes where it
was measured to win (products.COMPILED_FROM to products.COMPILED_UNTIL directions;
docs/exact-pass.md), unless this process capped its compute threads above one. Where it was not
built (no C compiler) or the CPU has no AVX-512, AVAILABLE is False and the pass stays with BLAS.

Each score is one float32 FMA chain in the order of the columns, times the row's scale: the same
bits whatever else is in the batch.

It also selects a pass's candidates (dots_candidates) and computes their float64 rescoring sums
in numpy's order (dots_rescore): selection.py's compiled_candidates and rescoring.py's
compiled_dots, called outside the GIL, as the pass is, on the same CPUs (docs/exact-pass.md: over
HTTP they are worth 1.20x req/s beside the pass).
"""

from __future__ import annotations

import ctypes
import importlib.util

_POINTER, _SIZE = ctypes.c_void_p, ctypes.c_int64
# Each entry point's arguments, in dots.c's order (every one returns an int).
_SIGNATURES: dict[str, list[type]] = {
    "dots_simd": [],
    # simd, directions, count, width, columns, stride, rows, scales, out
    "dots_by_columns": [
        ctypes.c_int,
        _POINTER,
        _SIZE,
        _SIZE,
        _POINTER,
        _SIZE,
        _SIZE,
        _POINTER,
        _POINTER,
    ],
    # scores, count, n, depth, slack, capacity, found, counts
    "dots_candidates": [_POINTER, _SIZE, _SIZE, _SIZE, _POINTER, _SIZE, _POINTER, _POINTER],
    # rows, row_step, column_step, width, ids, owner, n, directions, sums
    "dots_rescore": [_POINTER, _SIZE, _SIZE, _SIZE, _POINTER, _POINTER, _SIZE, _POINTER, _POINTER],
}


def _load() -> tuple[ctypes.CDLL | None, int]:
    spec = importlib.util.find_spec("service.engine.search._dots")
    if spec is None or spec.origin is None:
        return None, 0
    library = ctypes.CDLL(spec.origin)
    for name, arguments in _SIGNATURES.items():
        function = getattr(library, name)
        function.restype = ctypes.c_int
        function.argtypes = arguments
    return library, int(library.dots_simd())


# The library (None when it was not built) and the SIMD it runs here: 512, or 0.
LIBRARY, SIMD = _load()
# Whether the compiled pass can run in this process at all.
AVAILABLE = LIBRARY is not None and SIMD >= 512
# Whether dots.c selects a pass's candidates and rescores them: where the pass runs.
SELECTS = RESCORES = AVAILABLE
# The deepest selection dots.c makes (its heap's room; dots.c's MOST_DEPTH).
MOST_DEPTH = 4096

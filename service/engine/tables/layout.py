"""How a table's one float32 copy of its rows is laid out in memory: by columns, or by rows.

The exhaustive pass scores every row against a batch of directions; BLAS runs that product at
its best on the table's columns as contiguous rows (Q @ T, T = the rows transposed), and at
0.44-0.94x of that on the rows themselves (benchmarks/engine_throughput.py measures both layouts
in one run). So the rows are held in Fortran order: `vectors` is still the (rows, width) array
and `vectors[i]` still row i, but a row is gathered from `width` places, which costs only the
few candidates a search rescores and a lookup's rows. A prepared folder stores them this way
on disk, so it opens memory-mapped with no copy.

A table searched mostly through an approximate index may be held row after row instead (the
table spec's `layout`, `prepare --layout rows`): its candidates are then each one contiguous
read, at the cost of exact passes at the row layout's speed.
"""

from __future__ import annotations

import mmap
from typing import Any, Literal, get_args

import numpy as np

# Rows converted at once: a block's temporaries stay small beside the table itself.
BLOCK_ROWS = 65_536
# How the rows are held: by columns (Fortran order, the default), or row after row (C order).
Layout = Literal["columns", "rows"]
LAYOUTS: tuple[Layout, ...] = get_args(Layout)


# Rows up to this size are held on huge pages (MADV_HUGEPAGE, where the kernel offers them):
# a search gathers each candidate from `width` places, a page apart on a table of 1,024 rows
# or more, and on 4 KiB pages every one of them missed the TLB. A batch of 16 directions on the
# default table (45 MiB) cost 555 us a query against 612 on 4 KiB pages (one run, interleaved).
# Larger tables keep 4 KiB pages, for what filling fresh huge pages costs on a VM (below).
HUGE_PAGES_UP_TO = 256 * 2**20


def blank_columns(rows: int, width: int, populate: bool = True) -> np.ndarray:
    """A rows x width float32 array in Fortran order in a private anonymous map: on huge pages
    up to HUGE_PAGES_UP_TO, else on 4 KiB pages, all mapped at once with `populate`, or taken
    only as they are written (a stream that ends early uses little).

    Not np.empty, for what fresh memory costs on a virtual machine (measured on the 2-core
    development VM, 3.6 GB of rows): numpy madvises large allocations MADV_HUGEPAGE, and
    copying into huge pages the VM had not backed yet took 22.5 s (1.6-1.7 s once recycled),
    against 2.0-2.1 s into this map; and one page fault per 4 KiB cost 9.5-11 s against
    1.7-4.3 s for the kernel populating the whole map in one call. A single-direction scan was
    no slower on 4 KiB pages (`python -m benchmarks.huge_pages`). A private anonymous map is
    unmapped when the array goes.
    """
    if rows == 0 or width == 0:  # an empty map is an error
        return np.empty((rows, width), dtype="<f4", order="F")
    return (
        np.frombuffer(_private_map(rows * width * 4, populate), dtype="<f4").reshape(width, rows).T
    )


def blank_rows(rows: int, width: int, populate: bool = True) -> np.ndarray:
    """A rows x width float32 array in C order (row after row), in a map as blank_columns'."""
    if rows == 0 or width == 0:
        return np.empty((rows, width), dtype="<f4")
    memory = _private_map(rows * width * 4, populate)
    return np.frombuffer(memory, dtype="<f4").reshape(rows, width)


def blank(rows: int, width: int, layout: Layout = "columns", populate: bool = True) -> np.ndarray:
    """A blank rows x width float32 array held in `layout`, for a loader to fill block by block:
    the table's one copy from the start, in the layout it is served in."""
    if layout == "rows":
        return blank_rows(rows, width, populate)
    return blank_columns(rows, width, populate)


def _private_map(size: int, populate: bool) -> mmap.mmap:
    """`size` bytes of private anonymous memory: on huge pages up to HUGE_PAGES_UP_TO."""
    if size <= HUGE_PAGES_UP_TO:
        memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        memory.madvise(mmap.MADV_HUGEPAGE)
        return memory
    flags = mmap.MAP_PRIVATE | (mmap.MAP_POPULATE if populate else 0)
    return mmap.mmap(-1, size, flags=flags)


def as_layout(array: Any, layout: Layout) -> np.ndarray:
    """`array` as float32 rows held in `layout` (Fortran order for columns, C order for rows):
    itself when it already is one in memory, else a copy made BLOCK_ROWS rows at a time (so a
    wider or memory-mapped source never has a second full copy, and a table never holds a view
    of a source file that may change). By rows suits a table searched mostly through an
    approximate index, whose candidates are each then one contiguous read."""
    held = array.flags.c_contiguous if layout == "rows" else array.flags.f_contiguous
    if not maps_a_file(array) and array.dtype == np.float32 and held:
        return np.asarray(array)
    rows, width = array.shape
    return copy_rows(array, blank(rows, width, layout))


def as_columns(array: Any) -> np.ndarray:
    """`array` as float32 rows in Fortran order (as_layout)."""
    return as_layout(array, "columns")


def copy_rows(source: Any, target: np.ndarray) -> np.ndarray:
    """`source`'s rows copied into `target`, BLOCK_ROWS at a time (a wider, memory-mapped or
    differently laid out source never has a second full copy); `target`."""
    for start in range(0, len(target), BLOCK_ROWS):
        target[start : start + BLOCK_ROWS] = source[start : start + BLOCK_ROWS]
    return target


def layout_of(array: np.ndarray) -> Layout:
    """'rows' for an array held row after row (C order only), else 'columns'."""
    return "rows" if array.flags.c_contiguous and not array.flags.f_contiguous else "columns"


def maps_a_file(array: Any) -> bool:
    """Whether `array` is, or is a view of, memory mapped from a file. np.asarray of a memmap
    is a plain ndarray over the same mapping, so the chain of bases is walked: a float32 .npy
    saved by columns once slipped through as a view, and truncating its file killed the
    server with SIGBUS (loadtests.attacks.served_file_rewrites)."""
    while array is not None:
        if isinstance(array, np.memmap | mmap.mmap):
            return True
        array = getattr(array, "base", None)
    return False


def row_norms(vectors: np.ndarray) -> np.ndarray:
    """float64 L2 norm of every row, BLOCK_ROWS rows at a time (no float64 copy of the table).

    Each block is made row-contiguous first, so a norm is summed in the same order whatever
    the table's layout: the same rows give the same norms to the last bit.
    """
    norms = np.empty(len(vectors))
    for start in range(0, len(vectors), BLOCK_ROWS):
        block = np.ascontiguousarray(vectors[start : start + BLOCK_ROWS])
        np.einsum("ij,ij->i", block, block, dtype=np.float64, out=norms[start : start + BLOCK_ROWS])
    return np.sqrt(norms, out=norms)

"""Approximate candidates from FAISS: HNSW, IVF-Flat, IVF-PQ and IVF-PQ fast-scan over a
table's unit rows.

An approximate index only proposes candidates; the search rescores them exactly in float64 from
the stored rows (rescoring.py), so every reported score is the true cosine. What an index can
cost is recall: a true neighbour it never proposes is missing from the answer (README,
"Approximate search"). Label i of an index is row i of its table: every row is added, zero rows
as zero vectors (rescoring drops them).

Indexes are built chunk by chunk from the raw rows (never a second float32 copy of the table
beyond FAISS's own storage; IVF-PQ and fast-scan hold only codes, and their candidates are ranked
again exactly from the table's own rows), and saved and read by indexes/files.py.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal

import faiss
import numpy as np

from service.engine.errors import InvalidQuery, LimitExceeded, TableLoadError
from service.engine.search.queries import SearchOptions
from service.engine.search.store import RowStore

IndexKind = Literal["exact", "hnsw", "hnswsq", "ivf", "ivfpq", "fastscan"]
APPROXIMATE: tuple[IndexKind, ...] = ("hnsw", "hnswsq", "ivf", "ivfpq", "fastscan")
# HNSW graphs: over FAISS's float32 copy of the unit rows (hnsw), or over 8-bit scalar-quantised
# ones (hnswsq: a quarter of the bytes; the exact rescoring makes up for the coarser ranking).
GRAPHS: tuple[IndexKind, ...] = ("hnsw", "hnswsq")
# Kinds that rank candidates by compressed codes: they propose k_factor times the candidates the
# others do, and the exact rescoring picks the best of them.
QUANTIZED: tuple[IndexKind, ...] = ("ivfpq", "fastscan")
# Rows converted to unit float32 and added at once (65,536 x 300 floats are 79 MB).
ADD_ROWS = 65_536
# Training rows per IVF list (FAISS warns below 39), and at most this many in all.
TRAIN_PER_LIST = 40
MAX_TRAIN_ROWS = 200_000
# k_factor when the table names none: IVF-PQ's as before fast-scan; fast-scan's measured
# (BENCHMARKS.md, "Approximate indexes").
DEFAULT_K_FACTOR: dict[IndexKind, int] = {"ivfpq": 4, "fastscan": 4}
# Fast-scan codes are 4 bits (16 centroids per sub-quantizer): the layout its SIMD kernel reads.
FASTSCAN_BITS = 4
EIGHT_BITS = faiss.ScalarQuantizer.QT_8bit
# Dimensions per fast-scan sub-quantizer by default: one. Two (half the codes) lost 0.1-0.3
# of recall@10 at equal q/s on GloVe 400k x 50 and the synthetic 3M x 300 (BENCHMARKS.md,
# "Approximate indexes"); one costs width / 2 bytes a row, 12.5% of the float32 rows plus the ids.
FASTSCAN_DIMS = 1
# Lists probed by default, nlist / this: fast-scan's cheap list scans afford twice IVF's
# share (GloVe 400k: 0.941 at nlist / 16, 0.97 at nlist / 8).
PROBE_SHARE: dict[IndexKind, int] = {"fastscan": 8}

# IVF lists probed: of the nprobe nearest, those whose centroid's cosine is at most this much
# below the nearest list's. Cosines differ by at most 2, so a margin of 2 probes all nprobe.
# 0.3 measured (BENCHMARKS.md, "Probe margin"): on GloVe 400k within 0.006 of the recall of
# every list at 1.04-1.38x the q/s; on the synthetic 3M, whose rows sit in separate clusters,
# the same recall at 1.5-1.8x (0.15 loses recall on GloVe).
NO_MARGIN = 2.0
DEFAULT_PROBE_MARGIN = 0.3

Progress = Callable[[int, int], None]
# Rows measured for recall@10 when an index is built (indexes/recall.py holds them out).
RECALL_ROWS = 200


@dataclass(frozen=True)
class IndexParameters:
    """What to build (kind and build parameters) and how to search it (defaults and bounds).

    0 means "chosen by the table's size" (resolved()).
    """

    kind: IndexKind = "exact"
    hnsw_m: int = 32
    ef_construction: int = 64
    ef_search: int = 128
    max_ef_search: int = 1024
    nlist: int = 0
    nprobe: int = 0
    max_nprobe: int = 0
    pq_m: int = 0
    pq_bits: int = 8
    k_factor: int = 0
    max_k_factor: int = 32
    probe_margin: float = DEFAULT_PROBE_MARGIN

    def resolved(self, rows: int, width: int, where: object) -> IndexParameters:
        """Defaults filled in for a table of `rows` x `width`; TableLoadError naming `where`
        for parameters that cannot work on it."""
        nlist = self.nlist or default_nlist(rows)
        nprobe = self.nprobe or default_nprobe(nlist, self.kind)
        resolved = replace(
            self,
            nlist=nlist,
            nprobe=nprobe,
            max_nprobe=self.max_nprobe or nlist,
            pq_m=self.pq_m or default_pq_m(width, self.kind),
            pq_bits=FASTSCAN_BITS if self.kind == "fastscan" else self.pq_bits,
            k_factor=self.k_factor or DEFAULT_K_FACTOR.get(self.kind, 1),
        )
        resolved.check(rows, width, where)
        return resolved

    def check(self, rows: int, width: int, where: object) -> None:
        """TableLoadError naming `where` unless these parameters fit a rows x width table."""
        if self.kind == "exact":
            return
        problems = []
        if self.kind in GRAPHS and not 1 <= self.ef_search <= self.max_ef_search:
            problems.append(f"ef_search {self.ef_search} must be in [1, {self.max_ef_search}]")
        if self.kind not in GRAPHS:
            trainable = rows - held_out_count(rows, RECALL_ROWS)
            if not 1 <= self.nlist <= trainable:
                problems.append(
                    f"nlist {self.nlist} lists need at least as many rows to train on, and "
                    f"{trainable} of the {rows} rows can train (the rest measure recall): give "
                    f"nlist {max(1, trainable)} or less, or index hnsw, or no index (the exact "
                    "search is fast at this size)"
                )
            if not 1 <= self.nprobe <= min(self.max_nprobe, self.nlist):
                problems.append(f"nprobe {self.nprobe} must be in [1, {self.max_nprobe}]")
        if self.kind in QUANTIZED:
            problems += self._quantizer_problems(rows, width)
        if self.kind not in GRAPHS and not 0 <= self.probe_margin <= NO_MARGIN:
            problems.append(f"probe_margin {self.probe_margin} must be in [0, {NO_MARGIN:g}]")
        if problems:
            raise TableLoadError(where, f"index {self.kind}: " + "; ".join(problems))

    def _quantizer_problems(self, rows: int, width: int) -> list[str]:
        problems = []
        if width % self.pq_m:
            problems.append(f"pq_m {self.pq_m} must divide the width {width}")
        if not 1 <= self.k_factor <= self.max_k_factor:
            problems.append(f"k_factor {self.k_factor} must be in [1, {self.max_k_factor}]")
        if rows - held_out_count(rows, RECALL_ROWS) < 2**self.pq_bits:
            problems.append(
                f"pq_bits {self.pq_bits} codes need {2**self.pq_bits} rows to train, the table "
                f"has {rows}: give a smaller pq_bits, or index ivf or hnsw"
            )
        return problems

    def described(self) -> dict[str, int | float | str]:
        """The parameters that apply to this kind, for the table's facts."""
        keys = {
            "exact": (),
            "hnsw": ("hnsw_m", "ef_construction", "ef_search", "max_ef_search"),
            "hnswsq": ("hnsw_m", "ef_construction", "ef_search", "max_ef_search"),
            "ivf": ("nlist", "nprobe", "max_nprobe", "probe_margin"),
            "ivfpq": ("nlist", "nprobe", "max_nprobe", "probe_margin", "pq_m", "pq_bits",
                      "k_factor", "max_k_factor"),
            "fastscan": ("nlist", "nprobe", "max_nprobe", "probe_margin", "pq_m", "k_factor",
                         "max_k_factor"),
        }[self.kind]  # fmt: skip
        return {"kind": self.kind, **{key: getattr(self, key) for key in keys}}


def held_out_count(rows: int, wanted: int) -> int:
    """Rows (of `rows` with a direction) held out of training to measure recall on."""
    return min(wanted, rows // 10) if rows >= 10 else min(wanted, max(0, rows - 1))


def default_nlist(rows: int) -> int:
    """IVF lists: the power of two nearest sqrt(rows), within [1, rows] and at most 65,536."""
    return max(1, min(rows, 65_536, 2 ** round(math.log2(max(1.0, math.sqrt(rows))))))


def default_nprobe(nlist: int, kind: IndexKind) -> int:
    """IVF lists searched per query: nlist / 16 (fast-scan: nlist / 8)."""
    return max(1, nlist // PROBE_SHARE.get(kind, 16))


def default_pq_m(width: int, kind: IndexKind = "ivfpq") -> int:
    """PQ sub-quantizers: the largest divisor of the width at most width / 4 (4 dims each) for
    IVF-PQ's 8-bit codes; FASTSCAN_DIMS dims per 4-bit code for fast-scan."""
    most = width // (FASTSCAN_DIMS if kind == "fastscan" else 4)
    return max(m for m in range(1, max(1, most) + 1) if width % m == 0)


class ApproximateIndex:
    """A FAISS index over a table's unit rows, searched for candidates."""

    def __init__(self, index: Any, parameters: IndexParameters, build_seconds: float) -> None:
        self.index = index
        self.parameters = parameters
        self.build_seconds = build_seconds

    @property
    def kind(self) -> IndexKind:
        """hnsw, hnswsq, ivf, ivfpq or fastscan."""
        return self.parameters.kind

    @cached_property
    def nbytes(self) -> int:
        """Bytes the index holds: vectors or codes, plus graph links or list ids and centroids."""
        index = self.index
        if self.kind in GRAPHS:
            hnsw: Any = faiss.downcast_index(index)
            links = int(hnsw.hnsw.neighbors.size()) * 4
            storage: Any = faiss.downcast_index(hnsw.storage)
            return int(index.ntotal * storage.code_size + links)
        ivf = self._ivf
        centroids = ivf.nlist * index.d * 4
        if self.kind == "fastscan":
            return _block_list_bytes(ivf) + int(index.ntotal) * 8 + centroids
        return int(index.ntotal * (ivf.code_size + 8) + centroids)

    def candidates(
        self, directions: np.ndarray, depth: int, restrict: int | None, options: SearchOptions
    ) -> np.ndarray:
        """(batch, depth) rows proposed for unit float32 `directions`; -1 pads."""
        if self.kind in QUANTIZED:
            depth *= options.k_factor or self.parameters.k_factor
        depth = min(depth, self.index.ntotal)
        params = self._search_parameters(depth, restrict, options)
        if self.kind in GRAPHS:
            return self.index.search(directions, depth, params=params)[1]
        margin = options.probe_margin
        if margin is None:
            margin = self.parameters.probe_margin
        return self._probe_within(directions, depth, params, margin)

    def _probe_within(
        self, directions: np.ndarray, depth: int, params: Any, margin: float
    ) -> np.ndarray:
        """IVF candidates from the nprobe lists nearest each direction, less those whose
        centroid scores more than `margin` below the nearest one's (FAISS skips a list of -1).

        A direction near one cluster of rows has a few lists far above the rest; the lists
        beyond the margin hold rows of other clusters, which are rarely among its neighbours,
        so nprobe is the most lists a query scans rather than the number it always scans."""
        # Held by a name for the call: FAISS reads it through a bare pointer.
        directions = np.ascontiguousarray(directions, dtype=np.float32)
        count = len(directions)
        scores, lists = self._ivf.quantizer.search(directions, params.nprobe)
        lists[scores < scores[:, :1] - np.float32(margin)] = -1
        distances = np.empty((count, depth), dtype=np.float32)
        labels = np.empty((count, depth), dtype=np.int64)
        self._ivf.search_preassigned_c(
            count,
            faiss.swig_ptr(directions),
            depth,
            faiss.swig_ptr(lists),
            faiss.swig_ptr(scores),
            faiss.swig_ptr(distances),
            faiss.swig_ptr(labels),
            False,
            params,
        )
        return labels

    @cached_property
    def _ivf(self) -> Any:
        """The IVF index inside (IVF kinds only): its coarse quantizer, lists and sizes."""
        return faiss.extract_index_ivf(self.index)

    def _search_parameters(
        self, depth: int, restrict: int | None, options: SearchOptions
    ) -> faiss.SearchParameters:
        if self.kind in GRAPHS:
            params: Any = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
            params.efSearch = max(depth, options.ef_search or self.parameters.ef_search)
        else:
            params = faiss.SearchParametersIVF()
            params.nprobe = options.nprobe or self.parameters.nprobe
        if restrict is not None and restrict < self.index.ntotal:
            # Kept on the parameters: FAISS does not own the selector.
            params.sel = self._selector = faiss.IDSelectorRange(0, restrict)
        return params


def _block_list_bytes(ivf: Any) -> int:
    """Bytes of fast-scan's inverted lists: codes packed in blocks of n_per_block rows."""
    lists: Any = faiss.downcast_InvertedLists(ivf.invlists)
    sizes = np.fromiter((lists.list_size(i) for i in range(ivf.nlist)), np.int64, ivf.nlist)
    return int(-(-sizes // lists.n_per_block).sum() * lists.block_size)


def check_options(parameters: IndexParameters, options: SearchOptions) -> None:
    """InvalidQuery unless each option applies to the table's index kind; LimitExceeded beyond
    its bounds (max_ef_search; max_nprobe, at most nlist; max_k_factor; probe_margin in [0, 2])."""
    kind = parameters.kind
    rules = (
        ("ef_search", GRAPHS, "an hnsw or hnswsq index", parameters.max_ef_search),
        ("nprobe", ("ivf", *QUANTIZED), "an ivf, ivfpq or fastscan index",
         min(parameters.max_nprobe, parameters.nlist)),
        ("k_factor", QUANTIZED, "an ivfpq or fastscan index", parameters.max_k_factor),
        ("probe_margin", ("ivf", *QUANTIZED), "an ivf, ivfpq or fastscan index", NO_MARGIN),
    )  # fmt: skip
    for name, kinds, which, limit in rules:
        value = getattr(options, name)
        if value is None:
            continue
        if kind not in kinds:
            raise InvalidQuery(f"{name} applies to {which}; this table's is {kind}")
        if value > limit:
            raise LimitExceeded(name, limit, value)
    if options.probe_margin is not None and options.probe_margin < 0:
        raise InvalidQuery(f"probe_margin is {options.probe_margin}; it must be at least 0")


def empty_index(parameters: IndexParameters, width: int) -> Any:
    """An untrained FAISS index of the kind and build parameters asked for (inner product)."""
    metric = faiss.METRIC_INNER_PRODUCT
    index: Any
    if parameters.kind in GRAPHS:
        if parameters.kind == "hnsw":
            index = faiss.IndexHNSWFlat(width, parameters.hnsw_m, metric)
        else:
            index = faiss.IndexHNSWSQ(width, EIGHT_BITS, parameters.hnsw_m, metric)  # type: ignore[arg-type]
        index.hnsw.efConstruction = parameters.ef_construction
        return index
    # FAISS's Python constructors keep a reference to the quantizer for the index's lifetime.
    quantizer = faiss.IndexFlatIP(width)
    if parameters.kind == "ivf":
        return faiss.IndexIVFFlat(quantizer, width, parameters.nlist, metric)
    if parameters.kind == "fastscan":
        return faiss.IndexIVFPQFastScan(
            quantizer, width, parameters.nlist, parameters.pq_m, FASTSCAN_BITS, metric
        )
    return faiss.IndexIVFPQ(
        quantizer, width, parameters.nlist, parameters.pq_m, parameters.pq_bits, metric
    )


def unit_rows(store: RowStore, start: int, stop: int) -> np.ndarray:
    """Rows start..stop scaled to unit length in float32 (zero rows stay zero)."""
    norms = store.norms64[start:stop]
    scales = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return (store.vectors[start:stop] * scales[:, None].astype(np.float32)).astype(np.float32)


def build_index(
    store: RowStore,
    parameters: IndexParameters,
    held_out: np.ndarray,
    progress: Progress | None = None,
    seed: int = 0,
) -> ApproximateIndex:
    """Build an index of `store`'s rows; IVF lists are trained on rows not in `held_out`."""
    started = time.perf_counter()
    index = empty_index(parameters, store.width)
    if not index.is_trained:
        index.train(training_rows(store, parameters, held_out, seed))
    for start in range(0, store.rows, ADD_ROWS):
        stop = min(start + ADD_ROWS, store.rows)
        index.add(unit_rows(store, start, stop))
        if progress is not None:
            progress(stop, store.rows)
    return ApproximateIndex(index, parameters, time.perf_counter() - started)


def training_rows(
    store: RowStore, parameters: IndexParameters, held_out: np.ndarray, seed: int
) -> np.ndarray:
    """A seeded sample of unit rows with a direction, none of them held out for recall."""
    candidates = np.setdiff1d(store.indexed, held_out, assume_unique=True)
    count = min(candidates.size, max(parameters.nlist * TRAIN_PER_LIST, 10_000), MAX_TRAIN_ROWS)
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(candidates, size=count, replace=False))
    scales = (1 / store.norms64[chosen]).astype(np.float32)
    return np.ascontiguousarray(store.vectors[chosen] * scales[:, None], dtype=np.float32)

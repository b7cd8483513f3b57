"""An approximate index on disk: the FAISS file and a JSON sidecar that ties it to its table.

    hnsw.faiss    faiss.write_index's file, read back memory-mapped (IO_FLAG_MMAP_IFC): several
                  processes opening one index share its pages. FAISS maps the inverted lists of
                  IVF and IVF-PQ; fast-scan's block lists it reads into memory (a few tens of
                  bytes a row, a copy per process)
    hnsw.json     format, version, the table's fingerprint (prepared.fingerprint), shape, kind
                  and parameters, build time, and the held-out recall queries with their exact
                  answers, so a load measures recall without an exhaustive pass

A FAISS file without a sidecar is accepted when its rows, width and metric match the table
(recall is then measured from scratch); with one, it must name this table's fingerprint.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import check_confined, require_file, unreadable
from service.engine.files.writing import check_file_target, staging_file
from service.engine.indexes.recall import Recall, Truth
from service.engine.search.approximate import (
    DEFAULT_K_FACTOR,
    FASTSCAN_BITS,
    GRAPHS,
    ApproximateIndex,
    IndexKind,
    IndexParameters,
    default_nprobe,
)

FORMAT = "embedding-service-index"
VERSION = 1
READ_FLAGS = faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY


def sidecar_of(path: Path) -> Path:
    """Where an index file's sidecar lives: the same name with .json."""
    return path.with_suffix(".json")


def save_index(
    path: Path,
    approximate: ApproximateIndex,
    fingerprint: str,
    truth: Truth,
    recall: Recall,
) -> None:
    """Write the index and its sidecar (each under a temporary name, then renamed)."""
    facts = {
        "format": FORMAT,
        "version": VERSION,
        "fingerprint": fingerprint,
        "rows": int(approximate.index.ntotal),
        "width": int(approximate.index.d),
        "parameters": approximate.parameters.described(),
        "build_seconds": round(approximate.build_seconds, 3),
        "recall_at_10": recall.at_k,
        "truth_rows": truth.rows.tolist(),
        "truth": truth.neighbors.tolist(),
    }
    check_index_target(path)
    staging = sidecar_staging = None
    try:
        staging = staging_file(path)
        write_index(approximate, staging)
        sidecar = sidecar_of(path)
        sidecar_staging = staging_file(sidecar)
        sidecar_staging.write_text(json.dumps(facts), encoding="utf-8")
        check_index_target(path)  # again: writing a big index takes a while
        os.replace(staging, path)
        os.replace(sidecar_staging, sidecar)
    except BaseException as error:  # Ctrl-C too: no half-written file is left behind
        for written in (staging, sidecar_staging):
            if written is not None:
                written.unlink(missing_ok=True)
        if isinstance(error, OSError | RuntimeError):
            raise TableLoadError(path, f"cannot write the index ({error})") from None
        raise


def check_index_target(path: Path) -> None:
    """RefusedOverwrite unless `path` and its sidecar are new or an index this service wrote
    (checked before a build, so a refusal costs no build time)."""
    sidecar = sidecar_of(path)
    if path.suffix == ".json":
        raise TableLoadError(path, "an index file cannot end in .json: that is its sidecar's name")
    check_file_target(sidecar, "an index sidecar", _is_sidecar)
    check_file_target(path, "an index file", lambda _: _is_sidecar(sidecar))


def _is_sidecar(path: Path) -> bool:
    try:
        return _read_sidecar(path) is not None
    except TableLoadError:
        return False


def load_index(
    path: Path, parameters: IndexParameters, fingerprint: str, rows: int, width: int
) -> tuple[ApproximateIndex, Truth | None]:
    """A saved index and its recall truth; TableLoadError naming the file when it does not
    belong to this table."""
    require_file(path)
    facts = _read_sidecar(sidecar_of(path))
    if facts is not None and facts.get("fingerprint") != fingerprint:
        raise TableLoadError(
            path,
            f"built for another table (fingerprint {facts.get('fingerprint')}, this table's "
            f"is {fingerprint}): build it again",
        )
    approximate = read_index(path, parameters, rows, width)
    if facts is None:
        return approximate, None
    approximate.build_seconds = float(facts.get("build_seconds", 0.0))
    truth = Truth(
        np.asarray(facts["truth_rows"], dtype=np.int64),
        np.asarray(facts["truth"], dtype=np.int64).reshape(len(facts["truth_rows"]), -1),
    )
    return approximate, truth


def _read_sidecar(path: Path) -> dict[str, Any] | None:
    check_confined(path)
    if not path.exists():
        return None
    try:
        facts = json.loads(path.read_text(encoding="utf-8"))
    except PermissionError:
        raise unreadable(path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise TableLoadError(path, "not an index sidecar: invalid JSON") from None
    if not isinstance(facts, dict) or facts.get("format") != FORMAT:
        raise TableLoadError(path, f"not an index sidecar (no format {FORMAT!r})")
    if facts.get("version") != VERSION or "truth_rows" not in facts or "truth" not in facts:
        raise TableLoadError(path, f"index sidecar version {facts.get('version')} unknown")
    return facts


def write_index(index: ApproximateIndex, path: Path) -> None:
    """Save the FAISS index to `path`."""
    faiss.write_index(index.index, str(path))


def read_index(path: Path, parameters: IndexParameters, rows: int, width: int) -> ApproximateIndex:
    """A saved index, memory-mapped; TableLoadError unless it matches the table and kind."""
    try:
        index = faiss.read_index(str(path), READ_FLAGS)
    except RuntimeError:
        raise TableLoadError(path, "not a FAISS index file FAISS can read") from None
    kind = kind_of(index)
    problems = []
    if index.ntotal != rows:
        problems.append(f"it holds {index.ntotal} rows, the table {rows}")
    if index.d != width:
        problems.append(f"its width is {index.d}, the table's {width}")
    if index.metric_type != faiss.METRIC_INNER_PRODUCT:
        problems.append("its metric is not inner product")
    if kind is None:
        problems.append(f"its type {type(index).__name__} is not one the service searches")
    elif parameters.kind not in ("exact", kind):
        problems.append(f"it is an {kind} index, the table asks for {parameters.kind}")
    if problems:
        raise TableLoadError(path, "does not match its table: " + "; ".join(problems))
    assert kind is not None
    built = parameters_of(index, kind, parameters)
    built.check(rows, width, path)
    return ApproximateIndex(index, built, build_seconds=0.0)


def kind_of(index: Any) -> IndexKind | None:
    """Which kind a FAISS index is, or None for one the service does not search."""
    index = faiss.downcast_index(index)
    if isinstance(index, faiss.IndexHNSWFlat):
        return "hnsw"
    if isinstance(index, faiss.IndexHNSWSQ):
        return "hnswsq"
    if isinstance(index, faiss.IndexIVFPQ):
        return "ivfpq"
    if isinstance(index, faiss.IndexIVFPQFastScan):
        return "fastscan"
    if isinstance(index, faiss.IndexIVFFlat):
        return "ivf"
    return None


def parameters_of(index: Any, kind: IndexKind, asked: IndexParameters) -> IndexParameters:
    """The build parameters a read index has, with the search settings asked for."""
    index = faiss.downcast_index(index)
    if kind in GRAPHS:
        return replace(
            asked,
            kind=kind,
            hnsw_m=int(index.hnsw.nb_neighbors(1)),
            ef_construction=int(index.hnsw.efConstruction),
        )
    ivf = faiss.extract_index_ivf(index)
    nprobe = asked.nprobe or default_nprobe(int(ivf.nlist), kind)
    built = replace(
        asked,
        kind=kind,
        nlist=int(ivf.nlist),
        nprobe=nprobe,
        max_nprobe=asked.max_nprobe or ivf.nlist,
    )
    if kind == "ivfpq":
        built = replace(built, pq_m=int(index.pq.M), pq_bits=int(index.pq.nbits))
    if kind == "fastscan":
        built = replace(built, pq_m=int(index.M), pq_bits=FASTSCAN_BITS)
    if kind in DEFAULT_K_FACTOR:
        built = replace(built, k_factor=asked.k_factor or DEFAULT_K_FACTOR[kind])
    return built

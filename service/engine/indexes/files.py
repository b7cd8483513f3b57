"""An approximate index on disk: the FAISS file and a JSON sidecar that ties it to its table.

    hnsw.faiss    faiss.write_index's file (read back memory-mapped)
    hnsw.json     format, version, the table's fingerprint (prepared.fingerprint), shape, kind
                  and parameters, build time, and the held-out recall queries with their exact
                  answers, so a load measures recall without an exhaustive pass

A FAISS file without a sidecar is accepted when its rows, width and metric match the table
(recall is then measured from scratch); with one, it must name this table's fingerprint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import require_file
from service.engine.files.writing import check_file_target, staging_file
from service.engine.indexes.recall import Recall, Truth
from service.engine.search.approximate import (
    ApproximateIndex,
    IndexParameters,
    read_index,
    write_index,
)

FORMAT = "embedding-service-index"
VERSION = 1


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
    except (OSError, RuntimeError) as error:
        for written in (staging, sidecar_staging):
            if written is not None:
                written.unlink(missing_ok=True)
        raise TableLoadError(path, f"cannot write the index ({error})") from None


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
    if not path.exists():
        return None
    try:
        facts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise TableLoadError(path, "not an index sidecar: invalid JSON") from None
    if not isinstance(facts, dict) or facts.get("format") != FORMAT:
        raise TableLoadError(path, f"not an index sidecar (no format {FORMAT!r})")
    if facts.get("version") != VERSION or "truth_rows" not in facts or "truth" not in facts:
        raise TableLoadError(path, f"index sidecar version {facts.get('version')} unknown")
    return facts

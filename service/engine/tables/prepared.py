"""The prepared form of a table: a folder of arrays that opens memory-mapped in a moment.

    embedding-service prepare SPEC OUT     (or a cache directory: service/loading/cache_dir.py)

A folder holds `table.json` (the manifest: format, version, shape, source, each file's dtype,
shape and checksum, metadata columns, a language model's facts) and:

    vectors.npy        the float32 rows, rows x width, stored by columns (Fortran order, as a
                       table holds them: tables/layout.py), or row after row when prepared
                       with layout "rows" (below); the one copy every search uses
    norms.npy          float64 L2 norm of every row
    tokens.bin         the tokens' UTF-8 bytes, back to back
    token_offsets.npy  int64, rows + 1: token i is tokens.bin[offsets[i]:offsets[i + 1]]
    token_slots.npy    the exact-token hash table (vocabulary.py); folded_slots.npy the
                       case-folded one
    metadata_<i>.npy   a numeric metadata column, or metadata_<i>.bin + metadata_<i>.npy
                       (bytes and offsets) for a text one
    tokenizer.json     the model's tokenizer, when the table has one
    output.npy         a language model's untied output table, by columns as vectors.npy
    token_weights.npy  a static embedding model's per-token weights (its recipe, tables/
                       embedding.py, is the manifest's `static`)
    index.faiss        an approximate index with index.json (index_files.py), when built

The manifest's `layout` says how vectors.npy is stored. "columns" (the default) is the layout
the exhaustive pass is fastest on. "rows" is for a big table searched mostly through its
approximate index: each candidate rescored is then one contiguous read where by columns it is
`width` reads a column apart, each on its own page of a memory-mapped file (80 candidates of a
3M x 300 table: BENCHMARKS.md), at the cost of exact passes running at the row layout's speed.

Opening checks the manifest, every file's header against it and the small files' checksums,
and skips every check that passes over the rows (finite values, duplicate tokens): they ran
when the folder was written. A folder is written under a temporary name and renamed into place,
so a reader never sees half of one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import require_file
from service.engine.files.writing import (
    check_folder_target,
    remove_staging,
    staging_folder,
    swap_in,
)
from service.engine.tables.embedding import StaticEmbedding
from service.engine.tables.layout import LAYOUTS, Layout, as_columns, copy_rows, layout_of
from service.engine.tables.model import ModelFacts
from service.engine.tables.stored import (
    MetadataValue,
    NumberColumn,
    TextColumn,
    checksum,
    column_kind,
    open_array,
    open_bytes,
    save_array,
    save_bytes,
)
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.vocabulary import Vocabulary

FORMAT = "embedding-service-prepared"
# 2: rows stored by columns (version 1 stored them row after row), or as the manifest's
# `layout` says (absent: columns).
VERSION = 2
MANIFEST = "table.json"
TOKENIZER = "tokenizer.json"
# The approximate index a prepared folder may hold, and its sidecar (index_files.py).
INDEX = "index.faiss"
INDEX_SIDECAR = "index.json"
WHAT = "a prepared table folder"


def is_prepared(path: Path) -> bool:
    """Whether `path` is a prepared table's folder."""
    return path.is_dir() and (path / MANIFEST).is_file()


def fingerprint(table: EmbeddingTable) -> str:
    """What identifies a table's content cheaply: shape, and checksums of its tokens and of its
    rows' norms (any change to a row changes its norm, almost surely)."""
    vocabulary = table.vocabulary
    tokens = checksum(vocabulary.blob[: len(vocabulary.blob)])
    return f"{table.rows}x{table.width}-{tokens:08x}-{checksum(table.norms64):08x}"


def write_prepared(
    table: EmbeddingTable,
    out: Path,
    facts: dict[str, Any] | None = None,
    layout: Layout = "columns",
    finish: Callable[[Path], None] | None = None,
) -> Path:
    """Write `table` as a prepared folder at `out`: a new path, an empty directory, or a
    prepared folder (replaced in one step); anything else is refused (RefusedOverwrite).
    `layout`: how its rows are stored (LAYOUTS). `finish(folder)` adds to the folder before
    it is put in place (prepare builds its index there), so a folder at `out` is whole: a
    failure or an interrupt (KeyboardInterrupt) leaves `out` as it was and nothing beside it."""
    out = Path(out)
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r} is not one of {LAYOUTS}")
    check_prepared_target(out)
    try:
        staging = staging_folder(out)
    except OSError as error:
        raise _unwritable(out, error) from None
    try:
        manifest = _write_files(table, staging, layout)
        manifest.update(facts or {})
        if finish is not None:
            finish(staging)
        # The manifest last: a folder without one is not a prepared folder (is_prepared).
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        check_prepared_target(out)  # again: the writing took a while
        swap_in(staging, out, owned_files(out) or ())
    except BaseException as error:
        remove_staging(staging)
        if isinstance(error, OSError):
            raise _unwritable(out, error) from None
        raise
    return out


def _unwritable(out: Path, error: OSError) -> TableLoadError:
    return TableLoadError(out, f"cannot write the prepared table ({error.strerror})")


def check_prepared_target(out: Path) -> None:
    """RefusedOverwrite unless `out` may be written as a prepared folder (before any work)."""
    check_folder_target(Path(out), WHAT, owned_files)


def owned_files(folder: Path) -> set[str] | None:
    """The files of a prepared folder the service wrote (None when `folder` is not one)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            return None
        entries = [manifest["tokens"], *manifest["arrays"].values()]
        for column in manifest["metadata"]:
            entries += [column[key] for key in ("bytes", "offsets", "values") if key in column]
        return {MANIFEST, TOKENIZER, INDEX, INDEX_SIDECAR, *(entry["file"] for entry in entries)}
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, KeyError, TypeError):
        return None


def _write_files(table: EmbeddingTable, folder: Path, layout: Layout) -> dict[str, Any]:
    vocabulary = table.vocabulary
    blob = bytes(vocabulary.blob[: len(vocabulary.blob)])
    # The rows are checked by shape only when opened: a checksum would read them all.
    if layout == "rows":
        vectors = _save_by_rows(folder, "vectors", table.vectors)
    else:
        vectors = save_array(folder, "vectors", as_columns(table.vectors), False)
    arrays = {
        "vectors": vectors,
        "norms": save_array(folder, "norms", np.asarray(table.norms64)),
        "token_offsets": save_array(folder, "token_offsets", np.asarray(vocabulary.offsets)),
        "token_slots": save_array(folder, "token_slots", np.asarray(vocabulary.slots)),
        "folded_slots": save_array(folder, "folded_slots", np.asarray(vocabulary.folded_slots)),
    }
    if table.output is not None:
        arrays["output"] = save_array(folder, "output", as_columns(table.output), False)
    static = table.static
    if static is not None and static.weights is not None:
        arrays["token_weights"] = save_array(folder, "token_weights", static.weights)
    if table.tokenizer is not None:
        (folder / TOKENIZER).write_text(table.tokenizer.tokenizer.to_str(), encoding="utf-8")
    return {
        "format": FORMAT,
        "version": VERSION,
        "layout": layout,
        "rows": table.rows,
        "width": table.width,
        "source": table.source,
        "fingerprint": fingerprint(table),
        "tokens": save_bytes(folder, "tokens.bin", blob),
        "arrays": arrays,
        "metadata": [
            _save_column(folder, i, name, column)
            for i, (name, column) in enumerate(table.metadata.items())
        ],
        "tokenizer": table.tokenizer is not None,
        "model": None if table.model is None else table.model.to_json(),
        "static": None if static is None else static.to_json(),
    }


def _save_by_rows(folder: Path, name: str, vectors: np.ndarray) -> dict[str, Any]:
    """Write float32 `vectors` row after row as folder/name.npy, a block at a time (copy_rows: no
    second full copy of a table held by columns); its manifest entry, without a checksum."""
    path = folder / f"{name}.npy"
    rows, width = vectors.shape
    stored = np.lib.format.open_memmap(path, mode="w+", dtype="<f4", shape=(rows, width))
    copy_rows(vectors, stored)
    stored.flush()
    del stored
    return {"file": path.name, "dtype": "<f4", "shape": [rows, width], "crc32": None}


def _save_column(
    folder: Path, number: int, name: str, column: Sequence[MetadataValue]
) -> dict[str, Any]:
    kind = column_kind(column)
    stem = f"metadata_{number}"
    if kind == "text":
        text = TextColumn.of_strings([str(value) for value in column])
        return {
            "name": name,
            "kind": kind,
            "bytes": save_bytes(folder, f"{stem}.bin", bytes(text.blob)),
            "offsets": save_array(folder, stem, text.offsets),
        }
    values = np.asarray(column, dtype=np.int64 if kind == "int64" else np.float64)
    return {"name": name, "kind": kind, "values": save_array(folder, stem, values)}


def read_manifest(folder: Path) -> dict[str, Any]:
    """A prepared folder's manifest; TableLoadError naming it when it is not a valid one."""
    path = folder / MANIFEST
    require_file(path)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise TableLoadError(path, "not a prepared table manifest: invalid JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise TableLoadError(path, f"not a prepared table manifest (no format {FORMAT!r})")
    if manifest.get("version") != VERSION:
        raise TableLoadError(
            path,
            f"prepared with format version {manifest.get('version')}; this service reads "
            f"version {VERSION}: prepare the table again",
        )
    return manifest


def open_prepared(folder: Path) -> EmbeddingTable:
    """The table in a prepared folder, memory-mapped; TableLoadError naming the bad file."""
    folder = Path(folder)
    try:
        manifest = read_manifest(folder)
        return _open(folder, manifest)
    except KeyError as error:
        raise TableLoadError(folder / MANIFEST, f"manifest lacks {error}") from None


def _open(folder: Path, manifest: dict[str, Any]) -> EmbeddingTable:
    arrays = manifest["arrays"]
    for entry in (manifest["tokens"], *arrays.values()):
        require_file(folder / entry["file"])
    vectors = open_array(folder, arrays["vectors"])
    rows, width = manifest["rows"], manifest["width"]
    if vectors.shape != (rows, width):
        raise TableLoadError(folder / MANIFEST, f"says {rows} x {width}, the rows are not")
    layout = manifest.get("layout", "columns")
    if layout not in LAYOUTS:
        raise TableLoadError(folder / MANIFEST, f"layout {layout!r} is not one of {LAYOUTS}")
    if rows > 1 and width > 1 and layout_of(vectors) != layout:
        raise TableLoadError(
            folder / "vectors.npy", f"rows not stored in the manifest's layout ({layout})"
        )
    blob = open_bytes(folder, manifest["tokens"])
    vocabulary = Vocabulary(
        blob,
        _checked_offsets(folder, arrays["token_offsets"], rows, len(blob)),
        _checked_slots(folder, arrays["token_slots"], rows),
        _checked_slots(folder, arrays["folded_slots"], rows),
    )
    norms = open_array(folder, arrays["norms"])
    if norms.shape != (rows,):
        raise TableLoadError(folder / arrays["norms"]["file"], f"has no norm for each of {rows}")
    metadata = {entry["name"]: _open_column(folder, entry) for entry in manifest["metadata"]}
    model = None if manifest.get("model") is None else ModelFacts.of_json(manifest["model"])
    tokenizer = None
    if manifest["tokenizer"]:
        from service.engine.tables.text import HuggingFaceTokenizer

        # The tokenizer knows the tokens, not the padding rows past them.
        tokens = vocabulary if model is None else vocabulary[: model.tokens]
        tokenizer = HuggingFaceTokenizer.load(folder / TOKENIZER, tokens)
    output = open_array(folder, arrays["output"]) if "output" in arrays else None
    static = _open_static(folder, manifest, rows)
    return EmbeddingTable(
        vocabulary,
        vectors,
        metadata,
        source=str(folder),
        tokenizer=tokenizer,
        stored_norms=norms,
        checked=True,
        output=output,
        model=model,
        static=static,
    )


def _open_static(folder: Path, manifest: dict[str, Any], rows: int) -> StaticEmbedding | None:
    """A static embedding model's recipe and its per-token weights (one per row), if any."""
    facts = manifest.get("static")
    if facts is None:
        return None
    entry = manifest["arrays"].get("token_weights")
    weights = None if entry is None else open_array(folder, entry)
    if weights is not None and weights.shape != (rows,):
        raise TableLoadError(folder / entry["file"], f"has no weight for each of {rows} rows")
    try:
        return StaticEmbedding.of_json(facts, weights)
    except (TypeError, KeyError):
        raise TableLoadError(folder / MANIFEST, "its `static` recipe is not one this service "
                             "reads: prepare the table again") from None  # fmt: skip


def _checked_offsets(folder: Path, entry: dict[str, Any], rows: int, size: int) -> np.ndarray:
    """Token offsets: rows + 1 of them, rising from 0 to the size of the tokens' bytes."""
    offsets = open_array(folder, entry)
    steps = np.diff(offsets)
    if offsets.shape != (rows + 1,) or offsets[0] != 0 or offsets[-1] != size or (steps < 0).any():
        raise TableLoadError(folder / entry["file"], "token offsets do not fit the tokens file")
    return offsets


def _checked_slots(folder: Path, entry: dict[str, Any], rows: int) -> np.ndarray:
    """A hash table: a power-of-two number of slots, each empty (-1) or a row."""
    slots = open_array(folder, entry)
    size = slots.size
    if size & (size - 1) or size < rows or slots.min() < -1 or slots.max() >= rows:
        raise TableLoadError(folder / entry["file"], "not a token hash table of this table")
    return slots


def _open_column(folder: Path, entry: dict[str, Any]) -> Sequence[MetadataValue]:
    if entry["kind"] == "text":
        return TextColumn(open_bytes(folder, entry["bytes"]), open_array(folder, entry["offsets"]))
    return NumberColumn(open_array(folder, entry["values"]))

"""Command-line preparation of big tables: the prepared form, and approximate indexes.

    embedding-service prepare SPEC OUT [--layout rows] [--index hnsw ...]
    embedding-service index build SPEC --out FILE [--index hnsw] [--hnsw-m 32 ...]

SPEC is a table file (or a prepared folder, for `index build`) with the usual file options.
Both print a JSON summary on stdout and their progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from service.cli.options import add_path, spec_of
from service.cli.progress import ProgressBar, ctrl_c_between_steps, say
from service.config import TableSpec
from service.engine.indexes.building import Indexing
from service.engine.indexes.files import check_index_target, save_index
from service.engine.search.approximate import APPROXIMATE, ApproximateIndex
from service.engine.search.cosine import CosineSearch
from service.engine.tables.layout import LAYOUTS
from service.engine.tables.prepared import (
    INDEX_SIDECAR,
    check_prepared_target,
    fingerprint,
    write_prepared,
)
from service.engine.tables.table import EmbeddingTable
from service.loading.indexes import PREPARED_INDEX
from service.loading.tables import read_source, read_spec

# A prepared folder's index files, counted apart from the table's bytes.
INDEX_FILES = frozenset({PREPARED_INDEX, INDEX_SIDECAR})


def add_index_options(parser: argparse.ArgumentParser, default: str | None) -> None:
    """--index and the build parameters (defaults as in a table spec)."""
    parser.add_argument("--index", choices=APPROXIMATE, default=default, help="index kind")
    parser.add_argument("--hnsw-m", type=int, help="HNSW links per node (32)")
    parser.add_argument("--ef-construction", type=int, help="HNSW efConstruction (64)")
    parser.add_argument("--nlist", type=int, help="IVF lists (the power of 2 near sqrt(rows))")
    parser.add_argument(
        "--pq-m", type=int, help="IVF-PQ, fast-scan sub-quantizers (divide the width)"
    )
    parser.add_argument("--pq-bits", type=int, help="IVF-PQ bits per code (8)")
    parser.add_argument("--threads", type=int, help="threads for the build (default: all)")


def with_index_options(spec: TableSpec, args: argparse.Namespace) -> TableSpec:
    """`spec` with the command's index options (validated as a table spec is)."""
    names = ("index", "hnsw_m", "ef_construction", "nlist", "pq_m", "pq_bits")
    given = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    return TableSpec.model_validate({**spec.model_dump(), **given})


def prepare(args: argparse.Namespace) -> int:
    """Write a table's prepared folder (and its index, with --index, built before the folder
    is put in place: an interrupted prepare leaves nothing that looks finished)."""
    spec = with_index_options(spec_of(args), args)
    out = Path(args.out)
    check_prepared_target(out)  # before the read: a refusal costs nothing
    started = time.perf_counter()
    table = read_source(spec)
    say(f"read {table.rows:,} x {table.width} in {time.perf_counter() - started:.1f} s")
    index: dict[str, Any] = {}

    def build_index(folder: Path) -> None:
        index.update(build(table, spec, folder / PREPARED_INDEX, args.threads))
        index["source"] = str(out / PREPARED_INDEX)

    finish = build_index if spec.index is not None else None
    write_prepared(table, out, {"spec": spec.model_dump(mode="json")}, args.layout, finish)
    summary: dict[str, Any] = {
        "out": str(out),
        "rows": table.rows,
        "width": table.width,
        "layout": args.layout,
        "bytes": sum(f.stat().st_size for f in out.iterdir() if f.name not in INDEX_FILES),
    }
    if index:
        summary["index"] = index
    summary["seconds"] = round(time.perf_counter() - started, 2)
    print(json.dumps(summary, indent=2))
    return 0


def build_index_command(args: argparse.Namespace) -> int:
    """Build an approximate index of a table and save it with its sidecar."""
    spec = with_index_options(spec_of(args), args)
    check_index_target(args.out)  # before the read and the build
    table = read_spec(spec)
    print(json.dumps(build(table, spec, args.out, args.threads), indent=2))
    return 0


def build(table: EmbeddingTable, spec: TableSpec, out: Path, threads: int | None) -> dict[str, Any]:
    """Build, measure and save the spec's index of `table`; its facts."""
    import faiss

    if threads is not None:
        faiss.omp_set_num_threads(threads)
    assert spec.index is not None
    parameters = spec.index_parameters(spec.index).resolved(table.rows, table.width, spec.path)
    indexing = Indexing(CosineSearch(table), parameters)
    bar = ProgressBar(f"building {parameters.kind}", table.rows)
    with ctrl_c_between_steps(bar) as check:
        bar.update(0, table.rows)  # at once: the first block of rows can take minutes

        def progress(done: int, total: int) -> None:
            check()
            bar.update(done, total)

        def measuring() -> None:
            check()
            say("measuring recall@10")

        approximate: ApproximateIndex = indexing.build(progress, measuring)
    assert indexing.truth is not None and indexing.recall is not None
    save_index(Path(out), approximate, fingerprint(table), indexing.truth, indexing.recall)
    facts = indexing.facts()
    facts["source"] = str(out)
    return facts


def add_commands(commands: Any) -> None:
    """The `prepare` and `index build` sub-commands."""
    prepare_parser = commands.add_parser(
        "prepare", help="write a table's prepared (memory-mappable) folder"
    )
    add_path(prepare_parser)
    prepare_parser.add_argument("out", type=Path, help="the folder to write")
    prepare_parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="columns",
        help="how the rows are stored: by columns (fastest exact search) or row after row "
        "(fastest rescoring of an approximate index's candidates; docs/big-tables.md)",
    )
    add_index_options(prepare_parser, default=None)
    index = commands.add_parser("index", help="approximate indexes")
    actions = index.add_subparsers(dest="action", required=True)
    build_parser = actions.add_parser("build", help="build an index of a table and save it")
    add_path(build_parser)
    build_parser.add_argument("--out", type=Path, required=True, help="the index file to write")
    add_index_options(build_parser, default="hnsw")

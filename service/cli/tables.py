"""Command-line preparation of big tables: the prepared form, and approximate indexes.

    embedding-service prepare SPEC OUT [--layout rows] [--index hnsw ...]
    embedding-service index build SPEC --out FILE [--index hnsw] [--hnsw-m 32 ...]

SPEC is a table file (or a prepared folder, for `index build`) with the usual file options.
Both print a JSON summary on stdout and their progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from service.cli.options import add_path, spec_of
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
    try:
        approximate: ApproximateIndex = indexing.build(
            bar.update, lambda: say("measuring recall@10")
        )
    finally:
        bar.close()  # an error or Ctrl-C is then said on a line of its own
    assert indexing.truth is not None and indexing.recall is not None
    save_index(Path(out), approximate, fingerprint(table), indexing.truth, indexing.recall)
    facts = indexing.facts()
    facts["source"] = str(out)
    return facts


def say(message: str, stream: TextIO = sys.stderr) -> None:
    """A line of progress on stderr."""
    print(message, file=stream, flush=True)


class ProgressBar:
    """`label: done / total rows (share), elapsed, ETA` on one rewritten stderr line."""

    WIDTH = 30

    def __init__(self, label: str, total: int, stream: TextIO = sys.stderr) -> None:
        self.label, self.total, self.stream = label, total, stream
        self.started = time.monotonic()
        self.open = False  # a line drawn and not yet ended

    def update(self, done: int, total: int) -> None:
        """Redraw the line for `done` of `total` rows."""
        elapsed = time.monotonic() - self.started
        share = done / max(1, total)
        filled = int(self.WIDTH * share)
        eta = elapsed / done * (total - done) if done else float("nan")
        line = (
            f"\r{self.label} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
            f"{done:,}/{total:,} rows ({share:.0%}), {clock(elapsed)} elapsed, ETA {clock(eta)}"
        )
        self.open = done < total
        print(line, end="" if self.open else "\n", file=self.stream, flush=True)

    def close(self) -> None:
        """End a line left unfinished by a build that stopped."""
        if self.open:
            print(file=self.stream, flush=True)
            self.open = False


def clock(seconds: float) -> str:
    """Seconds as 1h02m03s / 2m03s / 3s ('?' when unknown)."""
    if seconds != seconds:  # NaN: no rate yet
        return "?"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


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

"""Loading tables into the registry: at start-up, and reloading or adding them while serving."""

from __future__ import annotations

import logging
import threading
from dataclasses import fields
from functools import partial
from pathlib import Path

from service import metrics
from service.config import Settings, TableSpec
from service.engine.analysis.diagnostics import DEFAULT_FRACTION
from service.engine.errors import EngineError, TableLoadError, UnknownTable
from service.engine.files.reading import confined, permission_errors
from service.engine.loaders import detect_format, load_table
from service.engine.loaders.checkpoints import checkpoint_files, load_checkpoints
from service.engine.loaders.counts import with_counts
from service.engine.loaders.options import LoadOptions
from service.engine.search.cosine import KernelName
from service.engine.served import ServedTable
from service.engine.tables.layout import Layout
from service.engine.tables.prepared import is_prepared
from service.engine.tables.table import EmbeddingTable, in_layout
from service.errors import TableExists
from service.loading.cache_dir import cached_table, check_writable
from service.loading.indexes import attach_for, start_index_work
from service.loading.registry import Registry

LOGGER = logging.getLogger("service.loading.tables")
# What a spec tells a loader: the engine's load options (but the layout, which the loading
# decides), under the same names in TableSpec.
SPEC_OPTIONS = tuple(field.name for field in fields(LoadOptions) if field.name != "layout")


def read_spec(spec: TableSpec, cache_dir: Path | None = None) -> EmbeddingTable:
    """The table a spec describes; TableLoadError if its files are bad.

    With a cache directory, from the spec's prepared folder there (written on first use); a
    spec whose path is a prepared folder is opened as it is. A checkpoint set is always read
    from its files: a prepared folder holds one version of a table, not a set.
    """
    with permission_errors(spec.path or Path(spec.name)):
        return _read_spec(spec, cache_dir)


def _read_spec(spec: TableSpec, cache_dir: Path | None) -> EmbeddingTable:
    path = spec.path
    if cache_dir is not None and path is not None and not is_prepared(path):
        return cached_table(spec, cache_dir, partial(read_source, spec))
    table = read_source(spec)
    if path is not None and is_prepared(path):
        held = table.layout
        if spec.layout not in (None, held):
            raise TableLoadError(
                path, f"prepared by {held}, not {spec.layout}: prepare again with that --layout"
            )
        return table
    return in_layout(table, spec.layout) if spec.layout is not None else table


def read_source(spec: TableSpec) -> EmbeddingTable:
    """The table a spec describes, read from its file(s)."""
    if spec.checkpoints is not None:
        paths = checkpoint_files(spec.checkpoints)
        table = load_checkpoints(paths, partial(read_file, spec))
    else:
        assert spec.path is not None, "a spec names a path or checkpoints"
        table = read_file(spec, spec.path, spec.layout or "columns")
    return with_counts(table, spec.counts) if spec.counts is not None else table


def read_file(spec: TableSpec, path: Path, layout: Layout = "columns") -> EmbeddingTable:
    """One table file (or model directory, or prepared folder), read with the spec's options,
    its rows held in `layout` as they are read (a prepared folder keeps its own)."""
    options = {name: getattr(spec, name) for name in SPEC_OPTIONS}
    return load_table(path, spec.format, layout=layout, **options)


def load_spec(
    registry: Registry,
    spec: TableSpec,
    kernel: KernelName = "compiled",
    diagnose: bool = False,
    cache_dir: Path | None = None,
    threads: int = 1,
) -> ServedTable:
    """Load, index and register one configured table; TableLoadError if its file is bad.

    With `diagnose` (reloads and added tables), its default diagnostics are computed on a
    background thread; tables loaded at start-up are diagnosed once the runtime has started.
    Its approximate index, if it has one to build or measure, is worked on in the background.
    """
    served = registry.load(
        spec.name,
        partial(read_spec, spec, cache_dir),
        spec.case_insensitive,
        kernel,
        attach_for(spec),
    )
    metrics.record_table(spec.name, served.table.rows, served.table.width, served.search.nbytes)
    start_index_work(served, spec, threads)
    LOGGER.info("table %r ready: %s", spec.name, described(served, spec))
    if diagnose:
        start_diagnosis(served)
    return served


def described(served: ServedTable, spec: TableSpec) -> str:
    """rows x width, format, load seconds and search, as the start-up log says them."""
    table, indexing = served.table, served.indexing
    kind = indexing.parameters.kind
    search = "exact search" if kind == "exact" else f"{kind} index {indexing.state}"
    return (
        f"{table.rows:,} x {table.width}, {format_of(spec)}, {served.load_seconds:.2f} s, "
        f"{search}, from {table.source}"
    )


def format_of(spec: TableSpec) -> str:
    """The format a spec's table was read as (named, or detected from its path)."""
    if spec.checkpoints is not None:
        return "checkpoint set"
    if spec.format is not None:
        return spec.format
    assert spec.path is not None
    try:
        return detect_format(spec.path)
    except EngineError:
        return "unknown format"


def start_diagnoses(registry: Registry) -> None:
    """Start the default diagnostics of every served table.

    A function of its own, not a loop in the app's lifespan: the lifespan's frame lives as long
    as the app, and its loop variable kept the last table of the start alive after every
    reload (a second copy of its rows, for the life of the process).
    """
    for served in registry.served():
        start_diagnosis(served)


def start_diagnosis(served: ServedTable) -> None:
    """Compute a table's default diagnostics on a background thread.

    Started once BLAS is held to compute_threads (Runtime.start): the first component's float32
    sums depend on how BLAS splits them, so a report is the same on every start.
    """
    name = f"diagnostics-{served.name}"
    threading.Thread(target=diagnose_table, args=(served,), name=name, daemon=True).start()


def diagnose_table(served: ServedTable) -> None:
    """Compute a table's default diagnostics and publish its suspect rows; log a failure."""
    try:
        analysis = served.diagnostics.warm()
    except EngineError as error:
        LOGGER.warning("diagnostics of table %r failed: %s", served.name, error)
        return
    metrics.record_suspects(served.name, analysis.ranking.suspect_count(DEFAULT_FRACTION))


def load_registry(settings: Settings) -> Registry:
    """A registry with every configured table loaded; stops at the first bad file."""
    specs = settings.served_tables()
    registry = Registry(expected=[spec.name for spec in specs])
    load_all(registry, settings)
    return registry


def load_all(registry: Registry, settings: Settings) -> None:
    """Load every configured table into `registry`; stops at the first bad file (or an
    unwritable cache directory)."""
    if settings.cache_dir is not None:
        check_writable(settings.cache_dir)
    for spec in settings.served_tables():
        load_spec(
            registry,
            spec,
            settings.search_kernel,
            cache_dir=settings.cache_dir,
            threads=settings.compute_threads,
        )


class TableLoader:
    """Reloads and adds tables while the old ones keep serving; one load at a time.

    Loads run on the caller's thread (a worker thread, never the event loop). The registry
    swaps a table in only once it is indexed, so queries never see a half-loaded table, and a
    load that fails leaves the served table as it was.
    """

    def __init__(self, registry: Registry, settings: Settings) -> None:
        self.registry = registry
        self.settings = settings
        self.specs = {spec.name: spec for spec in settings.served_tables()}
        # Tables added through /v1/admin: their files must stay inside admin_tables_dir, on
        # every reload too (a symlink may have been swapped since they were added).
        self.added: set[str] = set()
        self._one_at_a_time = threading.Lock()

    def reload(self, name: str) -> ServedTable:
        """Load table `name` again from its files and swap it in."""
        spec = self.specs.get(name)
        if spec is None:
            raise UnknownTable(name, list(self.specs))
        with self._one_at_a_time:
            return self._load(spec, confine=name in self.added)

    def add(self, spec: TableSpec) -> ServedTable:
        """Load a table that is not served yet and start serving it."""
        self._check_allowed(spec)
        with self._one_at_a_time:
            if spec.name in self.specs:
                raise TableExists(spec.name)
            served = self._load(spec, confine=True)
            self.specs[spec.name] = spec
            self.added.add(spec.name)
            return served

    def remove(self, name: str) -> ServedTable:
        """Stop serving table `name`; a reload will not bring it back."""
        with self._one_at_a_time:
            served = self.registry.remove(name)
            self.specs.pop(name, None)
            self.added.discard(name)
        metrics.forget_table(name)
        LOGGER.info("table %r removed", name)
        return served

    def reload_all(self) -> list[EngineError]:
        """Reload every table (on SIGHUP); the errors of those that failed, each logged."""
        failures = []
        for name in list(self.specs):
            try:
                self.reload(name)
            except EngineError as error:
                failures.append(error)
        return failures

    def _load(self, spec: TableSpec, confine: bool) -> ServedTable:
        root = self.settings.admin_tables_dir if confine else None
        try:
            with confined(root):
                served = load_spec(
                    self.registry,
                    spec,
                    self.settings.search_kernel,
                    self.settings.diagnostics_at_load,
                    self.settings.cache_dir,
                    self.settings.compute_threads,
                )
        except EngineError as error:
            LOGGER.error("loading table %r failed, still serving the old one: %s", spec.name, error)
            raise
        return served

    def _check_allowed(self, spec: TableSpec) -> None:
        """Every file under admin_tables_dir (when set), and no device, pipe or socket."""
        paths = (spec.path, spec.vocab, spec.labels, spec.counts, spec.index_path)
        for path in (*paths, *_checkpoints(spec)):
            if path is not None:
                self._check_path(path)

    def _check_path(self, path: Path) -> None:
        root = self.settings.admin_tables_dir
        try:
            resolved = path.resolve()
            if root is not None and not resolved.is_relative_to(root.resolve()):
                raise TableLoadError(path, f"not under the admin tables directory {root}")
            if resolved.exists() and not (resolved.is_file() or resolved.is_dir()):
                raise TableLoadError(path, "not a regular file or directory")
        except (OSError, ValueError) as error:
            # NUL bytes, unencodable characters, names too long: not a path this host can open.
            raise TableLoadError(repr(str(path)), f"not a usable path ({error})") from error


def _checkpoints(spec: TableSpec) -> list[Path]:
    """The checkpoint paths a spec names (a directory as itself)."""
    source = spec.checkpoints
    return [] if source is None else [source] if isinstance(source, Path) else list(source)

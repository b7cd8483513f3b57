"""Every Prometheus metric the service exports, declared once.

Labels are low-cardinality only: route template, method, status class, operation, error type,
table name (a handful, from configuration).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from prometheus_client import Counter, Gauge, Histogram

if TYPE_CHECKING:
    from service.engine.indexes.building import Indexing

PREFIX = "embedding_service"

# A single exact query over a small table takes well under a millisecond; a batch over a large
# table takes tens of milliseconds, so the buckets start at 50 microseconds.
LATENCY_BUCKETS = (
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
)  # fmt: skip

REQUEST_SECONDS = Histogram(
    f"{PREFIX}_http_request_duration_seconds",
    "HTTP request latency by route template, from first byte in to last byte out.",
    ["route", "method", "status_class"],
    buckets=LATENCY_BUCKETS,
)
REQUESTS = Counter(
    f"{PREFIX}_http_requests_total",
    "HTTP requests by route template, method and status class.",
    ["route", "method", "status_class"],
)
IN_FLIGHT = Gauge(
    f"{PREFIX}_http_requests_in_flight", "HTTP requests being served now (health routes excluded)."
)
SEARCH_SECONDS = Histogram(
    f"{PREFIX}_search_duration_seconds",
    "Engine compute time by operation: search (one pass of neighbour and analogy queries), "
    "score (one pass of output scoring), lookup, similarity, cosines, rank.",
    ["operation"],
    buckets=LATENCY_BUCKETS,
)
ERRORS = Counter(f"{PREFIX}_errors_total", "Error responses by error type.", ["type"])
CONNECTIONS_CLOSED = Counter(
    f"{PREFIX}_connections_closed_total",
    "Connections the server closed to protect itself, by reason: headers_too_large, "
    "bad_framing (chunk lines or trailers), header_timeout, body_timeout, connection_limit, "
    "send_timeout, stalled_limit, pipelined_while_crowded.",
    ["reason"],
)
# Every reason exported from the start (at 0), so a rate exists before the first closure.
for _reason in (
    "headers_too_large",
    "bad_framing",
    "header_timeout",
    "body_timeout",
    "body_rate",
    "connection_limit",
    "send_timeout",
    "stalled_limit",
    "pipelined_while_crowded",
):
    CONNECTIONS_CLOSED.labels(_reason)
TABLE_ROWS = Gauge(
    f"{PREFIX}_table_rows", "Rows (vocabulary size) of each served table.", ["table"]
)
TABLE_WIDTH = Gauge(f"{PREFIX}_table_width", "Row width (dimensions) of each table.", ["table"])
TABLE_BYTES = Gauge(f"{PREFIX}_table_bytes", "Bytes held for each table and its index.", ["table"])
TABLE_SUSPECT_ROWS = Gauge(
    f"{PREFIX}_table_suspect_rows",
    "Rows of each table that its default diagnostics rank as suspect (possibly under-trained): "
    "the 2% of ranked rows most like the reference rows, or with the lowest norms.",
    ["table"],
)

INDEX_KINDS = ("exact", "hnsw", "hnswsq", "ivf", "ivfpq", "fastscan")
INDEX_RECALL = Gauge(
    f"{PREFIX}_index_recall_at_10",
    "Recall@10 of each table's approximate index against the exact path, measured on held-out "
    "rows (token-neighbour queries) when the index is built or loaded; 1 for the exact path.",
    ["table", "kind"],
)
INDEX_BYTES = Gauge(
    f"{PREFIX}_index_bytes", "Bytes held by each table's approximate index.", ["table", "kind"]
)
INDEX_BUILD_PROGRESS = Gauge(
    f"{PREFIX}_index_build_progress_ratio",
    "Share of rows added to an index being built (1 once built, 0 for none).",
    ["table"],
)

ANALYSES = Counter(
    f"{PREFIX}_analyses_total",
    "Analyses by kind (analysis, projection) and how they ended: answered (computed, or "
    "refused by their own checks), dropped (given up before they started: the client left, "
    "the deadline passed, the server stopped), abandoned (given up while they ran, stopped at "
    "their next safe point). Those refused at the queue's bound count in errors_total.",
    ["kind", "outcome"],
)
for _kind in ("analysis", "projection"):
    for _outcome in ("answered", "dropped", "abandoned"):
        ANALYSES.labels(_kind, _outcome)


@contextmanager
def timed(operation: str) -> Iterator[None]:
    """Observe the engine time of one operation."""
    started = time.perf_counter()
    try:
        yield
    finally:
        SEARCH_SECONDS.labels(operation).observe(time.perf_counter() - started)


def record_table(name: str, rows: int, width: int, nbytes: int) -> None:
    """Publish a served table's size."""
    TABLE_ROWS.labels(name).set(rows)
    TABLE_WIDTH.labels(name).set(width)
    TABLE_BYTES.labels(name).set(nbytes)


def record_index(name: str, indexing: Indexing) -> None:
    """Publish a table's index: its recall, memory and build progress."""
    facts = indexing.facts()
    kind = facts["kind"]
    for other in INDEX_KINDS:  # a reload may change the kind
        if other != kind:
            for gauge in (INDEX_RECALL, INDEX_BYTES):
                with suppress(KeyError):
                    gauge.remove(name, other)
    if kind == "exact":
        INDEX_RECALL.labels(name, kind).set(1.0)
    elif facts["recall_at_10"] is not None:
        INDEX_RECALL.labels(name, kind).set(facts["recall_at_10"])
    INDEX_BYTES.labels(name, kind).set(facts["bytes"] or 0)
    INDEX_BUILD_PROGRESS.labels(name).set(facts.get("progress", 1.0 if facts["bytes"] else 0.0))


def forget_table(name: str) -> None:
    """Drop every series of a table that is no longer served."""
    for gauge in (TABLE_ROWS, TABLE_WIDTH, TABLE_BYTES, TABLE_SUSPECT_ROWS, INDEX_BUILD_PROGRESS):
        with suppress(KeyError):
            gauge.remove(name)
    for kind in INDEX_KINDS:
        for gauge in (INDEX_RECALL, INDEX_BYTES):
            with suppress(KeyError):
                gauge.remove(name, kind)


def record_suspects(name: str, suspects: int) -> None:
    """Publish how many rows of a table its default diagnostics flag as suspect."""
    TABLE_SUSPECT_ROWS.labels(name).set(suspects)


BATCH_SIZE = Histogram(
    f"{PREFIX}_batch_size",
    "Queries answered by one pass over a table, by operation.",
    ["operation"],
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
)
QUEUE_SECONDS = Histogram(
    f"{PREFIX}_batch_queue_seconds",
    "Time a query waited for its batch to start, by operation.",
    ["operation"],
    buckets=LATENCY_BUCKETS,
)
CACHE_LOOKUPS = Counter(
    f"{PREFIX}_cache_lookups_total",
    "Result cache lookups by operation and result (hit or miss).",
    ["operation", "result"],
)
CACHE_ENTRIES = Gauge(f"{PREFIX}_cache_entries", "Answers held in the result cache.")
CACHE_BYTES = Gauge(
    f"{PREFIX}_cache_bytes", "Bytes the result cache holds: answers plus per-entry overhead."
)

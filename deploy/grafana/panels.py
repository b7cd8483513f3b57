"""The dashboard's panels, as data: one list per row, in ROWS order.

To add a panel, append a Panel to a row (or add a row to ROWS), then regenerate the JSON:

    python deploy/grafana/build_dashboard.py

tests/deploy fails when the JSON is stale, and runs every query of every panel against a real
Prometheus scraping a real service: each must return data, and each metric must exist.
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "embedding_service"
JOB = 'job=~"$job"'
WINDOW = "$__rate_interval"


@dataclass(frozen=True)
class Query:
    """One PromQL expression and its legend."""

    expr: str
    legend: str = ""


@dataclass(frozen=True)
class Panel:
    """One Grafana panel: a time series by default, or a stat ("stat") / bar gauge."""

    title: str
    description: str
    queries: tuple[Query, ...]
    unit: str = "short"
    kind: str = "timeseries"
    width: int = 12
    height: int = 8


def selector(metric: str, matchers: str = "") -> str:
    """A metric of the service with the dashboard's job filter and any extra matchers."""
    extra = f",{matchers}" if matchers else ""
    return f"{PREFIX}_{metric}{{{JOB}{extra}}}"


def rate(metric: str, by: str = "", matchers: str = "") -> str:
    """Per-second rate of a counter, summed (by the given labels)."""
    grouping = f" by ({by}) " if by else ""
    return f"sum{grouping}(rate({selector(metric, matchers)}[{WINDOW}]))"


def quantile(q: float, histogram: str, by: str, matchers: str = "") -> str:
    """The q-quantile of a histogram over the rate window, per `by` group."""
    return f"histogram_quantile({q}, {rate(f'{histogram}_bucket', f'le, {by}', matchers)})"


def quantiles(histogram: str, by: str, matchers: str = "") -> tuple[Query, ...]:
    """p50, p95 and p99 of a histogram, one series per `by` group."""
    return tuple(
        Query(quantile(q, histogram, by, matchers), f"p{round(q * 100)} {{{{{by}}}}}")
        for q in (0.5, 0.95, 0.99)
    )


REQUESTS = "http_requests_total"
QUERY_ROUTES = 'route=~"/v1/.*"'
SERVER_ERRORS = 'status_class="5xx"'
ERRORS = 'status_class=~"4xx|5xx"'

OVERVIEW = [
    Panel(
        "Request rate",
        "Requests per second, all routes (health, readiness and metrics excluded).",
        (Query(rate(REQUESTS)),),
        unit="reqps",
        kind="stat",
        width=6,
        height=4,
    ),
    Panel(
        "5xx ratio",
        "Share of requests answered with a server error (alert above 1%).",
        # `or vector(0)`: without any 5xx the ratio is 0, not "no data".
        (Query(f"({rate(REQUESTS, matchers=SERVER_ERRORS)} or vector(0)) / {rate(REQUESTS)}"),),
        unit="percentunit",
        kind="stat",
        width=6,
        height=4,
    ),
    Panel(
        "p99 latency of queries",
        "99th percentile latency of /v1 requests (SLO: 250 ms).",
        (Query(quantile(0.99, "http_request_duration_seconds", "job", QUERY_ROUTES)),),
        unit="s",
        kind="stat",
        width=6,
        height=4,
    ),
    Panel(
        "Targets up",
        "Replicas Prometheus scrapes successfully.",
        (Query(f"sum(up{{{JOB}}})"),),
        kind="stat",
        width=6,
        height=4,
    ),
]

TRAFFIC = [
    Panel(
        "Request rate by route and status",
        "Requests per second by route template and status class.",
        (Query(rate(REQUESTS, "route, status_class"), "{{route}} {{status_class}}"),),
        unit="reqps",
    ),
    Panel(
        "Error ratio by status class",
        "Share of all requests answered 4xx (callers' mistakes) and 5xx (ours).",
        (
            Query(
                f"{rate(REQUESTS, 'status_class', ERRORS)}"
                f" / ignoring(status_class) group_left {rate(REQUESTS)}",
                "{{status_class}}",
            ),
        ),
        unit="percentunit",
    ),
    Panel(
        "Errors by type",
        "Error responses per second by error type (UnknownToken, ValidationError, ...).",
        (Query(rate("errors_total", "type"), "{{type}}"),),
        unit="reqps",
    ),
    Panel(
        "In-flight requests",
        "Requests being served now, per replica.",
        (Query(f"sum by (instance) ({selector('http_requests_in_flight')})", "{{instance}}"),),
    ),
]

LATENCY = [
    Panel(
        "Request latency by route (p50, p95, p99)",
        "HTTP latency, first byte in to last byte out, by route template.",
        quantiles("http_request_duration_seconds", "route"),
        unit="s",
    ),
    Panel(
        "Search latency by operation (p50, p95, p99)",
        "Engine compute time by operation, without HTTP and JSON.",
        quantiles("search_duration_seconds", "operation"),
        unit="s",
    ),
]

LOOKUPS = "cache_lookups_total"
HITS = 'result="hit"'

BATCHING_AND_CACHE = [
    Panel(
        "Batch size by operation (p50, p95, p99)",
        "Queries answered by one pass over a table: 1 when idle, larger under concurrency.",
        quantiles("batch_size", "operation"),
    ),
    Panel(
        "Batch queue wait by operation (p50, p95, p99)",
        "Time a query waited for its batch to start.",
        quantiles("batch_queue_seconds", "operation"),
        unit="s",
    ),
    Panel(
        "Cache hit ratio by operation",
        "Share of token-keyed queries answered from the result cache.",
        # `or ... * 0`: an operation with lookups but no hit yet shows 0, not "no data".
        (
            Query(
                f"({rate(LOOKUPS, 'operation', HITS)} or {rate(LOOKUPS, 'operation')} * 0)"
                f" / {rate(LOOKUPS, 'operation')}",
                "{{operation}}",
            ),
        ),
        unit="percentunit",
    ),
    Panel(
        "Cached responses",
        "Responses held in the result cache, per replica.",
        (Query(f"sum by (instance) ({selector('cache_entries')})", "{{instance}}"),),
    ),
    Panel(
        "Result cache memory",
        "Bytes the result cache holds per replica (answers plus per-entry overhead); bounded "
        "by cache_bytes.",
        (Query(f"sum by (instance) ({selector('cache_bytes')})", "{{instance}}"),),
        unit="bytes",
    ),
    Panel(
        "Connections closed by the guards",
        "Connections the server closed to protect itself, by reason: head too large or too "
        "slow, body too slow, the connection bound, clients not reading their answers.",
        (Query(rate("connections_closed_total", "reason"), "{{reason}}"),),
        unit="reqps",
    ),
]


def per_table(title: str, description: str, metric: str, unit: str = "short") -> Panel:
    """A bar gauge, a third of a row wide, of a metric's value for each served table."""
    query = Query(f"max by (table) ({selector(metric)})", "{{table}}")
    return Panel(title, description, (query,), unit=unit, kind="bargauge", width=8)


TABLES = [
    per_table("Table rows", "Vocabulary size of each served table.", "table_rows"),
    per_table("Table width", "Dimensions of each served table.", "table_width"),
    per_table(
        "Memory held by tables",
        "Bytes held per table and its index, per replica.",
        "table_bytes",
        unit="bytes",
    ),
]

ROWS: list[tuple[str, list[Panel]]] = [
    ("Overview", OVERVIEW),
    ("Traffic", TRAFFIC),
    ("Latency", LATENCY),
    ("Batching and cache", BATCHING_AND_CACHE),
    ("Tables", TABLES),
]

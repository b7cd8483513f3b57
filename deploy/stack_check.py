"""The checks scripts/compose-smoke runs against the running compose stack, one line each.

    python -m deploy.stack_check --service http://127.0.0.1:8000 --prometheus http://127.0.0.1:9090

The service is the proxy in front of --replicas replicas. Prometheus has every replica and the
proxy up, and the proxy has every replica up; after a short load with a few 404s every replica
answered part of it, every dashboard panel's query returns data (with $job and
$__rate_interval resolved as Grafana resolves them) and every alert rule is loaded and healthy;
each --table is served and its rows reach Prometheus.
Exits 1 if any check fails, 2 if the target never came up (nothing else can be checked).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import yaml

from deploy.live_monitoring import (
    DEPLOY,
    JOB,
    CheckFailed,
    call,
    dashboard_queries,
    finite_values,
    grafana_job,
    grafana_rate_interval,
    instant_query,
    parse_seconds,
    send_load,
    wait_until,
    wait_until_rules_evaluated,
    wait_until_scraped,
    wait_until_target_up,
    wait_until_targets_up,
)

LOAD_ROUNDS = 4
PROXY_JOB = "haproxy"


class Report:
    """Runs checks, prints one line each, remembers whether any failed."""

    def __init__(self) -> None:
        self.failed = 0

    def check(self, name: str, check: Callable[[], str]) -> bool:
        try:
            detail = check()
        except (CheckFailed, OSError, KeyError, ValueError) as error:
            self.failed += 1
            print(f"FAIL  {name}: {error}", flush=True)
            return False
        print(f"ok    {name}: {detail}", flush=True)
        return True


def scrape_interval() -> float:
    """The compose Prometheus's scrape interval, in seconds."""
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text(encoding="utf-8"))
    return parse_seconds(config["global"]["scrape_interval"])


def check_load(service: str, statuses: dict[int, int]) -> str:
    """Sends the load across a couple of scrapes, counting each status into `statuses`."""
    statuses.update(send_load(service, rounds=LOAD_ROUNDS, pause=scrape_interval() / 2))
    if not statuses.get(200) or not statuses.get(404) or set(statuses) - {200, 404}:
        raise CheckFailed(f"expected only 200s and some 404s, got {statuses}")
    counts = ", ".join(f"{count} x {status}" for status, count in sorted(statuses.items()))
    return f"{sum(statuses.values())} requests ({counts})"


def check_panel(prometheus: str, expr: str, at: float) -> str:
    values = finite_values(instant_query(prometheus, expr, at))
    if not values:
        raise CheckFailed(f"no data for {expr}")
    return f"{len(values)} series"


def check_rule(rule: dict) -> str:
    if rule["health"] != "ok":
        raise CheckFailed(f"health {rule['health']}: {rule.get('lastError')}")
    if rule["name"] == "EmbeddingServiceTargetDown" and rule["state"] != "inactive":
        raise CheckFailed(f"the target is up but the rule is {rule['state']}")
    return f"health ok, {rule['state']}"


def check_table(service: str, prometheus: str, table: str, job: str) -> str:
    """The table is served, answers a neighbour query, and Prometheus has its row count."""
    status, facts = call(f"{service}/v1/tables/{table}")
    if status != 200:
        raise CheckFailed(f"GET /v1/tables/{table} answered {status}: {facts}")
    status, answer = call(f"{service}/v1/tables/{table}/neighbors", {"id": 1, "k": 3})
    if status != 200 or len(answer["neighbors"]) != 3:
        raise CheckFailed(f"neighbours of row 1 answered {status}: {answer}")
    expr = f'max(embedding_service_table_rows{{job="{job}", table="{table}"}})'
    scraped = finite_values(instant_query(prometheus, expr))
    if scraped != [float(facts["rows"])]:
        raise CheckFailed(f"{facts['rows']} rows served, Prometheus has {scraped}")
    return f"{facts['rows']} x {facts['width']} from {facts['source']}, rows in Prometheus"


def check_replicas_up(prometheus: str, replicas: int) -> str:
    """Prometheus scrapes every replica and the proxy; the proxy has every replica up."""
    urls = wait_until_targets_up(prometheus, JOB, replicas, 60)
    proxy = wait_until_target_up(prometheus, PROXY_JOB, 30)
    expr = 'haproxy_backend_active_servers{proxy="replicas"}'
    servers: list[float] = []

    def all_up() -> bool:
        servers[:] = finite_values(instant_query(prometheus, expr))
        return servers == [float(replicas)]

    wait_until(all_up, 30, lambda: f"the proxy has {servers} of {replicas} replicas up")
    return f"{', '.join(urls)} up, the proxy ({proxy}) with {replicas} replicas up"


def check_every_replica_answered(prometheus: str, replicas: int, at: float) -> str:
    """Each replica counted part of the load (the proxy spread it)."""
    expr = f'sum by (instance) (embedding_service_http_requests_total{{job="{JOB}"}})'
    counts = finite_values(instant_query(prometheus, expr, at))
    if len(counts) != replicas or min(counts) <= 0:
        raise CheckFailed(f"requests by replica: {counts}, expected {replicas} replicas")
    return "requests by replica: " + ", ".join(f"{count:.0f}" for count in counts)


def run(service: str, prometheus: str, tables: list[str], replicas: int, report: Report) -> int:
    target = f"Prometheus targets of jobs {JOB} and {PROXY_JOB}"
    if not report.check(target, lambda: check_replicas_up(prometheus, replicas)):
        return 2
    for table in tables:
        report.check(f"table {table}", lambda t=table: check_table(service, prometheus, t, JOB))
    statuses: dict[int, int] = {}
    if report.check("load", lambda: check_load(service, statuses)):
        at = wait_until_scraped(prometheus, JOB, sum(statuses.values()), 30)
        report.check("load spread", lambda: check_every_replica_answered(prometheus, replicas, at))
        variables = {"$job": grafana_job(prometheus), "$__rate_interval": grafana_rate_interval()}
        report.check(
            "dashboard variables", lambda: ", ".join(f"{k}={v}" for k, v in variables.items())
        )
        for title, expr in dashboard_queries(variables):
            report.check(f"panel {title}", lambda e=expr: check_panel(prometheus, e, at))
    for name, rule in sorted(wait_until_rules_evaluated(prometheus, 30).items()):
        report.check(f"alert rule {name}", lambda r=rule: check_rule(r))
    return 1 if report.failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--service", required=True, help="the service's base URL")
    parser.add_argument("--prometheus", required=True, help="Prometheus's base URL")
    parser.add_argument("--table", action="append", default=[], help="a table that must be served")
    parser.add_argument("--replicas", type=int, default=2, help="replicas behind the proxy (2)")
    args = parser.parse_args(argv)
    report = Report()
    service, prometheus = args.service.rstrip("/"), args.prometheus.rstrip("/")
    try:
        return run(service, prometheus, args.table, args.replicas, report)
    except (CheckFailed, OSError) as error:
        print(f"FAIL  {error}", flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())

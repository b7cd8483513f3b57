"""The checks scripts/compose-smoke runs against the running compose stack, one line each.

    python -m deploy.stack_check --service http://127.0.0.1:8000 --prometheus http://127.0.0.1:9090

The Prometheus target is up; after a short load with a few 404s every dashboard panel's query
returns data (with $job and $__rate_interval resolved as Grafana resolves them) and every
alert rule is loaded and healthy; each --table is served and its rows reach Prometheus.
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
    wait_until_rules_evaluated,
    wait_until_scraped,
    wait_until_target_up,
)

LOAD_ROUNDS = 4


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


def run(service: str, prometheus: str, tables: list[str], report: Report) -> int:
    target = f"Prometheus target of job {JOB}"
    if not report.check(target, lambda: f"{wait_until_target_up(prometheus, JOB, 30)} is up"):
        return 2
    for table in tables:
        report.check(f"table {table}", lambda t=table: check_table(service, prometheus, t, JOB))
    statuses: dict[int, int] = {}
    if report.check("load", lambda: check_load(service, statuses)):
        at = wait_until_scraped(prometheus, JOB, sum(statuses.values()), 30)
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
    args = parser.parse_args(argv)
    report = Report()
    try:
        return run(args.service.rstrip("/"), args.prometheus.rstrip("/"), args.table, report)
    except (CheckFailed, OSError) as error:
        print(f"FAIL  {error}", flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())

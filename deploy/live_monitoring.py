"""The monitoring, checked live: a short load on a running service, the dashboard's panel
queries with Grafana's variables resolved, and the alert rules, through a real Prometheus.

Shared by tests/deploy/test_live_prometheus.py (a Prometheus it starts itself) and
deploy/stack_check.py (the compose stack of scripts/compose-smoke). Needs only the standard
library and PyYAML, so it runs outside the project's venv.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parent
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "embedding-service.json"
DATASOURCE = DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
JOB = "embedding-service"
REQUESTS_PER_CLIENT = 16
CLIENTS = 4


class CheckFailed(AssertionError):
    """A check against the live service or Prometheus did not hold; the message says why."""


def call(url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """One HTTP request; (status, parsed JSON or text) for any status."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, decode(response.read())
    except urllib.error.HTTPError as error:
        return error.code, decode(error.read())


def decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode()


def instant_query(prometheus: str, expr: str, at: float | None = None) -> dict[str, Any]:
    """Prometheus's answer to an instant query (at a Unix time, default now)."""
    parameters = {"query": expr} | ({} if at is None else {"time": f"{at:.3f}"})
    status, answer = call(f"{prometheus}/api/v1/query?" + urllib.parse.urlencode(parameters))
    if status != 200 or answer["status"] != "success":
        raise CheckFailed(f"the query does not run: {expr}\n{answer}")
    return answer["data"]


def finite_values(data: dict[str, Any]) -> list[float]:
    values = [float(sample["value"][1]) for sample in data["result"]]
    return [value for value in values if math.isfinite(value)]


def wait_until(condition: Callable[[], bool], seconds: float, failure: Callable[[], str]) -> None:
    """Poll `condition` until it holds; CheckFailed with `failure()` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise CheckFailed(failure())
        time.sleep(0.5)


# The load: every operation, a table read and unknown tokens (404s, for the error panels).


def query_requests(base: str, width: int) -> list[tuple[str, dict[str, Any] | None]]:
    """One client's requests on the default table."""
    table = f"{base}/v1/tables/minilm"
    tokens = ["king", "queen", "paris", "apple", "river", "music", "doctor", "green"]
    requests: list[tuple[str, dict[str, Any] | None]] = []
    for i in range(REQUESTS_PER_CLIENT // 8):
        token = tokens[i % len(tokens)]
        requests += [
            (f"{table}/neighbors", {"token": token, "k": 5}),
            (f"{table}/neighbors", {"queries": [{"token": t, "k": 3} for t in tokens[:4]]}),
            (f"{table}/analogy", {"positive": ["king", "woman"], "negative": ["man"], "k": 3}),
            (f"{table}/similarity", {"pairs": [["king", "queen"], [token, "apple"]]}),
            (f"{table}/lookup", {"tokens": [token], "include_vector": False}),
            (f"{table}/score", {"vector": [0.01 * (i + 1)] * width, "k": 3}),
            (table, None),
            (f"{table}/neighbors", {"token": f"no-such-token-{i}", "k": 5}),
        ]
    return requests


def send_load(base: str, rounds: int, pause: float) -> dict[int, int]:
    """A short, bounded load from a few threads; the count of each status code.

    Prometheus counts no increase for a series' first sample, so the load comes in rounds with
    pauses that together span several scrapes: counters rise between samples, rates are positive.
    """
    width = call(f"{base}/v1/tables/minilm")[1]["width"]

    def client(_: int) -> list[int]:
        return [call(url, body)[0] for url, body in query_requests(base, width)]

    statuses: list[int] = []
    with ThreadPoolExecutor(CLIENTS) as pool:
        for _ in range(rounds):
            statuses += [status for result in pool.map(client, range(CLIENTS)) for status in result]
            time.sleep(pause)
    return {status: statuses.count(status) for status in set(statuses)}


# Prometheus's side: the target, the scraped load, the dashboard's queries, the rules.


def target_health(prometheus: str, job: str) -> list[dict[str, Any]]:
    """The active targets of `job` (scrapeUrl, health, lastError)."""
    status, answer = call(f"{prometheus}/api/v1/targets?state=active")
    if status != 200:
        raise CheckFailed(f"{prometheus}/api/v1/targets answered {status}")
    targets = answer["data"]["activeTargets"]
    return [target for target in targets if target["labels"].get("job") == job]


def wait_until_target_up(prometheus: str, job: str, seconds: float) -> str:
    """Until Prometheus has scraped `job`; the target's URL."""

    def up() -> bool:
        return any(t["health"] == "up" for t in target_health(prometheus, job))

    def failure() -> str:
        states = [f"{t['scrapeUrl']}: {t['health']} {t['lastError']}".strip() for t in
                  target_health(prometheus, job)]  # fmt: skip
        return f"no target of job {job} is up after {seconds:.0f}s: {states or 'none discovered'}"

    wait_until(up, seconds, failure)
    return next(t["scrapeUrl"] for t in target_health(prometheus, job) if t["health"] == "up")


def wait_until_targets_up(prometheus: str, job: str, count: int, seconds: float) -> list[str]:
    """Until `count` targets of `job` are up (one a replica); their URLs."""

    def up() -> list[str]:
        return [t["scrapeUrl"] for t in target_health(prometheus, job) if t["health"] == "up"]

    wait_until(
        lambda: len(up()) >= count,
        seconds,
        lambda: f"{len(up())} of {count} targets of job {job} up after {seconds:.0f}s",
    )
    return up()


def wait_until_scraped(prometheus: str, job: str, requests: int, seconds: float) -> float:
    """Until Prometheus holds the load's counters; the Unix time of the sample that does."""
    expr = f'sum(embedding_service_http_requests_total{{job="{job}"}})'
    scraped_at: list[float] = []

    def scraped() -> bool:
        result = instant_query(prometheus, expr)["result"]
        if result and float(result[0]["value"][1]) >= requests:
            scraped_at.append(float(result[0]["value"][0]))
            return True
        return False

    wait_until(
        scraped, seconds, lambda: f"Prometheus did not scrape the load's {requests} requests"
    )
    return scraped_at[0]


def grafana_rate_interval() -> str:
    """$__rate_interval as Grafana computes it for this dashboard: max($__interval + scrape
    interval, 4 x scrape interval), the scrape interval being the datasource's timeInterval.

    Over the dashboard's default 30 minutes a panel's $__interval falls below that 5 s minimum,
    so the minimum is used.
    """
    datasource = yaml.safe_load(DATASOURCE.read_text(encoding="utf-8"))["datasources"][0]
    scrape = parse_seconds(datasource["jsonData"]["timeInterval"])
    return f"{max(scrape + scrape, 4 * scrape):g}s"


def parse_seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    number = duration.rstrip("smh")
    return float(number) * units[duration[len(number) :]]


def grafana_job(prometheus: str) -> str:
    """The dashboard's $job as Grafana resolves it: the options from the variable's
    label_values() query, the saved value if it is one of them, else the first."""
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    variable = next(v for v in dashboard["templating"]["list"] if v["name"] == "job")
    metric, label = variable["definition"].removeprefix("label_values(").rstrip(")").split(", ")
    match = urllib.parse.urlencode({"match[]": metric})
    status, answer = call(f"{prometheus}/api/v1/label/{label}/values?{match}")
    options = answer["data"] if status == 200 else []
    if not options:
        raise CheckFailed(f"the $job variable has no values: no {label} label on {metric}")
    saved = variable["current"]["value"]
    return saved if saved in options else options[0]


def dashboard_queries(variables: Mapping[str, str]) -> list[tuple[str, str]]:
    """(panel title [refId], PromQL) for every query of every panel, the variables filled in."""
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    queries = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            title = f"{panel['title']} [{target['refId']}]"
            queries.append((title, fill(target["expr"], variables)))
    return queries


def fill(expr: str, variables: Mapping[str, str]) -> str:
    # Longest name first: $job must not replace the start of a $jobs.
    for variable in sorted(variables, key=len, reverse=True):
        expr = expr.replace(variable, variables[variable])
    if "$" in expr:
        raise CheckFailed(f"a Grafana variable that is not resolved: {expr}")
    return expr


def alert_queries() -> list[tuple[str, str]]:
    """(alert name, PromQL) for every rule in alerts.yml."""
    groups = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))["groups"]
    return [(rule["alert"], rule["expr"]) for group in groups for rule in group["rules"]]


def loaded_rules(prometheus: str) -> dict[str, dict[str, Any]]:
    """Every rule Prometheus has loaded, by name."""
    status, answer = call(f"{prometheus}/api/v1/rules")
    if status != 200:
        raise CheckFailed(f"{prometheus}/api/v1/rules answered {status}")
    return {r["name"]: r for group in answer["data"]["groups"] for r in group["rules"]}


def wait_until_rules_evaluated(prometheus: str, seconds: float) -> dict[str, dict[str, Any]]:
    """Until every rule of alerts.yml is loaded and has been evaluated once."""
    wanted = {name for name, _ in alert_queries()}

    def evaluated() -> bool:
        rules = loaded_rules(prometheus)
        return wanted <= set(rules) and all(rules[n]["health"] != "unknown" for n in wanted)

    def failure() -> str:
        missing = wanted - set(loaded_rules(prometheus))
        return f"rules not loaded: {sorted(missing)}" if missing else "rules never evaluated"

    wait_until(evaluated, seconds, failure)
    return loaded_rules(prometheus)

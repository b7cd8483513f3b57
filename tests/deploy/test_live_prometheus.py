"""A real Prometheus scrapes a real service under load; every dashboard and alert query runs.

Each dashboard panel's query must return data (at least one finite value), each alert
expression must execute and its rule evaluate without error, and every metric they name must
be one the service's /metrics exports (or Prometheus's own `up`).
"""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import yaml

from loadtests.server import free_port, start_server
from tests.deploy.conftest import DEPLOY, load_yaml, tool

pytestmark = pytest.mark.slow

JOB = "embedding-service"
START_TIMEOUT = 90
# Grafana's variables, as the dashboard would fill them in.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$job": JOB}
# Series that Prometheus adds to every target itself.
SYNTHETIC_METRICS = {"up"}
PROMQL_WORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
    "offset", "bool", "inf", "nan",
}  # fmt: skip
# Prometheus counts no increase for a series' first sample, so the load comes in rounds that
# span several 1 s scrapes: the counters rise between samples and every rate is positive.
ROUNDS = 4
ROUND_PAUSE = 1.2
REQUESTS_PER_CLIENT = 16
CLIENTS = 4


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


def wait_for(url: str, process: subprocess.Popen[str], what: str) -> None:
    """Poll `url` until it answers 200; fail with the process's output if it dies."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{what} exited: {process.communicate()[1][-2000:]}")
        try:
            if call(url)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.25)
    pytest.fail(f"{what} was not ready within {START_TIMEOUT}s")


def stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    """`python -m service serve` on the default table, on a free loopback port."""
    process, base = start_server()
    try:
        yield base
    finally:
        stop(process)


@pytest.fixture(scope="module")
def prometheus(service: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's Prometheus scraping the service every second, with the alert rules loaded."""
    binary = tool("prometheus")
    folder = tmp_path_factory.mktemp("prometheus")
    target = service.removeprefix("http://")
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(DEPLOY / "prometheus" / "alerts.yml")],
        "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [target]}]}],
    }
    (folder / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    port = free_port()
    command = [
        binary,
        f"--config.file={folder / 'prometheus.yml'}",
        f"--storage.tsdb.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    process = subprocess.Popen(
        command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{base}/-/ready", process, "prometheus")
        yield base
    finally:
        stop(process)


def query_requests(base: str, width: int) -> list[tuple[str, dict[str, Any] | None]]:
    """One client's requests: every operation, a table read, and unknown tokens (404)."""
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


def send_load(base: str) -> dict[int, int]:
    """A short, bounded load from a few threads, in rounds; the count of each status code."""
    width = call(f"{base}/v1/tables/minilm")[1]["width"]

    def client(_: int) -> list[int]:
        return [call(url, body)[0] for url, body in query_requests(base, width)]

    statuses: list[int] = []
    with ThreadPoolExecutor(CLIENTS) as pool:
        for _ in range(ROUNDS):
            statuses += [status for result in pool.map(client, range(CLIENTS)) for status in result]
            time.sleep(ROUND_PAUSE)
    return {status: statuses.count(status) for status in set(statuses)}


def instant_query(prometheus: str, expr: str) -> dict[str, Any]:
    """Prometheus's answer to an instant query; fails the test if the expression does not run."""
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    status, answer = call(url)
    assert status == 200 and answer["status"] == "success", f"{expr}\n{answer}"
    return answer["data"]


def wait_until_target_up(prometheus: str) -> None:
    """Until the first scrape: Prometheus applies new targets only every few seconds."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if instant_query(prometheus, f'up{{job="{JOB}"}} == 1')["result"]:
            return
        time.sleep(0.25)
    pytest.fail("Prometheus did not scrape the service within 30s")


def wait_until_scraped(prometheus: str, expected_requests: int) -> None:
    """Until Prometheus holds the post-load counters, then two more scrapes for rates."""
    expr = f'sum(embedding_service_http_requests_total{{job="{JOB}"}})'
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        result = instant_query(prometheus, expr)["result"]
        if result and float(result[0]["value"][1]) >= expected_requests:
            time.sleep(2.5)
            return
        time.sleep(0.5)
    pytest.fail(f"Prometheus did not scrape the load's {expected_requests} requests in 30s")


@pytest.fixture(scope="module")
def loaded(service: str, prometheus: str) -> dict[int, int]:
    """The load has been sent and scraped."""
    wait_until_target_up(prometheus)
    statuses = send_load(service)
    wait_until_scraped(prometheus, sum(statuses.values()))
    return statuses


def dashboard_queries() -> list[tuple[str, str]]:
    """(panel title, PromQL) for every query of every panel, Grafana variables filled in."""
    dashboard = json.loads((DEPLOY / "grafana/dashboards/embedding-service.json").read_text())
    queries = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            queries.append((f"{panel['title']} [{target['refId']}]", fill(target["expr"])))
    return queries


def fill(expr: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    assert "$" not in expr, f"a Grafana variable the test does not know: {expr}"
    return expr


def alert_queries() -> list[tuple[str, str]]:
    """(alert name, PromQL) for every rule in alerts.yml."""
    groups = load_yaml(DEPLOY / "prometheus" / "alerts.yml")["groups"]
    return [(rule["alert"], rule["expr"]) for group in groups for rule in group["rules"]]


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (not functions, labels or keywords)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = re.findall(r"(?<![\w:.])([A-Za-z_:][\w:]*)\b(?!\s*\()", text)
    return {name for name in names if name.lower() not in PROMQL_WORDS}


def exported_metrics(service: str) -> set[str]:
    """Every sample name on the service's /metrics page."""
    status, text = call(f"{service}/metrics")
    assert status == 200
    samples = (line.split("{")[0].split(" ")[0] for line in text.splitlines())
    return {name for name in samples if name and not name.startswith("#")}


def finite_values(data: dict[str, Any]) -> list[float]:
    values = [float(sample["value"][1]) for sample in data["result"]]
    return [value for value in values if math.isfinite(value)]


def test_metric_name_extraction() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{route=~"/v1/.*"}[5m])))'
        ' / ignoring(status_class) group_left sum(b_total) or vector(0) > bool 1e3 + up{job="x"}'
    )
    assert metric_names(expr) == {"a_bucket", "b_total", "up"}


def test_load_included_successes_and_errors(loaded: dict[int, int]) -> None:
    assert loaded.get(200, 0) > 0 and loaded.get(404, 0) > 0, loaded
    assert set(loaded) <= {200, 404}, f"unexpected statuses: {loaded}"


@pytest.mark.parametrize(("title", "expr"), dashboard_queries(), ids=lambda v: v[:60])
def test_every_dashboard_query_returns_data(
    prometheus: str, loaded: dict[int, int], title: str, expr: str
) -> None:
    data = instant_query(prometheus, expr)
    assert finite_values(data), f"{title}: no data for {expr}\n{data}"


@pytest.mark.parametrize(("alert", "expr"), alert_queries(), ids=lambda v: v[:60])
def test_every_alert_expression_executes(
    prometheus: str, loaded: dict[int, int], alert: str, expr: str
) -> None:
    instant_query(prometheus, expr)


def test_alert_rules_are_loaded_and_evaluate_cleanly(
    prometheus: str, loaded: dict[int, int]
) -> None:
    status, answer = call(f"{prometheus}/api/v1/rules")
    assert status == 200
    rules = {r["name"]: r for g in answer["data"]["groups"] for r in g["rules"]}
    assert set(rules) == {name for name, _ in alert_queries()}
    for name, rule in rules.items():
        assert rule["health"] == "ok", f"{name}: {rule.get('lastError')}"
    assert rules["EmbeddingServiceTargetDown"]["state"] == "inactive"


def test_every_metric_named_is_exported(service: str, loaded: dict[int, int]) -> None:
    exported = exported_metrics(service) | SYNTHETIC_METRICS
    for source, expr in dashboard_queries() + alert_queries():
        missing = metric_names(expr) - exported
        assert not missing, f"{source} uses metrics the service does not export: {missing}"


def test_job_variable_finds_the_job(prometheus: str, loaded: dict[int, int]) -> None:
    match = urllib.parse.urlencode({"match[]": "embedding_service_http_requests_total"})
    status, answer = call(f"{prometheus}/api/v1/label/job/values?{match}")
    assert status == 200 and JOB in answer["data"]

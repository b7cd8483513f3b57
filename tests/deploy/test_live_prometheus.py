"""A real Prometheus scrapes real replicas behind HAProxy under load; every dashboard and
alert query runs.

Each dashboard panel's query must return data (at least one finite value), each alert
expression must execute and its rule evaluate without error, and every metric they name must
be one the service's /metrics exports (or Prometheus's own `up`).
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest
import yaml

from deploy import stack_check
from deploy.live_monitoring import (
    JOB,
    alert_queries,
    call,
    dashboard_queries,
    finite_values,
    grafana_job,
    instant_query,
    loaded_rules,
    send_load,
    wait_until_scraped,
    wait_until_target_up,
)
from harness.server import free_port
from tests.deploy.conftest import DEPLOY, tool
from tests.deploy.replica_set import ReplicaSet, running_replicas

pytestmark = pytest.mark.slow

START_TIMEOUT = 90
# Grafana's variables, as the dashboard would fill them in.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$job": JOB}
# Series that Prometheus adds to every target itself.
SYNTHETIC_METRICS = {"up"}
PROMQL_WORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
    "offset", "bool", "inf", "nan",
}  # fmt: skip
# Rounds of load that span several 1 s scrapes, so every rate is positive.
ROUNDS = 4
ROUND_PAUSE = 1.2


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
    if process.stderr is not None:
        process.stderr.close()


@pytest.fixture(scope="module")
def replica_set(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplicaSet]:
    """scripts/replicas: two replicas of the default tables behind HAProxy, on free ports."""
    tool("haproxy")
    with running_replicas(tmp_path_factory.mktemp("replicas")) as running:
        yield running


@pytest.fixture(scope="module")
def service(replica_set: ReplicaSet) -> str:
    """The proxy's address: the load goes through it, as users' requests do."""
    return replica_set.base


@pytest.fixture(scope="module")
def prometheus(replica_set: ReplicaSet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's Prometheus scraping every replica and the proxy every second, with the alert
    rules loaded."""
    binary = tool("prometheus")
    folder = tmp_path_factory.mktemp("prometheus")
    replicas = [f"127.0.0.1:{port}" for port in replica_set.replica_ports()]
    proxy = f"127.0.0.1:{replica_set.metrics_port}"
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(DEPLOY / "prometheus" / "alerts.yml")],
        "scrape_configs": [
            {"job_name": JOB, "static_configs": [{"targets": replicas}]},
            {"job_name": stack_check.PROXY_JOB, "static_configs": [{"targets": [proxy]}]},
        ],
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


@pytest.fixture(scope="module")
def loaded(service: str, prometheus: str) -> dict[int, int]:
    """The load has been sent and scraped."""
    wait_until_target_up(prometheus, JOB, 30)
    statuses = send_load(service, ROUNDS, ROUND_PAUSE)
    wait_until_scraped(prometheus, JOB, sum(statuses.values()), 30)
    time.sleep(2.5)  # two more scrapes, for the rates
    return statuses


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


def test_metric_name_extraction() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{route=~"/v1/.*"}[5m])))'
        ' / ignoring(status_class) group_left sum(b_total) or vector(0) > bool 1e3 + up{job="x"}'
    )
    assert metric_names(expr) == {"a_bucket", "b_total", "up"}


def test_load_included_successes_and_errors(loaded: dict[int, int]) -> None:
    assert loaded.get(200, 0) > 0 and loaded.get(404, 0) > 0, loaded
    assert set(loaded) <= {200, 404}, f"unexpected statuses: {loaded}"


@pytest.mark.parametrize(
    ("title", "expr"), dashboard_queries(GRAFANA_VARIABLES), ids=lambda v: v[:60]
)
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
    rules = loaded_rules(prometheus)
    assert set(rules) == {name for name, _ in alert_queries()}
    for name, rule in rules.items():
        assert rule["health"] == "ok", f"{name}: {rule.get('lastError')}"
    assert rules["EmbeddingServiceTargetDown"]["state"] == "inactive"


def test_every_metric_named_is_exported(service: str, loaded: dict[int, int]) -> None:
    exported = exported_metrics(service) | SYNTHETIC_METRICS
    for source, expr in dashboard_queries(GRAFANA_VARIABLES) + alert_queries():
        missing = metric_names(expr) - exported
        assert not missing, f"{source} uses metrics the service does not export: {missing}"


def test_job_variable_finds_the_job(prometheus: str, loaded: dict[int, int]) -> None:
    assert grafana_job(prometheus) == JOB


def test_compose_smoke_checks_pass_here(
    service: str, prometheus: str, loaded: dict[int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    """scripts/compose-smoke's checks (deploy/stack_check.py), against this Prometheus."""
    code = stack_check.run(service, prometheus, ["minilm"], 2, stack_check.Report())
    lines = capsys.readouterr().out.splitlines()
    assert code == 0, "\n".join(lines)
    panels = [line for line in lines if line.startswith("ok    panel ")]
    assert len(panels) == len(dashboard_queries(GRAFANA_VARIABLES))

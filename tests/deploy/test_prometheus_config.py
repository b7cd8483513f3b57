"""promtool accepts the Prometheus configuration and the alert rules."""

from __future__ import annotations

from tests.deploy.conftest import DEPLOY, load_yaml, run_tool

PROMETHEUS = DEPLOY / "prometheus"


def test_config_is_valid() -> None:
    run_tool("promtool", "check", "config", PROMETHEUS / "prometheus.yml")


def test_rules_are_valid() -> None:
    run_tool("promtool", "check", "rules", PROMETHEUS / "alerts.yml")


def test_alerts_cover_latency_errors_and_availability() -> None:
    rules = [
        rule for group in load_yaml(PROMETHEUS / "alerts.yml")["groups"] for rule in group["rules"]
    ]
    expressions = " ".join(rule["expr"] for rule in rules)
    assert "histogram_quantile(0.99" in expressions
    assert 'status_class="5xx"' in expressions
    assert "up{" in expressions
    assert all(rule["annotations"]["summary"] for rule in rules)

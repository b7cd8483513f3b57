"""The Grafana dashboard JSON: generated from deploy/grafana/panels.py and well formed."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.deploy.conftest import DEPLOY, load_yaml

GRAFANA = DEPLOY / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "embedding-service.json"


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel that shows data (row headers excluded)."""
    return [panel for panel in dashboard["panels"] if panel["type"] != "row"]


def test_dashboard_json_is_generated_from_the_panels() -> None:
    result = subprocess.run(
        [sys.executable, GRAFANA / "build_dashboard.py", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_every_panel_has_queries_and_fits_the_grid(dashboard: dict[str, Any]) -> None:
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in panels(dashboard):
        assert panel["targets"] and all(target["expr"] for target in panel["targets"])
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]


def test_issue_panels_are_present(dashboard: dict[str, Any]) -> None:
    titles = " | ".join(panel["title"] for panel in panels(dashboard)).lower()
    for wanted in ("route and status", "error ratio", "latency by route", "search latency",
                   "batch size", "cache hit ratio", "in-flight", "table rows"):  # fmt: skip
        assert wanted in titles


def test_provisioning_loads_this_dashboard_from_this_datasource(dashboard: dict[str, Any]) -> None:
    provider = load_yaml(GRAFANA / "provisioning" / "dashboards" / "embedding-service.yml")
    assert provider["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
    datasource = load_yaml(GRAFANA / "provisioning" / "datasources" / "prometheus.yml")
    variable = next(v for v in dashboard["templating"]["list"] if v["name"] == "datasource")
    assert variable["current"]["value"] == datasource["datasources"][0]["uid"]

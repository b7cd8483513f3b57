"""docker-compose.yml: valid against the Compose Specification, and wired as documented.

The schema check uses the compose-spec JSON schema that check-jsonschema ships
(`--builtin-schema vendor.compose-spec`): the same schema `docker compose` validates with,
kept current by upgrading one pinned test dependency instead of a vendored copy. docker-compose
v1 (`docker-compose config`) is not used: it predates the Compose Specification.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.deploy.conftest import DEPLOY, REPO, load_yaml, run_tool

COMPOSE = REPO / "docker-compose.yml"
MY_TABLES = DEPLOY / "compose" / "my-tables.yml"


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return load_yaml(COMPOSE)["services"]


@pytest.mark.parametrize("path", [COMPOSE, MY_TABLES], ids=lambda path: path.name)
def test_compose_files_match_the_compose_spec(path: Path) -> None:
    run_tool("check-jsonschema", "--builtin-schema", "vendor.compose-spec", path)


def test_service_has_a_readiness_healthcheck(services: dict[str, Any]) -> None:
    healthcheck = services["embedding-service"]["healthcheck"]
    assert healthcheck["test"] == ["CMD", "/opt/venv/bin/python", "/opt/healthcheck.py"]


@pytest.mark.parametrize("name", ["prometheus", "grafana"])
def test_monitoring_waits_for_a_healthy_service(services: dict[str, Any], name: str) -> None:
    assert services[name]["depends_on"]["embedding-service"]["condition"] == "service_healthy"


def test_service_is_hardened_like_on_kubernetes(services: dict[str, Any]) -> None:
    service = services["embedding-service"]
    assert service["read_only"] is True and "/tmp" in service["tmpfs"]


def test_mounted_configuration_exists(services: dict[str, Any]) -> None:
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (REPO / source).exists(), f"{source} is mounted but missing"


def test_prometheus_scrapes_the_compose_service(services: dict[str, Any]) -> None:
    config = load_yaml(DEPLOY / "prometheus" / "prometheus.yml")
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "embedding-service")
    port = services["embedding-service"]["ports"][0].split(":")[-1]
    assert job["static_configs"][0]["targets"] == [f"embedding-service:{port}"]


def test_grafana_datasource_points_at_the_compose_prometheus() -> None:
    provisioning = DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
    datasource = load_yaml(provisioning)["datasources"][0]
    assert datasource["url"] == "http://prometheus:9090"

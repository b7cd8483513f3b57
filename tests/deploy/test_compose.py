"""docker-compose.yml: valid against the Compose Specification, and wired as documented.

The schema check uses the compose-spec JSON schema that check-jsonschema ships
(`--builtin-schema vendor.compose-spec`): the same schema `docker compose` validates with,
kept current by upgrading one pinned test dependency instead of a vendored copy. docker-compose
v1 (`docker-compose config`) is not used: it predates the Compose Specification.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.conftest import DEPLOY, REPO, load_yaml, run_tool

COMPOSE = REPO / "docker-compose.yml"
MY_TABLES = DEPLOY / "compose" / "my-tables.yml"
STANDINS = DEPLOY / "compose" / "standins.yml"
# ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error}; $$ is a literal $.
VARIABLE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


class MissingVariable(ValueError):
    """A required variable (${NAME:?...}) is not set: compose refuses to start."""


def interpolate(value: str, env: Mapping[str, str]) -> str:
    """A compose string as `docker compose` fills it in from `env`."""

    def replace(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"]
        unset = name not in env or (op is not None and op.startswith(":") and not env[name])
        if not unset:
            return env[name]
        if op in (":?", "?"):
            raise MissingVariable(f"{name}: {arg}")
        return arg if op in (":-", "-") else ""

    return VARIABLE.sub(replace, value).replace("$$", "$")


def published(port: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """(host address, host port, container port) of a short-syntax port; "" for no address."""
    parts = interpolate(port, env).rsplit(":", 2)
    return tuple([""] * (3 - len(parts)) + parts)


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return load_yaml(COMPOSE)["services"]


@pytest.mark.parametrize("path", [COMPOSE, MY_TABLES, STANDINS], ids=lambda path: path.name)
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


def test_prometheus_scrapes_every_replica_and_the_proxy(services: dict[str, Any]) -> None:
    config = load_yaml(DEPLOY / "prometheus" / "prometheus.yml")
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    replicas = jobs["embedding-service"]["dns_sd_configs"][0]
    assert replicas["names"] == ["embedding-service"] and replicas["port"] == 8000
    assert "ports" not in services["embedding-service"]  # the proxy is the way in
    metrics_port = published(services["proxy"]["ports"][1], {})[2]
    assert jobs["haproxy"]["static_configs"][0]["targets"] == [f"proxy:{metrics_port}"]


def test_grafana_datasource_points_at_the_compose_prometheus() -> None:
    provisioning = DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
    datasource = load_yaml(provisioning)["datasources"][0]
    assert datasource["url"] == "http://prometheus:9090"


def test_interpolation_follows_compose() -> None:
    env = {"SET": "x", "EMPTY": ""}
    assert interpolate("${SET:-d} ${EMPTY:-d} ${EMPTY-d} ${UNSET-d} ${UNSET} $$HOME", env) == (
        "x d  d  $HOME"
    )
    with pytest.raises(MissingVariable, match="EMPTY: say so"):
        interpolate("${EMPTY:?say so}", env)
    assert published("${ADDRESS:-127.0.0.1}:${PORT:-80}:8000", {"PORT": "81"}) == (
        "127.0.0.1", "81", "8000",
    )  # fmt: skip


@pytest.mark.parametrize("name", ["proxy", "prometheus", "grafana"])
def test_ports_are_published_on_loopback_by_default(services: dict[str, Any], name: str) -> None:
    env = {"GRAFANA_ADMIN_PASSWORD": "secret"}
    for port in services[name]["ports"]:
        assert published(port, env)[0] == "127.0.0.1", f"{name} publishes {port} on every interface"
        widened = published(port, env | {"BIND_ADDRESS": "0.0.0.0"})
        assert widened[0] == "0.0.0.0", f"BIND_ADDRESS does not widen {port}"


def test_grafana_admin_password_is_required_from_the_environment(services: dict[str, Any]) -> None:
    environment = services["grafana"]["environment"]
    password = environment.get("GF_SECURITY_ADMIN_PASSWORD")
    # Without it Grafana starts with admin/admin.
    assert password, "Grafana keeps its admin/admin default"
    with pytest.raises(MissingVariable):
        interpolate(password, {})
    assert interpolate(password, {"GRAFANA_ADMIN_PASSWORD": "s3cret"}) == "s3cret"
    assert "GF_SECURITY_ADMIN_USER" not in environment or environment["GF_SECURITY_ADMIN_USER"]


def test_prometheus_admin_endpoints_are_off(services: dict[str, Any]) -> None:
    # The lifecycle API lets anyone who reaches the port reload or shut Prometheus down.
    command = services["prometheus"]["command"]
    assert "--web.enable-lifecycle" not in command
    assert "--web.enable-admin-api" not in command


def test_every_compose_variable_is_documented() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for path in (COMPOSE, MY_TABLES):
        for name in {match["name"] for match in VARIABLE.finditer(path.read_text("utf-8"))}:
            assert f"`{name}" in readme, f"{path.name} reads {name}, which README.md never names"


def test_standins_override_swaps_only_the_prometheus_and_proxy_images() -> None:
    services = load_yaml(STANDINS)["services"]
    assert set(services) == {"prometheus", "proxy"}
    assert all(list(service) == ["image"] for service in services.values())

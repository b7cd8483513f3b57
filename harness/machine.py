"""The machine a measurement ran on, as every benchmark prints it beside its figures."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (the architecture where there is none)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name":
                return value.strip()
    return platform.machine()


def machine() -> str:
    """The CPU model and the cores this process sees, e.g. "Intel(R) Xeon(R) ..., 2 cores"."""
    return f"{cpu_model()}, {os.cpu_count()} cores"

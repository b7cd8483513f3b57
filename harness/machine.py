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


# The SIMD extensions that decide which exact pass is fastest (docs/exact-pass.md).
SIMD_FLAGS = ("avx512f", "avx512_fp16", "amx_tile", "avx2", "fma", "asimd", "sve")


def simd() -> str:
    """The widest SIMD extensions /proc/cpuinfo lists, e.g. "avx512f, avx2, fma"."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return ""
    lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    flags = next((line for line in lines if line.startswith(("flags", "Features"))), "")
    return ", ".join(f for f in SIMD_FLAGS if f" {f}" in flags.split(":", 1)[-1] + " ")


def machine() -> str:
    """The CPU model, its SIMD and the cores this process sees, e.g. "Intel(R) Xeon(R) ...
    (avx512f, avx2, fma), 2 cores"."""
    extensions = simd()
    return f"{cpu_model()}{f' ({extensions})' if extensions else ''}, {os.cpu_count()} cores"

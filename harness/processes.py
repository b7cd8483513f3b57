"""What /proc says about a server's processes: its workers, their memory and CPU time."""

from __future__ import annotations

import os
from pathlib import Path


def child_pids(pid: int) -> list[int]:
    """The process ids whose parent is `pid` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return sorted(found)


def memory_of(pid: int) -> dict[str, float]:
    """RSS and PSS of a process in MiB (smaps_rollup)."""
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Pss"):
            values[name.lower() + "_mib"] = int(rest.split()[0]) / 1024
    return values


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

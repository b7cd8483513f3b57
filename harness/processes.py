"""What /proc says about a server's processes: its workers, their memory and CPU time, and
which of them holds a connection."""

from __future__ import annotations

import contextlib
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


def tree(pid: int) -> list[int]:
    """The server's processes: the parent and its children."""
    return [pid, *child_pids(pid)]


def tree_cpu(pid: int) -> float:
    """CPU seconds spent so far by the server's live processes."""
    total = 0.0
    for member in tree(pid):
        with contextlib.suppress(OSError):
            total += cpu_seconds(member)
    return total


def tree_memory(pid: int) -> tuple[float, float]:
    """RSS and PSS (MiB) of the server's processes, summed."""
    rss = pss = 0.0
    for member in tree(pid):
        with contextlib.suppress(OSError, KeyError):
            values = memory_of(member)
            rss, pss = rss + values["rss_mib"], pss + values["pss_mib"]
    return rss, pss


def server_ends(port: int) -> dict[int, str]:
    """The established connections to `port`: the client's port -> the server end's socket."""
    ends = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = fields[1].rsplit(":", 1)[1], fields[2].rsplit(":", 1)[1]
            if int(local, 16) == port and fields[3] == "01":
                ends[int(remote, 16)] = f"socket:[{fields[9]}]"
    return ends


def sockets_of(pid: int) -> set[str]:
    """What a process holds open (its sockets as `socket:[inode]`)."""
    held = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):  # closed meanwhile
                held.add(os.readlink(fd))
    return held


def socket_owner(port: int, client_port: int, pids: list[int]) -> int | None:
    """The process holding the server end of the connection from `client_port`."""
    end = server_ends(port).get(client_port)
    return next((pid for pid in pids if end in sockets_of(pid)), None)


def busiest_share(pid: int, port: int) -> float:
    """The share of the port's connections that the busiest worker holds."""
    ends = set(server_ends(port).values())
    held = [len(ends & sockets_of(member)) for member in child_pids(pid) or [pid]]
    return max(held) / max(1, sum(held))


def running(pid: int) -> bool:
    """Whether process `pid` exists and has not exited (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False

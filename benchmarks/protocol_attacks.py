"""Request framing attacks on one connection, each bounded in time, bytes and server memory.

Used by benchmarks/protocol_alternatives.py. Each shape sends an opening, then a repeated block
for as long as the server reads it. What is recorded: the bytes the client got into the socket
before the server closed it, answered, stopped reading or the bounds ran out (the kernel's
socket buffers, a few MiB on loopback, are part of it), the statuses answered, when the server
closed the connection, and the peak resident memory of the server's processes meanwhile.
"""

from __future__ import annotations

import contextlib
import re
import select
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from harness.processes import cpu_seconds

PAD = b"v" * 200
CHUNKED = b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
HEAD = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
SLOW = b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
STATUS = re.compile(rb"HTTP/1\.[01] (\d{3})")
# Beyond this much resident memory across the server's processes an attack stops at once.
RSS_CEILING = 4 * 1024**3


def header_lines(prefix: bytes) -> bytes:
    """About 1 MiB of distinct header lines `<prefix>N: <200 bytes>`."""
    return b"".join(b"%s%d: %s\r\n" % (prefix, n, PAD) for n in range(5000))


# name -> (opening, the block repeated after it)
SHAPES: dict[str, tuple[bytes, bytes]] = {
    # The audit's case: a 1-byte chunk, the last chunk, then trailer lines forever.
    "endless-trailers": (CHUNKED + b"1\r\na\r\n0\r\n", header_lines(b"t")),
    # A request head whose header lines never end.
    "endless-head": (HEAD, header_lines(b"x")),
    # The same endless head, pipelined behind a request that takes two seconds to answer.
    "pipelined-head": (SLOW + HEAD, header_lines(b"x")),
    # One chunk-size line whose extension never ends.
    "endless-chunk-ext": (CHUNKED + b"1;e=", b"v" * 65536),
    # Well-formed 1-byte chunks, each with a 4 KiB extension: no single line is long.
    "chunk-ext-per-chunk": (CHUNKED, (b"1;e=" + b"v" * 4096 + b"\r\na\r\n") * 16),
}


@dataclass(frozen=True)
class AttackResult:
    """What one attack got out of one server."""

    sent: int
    statuses: list[str]
    closed_after: float | None  # seconds from the first byte; None: still open at the end
    peak_rss: int  # bytes, summed over the server's processes
    cpu: float  # seconds of CPU the server's processes spent meanwhile
    stopped_by: str  # "server", "time", "bytes" or "rss"


def run_attack(
    port: int, shape: str, pids: list[int], seconds: float, max_bytes: int
) -> AttackResult:
    """Send `shape` until the server closes or a bound is reached; then read what it said."""
    opening, block = SHAPES[shape]
    for pid in pids:
        reset_peak_rss(pid)
    cpu = sum(map(cpu_of, pids))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.setblocking(False)
        sending = Sending(sock, opening, block)
        stopped_by, closed_after, answer = sending.run(pids, seconds, max_bytes)
        if closed_after is None:
            answer += drain(sock, 1.0)
    return AttackResult(
        sending.sent,
        [status.decode() for status in STATUS.findall(answer)],
        closed_after,
        sum(peak_rss(pid) for pid in pids),
        sum(map(cpu_of, pids)) - cpu,
        stopped_by,
    )


class Sending:
    """One connection's attack: send while the server reads, watch for answers and a close."""

    def __init__(self, sock: socket.socket, opening: bytes, block: bytes) -> None:
        self.sock = sock
        self.block = memoryview(block)
        self.pending = memoryview(opening)
        self.sent = 0

    def run(self, pids: list[int], seconds: float, limit: int) -> tuple[str, float | None, bytes]:
        """(why it stopped, when the server closed or None, what the server answered)."""
        started = checked = time.monotonic()
        answer = b""
        while (now := time.monotonic()) - started < seconds:
            if self.sent >= limit:
                return "bytes", None, answer
            if now - checked > 0.05:
                checked = now
                if sum(resident(pid) for pid in pids) > RSS_CEILING:
                    return "rss", None, answer
            readable, writable, _ = select.select([self.sock], [self.sock], [], 0.05)
            if readable:
                chunk = receive(self.sock)
                if chunk == b"":
                    return "server", time.monotonic() - started, answer
                answer += chunk or b""
            if writable and not self._send():
                return "server", time.monotonic() - started, answer + drain(self.sock, 1.0)
        return "time", None, answer

    def _send(self) -> bool:
        if not self.pending:
            self.pending = self.block
        try:
            count = self.sock.send(self.pending)
        except BlockingIOError:
            return True
        except OSError:  # reset or broken pipe: the server closed
            return False
        self.sent += count
        self.pending = self.pending[count:]
        return True


def receive(sock: socket.socket) -> bytes | None:
    """What the server sent; b"" once it closed (a reset counts as closed); None: nothing yet."""
    try:
        return sock.recv(65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def drain(sock: socket.socket, seconds: float) -> bytes:
    """Read what else the server says within `seconds`."""
    answer = b""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([sock], [], [], left)
        if not readable:
            break
        chunk = receive(sock)
        if chunk == b"":
            break
        answer += chunk or b""
    return answer


def cpu_of(pid: int) -> float:
    """CPU seconds `pid` has spent (0 if it is gone)."""
    try:
        return cpu_seconds(pid)
    except OSError:
        return 0.0


def reset_peak_rss(pid: int) -> None:
    """Start VmHWM (peak resident memory) over from the current RSS."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_rss(pid: int) -> int:
    """VmHWM of `pid` in bytes (0 if it is gone)."""
    return _status_field(pid, "VmHWM:")


def resident(pid: int) -> int:
    """VmRSS of `pid` in bytes (0 if it is gone)."""
    return _status_field(pid, "VmRSS:")


def _status_field(pid: int, name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name):
                return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0

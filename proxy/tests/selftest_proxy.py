#!/usr/bin/python3
"""Self-test of tlslab-proxy: each fault's effect on the wire, seen from a Python socket, with a
plain TCP peer (tcp_peer.py) behind the proxy; then the lab's reference client through it against
servers/tls_server.py. Every case also holds the proxy to its exit contract: one REPORT line,
exit 0, nothing on stderr, the 3 descriptors it started with and no more at exit.

    /usr/bin/python3 -m proxy.tests.selftest_proxy --proxy build/proxy/tlslab-proxy \\
        [--tlsnb build/client/tlsnb [--go build/clients/go/tlsnb-go] --certs build/certs/out]
        [--seed S] [--only CASE...] [--list]
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from harness import Gate, HarnessError, Server, choose_seed, rerun_line, run_client, tls_server, verdict
from harness.expect import judge, parse
from harness.peers import PY

HERE = Path(__file__).resolve().parent
BASELINE_FDS = 6  # the standard three, the listener, epoll, the signalfd


def pattern(n: int, start: int = 0) -> bytes:
    """tcp_peer.py's pattern: byte i is (i * 131 + 7) % 251."""
    return bytes((i * 131 + 7) % 251 for i in range(start, start + n))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Bench:
    """One case's peer and proxy. stop() stops the proxy first (its REPORT), then the peer, and
    checks the proxy's exit contract; problems collects what a case found wrong."""

    def __init__(self, lab: "Lab", peer: Optional[list] = None, proxy: Optional[list] = None,
                 upstream: Optional[int] = None, tls: Optional[list] = None):
        self.problems: list[str] = []
        self.peer: Optional[Server] = None
        if tls is not None:
            self.peer = tls_server(lab.certs, "leaf-ecdsa", "normal", *tls)
        elif upstream is None:
            self.peer = Server([PY, HERE / "tcp_peer.py", *(peer or [])])
        port = upstream if upstream is not None else self.peer.port
        try:
            self.proxy = Server([lab.proxy, "--upstream", f"127.0.0.1:{port}", "--seed", lab.seed, *(proxy or [])])
        except HarnessError:
            if self.peer:
                self.peer.stop()
            raise
        self.port = self.proxy.port
        self._stopped = False

    def connect(self, timeout: float = 5.0) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proxy.proc.pid}/fd"))

    def wait_fds(self, count: int, within: float = 3.0) -> int:
        """Polls the proxy's descriptor count until it is COUNT (a connection closed), or WITHIN passes."""
        end = time.monotonic() + within
        while (now := self.fds()) != count and time.monotonic() < end:
            time.sleep(0.01)
        return now

    def expect(self, what: str, want, got) -> None:
        if want != got:
            self.problems.append(f"{what}: expected {want!r}, got {got!r}")

    def require(self, what: str, ok: bool) -> None:
        if not ok:
            self.problems.append(what)

    def stop(self) -> dict:
        if self._stopped:
            return self.proxy.report
        self._stopped = True
        began = time.monotonic()
        report = self.proxy.stop()
        took = time.monotonic() - began
        if self.peer:
            self.peer.stop()
        self.require(f"proxy took {took:.1f} s to stop", took < 3)
        self.require("proxy printed no REPORT", bool(report))
        self.expect("proxy exit", 0, self.proxy.proc.returncode)
        self.expect("proxy stderr", "", self.proxy.stderr.strip()[-400:])
        self.expect("report.fds_open (descriptors at exit, as at start: the standard three)", (3, 3),
                    (report.get("fds_at_start"), report.get("fds_open")))
        return report

    def __enter__(self) -> "Bench":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def read_to_end(sock: socket.socket, within: float = 5.0) -> tuple[bytes, list[int], str]:
    """(bytes, each recv's size, how it ended: eof, reset or silence) reading until the end or WITHIN."""
    data, sizes = bytearray(), []
    sock.settimeout(within)
    try:
        while chunk := sock.recv(65536):
            data += chunk
            sizes.append(len(chunk))
        return bytes(data), sizes, "eof"
    except ConnectionResetError:
        return bytes(data), sizes, "reset"
    except socket.timeout:
        return bytes(data), sizes, "silence"


def dial_and_read_to_end(b: Bench, within: float = 5.0) -> tuple[bytes, list[int], str]:
    """read_to_end on a new connection; a reset can come before connect() returns (it is the answer)."""
    try:
        sock = b.connect()
    except ConnectionResetError:
        return b"", [], "reset"
    with sock:
        return read_to_end(sock, within)


def read_exactly(sock: socket.socket, n: int, within: float = 5.0) -> bytes:
    """N bytes, or fewer when the stream ends or WITHIN passes first (the caller compares)."""
    data = bytearray()
    sock.settimeout(within)
    try:
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    return bytes(data)


def fault_fired(report: dict, name: str) -> int:
    return report.get("faults", {}).get(name, {}).get("fired", -1)


# --- the cases: each takes the Lab and returns its problems (empty: it holds) ----------------

def passthrough_is_byte_exact_both_ways(lab: "Lab") -> list[str]:
    """1 MB up and 1 MB back through an echo, byte for byte, no fault."""
    size = 1 << 20
    with Bench(lab) as b:
        sock = b.connect()
        sender = threading.Thread(target=lambda: (sock.sendall(pattern(size)), sock.shutdown(socket.SHUT_WR)))
        sender.start()
        data, _, end = read_to_end(sock, 20)
        sender.join()
        sock.close()
        b.expect("bytes back", size, len(data))
        b.require("the echo differs from what was sent", data == pattern(size))
        b.expect("end", "eof", end)
        b.wait_fds(BASELINE_FDS)
        report = b.stop()
        b.expect("report bytes", (size, size), (report.get("bytes_upstream"), report.get("bytes_downstream")))
        b.expect("report.ends", {"closed": 1}, report.get("ends"))
        b.expect("peer bytes_in", size, b.peer.report.get("bytes_in"))
    return b.problems


def many_connections_stay_apart(lab: "Lab") -> list[str]:
    """32 connections at once, each its own 64 KB through the echo: no byte crosses over, each ends in EOF."""
    size, count = 64 * 1024, 32
    with Bench(lab) as b:
        socks = [b.connect() for _ in range(count)]
        results: list[tuple[bytes, str]] = [(b"", "")] * count

        def one(i: int) -> None:
            body = pattern(size, start=i * 7)
            threading.Thread(target=lambda: (socks[i].sendall(body), socks[i].shutdown(socket.SHUT_WR))).start()
            data, _, end = read_to_end(socks[i], 20)
            results[i] = (data, end)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in socks:
            s.close()
        bad = [i for i in range(count) if results[i][0] != pattern(size, start=i * 7)]
        b.expect("connections whose echo differs", [], bad)
        b.expect("connections that did not end in EOF", [], [i for i in range(count) if results[i][1] != "eof"])
        b.wait_fds(BASELINE_FDS)
        report = b.stop()
        b.expect("report.connections", count, report.get("connections"))
        b.expect("report.bytes_downstream", size * count, report.get("bytes_downstream"))
    return b.problems


def slicer_one_byte_arrives_one_byte_per_recv(lab: "Lab") -> list[str]:
    """size=1 with a 10 ms pause: every recv at the client returns one byte. A recv of N > 1 bytes
    is only allowed when the client itself was late: the segments leave >= 10 ms apart, so N of them
    in one recv means it came >= (N - 1) x 10 ms after the previous one (a loaded machine's client)."""
    delay = 0.010
    with Bench(lab, peer=["--greet", 60, "--then", "drain"],
               proxy=["--fault", f"downstream:slicer:size=1,delay_ms={int(delay * 1000)}"]) as b:
        sock = b.connect()
        data, reads, last = bytearray(), [], time.monotonic()
        while len(data) < 60:
            chunk = sock.recv(4096)
            if not chunk:
                break
            now = time.monotonic()
            data += chunk
            reads.append((len(chunk), now - last))
            last = now
        sock.close()
        b.require("bytes differ from the greeting", bytes(data) == pattern(60))
        coalesced = [(n, round(gap * 1000, 1)) for n, gap in reads if n > 1 and gap < (n - 1) * delay * 0.8]
        b.expect("recvs of more than one byte that the client's lateness does not explain (bytes, ms)", [], coalesced)
        b.require(f"only {sum(n == 1 for n, _ in reads)} of {len(reads)} recvs were one byte",
                  sum(n == 1 for n, _ in reads) >= len(reads) // 2)
        report = b.stop()
        b.expect("slicer segments (report)", 60, fault_fired(report, "slicer"))
    return b.problems


def slicer_keeps_the_last_partial_segment(lab: "Lab") -> list[str]:
    """size=7 over 1000 bytes: 142 whole segments and a last one of 6, all delivered."""
    with Bench(lab, peer=["--greet", 1000, "--then", "drain"],
               proxy=["--fault", "downstream:slicer:size=7,delay_ms=1"]) as b:
        sock = b.connect()
        data = read_exactly(sock, 1000)
        sock.close()
        b.expect("bytes", 1000, len(data))
        b.require("bytes differ from the greeting", data == pattern(1000))
        report = b.stop()
        b.require(f"slicer segments {fault_fired(report, 'slicer')} < 143", fault_fired(report, "slicer") >= 143)
    return b.problems


def limit_data_closes_after_exactly_k(lab: "Lab") -> list[str]:
    """downstream limit_data bytes=3000 of a 10000-byte greeting: 3000 bytes, then end of file."""
    with Bench(lab, peer=["--greet", 10000, "--then", "drain"],
               proxy=["--fault", "downstream:limit_data:bytes=3000"]) as b:
        sock = b.connect()
        data, _, end = read_to_end(sock)
        sock.close()
        b.expect("bytes", 3000, len(data))
        b.require("bytes differ from the greeting", data == pattern(3000))
        b.expect("end", "eof", end)
        b.wait_fds(BASELINE_FDS)
        report = b.stop()
        b.expect("report.ends", {"limit_data": 1}, report.get("ends"))
        b.expect("limit_data fired", 1, fault_fired(report, "limit_data"))
    return b.problems


def limit_data_upstream_passes_k_to_the_server(lab: "Lab") -> list[str]:
    """upstream limit_data bytes=3000: the server receives 3000 of the client's 10000, the client EOF."""
    with Bench(lab, peer=["--then", "drain"], proxy=["--fault", "upstream:limit_data:bytes=3000"]) as b:
        sock = b.connect()
        try:
            sock.sendall(pattern(10000))
        except OSError:
            pass  # the limit may close before all of it is taken: only what passed counts
        _, _, end = read_to_end(sock)
        sock.close()
        b.expect("client end", "eof", end)
        b.wait_fds(BASELINE_FDS)
        b.stop()
        b.expect("server bytes_in", 3000, b.peer.report.get("bytes_in"))
    return b.problems


def reset_peer_resets_the_client_after_k(lab: "Lab") -> list[str]:
    """downstream reset_peer at=3000: 3000 bytes, then ECONNRESET."""
    with Bench(lab, peer=["--greet", 10000, "--then", "drain", "--wait-first-byte"],
               proxy=["--fault", "downstream:reset_peer:at=3000"]) as b:
        sock = b.connect()
        sock.sendall(b"go")
        data, _, end = read_to_end(sock)
        sock.close()
        b.expect("bytes", 3000, len(data))
        b.require("bytes differ from the greeting", data == pattern(3000))
        b.expect("end", "reset", end)
        report = b.stop()
        b.expect("report.ends", {"reset_peer": 1}, report.get("ends"))
    return b.problems


def reset_peer_waits_for_a_slow_reader(lab: "Lab") -> list[str]:
    """reset_peer at=100000 to a client that reads nothing for 0.5 s through a small window: the
    bytes back up in the proxy's socket, and the reset must wait until they arrived (an RST drops
    what the kernel still holds), so the client still reads exactly 100000 bytes before ECONNRESET."""
    with Bench(lab, peer=["--greet", 300000, "--then", "drain", "--wait-first-byte"],
               proxy=["--fault", "downstream:reset_peer:at=100000"]) as b:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", b.port))
        sock.sendall(b"go")
        time.sleep(0.5)  # the point of the case: a reader that is late
        data, _, end = read_to_end(sock)
        sock.close()
        b.expect("bytes, end", (100000, "reset"), (len(data), end))
        b.require("bytes differ from the greeting", data == pattern(len(data)))
    return b.problems


def reset_from_the_server_is_mirrored(lab: "Lab") -> list[str]:
    """No fault, a server that resets: the client sees a reset too, not a clean end."""
    with Bench(lab, peer=["--greet", 10, "--then", "reset"]) as b:
        b.expect("end", "reset", dial_and_read_to_end(b)[2])
        report = b.stop()
        b.expect("report.ends", {"aborted": 1}, report.get("ends"))
    return b.problems


def blackhole_is_silent_and_stays_open(lab: "Lab") -> list[str]:
    """downstream blackhole: nothing in 1 s, the connection open, the client's bytes still pass up."""
    with Bench(lab, peer=["--greet", 100, "--then", "echo"], proxy=["--fault", "downstream:blackhole"]) as b:
        sock = b.connect()
        data, _, end = read_to_end(sock, within=1.0)
        b.expect("what arrived in 1 s", (b"", "silence"), (data, end))
        sock.sendall(b"still here")
        data, _, end = read_to_end(sock, within=0.3)
        b.expect("after a send", (b"", "silence"), (data, end))
        b.expect("proxy descriptors (one connection open)", BASELINE_FDS + 2, b.fds())
        sock.close()
        b.wait_fds(BASELINE_FDS)
        report = b.stop()
        b.expect("report.dropped_downstream", 110, report.get("dropped_downstream"))
        b.expect("report.bytes_upstream", 10, report.get("bytes_upstream"))
    return b.problems


def half_close_gives_eof_while_the_client_can_send(lab: "Lab") -> list[str]:
    """downstream half_close at=2000: 2000 bytes, EOF; the client's 100 bytes after it reach the server."""
    with Bench(lab, peer=["--greet", 5000, "--then", "drain"],
               proxy=["--fault", "downstream:half_close:at=2000"]) as b:
        sock = b.connect()
        data, _, end = read_to_end(sock)
        b.expect("bytes before EOF", 2000, len(data))
        b.expect("end", "eof", end)
        sock.sendall(pattern(100))
        sock.shutdown(socket.SHUT_WR)
        b.wait_fds(BASELINE_FDS)
        sock.close()
        report = b.stop()
        b.expect("server bytes_in", 100, b.peer.report.get("bytes_in"))
        b.expect("report bytes", (100, 2000), (report.get("bytes_upstream"), report.get("bytes_downstream")))
        b.expect("half_close fired", 1, fault_fired(report, "half_close"))
    return b.problems


def latency_adds_at_least_the_delay(lab: "Lab") -> list[str]:
    """both latency ms=100: a one-byte round trip through the echo takes >= 200 ms."""
    with Bench(lab, proxy=["--fault", "both:latency:ms=100"]) as b:
        sock = b.connect()
        trips = []
        for _ in range(3):
            began = time.monotonic()
            sock.sendall(b"x")
            b.expect("echo", b"x", read_exactly(sock, 1))
            trips.append(time.monotonic() - began)
        sock.close()
        b.require(f"round trips {[round(t, 3) for t in trips]} s, each must be >= 0.2",
                  all(t >= 0.2 for t in trips))
    return b.problems


def bandwidth_paces_the_stream(lab: "Lab") -> list[str]:
    """downstream bandwidth rate=400 (KB/s): 200,000 bytes take >= 0.45 s, all of them."""
    with Bench(lab, peer=["--greet", 200000, "--then", "drain"],
               proxy=["--fault", "downstream:bandwidth:rate=400"]) as b:
        sock = b.connect()
        began = time.monotonic()
        data = read_exactly(sock, 200000, within=10)
        took = time.monotonic() - began
        sock.close()
        b.require("bytes differ from the greeting", data == pattern(200000))
        b.require(f"took {took:.2f} s, expected >= 0.45", took >= 0.45)
    return b.problems


def slow_close_holds_the_eof(lab: "Lab") -> list[str]:
    """downstream slow_close delay_ms=300, a server that greets and closes: EOF >= 300 ms after the bytes."""
    with Bench(lab, peer=["--greet", 10, "--then", "close"],
               proxy=["--fault", "downstream:slow_close:delay_ms=300"]) as b:
        sock = b.connect()
        data = read_exactly(sock, 10)
        began = time.monotonic()
        rest, _, end = read_to_end(sock)
        took = time.monotonic() - began
        sock.close()
        b.expect("bytes, end", (pattern(10), b"", "eof"), (data, rest, end))
        b.require(f"EOF came {took:.3f} s after the bytes, expected >= 0.25", took >= 0.25)
        report = b.stop()
        b.expect("slow_close fired", 1, fault_fired(report, "slow_close"))
    return b.problems


def only_conn_picks_one_connection(lab: "Lab") -> list[str]:
    """--only-conn 1 for a reset at 100, conn=2 on a limit of 50: connection 0 is untouched."""
    with Bench(lab, peer=["--greet", 1000, "--then", "drain", "--wait-first-byte"],
               proxy=["--fault", "downstream:reset_peer:at=100", "--only-conn", "1",
                      "--fault", "downstream:limit_data:bytes=50,conn=2"]) as b:
        seen = []
        for _ in range(3):  # one after the other: accept order is connect order
            sock = b.connect()
            sock.sendall(b"go")
            data, _, end = read_to_end(sock, within=0.5)
            seen.append((len(data), end))
            sock.close()
        b.expect("per connection (bytes, end)", [(1000, "silence"), (100, "reset"), (50, "eof")], seen)
        b.wait_fds(BASELINE_FDS)
        report = b.stop()
        b.expect("per_conn faults", [[], ["downstream:reset_peer"], ["downstream:limit_data"]],
                 [c.get("faults") for c in report.get("per_conn", [])])
    return b.problems


def report_counts_connections_bytes_and_faults(lab: "Lab") -> list[str]:
    """Three connections of 1000 bytes through slicer size=100: the REPORT adds them up."""
    with Bench(lab, peer=["--greet", 1000, "--then", "drain"],
               proxy=["--fault", "downstream:slicer:size=100"]) as b:
        for _ in range(3):
            sock = b.connect()
            b.expect("bytes", 1000, len(read_exactly(sock, 1000)))
            sock.sendall(b"abc")
            sock.close()
        b.wait_fds(BASELINE_FDS)
        report = b.stop()
        got = {k: report.get(k) for k in ("connections", "refused", "bytes_upstream", "bytes_downstream", "ends")}
        b.expect("report", {"connections": 3, "refused": 0, "bytes_upstream": 9, "bytes_downstream": 3000,
                            "ends": {"closed": 3}}, got)
        b.expect("slicer armed", 3, report.get("faults", {}).get("slicer", {}).get("armed"))
        b.require(f"slicer fired {fault_fired(report, 'slicer')} < 30", fault_fired(report, "slicer") >= 30)
        b.expect("per_conn bytes", [(3, 1000)] * 3,
                 [(c.get("bytes_upstream"), c.get("bytes_downstream")) for c in report.get("per_conn", [])])
        b.expect("seed", int(lab.seed), report.get("seed"))
    return b.problems


def sigterm_with_open_connections_leaves_no_descriptor(lab: "Lab") -> list[str]:
    """Five live connections at SIGTERM: two descriptors each before, three in all at exit."""
    with Bench(lab) as b:
        socks = [b.connect() for _ in range(5)]
        for s in socks:
            s.sendall(b"ping")
            b.expect("echo", b"ping", read_exactly(s, 4))
        b.expect("descriptors with 5 connections open", BASELINE_FDS + 10, b.fds())
        report = b.stop()  # checks fds_open == 3, the exit and how long it took
        b.expect("report.ends", {"stopped": 5}, report.get("ends"))
        b.expect("what the clients see", ["eof"] * 5, [read_to_end(s, within=2)[2] for s in socks])
        for s in socks:
            s.close()
    return b.problems


def max_conns_refuses_with_a_close(lab: "Lab") -> list[str]:
    """--max-conns 2: the third connection is closed at once, the first two still relay."""
    with Bench(lab, proxy=["--max-conns", "2"]) as b:
        socks = [b.connect() for _ in range(2)]
        for s in socks:
            s.sendall(b"hi")
            b.expect("echo", b"hi", read_exactly(s, 2))
        third = b.connect()
        b.expect("third connection", (b"", "eof"), read_to_end(third, within=2)[::2])
        third.close()
        for s in socks:
            s.close()
        b.wait_fds(BASELINE_FDS)
        report = b.stop()
        b.expect("report connections, refused", (2, 1), (report.get("connections"), report.get("refused")))
    return b.problems


def upstream_refused_resets_the_client(lab: "Lab") -> list[str]:
    """Nothing listens upstream: the client is reset, the REPORT says dial_failed."""
    with Bench(lab, upstream=free_port()) as b:
        b.expect("end", "reset", dial_and_read_to_end(b, within=2)[2])
        report = b.stop()
        b.expect("report.ends", {"dial_failed": 1}, report.get("ends"))
    return b.problems


def back_pressure_bounds_the_queue(lab: "Lab") -> list[str]:
    """A server that never reads: the client's sends stall, the proxy holds at most its 64 KiB."""
    with Bench(lab, peer=["--then", "hold"]) as b:
        sock = b.connect()
        sock.setblocking(False)
        sent, stalled_since = 0, None
        chunk = bytes(65536)
        while sent < 256 << 20:
            try:
                sent += sock.send(chunk)
                stalled_since = None
            except BlockingIOError:
                stalled_since = stalled_since or time.monotonic()
                if time.monotonic() - stalled_since > 0.5:
                    break
                time.sleep(0.01)
        sock.close()
        b.require(f"the client sent {sent} bytes without a stall", sent < 256 << 20)
        report = b.stop()
        b.require(f"buffer_peak {report.get('buffer_peak')} > 65536", 0 < report.get("buffer_peak", 0) <= 65536)
    return b.problems


BAD_FLAGS = [
    ["--fault", "downstream:slicer:size=1"],                                     # no --upstream
    ["--upstream", "127.0.0.1:9", "--fault", "downstream:teleport"],            # unknown fault
    ["--upstream", "127.0.0.1:9", "--fault", "downstream:slicer:size=x"],       # bad number
    ["--upstream", "127.0.0.1:9", "--fault", "downstream:slicer"],              # missing setting
    ["--upstream", "127.0.0.1:9", "--fault", "sideways:blackhole"],             # bad direction
    ["--upstream", "127.0.0.1:9", "--fault", "upstream:latency:ms=1,speed=2"],  # unknown setting
    ["--upstream", "127.0.0.1:9", "--max-conns", "0"],
    ["--upstream", "127.0.0.1:9", "--only-conn", "-1"],
    ["--upstream", "localhost:9"],
    ["--upstream", "127.0.0.1:9", "--listen", "127.0.0.1:99999"],
    ["--upstream", "127.0.0.1:9", "--frobnicate"],
]


def bad_flags_exit_two_with_one_line(lab: "Lab") -> list[str]:
    """Every bad setting: exit 2, one line on stderr, no READY."""
    problems = []
    for argv in BAD_FLAGS:
        proc = subprocess.run([lab.proxy, *argv], capture_output=True, text=True, timeout=10)
        lines = proc.stderr.strip().splitlines()
        if proc.returncode != 2 or len(lines) != 1 or proc.stdout:
            problems.append(f"{' '.join(argv)}: exit {proc.returncode}, stderr {proc.stderr!r}, stdout {proc.stdout!r}")
    return problems


# --- a client of the lab's contract through the proxy: tlsnb, and Go -------------------------------

def tlsnb_case(expect: str, proxy: list, tls: Optional[list] = None, client: Optional[list] = None,
               check: Optional[Callable[[Bench, dict], None]] = None) -> Callable[["Lab"], list[str]]:
    """CLIENT --count 8 through the proxy to tls_server.py (leaf-ecdsa), judged by the lab's expect grammar
    (the client is tlsnb, or another client of the contract: clients/README.md)."""
    def case(lab: "Lab") -> list[str]:
        with Bench(lab, tls=tls or [], proxy=proxy) as b:
            run = run_client([lab.client], ["--cafile", f"{lab.certs}/ca.pem", "--name", "hooks.test", "--count", 8,
                                        *(client or []), f"127.0.0.1:{b.port}"], timeout=60)
            b.wait_fds(BASELINE_FDS)
            report = b.stop()
            b.problems += judge(parse(expect), run, {"server": b.peer.report, "proxy": report})
            if check:
                check(b, report)
            lab.seen = run.outcomes()
        return b.problems
    return case


def slicer_cut_every_byte(b: Bench, report: dict) -> None:
    b.require(f"slicer fired {fault_fired(report, 'slicer')}: not one segment a byte",
              fault_fired(report, "slicer") == report.get("bytes_downstream"))


CASES: list[tuple[str, Callable[["Lab"], list[str]], bool]] = [  # (name, case, needs tlsnb)
    ("PassthroughIsByteExactBothWays", passthrough_is_byte_exact_both_ways, False),
    ("ManyConnectionsStayApart", many_connections_stay_apart, False),
    ("SlicerOneByteArrivesOneBytePerRecv", slicer_one_byte_arrives_one_byte_per_recv, False),
    ("SlicerKeepsTheLastPartialSegment", slicer_keeps_the_last_partial_segment, False),
    ("LimitDataClosesAfterExactlyK", limit_data_closes_after_exactly_k, False),
    ("LimitDataUpstreamPassesKToTheServer", limit_data_upstream_passes_k_to_the_server, False),
    ("ResetPeerResetsTheClientAfterK", reset_peer_resets_the_client_after_k, False),
    ("ResetPeerWaitsForASlowReader", reset_peer_waits_for_a_slow_reader, False),
    ("ResetFromTheServerIsMirrored", reset_from_the_server_is_mirrored, False),
    ("BlackholeIsSilentAndStaysOpen", blackhole_is_silent_and_stays_open, False),
    ("HalfCloseGivesEofWhileTheClientCanSend", half_close_gives_eof_while_the_client_can_send, False),
    ("LatencyAddsAtLeastTheDelay", latency_adds_at_least_the_delay, False),
    ("BandwidthPacesTheStream", bandwidth_paces_the_stream, False),
    ("SlowCloseHoldsTheEof", slow_close_holds_the_eof, False),
    ("OnlyConnPicksOneConnection", only_conn_picks_one_connection, False),
    ("ReportCountsConnectionsBytesAndFaults", report_counts_connections_bytes_and_faults, False),
    ("SigtermWithOpenConnectionsLeavesNoDescriptor", sigterm_with_open_connections_leaves_no_descriptor, False),
    ("MaxConnsRefusesWithAClose", max_conns_refuses_with_a_close, False),
    ("UpstreamRefusedResetsTheClient", upstream_refused_resets_the_client, False),
    ("BackPressureBoundsTheQueue", back_pressure_bounds_the_queue, False),
    ("BadFlagsExitTwoWithOneLine", bad_flags_exit_two_with_one_line, False),
    ("ClientPassthroughAllOk", tlsnb_case("ok/0*8 exit=0 proxy.connections=8 server.handshakes=8", []), True),
    ("ClientOneByteSlicerAllOk",
     tlsnb_case("ok/0*8 exit=0 server.handshakes=8", ["--fault", "downstream:slicer:size=1"],
                check=slicer_cut_every_byte), True),
    ("ClientResetMidResponseIsRead104",
     tlsnb_case("read/ECONNRESET*8 exit=1 proxy.ends[reset_peer]=8", ["--fault", "downstream:reset_peer:at=3000"],
                tls=["--body-size", "20000"]), True),
    ("ClientBlackholeIsDeadline2",
     tlsnb_case("deadline/HANDSHAKE*8 exit=1 wall<3", ["--fault", "downstream:blackhole"], client=["--deadline-ms", "1000"]),
     True),
]


CLIENT_SUFFIXES = ["/tlsnb", "/go"]  # the client cases, crossed over the clients given


class Lab:
    def __init__(self, proxy: str, certs: Optional[str], seed: int):
        self.proxy, self.certs, self.seed = proxy, certs, str(seed)
        self.client = ""                # the client the client cases run now
        self.seen: dict[str, int] = {}  # the last client run's outcomes


def run_case(gate: Gate, lab: Lab, case_id: str, case: Callable[[Lab], list[str]], ns: argparse.Namespace) -> None:
    """One case: PASS with its time (and the client's outcomes), or FAIL with what differed and the rerun line."""
    began = time.monotonic()
    lab.seen = {}
    try:
        problems = case(lab)
    except (HarnessError, OSError, subprocess.SubprocessError) as e:
        problems = [f"{type(e).__name__}: {e}"]
    if not problems:
        gate.check(case_id, True, f"{time.monotonic() - began:.2f} s" + (f", client {lab.seen}" if lab.seen else ""))
        return
    verdict(gate, case_id, False, "; ".join(problems))
    args = ["--proxy", ns.proxy, "--seed", lab.seed, "--only", case_id]
    for flag, value in (("--tlsnb", ns.tlsnb), ("--go", ns.go), ("--certs", ns.certs)):
        if value:
            args += [flag, value]
    print(f"  reproduce: {rerun_line(sys.argv[0], *args)}", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--proxy", required=True, help="the tlslab-proxy binary")
    p.add_argument("--tlsnb", help="the reference client: the Client* cases as CASE/tlsnb (skipped without it)")
    p.add_argument("--go", help="clients/go's tlsnb-go: the client cases again as CASE/go")
    p.add_argument("--certs", default=os.environ.get("TLSLAB_CERTS"), help="generated certificate folder")
    p.add_argument("--seed", type=int,
                   help="the proxy's seed (default: derived from the tree, printed; give one to explore)")
    p.add_argument("--only", nargs="*", default=[], help="run only these cases")
    p.add_argument("--list", action="store_true", help="print the case names, run nothing")
    ns = p.parse_args()
    names = [name + suffix for name, _, needs in CASES for suffix in (CLIENT_SUFFIXES if needs else [""])]
    if ns.list:
        print("\n".join(names))
        return 0
    unknown = [o for o in ns.only if o not in names]
    if unknown:
        print(f"{p.prog}: --only {unknown[0]}: no such case (--list)", file=sys.stderr)
        return 2
    if not os.access(ns.proxy, os.X_OK):
        print(f"{p.prog}: proxy not executable at {ns.proxy!r}", file=sys.stderr)
        return 2
    lab = Lab(ns.proxy, ns.certs, choose_seed(ns.seed))
    have_certs = bool(ns.certs and Path(ns.certs, "ca.pem").is_file())
    # The client cases are crossed over every client given: tlsnb, and Go (which the I/O shim cannot see).
    clients = dict(zip(CLIENT_SUFFIXES, (ns.tlsnb, ns.go)))
    gate = Gate("proxy")
    for name, case, needs_client in CASES:
        for suffix, client in clients.items() if needs_client else [("", None)]:
            if needs_client and suffix == "/go" and not client:
                continue  # a second client only when given
            case_id = name + suffix
            if ns.only and case_id not in ns.only and name not in ns.only:
                continue
            if needs_client and not (client and os.access(client, os.X_OK) and have_certs):
                gate.skip(case_id, f"needs the client ({client or 'not given'}) and --certs ({ns.certs}) built")
                continue
            lab.client = client or ""
            run_case(gate, lab, case_id, case, ns)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())

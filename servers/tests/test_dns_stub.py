#!/usr/bin/python3
"""Self-test of servers/dns_stub.py: every behaviour, checked with raw sockets and dnslib.

Prints PASS/FAIL per case and `N passed, N failed`.

    /usr/bin/python3 -m servers.tests.test_dns_stub [--only CASE...]
"""
from __future__ import annotations

import argparse
import socket
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional

from harness import PY, SERVERS, Gate, Server

from dnslib import QTYPE, RCODE, DNSRecord

TIMEOUT_S = 5.0  # no case waits this long unless the stub hangs
STUB = str(SERVERS / "dns_stub.py")

ZONES = {
    "hooks.test": "a:127.0.0.1",
    "mixed.test": "a:10.0.0.1,93.184.216.34",
    "slow.test": "slow:400:a:127.0.0.9",
    "flip.test": "flip:127.0.0.1,127.0.0.2",
    "alias.test": "cname:hooks.test",
    "outside.test": "cname:elsewhere.example",
    "nx.test": "nxdomain",
    "fail.test": "servfail",
    "no.test": "refused",
    "empty.test": "empty",
    "tc.test": "truncated:a:127.0.0.1,127.0.0.2",
    "tct.test": "truncated-tcp:a:127.0.0.1,127.0.0.2",
    "tcboth.test": "truncated:truncated-tcp:a:127.0.0.1",
    "bad.test": "malformed:0000818000010001",
    "raw.test": "raw:abcdef",
    "zero.test": "raw:",
    "close.test": "close",
    "silent.test": "silent",
    "spoof.test": "wrong-id:a:127.0.0.1",
    "ttl.test": "ttl:7:a:127.0.0.1",
    "cut.test": "cut:5:a:127.0.0.1",
}


def query(name: str, qtype: str = "A", qid: int = 0x4242) -> bytes:
    record = DNSRecord.question(name, qtype)
    record.header.id = qid
    return record.pack()


def udp(port: int, name: str, qtype: str = "A", qid: int = 0x4242, wait: float = TIMEOUT_S) -> Optional[bytes]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(wait)
        s.sendto(query(name, qtype, qid), ("127.0.0.1", port))
        try:
            return s.recv(65535)
        except socket.timeout:
            return None


def tcp_exchange(port: int, queries: list[bytes], wait: float = TIMEOUT_S) -> bytes:
    """Sends the framed queries on one connection; returns every octet received until EOF or `wait`."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(b"".join(struct.pack(">H", len(q)) + q for q in queries))
        received = b""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = s.recv(65535)
            except socket.timeout:
                break
            if not chunk:
                return received + b"<EOF>"
            received += chunk
            if whole_frames(received) == len(queries):
                break
        return received


def whole_frames(stream: bytes) -> int:
    count = 0
    while len(stream) >= 2 and len(stream) - 2 >= struct.unpack(">H", stream[:2])[0]:
        stream = stream[2 + struct.unpack(">H", stream[:2])[0]:]
        count += 1
    return count


def tcp(port: int, name: str, qtype: str = "A", qid: int = 0x4242) -> bytes:
    received = tcp_exchange(port, [query(name, qtype, qid)])
    return received[2:] if received[:2] and not received.endswith(b"<EOF>") else received


def summary(answer: Optional[bytes]) -> str:
    """rcode, flags that matter, and the answer records: one comparable line."""
    if answer is None:
        return "no answer"
    record = DNSRecord.parse(answer)
    flags = " tc" if record.header.tc else ""
    rrs = " ".join(f"{QTYPE.get(rr.rtype)}:{rr.rdata}" for rr in record.rr)
    return f"id={record.header.id:#06x} {RCODE.get(record.header.rcode)}{flags} [{rrs}]"


# --- cases: each returns (expected, got) ------------------------------------------------------

def case_a_over_udp(port: int):
    return "id=0x4242 NOERROR [A:10.0.0.1 A:93.184.216.34]", summary(udp(port, "mixed.test"))


def case_a_over_tcp_on_the_same_port(port: int):
    return "id=0x4242 NOERROR [A:10.0.0.1 A:93.184.216.34]", summary(tcp(port, "MIXED.test."))


def case_other_type_is_nodata(port: int):
    return "id=0x4242 NOERROR []", summary(udp(port, "hooks.test", "AAAA"))


def case_unknown_name_is_nxdomain(port: int):
    return "id=0x4242 NXDOMAIN []", summary(udp(port, "unknown.test"))


def case_rcodes(port: int):
    got = [summary(udp(port, n)) for n in ("nx.test", "fail.test", "no.test", "empty.test")]
    return ["id=0x4242 NXDOMAIN []", "id=0x4242 SERVFAIL []", "id=0x4242 REFUSED []", "id=0x4242 NOERROR []"], got


def case_flip_alternates(port: int):
    got = [summary(udp(port, "flip.test")) for _ in range(3)] + [summary(tcp(port, "flip.test"))]
    return [f"id=0x4242 NOERROR [A:127.0.0.{n}]" for n in (1, 2, 1, 2)], got


def case_cname_brings_the_target(port: int):
    got = [summary(udp(port, "alias.test")), summary(udp(port, "outside.test"))]
    return ["id=0x4242 NOERROR [CNAME:hooks.test. A:127.0.0.1]", "id=0x4242 NOERROR [CNAME:elsewhere.example.]"], got


def case_truncated_over_udp_whole_over_tcp(port: int):
    got = [summary(udp(port, "tc.test")), summary(tcp(port, "tc.test"))]
    return ["id=0x4242 NOERROR tc []", "id=0x4242 NOERROR [A:127.0.0.1 A:127.0.0.2]"], got


def case_truncated_tcp_sets_tc_over_tcp_too(port: int):
    """truncated-tcp: TC on the TCP answer, its records kept; UDP untouched unless truncated: is given too."""
    got = [summary(udp(port, "tct.test")), summary(tcp(port, "tct.test")), summary(udp(port, "tcboth.test")),
           summary(tcp(port, "tcboth.test"))]
    return ["id=0x4242 NOERROR [A:127.0.0.1 A:127.0.0.2]", "id=0x4242 NOERROR tc [A:127.0.0.1 A:127.0.0.2]",
            "id=0x4242 NOERROR tc []", "id=0x4242 NOERROR tc [A:127.0.0.1]"], got


def case_malformed_gets_the_query_id(port: int):
    got = [udp(port, "bad.test", qid=0xBEEF), tcp(port, "bad.test", qid=0x0102)]
    return [bytes.fromhex("beef818000010001"), bytes.fromhex("0102818000010001")], got


def case_raw_is_sent_as_is(port: int):
    got = [udp(port, "raw.test"), tcp(port, "raw.test"), tcp_exchange(port, [query("zero.test")], wait=1.0)]
    return [bytes.fromhex("abcdef"), bytes.fromhex("abcdef"), b"\x00\x00"], got


def case_close_closes_tcp_and_drops_udp(port: int):
    return [b"<EOF>", None], [tcp_exchange(port, [query("close.test")]), udp(port, "close.test", wait=0.5)]


def case_silent_never_answers(port: int):
    return [b"", None], [tcp_exchange(port, [query("silent.test")], wait=0.5), udp(port, "silent.test", wait=0.5)]


def case_wrong_id(port: int):
    return "id=0x4243 NOERROR [A:127.0.0.1]", summary(udp(port, "spoof.test", qid=0x4242))


def case_ttl(port: int):
    answer = udp(port, "ttl.test")
    return [7], [rr.ttl for rr in DNSRecord.parse(answer).rr] if answer else None


def case_cut_sends_a_prefix_then_closes(port: int):
    received = tcp_exchange(port, [query("cut.test", qid=0x4242)])
    prefix = received[:-len(b"<EOF>")] if received.endswith(b"<EOF>") else received
    return (5, b"\x42\x42", True), (len(prefix), prefix[2:4], received.endswith(b"<EOF>"))


def case_two_queries_on_one_connection(port: int):
    received = tcp_exchange(port, [query("hooks.test", qid=1), query("nx.test", qid=2)])
    return 2, whole_frames(received)


def case_slow_does_not_block_others(port: int):
    """A slow answer over UDP and one over TCP; a fast one asked after them arrives first."""
    with ThreadPoolExecutor(3) as pool:
        start = time.monotonic()
        slow_udp = pool.submit(lambda: (udp(port, "slow.test"), time.monotonic() - start))
        slow_tcp = pool.submit(lambda: (tcp(port, "slow.test"), time.monotonic() - start))
        time.sleep(0.05)
        fast = pool.submit(lambda: (udp(port, "hooks.test"), time.monotonic() - start))
        (su, su_t), (st, st_t), (f, f_t) = slow_udp.result(), slow_tcp.result(), fast.result()
    ok = su is not None and st and f is not None and f_t < 0.3 and su_t >= 0.4 and st_t >= 0.4
    return True, (ok, f"fast {f_t:.3f} s, slow udp {su_t:.3f} s, slow tcp {st_t:.3f} s")


CASES: dict[str, Callable] = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def check_case(gate: Gate, name: str, fn: Callable, port: int) -> None:
    try:
        expected, got = fn(port)
    except Exception as e:  # a case that crashes is a failure, not a stack trace
        gate.check(name, False, f"{type(e).__name__}: {e}")
        return
    if isinstance(got, tuple) and expected is True:
        gate.check(name, got[0], got[1])
    else:
        gate.expect(name, expected, got)


def check_report(gate: Gate) -> None:
    """Queries are counted per name and per transport, and reported on SIGTERM."""
    with Server.script("dns_stub.py", "--zone", "hooks.test=a:127.0.0.1") as stub:
        for _ in range(3):
            udp(stub.port, "hooks.test")
        tcp(stub.port, "Hooks.Test.")
        udp(stub.port, "other.test")
        report = stub.stop()
    gate.expect("report_counts_per_name_and_transport",
                {"queries": {"hooks.test": {"udp": 3, "tcp": 1}, "other.test": {"udp": 1, "tcp": 0}},
                 "by_transport": {"udp": 4, "tcp": 1}, "total": 5, "max_held": 0}, report)


def check_max_held(gate: Gate) -> None:
    """max_held counts the slow answers held at once: three asked together are 3, three asked one
    after another 1 (the count dns loop-not-stopped reads to see lookups overlap)."""
    import concurrent.futures
    with Server.script("dns_stub.py", "--zone", "slow.test=slow:300:a:127.0.0.9") as stub:
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda _: udp(stub.port, "slow.test"), range(3)))
        together = stub.stop()["max_held"]
    with Server.script("dns_stub.py", "--zone", "slow.test=slow:300:a:127.0.0.9") as stub:
        for _ in range(3):
            udp(stub.port, "slow.test")
        one_by_one = stub.stop()["max_held"]
    gate.expect("max_held_counts_answers_held_together", 3, together)
    gate.expect("max_held_of_answers_one_after_another", 1, one_by_one)


def check_zone_file_and_wildcard(gate: Gate, folder: Path) -> None:
    zone_file = folder / "zones.txt"
    zone_file.write_text("# a comment\nfile.test=a:127.0.0.5\n*=refused\n")
    with Server.script("dns_stub.py", "--zone-file", zone_file) as stub:
        got = [summary(udp(stub.port, "file.test")), summary(udp(stub.port, "anything.else"))]
    gate.expect("zone_file_and_wildcard", ["id=0x4242 NOERROR [A:127.0.0.5]", "id=0x4242 REFUSED []"], got)


def check_bad_usage(gate: Gate) -> None:
    """A bad zone: exit 2 and one line on stderr, never a stack trace."""
    for spec in ("x.test=a:300.1.1.1", "x.test=bogus", "x.test", "x.test=slow:abc:a:1.2.3.4", "x.test=malformed:zz"):
        proc = subprocess.run([PY, STUB, "--zone", spec], capture_output=True, text=True, timeout=30)
        lines = proc.stderr.strip().splitlines()
        gate.check(f"bad_zone {spec}", proc.returncode == 2 and len(lines) == 1,
                   f"exit {proc.returncode}, stderr {proc.stderr.strip()!r}")
    proc = subprocess.run([PY, STUB, "--help"], capture_output=True, text=True, timeout=30)
    gate.check("help_documents_the_grammar", proc.returncode == 0 and "SPEC := MODIFIER* ACTION" in proc.stdout
               and "truncated-tcp:" in proc.stdout,
               f"exit {proc.returncode}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="run only these cases")
    args = parser.parse_args()
    gate = Gate("dns_stub")
    zones = [arg for name, spec in ZONES.items() for arg in ("--zone", f"{name}={spec}")]
    with Server.script("dns_stub.py", *zones) as stub:
        for name, fn in CASES.items():
            if not args.only or name in args.only:
                check_case(gate, name, fn, stub.port)
    if not args.only:
        check_report(gate)
        check_max_held(gate)
        with tempfile.TemporaryDirectory() as folder:
            check_zone_file_and_wildcard(gate, Path(folder))
        check_bad_usage(gate)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())

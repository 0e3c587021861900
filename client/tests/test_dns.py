#!/usr/bin/python3
"""Names end to end (label `dns`): the resolver on the loop, the judge, pinning, rebinding.

The whole gate runs inside a network namespace of its own (`unshare -n`, loopback only), so
an answer with a public address can be judged without a packet ever leaving the machine:
a client that wrongly dialled 93.184.216.34 gets ENETUNREACH there, not the Internet.

    /usr/bin/python3 client/tests/test_dns.py --tlsnb build/client/tlsnb --certs build/certs/out
"""
from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path

from harness import Gate, Server, run_tlsnb, gate_args

INSIDE = "TLSLAB_DNS_NETNS"


def enter_namespace() -> None:
    """Re-runs this script in a new network namespace with only `lo`, up."""
    if os.environ.get(INSIDE) == "1":
        return
    env = {**os.environ, INSIDE: "1"}
    cmd = ["unshare", "-n", "--", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', sys.executable, *sys.argv]
    try:
        proc = subprocess.run(cmd, env=env)
    except FileNotFoundError:
        print("test_dns.py: unshare not found (util-linux)", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(proc.returncode)


def packed(ip: str) -> int:
    return int(ipaddress.IPv4Address(ip))


def free_port() -> int:
    """A port nothing listens on (TCP and UDP), for the 'no name server' row."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    enter_namespace()
    args = gate_args(__doc__)
    certs = Path(args.certs)
    gate = Gate("dns")
    zones = {
        "hooks.test": "a:127.0.0.1",
        "slow.test": "slow:300:a:127.0.0.1",
        "meta.test": "a:169.254.169.254",
        "mixed.test": "a:10.0.0.1,93.184.216.34",
        "mixed2.test": "a:93.184.216.34,10.0.0.1",
        "flip.test": "flip:127.0.0.1,127.0.0.2",
        "gone.test": "nxdomain",
        "fail.test": "servfail",
        "nope.test": "refused",
        "empty.test": "empty",
        "tc.test": "truncated:a:127.0.0.1",
        "wrongid.test": "wrong-id:a:127.0.0.1",
        "garbage.test": "malformed:0000818000010001000000000474657374",
        "closed.test": "close",
        "silent.test": "silent",
    }
    zone_args = [arg for name, spec in zones.items() for arg in ("--zone", f"{name}={spec}")]
    tls = ["--chain", certs / "leaf-ecdsa.pem", "--key", certs / "leaf-ecdsa.key"]
    verify = ["--cafile", certs / "ca.pem", "--name", "hooks.test"]

    with Server.script("dns_stub.py", *zone_args) as stub, \
            Server.script("tls_server.py", *tls, "--host", "127.0.0.1", "--host", "127.0.0.2") as server:
        ns = ["--ns", f"127.0.0.1:{stub.port}"]

        def tlsnb(name: str, *flags):
            return run_tlsnb(args.tlsnb, [*ns, *verify, *flags, f"{name}:{server.port}"])

        # The loop does not stop: 64 lookups of 300 ms through 16 resolver slots are four waves.
        r = tlsnb("slow.test", "--allow-private", "--count", 64, "--parallel", 64, "--deadline-ms", 5000)
        gap, wall = r.summary.get("loop_gap_max_ms", 1e9), r.summary.get("wall_ms", 0)
        gate.check("loop-not-stopped", r.rc == 0 and gap < 50 and 4 * 300 <= wall < 4 * 300 + 2000,
                   f"{r.outcomes()} loop_gap_max_ms={gap:.1f} wall_ms={wall:.0f} (4 waves x 300 ms)")

        # Pinning: one lookup per delivery, each dialled at its own answer, verified by name.
        r = tlsnb("hooks.test", "--allow-private", "--count", 16, "--parallel", 4)
        addrs = {a["addr"] for a in r.attempts}
        gate.check("pinned", r.outcomes() == {"ok/0": 16} and addrs == {f"127.0.0.1:{server.port}"}
                   and r.summary.get("dns_queries") == 16, f"{r.outcomes()} addrs={addrs}")

        # Rebinding: each delivery connects to the address of its own lookup.
        r = tlsnb("flip.test", "--allow-private", "--count", 8, "--parallel", 1)
        seen = [a["addr"].split(":")[0] for a in r.attempts]
        gate.expect("rebinding-each-its-own-answer", ["127.0.0.1", "127.0.0.2"] * 4, seen, f"{r.outcomes()}")

        # UDP first, TCP when the answer was truncated.
        r = tlsnb("tc.test", "--allow-private", "--dns-udp", "--count", 1)
        gate.expect("udp-truncated-retried-over-tcp", ({"ok/0": 1}, 2), (r.outcomes(), r.summary.get("dns_queries")))

    report = server.report
    counts = stub.report.get("queries", {})
    gate.expect("stub-counted-one-query-per-pinned-delivery", 16, _count(counts, "hooks.test"))
    gate.expect("both-addresses-served", {"127.0.0.1": 4 + 16 + 64 + 1, "127.0.0.2": 4},
                report.get("connections_by_addr"))

    # Refused before any connection: a fresh listener behind the names must see nothing.
    with Server.script("dns_stub.py", *zone_args) as stub, Server.script("tls_server.py", *tls) as listener:
        ns = ["--ns", f"127.0.0.1:{stub.port}"]
        refused_rows = [
            ("refused/loopback", "hooks.test", "127.0.0.1"),
            ("refused/metadata", "meta.test", "169.254.169.254"),
            ("refused/private-first", "mixed.test", "10.0.0.1"),
            ("refused/private-last", "mixed2.test", "10.0.0.1"),
        ]
        for case, name, ip in refused_rows:
            r = run_tlsnb(args.tlsnb, [*ns, *verify, "--count", 2, f"{name}:{listener.port}"])
            gate.expect(case, {f"refused/{packed(ip)}": 2}, r.outcomes())
        # Controls: with --allow-private the same answers are dialled (10.0.0.1 is unreachable in here).
        r = run_tlsnb(args.tlsnb, [*ns, *verify, "--allow-private", "--count", 2, f"hooks.test:{listener.port}"])
        gate.expect("refused/control-allow-private-dialled", {"ok/0": 2}, r.outcomes())
        r = run_tlsnb(args.tlsnb, [*ns, *verify, "--allow-private", "--count", 1, f"mixed.test:{listener.port}"])
        gate.expect("refused/control-mixed-dialled", {"connect/101": 1}, r.outcomes(), "ENETUNREACH: dialled 10.0.0.1")

        codes = [
            ("nxdomain", "gone.test", "lookup/-103"),
            ("servfail", "fail.test", "lookup/-102"),
            ("refused-rcode", "nope.test", "lookup/-105"),
            ("no-address", "empty.test", "lookup/-116"),
            ("malformed", "garbage.test", "lookup/-110"),
            ("id-mismatch-over-tcp", "wrongid.test", "lookup/-111"),
            ("closed-without-answer", "closed.test", "lookup/-201"),
        ]
        for case, name, key in codes:
            r = run_tlsnb(args.tlsnb, [*ns, *verify, "--allow-private", "--count", 1, f"{name}:{listener.port}"])
            gate.expect(f"code/{case}", {key: 1}, r.outcomes())
        r = run_tlsnb(args.tlsnb, [*ns, *verify, "--allow-private", "--deadline-ms", 300, "--count", 2,
                                   f"silent.test:{listener.port}"])
        gate.expect("code/deadline-during-lookup", {"deadline/6": 2}, r.outcomes())
        # The lookup's own deadline, shorter than the attempt's: a named code, not the attempt's deadline.
        r = run_tlsnb(args.tlsnb, [*ns, *verify, "--allow-private", "--dns-timeout-ms", 200, "--count", 2,
                                   f"silent.test:{listener.port}"])
        gate.expect("code/lookup-timeout", {"lookup/-203": 2}, r.outcomes(), f"wall_ms={r.summary.get('wall_ms', 0):.0f}")
    gate.expect("refused/listener-saw-only-the-controls", 2, listener.report.get("connections"))

    r = run_tlsnb(args.tlsnb, ["--ns", f"127.0.0.1:{free_port()}", *verify, "--count", 1, "hooks.test:443"])
    gate.expect("code/no-name-server", {"lookup/-200": 1}, r.outcomes())
    return gate.finish()


def _count(queries: dict, name: str) -> int:
    """Queries seen for `name`, whatever shape the stub reports them in ({name: n} or {name: {udp, tcp}})."""
    value = queries.get(name, 0)
    return sum(value.values()) if isinstance(value, dict) else int(value)


if __name__ == "__main__":
    raise SystemExit(main())

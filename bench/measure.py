#!/usr/bin/python3
"""Measurements of the reference client (not a gate): the seed's section 8 tables, here.

Each row is the median of REPS runs with the minimum and maximum beside it; CPU is the
client's own (getrusage, from its JSON summary) divided by its connections. Differences
under about 15% are noise on a shared 2-core machine: quote a figure with its row.

    /usr/bin/python3 -m bench.measure --tlsnb build/client/tlsnb --certs build/certs/out [--reps 5]
        [--only cpu resume requests memory trust]
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

from harness import Server, gate_args, run_tlsnb

SECTIONS = ("cpu", "resume", "requests", "memory", "trust")


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))} to {fmt.format(max(values))})"


def main() -> int:
    args = gate_args(__doc__, lambda p: p.add_argument("--reps", type=int, default=5))
    certs = Path(args.certs)
    sections = set(args.only) or set(SECTIONS)
    unknown = sections - set(SECTIONS)
    if unknown:
        print(f"measure.py: unknown section(s) {sorted(unknown)}; one of {SECTIONS}", file=sys.stderr)
        return 2
    verified = ["--cafile", certs / "ca.pem", "--name", "hooks.test"]

    def cpu_per_conn(port: int, *flags) -> list[float]:
        out = []
        for _ in range(args.reps):
            r = run_tlsnb(args.tlsnb, [*flags, "--deadline-ms", 30000, f"127.0.0.1:{port}"])
            if r.rc != 0:
                raise SystemExit(f"measure.py: a run failed: {r.command()} -> {r.summary.get('by_outcome')}")
            out.append(r.summary["cpu_ms_per_conn"])
        return out

    with Server.script("tls_server.py", "--chain", certs / "leaf-ecdsa.pem", "--key", certs / "leaf-ecdsa.key",
                       "--workers", "2") as server:
        port = server.port
        if "cpu" in sections:
            print("\n## Handshake CPU per connection (ms): 2,000 connections, 64 in flight, handshake only")
            print("| row | bio | fd |\n|---|---|---|")
            rows = [("verified, TLS 1.3", [*verified]), ("unverified, TLS 1.3", ["--no-verify"]),
                    ("verified, TLS 1.2", [*verified, "--tls-max", "1.2"])]
            for name, flags in rows:
                cells = [spread(cpu_per_conn(port, *flags, "--transport", t, "--count", 2000, "--requests", 0))
                         for t in ("bio", "fd")]
                print(f"| {name} | {cells[0]} | {cells[1]} |", flush=True)
        if "resume" in sections:
            print("\n## Resumption (ms CPU per connection): 2,000 connections, one request each, TLS 1.3")
            print("| row | bio | fd |\n|---|---|---|")
            for name, flags in (("full handshake", []), ("--resume", ["--resume"])):
                cells = [spread(cpu_per_conn(port, *verified, *flags, "--transport", t, "--count", 2000))
                         for t in ("bio", "fd")]
                print(f"| {name} | {cells[0]} | {cells[1]} |", flush=True)
        if "requests" in sections:
            print("\n## Requests over an established session: 64 connections x 200 requests")
            print("| body | ms CPU per request (bio) | (fd) |\n|---|---|---|")
            for body in (0, 1000, 60000):
                cells = []
                for t in ("bio", "fd"):
                    # the client's CPU for 64 connections, less 64 handshakes (~0.6 ms each), per request
                    per = [(c * 64 - 0.6 * 64) / 12800 for c in
                           cpu_per_conn(port, *verified, "--transport", t, "--count", 64, "--requests", 200,
                                        "--body", body)]
                    cells.append(spread(per, "{:.4f}"))
                print(f"| {body} | {cells[0]} | {cells[1]} |", flush=True)
        if "memory" in sections:
            print("\n## Memory: RSS (KiB) with N connections held open after the handshake")
            print("| N | bio | fd |\n|---|---|---|")
            for n in (64, 512):
                cells = []
                for t in ("bio", "fd"):
                    rss = []
                    for _ in range(args.reps):
                        r = run_tlsnb(args.tlsnb, [*verified, "--transport", t, "--count", n, "--parallel", n,
                                                   "--requests", 0, "--hold-ms", 500, "--deadline-ms", 10000,
                                                   f"127.0.0.1:{port}"])
                        rss.append(float(r.summary["rss_peak_kib"]))
                    cells.append(spread(rss, "{:.0f}"))
                print(f"| {n} | {cells[0]} | {cells[1]} |", flush=True)
    if "trust" in sections:
        print("\n## Trust store, once per process: cpu_ms of a process making one failed connection")
        print("| trust | cpu_ms |\n|---|---|")
        for name, flags in (("--no-verify", ["--no-verify"]), ("--cafile", ["--cafile", certs / "ca.pem"]),
                            ("--cafile --system-trust", ["--cafile", certs / "ca.pem", "--system-trust"])):
            cpu = [run_tlsnb(args.tlsnb, [*flags, "127.0.0.1:1"]).summary["cpu_ms"] for _ in range(args.reps)]
            print(f"| {name} | {spread(cpu, '{:.1f}')} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/python3
"""The lab's servers side by side: CPU a connection of servers/tls_server.py and servers/bulk_server.py.

A gate row of thousands of connections pays for its server as much as for the client it judges;
this prints what each server costs for the same tlsnb run (full handshakes, then resumed ones with
three requests each), never asserted: it is not a gate.

    /usr/bin/python3 -m bench.servers --tlsnb build/client/tlsnb --certs build/certs/out [--count 2000] [--reps 3]

Method: each server is started with --workers 2 as a child of this process and stopped with
SIGTERM; its CPU (user + system, its workers included: the parent waits for them) is this process's
RUSAGE_CHILDREN growth over its life less the client's own (tlsnb's summary cpu_ms: the client is a
child too). Per cell the median of --reps runs, with the minimum and maximum beside it.
"""
from __future__ import annotations

import argparse
import json
import resource
import signal
import statistics
import subprocess
import sys
from pathlib import Path

from harness import PY, SERVERS

SERVERS_MEASURED = ("tls_server.py", "bulk_server.py")
MODES = {"full": [], "resumed": ["--resume", "--requests", "3"]}


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_run(server: str, mode: str, ns) -> tuple[float, float]:
    """(server ms a connection, client ms a connection) of one run."""
    before = children_cpu()
    proc = subprocess.Popen([PY, str(SERVERS / server), "--workers", "2", "--chain", f"{ns.certs}/leaf-ecdsa.pem",
                             "--key", f"{ns.certs}/leaf-ecdsa.key"], stdout=subprocess.PIPE, text=True)
    try:
        ready = proc.stdout.readline().split()
        if ready[:1] != ["READY"]:
            raise SystemExit(f"bench.servers: {server} did not say READY: {ready}")
        run = subprocess.run([ns.tlsnb, "--json", "--count", str(ns.count), "--parallel", "64", "--cafile",
                              f"{ns.certs}/ca.pem", "--name", "hooks.test", *MODES[mode], f"127.0.0.1:{ready[1]}"],
                             capture_output=True, text=True, timeout=300)
        summary = json.loads(run.stdout.splitlines()[-1])
        if summary.get("ok") != ns.count:
            raise SystemExit(f"bench.servers: {server} {mode}: {summary.get('by_outcome')}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    spent = children_cpu() - before
    client = summary["cpu_ms"] / 1000
    return 1000 * (spent - client) / ns.count, 1000 * client / ns.count


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tlsnb", required=True)
    p.add_argument("--certs", required=True)
    p.add_argument("--count", type=int, default=2000)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--work", help="accepted for bench_target's sake: this bench writes nothing, it prints")
    ns = p.parse_args()
    if not Path(ns.tlsnb).is_file() or not Path(ns.certs, "ca.pem").is_file():
        print("bench.servers: --tlsnb or --certs missing (build the tree first)", file=sys.stderr)
        return 2
    print(f"| server | mode | server CPU ms/conn median (min-max) | tlsnb CPU ms/conn | connections |")
    print("|---|---|---|---|---|")
    for mode in MODES:
        for server in SERVERS_MEASURED:
            runs = [one_run(server, mode, ns) for _ in range(ns.reps)]
            s = [r[0] for r in runs]
            print(f"| {server} | {mode} | {statistics.median(s):.3f} ({min(s):.3f}-{max(s):.3f}) | "
                  f"{statistics.median(r[1] for r in runs):.3f} | {ns.count} x {ns.reps} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Steady-state allocations per request on an established connection (seed 003's claim, measured).

ztls claims its own code never allocates once a connection is up. This asks the same of tlsnb
and the C clients under test: one connection, 1 request, then 17 requests (keep-alive), each
run under the heap shim; the difference over 16 is what one more request costs in allocation
calls and in bytes handed out (usable size). Response bodies of 0 and 60,000 bytes. tlsnb on
both transports, and tlsnb_keep_buffers (the same client without SSL_MODE_RELEASE_BUFFERS:
OpenSSL then keeps each connection's record buffers instead of freeing them when idle).
Printed, never asserted: this is not a gate.

    cmake --build build --target bench_allocs      # or:
    /usr/bin/python3 -m bench.allocs --build build [--certs build/certs/out] [--reps 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from harness import run_client, tls_server
from harness.clients import ClientError, find_client
from harness.rows import bad_input
from harness.shims import HEAP_TAG, client_args, heap_env, read_report

BODIES = (0, 60000)
FEW, MANY = 1, 17


def configurations(build: Path) -> list[tuple[str, list[str], str, list[str]]]:
    """(label, command, program, extra args) for each client measured; a client not built is named and skipped."""
    tlsnb = str(build / "client" / "tlsnb")
    keep = str(build / "client" / "tlsnb_keep_buffers")
    rows = []
    for transport in ("bio", "fd"):
        rows.append((f"tlsnb {transport} (RELEASE_BUFFERS)", [tlsnb], "tlsnb", ["--transport", transport]))
        rows.append((f"tlsnb {transport} (buffers kept)", [keep], "tlsnb_keep_buffers", ["--transport", transport]))
    # the C and C++ clients: the heap shim sees every allocation of theirs (not so of a runtime's heap)
    for name, transports, note in (("curl", [None], ""), ("gnutls", ["bio", "fd"], ""),
                                   ("mbedtls", ["bio", "fd"], " (TLS 1.2: it has no 1.3)"),
                                   ("wolfssl", ["bio", "fd"], ""), ("asio", [None], "")):
        try:
            profile = find_client(name, build)
            profile.check_installed()
        except ClientError as e:
            print(f"client {name}: not installed: {e}: skipped", flush=True)
            continue
        for t in transports:
            rows.append((f"{name} {t or ''}".strip() + note, profile.command, profile.program,
                         ["--transport", t] if t else []))
    built = []
    for row in rows:
        if Path(row[1][0]).exists():
            built.append(row)
        else:
            print(f"{row[0]}: {row[1][0]} not built: skipped", flush=True)
    return built


def measure(ns, command: list[str], program: str, extra: list[str], port: int, requests: int) -> dict:
    path = Path(ns.work) / f"allocs-{program}-{requests}.json"
    args = client_args(ns.certs, port, *extra, "--count", 1, "--requests", requests, "--deadline-ms", 10000)
    run = run_client(command, args, env=heap_env(program, path), preload=ns.heap_shim, timeout=60)
    rep = read_report(path, HEAP_TAG)
    path.unlink(missing_ok=True)
    if run.outcomes() != {"ok/0": 1} or rep is None:
        raise RuntimeError(f"{' '.join(run.argv)}: {run.outcomes()} {run.problem or run.stderr.strip()[-200:]}")
    return rep


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", type=Path, default=Path("build"), help="the build tree (default ./build)")
    p.add_argument("--certs", help="certificate folder (default BUILD/certs/out)")
    p.add_argument("--work", help="scratch folder (default BUILD/work/bench)")
    p.add_argument("--heap-shim", help="libtlslab_heap.so (default BUILD/shims/libtlslab_heap.so)")
    p.add_argument("--reps", type=int, default=3, help="runs of each pair; the median is printed (default 3)")
    ns = p.parse_args()
    ns.certs = ns.certs or str(ns.build / "certs" / "out")
    ns.work = ns.work or str(ns.build / "work" / "bench")
    ns.heap_shim = ns.heap_shim or str(ns.build / "shims" / "libtlslab_heap.so")
    for what, path in (("--heap-shim", ns.heap_shim), ("--certs", ns.certs)):
        if not Path(path).exists():
            bad_input("allocs.py", f"{what} {path}: not found (build the targets first)")
    if ns.reps < 1:
        bad_input("allocs.py", "--reps must be at least 1")
    Path(ns.work).mkdir(parents=True, exist_ok=True)
    clients = configurations(ns.build)
    print(f"allocations per request on an established connection: (run of {MANY} requests - run of {FEW}) / "
          f"{MANY - FEW}, median of {ns.reps} pairs; TLS 1.3, P-256, one connection", flush=True)
    print(f"| client | body | allocations / request | bytes / request | allocations, whole run of {FEW} |")
    print("|---|---|---|---|---|")
    for body in BODIES:
        with tls_server(ns.certs, "leaf-ecdsa", "normal", "--body-size", body) as server:
            for label, command, program, extra in clients:
                calls, sizes, whole = [], [], []
                try:
                    for _ in range(ns.reps):
                        few = measure(ns, command, program, extra, server.port, FEW)
                        many = measure(ns, command, program, extra, server.port, MANY)
                        calls.append((many["allocations"] - few["allocations"]) / (MANY - FEW))
                        sizes.append((many["allocated_bytes"] - few["allocated_bytes"]) / (MANY - FEW))
                        whole.append(few["allocations"])
                except RuntimeError as e:
                    print(f"| {label} | {body} | failed: {e} | | |", flush=True)
                    continue
                print(f"| {label} | {body:,} | {statistics.median(calls):.1f} | {statistics.median(sizes):,.0f} | "
                      f"{statistics.median(whole):,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

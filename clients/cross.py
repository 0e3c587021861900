#!/usr/bin/python3
"""One client under test, alone: every crossed gate on it (`./run_all.sh --client PROFILE`).

PROFILE is a room of clients/ (`go`) or the path of any profile.toml (clients/README.md): a
user's own client needs its profile and nothing else. The crossed gates: the certificate
matrix (every row), the fault rows, the client rows, the leak rows (success and failure
paths, 200 then 2,000 attempts, no valgrind), the names rows when the client has --ns, and NIST's
PKITS (every test, judged by NIST's verdicts).
A gate whose record (LABEL.toml beside the profile) does not exist yet is first run with
--update: it observes the client and records each difference from the reference, without a
reason; then every gate runs on its record, so a difference whose kind and why are not
written yet fails, by name. One summary line a gate, then the total; exit 1 on any failure.

    /usr/bin/python3 -m clients.cross --client go --build-dir build
    /usr/bin/python3 -m clients.cross --client ~/myclient/profile.toml --build-dir build [--only matrix faults]
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from harness import ROOT, bad_input
from harness.clients import ClientError, find_client

# label -> (its runner, a module of the tree, its extra flags, does it keep a record of differences)
GATES = {
    "matrix": ("matrix.run_matrix", [], True),
    "faults": ("faults.faults_gate", ["--io-shim", "{build}/shims/libtlslab_io.so", "--proxy", "{build}/proxy/tlslab-proxy"],
               True),
    "client": ("client.tests.client_gate", [], True),
    "leaks": ("leaks.leaks_gate", ["--heap-shim", "{build}/shims/libtlslab_heap.so", "--counts", "200,2000",
                                   "--no-valgrind", "--only", "Success", "ExpiredCertificate"], False),
    "dns": ("dns.dns_gate", ["--io-shim", "{build}/shims/libtlslab_io.so"], True),
    "hostile": ("hostile.hostile_gate", ["--io-shim", "{build}/shims/libtlslab_io.so"], True),
    "pkits": ("pkits.pkits_gate", [], True),
}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--client", required=True, help="a room of clients/ or a profile.toml")
    p.add_argument("--build-dir", type=Path, default=ROOT / "build", help="the lab's build tree")
    p.add_argument("--only", nargs="*", choices=list(GATES), default=[], help="some gates only")
    ns = p.parse_args()
    build = ns.build_dir.resolve()
    try:
        client = find_client(ns.client, build)
        client.check_installed()
    except ClientError as e:
        bad_input("cross.py", e)
    tlsnb = build / "client" / "tlsnb"
    if not os.access(tlsnb, os.X_OK):
        bad_input("cross.py", f"no reference client at {tlsnb} (./run_all.sh --setup-only builds it)")
    common = ["--tlsnb", str(tlsnb), "--client", ns.client, "--build-dir", str(build),
              "--certs", str(build / "certs" / "out"), "--work", str(build / "work" / f"client-{client.name}")]
    results = []
    for label, (module, extra, recorded) in GATES.items():
        if ns.only and label not in ns.only:
            continue
        if label == "dns" and not client.has("--ns"):
            results.append((label, "SKIP", 0.0, f"{client.name} has no --ns: the names rows ask for it"))
            continue
        argv = [sys.executable, "-m", module, *common, *[a.replace("{build}", str(build)) for a in extra]]
        record = client.room / f"{label}.toml"
        if recorded and not record.is_file():
            print(f"== {client.name} {label}: no record at {record} yet: observing (--update)", flush=True)
            subprocess.run([*argv, "--update"], cwd=ROOT)
            print(f"== {client.name} {label}: recorded; write kind (bug, policy, limit) and why for each "
                  f"difference in {record}", flush=True)
        print(f"== {client.name} {label}", flush=True)
        start = time.monotonic()
        rc = subprocess.run(argv, cwd=ROOT).returncode
        results.append((label, "PASS" if rc == 0 else "FAIL", time.monotonic() - start,
                        "" if rc == 0 else f"rerun: cd {ROOT} && {' '.join(argv)}"))
    print(f"\n{client.name}: the crossed gates")
    for label, verdict, seconds, note in results:
        print(f"  {label:<7} {verdict:<5} {seconds:6.1f} s  {note}")
    failed = sum(v == "FAIL" for _, v, _, _ in results)
    print(f"cross.py: {client.name}: {len(results) - failed} passed, {failed} failed; the matrix page: "
          f"/usr/bin/python3 -m matrix.results --work {build / 'work' / f'client-{client.name}'} --out .")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

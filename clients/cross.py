#!/usr/bin/python3
"""One client under test, alone: every crossed gate on it (`./run_all.sh --client PROFILE`).

PROFILE is a room of clients/ (`go`) or the path of any profile.toml (clients/README.md): a
user's own client needs its profile and nothing else. Today the crossed gate is the
certificate matrix, every row (matrix/run_matrix.py --client). The first run on a client
that has no record yet (a matrix.toml beside its profile) observes it and writes one with
--update, each difference from the reference without a reason; every run then gates on the
record, so a difference whose kind and why are not written yet fails, by name.

    /usr/bin/python3 clients/cross.py --client go --build-dir build
    /usr/bin/python3 clients/cross.py --client ~/myclient/profile.toml --build-dir build
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

from harness import ROOT, bad_input
from harness.clients import ClientError, find_client


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--client", required=True, help="a room of clients/ or a profile.toml")
    p.add_argument("--build-dir", type=Path, default=ROOT / "build", help="the lab's build tree")
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
    matrix = [sys.executable, str(ROOT / "matrix" / "run_matrix.py"), "--tlsnb", str(tlsnb), "--client", ns.client,
              "--build-dir", str(build), "--certs", str(build / "certs" / "out"),
              "--work", str(build / "work" / "matrix")]
    record = client.room / "matrix.toml"
    if not record.is_file():
        print(f"== {client.name}: no record at {record} yet: observing every row (--update)", flush=True)
        subprocess.run([*matrix, "--update"])
        print(f"== {client.name}: recorded; write kind (bug, policy, limit) and why for each difference in {record}",
              flush=True)
    print(f"== {client.name}: the matrix as a gate", flush=True)
    rc = subprocess.run(matrix).returncode
    print(f"cross.py: {client.name}: matrix {'passed' if rc == 0 else 'failed'}; the page: "
          f"matrix/results.py --work {build / 'work' / 'matrix'} --out {build / 'work' / 'matrix'}")
    return rc


if __name__ == "__main__":
    sys.exit(main())

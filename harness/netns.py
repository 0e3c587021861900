"""A gate that must not reach any network runs itself again inside a network namespace of its own.

    enter_namespace("dns_gate.py")   # first thing in main(): re-runs the script under `unshare -n`

Inside, only `lo` exists (brought up): an answer with a public address can be dialled without a
packet leaving the machine (ENETUNREACH, not the Internet). Needs root (CAP_SYS_ADMIN).
"""
from __future__ import annotations

import os
import subprocess
import sys

INSIDE = "TLSLAB_NETNS"


def enter_namespace(program: str) -> None:
    """Returns inside the namespace; outside, runs this script again there and exits with its status."""
    if os.environ.get(INSIDE) == "1":
        return
    env = {**os.environ, INSIDE: "1"}
    cmd = ["unshare", "-n", "--", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', sys.executable, *sys.argv]
    try:
        proc = subprocess.run(cmd, env=env)
    except FileNotFoundError:
        print(f"{program}: unshare not found (util-linux)", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(proc.returncode)

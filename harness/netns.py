"""A gate that must not reach any network runs itself again inside a network namespace of its own.

    enter_namespace("dns_gate.py")   # first thing in main(): re-runs the script under `unshare -n`

Inside, only `lo` exists (brought up): an answer with a public address can be dialled without a
packet leaving the machine (ENETUNREACH, not the Internet). Needs root (CAP_SYS_ADMIN).
Black holes besides: 2001:db8:bad::/64 and 198.51.100.0/24 (TEST-NET-2) lie on a veth pair with
no one at their other addresses, so a connect there stays pending (its neighbour is never found)
until the kernel gives up, then EHOSTUNREACH: ~3 s for IPv6 (3 neighbour solicitations) and ~4.4 s
for IPv4 (5 ARP probes, set here, for a margin over IPv6's): the IPv6 that has not connected when
Happy Eyeballs' 250 ms head start is over, both families pending when the deadline fires, and both
failing in a fixed order (dns/dns.toml). The kernel keeps resolving a neighbour after the dial that
asked for it is gone, and a later dial joins that resolution and fails early: a row that times the
give-up dials addresses no other row dials (race-both-unreachable's .7 and ::7).
"""
from __future__ import annotations

import os
import subprocess
import sys

from .layout import python_command

INSIDE = "TLSLAB_NETNS"


def enter_namespace(program: str) -> None:
    """Returns inside the namespace; outside, runs this script again there and exits with its status."""
    if os.environ.get(INSIDE) == "1":
        return
    env = {**os.environ, INSIDE: "1"}
    blackhole = ("ip link add tlslab-bh type veth peer name tlslab-bh1 && ip link set tlslab-bh up && "
                 "ip link set tlslab-bh1 up && ip -6 addr add 2001:db8:bad::2/64 dev tlslab-bh nodad && "
                 "ip addr add 198.51.100.2/24 dev tlslab-bh && "
                 # IPv4 gives up after 5 ARP probes (~4.4 s), IPv6 after 3 solicitations (~3 s): a fixed order
                 "echo 5 > /proc/sys/net/ipv4/neigh/tlslab-bh/mcast_solicit")
    cmd = ["unshare", "-n", "--", "sh", "-c", f'ip link set lo up && {blackhole} && exec "$0" "$@"',
           *python_command(sys.argv[0]), *sys.argv[1:]]
    try:
        proc = subprocess.run(cmd, env=env)
    except FileNotFoundError:
        print(f"{program}: unshare not found (util-linux)", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(proc.returncode)

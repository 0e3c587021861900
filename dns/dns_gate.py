#!/usr/bin/python3
"""Names end to end (label dns): dns.toml, the resolver on the loop, the judge, pinning, rebinding.

The whole gate runs inside a network namespace of its own (`unshare -n`, loopback only), so
an answer with a public address can be judged without a packet ever leaving the machine:
a client that wrongly dialled 93.184.216.34 gets ENETUNREACH there, not the Internet.

    /usr/bin/python3 -m dns.dns_gate --tlsnb build/client/tlsnb --certs build/certs/out \
        --io-shim build/shims/libtlslab_io.so [--only CASE] [--list]   # the code/query-* rows need the shim
"""
import sys
from pathlib import Path

from harness.cases import gate_main
from harness.netns import enter_namespace

if __name__ == "__main__":
    sys.exit(gate_main("dns", __doc__, Path(__file__).resolve().parent / "dns.toml",
                       before=lambda ns: enter_namespace("dns_gate.py")))

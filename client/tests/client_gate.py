#!/usr/bin/python3
"""The reference client end to end (label client): client.toml, every case with transports crossed
over both. Concurrency on one thread, 2,000 connections through 64 slots, resumption, the
certificate failures with their controls, the SIGPIPE rows, truncation, chunked responses, the
stale error queue across connections, and bad input (exit 2, no connection).

    /usr/bin/python3 -m client.tests.client_gate --tlsnb build/client/tlsnb --certs build/certs/out [--only CASE] [--list]
"""
import sys
from pathlib import Path

from harness.cases import gate_main

if __name__ == "__main__":
    sys.exit(gate_main("client", __doc__, Path(__file__).resolve().parent / "client.toml"))

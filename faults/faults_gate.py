#!/usr/bin/python3
"""Fault gate: partial, refused and failing I/O, silent and closing peers, SIGPIPE (label faults).

Each row of faults.toml (harness/cases.py's keys) runs the lab's peers, tlsnb with its
arguments and the I/O shim with its settings, and holds what came out to the row's expectation,
once per transport.

    /usr/bin/python3 -m faults.faults_gate --tlsnb build/client/tlsnb \\
        --io-shim build/shims/libtlslab_io.so [--seed S] [--only PartialIo/bio ...] [--list]
"""
import sys
from pathlib import Path

from harness.cases import gate_main

if __name__ == "__main__":
    sys.exit(gate_main("faults", __doc__, Path(__file__).resolve().parent / "faults.toml"))

"""The flags every client gate shares, checked before anything runs (one line, exit 2).

    ns = gate_args(__doc__, extra=lambda p: p.add_argument("--io-shim", required=True))
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def default_work() -> str:
    """The scratch folder of this gate: TLSLAB_WORK/TEST under CTest (TLSLAB_GATE_TEST names the test),
    so that gates running side by side never share a file (two fault gates both writing
    io-shim-PartialIo-any.json, two leak gates the same heap report); else TLSLAB_WORK itself."""
    work = os.environ.get("TLSLAB_WORK", "/tmp/tlslab-work")
    test = os.environ.get("TLSLAB_GATE_TEST")
    return str(Path(work) / test) if test else work


def gate_args(description: str, extra=None, argv=None) -> argparse.Namespace:
    """--tlsnb, --certs, --work, --only CASE..., --list; TLSLAB_CERTS/TLSLAB_WORK as defaults."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tlsnb", required=True, help="path to the tlsnb binary")
    p.add_argument("--certs", default=os.environ.get("TLSLAB_CERTS"), help="generated certificate folder")
    p.add_argument("--work", default=default_work(), help="scratch folder (default: TLSLAB_WORK, a folder a test under CTest)")
    p.add_argument("--only", nargs="*", default=[], help="run only the named cases")
    p.add_argument("--list", action="store_true", help="print the case names, run nothing")
    if extra:
        extra(p)
    ns = p.parse_args(argv)
    if ns.list:
        return ns
    if not ns.certs or not Path(ns.certs, "manifest.json").is_file():
        print(f"{p.prog}: no certificate folder with manifest.json at {ns.certs!r} (build the 'certs' target)",
              file=sys.stderr)
        sys.exit(2)
    if not os.access(ns.tlsnb, os.X_OK):
        print(f"{p.prog}: tlsnb not executable at {ns.tlsnb!r}", file=sys.stderr)
        sys.exit(2)
    Path(ns.work).mkdir(parents=True, exist_ok=True)
    return ns

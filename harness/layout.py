"""Where the lab's pieces are, and how one of its scripts is run: a module of the folder it lives in,
from the repository root (`/usr/bin/python3 -m faults.faults_gate --help`), so that every script
imports the lab library as the package `harness` with no link and no PYTHONPATH."""
from __future__ import annotations

import os
import sys
from pathlib import Path

# The tree the lab's data is read from: this package's parent, or TLSLAB_TREE where the package is a copy
# (mutants/run_mutants.py runs a mutated copy of harness/ alone, against the tree's rows and headers).
ROOT = Path(os.environ.get("TLSLAB_TREE") or Path(__file__).resolve().parent.parent).resolve()
SERVERS = ROOT / "servers"
# the case gates' rows (harness/cases.py), by the label each gate records under (clients/NAME/LABEL.toml)
CASE_FILES = {"client": ROOT / "client/tests/client.toml", "faults": ROOT / "faults/faults.toml",
              "hostile": ROOT / "hostile/hostile.toml", "dns": ROOT / "dns/dns.toml"}


def python_command(script) -> list[str]:
    """The interpreter and `-m folder.module` for a script of the tree (a script outside it: its path)."""
    path = Path(script).resolve()
    try:
        parts = path.relative_to(ROOT).with_suffix("").parts
    except ValueError:
        return [sys.executable, str(path)]
    return [sys.executable, "-m", ".".join(parts)]

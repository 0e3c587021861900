"""Where the lab's pieces are, and how one of its scripts is run: a module of the folder it lives in,
from the repository root (`/usr/bin/python3 -m faults.faults_gate --help`), so that every script
imports the lab library as the package `harness` with no link and no PYTHONPATH."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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

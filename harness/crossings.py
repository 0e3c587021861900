"""Which crossings the default gate runs whole: those whose inputs changed since their last green whole run.

A crossing is one gate's rows asked of one client (`matrix:go`, `hostile:curl`, `pkits:tlsnb`). The
default gate samples most of them; a sample cannot find a stale record it did not draw. So every
crossing's whole green run writes, to harness/last_full.toml, the digest of its inputs (the client's
room: adapter, profile, records; the gate's row files; for the reference, client/ too), and the
default gate runs whole every crossing whose inputs no longer have that digest. A change to an
adapter, a profile, a record or a row file is then judged on every row it can reach, in the first
run after it; a crossing nobody touched keeps its sample (another gate's record in the same room,
or its README, is not this crossing's input). `./run_all.sh --full` runs them all whole
and leaves the file written for a commit.

    /usr/bin/python3 -m harness.crossings            # every crossing: whole or sampled in the next gate, and why
"""
from __future__ import annotations

import argparse
import datetime
import fcntl
import hashlib
import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Optional

from .gate import git_output
from .layout import ROOT

RECORD = ROOT / "harness" / "last_full.toml"
# A gate's own inputs beside the client's room: its rows, and what makes the world its rows describe
# (certs/pki.toml makes the matrix's certificates; the peers; the I/O shim that injects the faults and
# counts the loop; the proxy that cuts the wire).
GATE_INPUTS = {
    "matrix": ["matrix/rows.toml", "certs/pki.toml", "servers/tls_server.py"],   # the lab cells' server
    "hostile": ["hostile/hostile.toml", "hostile/peer.py", "hostile/bugs.py", "hostile/scenarios.py",
                "hostile/tls13.py", "hostile/tls12.py", "shims/io_shim.c"],
    "pkits": ["pkits/tests.tsv"],
    "faults": ["faults/faults.toml", "servers/tls_server.py", "shims/io_shim.c", "proxy"],
    "leaks": ["leaks/leaks.toml", "servers/tls_server.py", "servers/bulk_server.py", "shims/heap_shim.c",
              "shims/heap_live.c"],
}
REFERENCE = "tlsnb"
# A room's records, one file a gate (harness/record.py): a crossing rests on its own gate's, not on the others'.
RECORDS = ("client", "faults", "hostile", "dns", "leaks", "matrix", "pkits", "alloc_sweep_known", "bench")


def inputs(gate: str, client: str, root: Path = ROOT) -> list[str]:
    """The paths, relative to the root, whose content a crossing's verdict rests on: the room, the
    gate's own inputs, and a file of the tree the profile's command runs from outside the room
    (uvloop's adapter is clients/asyncio/tlsnb_asyncio.py)."""
    paths = [f"clients/{client}", *GATE_INPUTS[gate], *command_files(client, root), *library_files(client, root)]
    return paths + (["client"] if client == REFERENCE else [])


def library_files(client: str, root: Path = ROOT) -> list[str]:
    """What a C++ adapter (its room's CMakeLists.txt calls tlslab_adapter) links from outside its room:
    clients/contract, and client/'s tlsnb_base that the contract links (TLSNB_BASE_SOURCES in
    client/CMakeLists.txt, each source with its header)."""
    cmake = root / "clients" / client / "CMakeLists.txt"
    if client == REFERENCE or not cmake.is_file() or "tlslab_adapter(" not in cmake.read_text():
        return []
    found = re.search(r"set\(TLSNB_BASE_SOURCES\s([^)]*)\)", (root / "client" / "CMakeLists.txt").read_text())
    sources = found[1].split() if found else []
    base = [f"client/{stem}{ext}" for src in sources for stem in [src.rsplit(".", 1)[0]] for ext in (".cc", ".h")
            if (root / "client" / f"{stem}{ext}").is_file()]
    return ["clients/contract", *base]


def command_files(client: str, root: Path = ROOT) -> list[str]:
    """The {root}/... files a room's profile.toml runs (its command) that lie outside the room."""
    profile = root / "clients" / client / "profile.toml"
    if not profile.is_file():
        return []
    command = tomllib.loads(profile.read_text()).get("command", [])
    files = [w.removeprefix("{root}/") for w in command if isinstance(w, str) and w.startswith("{root}/")]
    return sorted({f for f in files if not f.startswith(f"clients/{client}/") and (root / f).is_file()})


def not_an_input(path: Path, gate: str) -> bool:
    """A file of a room that no verdict of GATE's crossing reads: another gate's record, the room's README."""
    return path.name == "README.md" or (path.suffix == ".toml" and path.stem in RECORDS and path.stem != gate)


def digest(paths: list[str], root: Path = ROOT, gate: str = "") -> str:
    """The hash of the paths and contents of every file under PATHS (caches and bytecode left out, and
    with GATE the room's files its crossing does not read)."""
    h = hashlib.sha256()
    for f in sorted(f for rel in paths for f in files_under(root / rel) if not (gate and not_an_input(f, gate))):
        name = f.relative_to(root).as_posix().encode()
        body = f.read_bytes()
        h.update(b"%d:%s%d:" % (len(name), name, len(body)) + body)
    return h.hexdigest()[:16]


def files_under(top: Path) -> list[Path]:
    if top.is_file():
        return [top]
    found = []
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found += [Path(folder) / f for f in files if not f.endswith(".pyc")]
    return found


def tree() -> str:
    """The commit the run was made on (and + where the work tree differs), for a person reading the record."""
    head = git_output(ROOT, "rev-parse", "--short", "HEAD")
    dirty = git_output(ROOT, "status", "--porcelain", "--untracked-files=no")
    return (head.decode().strip() if head else "?") + ("+" if dirty and dirty.strip() else "")


def load(path: Path = RECORD) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        return {}


def room_of(client: Optional[str]) -> Optional[str]:
    """The room a gate's --client names (a crossing of the lab's own), or None: the reference's own
    gate, or a profile of someone else's (whose inputs the lab does not keep)."""
    if client and "/" not in client and not client.endswith(".toml") and (ROOT / "clients" / client / "profile.toml").is_file():
        return client
    return None


def key(gate: str, client: str) -> str:
    return f"{gate}:{client}"


def whole_reason(gate: str, client: str, root: Path = ROOT) -> Optional[str]:
    """Why the default gate runs this crossing whole (its inputs changed, or it never ran whole green),
    or None: its inputs are as at its last green whole run, and a sample stands for it."""
    if os.environ.get("TLSLAB_FULL") == "1":
        return "asked (--full)"
    path = root / RECORD.relative_to(ROOT)
    entry = load(path).get("crossing", {}).get(key(gate, client))
    now = digest(inputs(gate, client, root), root, gate)
    if entry is None:
        return f"no green whole run recorded in {path.relative_to(root)}"
    if entry.get("inputs") != now:
        return (f"its inputs ({' '.join(inputs(gate, client, root))}) changed since its last green whole run "
                f"({entry.get('date', '?')}, tree {entry.get('tree', '?')})")
    return None


def record_green(gate: str, client: str, figures: str, root: Path = ROOT) -> None:
    """A whole run of the crossing held every row: its inputs' digest, the date, the tree and its figures."""
    path = root / RECORD.relative_to(ROOT)
    now = digest(inputs(gate, client, root), root, gate)
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)        # gates run side by side: one writer at a time
        f.seek(0)
        data = tomllib.loads(f.read())
        if data.get("crossing", {}).get(key(gate, client), {}).get("inputs") == now:
            return   # its inputs' last green whole run is recorded already: the file stays as committed
        data.setdefault("crossing", {})[key(gate, client)] = {
            "inputs": now, "date": datetime.date.today().isoformat(), "tree": tree(), "figures": figures}
        f.seek(0)
        f.truncate()
        f.write(render(data))


def render(data: dict) -> str:
    lines = ["# Written by the crossings' whole green runs (harness/crossings.py): the digest of each one's",
             "# inputs then. The default gate runs whole every crossing whose inputs differ now. Commit it after",
             "# `./run_all.sh --full` (or a whole run of one crossing) is green.", ""]
    for name, entry in sorted(data.get("crossing", {}).items()):
        lines.append(f'[crossing."{name}"]')
        for k in ("inputs", "date", "tree", "figures"):
            value = str(entry.get(k, "")).replace("\\", "\\\\").replace('"', '\\"')
            lines.append(f'{k} = "{value}"')
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", nargs="*", help="the clients (default: every room with a profile)")
    args = p.parse_args()
    clients = args.clients or sorted(x.parent.name for x in (ROOT / "clients").glob("*/profile.toml"))
    for gate in GATE_INPUTS:
        for client in clients:
            if gate != "pkits" and client == REFERENCE:
                continue
            why = whole_reason(gate, client)
            print(f"{key(gate, client):<22} {'whole: ' + why if why else 'sampled: inputs as at its last green whole run'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

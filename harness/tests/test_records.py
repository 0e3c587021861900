"""The records judged without a run: every client room's recorded differences against the gates' rows.

A record (harness/record.py) is read only when its gate runs the case it names, so a stale entry
waits for a run (and, in a sampled gate, for a draw) to go red. This unit loads every record file of
every room of clients/ ({client,faults,hostile,dns,leaks,matrix,pkits}.toml, those that exist) with
the loader its gate uses, and holds each entry to the gate's rows, naming file:line:

    loads     the gate's loader takes the file alone (keys, kinds, gots the gate can judge, no case twice,
              every `reason` a key of the room's reasons.toml)
    cases     held to its gate's cases and rows (harness/record.py refuses each): every name a case of its
              gate (for the case gates ROW, or ROW/bio and ROW/fd for a client with --transport, crossed as
              the gate crosses them; matrix/rows.toml's rows; pkits/tests.tsv's tests), every glob matching
              one, no entry that records nothing (every case it matches held to the same expectation without
              it: the row's terms, the matrix row's every cell), no `without` term the row lacks
    records   PKITS: no got that is NIST's verdict; leaks: a got its case can record
    cells     matrix: a table's cells among the row's versions and servers
    asked     no entry for a case the gate never asks this client, whose entry is never read: one its
              profile's [disabled] disables (a `skip` the profile already says), a shim row for a client
              whose I/O no shim sees, a PKITS test whose settings it cannot be given
    read      a record file some gate reads (the reference's case and matrix records, leaks.toml: none)
    used      reasons.toml: every reason it holds is named by some entry of the room's records
    page      the results page (clients/results_page.py) reads the file

What it cannot know without a run: whether the adapter can still produce a got (an `exit 2` or a
`skip` its code no longer returns): only the gate's run says so.

    /usr/bin/python3 -m harness.tests.test_records [--list] [--only CASE ...] [--clients DIR]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from ..gate import Gate
from ..layout import ROOT
from ..outcomes import OutcomeNames, UnknownOutcome
from ..record import Record
from ..record_loaders import CASE_GATES, Judge, Rows, case_gate, leaks_gate, matrix_gate, pkits_gate, rel, rooms
from ..rows import RowError

UNREAD: tuple[str, ...] = ()   # a room's LABEL.toml no gate reads


def reasons_used(room: Path, records: list[Callable[[], Record]]) -> Callable[[], tuple[bool, str]]:
    """reasons.toml: every reason it holds is named by an entry of the room's records (none left over)."""
    def run() -> tuple[bool, str]:
        from ..rows import load_table
        path = room / "reasons.toml"
        try:
            held = set(load_table(path).get("reason", {}))
            named = {d.reason for load in records for d in load().all if d.reason}
        except RowError as e:
            return False, str(e)
        unused = sorted(held - named)
        return not unused, (f"{rel(str(path))}: {', '.join(unused)}: named by no entry of {room.name}'s records"
                            if unused else f"{len(held)} reasons, each named")
    return run


# ---- the cases ------------------------------------------------------------------------------------

def all_cases(clients: Path, names: OutcomeNames) -> list[tuple[str, Callable[[], tuple[bool, str]]]]:
    """(case id, thunk) for every check of every record file that exists."""
    rows = Rows(names)
    out: list[tuple[str, Callable[[], tuple[bool, str]]]] = []
    for profile in rooms(clients):
        room = profile.room
        gates = {"pkits": pkits_gate(rows, profile)}
        if not profile.reference:
            gates.update({label: case_gate(rows, label, profile) for label in CASE_GATES})
            gates["matrix"] = matrix_gate(rows, profile)
            gates["leaks"] = leaks_gate(profile)
        for label in (*CASE_GATES, *UNREAD, "leaks", "matrix", "pkits"):
            path = room / f"{label}.toml"
            if not path.is_file():
                continue
            name = f"{room.name}/{path.name}"
            if label not in gates:
                why = "the reference's differences are its rows' own" if profile.reference else "no gate records there"
                out.append((f"{name} read", lambda p=path, w=why: (False, f"{rel(str(p))}:1: no gate reads it ({w})")))
                continue
            out += file_cases(name, *gates[label])
            out.append((f"{name} page", lambda r=room.name, f=path.name: page_reads(r, f)))
        if (room / "reasons.toml").is_file():
            loads = [gates[label][0] for label in gates if (room / f"{label}.toml").is_file()]
            out.append((f"{room.name}/reasons.toml used", reasons_used(room, loads)))
    return out


def page_reads(room: str, file: str) -> tuple[bool, str]:
    """The results page (clients/results_page.py) reads the file with the loader it uses."""
    from clients.results_page import PageError, read_record
    try:
        return True, f"{len(read_record(room, file).all)} entries"
    except PageError as e:
        return False, f"clients/results_page.py cannot read it: {e}"


def file_cases(name: str, loader: Callable[[], Record], held: Callable[[], Record], judges: dict[str, Judge]):
    """NAME's load alone, then held to its gate's cases (CASES), then each judge over every case of every
    entry (a file its loader refuses: its later checks fail too)."""
    loaded: dict[str, object] = {}

    def get(key: str, load: Callable[[], Record]):
        if key not in loaded:
            try:
                loaded[key] = load()
            except RowError as e:
                loaded[key] = e
        return loaded[key]

    def failed(e: Exception) -> tuple[bool, str]:
        return False, f"{rel(str(e).split(': ', 1)[0])}: {str(e).split(': ', 1)[-1]}"

    def load_case() -> tuple[bool, str]:
        r = get("alone", loader)
        return failed(r) if isinstance(r, Exception) else (True, f"{len(r.all)} entries")

    def cases_case() -> tuple[bool, str]:
        if isinstance(get("alone", loader), Exception):
            return False, "not loaded (see its load case)"
        r = get("held", held)
        return failed(r) if isinstance(r, Exception) else \
            (True, f"{len(r.all)} entries, {sum(len(r.members(d)) for d in r.all)} cases")

    def judged(judge: Judge) -> Callable[[], tuple[bool, str]]:
        def run() -> tuple[bool, str]:
            r = get("held", held)
            if isinstance(r, Exception):
                return False, "not held to its cases (see its cases case)"
            problems = [f"{rel(d.where)}: {case}: {p}" for d in r.all for case in r.members(d) if (p := judge(d, case))]
            return not problems, "\n  ".join(problems) if problems else f"{len(r.all)} entries"
        return run

    return [(f"{name} loads", load_case), (f"{name} cases", cases_case)] + \
        [(f"{name} {check}", judged(judges[check])) for check in judges]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=Path, default=ROOT / "clients",
                   help="the rooms (default: the tree's clients/; a copy to see a break go red)")
    p.add_argument("--openssl-include", type=Path, default=Path("/usr/include/openssl"),
                   help="the OpenSSL headers (the matrix's outcome names)")
    p.add_argument("--only", nargs="*", default=[],
                   help="run only these cases (or every case of ROOM/FILE, or a check)")
    p.add_argument("--list", action="store_true", help="print the case ids, run nothing")
    ns = p.parse_args()
    gate = Gate("harness_records")
    try:
        cases = all_cases(ns.clients, OutcomeNames(ns.openssl_include))
    except (RowError, UnknownOutcome, OSError) as e:   # a row file that does not load is its gate's red, too
        print(f"test_records: {e}", file=sys.stderr)
        return 2
    if ns.list:
        print("\n".join(case for case, _ in cases))
        return 0
    groups = {c: {c, c.rsplit(" ", 1)[0], c.rsplit(" ", 1)[1]} for c, _ in cases}
    unknown = [o for o in ns.only if not any(o in g for g in groups.values())]
    if unknown:
        print(f"test_records: --only {unknown[0]}: no such case (--list)", file=sys.stderr)
        return 2
    chosen = [(c, t) for c, t in cases if not ns.only or groups[c] & set(ns.only)]
    for case, thunk in chosen:
        try:
            ok, detail = thunk()
        except Exception as e:  # a check that blows up is a failure with its reason, not a stack trace
            ok, detail = False, f"raised {e!r}"
        gate.check(case, ok, detail)
    files = {c.rsplit(" ", 1)[0] for c, _ in chosen}
    print(f"harness_records: {len(files)} record files of {len(rooms(ns.clients))} rooms, no client run", flush=True)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())

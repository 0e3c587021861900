"""The records judged without a run: every client room's recorded differences against the gates' rows.

A record (harness/record.py) is read only when its gate runs the case it names, so a stale entry
waits for a run (and, in a sampled gate, for a draw) to go red. This unit loads every record file of
every room of clients/ ({client,faults,hostile,dns,leaks,matrix,pkits}.toml, those that exist) with
the loader its gate uses, and holds each entry to the gate's rows, naming file:line:

    loads     the gate's loader takes the file (kinds, gots the gate can judge, no case twice)
    cases     every entry names a case of its gate: for the case gates ROW, or ROW/bio and ROW/fd for
              a client with --transport (client/tests/client.toml, faults/faults.toml, hostile/hostile.toml,
              dns/dns.toml, crossed as the gate crosses them); matrix/rows.toml's rows (a got's cells
              among the row's versions and servers); pkits/tests.tsv's tests
    records   no entry's got is the row's own expectation (a record that records nothing): a case row's
              expect (the same terms), every cell of a matrix row's bio/fd, NIST's verdict
    asked     no entry for a case the gate never asks this client, whose entry is never read: one its
              profile's [disabled] disables (a `skip` the profile already says), a shim row for a client
              whose I/O no shim sees, a PKITS test whose settings it cannot be given
    read      a record file some gate reads (the reference's case and matrix records, leaks.toml: none)

What it cannot know without a run: whether the adapter can still produce a got (an `exit 2` or a
`skip` its code no longer returns): only the gate's run says so.

    /usr/bin/python3 -m harness.tests.test_records [--list] [--only CASE ...] [--clients DIR]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Optional

from ..cases import CaseRow, case_record, load_cases, skip_reason
from ..clients import ClientError, Profile, load_profile
from ..gate import Gate
from ..layout import ROOT
from ..outcomes import OutcomeNames, UnknownOutcome
from ..record import SKIP, Difference, Record
from ..rows import RowError

CASE_GATES = {"client": ROOT / "client/tests/client.toml", "faults": ROOT / "faults/faults.toml",
              "hostile": ROOT / "hostile/hostile.toml", "dns": ROOT / "dns/dns.toml"}
UNREAD: tuple[str, ...] = ()   # a room's LABEL.toml no gate reads


def rel(where: str) -> str:
    """A file (or file:line) relative to the repository root where it is under it."""
    path, sep, line = where.rpartition(":")
    if not line.isdigit():
        path, sep, line = where, "", ""
    try:
        return str(Path(path).resolve().relative_to(ROOT)) + sep + line
    except ValueError:
        return where


class Rows:
    """Every gate's rows, loaded once by the gates' own loaders."""

    def __init__(self, names: OutcomeNames):
        from matrix.rows import ROW_KEYS, Row
        from pkits.table import PkitsTest, load
        from ..rows import load_tsv, load_toml
        self.names = names
        self.cases = {label: load_cases(path) for label, path in CASE_GATES.items()}
        matrix = ROOT / "matrix/rows.toml"
        self.matrix = {r.name: r for r in (Row(t.fields, t.line, t.path, t.key_lines)
                                           for t in load_toml(matrix, "row", ROW_KEYS))}
        table = ROOT / "pkits/tests.tsv"   # the suite's end entities are pkits_gate's to check (Debian's files)
        self.pkits = load(table, {t.ee for t in load_tsv(table, PkitsTest)})


# ---- one check: (entry, problem or None) for each entry of a record ------------------------------

Judge = Callable[[Difference], Optional[str]]


def case_gate(rows: Rows, label: str, profile: Profile) -> tuple[Callable[[], Record], dict[str, Judge]]:
    """A case gate's record of PROFILE and its checks (harness/cases.py's gate_main, case_record, skip_reason)."""
    crossed = ("bio", "fd") if profile.has("--transport") else None
    cells: dict[str, CaseRow] = {c: r for r in rows.cases[label] for c, _ in r.crossed(crossed)}
    lab = SimpleNamespace(profile=profile, label=label)

    def cases(d: Difference) -> Optional[str]:
        if d.case in cells:
            return None
        row = next((r for r in rows.cases[label] if r.case == d.case.split("/")[0]), None)
        if row is None:
            return f"not a case of {label} ({rel(str(CASE_GATES[label]))} has no row {d.case.split('/')[0]!r})"
        return (f"not a case of {label} for {profile.name} (its cases of row {row.case}: "
                f"{', '.join(c for c, r in cells.items() if r is row) or 'none'})")

    def records(d: Difference) -> Optional[str]:
        row = cells.get(d.case)
        if row is None or not isinstance(d.got, str) or sorted(d.got.split()) != sorted(row.expect.split()):
            return None
        return f"got {d.got!r} is the row's own expect ({rel(row.where)}): it records nothing"

    def asked(d: Difference) -> Optional[str]:
        row = cells.get(d.case)
        why = skip_reason(lab, row, d.case) if row is not None else None
        return None if why is None else f"got {d.got!r} for a case {label} never asks {profile.name}: {why}"

    return (lambda: case_record(profile, label, None)), {"cases": cases, "records": records, "asked": asked}


def leaks_gate(profile: Profile) -> tuple[Callable[[], Record], dict[str, Judge]]:
    """leaks/leaks_gate.py's record of PROFILE: a Heap/ case whose heap grows (its loader, check_leak_got)."""
    from leaks.leaks_gate import LEAK_GOTS, case_ids, check_leak_got, load_rows, skipped
    cells = case_ids(load_rows(ROOT / "leaks" / "leaks.toml"), ("bio", "fd") if profile.has("--transport") else None)

    def kind_of(d: Difference) -> Optional[str]:
        prefix = LEAK_GOTS.get(str(d.got))
        return None if prefix and d.case.startswith(prefix) else f"got {d.got!r} is not what a {d.case.split('/')[0]}/ case records"

    def asked(d: Difference) -> Optional[str]:
        row = cells.get(d.case)
        why = skipped(profile, d.case, row) if row is not None else None
        return None if why is None else f"got {d.got!r} for a case leaks never asks {profile.name}: {why}"

    return (lambda: Record(profile.room / "leaks.toml", f"leaks {profile.name}", check_got=check_leak_got,
                           cases=set(cells))), {"records": kind_of, "asked": asked}


def matrix_gate(rows: Rows, profile: Profile) -> tuple[Callable[[], Record], dict[str, Judge]]:
    """matrix/run_matrix.py's record of PROFILE (matrix/crossing.py's client_record) and its checks."""
    from matrix.crossing import client_record
    from matrix.rows import cell_value
    transports = ("bio", "fd") if profile.has("--transport") else ("bio",)

    def cells_of(row):
        return [(v, s) for v in row.versions for s in row.servers]

    def cases(d: Difference) -> Optional[str]:
        row = rows.matrix.get(d.case)
        if row is None:
            return "not a row of matrix/rows.toml"
        if isinstance(d.got, dict):
            known = {*row.versions, *(f"{v} {s}" for v, s in cells_of(row))}
            extra = [k for k in d.got if k not in known]
            if extra:
                return (f"got's cell {extra[0]!r} is no cell of the row (versions {', '.join(row.versions)}, "
                        f"servers {', '.join(row.servers)})")
        return None

    def same(got: Optional[str], reference: Optional[str]) -> bool:
        if got is None or reference is None or "|" in got or (got == SKIP) != (reference == SKIP):
            return got == reference
        try:
            return got == SKIP or rows.names.parse(got) == rows.names.parse(reference)
        except UnknownOutcome:
            return False

    def records(d: Difference) -> Optional[str]:
        row = rows.matrix.get(d.case)
        if row is None or not all(same(cell_value(d.got, v, s), row.expected(t, v, s))
                                  for t in transports for v, s in cells_of(row)):
            return None
        return f"got {d.got!r} is the row's own expectation ({rel(row.where())}) in every cell: it records nothing"

    def asked(d: Difference) -> Optional[str]:
        why = profile.disabled_reason("matrix", d.case)
        return None if why is None else f"got {d.got!r} for a row the matrix never asks {profile.name}: disabled " \
                                        f"in {rel(str(profile.path))}: {why}"

    return (lambda: client_record(profile, None, rows.names)), {"cases": cases, "records": records, "asked": asked}


def pkits_gate(rows: Rows, profile: Profile) -> tuple[Callable[[], Record], dict[str, Judge]]:
    """pkits/pkits_gate.py's record of PROFILE and its checks (its client_args and not_asked)."""
    from pkits.pkits_gate import client_args, client_record, not_asked
    from pkits.verdicts import verdict_of

    def cases(d: Difference) -> Optional[str]:
        return None if d.case in rows.pkits else "not a test of pkits/tests.tsv"

    def records(d: Difference) -> Optional[str]:
        t = rows.pkits.get(d.case)
        nist = None if t is None else ("accept" if t.valid else "refuse")
        if t is None or not isinstance(d.got, str) or verdict_of(d.got) != nist:
            return None
        return f"got {d.got!r} is NIST's verdict ({t.verdict}, {rel(t.where)}): it records nothing"

    def asked(d: Difference) -> Optional[str]:
        t = rows.pkits.get(d.case)
        if t is None:
            return None
        why = not_asked(t, profile, client_args(t, profile, Path("anchor.pem"), SimpleNamespace(crls=None), 0))
        return f"got {d.got!r} for a test the gate never asks {profile.name}: {why}" if why else None

    return (lambda: client_record(profile, None)), {"cases": cases, "records": records, "asked": asked}


# ---- the cases ------------------------------------------------------------------------------------

def rooms(clients: Path) -> list[Profile]:
    found = []
    for path in sorted(clients.glob("*/profile.toml")):
        try:
            found.append(load_profile(path, ROOT / "build"))
        except ClientError as e:
            raise RowError(str(e)) from e
    return found


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
    return out


def file_cases(name: str, loader: Callable[[], Record], judges: dict[str, Judge]):
    """NAME's load, then each judge over every entry (a file its loader refuses: its checks fail too)."""
    loaded: dict[str, object] = {}

    def record():
        if "record" not in loaded:
            try:
                loaded["record"] = loader()
            except RowError as e:
                loaded["record"] = e
        return loaded["record"]

    def load_case() -> tuple[bool, str]:
        r = record()
        if isinstance(r, Exception):
            return False, f"{rel(str(r).split(': ', 1)[0])}: {str(r).split(': ', 1)[-1]}"
        return True, f"{len(r.entries)} entries"

    def judged(judge: Judge) -> Callable[[], tuple[bool, str]]:
        def run() -> tuple[bool, str]:
            r = record()
            if isinstance(r, Exception):
                return False, "not loaded (see its load case)"
            problems = [f"{rel(d.where)}: {d.case}: {p}" for d in r.entries.values() if (p := judge(d))]
            return not problems, "\n  ".join(problems) if problems else f"{len(r.entries)} entries"
        return run

    return [(f"{name} loads", load_case)] + [(f"{name} {check}", judged(judges[check])) for check in judges]


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

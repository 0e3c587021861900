"""Every room's records, each read by its gate's own loader and held to its gate's rows: what
harness_records (harness/tests/test_records.py) judges without a run and harness/findings.py lists."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Optional

from .cases import CaseRow, case_record, load_cases, skip_reason
from .clients import ClientError, Profile, load_profile
from .layout import CASE_FILES, ROOT
from .outcomes import OutcomeNames
from .record import Difference, Record
from .rows import RowError

CASE_GATES = CASE_FILES


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
        from .rows import load_tsv, load_toml
        self.names = names
        self.cases = {label: load_cases(path) for label, path in CASE_GATES.items()}
        matrix = ROOT / "matrix/rows.toml"
        self.matrix = {r.name: r for r in (Row(t.fields, t.line, t.path, t.key_lines)
                                           for t in load_toml(matrix, "row", ROW_KEYS))}
        table = ROOT / "pkits/tests.tsv"   # the suite's end entities are pkits_gate's to check (Debian's files)
        self.pkits = load(table, {t.ee for t in load_tsv(table, PkitsTest)})


# ---- one check: (entry, case, problem or None) for each case each entry of a record applies to -----
# A record is loaded twice: as the gate's loader takes it alone (loads), then held to the gate's cases and
# the rows' expectations (cases: a name of no case, a glob of none, an entry that records nothing or
# names a row term the row lacks: harness/record.py refuses each); the judges then read it per case.

Judge = Callable[[Difference, str], Optional[str]]


def case_gate(rows: Rows, label: str, profile: Profile):
    """A case gate's record of PROFILE and its checks (harness/cases.py's gate_main, case_record, skip_reason)."""
    crossed = ("bio", "fd") if profile.has("--transport") else None
    cells: dict[str, CaseRow] = {c: r for r in rows.cases[label] for c, _ in r.crossed(crossed)}
    lab = SimpleNamespace(profile=profile, label=label)

    def asked(d: Difference, case: str) -> Optional[str]:
        why = skip_reason(lab, cells[case], case)
        return None if why is None else f"got {d.got!r} for a case {label} never asks {profile.name}: {why}"

    return (lambda: case_record(profile, label, None)), \
        (lambda: case_record(profile, label, {c: r.expect for c, r in cells.items()})), {"asked": asked}


def leaks_gate(profile: Profile):
    """leaks/leaks_gate.py's record of PROFILE: a Heap/ case whose heap grows (its loader, check_leak_got)."""
    from leaks.leaks_gate import LEAK_GOTS, case_ids, check_leak_got, load_rows, skipped
    cells = case_ids(load_rows(ROOT / "leaks" / "leaks.toml"), ("bio", "fd") if profile.has("--transport") else None)

    def kind_of(d: Difference, case: str) -> Optional[str]:
        prefix = LEAK_GOTS.get(str(d.got))
        return None if prefix and case.startswith(prefix) else f"got {d.got!r} is not what a {case.split('/')[0]}/ case records"

    def asked(d: Difference, case: str) -> Optional[str]:
        why = skipped(profile, case, cells[case])
        return None if why is None else f"got {d.got!r} for a case leaks never asks {profile.name}: {why}"

    def load(cases):
        return lambda: Record(profile.room / "leaks.toml", f"leaks {profile.name}", check_got=check_leak_got,
                              cases=cases)
    return load(None), load(list(cells)), {"records": kind_of, "asked": asked}


def matrix_gate(rows: Rows, profile: Profile):
    """matrix/run_matrix.py's record of PROFILE (matrix/crossing.py's client_record) and its checks."""
    from matrix.crossing import client_record
    transports = ("bio", "fd") if profile.has("--transport") else ("bio",)

    def cells(d: Difference, case: str) -> Optional[str]:
        row = rows.matrix[case]
        if isinstance(d.got, dict) and d.names_case(case):
            known = {*row.versions, *(f"{v} {s}" for v in row.versions for s in row.servers)}
            extra = [k for k in d.got if k not in known]
            if extra:
                return (f"got's cell {extra[0]!r} is no cell of the row (versions {', '.join(row.versions)}, "
                        f"servers {', '.join(row.servers)})")
        return None

    def asked(d: Difference, case: str) -> Optional[str]:
        why = profile.disabled_reason("matrix", case)
        return None if why is None else f"got {d.got!r} for a row the matrix never asks {profile.name}: disabled " \
                                        f"in {rel(str(profile.path))}: {why}"

    return (lambda: client_record(profile, None, rows.names)), \
        (lambda: client_record(profile, rows.matrix, rows.names, transports)), {"cells": cells, "asked": asked}


def pkits_gate(rows: Rows, profile: Profile):
    """pkits/pkits_gate.py's record of PROFILE and its checks (its client_args and not_asked)."""
    from pkits.pkits_gate import client_args, client_record, not_asked
    from pkits.verdicts import verdict_of

    def records(d: Difference, case: str) -> Optional[str]:
        t = rows.pkits[case]
        nist = "accept" if t.valid else "refuse"
        if not isinstance(d.got, str) or verdict_of(d.got) != nist:
            return None
        return f"got {d.got!r} is NIST's verdict ({t.verdict}, {rel(t.where)}): it records nothing"

    def asked(d: Difference, case: str) -> Optional[str]:
        t = rows.pkits[case]
        why = not_asked(t, profile, client_args(t, profile, Path("anchor.pem"), SimpleNamespace(crls=None), 0))
        return f"got {d.got!r} for a test the gate never asks {profile.name}: {why}" if why else None

    return (lambda: client_record(profile, None)), (lambda: client_record(profile, set(rows.pkits))), \
        {"records": records, "asked": asked}


def rooms(clients: Path) -> list[Profile]:
    found = []
    for path in sorted(clients.glob("*/profile.toml")):
        try:
            found.append(load_profile(path, ROOT / "build"))
        except ClientError as e:
            raise RowError(str(e)) from e
    return found

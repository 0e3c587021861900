"""The findings page and the kept cells held, without a client run.

    /usr/bin/python3 -m harness.tests.test_findings

    every-bug-once        every bug entry of every room's records (and alloc_sweep_known.toml) is in exactly one finding
    bug-has-reproducer    each bug names its client, library, version, cases and a one-run command for
                          harness.repro (--client, --gate, --case of its first case) in its report
    reason-is-one         entries that share a reason of a room are one finding
    bench-record-loads    a room's bench.toml loads (kind, why, a measured got) and is on the page
    store-round-trip      harness/cell_store.py writes sorted lines and reads back what it wrote
    store-newer-wins      a run's observation of a cell replaces the kept one, the others stay
    page-kept-cell        the results page shows a kept cell with its tree and age, no `not run`
    page-never-run        a cell no kept run ran says `not run`
"""
from __future__ import annotations

import datetime
import sys
import tempfile
from pathlib import Path

from .. import cell_store
from ..cell_store import Seen
from ..findings import collect, defaults, page
from ..gate import Gate
from ..layout import ROOT
from ..outcomes import OutcomeNames
from ..record_loaders import rooms

FINDINGS = collect(OutcomeNames(Path("/usr/include/openssl")))


def bug_entries() -> set[str]:
    """file:line of every [[difference]] whose kind is bug, in every room (read as text: the loaders' own count)."""
    found = set()
    for profile in rooms(ROOT / "clients"):
        for path in sorted(profile.room.glob("*.toml")):
            if path.stem in ("profile", "reasons", "bench"):
                continue
            start = 0
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if line.strip() in ("[[difference]]", "[[known]]"):
                    start = number
                elif line.strip() == 'kind = "bug"' and start:
                    found.add(f"{path.relative_to(ROOT)}:{start}")
    return found


def every_bug_once() -> tuple[bool, str]:
    seen: dict[str, int] = {}
    for f in FINDINGS:
        if f.kind == "bug":
            for where in {s.where for s in f.cases}:
                seen[where] = seen.get(where, 0) + 1
    want = bug_entries()
    missing, twice = sorted(want - set(seen)), sorted(w for w, n in seen.items() if n > 1)
    return not missing and not twice, (f"missing {missing[:3]}, twice {twice[:3]}" if missing or twice
                                       else f"{len(want)} bug entries in {sum(f.kind == 'bug' for f in FINDINGS)} findings")


def bug_has_reproducer() -> tuple[bool, str]:
    bad = []
    for f in (f for f in FINDINGS if f.kind == "bug"):
        first = f.cases[0]
        want = f"--client {f.client} --gate {first.gate} --case '{first.case}'"
        if not (f.cases and f.library and f.version != "?" and want in f.repro and f.repro in f.report
                and f.library in f.report):
            bad.append(f.id)
    return not bad, f"without: {bad[:4]}" if bad else "each with its one-run command in its report"


def reason_is_one() -> tuple[bool, str]:
    keys = [(f.client, f.reason) for f in FINDINGS if f.reason]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    return not twice, f"split: {twice[:3]}" if twice else f"{len(keys)} shared reasons, one finding each"


def bench_record_loads() -> tuple[bool, str]:
    found = defaults()
    html = page(FINDINGS, found)
    ok = bool(found) and all(d["kind"] and d["why"] and d["measured"].get("cpu_ms_per_conn") for d in found)
    return ok and all(d["case"] in html for d in found), f"{len(found)} defaults: " + \
        "; ".join(f"{d['client']} {d['case']} {d['measured'].get('cpu_ms_per_conn')} ms" for d in found)


def store_round_trip() -> tuple[bool, str]:
    cells = {"matrix": {"b": Seen("ran", "ok", "abc1234", "2026-12-01"), "a": Seen("ran", "x509:10  two\tspaces",
                                                                                    "abc1234", "2026-12-01")},
             "faults": {"Plain/bio": Seen("PASS", "", "def5678", "2026-12-02")}}
    with tempfile.TemporaryDirectory() as tmp:
        path = cell_store.save("go", cells, Path(tmp))
        lines = path.read_text().splitlines()[1:]
        back = cell_store.load("go", Path(tmp))
    ordered = lines == sorted(lines)
    same = back["matrix"]["b"] == cells["matrix"]["b"] and back["matrix"]["a"].text == "x509:10 two spaces"
    return ordered and same, f"{len(lines)} lines, sorted {ordered}, read back {same}"


def store_newer_wins() -> tuple[bool, str]:
    kept = {"faults": {"Plain": Seen("PASS", "", "old", "2026-11-01"), "Other": Seen("FAIL", "x", "old", "2026-11-01")}}
    new = {"faults": {"Plain": Seen("SKIP", "y", "new", "2026-12-07")}, "matrix": {}}
    out = cell_store.merged(kept, new)
    ok = out["faults"]["Plain"].tree == "new" and out["faults"]["Other"].tree == "old"
    return ok, "the run's cell over the kept one, the rest kept" if ok else str(out)


def results_page(kept: dict) -> str:
    """The results page's faults section over an empty run (no JUnit file) and a store holding KEPT for tlsnb and go."""
    from clients.results_page import clients_here, gate_section, observed, render_cell
    clients = [c for c in clients_here() if c in ("tlsnb", "go")]
    with tempfile.TemporaryDirectory() as tmp:
        for client, cells in kept.items():
            cell_store.save(client, cells, Path(tmp) / "store")
        seen = observed(clients, Path(tmp), Path(tmp), Path(tmp) / "store", ("now", datetime.date.today().isoformat()))
    rows, cells, _ = gate_section("faults", clients, seen)
    return "".join(render_cell(cells[(r, c)]) for r in rows for c in clients)


def page_kept_cell() -> tuple[bool, str]:
    day = (datetime.date.today() - datetime.timedelta(days=3)).isoformat()
    shown = results_page({"tlsnb": {"faults": {"Plain/bio": Seen("PASS", "", "abc1234", day)}},
                          "go": {"faults": {"Plain": Seen("PASS", "", "abc1234", day)}}})
    ok = "abc1234, 3 d ago" in shown and "not run" not in shown and "as tlsnb" in shown
    return ok, shown[:300]


def page_never_run() -> tuple[bool, str]:
    shown = results_page({"tlsnb": {"faults": {"Plain/bio": Seen("PASS", "", "abc1234", "2026-12-01")}}})
    return "not run" in shown, shown[:300]


CASES = {"every-bug-once": every_bug_once, "bug-has-reproducer": bug_has_reproducer, "reason-is-one": reason_is_one,
         "bench-record-loads": bench_record_loads, "store-round-trip": store_round_trip,
         "store-newer-wins": store_newer_wins, "page-kept-cell": page_kept_cell, "page-never-run": page_never_run}


def main() -> int:
    gate = Gate("harness_findings")
    for name, case in CASES.items():
        try:
            ok, detail = case()
        except Exception as e:   # a check that blows up is its failure, with the reason
            ok, detail = False, f"raised {e!r}"
        gate.check(name, ok, detail)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())

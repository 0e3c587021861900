#!/usr/bin/python3
"""The lab's findings: every recorded bug of every client, one entry a bug, with what reproduces it alone.

Read from the records of every room of clients/ (harness/record.py: each gate's LABEL.toml, loaded by
the loader its gate uses and held to its rows, as unit harness_records does), never from a list of
clients: a room added under clients/ is on the page at its next write. One finding is one
[[difference]] entry, or every entry of a room that names one shared reason (reasons.toml), with every
case it holds for. For each bug: the client, its library and version (the profile's `library`), the
cases, what the reference (tlsnb's row) or NIST (PKITS) expects and what the client showed, the RFC
sections its why cites, the one command that reproduces it alone (harness/repro.py: one peer, one
client run, tlsnb's run beside it), whether that command was last run and showed the recorded outcome
(`python3 -m harness.repro --check`, BUILD/work/repro/checked.json), and a report text a maintainer of
the library could act on. Policies and limits are listed apart, grouped the same way, and so are the
defaults a user pays for (clients/NAME/bench.toml: a measured cost of a library's default, the record
of bench/clients.py's figures).

    /usr/bin/python3 -m harness.findings --work build/work          # build/work/findings.{json,html}
    /usr/bin/python3 -m harness.findings --list                      # the bugs, one line each
"""
from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from .layout import CASE_FILES, ROOT
from .outcomes import OutcomeNames, UnknownOutcome
from .record import KINDS, Record
from .record_loaders import rel
from .rows import RowError

BENCH = "bench.toml"     # clients/NAME/bench.toml: the measured cost of a default (bench/README.md)
REPRO = "/usr/bin/python3 -m harness.repro"
RFC = re.compile(r"RFC \d{3,4}(?: (?:section )?\d+(?:\.\d+)*)?")
VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")


@dataclass
class Shown:
    """One case of a finding: what its row (or NIST) expects, what the client is recorded to show."""
    gate: str
    case: str
    expected: str        # the reference's: tlsnb's row, or NIST's verdict for PKITS
    recorded: str        # what the record holds the client to
    where: str           # file:line of the entry


@dataclass
class Finding:
    id: str              # CLIENT/GATE/KEY: KEY the shared reason, else the entry's first case
    client: str
    library: str
    version: str
    kind: str
    why: str
    reason: str
    cases: list[Shown] = field(default_factory=list)
    rfc: list[str] = field(default_factory=list)
    nist: str = ""
    repro: str = ""                 # the command that reproduces it alone (its first case)
    repro_args: dict = field(default_factory=dict)
    checked: dict = field(default_factory=dict)    # the reproducer's last run (harness.repro --check)
    report: str = ""

    @property
    def named(self) -> str:
        """The library with its version, once (a profile's library often names it already)."""
        return self.library if self.version.split()[0] in self.library else f"{self.library} {self.version}"

    @property
    def gates(self) -> list[str]:
        return list(dict.fromkeys(s.gate for s in self.cases))


def text_of(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def held_records(names: OutcomeNames, clients: Path = ROOT / "clients"):
    """(profile, gate, Record held to its gate's cases, reference(case) -> text) for every record file of
    every room: the gates' own loaders, as harness_records loads them (harness/record_loaders.py)."""
    from .record_loaders import Rows, case_gate, leaks_gate, matrix_gate, pkits_gate, rooms
    rows = Rows(names)
    for profile in rooms(clients):
        gates = {"pkits": pkits_gate(rows, profile)}
        if not profile.reference:
            gates.update({label: case_gate(rows, label, profile) for label in CASE_FILES})
            gates["matrix"] = matrix_gate(rows, profile)
            gates["leaks"] = leaks_gate(profile)
        for gate, (_, held, _) in gates.items():
            if (profile.room / f"{gate}.toml").is_file():
                yield profile, gate, held(), reference_of(rows, gate)


def reference_of(rows, gate: str):
    """What the lab expects of a case before any record: the row's expect, the matrix row's cells, NIST's verdict."""
    if gate in CASE_FILES:
        expects = {c: r.expect for r in rows.cases[gate] for c, _ in r.crossed()}
        expects.update({r.case: r.expect for r in rows.cases[gate]})
        return lambda case: expects.get(case, "")
    if gate == "matrix":
        def cells(case: str) -> str:
            row = rows.matrix[case]
            return text_of({f"{v} {s}": row.expected("bio", v, s) for v in row.versions for s in row.servers})
        return cells
    if gate == "pkits":
        return lambda case: f"NIST: {rows.pkits[case].verdict}" if case in rows.pkits else ""
    return lambda case: "the reference's plateau (leaks/leaks.toml)"


def version_of(profile) -> str:
    """The library's version as its profile says it, else its first Debian package's as installed
    (BoringSSL's android-libboringssl-dev: a snapshot the library itself numbers nowhere), else what
    the program its command starts prints (`node --version`: Node's room names no one version)."""
    found = VERSION.search(profile.library)
    if found:
        return found[0]
    if profile.packages and not profile.packages[0].startswith(("python3", "nodejs", "golang")):
        try:
            done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", profile.packages[0]], capture_output=True,
                                  text=True, timeout=10)
            if done.returncode == 0 and done.stdout.strip():
                return f"{done.stdout.strip()} ({profile.packages[0]})"
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        done = subprocess.run([str(profile.command[0]), "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"
    printed = VERSION.search(done.stdout)
    return f"{printed[0]} (its --version)" if printed else "?"


def collect(names: OutcomeNames, clients: Path = ROOT / "clients") -> list[Finding]:
    """Every finding of every kind, in the rooms' order: one per entry, or per shared reason of a room."""
    found: dict[str, Finding] = {}
    versions: dict[str, str] = {}
    for profile, gate, record, reference in held_records(names, clients):
        version = versions.setdefault(profile.name, version_of(profile) if profile.name not in versions else "")
        for d in record.all:
            members = sorted(record.members(d))
            key = d.reason or (members[0] if members else d.case)
            fid = f"{profile.name}/{gate if not d.reason else 'reason'}/{key}"
            library = profile.library.split(":")[0].split("(")[0].strip()
            f = found.setdefault(fid, Finding(fid, profile.name, library, version, d.kind,
                                              d.why, d.reason))
            for case in members:
                expected = text_of(reference(case))
                # a case gate's record merges into the row's line; the others' got is the cells or outcome itself
                recorded = text_of(record.expected(case, reference(case))[0] if gate in CASE_FILES else d.got)
                f.cases.append(Shown(gate, case, expected, recorded, rel(d.where)))
    found.update({f.id: f for f in sweep_findings(clients)})
    clauses = hostile_clauses()
    for f in found.values():
        finish(f, clauses)
    return list(found.values())


def sweep_findings(clients: Path = ROOT / "clients") -> list[Finding]:
    """A room's alloc_sweep_known.toml: what its LIBRARY does when an allocation fails, a rule over the
    runs of the allocation sweep (leaks/alloc_sweep.py), each entry one finding of its kind."""
    from leaks.alloc_sweep import load_known
    from .record_loaders import rooms
    out = []
    for profile in rooms(clients):
        path = profile.room / "alloc_sweep_known.toml"
        for row in load_known(path):
            f = Finding(f"{profile.name}/alloc_sweep/{row.get('name')}", profile.name,
                        profile.library.split(":")[0].split("(")[0].strip(), version_of(profile), row.get("kind"),
                        row.get("why"), "")
            f.cases.append(Shown("alloc_sweep", row.get("name"), "tlsnb: one outcome line for every N (leaks/alloc_sweep.tsv)",
                                 f"{row.get('outcome')}... with {row.get('stack')!r} in its stack or stderr", rel(row.where())))
            out.append(f)
    return out


def hostile_clauses() -> dict[str, str]:
    """Each hostile row's case -> its scenario's clause as the RFC names it (rfc8446-4.1.4 -> RFC 8446 4.1.4)."""
    from .cases import load_cases
    from hostile.hostile_gate import row_scenarios
    out = {}
    for case, (_, scenario) in row_scenarios(load_cases(ROOT / "hostile" / "hostile.toml")).items():
        rfc, _, section = scenario.clause.partition("-")
        out[case] = f"RFC {rfc.removeprefix('rfc')}" + (f" {section}" if section else "")
    return out


def finish(f: Finding, clauses: Optional[dict[str, str]] = None) -> None:
    """The RFC sections its why cites and its hostile rows' clauses, NIST's verdict, the reproducer of
    its first case, its report."""
    clauses = hostile_clauses() if clauses is None else clauses
    named = [clauses[s.case.split("/")[0]] for s in f.cases if s.gate == "hostile" and s.case.split("/")[0] in clauses]
    f.rfc = list(dict.fromkeys(named + RFC.findall(f.why)))
    pkits = [s for s in f.cases if s.gate == "pkits"]
    f.nist = "; ".join(f"{s.case}: {s.expected.removeprefix('NIST: ')}" for s in pkits)
    if f.cases:
        first = f.cases[0]
        f.repro_args = {"client": f.client, "gate": first.gate, "case": first.case}
        f.repro = f"{REPRO} --client {f.client} --gate {first.gate} --case '{first.case}'"
    cases = ", ".join(f"{s.gate} {s.case}" for s in f.cases[:6]) + (f" and {len(f.cases) - 6} more" if len(f.cases) > 6 else "")
    if f.cases:
        s = f.cases[0]
        said = (f"NIST's PKITS expects {s.expected.removeprefix('NIST: ')}" if s.gate == "pkits"
                else f"the lab's reference (tlsnb, OpenSSL 3) shows {s.expected}")
        seen = f"{f.named} showed {s.recorded}, where {said}."
    else:
        seen = ""
    f.report = (f"{f.named}: {f.why.rstrip('.')}. {seen} "
                + (f"Standards: {', '.join(f.rfc)}. " if f.rfc else "")
                + f"Seen in tlslab ({cases}); reproduce with one client run against one peer: {f.repro}").strip()


def defaults(clients: Path = ROOT / "clients") -> list[dict]:
    """Every room's bench.toml entries: a library default a user pays for, with its measured figure."""
    from .record_loaders import rooms
    out = []
    for profile in rooms(clients):
        path = profile.room / BENCH
        if not path.is_file():
            continue
        record = bench_record(path, profile.name)
        for d in record.all:
            out.append({"client": profile.name, "library": profile.library.split(":")[0].split("(")[0].strip(),
                        "case": d.case, "measured": d.got, "kind": d.kind, "why": d.why, "where": rel(d.where)})
    return out


CHEAP_GROUPS = ("X25519", "prime256v1", "P-256")   # the groups bench/'s floor is measured for


def bench_seen(work: Path, recorded: list[dict]) -> list[dict]:
    """bench/clients.py's last run (WORK/bench/clients.json): every cell whose client negotiated a group
    dearer than the floor's (nginx's log), its median CPU, and whether a bench.toml records it."""
    try:
        run = json.loads((work / "bench" / "clients.json").read_text())
    except (OSError, ValueError):
        return []
    out = []
    for cell in run.get("cells", []):
        good = [x for x in cell.get("samples", []) if x.get("ok")]
        groups = sorted({g for x in good for g in x.get("groups", {})})
        dear = [g for g in groups if g.split()[-1] not in CHEAP_GROUPS]
        if good and dear:
            cpu = sorted(x["cpu_ms_per_conn"] for x in good)[len(good) // 2]
            case = f"{cell['server']}/{cell['mode']}"
            out.append({"client": cell["client"], "case": case, "groups": dear, "cpu_ms_per_conn": cpu,
                        "recorded": any(d["client"] == cell["client"] and d["case"] == case for d in recorded)})
    return out


def check_bench_got(got) -> None:
    if not isinstance(got, dict) or not {"cpu_ms_per_conn", "measured_by"} <= set(got):
        raise ValueError("a bench record's got is a table with at least cpu_ms_per_conn and measured_by")


def bench_record(path: Path, client: str) -> Record:
    """clients/NAME/bench.toml: case SERVER/MODE (bench/clients.py's cell), got its measured figures."""
    return Record(path, f"bench {client}", check_got=check_bench_got,
                  note="case: bench/clients.py's cell (server/mode); got: its measured figures (observed, never typed).")


def checked_runs(work: Path) -> dict:
    """Each bug's reproducer's last run: the kept ones (harness/last_repro.json, committed) with this
    build's (BUILD/work/repro/checked.json) over them."""
    out = {}
    for path in (ROOT / "harness" / "last_repro.json", work / "repro" / "checked.json"):
        try:
            out.update(json.loads(path.read_text()))
        except (OSError, ValueError):
            pass
    return out


# ---- the page ------------------------------------------------------------------------------------

STYLE = """
body { font: 13px/1.45 system-ui, sans-serif; margin: 20px; color: #222; max-width: 110em; }
h1 { font-size: 20px; margin-bottom: 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.note { color: #555; } .bug { border: 1px solid #e7b3b3; border-left: 5px solid #d9534f; padding: 8px 12px; margin: 10px 0; }
.bug h3 { margin: 0 0 4px; font-size: 14px; } code, pre { font-family: monospace; font-size: 12px; }
pre { background: #f6f6f6; padding: 6px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; }
table { border-collapse: collapse; width: 100%; } th, td { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top;
font-size: 12px; overflow-wrap: anywhere; } th { background: #f3f3f3; text-align: left; }
.ok { color: #1a7f37; font-weight: bold; } .no { color: #c00; font-weight: bold; } .never { color: #999; }
table.sum { width: auto; } table.sum td { text-align: right; } td.n { white-space: nowrap; }
"""


def check_mark(f: Finding) -> str:
    c = f.checked
    if not c:
        return '<span class="never">reproducer not run yet (python3 -m harness.repro --check)</span>'
    cls = "ok" if c.get("shows") else "no"
    word = "showed the recorded outcome" if c.get("shows") else "did NOT show the recorded outcome"
    return (f'<span class="{cls}">reproducer run {html.escape(c.get("date", "?"))} on {html.escape(c.get("tree", "?"))}: '
            f'{word}</span> ({html.escape(c.get("observed", ""))})')


def bug_block(f: Finding) -> str:
    rows = "".join(f"<tr><td>{html.escape(s.gate)}</td><td><code>{html.escape(s.case)}</code></td>"
                   f"<td>{html.escape(s.expected)}</td><td>{html.escape(s.recorded)}</td><td>{html.escape(s.where)}</td></tr>"
                   for s in f.cases)
    said = (f"<b>NIST</b>: {html.escape(f.nist)}. " if f.nist else "") + \
           (f"<b>RFC</b>: {html.escape(', '.join(f.rfc))}." if f.rfc else "")
    return (f'<div class="bug" id="{html.escape(f.id)}"><h3>{html.escape(f.client)}: {html.escape(f.named)} '
            f'<span class="note">({html.escape(", ".join(f.gates))}; {len(f.cases)} case'
            f'{"s" if len(f.cases) != 1 else ""}{"; reason " + html.escape(f.reason) if f.reason else ""})</span></h3>'
            f"<div>{html.escape(f.why)}</div><div>{said}</div>"
            f"<table><tr><th>gate</th><th>case</th><th>the reference (tlsnb) / NIST expects</th><th>recorded for "
            f"{html.escape(f.client)}</th><th>record</th></tr>{rows}</table>"
            f"<div>reproduce alone: <pre>{html.escape(f.repro)}</pre>{check_mark(f)}</div>"
            f"<details><summary>report text</summary><pre>{html.escape(f.report)}</pre></details></div>")


def others_table(findings: list[Finding]) -> str:
    rows = "".join(f"<tr><td class=n>{html.escape(f.client)}</td><td class=n>{html.escape(', '.join(f.gates))}</td>"
                   f"<td class=n>{len(f.cases)}</td><td><code>{html.escape(', '.join(s.case for s in f.cases[:4]))}"
                   f"{' ...' if len(f.cases) > 4 else ''}</code></td><td>{html.escape(f.why)}</td></tr>" for f in findings)
    return (f"<table><tr><th>client</th><th>gates</th><th>cases</th><th>which</th><th>why</th></tr>{rows}</table>")


def defaults_table(found: list[dict]) -> str:
    rows = "".join(f"<tr><td class=n>{html.escape(d['client'])}</td><td class=n>{html.escape(d['library'])}</td>"
                   f"<td class=n><code>{html.escape(d['case'])}</code></td><td>{html.escape(text_of(d['measured']))}</td>"
                   f"<td class=n>{html.escape(d['kind'])}</td><td>{html.escape(d['why'])}</td><td class=n>{html.escape(d['where'])}</td></tr>"
                   for d in found)
    return ("<table><tr><th>client</th><th>library</th><th>bench cell</th><th>measured</th><th>kind</th><th>why</th>"
            f"<th>record</th></tr>{rows}</table>")


def summary(findings: list[Finding], clients: list[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in clients)
    lines = []
    for kind in KINDS:
        tds = "".join(f"<td>{sum(1 for f in findings if f.kind == kind and f.client == c)}</td>" for c in clients)
        lines.append(f"<tr><th>{kind}</th>{tds}</tr>")
    return f'<table class="sum"><tr><th></th>{head}</tr>{"".join(lines)}</table>'


def bench_table(seen: list[dict]) -> str:
    if not seen:
        return "<p class='note'>No bench run here (BUILD/work/bench/clients.json) negotiated a group dearer than the floor's.</p>"
    rows = "".join(f"<tr><td>{html.escape(b['client'])}</td><td><code>{html.escape(b['case'])}</code></td>"
                   f"<td>{html.escape(', '.join(b['groups']))}</td><td>{b['cpu_ms_per_conn']}</td>"
                   f"<td>{'recorded' if b['recorded'] else '<span class=no>recorded nowhere</span>'}</td></tr>" for b in seen)
    return ("<p class='note'>The last bench run here (bench/clients.py, BUILD/work/bench/clients.json): the cells "
            "whose client negotiated a group dearer than the floor's (nginx's log).</p><table><tr><th>client</th>"
            f"<th>bench cell</th><th>group</th><th>CPU ms/conn (median)</th><th>record</th></tr>{rows}</table>")


def page(findings: list[Finding], found_defaults: list[dict], seen_bench: list[dict] = ()) -> str:
    bugs = [f for f in findings if f.kind == "bug"]
    clients = list(dict.fromkeys(f.client for f in findings))
    run = [f for f in bugs if f.checked]
    shows = [f for f in run if f.checked.get("shows")]
    parts = [f"<!doctype html><meta charset='utf-8'><title>tlslab: findings</title><style>{STYLE}</style>",
             "<h1>tlslab: findings</h1>",
             f"<p class='note'>From every room's records (clients/NAME/*.toml) and the reproducers' last run. "
             f"{len(bugs)} bugs, {sum(f.kind == 'policy' for f in findings)} policies, "
             f"{sum(f.kind == 'limit' for f in findings)} limits (one finding a recorded entry or shared reason); "
             f"reproducers run: {len(run)} of {len(bugs)}, {len(shows)} showed the recorded outcome. "
             f"Written by <code>/usr/bin/python3 -m harness.findings</code>; the reproducers checked by "
             f"<code>/usr/bin/python3 -m harness.repro --check</code>.</p>", summary(findings, clients),
             f"<h2>Bugs ({len(bugs)})</h2>", *map(bug_block, bugs),
             f"<h2 id='defaults'>Defaults a user pays for ({len(found_defaults)})</h2>",
             "<p class='note'>A library's default, not wrong by any standard, that costs its user a measured "
             "figure (bench/clients.py; recorded in clients/NAME/bench.toml).</p>", defaults_table(found_defaults),
             bench_table(list(seen_bench))]
    for kind in ("policy", "limit"):
        mine = [f for f in findings if f.kind == kind]
        parts += [f"<h2>{kind.capitalize()} ({len(mine)})</h2>", others_table(mine)]
    return "".join(parts)


def write(work: Path, names: OutcomeNames) -> tuple[Path, Path, list[Finding]]:
    findings = collect(names)
    checked = checked_runs(work)
    for f in findings:
        f.checked = checked.get(f.id, {})
    found_defaults = defaults()
    seen_bench = bench_seen(work, found_defaults)
    work.mkdir(parents=True, exist_ok=True)
    js, page_path = work / "findings.json", work / "findings.html"
    js.write_text(json.dumps({"bugs": [asdict(f) for f in findings if f.kind == "bug"],
                              "policies": [asdict(f) for f in findings if f.kind == "policy"],
                              "limits": [asdict(f) for f in findings if f.kind == "limit"],
                              "defaults": found_defaults, "bench": seen_bench}, indent=1, sort_keys=True) + "\n")
    page_path.write_text(page(findings, found_defaults, seen_bench))
    return js, page_path, findings


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, default=ROOT / "build" / "work", help="where findings.json/.html go "
                   "(and where harness.repro --check left checked.json)")
    p.add_argument("--openssl-include", type=Path, default=Path("/usr/include/openssl"))
    p.add_argument("--list", action="store_true", help="print the bugs, one line each, write nothing")
    ns = p.parse_args()
    try:
        names = OutcomeNames(ns.openssl_include)
        if ns.list:
            for f in collect(names):
                if f.kind == "bug":
                    print(f"{f.id}: {len(f.cases)} cases: {f.repro}")
            return 0
        js, page_path, findings = write(ns.work, names)
    except (RowError, UnknownOutcome, OSError) as e:
        print(f"findings: {e}", file=sys.stderr)
        return 2
    bugs = [f for f in findings if f.kind == "bug"]
    print(f"findings: {page_path} and {js.name}: {len(bugs)} bugs, {sum(f.kind == 'policy' for f in findings)} policies, "
          f"{sum(f.kind == 'limit' for f in findings)} limits, reproducers run {sum(bool(f.checked) for f in bugs)}, "
          f"showed the recorded outcome {sum(bool(f.checked.get('shows')) for f in bugs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Finding", "Shown", "collect", "bench_record", "defaults"]

#!/usr/bin/python3
"""The hang guards: every wall<S term left in a verdict, each beside the deadline its client was given,
with the wall observed beside CPU hogs (a measurement, never a verdict).

A verdict judges a property by counting it; the one time it still holds is wall<S in a case row
(client, dns and faults gates) or in a client's record of one, and the loader refuses it unless the
row gives the client --deadline-ms or --dns-timeout-ms (harness/cases.py). S is the guard: a client
that ignores its deadline is killed S + 5 s on and fails, one that keeps it passes with room. How
much room is measured here: each guarded case run by its own gate (tlsnb's, or the crossing's for a
client whose record holds the guard) beside `stress-ng --cpu K`, its slowest transport's wall kept
in bench/hang_guards.tsv with the tree and the load. README.md's table of guards is written from the
rows, the records and that file by harness/readme_tables.py (`table` below), which holds it to them;
`--check` (unit bench_hang_guards) holds the measurements to the guards: a guard with no
measurement, a measurement of a guard that is gone or whose bound changed, fails.

    /usr/bin/python3 -m bench.hang_guards                          # the guards, one line each
    /usr/bin/python3 -m bench.hang_guards --measure --build-dir build [--stress 2] [--client NAME]
    /usr/bin/python3 -m bench.hang_guards --check                  # the measurements against the guards
    /usr/bin/python3 -m harness.readme_tables --write              # then README.md's table
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness.cases import case_record, cell_rows, load_cases
from harness.clients import load_profile
from harness.crossings import tree
from harness.ctest import CTestError, ctest_tests
from harness.expect import WALL
from harness.lab_gate import CpuHog
from harness.rows import RowError

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "hang_guards.tsv"
# The case gates and their rows; a client's record of one is clients/NAME/GATE.toml.
GATES = {"client": ROOT / "client" / "tests" / "client.toml", "dns": ROOT / "dns" / "dns.toml",
         "faults": ROOT / "faults" / "faults.toml"}
FLAG_VALUE = re.compile(r"(--deadline-ms|--dns-timeout-ms)\s+(\d+)")
FIGURE = re.compile(r"^\s+wall (\d+\.\d+) s")
VERDICT = re.compile(r"^(PASS|FAIL) (\S+)")


@dataclass(frozen=True)
class Guard:
    gate: str
    client: str          # tlsnb, or the room whose record holds the guard
    case: str            # the row's case (its transports are measured together)
    bound: float         # S of wall<S
    deadlines: str       # the deadline flags the row gives, e.g. "--deadline-ms 1000"
    where: str

    def key(self) -> tuple[str, str, str]:
        return self.gate, self.client, self.case


def bounds(expect: str) -> list[float]:
    return [float(m[2]) for m in map(WALL.match, expect.split()) if m and m[1] == "<"]


def held_expectations():
    """Every expectation a case gate holds a guarded client to, in file order: each row's as tlsnb's,
    then each cell a client's record holds a difference for, merged (its row's and the record's
    terms), as (gate, client, row, expect, the row's own expect, where)."""
    for gate, path in GATES.items():
        rows = load_cases(path)
        for r in rows:
            yield gate, "tlsnb", r, r.expect, r.expect, str(Path(r.where).relative_to(ROOT)) \
                if r.where.startswith(str(ROOT)) else r.where
        for record in sorted((ROOT / "clients").glob(f"*/{gate}.toml")):
            profile = load_profile(record.parent / "profile.toml", ROOT / "build")
            of_cell = cell_rows(rows, profile)
            held = case_record(profile, gate, {c: r.expect for c, r in of_cell.items()})
            for cell, row in of_cell.items():
                if held.get(cell) is not None:   # else held to the row's own line: listed as tlsnb's
                    got, _ = held.expected(cell, row.expect)
                    yield gate, record.parent.name, row, got, row.expect, str(record.relative_to(ROOT))


def deadlines(row) -> str:
    return " ".join(f"{f} {v}" for f, v in FLAG_VALUE.findall(row.client))


def guards() -> list[Guard]:
    """Every wall<S of the case rows and of the clients' records of them, in file order."""
    found: list[Guard] = []
    seen: set[tuple[str, str, str, float]] = set()
    for gate, client, row, expect, _, where in held_expectations():
        for s in bounds(expect) if expect != "skip" else []:
            if client == "tlsnb" or (gate, client, row.case, s) not in seen:
                seen.add((gate, client, row.case, s))
                found.append(Guard(gate, client, row.case, s, deadlines(row), where))
    return found


def load_data() -> dict[tuple[str, str, str], dict]:
    if not DATA.exists():
        return {}
    with DATA.open() as f:
        lines = [line for line in f if not line.startswith("#")]
    return {(r["gate"], r["client"], r["case"]): r for r in csv.DictReader(lines, delimiter="\t")}


def ctest_command(build: Path, test: str) -> tuple[list[str], dict[str, str]]:
    """The command CTest runs for TEST (Debian's interpreter in place of the CPU meter, unsampled) and its
    environment."""
    try:
        found = next((t for t in ctest_tests(build) if t.name == test), None)
    except CTestError as e:
        raise SystemExit(f"hang_guards: {e}")
    if found is None:
        raise SystemExit(f"hang_guards: CTest has no test {test!r} in {build} (build it: ./run_all.sh --setup-only)")
    command = ["/usr/bin/python3" if c.endswith("/cpu_meter/python3") else c for c in found.command]
    if "--sample" in command:  # --only names the cases; a sample beside it would narrow them again
        at = command.index("--sample")
        end = next((i for i in range(at + 1, len(command)) if command[i].startswith("--")), len(command))
        command = command[:at] + command[end:]
    return command, found.env


def measure(build: Path, chosen: list[Guard]) -> dict[tuple[str, str, str], tuple[str, float]]:
    """Each gate once for its guarded cases: (verdict, the slowest transport's wall) per guard."""
    got: dict[tuple[str, str, str], tuple[str, float]] = {}
    groups: dict[tuple[str, str], list[Guard]] = {}
    for g in chosen:
        groups.setdefault((g.gate, g.client), []).append(g)
    for (gate, client), group in groups.items():
        test = gate if client == "tlsnb" else f"{gate}_{client}"
        cases = sorted({g.case for g in group})
        print(f"  {test}: {len(cases)} guarded case(s)", flush=True)
        command, env = ctest_command(build, test)
        done = subprocess.run([*command, "--only", *cases], capture_output=True, text=True, cwd=ROOT, timeout=1800,
                              env={**os.environ, **env})
        last: Optional[str] = None
        for line in done.stdout.splitlines():
            if m := VERDICT.match(line):
                last = re.sub(r"/(bio|fd)$", "", m[2])
                verdict, wall = got.get((gate, client, last), ("PASS", 0.0))
                got[(gate, client, last)] = ("FAIL" if m[1] == "FAIL" else verdict, wall)
                if m[1] == "FAIL" and (w := re.search(r"wall (\d+\.\d+) s", line)):
                    got[(gate, client, last)] = ("FAIL", max(wall, float(w[1])))
            elif (m := FIGURE.match(line)) and last:
                verdict, wall = got[(gate, client, last)]
                got[(gate, client, last)] = (verdict, max(wall, float(m[1])))
        for g in group:
            if g.key() not in got:
                print(f"  {test} {g.case}: no verdict in the gate's output (exit {done.returncode}): "
                      f"{(done.stderr or done.stdout).strip()[-300:]}", flush=True)
    return got


def write_data(rows: dict[tuple[str, str, str], dict], header: str) -> None:
    with DATA.open("w") as f:
        f.write("# The hang guards' walls, measured (python3 -m bench.hang_guards --measure): each guarded case run\n")
        f.write("# by its gate, both transports, the slowest one's wall in seconds. Figures, not verdicts.\n")
        f.write(f"# {header}\n")
        f.write("gate\tclient\tcase\tbound\twall\tverdict\ttree\tload\n")
        for key in sorted(rows):
            r = rows[key]
            f.write("\t".join(str(r[k]) for k in ("gate", "client", "case", "bound", "wall", "verdict", "tree", "load"))
                    + "\n")


def table(found: list[Guard], data: dict) -> tuple[str, list[str]]:
    """README's table, and what is wrong with the measurements beside the guards."""
    problems = []
    lines = ["| gate | client | case | bound S | deadline given | wall beside hogs | S / wall |", "|---|---|---|---|---|---|---|"]
    for g in found:
        d = data.get(g.key())
        if d is None:
            problems.append(f"{g.where}: {g.client} {g.case}: wall<{g.bound:g} has no measurement in {DATA.name} "
                            f"(python3 -m bench.hang_guards --measure --client {g.client})")
            continue
        if float(d["bound"]) != g.bound:
            problems.append(f"{DATA.name}: {g.client} {g.case}: measured against wall<{d['bound']}, the guard is now "
                            f"wall<{g.bound:g}: measure it again")
        wall = float(d["wall"])
        ratio = f"{g.bound / wall:.1f}x" if wall > 0 else "-"
        lines.append(f"| {g.gate} | {g.client} | {g.case} | {g.bound:g} s | {g.deadlines} | {wall:.2f} s "
                     f"(stress-ng --cpu {d['load']}) | {ratio} |")
    keys = {g.key() for g in found}
    problems += [f"{DATA.name}: {c} {case} ({gate}): a measurement of a guard that is gone (remove it, or --measure)"
                 for (gate, c, case) in data if (gate, c, case) not in keys]
    return "\n".join(lines), problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--measure", action="store_true", help="run each guarded case and record its wall")
    p.add_argument("--build-dir", type=Path, default=ROOT / "build", help="the build tree (default build/)")
    p.add_argument("--stress", type=int, default=2, metavar="K", help="with --measure: beside stress-ng --cpu K "
                                                                       "(default 2: both cores taken; 0: none)")
    p.add_argument("--client", action="append", help="with --measure: only these clients (tlsnb, a room)")
    p.add_argument("--check", action="store_true", help="fail unless every guard has a measurement of its bound "
                                                         "and every measurement a guard")
    ns = p.parse_args()
    try:
        found = guards()
    except RowError as e:
        print(f"hang_guards: {e}", file=sys.stderr)
        return 2
    if ns.measure:
        chosen = [g for g in found if not ns.client or g.client in ns.client]
        if not chosen:
            print(f"hang_guards: no guard for {ns.client}", file=sys.stderr)
            return 2
        started = time.monotonic()
        if ns.stress:
            with CpuHog(3600, ns.stress):
                got = measure(ns.build_dir, chosen)
        else:
            got = measure(ns.build_dir, chosen)
        data = load_data()
        measured_on = tree()
        for g in chosen:
            if g.key() in got:
                verdict, wall = got[g.key()]
                data[g.key()] = {"gate": g.gate, "client": g.client, "case": g.case, "bound": f"{g.bound:g}",
                                 "wall": f"{wall:.2f}", "verdict": verdict, "tree": measured_on, "load": ns.stress}
                print(f"  {verdict} {g.gate} {g.client} {g.case}: wall {wall:.2f} s of {g.bound:g}", flush=True)
        write_data(data, f"last measured on {measured_on}, {time.strftime('%Y-%m-%d')}, "
                         f"in {time.monotonic() - started:.0f} s")
        return 0
    data = load_data()
    problems = table(found, data)[1]
    if ns.check:
        for problem in problems:
            print(f"hang_guards: {problem}", file=sys.stderr)
        print(f"hang_guards: {len(found)} guards, {len(problems)} problem(s)")
        return 1 if problems else 0
    for g in found:
        d = data.get(g.key(), {})
        print(f"{g.gate:7} {g.client:8} {g.case:45} wall<{g.bound:<5g} {g.deadlines:40} "
              f"measured {d.get('wall', '-')} s beside stress-ng --cpu {d.get('load', '-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

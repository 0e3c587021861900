"""Gate rows, as CTest runs them: a mutant is judged by the gate's own rows, not by copies.

CTest knows every gate's command line (`ctest --show-only=json-v1`). A gate row LABEL:CASE is
found among the tests of LABEL: a test whose name matches CASE (whole gates such as
dns_judge_oracle), or a gate script whose `--list` prints a case CASE matches (a glob: GoogleTest
units, harness/units.py, `unit:DnsJudge.*`; then it runs with `--only CASE`). To run a row against a mutant, its command runs with each of the build's
programs replaced by the mutant's: the row's data, runner and flags are the gate's own.

    rows = GateRows(Path("build"))
    row = rows.resolve("faults:PartialIo/bio")
    ok, detail, seconds = rows.run(row, {"/abs/build/client/tlsnb": "/tmp/mutant/tlsnb"}, work)
"""
from __future__ import annotations

import fnmatch
import os
import time
from dataclasses import dataclass
from pathlib import Path

from harness import RowError, bounded
from harness.ctest import CTestError, Test, ctest_tests as list_tests

ROW_LIMIT_S = 120.0   # a row past this (or past its test's TIMEOUT, if shorter) is killed: a kill
LIST_LIMIT_S = 15.0   # a gate's --list reads its rows: seconds at most
RUN_LIMIT_S = 30.0    # one client run inside a case gate (harness/cases.py), against a mutant: a hang costs this


@dataclass
class GateRow:
    ref: str              # LABEL:CASE as the mutant names it
    tests: list[Test]     # what runs: each test's command (+ --only CASE for a gate script)
    case: str | None      # the case id passed with --only, None for whole tests

    def argv(self, test: Test) -> list[str]:
        return test.command + (["--only", self.case] if self.case else [])


def ctest_tests(build_dir: Path) -> list[Test]:
    """Every CTest test of the build, with its command, labels, environment and timeout."""
    try:
        return list_tests(build_dir)
    except CTestError as e:
        raise RowError(str(e)) from e


class GateRows:
    def __init__(self, build_dir: Path):
        self.tests = ctest_tests(build_dir)
        self._lists: dict[str, list[str]] = {}

    def cases_of(self, test: Test) -> list[str]:
        """The case ids a gate script prints with --list ([] for a test that is not one)."""
        if test.name not in self._lists:
            cases: list[str] = []
            if test.command and test.command[0].endswith("python3"):
                # a gate that ignored --list would run whole here (alloc_sweep.py did: 60 s a resolve)
                rc, out, _, hung = bounded(test.command + ["--list"], LIST_LIMIT_S, {**os.environ, **test.env})
                if hung:
                    raise RowError(f"{test.name}: `--list` still running after {LIST_LIMIT_S:.0f} s "
                                   f"(a gate must print its cases and run nothing)")
                cases = out.split() if rc == 0 else []
            self._lists[test.name] = cases
        return self._lists[test.name]

    def resolve(self, ref: str) -> GateRow:
        label, case = ref.split(":", 1)
        of_label = [t for t in self.tests if label in t.labels]
        if not of_label:
            raise RowError(f"no CTest test has the label {label!r} (in {ref})")
        whole = [t for t in of_label if fnmatch.fnmatchcase(t.name, case)]
        if whole:
            return GateRow(ref, whole, None)
        holding = [t for t in of_label if any(fnmatch.fnmatchcase(c, case) for c in self.cases_of(t))]
        if len(holding) != 1:
            raise RowError(f"{ref}: {'no' if not holding else 'more than one'} gate of label {label!r} has the case "
                           f"{case!r} (a test's name, or a case its --list prints)")
        return GateRow(ref, holding, case)

    def run(self, row: GateRow, programs: dict[str, str], work: Path,
            limit: float = ROW_LIMIT_S) -> tuple[bool, str, float]:
        """Runs ROW with each program path in PROGRAMS replaced: (held, what it said, seconds).
        LIMIT: the seconds a run may take (at most its test's TIMEOUT) before it is killed."""
        start = time.monotonic()
        for test in row.tests:
            argv = own_work([programs.get(a, a) for a in row.argv(test)], work / test.name)
            env = {k: v for k, v in {**os.environ, **test.env, "TLSLAB_WORK": str(work), "TLSLAB_FAIL_FAST": "1",
                                     "TLSLAB_RUN_LIMIT": f"{RUN_LIMIT_S:.0f}"}.items()
                   if k != "TLSLAB_JUNIT_DIR"}   # a mutant's run is not the gate's result; its first FAIL is the kill
            seconds = min(test.timeout, limit)
            rc, out, err, hung = bounded(argv, seconds, env)
            if hung:
                return False, f"{test.name}: ran past {seconds:.0f} s (killed)", time.monotonic() - start
            if rc == 2 and argv[0].endswith("python3"):  # a gate of the lab's refusing its input
                raise RowError(f"{row.ref}: {test.name} exit 2, its input refused (not a kill): {first_failure(out, err)}")
            if rc != 0:
                return False, f"{test.name}: exit {rc}: {first_failure(out, err)}", time.monotonic() - start
        last = [ln for ln in out.splitlines() if ln.strip()][-1:] if row.tests else []
        return True, (last[0].strip() if last else "passed"), time.monotonic() - start

    def programs_in(self, row: GateRow, paths: set[str]) -> set[str]:
        """Which of PATHS (the build's programs) the row's commands run."""
        return {a for t in row.tests for a in row.argv(t) if a in paths}


def own_work(argv: list[str], folder: Path) -> list[str]:
    """A gate's command that names its scratch folder (`--work DIR`, as the matrix gates do) gets the
    mutant run's own: a mutant's cells must never land where the gate's results page reads them."""
    out = list(argv)
    for i, a in enumerate(out[:-1]):
        if a == "--work":
            out[i + 1] = str(folder)
    return out


def first_failure(out: str, err: str) -> str:
    """The first FAIL line of a gate, or GoogleTest's, or the end of stderr."""
    for line in out.splitlines():
        if line.startswith(("FAIL ", "[  FAILED  ]")) or "property does not hold" in line:
            return line.strip()[:300]
    for line in err.splitlines():
        if "ERROR:" in line or "property does not hold" in line:
            return line.strip()[:300]
    return (err.strip() or out.strip())[-300:]

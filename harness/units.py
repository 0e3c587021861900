"""One GoogleTest program as one CTest test (label unit): every case a line of the lab's own tally.

    /usr/bin/python3 -m harness.units BUILD/client/tests/tlsnb_units [--prefix contract.] [--list] [--only GLOB ...]

A case used to be a CTest test of its own (gtest_discover_tests): 248 processes, each paying an
ASan program's start (about 70 ms of CPU a case, 25 CPU-seconds a gate, for 1.4 s of tests). Here
the program runs once with --gtest_output=xml, and each <testcase> of its report is a PASS, FAIL or
SKIP line (a JUnit case under TLSLAB_JUNIT_DIR, as every gate's). The tally is held to what the
program itself lists (--gtest_list_tests): a case listed and not reported fails, so a crash part
way, or a filter left in the environment, cannot pass as fewer cases. The program's exit status is
a case too (`exit`): LeakSanitizer reports at exit, after every case has passed. `--list` prints the
case names and `--only GLOB` runs those that match (GoogleTest's filter), as every gate does, so a
mutant's row `unit:DnsJudge.*` runs one process (mutants/gate_rows.py).
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from .gate import Gate

TIMEOUT_S = 300   # CTest's TIMEOUT for the test is below this: a hang is CTest's to report


def listed(program: Path) -> list[str]:
    """SUITE.CASE of every case the program has, as --gtest_list_tests prints them."""
    out = subprocess.run([str(program), "--gtest_list_tests"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    names, suite = [], ""
    for line in out.splitlines():
        text = line.split("#")[0].rstrip()
        if not text:
            continue
        if not line.startswith(" "):
            suite = text
        else:
            names.append(suite + text.strip())
    return names


def reported(path: Path) -> dict[str, tuple[str, str]]:
    """SUITE.CASE: (PASS|FAIL|SKIP, detail) from the program's XML report."""
    cases = {}
    for case in ET.parse(path).iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        failures = [f.get("message") or f.text or "failed" for f in case.iter("failure")]
        if failures:
            cases[name] = ("FAIL", " | ".join(" ".join(m.split()) for m in failures)[:2000])
        elif case.find("skipped") is not None or case.get("result") == "skipped":
            cases[name] = ("SKIP", "skipped by the program (GTEST_SKIP)")
        else:
            cases[name] = ("PASS", "")
    return cases


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("program", type=Path, help="a GoogleTest program")
    p.add_argument("--prefix", default="", help="put before every case name (contract., proxy.)")
    p.add_argument("--list", action="store_true", help="print the case names, run nothing")
    p.add_argument("--only", nargs="+", metavar="GLOB", help="run the cases whose names match")
    ns = p.parse_args(argv)
    if not os.access(ns.program, os.X_OK):
        print(f"harness.units: {ns.program}: not an executable program (build the tree first)", file=sys.stderr)
        return 2
    env = {k: v for k, v in os.environ.items() if not k.startswith("GTEST_")}  # no filter from outside
    names = listed(ns.program)
    if ns.list:
        print("\n".join(ns.prefix + n for n in names))
        return 0
    args = []
    if ns.only:
        names = [n for n in names if any(fnmatch.fnmatchcase(ns.prefix + n, g) for g in ns.only)]
        if not names:
            print(f"harness.units: {ns.program.name}: no case matches {' '.join(ns.only)} (--list names them)",
                  file=sys.stderr)
            return 2
        args = ["--gtest_filter=" + ":".join(names)]
    gate = Gate(ns.program.name)
    with tempfile.TemporaryDirectory(prefix="tlslab-units-") as tmp:
        report = Path(tmp) / "report.xml"
        try:
            run = subprocess.run([str(ns.program), f"--gtest_output=xml:{report}", *args], env=env,
                                 capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            gate.check("exit", False, f"no end within {TIMEOUT_S} s")
            return gate.finish()
        cases = reported(report) if report.is_file() else {}
    for name in names:
        verdict, detail = cases.pop(name, ("FAIL", "listed by the program, never reported (a crash part way?)"))
        if verdict == "SKIP":
            gate.skip(ns.prefix + name, detail)
        else:
            gate.check(ns.prefix + name, verdict == "PASS", detail)
    for name in cases:
        gate.check(ns.prefix + name, False, "reported, never listed by --gtest_list_tests")
    tail = " | ".join(run.stderr.strip().splitlines()[-6:]) or " | ".join(run.stdout.strip().splitlines()[-6:])
    gate.check("exit", run.returncode == 0, f"exit {run.returncode}" + (f": {tail}" if run.returncode else ""))
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The lab's whole gate: the CTest labels asked (every one but `full` by default), run together on
the machine's cores by one CTest run, then one table and one line `tlslab: N passed, N failed`.

CTest's labels are the one list of gates: this reads them from the build (`ctest --show-only`),
and so do clients/cross.py, the CI workflow's check and README's table (harness/tests/test_labels.py).

    /usr/bin/python3 -m harness.lab_gate --build-dir build                 # what ./run_all.sh runs
    /usr/bin/python3 -m harness.lab_gate --build-dir build --label matrix  # one label (repeatable)
    /usr/bin/python3 -m harness.lab_gate --build-dir build --stress 3      # 3 runs beside a one-core CPU hog
    /usr/bin/python3 -m harness.lab_gate --build-dir build --profile       # where the time went

Every test runs once: nothing is run again because it failed (`--stress` runs the whole gate N
times on purpose and says so). Tests run side by side by their PROCESSORS (tlslab_gate()'s CORES):
the gates' timing terms compare with controls of the same run, so a busy machine moves no verdict.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .ctest import CTestError, Test, ctest_tests as list_tests
from .layout import ROOT, python_command
from .runs import die_with_parent

FULL = "full"   # the uncut crossings: only when asked (--full, or --label full)


class LabGateError(Exception):
    """A gate that cannot start: no build, an unknown label (one line, exit 2)."""


@dataclass
class Result:
    name: str
    status: str          # passed | failed | not run
    seconds: float
    output: str = ""


@dataclass
class Run:
    """One CTest run of the selected labels."""
    results: dict[str, Result] = field(default_factory=dict)
    wall_s: float = 0.0
    log: Optional[Path] = None

    def failed(self, tests: Optional[list[Test]] = None) -> list[str]:
        """The tests that did not pass: of TESTS when given (one CTest never ran counts), else of the results."""
        names = [t.name for t in tests] if tests is not None else list(self.results)
        return sorted(n for n in names if n not in self.results or self.results[n].status not in ("passed", "skipped"))

    def skipped(self) -> list[str]:
        return sorted(n for n, r in self.results.items() if r.status == "skipped")


def ctest_tests(build: Path) -> list[Test]:
    """Every CTest test of BUILD (harness/ctest.py): the one list of gates."""
    try:
        return list_tests(build)
    except CTestError as e:
        raise LabGateError(str(e)) from e


def clients_under_test() -> list[str]:
    """The rooms of clients/ with a profile but the reference's: cmake/tlslab.cmake's rule
    (tlslab_clients_under_test), whose tests are named GATE_CLIENT."""
    return sorted(p.parent.name for p in (ROOT / "clients").glob("*/profile.toml") if p.parent.name != "tlsnb")


def labels_of(tests: list[Test]) -> list[str]:
    """The labels, in the order their first test was defined (the root CMakeLists.txt's folder order)."""
    seen: dict[str, None] = {}
    for t in tests:
        for label in t.labels:
            seen.setdefault(label, None)
    return list(seen)


def choose(all_labels: list[str], asked: list[str], full: bool) -> list[str]:
    """The labels to run: ASKED, or every one but `full` (with it when FULL)."""
    unknown = [label for label in asked if label not in all_labels]
    if unknown:
        raise LabGateError(f"--label {unknown[0]}: no such CTest label (one of: {' '.join(all_labels)})")
    if asked:
        return [label for label in all_labels if label in asked]
    return [label for label in all_labels if label != FULL or full]


def junit_results(path: Path) -> dict[str, Result]:
    """CTest's --output-junit file: each test's status, time and output."""
    results = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        status = {"run": "passed", "fail": "failed"}.get(case.get("status", ""), "not run")
        skipped = case.find("skipped")
        if status == "not run" and skipped is not None and skipped.get("message", "").startswith("SKIP_"):
            status = "skipped"   # the test said so itself (a GoogleTest GTEST_SKIP: TLS 1.3 has no renegotiation)
        out = case.findtext("system-out") or ""
        results[case.get("name")] = Result(case.get("name"), status, float(case.get("time") or 0), out)
    return results


PROGRESS = re.compile(r"^\s*(\d+)/(\d+) Test +#\d+: (.+?) \.{2,}\s*(.*?)\s+([\d.]+) sec$")


def run_ctest(build: Path, labels: list[str], jobs: int, log: Path, env: dict, tests: Optional[str] = None,
              exclude: Optional[str] = None) -> Run:
    """One CTest run of LABELS (the tests matching TESTS and not EXCLUDE, regular expressions, when
    given), JOBS processors at once; its progress one line a test as each ends."""
    junit = Path(env["TLSLAB_JUNIT_DIR"]) / "ctest.xml"
    argv = ["ctest", "--test-dir", str(build), "-L", "^(" + "|".join(map(re.escape, labels)) + ")$",
            "-j", str(jobs), "--output-on-failure", "--no-tests=error", "--output-junit", str(junit)]
    argv += ["-R", tests] if tests else []
    argv += ["-E", exclude] if exclude else []
    began = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                preexec_fn=die_with_parent, errors="replace")
        try:
            for line in proc.stdout:
                out.write(line)
                if m := PROGRESS.match(line):
                    mark = "" if m[4].startswith("Passed") else f"  {m[4].strip('* ')}"
                    name = m[3].split("  #")[0]   # a parameterised unit's comment left out
                    print(f"  [{m[1]:>3}/{m[2]} at {time.monotonic() - began:4.0f} s] {name} {float(m[5]):.0f} s{mark}",
                          flush=True)
            proc.wait()
        except KeyboardInterrupt:  # ctest stops its tests; the gates clean up on SIGTERM
            proc.send_signal(signal.SIGINT)
            proc.wait()
            raise
    run = Run(wall_s=time.monotonic() - began, log=log)
    run.results = junit_results(junit) if junit.is_file() else {}
    if not run.results:
        raise LabGateError(f"ctest wrote no results (see {log})")
    return run


@dataclass
class LabelRow:
    label: str
    passed: int
    total: int
    seconds: float

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed == self.total else "FAIL"


def label_rows(tests: list[Test], labels: list[str], run: Run) -> list[LabelRow]:
    rows = []
    for label in labels:
        mine = [t for t in tests if label in t.labels]
        ran = [run.results[t.name] for t in mine if t.name in run.results]
        rows.append(LabelRow(label, sum(r.status in ("passed", "skipped") for r in ran), len(mine),
                             sum(r.seconds for r in ran)))
    return rows


def failure_lines(result: Result, limit: int = 12) -> list[str]:
    """The lines of a failed test's output that say what failed (its gate's FAIL lines, a sanitizer's report)."""
    keep = [line for line in result.output.splitlines()
            if re.match(r"^(FAIL|ERROR|.*(rerun|reproduce):|.*: (FAIL|error)|==\d+==ERROR|\[  FAILED  \])", line)]
    return (keep or result.output.strip().splitlines()[-limit:])[:limit]


def print_summary(rows: list[LabelRow], run: Run, repeats: list[str]) -> None:
    print("\ntlslab summary (labels ran side by side; seconds: the sum of their tests' times)")
    print(f"  {'label':<8} {'result':<6} {'tests':<8} seconds")
    for r in rows:
        print(f"  {r.label:<8} {r.verdict:<6} {f'{r.passed}/{r.total}':<8} {r.seconds:.0f}")
    by_gate = Counter(line.split(":", 1)[0] for line in repeats)
    print(f"  wall: {run.wall_s:.0f} s   repeated: " + (", ".join(f"{g} {n} run(s) (diagnosis, not verdict)"
                                                             for g, n in by_gate.items()) or "nothing"))
    for line in repeats[:3]:
        print(f"    {line}")
    if len(repeats) > 3:
        print(f"    ... every one in its gate's JUnit file (<property name=\"repeat\">)")
    for name in run.failed():
        result = run.results[name]
        print(f"FAIL {name} ({result.status}, {result.seconds:.0f} s):")
        for line in failure_lines(result):
            print(f"    {line[:300]}")
    if run.failed() or any(r.verdict == "FAIL" for r in rows):
        print(f"  the whole log: {run.log}")


def repeats_in(junit_dir: Path) -> list[str]:
    """What a gate ran again on purpose (Gate.repeat: a diagnosis, never a verdict), from its JUnit file."""
    found = []
    for path in sorted(junit_dir.glob("*.xml")):
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError:
            continue
        for prop in root.iter("property"):
            if prop.get("name") == "repeat":
                found.append(f"{path.stem}: {prop.get('value')}")
    return found


def profile(junit_dir: Path, tests: list[Test], run: Run, top: int = 25) -> None:
    """Where the time went: each label's tests by seconds, then the slowest rows of every gate."""
    print("\nprofile: the tests, slowest first (seconds, label)")
    label_of = {t.name: ",".join(t.labels) for t in tests}
    ranked = sorted(run.results.values(), key=lambda r: -r.seconds)
    for r in ranked[:top]:
        print(f"  {r.seconds:7.1f}  {label_of.get(r.name, '?'):<8} {r.name}")
    rows = []
    for path in sorted(junit_dir.glob("*.xml")):
        if path.name == "ctest.xml":
            continue
        try:
            for case in ET.parse(path).getroot().iter("testcase"):
                rows.append((float(case.get("time") or 0), path.stem, case.get("name")))
        except ET.ParseError:
            continue
    print(f"\nprofile: the slowest rows of the gates ({len(rows)} rows in {len(list(junit_dir.glob('*.xml'))) - 1} files)")
    for secs, gate, case in sorted(rows, reverse=True)[:top]:
        print(f"  {secs:7.1f}  {gate}: {case}")


def fresh_junit(build: Path) -> Path:
    folder = build / "junit"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def selected(ns, tests: list[Test], labels: list[str]) -> list[Test]:
    """The tests the run asks CTest for: of LABELS, matching --tests and not --exclude (as ctest -R, -E)."""
    return [t for t in tests if set(t.labels) & set(labels) and (not ns.tests or re.search(ns.tests, t.name))
            and not (ns.exclude and re.search(ns.exclude, t.name))]


def once(ns, tests: list[Test], labels: list[str], tag: str = "") -> Run:
    junit = fresh_junit(ns.build_dir)
    env = {**os.environ, "TLSLAB_JUNIT_DIR": str(junit)}
    if ns.full:
        env["TLSLAB_FULL"] = "1"
    print(f"== ctest -L {' '.join(labels)} (-j {ns.jobs}){tag}", flush=True)
    run = run_ctest(ns.build_dir, labels, ns.jobs, ns.build_dir / f"ctest{tag.replace(' ', '-')}.log", env,
                    ns.tests, ns.exclude)
    print_summary(label_rows(selected(ns, tests, labels), labels, run), run, repeats_in(junit))
    if ns.profile:
        profile(junit, tests, run)
    if {"clients", "pkits"} & set(labels):   # the gates that cross every client
        results_page(junit, ns.build_dir / "work")
    return run


def results_page(junit: Path, work: Path) -> None:
    """The one picture of every client (clients/results_page.py): written after a run that crossed
    the clients, its path printed; never part of the verdict."""
    out = work / "results.html"
    done = subprocess.run([*python_command(ROOT / "clients" / "results_page.py"), "--junit", str(junit),
                           "--work", str(work), "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    print((done.stdout or done.stderr).strip() or f"results page: exit {done.returncode}", flush=True)


class CpuHog:
    """stress-ng --cpu 1 (Debian's stress-ng), bounded in time, stopped on the way out however we leave."""

    def __init__(self, seconds: int):
        if not shutil.which("stress-ng"):
            raise LabGateError("--stress needs stress-ng (apt-get install stress-ng; run_all.sh installs it)")
        self.proc = subprocess.Popen(["stress-ng", "--cpu", "1", "--timeout", f"{seconds}s", "--quiet"],
                                     start_new_session=True, preexec_fn=die_with_parent)

    def __enter__(self) -> "CpuHog":
        return self

    def __exit__(self, *exc) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


def stress(ns, tests: list[Test], labels: list[str]) -> int:
    """The gate N times with a one-core CPU hog beside it; every test that failed in any run, counted."""
    failures: Counter = Counter()
    walls = []
    with CpuHog(seconds=ns.stress * 3600):
        for i in range(1, ns.stress + 1):
            run = once(ns, tests, labels, tag=f" stress {i} of {ns.stress}")
            walls.append(run.wall_s)
            failures.update(run.failed(selected(ns, tests, labels)))
    print(f"\nstress: {ns.stress} runs beside stress-ng --cpu 1, wall {', '.join(f'{w:.0f}' for w in walls)} s")
    if not failures:
        print("  every test held in every run")
    for name, n in failures.most_common():
        print(f"  {name:<40} failed in {n} of {ns.stress}")
    total = len(selected(ns, tests, labels))
    failed, skipped = len(failures), len(run.skipped())
    print(f"tlslab: {total - failed - skipped} passed, {failed} failed (in any of {ns.stress} runs)"
          + (f", {skipped} skipped (by the test itself)" if skipped else ""))
    return 1 if failures else 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[2:]))
    p.add_argument("--build-dir", type=Path, required=True, help="the configured and built tree")
    p.add_argument("--label", action="append", default=[], help="run only this label (repeatable)")
    p.add_argument("--full", action="store_true", help="also the uncut crossings (label full)")
    p.add_argument("--jobs", type=int, default=2 * (os.cpu_count() or 1),
                   help="CTest's processors: tests run side by side up to this sum of their PROCESSORS "
                        "(default: twice the cores; a gate that keeps both cores busy asks for most of them)")
    p.add_argument("--stress", type=int, metavar="N", help="run the gate N times beside a one-core CPU hog")
    p.add_argument("--profile", action="store_true", help="after the run: the slowest tests and rows")
    p.add_argument("--tests", metavar="REGEX", help="only the tests whose name matches (ctest -R): one client's "
                                                    "crossings are '_go$' (tests are named GATE_CLIENT)")
    p.add_argument("--exclude", metavar="REGEX", help="not the tests whose name matches (ctest -E)")
    p.add_argument("--exclude-clients", action="store_true",
                   help="not the tests that cross the gates over a client under test (named GATE_CLIENT)")
    p.add_argument("--list-labels", action="store_true",
                   help="print the labels a run would take (CTest's; full only with --full), run nothing")
    p.add_argument("--list-clients", action="store_true", help="print the clients under test, run nothing")
    p.add_argument("--json", action="store_true", help="with --list-*: one JSON list (a CI matrix)")
    return p


def parse_args(argv=None) -> argparse.Namespace:
    p = parser()
    ns = p.parse_args(argv)
    ns.build_dir = ns.build_dir.resolve()
    if ns.stress is not None and ns.stress < 1:
        p.error("--stress: N must be at least 1")
    return ns


def main(argv=None) -> int:
    ns = parse_args(argv)
    try:
        tests = ctest_tests(ns.build_dir)
        all_labels = labels_of(tests)
        labels = choose(all_labels, ns.label, ns.full)
        if ns.list_labels or ns.list_clients:
            shown = labels if ns.list_labels else clients_under_test()
            print(json.dumps(shown) if ns.json else "\n".join(shown))
            return 0
        if ns.exclude_clients:
            names = "|".join(map(re.escape, clients_under_test()))
            ns.exclude = "|".join(x for x in (ns.exclude, f"_({names})$") if x)
        if ns.stress:
            return stress(ns, tests, labels)
        run = once(ns, tests, labels)
    except LabGateError as e:
        print(f"lab_gate: {e}", file=sys.stderr)
        return 2
    chosen = selected(ns, tests, labels)
    failed, skipped = len(run.failed(chosen)), len(run.skipped())
    print(f"tlslab: {len(chosen) - failed - skipped} passed, {failed} failed"
          + (f", {skipped} skipped (by the test itself)" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The lab's whole gate: the CTest labels asked (every one but `full` by default), run together on
the machine's cores by one CTest run, then one table and one line `tlslab: N passed, N failed`.

CTest's labels are the one list of gates: this reads them from the build (`ctest --show-only`),
and so do clients/cross.py, the CI workflow's check and README's table (harness/tests/test_gate_lists.py).

    /usr/bin/python3 -m harness.lab_gate --build-dir build                 # what ./run_all.sh runs
    /usr/bin/python3 -m harness.lab_gate --build-dir build --label matrix  # one label (repeatable)
    /usr/bin/python3 -m harness.lab_gate --build-dir build --stress 3      # 3 runs beside a one-core CPU hog
    /usr/bin/python3 -m harness.lab_gate --build-dir build --stress 3 --stress-cores 2   # beside two hogs
    /usr/bin/python3 -m harness.lab_gate --build-dir build --profile       # where the time and the CPU went

Every test runs once: nothing is run again because it failed (`--stress` runs the whole gate N
times on purpose and says so). Tests run side by side by their PROCESSORS (tlslab_gate()'s CORES):
the gates' timing terms compare with controls of the same run, so a busy machine moves no verdict.

Where the CPU goes: each tlslab_gate() test runs under harness/cpu_meter.c (in the interpreter's
place), which writes the CPU-seconds (user + system) of the test's whole process tree to
TLSLAB_CPU_DIR (BUILD/work/cpu, made afresh each run); the summary adds them up per label, beside
CTest's whole tree (this process's children, ctest and every test it ran: what the meter does not
see, a test not registered by tlslab_gate (none in this tree: the GoogleTest programs run through
harness/units.py), is the difference) and the machine's
busy CPU-seconds over the run (/proc/stat: everything that ran on it, a stress hog included).

How CTest's JUnit is read (harness/tests/test_lab_gate.py holds it): status `run` is passed, `fail`
failed; `notrun` is failed unless its <skipped> message starts with SKIP_ (CTest's
SKIP_RETURN_CODE=N or SKIP_REGULAR_EXPRESSION_MATCHED: the test said so itself, e.g. GoogleTest's
GTEST_SKIP); any other status (`disabled`, none, one CTest may add) is not passed; a selected test
with no <testcase> at all is failed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
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
from .runs import die_with_parent, end_group

FULL = "full"   # the uncut crossings: only when asked (--full, or --label full)
CPU_DIR = "TLSLAB_CPU_DIR"   # where harness/cpu_meter.c writes each test's CPU-seconds (TEST.json)
METER = "cpu_meter/python3"  # the meter's path ends so (harness/CMakeLists.txt)
PASSED = ("passed", "skipped")   # the only statuses that are not a failure


class LabGateError(Exception):
    """A gate that cannot start: no build, an unknown label (one line, exit 2)."""


@dataclass
class Result:
    name: str
    status: str          # passed | failed | skipped | not run | the status CTest wrote, when unknown
    seconds: float
    output: str = ""
    cpu_s: Optional[float] = None   # user + system of its whole tree (cpu_meter.c); None: not measured


@dataclass
class Run:
    """One CTest run of the selected labels."""
    results: dict[str, Result] = field(default_factory=dict)
    wall_s: float = 0.0
    log: Optional[Path] = None
    tree_cpu_s: float = 0.0      # ctest and everything it waited for (this process's RUSAGE_CHILDREN)
    ctest_self_s: Optional[float] = None   # ctest's own part of it (its zombie's /proc/PID/stat)
    machine_busy_s: float = 0.0  # every core's busy time over the run (/proc/stat), whatever ran
    cores: int = 1

    def failed(self, tests: Optional[list[Test]] = None) -> list[str]:
        """The tests that did not pass: of TESTS when given (one CTest never ran counts), else of the results."""
        names = [t.name for t in tests] if tests is not None else list(self.results)
        return sorted(n for n in names if n not in self.results or self.results[n].status not in PASSED)

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


def junit_status(case: ET.Element) -> str:
    """One <testcase>'s status as CTest 3.25 writes it (observed: run, fail, notrun, disabled): only
    `run` is passed, and a `notrun` whose <skipped> message starts with SKIP_ is skipped; anything
    else is not passed (an unknown status is named as written, never read as a pass)."""
    written = case.get("status", "")
    if written == "run":
        return "passed"
    if written == "fail":
        return "failed"
    skipped = case.find("skipped")
    if written == "notrun" and skipped is not None and skipped.get("message", "").startswith("SKIP_"):
        return "skipped"   # the test said so itself (a GoogleTest GTEST_SKIP: TLS 1.3 has no renegotiation)
    return "not run" if written in ("notrun", "disabled") else f"status {written!r}"


def junit_results(path: Path) -> dict[str, Result]:
    """CTest's --output-junit file: each test's status, time and output."""
    results = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        out = case.findtext("system-out") or ""
        results[case.get("name")] = Result(case.get("name"), junit_status(case), float(case.get("time") or 0), out)
    return results


def cpu_figures(folder: Path) -> dict[str, float]:
    """What harness/cpu_meter.c wrote: each test's CPU-seconds (user + system, its whole tree)."""
    figures = {}
    for path in sorted(folder.glob("*.json")):
        try:
            fig = json.loads(path.read_text())
            figures[str(fig["test"])] = float(fig["cpu_s"])
        except (OSError, ValueError, KeyError, TypeError):
            continue   # a meter killed mid-write leaves no figure: that test shows as not measured
    return figures


def machine_busy_s() -> float:
    """Every core's busy CPU-seconds since boot (/proc/stat's first line: user nice system idle iowait
    irq softirq steal ...; busy is all of the first eight but idle and iowait; guest is inside user)."""
    jiffies = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(jiffies) - jiffies[3] - jiffies[4]) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def own_cpu_s(pid: int) -> Optional[float]:
    """A child's own CPU-seconds (not its children's), read once it has ended and before it is reaped:
    waitid(WNOWAIT) leaves it a zombie, whose /proc/PID/stat still holds utime and stime."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ChildProcessError, IndexError, ValueError):
        return None


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
    cpu_dir = Path(env[CPU_DIR]) if env.get(CPU_DIR) else None
    busy0, tree0 = machine_busy_s(), children_cpu_s()
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
            ctest_self = own_cpu_s(proc.pid)
            proc.wait()
        except KeyboardInterrupt:  # ctest stops its tests; the gates clean up on SIGTERM
            proc.send_signal(signal.SIGINT)
            proc.wait()
            raise
    run = Run(wall_s=time.monotonic() - began, log=log, tree_cpu_s=children_cpu_s() - tree0,
              machine_busy_s=machine_busy_s() - busy0, cores=os.cpu_count() or 1, ctest_self_s=ctest_self)
    run.results = junit_results(junit) if junit.is_file() else {}
    if not run.results:
        raise LabGateError(f"ctest wrote no results (see {log})")
    attach_cpu(run, cpu_figures(cpu_dir) if cpu_dir else {})
    return run


def attach_cpu(run: Run, figures: dict[str, float]) -> None:
    """Each figure to its test's result (a figure of a test with no result is no test of this run)."""
    for name, cpu in figures.items():
        if name in run.results:
            run.results[name].cpu_s = cpu


@dataclass
class LabelRow:
    label: str
    passed: int
    total: int
    seconds: float
    cpu_s: float = 0.0     # the CPU-seconds of its measured tests
    unmeasured: int = 0    # its tests with no CPU figure

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed == self.total else "FAIL"


def label_row(label: str, mine: list[Test], run: Run) -> LabelRow:
    ran = [run.results[t.name] for t in mine if t.name in run.results]
    return LabelRow(label, sum(r.status in PASSED for r in ran), len(mine), sum(r.seconds for r in ran),
                    sum(r.cpu_s for r in ran if r.cpu_s is not None), sum(r.cpu_s is None for r in ran) + len(mine) - len(ran))


def label_rows(tests: list[Test], labels: list[str], run: Run) -> list[LabelRow]:
    return [label_row(label, [t for t in tests if label in t.labels], run) for label in labels]


def unmeasured(tests: list[Test], run: Run) -> tuple[Counter, list[str]]:
    """The tests with no CPU figure: those not run through the meter, by program (a test added by
    add_test or gtest_discover_tests, not tlslab_gate), and those that were but wrote none (killed)."""
    by_program: Counter = Counter()
    lost = []
    for t in tests:
        r = run.results.get(t.name)
        if r is not None and r.cpu_s is not None:
            continue
        if t.command and t.command[0].endswith(METER):
            lost.append(t.name)
        else:
            by_program[Path(t.command[0]).name if t.command else "?"] += 1
    return by_program, lost


def failure_lines(result: Result, limit: int = 12) -> list[str]:
    """The lines of a failed test's output that say what failed (its gate's FAIL lines, a sanitizer's report),
    those that start so first; never a PASS line (mutants' `PASS M (killed as recorded: ...: FAIL ...)`)."""
    keep = [line for line in result.output.splitlines() if not line.startswith("PASS ")
            and re.match(r"^(FAIL|ERROR|.*(rerun|reproduce):|.*: (FAIL|error)|==\d+==ERROR|\[  FAILED  \])", line)]
    keep.sort(key=lambda line: not re.match(r"^(FAIL|ERROR|==\d+==ERROR|\[  FAILED  \])", line))
    return (keep or result.output.strip().splitlines()[-limit:])[:limit]


def print_summary(rows: list[LabelRow], run: Run, repeats: list[str], tests: Optional[list[Test]] = None) -> None:
    """The table, the CPU lines, what was repeated, and each test that did not pass. TESTS: the run's
    selection (a test of it with no result at all is named too); the results' tests when None."""
    print("\ntlslab summary (labels ran side by side; seconds: the sum of their tests' times; "
          "cpu-s: their CPU-seconds, user + system, every process of each test)")
    print(f"  {'label':<8} {'result':<6} {'tests':<8} {'seconds':>7} {'cpu-s':>8}")
    for r in rows:
        note = f"  ({r.unmeasured} not measured)" if r.unmeasured else ""
        print(f"  {r.label:<8} {r.verdict:<6} {f'{r.passed}/{r.total}':<8} {r.seconds:7.0f} {r.cpu_s:8.1f}{note}")
    chosen = tests if tests is not None else [Test(n, []) for n in run.results]
    total = label_row("total", list({t.name: t for t in chosen}.values()), run)
    print(f"  {'total':<8} {total.verdict:<6} {f'{total.passed}/{total.total}':<8} {total.seconds:7.0f} {total.cpu_s:8.1f}")
    by_program, lost = unmeasured(chosen, run)
    own = run.ctest_self_s
    rest = run.tree_cpu_s - total.cpu_s - (own or 0)
    print(f"  cpu-s: CTest's whole tree {run.tree_cpu_s:.1f} = the measured tests {total.cpu_s:.1f} "
          f"({total.total - total.unmeasured} of {total.total} tests)"
          + (f" + ctest itself {own:.1f}" if own is not None else "")
          + (f" + {rest:.1f} for the {total.unmeasured} tests not measured, together" if total.unmeasured
             else f" + {rest:.1f} unaccounted" if own is not None else " + ctest itself"))
    print(f"  cpu-s: the machine's {run.machine_busy_s:.1f} busy over the run ({run.cores} cores x {run.wall_s:.0f} s wall"
          f" = {run.cores * run.wall_s:.0f}; everything on it, this run and anything beside it)")
    if by_program:
        print("    not measured (not tlslab_gate's, no meter): "
              + ", ".join(f"{p} {n}" for p, n in by_program.most_common()))
    if lost:
        print(f"    metered, no figure written (killed?): {', '.join(lost[:8])}" + (" ..." if len(lost) > 8 else ""))
    by_gate = Counter(line.split(":", 1)[0] for line in repeats)
    print(f"  wall: {run.wall_s:.0f} s   repeated: " + (", ".join(f"{g} {n} run(s) (diagnosis, not verdict)"
                                                             for g, n in by_gate.items()) or "nothing"))
    for line in repeats[:3]:
        print(f"    {line}")
    if len(repeats) > 3:
        print(f"    ... every one in its gate's JUnit file (<property name=\"repeat\">)")
    for name in run.failed(tests):
        result = run.results.get(name)
        if result is None:
            print(f"FAIL {name} (no result: CTest's JUnit has no <testcase> of it)")
            continue
        print(f"FAIL {name} ({result.status}, {result.seconds:.0f} s):")
        for line in failure_lines(result):
            print(f"    {line[:300]}")
    if run.failed(tests) or any(r.verdict == "FAIL" for r in rows):
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
    """Where the time went: the tests by seconds, the tests by CPU-seconds, then the slowest rows of every gate."""
    print("\nprofile: the tests, slowest first (seconds, label)")
    label_of = {t.name: ",".join(t.labels) for t in tests}
    ranked = sorted(run.results.values(), key=lambda r: -r.seconds)
    for r in ranked[:top]:
        print(f"  {r.seconds:7.1f}  {label_of.get(r.name, '?'):<8} {r.name}")
    measured = sorted((r for r in run.results.values() if r.cpu_s is not None), key=lambda r: -(r.cpu_s or 0))
    print(f"\nprofile: the tests by CPU, most first (cpu-s, seconds, cores busy: cpu-s over seconds, label; "
          f"{len(measured)} of {len(run.results)} measured)")
    for r in measured[:top]:
        print(f"  {r.cpu_s:7.1f}  {r.seconds:7.1f}  {(r.cpu_s or 0) / r.seconds if r.seconds else 0:4.2f}  "
              f"{label_of.get(r.name, '?'):<8} {r.name}")
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
    cpu = ns.build_dir / "work" / "cpu"   # TLSLAB_WORK/cpu: each metered test's TEST.json, this run's only
    shutil.rmtree(cpu, ignore_errors=True)
    cpu.mkdir(parents=True)
    env = {**os.environ, "TLSLAB_JUNIT_DIR": str(junit), CPU_DIR: str(cpu)}
    if ns.full:
        env["TLSLAB_FULL"] = "1"
    print(f"== ctest -L {' '.join(labels)} (-j {ns.jobs}){tag}", flush=True)
    run = run_ctest(ns.build_dir, labels, ns.jobs, ns.build_dir / f"ctest{tag.replace(' ', '-')}.log", env,
                    ns.tests, ns.exclude)
    chosen = selected(ns, tests, labels)
    print_summary(label_rows(chosen, labels, run), run, repeats_in(junit), chosen)
    if ns.profile:
        profile(junit, tests, run)
    if {"clients", "pkits"} & set(labels):   # the gates that cross every client
        results_page(junit, ns.build_dir / "work", keep=ns.full)
    return run


def results_page(junit: Path, work: Path, keep: bool = False) -> None:
    """The one picture of every client (clients/results_page.py): written after a run that crossed
    the clients, its path printed; never part of the verdict. KEEP (a --full run): its observations
    are written over the kept ones (harness/last_cells, committed), which the page shows for every
    cell a later run does not run."""
    out = work / "results.html"
    done = subprocess.run([*python_command(ROOT / "clients" / "results_page.py"), "--junit", str(junit),
                           "--work", str(work), "--out", str(out), *(["--keep"] if keep else [])],
                          capture_output=True, text=True, cwd=ROOT)
    print((done.stdout or done.stderr).strip() or f"results page: exit {done.returncode}", flush=True)


class CpuHog:
    """stress-ng --cpu K (Debian's stress-ng: K workers, each keeping a core busy), bounded in time,
    stopped on the way out however we leave: the with block's end (a verdict, an error, Ctrl-C, and
    SIGTERM or SIGHUP, which main() turns into the same KeyboardInterrupt) stops it and its session;
    a SIGKILL of this process kills stress-ng by its death signal, and its workers follow it (they
    stop when their parent dies), and --timeout bounds it whatever happens."""

    def __init__(self, seconds: int, cores: int = 1):
        if not shutil.which("stress-ng"):
            raise LabGateError("--stress needs stress-ng (apt-get install stress-ng; run_all.sh installs it)")
        self.proc = subprocess.Popen(["stress-ng", "--cpu", str(cores), "--timeout", f"{seconds}s", "--quiet"],
                                     start_new_session=True, preexec_fn=die_with_parent)

    def __enter__(self) -> "CpuHog":
        return self

    def __exit__(self, *exc) -> None:
        """SIGTERM first: stress-ng stops and reaps its workers (a SIGKILL of the whole group at once
        leaves them to init, unreaped for a while); then SIGKILL to whatever is left of the session."""
        end_group(self.proc)


def stress(ns, tests: list[Test], labels: list[str]) -> int:
    """The gate N times with K CPU hogs beside it; every test that failed in any run, counted."""
    failures: Counter = Counter()
    walls = []
    with CpuHog(seconds=ns.stress * 3600, cores=ns.stress_cores):
        for i in range(1, ns.stress + 1):
            run = once(ns, tests, labels, tag=f" stress {i} of {ns.stress}")
            walls.append(run.wall_s)
            failures.update(run.failed(selected(ns, tests, labels)))
    print(f"\nstress: {ns.stress} runs beside stress-ng --cpu {ns.stress_cores}, "
          f"wall {', '.join(f'{w:.0f}' for w in walls)} s")
    if not failures:
        print("  every test held in every run")
    for name, n in failures.most_common():
        print(f"  {name:<40} failed in {n} of {ns.stress}")
    total = len(selected(ns, tests, labels))
    failed, skipped = len(failures), len(set(run.skipped()) - set(failures))
    print(f"tlslab: {total - failed - skipped} passed, {failed} failed (in any of {ns.stress} runs)"
          + (f", {skipped} skipped (by the test itself)" if skipped else ""))
    return 1 if failures else 0


class OneLineParser(argparse.ArgumentParser):
    """A bad flag or value is one line on stderr and exit 2 (no usage block): run_all.sh says the same."""

    def error(self, message: str):
        self.exit(2, f"lab_gate: {message} (see --help)\n")


def at_least_one(text: str) -> int:
    """A whole number of at least 1 (--stress N, --stress-cores K)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: must be at least 1")
    return n


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                      epilog="\n".join(__doc__.splitlines()[2:]))
    p.add_argument("--build-dir", type=Path, required=True, help="the configured and built tree")
    p.add_argument("--label", action="append", default=[], help="run only this label (repeatable)")
    p.add_argument("--full", action="store_true", help="also the uncut crossings (label full)")
    p.add_argument("--jobs", type=int, default=2 * (os.cpu_count() or 1),
                   help="CTest's processors: tests run side by side up to this sum of their PROCESSORS "
                        "(default: twice the cores; a gate that keeps both cores busy asks for most of them)")
    p.add_argument("--stress", type=at_least_one, metavar="N",
                   help="run the gate N times beside CPU hogs (stress-ng --cpu K; K: --stress-cores)")
    p.add_argument("--stress-cores", type=at_least_one, metavar="K",
                   help="with --stress: K hogs, each keeping one core busy (default 1)")
    p.add_argument("--profile", action="store_true", help="after the run: the slowest tests, the tests by CPU, "
                                                          "the slowest rows")
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
    if ns.stress_cores is not None and ns.stress is None:
        p.error("--stress-cores K: only with --stress N")
    ns.stress_cores = ns.stress_cores or 1
    return ns


def interrupt(signum, _frame) -> None:
    """SIGTERM and SIGHUP end the run as Ctrl-C does: ctest and its tests stopped, the hogs killed."""
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv=None) -> int:
    ns = parse_args(argv)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)
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
    except KeyboardInterrupt as e:
        print(f"lab_gate: interrupted ({str(e) or 'SIGINT'}): ctest stopped, no verdict", file=sys.stderr)
        return 130
    chosen = selected(ns, tests, labels)
    print(verdict_line(chosen, run))
    return 1 if run.failed(chosen) else 0


def verdict_line(chosen: list[Test], run: Run) -> str:
    """The last line: each test of the selection counted once, as passed (status passed), skipped (by
    the test itself) or failed (everything else, no result included)."""
    status = [run.results[t.name].status if t.name in run.results else None for t in chosen]
    passed, skipped = status.count("passed"), status.count("skipped")
    return (f"tlslab: {passed} passed, {len(chosen) - passed - skipped} failed"
            + (f", {skipped} skipped (by the test itself)" if skipped else ""))


if __name__ == "__main__":
    sys.exit(main())

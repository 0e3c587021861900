#!/usr/bin/python3
"""Self-test of the heap shim: heap_probe allocates what it says, the shim must report it.

    /usr/bin/python3 -m shims.tests.selftest_heap --shim build/shims/libtlslab_heap.so \\
        --probe build/shims/heap_probe --probe-asan build/shims/heap_probe_asan
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

from harness import Gate, verdict
from harness.rows import require_files
from harness.shims import HEAP_TAG, REFUSED_EXIT, Probe, USABLE_SLACK, heap_env, read_report, report_from_text


class SelfTest:
    def __init__(self, shim: str, probe: str, work: Path):
        self.shim, self.probe, self.work = shim, probe, work
        self.report_path = work / "heap-report.json"

    def run(self, steps: list[str], probe: Optional[str] = None, wrapper: Optional[list[str]] = None,
            report_file: bool = True, program: Optional[str] = None, **settings) -> Probe:
        probe = probe or self.probe
        env = heap_env(program or Path(probe).name, self.report_path, **settings)
        if not report_file:
            del env["TLSLAB_HEAP_REPORT"]
        env["LD_PRELOAD"] = self.shim
        try:
            proc = subprocess.run([*(wrapper or []), probe, *steps], capture_output=True, text=True, env=env,
                                  timeout=120)
        except subprocess.TimeoutExpired:
            return Probe(-1, "(timed out after 120 s)", "", None)
        report = read_report(self.report_path, HEAP_TAG) if report_file else report_from_text(proc.stderr, HEAP_TAG)
        return Probe(proc.returncode, proc.stdout, proc.stderr, report)


def delta(a: dict, b: dict, key: str) -> int:
    return b[key] - a[key]


def check_counting(gate: Gate, t: SelfTest) -> None:
    base = t.run(["nothing"])
    leak = t.run(["leak"])
    blocks, nbytes = (int(x) for x in leak.value("leak"))
    got = (delta(base.report, leak.report, "outstanding_blocks"), delta(base.report, leak.report, "outstanding_bytes"))
    gate.expect("LeftBlocksAreOutstandingAtExit", (blocks, nbytes), got,
                "(blocks, bytes) above the empty run: one from each allocation function")
    r = leak.report
    gate.expect("AllocationsMinusFreesIsOutstandingBlocks", r["outstanding_blocks"], r["allocations"] - r["frees"])
    gate.expect("FreeKeepsErrno", ["kept"], t.run(["errno"]).value("errno"))
    fd = t.run(["fd"])
    gate.expect("OpenDescriptorsAreCounted", base.report["fds_open"] + 1, fd.report["fds_open"])
    gate.expect("ChildrenStartWithoutTheShim", ["(unset)"], t.run(["env"]).value("env"))


def check_fail_nth(gate: Gate, t: SelfTest) -> None:
    start = int(t.run(["nth"]).value("nth")[0])
    fifth = t.run(["nth"], fail_nth=start + 5)
    gate.expect("FailNthFailsExactlyThatAllocation", [str(start), "5"], fifth.value("nth"),
                "the probe's fifth malloc of ten, and no other")
    r = fifth.report
    gate.expect("FailNthIsReported", (True, "malloc", 1005, 1), (r["nth_reached"], r["nth_call"], r["nth_size"],
                                                                 r["failures"]))
    beyond = t.run(["nth"], fail_nth=10**9)
    gate.expect("FailNthBeyondTheRunIsNotReached", (False, 0, [str(start)]),
                (beyond.report["nth_reached"], beyond.report["failures"], beyond.value("nth")))
    traced = t.run(["nth"], fail_nth=start + 5, fail_backtrace=1)
    verdict(gate, "FailNthPrintsTheStackWhenAsked", "failed allocation, stack:" in traced.err
               and "heap_probe" in traced.err, traced.err[-400:])


def check_exit_order(gate: Gate, t: SelfTest) -> None:
    """The report runs after OpenSSL's atexit cleanup: what OPENSSL_cleanup frees is not outstanding."""
    base = t.run(["nothing"]).report["outstanding_bytes"]
    late = t.run(["openssl"])
    held_in_main = int(late.value("openssl")[0])
    explicit = t.run(["openssl-cleanup"]).report["outstanding_bytes"]
    got = late.report["outstanding_bytes"]
    verdict(gate, "ReportRunsAfterOpenSSLCleanup", got == explicit == base and held_in_main > got,
               f"at exit {got}, with OPENSSL_cleanup() in main {explicit}, empty run {base}, "
               f"held before main returned {held_in_main}")


def check_refusals(gate: Gate, t: SelfTest, asan_probe: str) -> None:
    valgrind = shutil.which("valgrind")
    if valgrind:
        vg = t.run(["nothing"], wrapper=[valgrind, "-q"])
        verdict(gate, "RefusesUnderValgrind", vg.rc == REFUSED_EXIT and "refusing to run under valgrind" in vg.err,
                   f"exit {vg.rc}, stderr {vg.err.strip()[-300:]!r}")
    else:
        gate.skip("RefusesUnderValgrind", "valgrind is not installed")
    asan = t.run(["nothing"], probe=asan_probe)
    verdict(gate, "RefusesUnderAsan", asan.rc == REFUSED_EXIT and "refusing to run under asan" in asan.err,
               f"exit {asan.rc}, stderr {asan.err.strip()[-300:]!r}")


def check_plumbing(gate: Gate, t: SelfTest) -> None:
    to_stderr = t.run(["nothing"], report_file=False)
    verdict(gate, "ReportGoesToStderrWithoutReportVariable", to_stderr.report is not None, to_stderr.err[-300:])
    bad = t.run(["nothing"], fail_nth="abc")
    verdict(gate, "BadSettingExits2WithOneLine", bad.rc == 2 and len(bad.err.strip().splitlines()) == 1
               and "TLSLAB_HEAP_FAIL_NTH" in bad.err, f"exit {bad.rc}, stderr {bad.err!r}")
    other = t.run(["env"], program="tlsnb", fail_nth=1)
    verdict(gate, "DormantInOtherPrograms", other.rc == 0 and other.value("env") == [t.shim] and other.report is None,
               f"exit {other.rc}, {other.out!r}, report {other.report}")


def check_live_table(gate: Gate, t: SelfTest) -> None:
    """The live table starts small and grows: 20,000 blocks at once lose none, past 49,152 it says so."""
    many = t.run(["many"], live="sizes")
    kept = sum(7777 <= size < 7777 + USABLE_SLACK for size in (many.report or {}).get("live_sizes", []))
    verdict(gate, "LiveTableGrowsWithoutLosingBlocks", many.report and not many.report["live_overflow"] and kept == 100,
            f"100 blocks of 7,777 bytes left after 20,000 live at once: {kept} listed, report {str(many.report)[:300]}")
    flood = t.run(["flood"], live="sizes")
    verdict(gate, "LiveTableSaysWhenFull", flood.report and flood.report["live_overflow"],
            f"60,000 blocks live: live_overflow should be true, report {str(flood.report)[:300]}")


def check_trace(gate: Gate, t: SelfTest) -> None:
    """TLSLAB_HEAP_TRACE: one line an attempt (size, call-site hash), the same site the same hash in
    every run whatever ASLR did, another site another hash (leaks/alloc_sweep.py's feature sweeps)."""
    path = t.work / "trace.txt"
    runs = []
    for _ in range(2):
        probe = t.run(["nth"], trace=path)
        lines = [line.split() for line in path.read_text().splitlines()] if path.is_file() else []
        runs.append((probe, lines))
    (probe, lines), (_, again) = runs
    attempts = (probe.report or {}).get("attempts")
    verdict(gate, "TraceHasOneLineAnAttempt", lines and len(lines) == attempts,
            f"{len(lines)} lines, the report counts {attempts} attempts")
    start = int(probe.value("nth")[0])
    loop = lines[start:start + 10]
    verdict(gate, "TraceGivesOneSiteOneHash", [int(size) for size, _ in loop] == list(range(1001, 1011))
            and len({site for _, site in loop}) == 1,
            f"the probe's ten mallocs in one loop (sizes 1001 to 1010, one call site): {loop}")
    verdict(gate, "TraceIsTheSameInEveryRun", lines == again,
            f"two runs of one program: {sum(a != b for a, b in zip(lines, again))} lines differ "
            f"({len(lines)} and {len(again)} lines)")
    leak = t.run(["leak"], trace=path)
    sites = [line.split()[1] for line in path.read_text().splitlines()] if path.is_file() else []
    verdict(gate, "TraceTellsSitesApart", len(set(sites[-12:])) >= 6,
            f"the probe's leak step calls seven allocation functions: {len(set(sites[-12:]))} hashes "
            f"in its last 12 attempts (exit {leak.rc})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shim", required=True, help="libtlslab_heap.so")
    p.add_argument("--probe", required=True, help="the heap_probe binary")
    p.add_argument("--probe-asan", required=True, help="heap_probe built with ASan")
    ns = p.parse_args()
    require_files("selftest_heap", (ns.shim, ns.probe, ns.probe_asan), "build the shims targets")
    gate = Gate("selftest_heap")
    with tempfile.TemporaryDirectory(prefix="tlslab-heap-selftest-") as work:
        t = SelfTest(ns.shim, ns.probe, Path(work))
        check_counting(gate, t)
        check_fail_nth(gate, t)
        check_exit_order(gate, t)
        check_refusals(gate, t, ns.probe_asan)
        check_plumbing(gate, t)
        check_live_table(gate, t)
        check_trace(gate, t)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Self-test of the I/O shim: io_probe runs a script of socket calls under it; its printed lines
and the shim's report are compared whole with what each setting must do.

    /usr/bin/python3 -m shims.tests.selftest_io --shim build/shims/libtlslab_io.so \\
        --probe build/shims/io_probe [--only NAME...]
"""
from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness import Gate, verdict
from harness.rows import require_files
from harness.shims import IO_TAG, Probe, io_env, read_report, report_from_text


@dataclass
class Case:
    name: str
    settings: dict
    steps: list[str]
    expect: str                            # the probe's whole output
    report: dict = field(default_factory=dict)  # fields the shim's report must hold
    rc: int = 0                            # negative: killed by that signal


def lines(*text: str) -> str:
    return "\n".join(text) + "\n"


SENDS = ["write", "send", "sendnosig", "sendto", "sendmsg", "writev"]
RECVS = ["read", "read_chk", "recv", "recvfrom", "recvmsg", "readv"]

CASES = [
    Case("EverySendCallIsCapped", {"max_send": 700},
         ["conn", *[f"send:{api}:5000" for api in SENDS], "peer-recv"],
         lines("conn -> 0 fd 4", *[f"send:{api}:5000 -> 700" for api in SENDS], "peer-recv -> 4200 ok"),
         {"active": True, "calls": 6, "bytes_sent": 4200, "bytes_cut": 6 * 4300}),
    Case("EveryRecvCallIsCappedAndIntact", {"max_recv": 300},
         ["conn", "peer-send:5000", *[f"recv:{api}:1000" for api in RECVS]],
         lines("conn -> 0 fd 4", "peer-send:5000 ->", *[f"recv:{api}:1000 -> 300" for api in RECVS]),
         {"calls": 6, "bytes_received": 1800}),
    Case("EveryThirdCallPerDirectionIsRefused", {"max_send": 100, "eagain_every": 3},
         ["conn", "nb", "repeat:6:send:send:1000", "peer-send:1000", "repeat:4:recv:recv:50"],
         lines("conn -> 0 fd 4", "nb ->", "repeat:6:send:send:1000 -> 100 100 EAGAIN 100 100 EAGAIN",
               "peer-send:1000 ->", "repeat:4:recv:recv:50 -> 50 50 EAGAIN 50"),
         {"eagain": 3, "bytes_sent": 400, "bytes_received": 150}),
    Case("BlockingSocketNeverSeesEagain", {"eagain_every": 1},
         ["conn", "repeat:3:send:send:10"],
         lines("conn -> 0 fd 4", "repeat:3:send:send:10 -> 10 10 10"),
         {"eagain": 0, "eagain_skipped_blocking": 3}),
    Case("OneByteModeAlternatesRefusalAndOneByte", {"mode": "onebyte"},
         ["conn", "nb", "repeat:4:send:write:10", "peer-send:10", "repeat:4:recv:read:10", "peer-recv"],
         lines("conn -> 0 fd 4", "nb ->", "repeat:4:send:write:10 -> EAGAIN 1 EAGAIN 1", "peer-send:10 ->",
               "repeat:4:recv:read:10 -> EAGAIN 1 EAGAIN 1", "peer-recv -> 2 ok"),
         {"mode": "onebyte", "eagain": 4}),
    Case("ResetAtByteKOfConnectionC", {"fault": "reset", "fault_conn": 1, "fault_byte": 10},
         ["conn", "peer-send:100", "recv:read:100", "conn", "peer-send:100", "repeat:3:recv:read:100",
          "send:sendnosig:5"],
         lines("conn -> 0 fd 4", "peer-send:100 ->", "recv:read:100 -> 100", "conn -> 1 fd 6", "peer-send:100 ->",
               "repeat:3:recv:read:100 -> 10 ECONNRESET 0", "send:sendnosig:5 -> EPIPE"),
         {"faults": 1, "connections": 2}),
    Case("ResetOnTheSendSide", {"fault": "reset", "fault_dir": "send", "fault_byte": 10},
         ["conn", "nb", "repeat:2:send:sendnosig:100"],
         lines("conn -> 0 fd 4", "nb ->", "repeat:2:send:sendnosig:100 -> 10 ECONNRESET"), {"faults": 1}),
    Case("EpipeWithNosignalIsAnError", {"fault": "epipe", "fault_byte": 10},
         ["conn", "repeat:2:send:sendnosig:100"],
         lines("conn -> 0 fd 4", "repeat:2:send:sendnosig:100 -> 10 EPIPE"), {"faults": 1}),
    Case("EpipeOnWriteRaisesSigpipe", {"fault": "epipe"}, ["conn", "send:write:100"],
         "conn -> 0 fd 4\nsend:write:100 ->", rc=-signal.SIGPIPE),  # dies inside the step
    Case("EpipeOnWriteWithSigpipeIgnored", {"fault": "epipe"}, ["sigpipe:ignore", "conn", "send:write:100"],
         lines("sigpipe:ignore ->", "conn -> 0 fd 4", "send:write:100 -> EPIPE"), {"faults": 1}),
    Case("StallRefusesEverySendFromByteKForGood", {"fault": "stall", "fault_byte": 10},
         ["conn", "nb", "repeat:4:send:sendnosig:100", "peer-send:20", "recv:recv:100"],
         lines("conn -> 0 fd 4", "nb ->", "repeat:4:send:sendnosig:100 -> 10 EAGAIN EAGAIN EAGAIN", "peer-send:20 ->",
               "recv:recv:100 -> 20"),
         {"faults": 1, "eagain": 3, "bytes_sent": 10}),
    Case("ReusedDescriptorStartsFresh", {"max_send": 700},
         ["conn", "send:write:5000", "reuse-pipe:5000", "reuse-sock", "send:write:5000"],
         lines("conn -> 0 fd 4", "send:write:5000 -> 700", "reuse-pipe:5000 -> fd 4 5000", "reuse-sock -> 1 fd 4",
               "send:write:5000 -> 700"),
         {"connections": 2, "sockets": 2, "calls": 2}),
    Case("UdpIsNotTouched", {"max_send": 700}, ["conn", "udp:5000", "send:send:5000"],
         lines("conn -> 0 fd 4", "udp:5000 -> 5000", "send:send:5000 -> 700"), {"calls": 1}),
    Case("ChildrenStartWithoutTheShim", {"max_send": 700}, ["env", "spawn", "conn", "send:write:5000"],
         lines("env -> (unset)", "spawn ->conn -> 0 fd 4", "send:write:5000 -> 5000", " (child exit 0)",
               "conn -> 0 fd 4", "send:write:5000 -> 700"), {"calls": 1}),
    Case("InactiveRunSaysSo", {}, ["env"], lines("env -> (unset)"), {"active": False, "calls": 0}),
]


class SelfTest:
    def __init__(self, shim: str, probe: str, work: Path):
        self.shim, self.probe, self.work = shim, probe, work
        self.report_path = work / "io-report.json"

    def run(self, settings: dict, steps: list[str], report_file: bool = True, program: str = "io_probe") -> Probe:
        env = io_env(program, self.report_path, **settings)
        if not report_file:
            del env["TLSLAB_IO_REPORT"]
        env["LD_PRELOAD"] = self.shim
        try:
            proc = subprocess.run([self.probe, *steps], capture_output=True, text=True, env=env, timeout=10)
        except subprocess.TimeoutExpired as e:  # a step blocked: a failure of the case, not of the runner
            return Probe(-1, f"(timed out after 10 s) {e.stdout or ''}", str(e.stderr or ""), None)
        report = read_report(self.report_path, IO_TAG) if report_file else report_from_text(proc.stderr, IO_TAG)
        return Probe(proc.returncode, proc.stdout, proc.stderr, report)


def check_case(gate: Gate, t: SelfTest, case: Case) -> None:
    p = t.run(case.settings, case.steps)
    problems = []
    if p.rc != case.rc:
        problems.append(f"exit {p.rc}, expected {case.rc}; stderr {p.err.strip()[-300:]!r}")
    if p.out != case.expect:
        problems.append(f"output\n{p.out}expected\n{case.expect}")
    if case.rc >= 0:
        if p.report is None:
            problems.append("no report written")
        else:
            wrong = {k: p.report.get(k) for k, v in case.report.items() if p.report.get(k) != v}
            if wrong:
                problems.append(f"report fields {wrong}, expected {case.report}")
    verdict(gate, case.name, not problems, "; ".join(problems))


def check_random(gate: Gate, t: SelfTest) -> None:
    """Random mode: the same seed gives the same cuts per connection; another seed, others."""
    settings = {"mode": "random", "max_send": 100, "eagain_every": 4, "seed": 42}
    both = ["conn", "nb", "repeat:40:send:send:1000", "conn", "nb", "repeat:40:send:send:1000", "peer-recv"]
    a, b = t.run(settings, both), t.run(settings, both)
    other = t.run({**settings, "seed": 43}, both)
    alone = t.run(settings, ["conn", "conn", "nb", "repeat:40:send:send:1000"])
    sizes = [int(x) for x in re.findall(r"\b\d+\b", a.out.splitlines()[2].split("->")[1])]
    second = a.out.splitlines()[5].split("->")[1]
    verdict(gate, "RandomModeSameSeedSameRun", a.out == b.out and a.report and a.report["seed"] == 42,
               f"first\n{a.out}second\n{b.out}")
    verdict(gate, "RandomModeOtherSeedOtherRun", a.out != other.out, f"seed 42 and 43 both gave\n{a.out}")
    verdict(gate, "RandomModeCutsWithinOneToMax", sizes and all(1 <= n <= 100 for n in sizes) and "EAGAIN" in a.out
               and a.out.rstrip().endswith(" ok"), a.out)
    verdict(gate, "RandomModeConnectionsDrawTheirOwnStream", alone.out.splitlines()[3].split("->")[1] == second,
               f"connection 1 alone: {alone.out.splitlines()[3]!r}, after connection 0: {second!r}")
    unseeded = t.run({"mode": "random"}, ["conn", "send:send:10"])
    verdict(gate, "RandomModeSeedIsReportedWhenNotGiven",
               unseeded.report is not None and unseeded.report["seed_given"] is False and unseeded.report["seed"] > 0,
               str(unseeded.report))


def check_plumbing(gate: Gate, t: SelfTest) -> None:
    """Where the report goes, bad settings, and programs the shim must leave alone."""
    to_stderr = t.run({"max_send": 700}, ["conn", "send:write:5000"], report_file=False)
    verdict(gate, "ReportGoesToStderrWithoutReportVariable",
               to_stderr.report is not None and to_stderr.report["calls"] == 1, to_stderr.err[-300:])
    inactive = t.run({}, ["env"])
    verdict(gate, "InactiveRunWarnsOnStderr", "shim inactive" in inactive.err, inactive.err[-300:])
    bad = t.run({"mode": "bogus"}, ["conn"])
    verdict(gate, "BadSettingExits2WithOneLine", bad.rc == 2 and len(bad.err.strip().splitlines()) == 1
               and "TLSLAB_IO_MODE" in bad.err, f"exit {bad.rc}, stderr {bad.err!r}")
    other = t.run({"max_send": 700}, ["env", "conn", "send:write:5000"], program="tlsnb")
    verdict(gate, "DormantInOtherPrograms", other.out.endswith("send:write:5000 -> 5000\n") and t.shim in other.out
               and other.report is None, f"{other.out!r}, report {other.report}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shim", required=True, help="libtlslab_io.so")
    p.add_argument("--probe", required=True, help="the io_probe binary")
    p.add_argument("--only", nargs="*", default=[], help="run only the named cases")
    ns = p.parse_args()
    require_files("selftest_io", (ns.shim, ns.probe), "build the shims targets")
    gate = Gate("selftest_io")
    with tempfile.TemporaryDirectory(prefix="tlslab-io-selftest-") as work:
        t = SelfTest(ns.shim, ns.probe, Path(work))
        for case in CASES:
            if not ns.only or case.name in ns.only:
                check_case(gate, t, case)
        if not ns.only:
            check_random(gate, t)
            check_plumbing(gate, t)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())

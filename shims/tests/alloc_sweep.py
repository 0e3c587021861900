#!/usr/bin/python3
"""Allocation-failure sweep (label leaks): fail allocation N of one complete attempt, for every N.

One tlsnb run (a handshake and one request) under the heap shim with TLSLAB_HEAP_FAIL_NTH=N,
N = 1, 2, ... until the shim reports that N was not reached, on each transport. Every run must
end in an outcome line (never a signal, a hang or a run without one), with no block outstanding
at exit that the run without a failure does not also hold (compared as a multiset of sizes, so
glibc's lazily made time-zone blocks and stdout's buffer are not leaks) and no descriptor open.
Outcomes per N range are recorded in alloc_sweep.tsv (observed, written by --record); an outcome
class the record never saw is a failure too.

The full sweep (--full) is every N; the default samples every N of the short outcome ranges
and their edges, then a seeded random share of the rest, within --budget runs a transport.

    /usr/bin/python3 shims/tests/alloc_sweep.py --tlsnb build/client/tlsnb \\
        --heap-shim build/shims/libtlslab_heap.so [--full [--record]] [--seed S] [--only N...]
"""
from __future__ import annotations

import csv
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness import Gate, gate_args, run_tlsnb
from shimlib import HEAP_TAG, choose_seed, client_args, heap_env, read_report, tls_server, verdict

HERE = Path(__file__).resolve().parent
RECORD = HERE.parent / "alloc_sweep.tsv"
TRANSPORTS = ("bio", "fd")
RUN_TIMEOUT = 30.0   # a run that takes this long hangs (its own deadline is 5 s)
EDGE = 2             # N on each side of a recorded range edge that the sample always runs
SHORT = 64           # recorded ranges this short are run whole in the sample


@dataclass
class Result:
    n: int
    outcome: str       # "ok/0", "setup/8", ..., or what went wrong: "signal 6", "hang", "no outcome"
    reached: bool
    leak: str          # "" or what stayed behind
    report: Optional[dict]
    stderr: str

    def bad(self) -> bool:
        return self.outcome.startswith(("signal", "hang", "no ")) or bool(self.leak)


@dataclass
class Row:
    transport: str
    first: int
    last: int
    outcome: str
    runs: int


class Sweep:
    """Runs tlsnb once per N against one server; each worker thread has its own report file."""

    def __init__(self, ns, transport: str, port: int):
        self.ns, self.transport, self.port = ns, transport, port
        self.work = Path(ns.work)
        self.base: Optional[dict] = None

    def argv_args(self) -> list[str]:
        return client_args(self.ns.certs, self.port, "--transport", self.transport, "--count", 1,
                           "--requests", 1, "--deadline-ms", 5000)

    def run(self, n: int, live: str = "sizes", **extra) -> Result:
        report = self.work / f"sweep-{self.transport}-{n}.json"
        settings = {"live": live, **extra}
        if n:
            settings["fail_nth"] = n
        env = heap_env("tlsnb", report, **settings)
        try:
            run = run_tlsnb(self.ns.tlsnb, self.argv_args(), env=env, preload=self.ns.heap_shim, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return Result(n, "hang", True, "", None, "")
        except ValueError as e:  # a line that starts like JSON and is not: the report is broken
            return Result(n, f"no outcome line: malformed JSON on stdout ({e})", True, "", None, "")
        rep = read_report(report, HEAP_TAG)
        report.unlink(missing_ok=True)
        if run.signal:
            outcome = f"signal {run.signal}"
        elif len(run.attempts) != 1 or run.rc not in (0, 1, 2):
            outcome = f"no outcome line (exit {run.rc}, {len(run.attempts)} attempts)"
        else:
            outcome = f"{run.attempts[0]['stage']}/{run.attempts[0]['detail']}"
        if rep is None and not run.signal:
            outcome = "no heap report (exit without the destructors?)"
        leak = self.leak(rep) if rep and self.base else ""
        return Result(n, outcome, bool(rep and rep["nth_reached"]) or not n, leak, rep, run.stderr)

    def leak(self, rep: dict) -> str:
        """What REP holds at exit that the failure-free run does not."""
        extra = Counter(rep.get("live_sizes", [])) - Counter(self.base.get("live_sizes", []))
        problems = []
        if extra:
            problems.append(f"blocks outstanding beyond the baseline: {sorted(extra.elements())}")
        if rep.get("live_overflow"):
            problems.append("live table overflow")
        if rep["fds_open"] != self.base["fds_open"]:
            problems.append(f"{rep['fds_open']} descriptors open at exit, baseline {self.base['fds_open']}")
        return "; ".join(problems)

    def explain(self, r: Result) -> str:
        """For a failure: the stack of the failed allocation, the blocks left, a gdb backtrace."""
        lines = [f"N={r.n} {self.transport}: {r.outcome} {r.leak}".rstrip()]
        again = self.work / f"sweep-explain-{self.transport}-{r.n}.json"
        env = heap_env("tlsnb", again, fail_nth=r.n, fail_backtrace=1, live="stacks")
        env["LD_PRELOAD"] = self.ns.heap_shim
        try:
            proc = subprocess.run([self.ns.tlsnb, "--json", *self.argv_args()], capture_output=True, text=True,
                                  env=env, timeout=RUN_TIMEOUT)
            lines += [f"  {line}" for line in proc.stderr.splitlines() if not line.startswith("{")][-24:]
            if r.leak and again.exists():
                lines += [f"  {line}" for line in again.read_text().splitlines()
                          if line.startswith("tlslab-heap-shim-live")][:12]
        except subprocess.TimeoutExpired:
            lines.append("  (hangs again)")
        gdb = shutil.which("gdb")
        if gdb and r.outcome.startswith(("signal", "hang")):
            env = heap_env("tlsnb", again, fail_nth=r.n)
            env["LD_PRELOAD"] = self.ns.heap_shim
            cmd = [gdb, "-batch", "-ex", "run", "-ex", "bt 30", "--args", self.ns.tlsnb, "--json", *self.argv_args()]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
                lines += [f"  gdb: {line}" for line in proc.stdout.splitlines() if line.startswith("#")][:30]
            except subprocess.TimeoutExpired:
                lines.append("  gdb timed out")
        lines.append(f"  reproduce: TLSLAB_SHIM_PROGRAM=tlsnb TLSLAB_HEAP_FAIL_NTH={r.n} TLSLAB_HEAP_FAIL_BACKTRACE=1 "
                     f"TLSLAB_HEAP_LIVE=stacks LD_PRELOAD={self.ns.heap_shim} {self.ns.tlsnb} --json "
                     + " ".join(map(str, self.argv_args())) + "   (against a running servers/tls_server.py)")
        return "\n".join(lines)


def load_record(path: Path) -> list[Row]:
    if not path.exists():
        return []
    with path.open() as f:
        lines = [line for line in f if not line.startswith("#")]
    return [Row(r["transport"], int(r["first"]), int(r["last"]), r["outcome"], int(r["runs"]))
            for r in csv.DictReader(lines, delimiter="\t")]


def ranges(transport: str, results: list[Result]) -> list[Row]:
    """Consecutive N with the same outcome, one row each."""
    rows: list[Row] = []
    for r in sorted(results, key=lambda r: r.n):
        if rows and rows[-1].outcome == r.outcome and rows[-1].last == r.n - 1:
            rows[-1].last, rows[-1].runs = r.n, rows[-1].runs + 1
        else:
            rows.append(Row(transport, r.n, r.n, r.outcome, 1))
    return rows


def write_record(path: Path, rows: list[Row], seconds: float) -> None:
    with path.open("w") as f:
        f.write("# Allocation-failure sweep, observed (alloc_sweep.py --full --record): allocation N of one tlsnb\n")
        f.write("# run (handshake + one request) fails; first..last is a range of N with the same outcome.\n")
        f.write(f"# Whole sweep: {sum(r.runs for r in rows)} runs in {seconds:.0f} s. N drifts by a few dozen\n")
        f.write("# between runs after the first network read (how the kernel splits what arrives), so ranges\n")
        f.write("# after the handshake starts are approximate; the sample checks outcome classes, not edges.\n")
        f.write("transport\tfirst\tlast\toutcome\truns\n")
        for r in rows:
            f.write(f"{r.transport}\t{r.first}\t{r.last}\t{r.outcome}\t{r.runs}\n")


def sample(record: list[Row], transport: str, top: int, budget: int, rng: random.Random) -> list[int]:
    """Every N of short ranges and edges, then random N up to BUDGET, always the first 8."""
    chosen = set(range(1, min(top, 8) + 1))
    for row in (r for r in record if r.transport == transport):
        if row.last - row.first < SHORT:
            chosen.update(range(row.first, row.last + 1))
        chosen.update(range(row.first - EDGE, row.first + EDGE + 1))
    chosen = {n for n in chosen if 1 <= n <= top}
    rest = [n for n in range(1, top + 1) if n not in chosen]
    extra = max(0, budget - len(chosen))
    chosen.update(rng.sample(rest, min(extra, len(rest))))
    return sorted(chosen)


def sweep_transport(ns, gate: Gate, transport: str, record: list[Row], rng: random.Random) -> list[Result]:
    with tls_server(ns.certs, "leaf-ecdsa", "normal", "--workers", "2") as server:
        sweep = Sweep(ns, transport, server.port)
        base = sweep.run(0)
        if not verdict(gate, f"Baseline/{transport}", base.outcome == "ok/0" and base.report,
                       f"the run without a failure: {base.outcome}; stderr {base.stderr[-300:]!r}"):
            return []
        sweep.base = base.report
        top = base.report["attempts"]
        if ns.only:
            todo = sorted(ns.only)
        elif ns.full:
            todo = list(range(1, top + 1))
        else:
            todo = sample(record, transport, top, ns.budget, rng)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=ns.jobs) as pool:
            results = list(pool.map(sweep.run, todo))
        if not ns.only:  # go on past the baseline's count until N is not reached
            n = top + 1
            while True:
                r = sweep.run(n)
                results.append(r)
                if not r.reached or n > top + 500:
                    break
                n += 1
        seconds = time.monotonic() - started
        judge(gate, sweep, transport, results, record)
        print(f"  {transport}: {len(results)} values of N swept in {seconds:.1f} s "
              f"(baseline {top} allocations; {'all' if ns.full else 'sampled'})", flush=True)
        return results


def judge(gate: Gate, sweep: Sweep, transport: str, results: list[Result], record: list[Row]) -> None:
    bad = [r for r in results if r.bad()]
    verdict(gate, f"NoCrashNoHangNoLeak/{transport}", not bad,
            f"{len(bad)} of {len(results)} runs:\n" + "\n".join(sweep.explain(r) for r in bad[:5]))
    last = max(results, key=lambda r: r.n)
    verdict(gate, f"SweepReachedTheEnd/{transport}", not last.reached,
            f"N={last.n} was still reached: the sweep did not get past the run's allocations")
    known = {r.outcome for r in record if r.transport == transport}
    seen = Counter(r.outcome for r in results if not r.bad())
    if known:
        new = {o: c for o, c in seen.items() if o not in known}
        verdict(gate, f"OutcomesAsRecorded/{transport}", not new,
                f"outcome classes the record (alloc_sweep.tsv) never saw: {new}; if they are right, "
                f"re-record with --full --record")
    else:
        gate.skip(f"OutcomesAsRecorded/{transport}", "no record yet (run --full --record)")
    print(f"  {transport} outcomes: " + ", ".join(f"{o} x{c}" for o, c in seen.most_common()), flush=True)


def main() -> int:
    def extra(p):
        p.add_argument("--heap-shim", required=True, help="libtlslab_heap.so")
        p.add_argument("--full", action="store_true", help="every N (a few minutes a transport)")
        p.add_argument("--record", action="store_true", help="with --full: rewrite alloc_sweep.tsv")
        p.add_argument("--budget", type=int, default=1200, help="runs a transport in the sampled sweep")
        p.add_argument("--jobs", type=int, default=2, help="runs at once")
        p.add_argument("--seed", type=int, help="seed of the sample (default: a new one, printed)")
        p.add_argument("--transport", choices=TRANSPORTS, action="append", help="default: both")
        p.add_argument("--dump", help="write every run (N, outcome, leak) to this TSV file")
    ns = gate_args(__doc__.splitlines()[0], extra)
    try:
        ns.only = [int(n) for n in ns.only]
    except ValueError:
        print("alloc_sweep: --only takes values of N", file=sys.stderr)
        return 2
    if ns.record and not ns.full:
        print("alloc_sweep: --record needs --full", file=sys.stderr)
        return 2
    seed = choose_seed(ns.seed)
    rng = random.Random(seed)
    record = load_record(RECORD)
    gate = Gate("alloc_sweep")
    started = time.monotonic()
    rows: list[Row] = []
    for transport in ns.transport or TRANSPORTS:
        results = sweep_transport(ns, gate, transport, record, rng)
        if ns.dump:
            with open(ns.dump, "a") as f:
                for r in sorted(results, key=lambda r: r.n):
                    sizes = r.report.get("live_sizes") if r.report else None
                    f.write(f"{transport}\t{r.n}\t{r.outcome}\t{r.leak}\t{sizes}\n")
        rows += ranges(transport, [r for r in results if not r.bad()])
    seconds = time.monotonic() - started
    print(f"sweep took {seconds:.1f} s; repeat: {sys.executable} {Path(__file__).resolve()} --tlsnb {ns.tlsnb} "
          f"--heap-shim {ns.heap_shim} --certs {ns.certs} --seed {seed}" + (" --full" if ns.full else ""), flush=True)
    if ns.record and not gate.failed:
        write_record(RECORD, rows, seconds)
        print(f"recorded {len(rows)} ranges in {RECORD}", flush=True)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())

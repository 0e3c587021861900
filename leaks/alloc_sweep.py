#!/usr/bin/python3
"""Allocation-failure sweep (label leaks): fail allocation N of one complete attempt, for every N.

One tlsnb run (a handshake and one request) under the heap shim with TLSLAB_HEAP_FAIL_NTH=N,
N = 1, 2, ... until the shim reports that N was not reached, on each transport. With --client,
the same of a client under test whose heap the shim sees (clients/README.md; the C clients:
curl, gnutls), its record in its room (clients/NAME/alloc_sweep.tsv). Every run must
end in exactly one outcome line (never a signal, a hang, a second or malformed line, an exit 2)
that its exit status and its summary agree with (exit 0 exactly for ok/0; the summary's count 1
and failed 0 or 1; no summary only after the last resort's setup/8),
with the descriptors back to the baseline and no block outstanding at exit beyond the
failure-free run's (a multiset of sizes: glibc's lazily made time-zone blocks and stdout's
buffer are not leaks). Extra blocks are run again with stacks and named by where they were
allocated: blocks of OpenSSL's own lazy state are recorded by id in alloc_sweep.tsv, any other
leak fails. An outcome class the record never saw fails too.

The full sweep (--full) is every N; the default runs every N of the rare outcome classes of the
record and a seeded random share of the rest, --budget runs a transport.

--with FEATURE sweeps tlsnb with one more of its features in use, each against the server that
asks for it, each with its own record (leaks/alloc_sweep-FEATURE.tsv): `crl` (--crl ca.crl),
`cert` (--cert client.pem --key client.key; tls_server.py --client-ca ca.pem requires it) and
`staple` (--ocsp-staple require; hostile/peer.py staples ocsp-good.ocsp), so that their
out-of-memory paths are proven as the plain run's are. A feature's sweep fails the allocations the
feature adds, not the plain sweep's again: its own allocations (leaks/alloc_sweep-FEATURE-own.tsv,
written by --record-own from two traced runs, TLSLAB_HEAP_TRACE: the N whose call site, a hash of
its stack, is made a different number of times with the feature than without) hold its rare classes
and its random share; of the rest, the plain sweep's, it runs SHARED at random (a failure there
must free the feature's state too) and the rare classes the plain record never saw.

    /usr/bin/python3 -m leaks.alloc_sweep --tlsnb build/client/tlsnb \\
        --heap-shim build/shims/libtlslab_heap.so [--full [--record]] [--seed S] [--only N...]
        [--client curl --build-dir build] [--with crl|cert|staple [--record-own]]
"""
from __future__ import annotations

import csv
import hashlib
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

from harness import Gate, choose_seed, gate_args, rerun_line, run_client, tls_server, verdict
from harness.peers import hostile_peer
from harness.clients import ClientError, Profile, gate_client
from harness.record import KINDS
from harness.rows import RowError, TomlRow, bad_input, load_toml
from harness.shims import HEAP_TAG, USABLE_SLACK, client_args, heap_env, read_report, unmatched

HERE = Path(__file__).resolve().parent
RECORD = HERE / "alloc_sweep.tsv"
TRANSPORTS = ("bio", "fd")
RUN_TIMEOUT = 12.0   # a run that takes this long hangs (its own deadline is 5 s)
EDGE = 2             # N on each side of a rare range that the sample runs too
RARE = 24            # an outcome class seen in at most this many runs of the full sweep is run whole
SHARED = 25          # a feature's sweep: N at random among the allocations the plain run makes too

# --with FEATURE: (the server that asks for it, tlsnb's extra arguments); certificate folder C.
WITH = {
    "crl": (lambda c: tls_server(c, "leaf-ecdsa", "normal", "--workers", "2"), lambda c: ["--crl", f"{c}/ca.crl"]),
    "cert": (lambda c: tls_server(c, "leaf-ecdsa", "normal", "--workers", "2", "--client-ca", f"{c}/ca.pem"),
             lambda c: ["--cert", f"{c}/client.pem", "--key", f"{c}/client.key"]),
    "staple": (lambda c: hostile_peer(c, "leaf-ecdsa", "normal", "--staple", f"{c}/ocsp-good.ocsp"),
               lambda c: ["--ocsp-staple", "require"]),
}


@dataclass
class Result:
    n: int
    outcome: str        # "ok/0", "setup/8", ...; or what went wrong: "signal 6", "hang", "no outcome line ..."
    reached: bool
    report: Optional[dict]
    stderr: str
    problem: str = ""   # a crash, hang, lost outcome, or a leak not recorded as the library's: fails
    leak: str = ""      # "ID:where" of the blocks left (leak_signature), when any

    def lost(self) -> bool:
        return self.outcome.startswith(("signal", "hang", "no "))


# A client under test's runs that end without one outcome line because its LIBRARY cannot fail
# an allocation cleanly (clients/NAME/alloc_sweep_known.toml): each entry names the outcome (a
# prefix: "signal 11", "no outcome line (exit 2") and a text that the failed allocation's stack
# or the client's stderr holds ("libtasn1.so.6"), with kind and why. A lost run that no entry
# explains fails as before; tlsnb has no such file: every lost run of the reference fails. Not a
# record of differences (harness/record.py): an entry is a rule over runs, not a case (the values of N
# it explains are drawn anew each run and move with the library), written by a person from a stack.
KNOWN_SCHEMA = {"name": (str, True), "outcome": (str, True), "stack": (str, True), "kind": (str, True),
                "why": (str, True)}


def load_known(path: Path) -> list[TomlRow]:
    if not path.exists():
        return []
    rows = load_toml(path, "known", KNOWN_SCHEMA)
    for row in rows:
        if row.get("kind") not in KINDS:
            raise row.error("kind", f"one of {', '.join(KINDS)}")
        if not row.get("why").strip() or not row.get("stack").strip():
            raise row.error("why", "stack and why must say something")
    return rows


def explained(r: "Result", known: list[TomlRow]) -> Optional[TomlRow]:
    return next((k for k in known if r.outcome.startswith(k.get("outcome")) and k.get("stack") in r.stderr), None)


@dataclass
class Row:
    transport: str
    first: int
    last: int
    outcome: str
    leak: str
    runs: int


LIVE_TAG = "tlslab-heap-shim-live "
ALLOCATORS = ("CRYPTO_zalloc", "CRYPTO_malloc", "CRYPTO_strndup", "CRYPTO_strdup", "CRYPTO_realloc", "__strdup",
              "OPENSSL_sk_", "OPENSSL_LH_", "libstdc++", "_Znwm")


def live_blocks(path: Path) -> Counter:
    """The live blocks a stacks report lists, as `SIZE bytes: frame...` lines."""
    if not path.exists():
        return Counter()
    return Counter(line[len(LIVE_TAG):] for line in path.read_text().splitlines() if line.startswith(LIVE_TAG))


def block_key(block: str) -> tuple[int, str]:
    """A block's identity across runs: its size and the first named function past the allocators
    (stdout's buffer is the same block whether puts or fputs made it)."""
    size, frames = block.split(":", 1)
    named = [f.split("+")[0] for f in frames.split() if not f.startswith(ALLOCATORS + ("lib", "0x", "ld-linux"))]
    return int(size.split()[0]), named[0] if named else frames.split()[0] if frames.split() else "?"


def beyond(blocks: Counter, base: Counter) -> Counter:
    """The blocks of BLOCKS that BASE does not hold: same first named function, size within slack."""
    left = [block_key(b) for b in base.elements()]
    extra: Counter = Counter()
    for b in blocks.elements():
        size, where = block_key(b)
        match = next((i for i, (s, w) in enumerate(left) if w == where and abs(s - size) < USABLE_SLACK), None)
        if match is None:
            extra[b] += 1
        else:
            left.pop(match)
    return extra


def block_path(block: str, program: str = "tlsnb") -> str:
    """Where BLOCK was asked for: the named functions of its stack, from the first one past the
    allocators up to the program's frame (excluded, as are offsets and unnamed frames: they move
    with every build). PROGRAM alone when the program itself asked for it."""
    frames = block.split(":", 1)[1].split()
    while frames and frames[0].startswith(ALLOCATORS):
        frames.pop(0)
    own = f"{program}+"
    if not frames or frames[0].startswith(own):
        return program
    path = []
    for frame in frames:
        if frame.startswith(own):
            break
        if not frame.startswith(("lib", "0x", "ld-linux")):
            path.append(frame.split("+")[0])
    return "<".join(path) or "(unnamed)"


def leak_signature(blocks: Counter, program: str = "tlsnb") -> tuple[str, str]:
    """(id, where) of a set of leaked blocks: the same places give the same id, whatever N."""
    paths = sorted({block_path(b, program) for b in blocks})
    ident = hashlib.sha1("|".join(paths).encode()).hexdigest()[:10]
    return ident, "+".join("<".join(p.split("<")[:4]) for p in paths)


class Sweep:
    """Runs the client once per N against one server; each run has its own report file."""

    def __init__(self, ns, profile: Profile, transport: str, port: int, known_leaks: Optional[set[str]],
                 feature: Optional[str] = None):
        self.ns, self.transport, self.port = ns, transport, port
        self.feature = feature   # --with FEATURE in use in its runs (WITH), None for the plain run
        self.command, self.program, self.reference = profile.command, profile.program, profile.reference
        self.work = Path(ns.work)
        self.base: Optional[dict] = None
        self.base_blocks: Counter = Counter()
        self.known_leaks = known_leaks  # leak ids the record explains (OpenSSL's own state); None: recording
        self.repeats: list[str] = []    # the runs made again, and why (the gate's summary says so)

    def recording(self) -> bool:
        return self.known_leaks is None

    def argv_args(self) -> list[str]:
        extra = WITH[self.feature][1](self.ns.certs) if self.feature else []
        return client_args(self.ns.certs, self.port, "--transport", self.transport, "--count", 1,
                           "--requests", 1, "--deadline-ms", 5000, *extra)

    def command_line(self) -> str:
        return " ".join(map(str, [*self.command, "--json", *self.argv_args()]))

    def start(self) -> Result:
        """The run without a failure: what every other run is compared with."""
        base = self.run(0)
        if base.report:
            self.base = base.report
            path = self.work / f"sweep-base-{self.transport}.json"
            run_client(self.command, self.argv_args(), env=heap_env(self.program, path, live="stacks"),
                       preload=self.ns.heap_shim, timeout=RUN_TIMEOUT)
            self.base_blocks = live_blocks(path)
        return base

    def run(self, n: int) -> Result:
        report = self.work / f"sweep-{self.transport}-{n}.json"
        settings = {"fail_nth": n} if n else {}
        if n and not self.reference:  # the failed allocation's stack, for alloc_sweep_known.toml
            settings["fail_backtrace"] = 1
        env = heap_env(self.program, report, live="sizes", **settings)
        try:
            run = run_client(self.command, self.argv_args(), env=env, preload=self.ns.heap_shim, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return Result(n, "hang", True, None, "", problem="hang")
        except ValueError as e:  # a line that starts like JSON and is not
            return Result(n, f"no outcome line: malformed JSON on stdout ({e})", True, None, "", problem="lost")
        rep = read_report(report, HEAP_TAG)
        report.unlink(missing_ok=True)
        if run.signal:
            outcome = f"signal {run.signal}"
        elif len(run.attempts) != 1 or run.rc not in (0, 1):
            outcome = f"no outcome line (exit {run.rc}, {len(run.attempts)} attempt lines)"
        else:
            outcome = f"{run.attempts[0]['stage']}/{run.attempts[0]['detail']}"
            if (run.rc == 0) != (outcome == "ok/0"):  # the contract: exit 0 exactly when every attempt is ok
                outcome = f"no agreement between exit {run.rc} and its line {outcome}"
            elif run.summary and (run.summary.get("count"), run.summary.get("failed")) != (1, int(outcome != "ok/0")):
                outcome = (f"no agreement between the summary (count {run.summary.get('count')}, failed "
                           f"{run.summary.get('failed')}) and its one line {outcome}")
            elif not run.summary and outcome != "setup/8":  # only the last resort (out of memory outside
                outcome = f"no summary after its line {outcome}"   # any attempt) ends without one
        if rep is None and not run.signal:
            outcome = "no heap report (an exit that skips the destructors?)"
        r = Result(n, outcome, bool(rep and rep["nth_reached"]) or not n, rep, run.stderr)
        if r.lost():
            r.problem = "lost"
        elif self.base and rep:
            self.judge_heap(r)
        return r

    def judge_heap(self, r: Result) -> None:
        """Descriptors must be back to the baseline; extra blocks are attributed by their stacks."""
        if r.report["fds_open"] != self.base["fds_open"]:
            r.problem = f"{r.report['fds_open']} descriptors open at exit, baseline {self.base['fds_open']}"
            return
        extra = Counter(unmatched(r.report.get("live_sizes", []), self.base.get("live_sizes", [])))
        if not extra and not r.report.get("live_overflow"):
            return
        for tries in range(1, 4):  # the same N again with stacks; after the first read N can drift a little
            path = self.work / f"sweep-stacks-{self.transport}-{r.n}.json"
            run_client(self.command, self.argv_args(), env=heap_env(self.program, path, live="stacks", fail_nth=r.n),
                       preload=self.ns.heap_shim, timeout=RUN_TIMEOUT)
            blocks = beyond(live_blocks(path), self.base_blocks)
            path.unlink(missing_ok=True)
            if blocks:
                break
        self.repeats.append(f"N={r.n} run again with stacks {tries} time(s) to name {sum(extra.values())} block(s) "
                            f"beyond the baseline: " + ("named" if blocks else "not left again (N drifted past the "
                                                         "place): counted as no leak, listed as drifted"))
        if not blocks:  # N drifted past the place (after the first read); a leak on a path repeats elsewhere
            r.leak = f"unreproduced:{sorted(extra.elements())}"
            return
        ident, where = leak_signature(blocks, self.program)
        r.leak = f"{ident}:{where}"
        unknown = self.known_leaks is not None and ident not in self.known_leaks
        if unknown or any(block_path(b, self.program) == self.program for b in blocks):
            r.problem = f"leak {r.leak} not in the record: " + "; ".join(sorted(blocks))[:1500]

    def explain(self, r: Result) -> str:
        """For a failure: the stack of the failed allocation, the blocks left, a gdb backtrace."""
        lines = [f"N={r.n} {self.transport}: {r.outcome}" + (f"; {r.problem}" if r.problem not in ("lost", "hang") else "")]
        again = self.work / f"sweep-explain-{self.transport}-{r.n}.json"
        self.repeats.append(f"N={r.n} run again to explain its failure (its verdict is the first run's)")
        if r.outcome == "hang":  # running it again costs another timeout: the command below repeats it
            lines.append(f"  reproduce: TLSLAB_SHIM_PROGRAM={self.program} TLSLAB_HEAP_FAIL_NTH={r.n} TLSLAB_HEAP_FAIL_BACKTRACE=1 "
                         f"LD_PRELOAD={self.ns.heap_shim} {self.command_line()}")
            return "\n".join(lines)
        env = heap_env(self.program, again, fail_nth=r.n, fail_backtrace=1)
        env["LD_PRELOAD"] = self.ns.heap_shim
        try:
            proc = subprocess.run([*self.command, "--json", *map(str, self.argv_args())], capture_output=True, text=True,
                                  env=env, timeout=RUN_TIMEOUT)
            lines += [f"  stdout: {line[:200]}" for line in proc.stdout.splitlines()]
            lines += [f"  {line}" for line in proc.stderr.splitlines()][:20]
        except subprocess.TimeoutExpired:
            lines.append("  (hangs again)")
        gdb = shutil.which("gdb")
        if gdb and r.outcome.startswith("signal"):
            env = heap_env(self.program, again, fail_nth=r.n)
            env["LD_PRELOAD"] = self.ns.heap_shim
            cmd = [gdb, "-batch", "-ex", "run", "-ex", "bt 30", "--args", *self.command, "--json", *map(str, self.argv_args())]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
                lines += [f"  gdb: {line}" for line in proc.stdout.splitlines() if line.startswith("#")][:30]
            except subprocess.TimeoutExpired:
                lines.append("  gdb timed out")
        again.unlink(missing_ok=True)
        lines.append(f"  reproduce: TLSLAB_SHIM_PROGRAM={self.program} TLSLAB_HEAP_FAIL_NTH={r.n} TLSLAB_HEAP_FAIL_BACKTRACE=1 "
                     f"TLSLAB_HEAP_LIVE=stacks LD_PRELOAD={self.ns.heap_shim} {self.command_line()}"
                     "   (with servers/tls_server.py on that port)")
        return "\n".join(lines)


def load_record(path: Path) -> list[Row]:
    if not path.exists():
        return []
    with path.open() as f:
        lines = [line for line in f if not line.startswith("#")]
    return [Row(r["transport"], int(r["first"]), int(r["last"]), r["outcome"], r["leak"], int(r["runs"]))
            for r in csv.DictReader(lines, delimiter="\t")]


def ranges(transport: str, results: list[Result]) -> list[Row]:
    """Consecutive N with the same outcome and leak, one row each."""
    rows: list[Row] = []
    for r in sorted(results, key=lambda r: r.n):
        leak = r.leak if r.leak and not r.leak.startswith("unreproduced") else "-"
        if rows and (rows[-1].outcome, rows[-1].leak) == (r.outcome, leak) and rows[-1].last == r.n - 1:
            rows[-1].last, rows[-1].runs = r.n, rows[-1].runs + 1
        else:
            rows.append(Row(transport, r.n, r.n, r.outcome, leak, 1))
    return rows


def write_record(path: Path, rows: list[Row], seconds: float, program: str) -> None:
    with path.open("w") as f:
        f.write(f"# Allocation-failure sweep, observed (alloc_sweep.py --full --record): allocation N of one {program}\n")
        f.write("# run (handshake + one request) fails; first..last is a range of N with the same outcome.\n")
        f.write(f"# Whole sweep: {sum(r.runs for r in rows)} runs in {seconds:.0f} s. N drifts by a few dozen\n")
        f.write("# between runs after the first network read (how the kernel splits what arrives), so ranges\n")
        f.write("# after the handshake starts are approximate; outcome classes are a note, leaks and lost lines are judged.\n")
        f.write("# Rows whose outcome is a hang or `no outcome line` are failures reported to the client's owner,\n")
        f.write("# kept here only so that the sample runs those N again; they fail the gate until fixed.\n")
        f.write(f"# leak: - (none), or ID:WHERE of the blocks left at exit (ID hashes their stacks up to {program}'s\n")
        f.write("# frame; WHERE names the first named frames). Every ID here was read and found to be OpenSSL's\n")
        f.write("# own state (see shims/README.md); an ID not here fails the gate.\n")
        f.write("transport\tfirst\tlast\toutcome\tleak\truns\n")
        for r in rows:
            f.write(f"{r.transport}\t{r.first}\t{r.last}\t{r.outcome}\t{r.leak}\t{r.runs}\n")


def rare_ranges(record: list[Row], transport: str) -> list[tuple[Row, set[int]]]:
    """The rows of TRANSPORT whose outcome class is rare (seen in at most RARE runs of the full sweep:
    where the client's own code fails, SSL_new, BIO_new, a lost line, where a break shows first),
    each with its N and EDGE on each side."""
    rows = [r for r in record if r.transport == transport]
    runs = Counter()
    for r in rows:
        runs[(r.outcome, r.leak)] += r.runs
    return [(r, set(range(r.first - EDGE, r.last + EDGE + 1))) for r in rows if runs[(r.outcome, r.leak)] <= RARE]


def sample(record: list[Row], transport: str, top: int, budget: int, rng: random.Random) -> list[int]:
    """The first 8 N, every N of the rare outcome classes (rare_ranges), then random N up to BUDGET."""
    chosen = set(range(1, min(top, 8) + 1)).union(*(near for _, near in rare_ranges(record, transport)))
    chosen = {n for n in chosen if 1 <= n <= top}
    rest = [n for n in range(1, top + 1) if n not in chosen]
    chosen.update(rng.sample(rest, min(max(0, budget - len(chosen)), len(rest))))
    return sorted(chosen)


def server_for(feature: Optional[str]):
    """The server of a sweep: the one FEATURE asks for (WITH), else tls_server.py's normal."""
    return WITH[feature][0] if feature else lambda c: tls_server(c, "leaf-ecdsa", "normal", "--workers", "2")


def own_path(feature: str) -> Path:
    return RECORD.with_name(f"alloc_sweep-{feature}-own.tsv")


def load_own(path: Path) -> dict[str, set[int]]:
    """transport: the N of the feature's own allocations (--record-own wrote their ranges)."""
    own: dict[str, set[int]] = {t: set() for t in TRANSPORTS}
    with path.open() as f:
        for number, line in enumerate(f, 1):
            if line.startswith("#") or line.startswith("transport\t"):
                continue
            cells = line.rstrip("\n").split("\t")
            if len(cells) != 3 or cells[0] not in own or not all(c.isdigit() for c in cells[1:]) \
                    or int(cells[1]) > int(cells[2]):
                bad_input("alloc_sweep", f"{path}:{number}: want transport<TAB>first<TAB>last (first <= last), "
                                         f"got {line.strip()!r}")
            own[cells[0]].update(range(int(cells[1]), int(cells[2]) + 1))
    return own


def own_allocations(plain: list[str], feature: list[str]) -> list[int]:
    """The N of FEATURE's trace (one call-site hash an attempt, N in order) whose site is made a
    different number of times in PLAIN's: the allocations the feature adds, or whose count it changes."""
    without, with_ = Counter(plain), Counter(feature)
    return [n for n, site in enumerate(feature, 1) if with_[site] != without[site]]


def spans(ns_: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for n in sorted(ns_):
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def sample_with(record: list[Row], plain: list[Row], own: set[int], transport: str, top: int, budget: int,
                rng: random.Random) -> list[int]:
    """A feature's sweep: every N of its rare classes inside its own allocations OWN, and of the rare
    classes the plain record never saw (EDGE around each), then random N of OWN up to BUDGET, and
    SHARED random N of the rest (the plain sweep's allocations, made with the feature's state live)."""
    plain_classes = {(r.outcome, r.leak) for r in plain if r.transport == transport}
    chosen = set(range(1, min(top, 8) + 1))
    for r, near in rare_ranges(record, transport):
        if near & own or (r.outcome, r.leak) not in plain_classes:
            chosen.update(near)
    chosen = {n for n in chosen if 1 <= n <= top}
    mine = sorted(n for n in own if n <= top and n not in chosen)
    chosen.update(rng.sample(mine, min(max(0, budget - len(chosen)), len(mine))))
    rest = [n for n in range(1, top + 1) if n not in chosen and n not in own]
    chosen.update(rng.sample(rest, min(SHARED, len(rest))))
    return sorted(chosen)


def traced(ns, profile: Profile, transport: str, feature: Optional[str]) -> list[str]:
    """One failure-free run with (or without) FEATURE, traced: the call-site hash of every attempt."""
    path = Path(ns.work) / f"sweep-trace-{feature or 'plain'}-{transport}.txt"
    with server_for(feature)(ns.certs) as server:
        sweep = Sweep(ns, profile, transport, server.port, set(), feature)
        env = heap_env(profile.program, path.with_suffix(".json"))
        env["TLSLAB_HEAP_TRACE"] = str(path)
        run = run_client(sweep.command, sweep.argv_args(), env=env, preload=ns.heap_shim, timeout=RUN_TIMEOUT)
    if run.rc != 0 or not path.is_file():
        bad_input("alloc_sweep", f"the traced run ({feature or 'plain'}, {transport}) did not succeed: exit {run.rc}")
    sites = [line.split()[1] for line in path.read_text().splitlines()]
    path.unlink()
    path.with_suffix(".json").unlink(missing_ok=True)
    return sites


def record_own(ns, profile: Profile) -> int:
    """--record-own: leaks/alloc_sweep-FEATURE-own.tsv from a traced run with the feature and one without."""
    path = own_path(ns.with_feature)
    lines = []
    for transport in ns.transport or TRANSPORTS:
        plain, feature = traced(ns, profile, transport, None), traced(ns, profile, transport, ns.with_feature)
        own = own_allocations(plain, feature)
        print(f"  {transport}: {len(own)} of {len(feature)} allocations are --with {ns.with_feature}'s own "
              f"(the plain run makes {len(plain)})", flush=True)
        lines += [f"{transport}\t{a}\t{b}" for a, b in spans(own)]
    path.write_text(
        f"# The allocations --with {ns.with_feature} adds to a tlsnb run (alloc_sweep.py --with {ns.with_feature} "
        "--record-own): N of a\n# failure-free run with the feature whose call site (a hash of its stack, "
        "TLSLAB_HEAP_TRACE) the run\n# without it makes a different number of times. Its sweep's rare classes "
        "and random share are\n# drawn from these; of the rest it runs a few. Re-record when the client's "
        "allocations move.\ntransport\tfirst\tlast\n" + "".join(line + "\n" for line in lines))
    print(f"recorded {len(lines)} ranges in {path}", flush=True)
    return 0


def sweep_transport(ns, profile: Profile, gate: Gate, transport: str, record: list[Row],
                    rng: random.Random) -> list[Result]:
    with server_for(ns.with_feature)(ns.certs) as server:
        known = {row.leak.split(":")[0] for row in record if row.leak != "-"}
        # A client under test answers for the blocks its own code left; what its libraries leave
        # when an allocation fails comes in too many combinations to record by id (GnuTLS: the
        # library constructors' half-made state), so it is counted and printed, never judged.
        sweep = Sweep(ns, profile, transport, server.port, None if ns.record or not profile.reference else known,
                      ns.with_feature)
        base = sweep.start()
        if not verdict(gate, f"Baseline/{transport}", base.outcome == "ok/0" and base.report,
                       f"the run without a failure: {base.outcome}; stderr {base.stderr[-300:]!r}"):
            return []
        top = base.report["attempts"]
        if ns.only:
            todo = sorted(ns.only)
        elif ns.full:
            todo = list(range(1, top + 1))
        elif not sweep.reference:  # a client under test: BUDGET values of N at random, no more
            todo = sorted(rng.sample(range(1, top + 1), min(ns.budget, top)))
        elif ns.with_feature:
            todo = sample_with(record, load_record(RECORD), ns.own[transport], transport, top, ns.budget, rng)
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
        judge(gate, sweep, transport, results, record, ns.known)
        print(f"  {transport}: {len(results)} values of N swept in {seconds:.1f} s "
              f"(baseline {top} allocations; {'all' if ns.full else 'sampled'})", flush=True)
        return results


def judge(gate: Gate, sweep: Sweep, transport: str, results: list[Result], record: list[Row],
          known: list[TomlRow]) -> None:
    lost = [r for r in results if r.problem == "lost" or r.outcome == "hang"]
    excused = Counter()
    for r in list(lost):
        if k := explained(r, known):
            excused[f"{k.name} ({k.get('kind')})"] += 1
            lost.remove(r)
    if excused:
        print(f"  {transport}: runs lost to the library, recorded in alloc_sweep_known.toml: "
              + ", ".join(f"{name} x{c}" for name, c in excused.most_common()), flush=True)
    lost_text = "\n".join(sweep.explain(r) for r in lost[:6])
    verdict(gate, f"EveryRunEndsInOneOutcomeLine/{transport}", not lost,
            f"{len(lost)} of {len(results)} runs crashed, hung or lost their outcome line:\n" + lost_text)
    leaks = [r for r in results if r.problem and r.problem != "lost" and r.outcome != "hang"]
    leaks_text = "\n".join(sweep.explain(r) for r in leaks[:4])
    verdict(gate, f"NothingLeftBehind/{transport}", not leaks,
            f"{len(leaks)} of {len(results)} runs left a descriptor or a block of {sweep.program}'s:\n" + leaks_text)
    for why in sweep.repeats:
        gate.repeat(f"alloc_sweep/{transport}", why)
    last = max(results, key=lambda r: r.n)
    verdict(gate, f"SweepReachedTheEnd/{transport}", not last.reached,
            f"N={last.n} was still reached: the sweep did not get past the run's allocations")
    # Outcome classes are printed, not judged: after the first read the class a given N lands in
    # depends on how the kernel split what arrived, and a class seen once in a full sweep may not
    # come back in the next.
    known = {r.outcome for r in record if r.transport == transport}
    seen = Counter(r.outcome for r in results if not r.problem or r.problem.startswith("leak "))
    new = {o: c for o, c in seen.items() if o not in known and not sweep.recording()}
    if new:
        print(f"  NOTE {transport}: outcome classes the record has not seen: {new}", flush=True)
    print(f"  {transport} outcomes: " + ", ".join(f"{o} x{c}" for o, c in seen.most_common()), flush=True)
    library = Counter(r.leak for r in results if r.leak and not r.problem and not r.leak.startswith("unrep"))
    drifted = [r for r in results if r.leak.startswith("unreproduced")]
    if drifted:
        print(f"  {transport}: {len(drifted)} runs left blocks that three reruns with stacks did not leave again "
              f"(N drifted): " + ", ".join(f"N={r.n} {r.leak[13:]}" for r in drifted[:6]), flush=True)
    if library:
        print(f"  {transport}: {sum(library.values())} runs left blocks of OpenSSL's own (recorded): "
              + "; ".join(f"{k} x{c}" for k, c in library.most_common(8)), flush=True)


def main() -> int:
    def extra(p):
        p.add_argument("--heap-shim", required=True, help="libtlslab_heap.so")
        p.add_argument("--full", action="store_true", help="every N (a few minutes a transport)")
        p.add_argument("--record", action="store_true", help="with --full: rewrite alloc_sweep.tsv")
        p.add_argument("--budget", type=int, default=1500, help="runs a transport in the sampled sweep")
        p.add_argument("--jobs", type=int, default=2, help="runs at once")
        p.add_argument("--seed", type=int,
                       help="seed of the sample (default: derived from the tree, printed; give one to explore)")
        p.add_argument("--transport", choices=TRANSPORTS, action="append", help="default: both")
        p.add_argument("--dump", help="write every run (N, outcome, leak) to this TSV file")
        p.add_argument("--client", help="a client under test whose heap the shim sees: a room of clients/ or a "
                                        "profile.toml (default: tlsnb)")
        p.add_argument("--build-dir", type=Path, help="the build tree a profile's {build} means")
        p.add_argument("--with", dest="with_feature", choices=sorted(WITH),
                       help="tlsnb with this feature in use, against a server that asks for it (its own record)")
        p.add_argument("--record-own", action="store_true",
                       help="with --with: rewrite alloc_sweep-FEATURE-own.tsv (the feature's own allocations) and stop")
    ns = gate_args(__doc__.splitlines()[0], extra)
    if ns.list:  # its cases are values of N (--only N ...), drawn or swept, not names: nothing to list
        return 0
    try:
        ns.only = [int(n) for n in ns.only]
    except ValueError:
        print("alloc_sweep: --only takes values of N", file=sys.stderr)
        return 2
    if ns.record and not ns.full:
        print("alloc_sweep: --record needs --full", file=sys.stderr)
        return 2
    try:
        profile = gate_client(ns.client, ns.tlsnb, ns.build_dir)
    except ClientError as e:
        bad_input("alloc_sweep", e)
    if not profile.shim_sees_io:
        bad_input("alloc_sweep", f"{profile.name}'s heap is not seen by the LD_PRELOAD shim (profile: shim_sees_io = false)")
    if ns.with_feature and not profile.reference:
        bad_input("alloc_sweep", "--with sweeps tlsnb's own features: not with --client")
    record_path = (RECORD.with_name(f"alloc_sweep-{ns.with_feature}.tsv") if ns.with_feature else RECORD) \
        if profile.reference else profile.room / "alloc_sweep.tsv"
    try:
        ns.known = [] if profile.reference else load_known(profile.room / "alloc_sweep_known.toml")
    except RowError as e:
        bad_input("alloc_sweep", e)
    # a client without --transport keeps the contract's `--transport bio` (accepted) and nothing else
    transports = ns.transport or (TRANSPORTS if profile.reference or profile.has("--transport") else ("bio",))
    if ns.record_own:
        if not ns.with_feature:
            bad_input("alloc_sweep", "--record-own needs --with FEATURE")
        return record_own(ns, profile)
    ns.own = {}
    if ns.with_feature and not ns.full and not ns.only:
        if not own_path(ns.with_feature).is_file():
            bad_input("alloc_sweep", f"{own_path(ns.with_feature)}: missing (make it with --with {ns.with_feature} --record-own)")
        ns.own = load_own(own_path(ns.with_feature))
    seed = choose_seed(ns.seed)
    rng = random.Random(seed)
    record = load_record(record_path)
    if profile.reference and not record and not ns.record:
        bad_input("alloc_sweep", f"{record_path}: no record (make one with --full --record)")
    gate = Gate(("alloc_sweep" + (f" --with {ns.with_feature}" if ns.with_feature else "")) if profile.reference
                else f"alloc_sweep {profile.name}")
    started = time.monotonic()
    rows: list[Row] = []
    for transport in transports:
        results = sweep_transport(ns, profile, gate, transport, record, rng)
        if ns.dump:
            with open(ns.dump, "a") as f:
                for r in sorted(results, key=lambda r: r.n):
                    f.write(f"{transport}\t{r.n}\t{r.outcome}\t{r.problem}\t{r.leak}\n")
        # failures are recorded too (so that the sample always runs them again), never as expected
        rows += ranges(transport, [r for r in results if not r.problem or r.problem == "lost" or r.outcome == "hang"])
    seconds = time.monotonic() - started
    repeat = ["--tlsnb", ns.tlsnb, "--heap-shim", ns.heap_shim, "--certs", ns.certs, "--seed", seed]
    repeat += [] if profile.reference else ["--client", ns.client, "--build-dir", ns.build_dir]
    repeat += (["--full"] if ns.full else []) + (["--with", ns.with_feature] if ns.with_feature else [])
    print(f"sweep took {seconds:.1f} s; repeat: {rerun_line(__file__, *repeat)}", flush=True)
    if ns.record:  # lost runs are never recorded: they stay failures until the client is fixed
        write_record(record_path, rows, seconds, profile.program)
        print(f"recorded {len(rows)} ranges in {record_path}; read every new leak id before committing it", flush=True)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())

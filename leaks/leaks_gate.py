#!/usr/bin/python3
"""Leak gate: descriptors, heap and valgrind over success and failure paths (label leaks).

Rows in leaks.toml. A longrun row runs tlsnb twice under the heap shim, SHORT then LONG
connections through 64 slots, the long run under `ulimit -n 200` (a leaked descriptor per
connection stops it near connection 136): it must complete, leave no descriptor open, and end
with the same outstanding heap as the short run (a leak of one byte a connection would put them
LONG - SHORT bytes apart). A valgrind row runs tlsnb under valgrind --leak-check=full.

    /usr/bin/python3 -m leaks.leaks_gate --tlsnb build/client/tlsnb \\
        --heap-shim build/shims/libtlslab_heap.so [--soak] [--only Heap/Success/bio ...]
"""
from __future__ import annotations

import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness import (Gate, Run, RowError, bad_input, bulk_server, gate_args, rerun_line, run_client, tls_server,
                     verdict)
from harness import crossings
from harness.expect import ExpectError, named_outcomes, outcome_key
from harness.record import Record, recorded_kinds
from harness.rows import NONE, case_key, expand_globs, load_case_file
from harness.clients import ClientError, Profile, gate_client
from harness.shims import HEAP_TAG, USABLE_SLACK, client_args, heap_env, read_report

HERE = Path(__file__).resolve().parent
NOFILE = 200
SLOTS = 64
STD_STREAMS = 3  # what is open at exit when nothing leaked
VALGRIND = ["-q", "--leak-check=full", "--show-leak-kinds=definite,indirect,possible",
            "--errors-for-leak-kinds=definite,indirect,possible", "--error-exitcode=99"]


@dataclass
class Row:
    """A [[case]] of leaks.toml, each key's text (`-` for none; counts and soak as "SHORT LONG")."""
    kind: str = case_key()                                   # longrun or valgrind
    case: str = case_key(toml="name")
    transports: str = case_key(join=" ", array_only=True)  # ["bio", "fd"]
    cert: str = case_key()
    server: str = case_key()
    client: str = case_key(join=" ")
    expect: str = case_key()
    counts: str = case_key(default=NONE, join=" ", array_only=True, item=int)   # [SHORT, LONG]: a longrun's
    soak: str = case_key(default=NONE, join=" ", array_only=True, item=int)     # --soak's pair
    inject: str = case_key(default=NONE)
    why: str = case_key()
    where: str = ""


def load_rows(path: Path) -> list[Row]:
    """leaks.toml's cases (counts, soak and inject may be left out: none), named by kind and name."""
    return load_case_file(path, Row, names=("kind", "name"))


def outcome_keys(expect: str) -> list[str]:
    """EXPECT's outcomes as the run counts them: one, or alternatives A|B (a race the row does not
    settle, each a path whose leaks the row counts alike), each by name (harness/outcomes.py)."""
    return [outcome_key(e) for e in expect.split("|")]


def all_as_expected(run: Run, expect: str, count: int) -> str:
    """'' when every one of COUNT attempts ended as EXPECT (as one of its alternatives), else what happened."""
    got = run.outcomes()
    if run.signal:
        return f"killed by signal {run.signal}"
    if set(got) - set(outcome_keys(expect)) or sum(got.values()) != count:   # checked when the rows load
        return (f"outcomes {named_outcomes(got)}, expected {{{expect!r}: {count}}} (exit {run.rc}, "
                f"stderr {run.stderr.strip()[-200:]!r})")
    return ""


def injected(ns, row: Row, env: dict) -> tuple[dict, str]:
    """The heap shim's environment and preload list, with the row's injected failure (if any)."""
    if row.inject == "-":
        return env, ns.heap_shim
    name, *settings = row.inject.split()
    # fail_bio_new every=N: every Nth BIO_new the program itself makes answers NULL (shims/fail_bio_new.c)
    env.update({f"TLSLAB_FAIL_BIO_NEW_{k.upper()}": v for k, v in (s.split("=", 1) for s in settings)})
    return env, f"{ns.heap_shim} {ns.fail_bio_new}"


def case_name(row: Row, transport: Optional[str]) -> str:
    return f"{row.case}/{transport}" if transport else row.case


def row_transports(row: Row, transports: Optional[tuple[str, ...]]) -> list[Optional[str]]:
    """The transports a row is run on for a client with TRANSPORTS (None: a client without --transport, once)."""
    return [None] if transports is None else [t for t in row.transports.split() if t in transports]


def case_ids(rows: list[Row], transports: Optional[tuple[str, ...]]) -> dict[str, Row]:
    """Every case id the rows give (Descriptors/ and Heap/ a longrun cell, Valgrind/ a valgrind cell), with its row."""
    return {f"{k}/{case_name(r, t)}": r for r in rows for t in row_transports(r, transports)
            for k in (("Descriptors", "Heap") if r.kind == "longrun" else ("Valgrind",))}


def transport_args(transport: Optional[str]) -> list[str]:
    return ["--transport", transport] if transport else []


def serve(ns, row: Row):
    """The row's server: `bulk ARGS` is servers/bulk_server.py (tls_server.py's normal at two thirds of its CPU or less, for
    the rows of thousands of connections), any other first word a behaviour of servers/tls_server.py."""
    behaviour, *server_args = row.server.split()
    if behaviour == "bulk":
        return bulk_server(ns.certs, row.cert, *server_args)
    return tls_server(ns.certs, row.cert, behaviour, *server_args)


def longrun(ns, gate: Gate, row: Row, transport: Optional[str]) -> None:
    short, long = (int(n) for n in (row.soak if ns.soak else (ns.counts or row.counts).replace(",", " ")).split())
    name = case_name(row, transport)
    reports = {}
    runs = {}
    with serve(ns, row) as server:
        for count in (short, long):
            path = Path(ns.work) / f"leaks-heap-{row.case}-{transport}-{count}.json"
            args = client_args(ns.certs, server.port, *transport_args(transport), "--count", count,
                               "--parallel", SLOTS, *client_words(row, ns))
            env, preload = injected(ns, row, {**heap_env(ns.profile.program, path), **ns.profile.heap_environment()})
            runs[count] = run_client(ns.profile.command, args, env=env, preload=preload, timeout=900,
                                     max_fds=NOFILE if count == long else None)
            reports[count] = read_report(path, HEAP_TAG)
    run, rep = runs[long], reports[long]
    expect = ns.profile.outcome_for("leaks", row.case, row.expect)
    problem = all_as_expected(run, expect, long)
    preloaded = ns.profile.shim_sees_io  # a static program (Go) loads no LD_PRELOAD shim: no report at exit
    if not problem and preloaded:
        problem = descriptors_left(ns.profile, reports[short], rep)
    verdict(gate, f"Descriptors/{name}", not problem, f"{problem}  ({row.why})")
    print(f"  {long} connections under ulimit -n {NOFILE}: wall {run.wall_s:.1f} s, "
          f"peak fds {run.summary.get('peak_fds')}, client cpu {run.summary.get('cpu_ms', 0):.0f} ms, "
          f"descriptors open at exit {rep and rep['fds_open']}", flush=True)
    if not preloaded:
        print(f"  {ns.profile.name} loads no LD_PRELOAD shim: descriptors are judged by the {long} attempts "
              f"completing under ulimit -n {NOFILE} alone", flush=True)
    if not preloaded and "heap_live_objects" in run.summary and not skipped(ns.profile, f"Heap/{name}", row):
        runtime_heap(gate, name, runs[short], run, short, long, problem)
        return
    why = skipped(ns.profile, f"Heap/{name}", row) or \
        (None if preloaded else f"{ns.profile.name} loads no LD_PRELOAD shim (profile: shim_sees_io = false) "
                                "and reports no heap_live_objects: nothing counts its heap")
    if why:
        gate.skip(f"Heap/{name}", why)
        return
    a, b = reports[short], reports[long]
    if a is None or b is None:
        verdict(gate, f"Heap/{name}", False, "shim inactive: no heap report")
        return
    problem = all_as_expected(runs[short], expect, short)
    same = same_heap(ns.profile, a, b, long - short)
    figures = (f"outstanding at exit after {short}: {a['outstanding_bytes']} bytes in {a['outstanding_blocks']} blocks; "
               f"after {long}: {b['outstanding_bytes']} bytes in {b['outstanding_blocks']} blocks "
               f"({(b['outstanding_bytes'] - a['outstanding_bytes']) / (long - short):+.2f} bytes a connection)")
    if diff := recorded(ns, f"Heap/{name}", "grows"):
        verdict(gate, f"Heap/{name}", not same and not problem,
                problem or f"{figures}: recorded as growing ({diff.where}, {diff.kind}), and it held: the leak is "
                           "gone? observe it again and remove the entry")
    else:
        verdict(gate, f"Heap/{name}", same and not problem, problem or figures)
    print(f"  outstanding at exit: {a['outstanding_bytes']} bytes / {a['outstanding_blocks']} blocks after {short}, "
          f"{b['outstanding_bytes']} / {b['outstanding_blocks']} after {long}", flush=True)


def runtime_bound(more: int) -> int:
    """What a runtime's own caches may move between a short run and one with MORE connections more:
    fewer than one object (or block) for every ten more connections, where one kept per connection
    is MORE apart (runtime_heap's counters and same_heap's C heap of a runtime)."""
    return more // 10


def same_heap(profile: Profile, a: dict, b: dict, more: int) -> bool:
    """Whether the heap outstanding after the short run (A) and the long one (B, MORE connections more)
    is the same. The same blocks, and bytes within malloc_usable_size's slack for each (harness/shims.py
    USABLE_SLACK): a C program frees the same things whatever the count. A runtime whose own allocator
    the profile's heap_env sets to the C heap (CPython's PYTHONMALLOC=malloc) shows every object it
    still holds at exit, and what its free lists and uncollected cycles hold there moves by a few dozen
    blocks between runs of any count on the deadline path (uvloop SilentPeer: 21,273 to 21,303 blocks in
    six pairs, both ways; Success: exactly 21,262): for it the blocks may differ by fewer than
    runtime_bound(MORE) and the bytes by fewer than 8 a connection, where a block kept per
    connection puts them MORE blocks and at least 24 bytes a connection apart."""
    blocks = abs(b["outstanding_blocks"] - a["outstanding_blocks"])
    grew = abs(b["outstanding_bytes"] - a["outstanding_bytes"])
    if profile.heap_env:
        return blocks < runtime_bound(more) and grew < 8 * more
    return blocks == 0 and grew < USABLE_SLACK * max(1, a["outstanding_blocks"])


def runtime_heap(gate: Gate, name: str, a: Run, b: Run, short: int, long: int, problem: str) -> None:
    """A client whose runtime counts its own heap (Go: runtime.MemStats after two collections, in
    the summary's heap_live_objects, heap_live_bytes, goroutines) where the heap shim cannot see
    it. Live objects move by a few dozen between runs of any count (the runtime's own caches), so
    the long run may hold fewer than one more object for every ten more connections, and no more
    goroutines: one object or goroutine kept per connection puts them (LONG - SHORT) apart."""
    sa, sb = a.summary, b.summary
    grew = sb.get("heap_live_objects", 0) - sa.get("heap_live_objects", 0)
    bound = runtime_bound(long - short)
    goroutines = sb.get("goroutines", 0) - sa.get("goroutines", 0)
    figures = (f"live after {short}: {sa.get('heap_live_objects')} objects, {sa.get('heap_live_bytes')} bytes, "
               f"{sa.get('goroutines')} goroutines; after {long}: {sb.get('heap_live_objects')}, "
               f"{sb.get('heap_live_bytes')}, {sb.get('goroutines')}")
    verdict(gate, f"Heap/{name}", not problem and grew < bound and goroutines <= 0,
            problem or f"{figures}: {grew:+d} objects (bound < {bound}), {goroutines:+d} goroutines")
    print(f"  runtime heap (MemStats): {figures}", flush=True)


def descriptors_left(profile: Profile, short: Optional[dict], long: Optional[dict]) -> str:
    """'' when nothing was left open, else what. The reference must close all but the three
    standard streams; a client under test may keep its runtime's own (uvloop keeps its loop's
    epoll and wake-up descriptors to the end), but the same number after either count: a
    descriptor left per connection grows with the count."""
    if long is None or short is None:
        return "the heap shim wrote no report (descriptors at exit unknown)"
    if profile.reference and long["fds_open"] != STD_STREAMS:
        return f"descriptors open at exit: {long['fds_open']}, expected {STD_STREAMS}"
    if long["fds_open"] != short["fds_open"]:
        return f"descriptors open at exit: {short['fds_open']} after the short run, {long['fds_open']} after the long one"
    return ""


# What a client under test's record (clients/NAME/leaks.toml) may hold for a case: its heap grows
# with the count (a Heap/ case). The case then passes while that still holds, and fails once it
# does not (a fixed leak must leave its record). A valgrind row a client cannot be judged by is
# disabled in its profile, with the reason.
LEAK_GOTS = {"grows": "Heap/"}


def check_leak_got(got) -> None:
    if got not in LEAK_GOTS:
        raise ValueError(f"got must be grows (a Heap/ case whose outstanding heap grows with the count), not {got!r}")


def recorded(ns, case: str, got: str):
    """The record's entry for CASE when it says GOT, else None; one that says another got fails loudly."""
    diff = ns.record.get(case) if ns.record else None
    if diff is None:
        return None
    if not diff.explained:
        bad_input("leaks_gate.py", f"{diff.where}: {case}: the difference is recorded without a reason: write kind and why")
    if diff.got != got or not case.startswith(LEAK_GOTS[got]):
        bad_input("leaks_gate.py", f"{diff.where}: {case}: got {diff.got!r} is not what this case records "
                                   f"(grows: a Heap/ case only)")
    return diff


def skipped(profile: Profile, case: str, row: Row) -> Optional[str]:
    """Why a client under test is not asked CASE (its profile says so), or None."""
    if profile.reference:
        return None
    if why := profile.disabled_reason("leaks", case, row.case):
        return f"disabled in {profile.path}: {why}"
    if flag := profile.lacks(row.client):
        return f"{profile.name} cannot: {flag} is not among its profile's flags (it exits 89)"
    if row.inject != "-":
        return "the injected failure is of the reference's own BIO_new calls (shims/fail_bio_new.c counts the main program's)"
    return None


def client_words(row: Row, ns) -> list[str]:
    """The row's client arguments, {certs} the certificate folder (a CRL, a client certificate)."""
    return row.client.replace("{certs}", ns.certs).split()


def under_valgrind(ns, row: Row, transport: Optional[str], valgrind: str) -> tuple[str, str]:
    """Runs one valgrind row; returns (problem, figures)."""
    with serve(ns, row) as server:
        args = client_args(ns.certs, server.port, *transport_args(transport), *client_words(row, ns))
        run = run_client(ns.profile.command, args, wrapper=[valgrind, *VALGRIND], timeout=600)
    count = int(row.client.split("--count")[1].split()[0])
    problem = all_as_expected(run, ns.profile.outcome_for("leaks", row.case, row.expect), count)
    noise = [line for line in run.stderr.splitlines() if line.startswith("==")]
    if run.rc == 99 or noise:
        problem = f"valgrind reported (exit {run.rc}):\n" + "\n".join(noise[:40])
    return problem, f"wall {run.wall_s:.1f} s under valgrind"


def main() -> int:
    def extra(p):
        p.add_argument("--heap-shim", required=True, help="libtlslab_heap.so")
        p.add_argument("--rows", default=str(HERE / "leaks.toml"), help="the rows (default: leaks.toml)")
        p.add_argument("--soak", action="store_true", help="the soak counts (10,000 and 40,000)")
        p.add_argument("--jobs", type=int, default=2, help="valgrind runs at once")
        p.add_argument("--fail-bio-new", help="libfail_bio_new.so (rows that inject fail_bio_new need it)")
        p.add_argument("--client", help="a client under test: a room of clients/ or a profile.toml (default: tlsnb)")
        p.add_argument("--build-dir", type=Path, help="the build tree a profile's {build} means")
        p.add_argument("--counts", help="SHORT,LONG for every longrun row (a crossing's smaller pair), e.g. 200,2000")
        p.add_argument("--no-valgrind", action="store_true", help="the longrun rows only")
        p.add_argument("--sample", nargs="+", metavar="CASE", default=[],
                       help="the default gate's sample of a crossing: these rows, their longrun cases only, unless "
                            "the crossing's inputs changed since its last green whole run (harness/crossings.py), "
                            "then every row, valgrind's too")
    ns = gate_args(__doc__.splitlines()[0], extra)
    room = crossings.room_of(ns.client) if Path(ns.rows).resolve() == (HERE / "leaks.toml").resolve() else None
    sampled = False
    if ns.sample and not ns.only:  # the digest of its inputs only where a sample may stand for the crossing
        whole = crossings.whole_reason("leaks", room) if room else None
        print(f"leaks {room or ns.client or 'tlsnb'}: " + (f"whole: {whole}" if whole else
              f"sampled ({' '.join(ns.sample)}): its inputs are as at its last green whole run"), flush=True)
        if not whole:
            crossings.skip_unless_drawn("leaks", room)
            ns.only, ns.no_valgrind, sampled = list(ns.sample), True, True
    try:
        ns.profile = gate_client(ns.client, ns.tlsnb, ns.build_dir)
    except ClientError as e:
        bad_input("leaks_gate.py", e)
    transports = None if not ns.profile.has("--transport") else ("bio", "fd")
    try:
        rows = load_rows(Path(ns.rows))
    except RowError as e:
        bad_input("leaks_gate.py", e)
    bad = [r for r in rows if r.inject != "-" and (r.inject.split()[0] != "fail_bio_new" or r.kind != "longrun")]
    if bad:
        bad_input("leaks_gate.py", f"{bad[0].where}: inject must be - or `fail_bio_new every=N` on a longrun row")
    for r in rows:   # an outcome by name, the number only where it has none (harness/expect.py's outcome_key)
        try:
            outcome_keys(ns.profile.outcome_for("leaks", r.case, r.expect))
        except ExpectError as e:
            bad_input("leaks_gate.py", f"{r.where}: expect: {e}")
    ids = list(case_ids(rows, transports))
    if ns.list:
        print("\n".join(ids))
        return 0
    if ns.profile.reference and any(r.inject != "-" for r in rows) and not ns.fail_bio_new:
        bad_input("leaks_gate.py", f"{ns.rows} injects fail_bio_new: give --fail-bio-new")
    ns.only, empty = expand_globs(ns.only, [*ids, *(r.case for r in rows)])
    if empty:
        bad_input("leaks_gate.py", f"--only {empty[0]}: the pattern matches no case in {ns.rows}")
    unknown = [o for o in ns.only if o not in ids and o not in {r.case for r in rows}]
    if unknown:
        bad_input("leaks_gate.py", f"--only {unknown[0]}: no such case in {ns.rows}")
    try:
        ns.record = None if ns.profile.reference else Record(
            ns.profile.room / "leaks.toml", f"leaks {ns.profile.name}", check_got=check_leak_got, cases=set(ids),
            note="got: grows (a Heap/ case: the outstanding heap grows with the count).")
    except RowError as e:
        bad_input("leaks_gate.py", e)
    if sampled and ns.record is not None:   # one case of every kind the record holds, beside the sample
        added = recorded_kinds(ns.record, None, lambda case: case in ns.only or case.split("/")[1] in ns.only)
        ns.only += added
        ns.no_valgrind = not any(c.startswith("Valgrind/") for c in added)   # the one valgrind case drawn, if any
    gate = Gate("leaks" if ns.profile.reference else f"leaks {ns.profile.name}")

    def wanted(kind_names: list[str]) -> bool:
        return not ns.only or any(n in ns.only for n in kind_names)

    for row in (r for r in rows if r.kind == "longrun"):
        for t in row_transports(row, transports):
            name = case_name(row, t)
            if not wanted([f"Descriptors/{name}", f"Heap/{name}", row.case]):
                continue
            if why := skipped(ns.profile, f"Descriptors/{name}", row):
                gate.skip(f"Descriptors/{name}", why)
                gate.skip(f"Heap/{name}", why)
                continue
            longrun(ns, gate, row, t)
    valgrind = shutil.which("valgrind")
    todo = []
    for r in (r for r in rows if r.kind == "valgrind" and not ns.no_valgrind):
        for t in row_transports(r, transports):
            case = f"Valgrind/{case_name(r, t)}"
            if not wanted([case, r.case]):
                continue
            if why := skipped(ns.profile, case, r):
                gate.skip(case, why)
            else:
                todo.append((r, t))
    if todo and not valgrind:
        for r, t in todo:
            gate.skip(f"Valgrind/{case_name(r, t)}", "valgrind is not installed")
    elif todo:
        with ThreadPoolExecutor(max_workers=ns.jobs) as pool:
            results = list(pool.map(lambda rt: under_valgrind(ns, rt[0], rt[1], valgrind), todo))
        for (r, t), (problem, figs) in zip(todo, results):
            verdict(gate, f"Valgrind/{case_name(r, t)}", not problem, f"{problem}  ({r.why})")
            print(f"  {figs}", flush=True)
    if gate.failed:
        failed = [case for case, v, _ in gate.cases if v == "FAIL"]
        extra = (["--fail-bio-new", ns.fail_bio_new] if ns.fail_bio_new else []) + (["--soak"] if ns.soak else []) + \
            (["--client", ns.client] if ns.client else []) + (["--counts", ns.counts] if ns.counts else [])
        print(f"  reproduce: {rerun_line(__file__, '--tlsnb', ns.tlsnb, '--heap-shim', ns.heap_shim, '--certs', ns.certs, *extra, '--only', *failed)}",
              flush=True)
    rc = gate.finish()
    if rc == 0 and room and not ns.only and not ns.no_valgrind and not ns.soak:
        crossings.record_green("leaks", room, f"{gate.passed} passed, {gate.skipped} skipped, every row"
                                              + (f", counts {ns.counts}" if ns.counts else ""))
    return rc


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""One recorded difference reproduced alone: the one peer its gate would start, the client run once.

For a case of a gate (matrix, pkits, client, faults, hostile, dns) this starts exactly the peer(s) the
gate starts for that case (tls_server.py, `openssl s_server`, the hostile peer, the proxy, the DNS stub,
with the I/O shim where the row sets one), runs the client under test ONCE with the row's arguments,
then the reference (tlsnb) once against the same kind of peer, and prints both argvs, the client's JSON
lines, what tlsnb showed and what the client's record says it shows: `shows the recorded outcome: yes`
when the run holds the record (the gate's own judge: harness.expect for the case gates, the outcome
for the matrix and PKITS). The leak rows compare two runs (a short and a long one): their reproducer is
the leak gate's one row. Exit 0 when the client showed what is recorded, 1 when not, 2 on bad input.

    /usr/bin/python3 -m harness.repro --client wolfssl --gate matrix --case keys-md5-leaf [--version 1.3]
    /usr/bin/python3 -m harness.repro --check                # every bug's reproducer (harness/findings.py)
    /usr/bin/python3 -m harness.repro --check --sample 2     # two of them, drawn by the tree's seed

--check writes BUILD/work/repro/checked.json (finding -> whether it showed the recorded outcome, the
date and the tree), which the findings page (harness/findings.py) shows beside each bug.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import random
import shlex
import subprocess
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .clients import ClientError, Profile, find_client, gate_client
from .crossings import tree
from .gate import Gate, tree_seed
from .layout import CASE_FILES, ROOT
from .outcomes import OutcomeNames, UnknownOutcome
from .record import SKIP
from .rows import RowError

GATES = (*CASE_FILES, "matrix", "pkits", "leaks", "alloc_sweep")


@dataclass
class Shown:
    """What one reproducer run showed."""
    peers: list[str] = field(default_factory=list)     # each peer's argv, as one shell line
    client: str = ""                                   # the client's argv
    lines: list[str] = field(default_factory=list)     # its JSON lines (attempts, summary)
    observed: str = ""                                 # what it showed, in the gate's language
    recorded: str = ""                                 # what its record holds it to
    shows: bool = False                                # the run held the record
    reference: str = ""                                # tlsnb's argv
    reference_observed: str = ""
    row: str = ""                                      # what the row (or NIST) expects of tlsnb
    note: str = ""


@dataclass
class Build:
    dir: Path

    @property
    def tlsnb(self) -> str:
        return str(self.dir / "client" / "tlsnb")

    @property
    def certs(self) -> Path:
        return self.dir / "certs" / "out"

    @property
    def work(self) -> Path:
        return self.dir / "work" / "repro"


def line(argv) -> str:
    return shlex.join(map(str, argv))


def json_lines(run) -> list[str]:
    return [json.dumps(a, sort_keys=True) for a in run.attempts] + ([json.dumps(run.summary, sort_keys=True)]
                                                                     if run.summary else [])


# ---- the case gates: client, faults, hostile, dns ------------------------------------------------

def case_repro(build: Build, profile: Profile, gate: str, case: str) -> Shown:
    from .cases import CaseLab, case_record, cell_rows, client_cells, load_cases, skip_reason, unsupported
    from .expect import named_outcomes
    if gate == "dns":   # the dns rows need their own network namespace, as dns_gate.py makes
        from .netns import enter_namespace
        enter_namespace("repro.py")
    rows = load_cases(CASE_FILES[gate])
    cells = cell_rows(rows, profile)
    if case not in cells:
        raise RowError(f"{case!r} is no case {gate} asks {profile.name}")
    row = cells[case]
    transport = next(t for c, t in row.crossed(("bio", "fd") if profile.has("--transport") else None) if c == case)
    record = case_record(profile, gate, client_cells(rows, profile))
    exp_text, diff = record.expected(case, row.expect)
    reference = gate_client(None, build.tlsnb, build.dir)
    lab = CaseLab(client=profile.command, certs=str(build.certs), work=build.work, seed=tree_seed()[0],
                  data=CASE_FILES[gate].parent / "data", io_shim=str(build.dir / "shims" / "libtlslab_io.so"),
                  proxy=str(build.dir / "proxy" / "tlslab-proxy"), label=gate, program=profile.program,
                  profile=profile, record=record, transports=("bio", "fd") if profile.has("--transport") else None)
    build.work.mkdir(parents=True, exist_ok=True)
    shown = Shown(recorded=f"{exp_text}  ({diff.where if diff else 'the row'})", row=row.expect)
    if why := skip_reason(lab, row, case):
        shown.note = f"not asked: {why}"
        return shown
    cell = Watched(lab, row, transport)
    problems, _, run, _ = cell.run(row.expect if exp_text == SKIP else exp_text, exp_text)
    shown.peers = cell.peer_lines
    if run is not None:
        shown.client, shown.lines = line(run.argv), json_lines(run)
        shown.observed = f"{named_outcomes(run.outcomes())} exit {run.rc}" + (f" signal {run.signal}" if run.signal else "")
    shown.shows = (run is not None and unsupported(run)) if exp_text == SKIP else not problems
    if problems:
        shown.note = "; ".join(problems)[:600]
    mine = dataclasses.replace(lab, client=reference.command, program=reference.program, profile=reference, record=None)
    ref_cell = Watched(mine, row, transport or (row.crossed()[0][1]))
    ref_problems, _, ref_run, _ = ref_cell.run(row.expect)
    if ref_run is not None:
        shown.reference = line(ref_run.argv)
        shown.reference_observed = f"{named_outcomes(ref_run.outcomes())} exit {ref_run.rc}; " + \
            ("holds the row" if not ref_problems else "does not hold the row: " + "; ".join(ref_problems)[:300])
    return shown


def watched_cell():
    from .cases import Cell

    class WatchedCell(Cell):
        """A case's cell that keeps the argv of every peer it started (the reproducer prints them)."""
        peer_lines: list[str] = []

        def start(self, stack: ExitStack):
            peers = super().start(stack)
            self.peer_lines = [f"{name}: {line(p.argv)}" for name, p in peers.items()]
            return peers
    return WatchedCell


def Watched(lab, row, transport):
    return watched_cell()(lab, row, transport)


# ---- the matrix ----------------------------------------------------------------------------------

def matrix_repro(build: Build, profile: Profile, case: str, version: Optional[str], server: Optional[str]) -> Shown:
    from matrix.crossing import client_record
    from matrix.peers import start_lab_server, start_openssl_server
    from matrix.rows import TRANSPORTS, RowFile
    from matrix.run_matrix import Cell, client_args, observe, revocation_args
    names = OutcomeNames(Path("/usr/include/openssl"))
    rows = RowFile(ROOT / "matrix" / "rows.toml", build.certs, names)
    by_name = {r.name: r for r in rows.rows}
    if case not in by_name:
        raise RowError(f"{case!r} is no row of matrix/rows.toml")
    row = by_name[case]
    record = client_record(profile, by_name, names, TRANSPORTS if profile.has("--transport") else ("bio",))
    transport = "bio" if profile.has("--transport") else None
    cells = [(v, s) for v in row.versions for s in row.servers
             if (version is None or v == version) and (server is None or s == server)]
    if not cells:
        raise RowError(f"{case}: no cell {version or ''} {server or ''} (versions {row.versions}, servers {row.servers})")

    def want(v: str, s: str) -> tuple[str, str]:
        ref = row.expected("bio", v, s)
        key = f"{transport or 'bio'} {v} {s}"
        return ref, record.expected(case, {key: ref})[0][key]
    # the cell the record says differs (the first, lab server first), else the first asked
    v, s = next(((v, s) for v, s in cells if want(v, s)[0] != want(v, s)[1]), cells[0])
    ref_want, client_want = want(v, s)
    build.work.mkdir(parents=True, exist_ok=True)
    peer = start_lab_server(row, build.certs, build.work) if s == "lab" else start_openssl_server(row, build.certs, build.work)
    reference = gate_client(None, build.tlsnb, build.dir)
    try:
        obs = observe(Cell(row, s, transport, v), profile, rows, peer.port, names, 30)
        ref = observe(Cell(row, s, "bio", v), reference, rows, peer.port, names, 30)
        args = client_args(row, build.certs, peer.port, transport, v) + revocation_args(row, rows)
        ref_args = client_args(row, build.certs, peer.port, "bio", v) + revocation_args(row, rows)
    finally:
        peer.stop()
    _, diff = record.expected(case, {})
    return Shown(peers=[f"server ({s}): {line(peer.argv)}"], client=line([*profile.command, "--json", *args]),
                 lines=[obs.text] if obs.text else [], observed=obs.problem or f"{obs.outcome} (TLS {v}, {s})",
                 recorded=f"{client_want}  ({diff.where if diff else 'as the reference'})",
                 shows=not obs.problem and obs.outcome in (client_want or "").split("|"),
                 reference=line([*reference.command, "--json", *ref_args]),
                 reference_observed=ref.problem or f"{ref.outcome}; " + ("holds the row" if ref.outcome == ref_want else
                                                                        f"the row says {ref_want}"),
                 row=f"{ref_want} (bio {v} {s})")


# ---- PKITS ---------------------------------------------------------------------------------------

def pkits_repro(build: Build, profile: Profile, case: str) -> Shown:
    from pkits import pkits_gate as pg
    args = pg.parse_args(["--tlsnb", build.tlsnb, "--client", profile.name, "--build-dir", str(build.dir),
                          "--work", str(build.work / "pkits"), case])
    suite = pg.Suite(args.suite)
    tests = pg.load(pg.HERE / "tests.tsv", {c.stem for c in suite.certs.values()})
    if case not in tests:
        raise RowError(f"{case!r} is no test of pkits/tests.tsv")
    t = tests[case]
    names = OutcomeNames(args.openssl_include)
    reference = gate_client(None, build.tlsnb, build.dir)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    anchor = Path(args.work) / "anchor.pem"
    anchor.write_text(pg.pem(suite.anchor.der, "CERTIFICATE"))
    gate = pg.Pkits(args, suite, tests, [t], [reference, profile], names)
    unit = gate.prepared[t.ee] = gate.prepare(t.ee)
    observed = {o.client.name: o for o in gate.run_test(t)}
    diff = gate.records[profile.name].get(case)
    got = str(diff.got) if diff else ("accept (ok)" if t.valid else "refuse")
    mine, ref = observed[profile.name], observed[reference.name]

    def said(o) -> str:
        return o.problem or o.not_asked or f"{o.outcome}" + (f" [{o.text}]" if o.text else "")
    peer = f"server: {line(pg.server_argv(unit.served, unit.files))}" if unit.files else unit.unservable
    return Shown(peers=[peer], client=line([*profile.command, "--json", *pg.client_args(t, profile, anchor, unit.files, "PORT")])
                 if unit.files else "", observed=said(mine), recorded=f"{got}  ({diff.where if diff else 'NIST'})",
                 shows=not mine.problem and mine.outcome in got.split("|"),
                 reference=line([*reference.command, "--json", *pg.client_args(t, reference, anchor, unit.files, "PORT")])
                 if unit.files else "", reference_observed=said(ref), row=f"NIST: {t.verdict}")


# ---- leaks: a comparison of two runs, so its row of the leak gate ----------------------------------

def leaks_repro(build: Build, profile: Profile, case: str) -> Shown:
    argv = [sys.executable, "-m", "leaks.leaks_gate", "--tlsnb", build.tlsnb, "--heap-shim",
            str(build.dir / "shims" / "libtlslab_heap.so"), "--certs", str(build.certs), "--client", profile.name,
            "--build-dir", str(build.dir), "--counts", "200,2000", "--no-valgrind", "--only", case]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    tail = [ln for ln in done.stdout.splitlines() if ln.startswith(("PASS", "FAIL", "SKIP"))]
    return Shown(client=line(argv), lines=tail, observed="; ".join(tail) or done.stderr.strip()[-300:],
                 recorded="the record's got (leaks.toml), judged by the gate", shows=done.returncode == 0 and bool(tail),
                 note="a leak row compares a short and a long run: the reproducer is the leak gate's one row")




def sweep_repro(build: Build, profile: Profile, case: str) -> Shown:
    """An allocation-sweep rule (alloc_sweep_known.toml): a run per N, N drawn in a fixed order, until one
    run is explained by the rule; that N's one run is the reproducer."""
    from types import SimpleNamespace
    from leaks.alloc_sweep import Sweep, explained, load_known, server_for
    known = [k for k in load_known(profile.room / "alloc_sweep_known.toml") if k.get("name") == case]
    if not known:
        raise RowError(f"{case!r} is no entry of {profile.room / 'alloc_sweep_known.toml'}")
    ns = SimpleNamespace(certs=str(build.certs), work=str(build.work / "sweep"), heap_shim=str(
        build.dir / "shims" / "libtlslab_heap.so"), with_feature=None)
    Path(ns.work).mkdir(parents=True, exist_ok=True)
    transport = "bio" if profile.has("--transport") else None
    with server_for(None)(ns.certs) as server:
        sweep = Sweep(ns, profile, transport or "bio", server.port, None)
        base = sweep.start()
        top = base.report["attempts"] if base.report else 0
        order = random.Random(case).sample(range(1, top + 1), top)   # every N, in an order fixed by the case
        hit = next((r for r in map(sweep.run, order) if explained(r, known)), None)
        command = sweep.command_line()
        peer = line(server.argv)
    one = [sys.executable, "-m", "leaks.alloc_sweep", "--tlsnb", build.tlsnb, "--heap-shim", ns.heap_shim, "--certs",
           ns.certs, "--client", profile.name, "--transport", transport or "bio", "--only", str(hit.n if hit else 0)]
    return Shown(peers=[f"server: {peer}"], client=f"TLSLAB_HEAP_FAIL_NTH={hit.n if hit else '?'} {command}",
                 observed=f"N={hit.n}: {hit.outcome}" if hit else f"no run of {len(order)} values of N (of {top})",
                 recorded=f"{known[0].get('outcome')}... with {known[0].get('stack')!r} ({known[0].where()})",
                 shows=hit is not None, row="tlsnb: one outcome line for every N",
                 note=f"searched {order.index(hit.n) + 1 if hit else len(order)} values of N of {top}; that N "
                      f"alone through the sweep: {line(one)}")


def reproduce(build: Build, client: str, gate: str, case: str, version: Optional[str] = None,
              server: Optional[str] = None) -> Shown:
    profile = find_client(client, build.dir)
    profile.check_installed()
    if gate in CASE_FILES:
        return case_repro(build, profile, gate, case)
    if gate == "matrix":
        return matrix_repro(build, profile, case, version, server)
    if gate == "pkits":
        return pkits_repro(build, profile, case)
    if gate == "leaks":
        return leaks_repro(build, profile, case)
    if gate == "alloc_sweep":
        return sweep_repro(build, profile, case)
    raise RowError(f"--gate {gate}: one of {', '.join(GATES)}")


def show(client: str, gate: str, case: str, s: Shown) -> None:
    print(f"reproduce {client} {gate} {case}")
    for p in s.peers:
        print(f"  peer     {p}")
    print(f"  client   {s.client}")
    for ln in s.lines:
        print(f"           {ln}")
    print(f"  showed   {s.observed}")
    print(f"  recorded {s.recorded}")
    if s.reference:
        print(f"  tlsnb    {s.reference}")
        print(f"  tlsnb showed {s.reference_observed} (the row: {s.row})")
    if s.note:
        print(f"  note     {s.note}")
    print(f"  shows the recorded outcome: {'yes' if s.shows else 'NO'}", flush=True)


# ---- --check: every bug's reproducer --------------------------------------------------------------

def check(build: Build, sample: int, only: list[str]) -> int:
    from .findings import collect
    bugs = [f for f in collect(OutcomeNames(Path("/usr/include/openssl"))) if f.kind == "bug" and f.repro_args]
    if only:
        bugs = [f for f in bugs if any(o in f.id for o in only)]
    if sample:
        seed = tree_seed()[0]
        cheap = [f for f in bugs if f.repro_args["gate"] not in ("leaks", "alloc_sweep")]
        bugs = sorted(random.Random(seed).sample(cheap, min(sample, len(cheap))), key=lambda f: f.id)
        print(f"repro: {len(bugs)} of the bugs' reproducers, drawn by the tree's seed {seed}", flush=True)
    gate = Gate("repro")
    path = build.dir / "work" / "repro" / "checked.json"
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        kept = {}
    for f in bugs:
        a = f.repro_args
        try:
            s = reproduce(build, a["client"], a["gate"], a["case"])
        except (RowError, ClientError, UnknownOutcome, OSError) as e:
            s = Shown(observed=f"could not run: {e}")
        show(a["client"], a["gate"], a["case"], s)
        gate.check(f.id, s.shows, f"{s.observed} (recorded {s.recorded})")
        kept[f.id] = {"shows": s.shows, "observed": s.observed[:300], "date": datetime.date.today().isoformat(),
                      "tree": tree(), "command": f.repro}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    print(f"repro: {path}: {sum(v['shows'] for v in kept.values())} of {len(kept)} reproducers kept there showed "
          f"the recorded outcome", flush=True)
    return gate.finish()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", type=Path, default=ROOT / "build", help="the build tree (default: build)")
    p.add_argument("--client", help="a room of clients/ or a profile.toml")
    p.add_argument("--gate", choices=GATES)
    p.add_argument("--case", help="the case id as the gate names it (a matrix row, a PKITS test, Plain/bio)")
    p.add_argument("--version", help="matrix: the cell's --tls-max (default: the cell the record says differs)")
    p.add_argument("--server", choices=("lab", "s_server"), help="matrix: the cell's server")
    p.add_argument("--check", action="store_true", help="run every bug's reproducer (harness/findings.py)")
    p.add_argument("--sample", type=int, default=0, help="with --check: only N, drawn by the tree's seed")
    p.add_argument("--only", nargs="*", default=[], help="with --check: the findings whose id holds one of these")
    ns = p.parse_args()
    build = Build(ns.build_dir.resolve())
    if ns.check:
        return check(build, ns.sample, ns.only)
    if not (ns.client and ns.gate and ns.case):
        print("repro.py: give --client, --gate and --case (or --check)", file=sys.stderr)
        return 2
    try:
        s = reproduce(build, ns.client, ns.gate, ns.case, ns.version, ns.server)
    except (RowError, ClientError, UnknownOutcome) as e:
        print(f"repro.py: {e}", file=sys.stderr)
        return 2
    show(ns.client, ns.gate, ns.case, s)
    return 0 if s.shows else 1


if __name__ == "__main__":
    sys.exit(main())

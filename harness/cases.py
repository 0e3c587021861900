"""Case rows: peers, a client run, an optional I/O shim, and an expectation, one [[case]] table each.

The client end-to-end gate (client/tests/client.toml), the names gate (dns/dns.toml), the fault
gate (faults/faults.toml) and the hostile gate (hostile/hostile.toml) are all files of these rows
and run through here (harness/rows.py's load_case_file reads them).

Keys (a key marked "default" may be left out; `-` is how the row's text spells none):
    name        the case's name; with transports it becomes NAME/bio, NAME/fd
    transports  ["bio", "fd"], ["bio"] or ["fd"] (each adds --transport T to the client);
                default: none (the case runs once, without the flag)
    peers       an array of peers, started in order (default: none):
                  tls CERT [BEHAVIOUR [ARGS...]]   servers/tls_server.py: server, then server2, ...
                  hostile CERT SCENARIO [ARGS...]  hostile/peer.py (a TLS 1.3 peer breaking the protocol): server
                  dns NAME=SPEC... [--bind=IP]      servers/dns_stub.py: dns
                  mux BACKEND...                   servers/mux.py: mux
                  proxy PORT FAULT...              proxy/'s tlslab-proxy in front of 127.0.0.1:PORT,
                                                   each FAULT a --fault (direction:name:k=v,...): proxy
    client      the client's whole argument list (it is given --json); leading NAME=VALUE words
                are its environment, as in a shell (SSL_CERT_FILE={certs}/ca2.pem --count 3 {target}),
                and a leading ulimit-n=N runs it with N descriptors at most (ulimit -n N), a leading
                stdin-closed with descriptor 0 closed
    shim        TLSLAB_IO_* settings of the I/O shim (max_send=700 eagain_every=3); default: none
    expect      harness/expect.py's grammar
    control     the case that succeeds where this one must fail (required for failure rows);
                default: none
    why         what the case proves, in words
client and expect are a string, or an array of strings joined with spaces (a long value over lines).

Placeholders, in peers, client, shim and expect: {port} {port2} (the tls peers), {dns}, {mux}, {proxy},
{ca} (= --cafile CERTS/ca.pem --name hooks.test), {target} (= 127.0.0.1:{port}), {certs},
{data} (the rows file's folder data/), {work}, {seed}, {free} (a port nothing listens on).
"""
from __future__ import annotations

import itertools
import os
import re
import signal as signals
import socket
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .clients import UNSUPPORTED_EXIT, ClientError, Profile, gate_client
from .expect import OUTCOME as OUTCOME_TERM
from .expect import ExpectError, Expectation, judge, named_outcomes, outcome_term, parse
from .gate import Gate, rerun_line, verdict
from .peers import HarnessError, Server, dns_stub, hostile_peer, mux, s_server, tls_server
from .record import SKIP, Difference, Record, recorded_kinds
from .rows import NONE, RowError, case_key, expand_globs, load_case_file
from .runs import Run, run_client
from .shims import IO_TAG, io_env, read_report
from . import crossings, loop

PLACEHOLDER = re.compile(r"\{([a-z0-9]+)\}")
ENV_WORD = re.compile(r"[A-Z][A-Z0-9_]*=")
ULIMIT_WORD = re.compile(r"ulimit-n=(\d+)$")
STDIN_WORD = "stdin-closed"   # the client starts with descriptor 0 closed
KNOWN = {"port", "port2", "port3", "dns", "mux", "proxy", "ca", "target", "certs", "data", "work", "seed", "free"}
PEER_KINDS = ("tls", "hostile", "s_server", "dns", "mux", "proxy")


@dataclass
class CaseRow:
    """A case as the runner reads it: each key's text, `-` for none (lists joined: transports with
    spaces, peers with `; `)."""
    case: str = case_key(toml="name")
    transports: str = case_key(default=NONE, join=" ", array_only=True)
    peers: str = case_key(default=NONE, join="; ", array_only=True)
    client: str = case_key(join=" ")
    shim: str = case_key(default=NONE)
    expect: str = case_key(join=" ")
    control: str = case_key(default=NONE)
    why: str = case_key()
    where: str = ""

    def crossed(self, transports: Optional[tuple[str, ...]] = ("bio", "fd")) -> list[tuple[str, Optional[str]]]:
        """(case id, transport) for each cell of the row. TRANSPORTS: those the client has (None:
        a client without --transport, which runs each row once, as the case itself)."""
        if self.transports.strip() == "-" or transports is None:
            return [(self.case, None)]
        return [(f"{self.case}/{t}", t) for t in self.transports.split() if t in transports]


def load_cases(path: Path) -> list[CaseRow]:
    """The [[case]] tables of PATH (the keys of this module's docstring: transports, peers, shim and
    control may be left out, for none), each expectation parsed, each placeholder known, each
    failure row's control present: RowError (file:line) otherwise."""
    rows = load_case_file(path, CaseRow)
    names = {r.case for r in rows}
    for r in rows:
        for column in ("peers", "client", "shim", "expect"):
            unknown = set(PLACEHOLDER.findall(getattr(r, column))) - KNOWN
            if unknown:
                raise RowError(f"{r.where}: {r.case}: unknown placeholder {{{sorted(unknown)[0]}}} in {column}")
        bad = [t for t in r.transports.split() if t not in ("bio", "fd", "-")]
        if bad:
            raise RowError(f"{r.where}: {r.case}: transports must be bio, fd or -, got {bad[0]!r}")
        for spec in peer_specs(r.peers):
            if spec[0] not in PEER_KINDS:
                raise RowError(f"{r.where}: {r.case}: unknown peer kind {spec[0]!r} (one of {', '.join(PEER_KINDS)})")
        try:
            exp = parse(PLACEHOLDER.sub("0", r.expect))
        except ExpectError as e:
            raise RowError(f"{r.where}: {r.case}: {e}") from e
        check_timing(r, exp)
        if r.control != "-" and r.control not in names:
            raise RowError(f"{r.where}: {r.case}: control {r.control!r} is not a case of {path.name}")
        if exp.failure() and r.control == "-":
            raise RowError(f"{r.where}: {r.case}: a failure row needs a control (the case that succeeds)")
    return rows


# The flags that give a client a time it must keep: an upper bound on its wall time is one beside them.
DEADLINE_FLAGS = ("--deadline-ms", "--dns-timeout-ms")


def check_timing(r: CaseRow, exp: Expectation) -> None:
    """A wall<S bound sits beside a deadline R gives the client (a bound on its own is machine speed)."""
    if any(op == "<" for op, _ in exp.wall) and not any(f in r.client.split() for f in DEADLINE_FLAGS):
        raise RowError(f"{r.where}: {r.case}: wall<S without a deadline given to the client "
                       f"({' or '.join(DEADLINE_FLAGS)}): bound the wall only beside the time it must keep")


def needs_shim(r: CaseRow) -> bool:
    """A row that sets the I/O shim, or counts the loop (which the shim does for most clients)."""
    return r.shim.strip() != "-" or parse(PLACEHOLDER.sub("0", r.expect)).counts_loop()


def peer_specs(text: str) -> list[list[str]]:
    return [] if text.strip() == "-" else [part.split() for part in text.split(";") if part.strip()]


def free_port() -> int:
    """A port nothing listens on (it was bound and closed), for a 'no server there' row."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class CaseLab:
    """What a case gate runs with."""
    client: list[str]           # the client's argv prefix (tlsnb, or a client under test)
    certs: str
    work: Path
    seed: int
    data: Path                  # the rows file's data/ folder
    io_shim: Optional[str] = None
    proxy: Optional[str] = None   # tlslab-proxy, for rows with a proxy peer
    # a run past this is killed; a mutant's run (mutants/gate_rows.py) sets TLSLAB_RUN_LIMIT lower, so a
    # mutant that spins costs its row's limit, not two minutes of every case it meets
    timeout: float = field(default_factory=lambda: float(os.environ.get("TLSLAB_RUN_LIMIT", "120")))
    label: str = ""             # the gate's label (a profile's disabled cases are "label:case")
    program: str = "tlsnb"      # the process name the shims act in (TLSLAB_SHIM_PROGRAM)
    profile: Optional[Profile] = None         # the client asked (the reference's profile included)
    record: Optional[Record] = None           # its recorded differences in this gate
    transports: Optional[tuple[str, ...]] = ("bio", "fd")


def check_expect(got: object) -> None:
    """A case record's got: `skip` (exit 89) or a line of the expect grammar (ValueError otherwise)."""
    if not isinstance(got, str):
        raise ValueError("got must be a line of the expect grammar, or skip")
    if got != SKIP:
        if not got.strip():
            raise ValueError("an empty got holds for any run that is not killed: record what was seen (--update)")
        parse(PLACEHOLDER.sub("0", got))


def term_key(term: str) -> str:
    """What a term of the expect grammar constrains, so a record's term replaces the row's of the same
    kind: every outcome term together; signal, exit, attempts, stderr.lines; each bound (wall<, a
    source's key and operator); a stderr word is its own."""
    if OUTCOME_TERM.match(term):
        return "outcomes"
    if term.startswith("stderr~"):
        return term
    m = re.match(r"^(signal|exit|attempts|stderr\.lines)=", term) or re.match(r"^(wall)(<|>)", term) \
        or re.match(r"^([a-z][a-z0-9_]*\.[A-Za-z0-9_]+(?:\[[^\]]+\])?)(=|>|<|~)", term)
    return m[0] if m else term


def merge_terms(base: Optional[str], got: Optional[str], without: list[str]) -> str:
    """A row's line (BASE) with a record's terms: each of GOT's terms replaces the row's of its kind
    (term_key), in place, the rest follow; WITHOUT's terms (the row's own, verbatim) go. `skip` is whole."""
    if got == SKIP:
        return SKIP
    terms = [] if base in (None, SKIP) else base.split()
    missing = [t for t in without if t not in terms]
    if missing:
        raise ValueError(f"without {missing[0]!r}: the row has no such term (its line: {base})")
    mine = (got or "").split()
    keys = {term_key(t) for t in mine}
    out: list[str] = []
    placed: set[str] = set()
    for t in terms:
        key = term_key(t)
        if t in without:
            continue
        if key in keys:
            if key not in placed:
                out += [g for g in mine if term_key(g) == key]
                placed.add(key)
            continue
        out.append(t)
    return " ".join(out + [g for g in mine if term_key(g) not in placed])


def same_terms(a: Optional[str], b: Optional[str]) -> bool:
    return sorted((a or "").split()) == sorted((b or "").split())


def minimal_terms(base: Optional[str], full: str) -> tuple[Optional[str], list[str]]:
    """What a record holds for a case observed to show FULL where the row (and its globs) give BASE:
    the terms FULL has that BASE lacks (every outcome term, if the outcomes differ), and the terms of
    BASE it no longer holds that no recorded term replaces."""
    if full == SKIP or base in (None, SKIP):
        return full, []
    have, want = base.split(), full.split()
    outcomes = [t for t in want if term_key(t) == "outcomes"]
    got = outcomes if sorted(outcomes) != sorted(t for t in have if term_key(t) == "outcomes") else []
    got += [t for t in want if term_key(t) != "outcomes" and t not in have]
    keys = {term_key(t) for t in got}
    without = [t for t in have if t not in want and term_key(t) not in keys]
    return (" ".join(got) or None), without


def cell_rows(rows: list[CaseRow], profile: Profile) -> dict[str, CaseRow]:
    """Each case id PROFILE's client is asked of ROWS (crossed on both transports where it has
    --transport, else each row once) and its row."""
    transports = ("bio", "fd") if profile.has("--transport") else None
    return {c: r for r in rows for c, _ in r.crossed(transports)}


def client_cells(rows: list[CaseRow], profile: Profile) -> dict[str, str]:
    """Each case id PROFILE's client is asked of ROWS and its row's expect: what case_record holds a
    record to."""
    return {c: r.expect for c, r in cell_rows(rows, profile).items()}


def case_record(profile: Profile, label: str, cells: Optional[dict[str, str]]) -> Record:
    """clients/NAME/LABEL.toml (harness/record.py): where a client under test's cases differ from the
    reference's rows; got is what differs from the row, in the expect grammar, or `skip` for exit 89.
    CELLS: each case id the client is asked and its row's expect (None: the record is not held to them)."""
    return Record(profile.room / f"{label}.toml", f"{label} {profile.name}", check_got=check_expect,
                  cases=None if cells is None else list(cells), merge=merge_terms, without=True,
                  reference=None if cells is None else cells.get, same=same_terms, minimal=minimal_terms,
                  note="got: the terms that differ from the row's expect (harness/README.md), or skip (exit 89);\n"
                       "without: the row's terms the client does not hold.")


class Cell:
    """One run of one case: its peers up, its placeholders bound, its client run, judged."""

    def __init__(self, lab: CaseLab, row: CaseRow, transport: Optional[str]):
        self.lab, self.row, self.transport = lab, row, transport
        self.values = {"certs": lab.certs, "work": str(lab.work), "seed": str(lab.seed), "data": str(lab.data),
                       "ca": f"--cafile {lab.certs}/ca.pem --name hooks.test"}
        if "{free}" in row.client:
            self.values["free"] = str(free_port())

    def expand(self, text: str) -> str:
        def one(m: re.Match) -> str:
            if m[1] == "target":
                return f"127.0.0.1:{self.values['port']}"
            if m[1] not in self.values:
                raise HarnessError(f"{self.row.where}: {{{m[1]}}} has no value here (no such peer)")
            return self.values[m[1]]
        return PLACEHOLDER.sub(one, text)

    def start(self, stack: ExitStack) -> dict[str, Server]:
        peers: dict[str, Server] = {}
        for kind, *words in peer_specs(self.row.peers):
            words = self.expand(" ".join(words)).split()
            if kind in ("tls", "hostile"):
                name = "server" if "server" not in peers else f"server{len(peers) + 1}"
                cert, behaviour, *args = words + ["normal"] if len(words) == 1 else words
                start = tls_server if kind == "tls" else hostile_peer
                peers[name] = stack.enter_context(start(self.lab.certs, cert, behaviour, *args))
                self.values["port" if name == "server" else f"port{name[6:]}"] = str(peers[name].port)
            elif kind == "s_server":  # openssl s_server CERT [its flags]: what tls_server.py cannot (a staple)
                cert, *args = words
                peers["server"] = stack.enter_context(s_server(self.lab.certs, cert, *args))
                self.values["port"] = str(peers["server"].port)
            elif kind == "proxy":
                upstream, *faults = words
                argv = [self.lab.proxy, "--upstream", f"127.0.0.1:{upstream}", "--seed", str(self.lab.seed),
                        *[a for f in faults for a in (("--fault", f) if not f.startswith("--") else (f,))]]
                peers[kind] = stack.enter_context(Server(argv))
                self.values[kind] = str(peers[kind].port)
            else:
                peers[kind] = stack.enter_context(dns_stub(*words) if kind == "dns" else mux(*words))
                self.values[kind] = str(peers[kind].port)
        return peers

    def run_once(self, exp_text: str, held_to: str = "") -> tuple[list[str], Run, dict]:
        settings = {} if self.row.shim.strip() == "-" else \
            dict(item.split("=", 1) for item in self.row.shim.replace("{seed}", str(self.lab.seed)).split())
        counts_loop = parse(PLACEHOLDER.sub("0", exp_text)).counts_loop()
        # the loop's counts (loop.KEY terms): the I/O shim, counting only where the row sets no fault,
        # or strace for a client whose I/O the shim cannot see (harness/loop.py)
        traced = counts_loop and not settings and not self.sees_io()
        shimmed = bool(settings) or (counts_loop and not traced)
        # a case id may hold '/' (dns/dns.toml's code/...): one file in the work folder, not a folder of its own
        stem = f"{self.row.case.replace('/', '_')}-{self.transport or 'any'}"
        report = self.lab.work / f"io-shim-{stem}.json"
        trace = self.lab.work / f"strace-{stem}.txt"
        env = io_env(self.lab.program, report, **settings) if shimmed else None
        with ExitStack() as stack:
            peers = self.start(stack)
            words = self.expand(self.row.client).split()
            given = list(itertools.takewhile(lambda w: ENV_WORD.match(w) or ULIMIT_WORD.match(w) or w == STDIN_WORD,
                                             words))
            limits = [int(m[1]) for m in map(ULIMIT_WORD.match, given) if m]
            if names := [w for w in given if ENV_WORD.match(w)]:
                env = {**(env or os.environ), **dict(w.split("=", 1) for w in names)}
            args = (["--transport", self.transport] if self.transport else []) + words[len(given):]
            exp = parse(self.expand(exp_text))
            trace.unlink(missing_ok=True)
            run = run_client(self.lab.client, args, env=env, preload=self.lab.io_shim if shimmed else None,
                             timeout=time_limit(parse(self.expand(held_to)) if held_to and held_to != SKIP else exp,
                                                self.lab.timeout), max_fds=limits[-1] if limits else None,
                             stdin_closed=STDIN_WORD in given, wrapper=loop.strace_wrapper(trace) if traced else None)
        reports = {name: peer.report for name, peer in peers.items()}
        shim = read_report(report, IO_TAG) if shimmed else None
        if shim is not None:
            reports["shim"] = shim
        counted = loop.from_strace(trace) if traced else loop.from_shim(shim)
        if counted is not None and counts_loop:
            reports["loop"] = counted
        if unsupported(run):
            return [], run, reports
        problems = judge(exp, run, reports)
        if shimmed and not run.signal and not (shim and shim.get("active")):
            problems.append("shim inactive: " + ("no report written" if shim is None else "it saw no socket call"))
        if traced and not run.signal and not (counted and counted["waits"]):
            problems.append("strace saw no wait: " + ("no record written" if counted is None else "the loop was not seen"))
        return problems, run, reports

    def sees_io(self) -> bool:
        """Whether an LD_PRELOAD shim sees the client's I/O (the reference's does)."""
        return self.lab.profile is None or self.lab.profile.shim_sees_io

    def run(self, exp_text: str, held_to: str = "") -> tuple[list[str], str, Optional[Run], dict]:
        """(problems, figures, the run, its reports): one run, never repeated (a race is a row to
        make deterministic, not one to run until it holds)."""
        try:
            problems, run, reports = self.run_once(exp_text, held_to)
        except HarnessError as e:
            return [f"harness: {e}"], "", None, {}
        if problems:
            problems.append(f"stderr: {run.stderr.strip()[-300:]!r}")
        return problems, figures(run, reports.get("shim"), reports.get("loop")), run, reports


def unsupported(run: Run) -> bool:
    """The client said it cannot do what the case asks (exit 89, no attempt printed)."""
    return run.rc == UNSUPPORTED_EXIT and not run.attempts and not run.signal


def time_limit(exp: Expectation, default: float) -> float:
    """How long a run may take before it is killed: a row that bounds its wall time (wall<S) is
    killed 5 s past that bound (a spinning client fails in seconds, not minutes), else DEFAULT."""
    bounds = [seconds for op, seconds in exp.wall if op == "<"]
    return min([default, *(b + 5 for b in bounds)])


def figures(run: Run, shim: Optional[dict], counted: Optional[dict] = None) -> str:
    s = run.summary
    text = f"wall {run.wall_s:.2f} s, cpu {run.cpu_s * 1000:.0f} ms"
    if s and "cpu_ms" in s:
        text += f" (the client's own: {s.get('cpu_ms', 0):.0f} ms)"
    if shim:
        text += f", shim {shim.get('calls')} calls, {shim.get('eagain')} EAGAIN, {shim.get('bytes_cut')} bytes cut"
    if counted:
        text += ", loop " + " ".join(f"{k}={v}" for k, v in counted.items())
    return text


def skip_reason(lab: CaseLab, row: CaseRow, case_id: str) -> Optional[str]:
    """Why a client under test is not asked this case (its profile says), or None."""
    if lab.profile is None or lab.profile.reference:
        return None
    if why := lab.profile.disabled_reason(lab.label, case_id, row.case):
        return f"disabled in {lab.profile.path}: {why}"
    if row.shim.strip() != "-" and not lab.profile.shim_sees_io:
        return f"{lab.profile.name}'s I/O is not seen by an LD_PRELOAD shim (profile: shim_sees_io = false)"
    return None


class CaseRunner:
    """Runs the selected cells of ROWS, each once, in the file's order: no cell's verdict reads another's run."""

    def __init__(self, gate: Gate, lab: CaseLab, rows: list[CaseRow], rerun: list[str], update: bool):
        self.gate, self.lab, self.rows, self.rerun, self.update = gate, lab, rows, rerun, update
        self.observed: dict[str, Optional[str]] = {}

    def expectation(self, row: CaseRow, case_id: str) -> tuple[str, Optional[Difference]]:
        return self.lab.record.expected(case_id, row.expect) if self.lab.record else (row.expect, None)

    def cell(self, row: CaseRow, case_id: str, transport: Optional[str]) -> None:
        """One cell: skipped, or run once and judged; its line, then its figures or the rerun line."""
        lab, gate = self.lab, self.gate
        if reason := skip_reason(lab, row, case_id):
            gate.skip(case_id, reason)
            return
        exp_text, diff = self.expectation(row, case_id)
        if diff is not None and not diff.explained:
            gate.check(case_id, False, f"{diff.where}: the difference is recorded without a reason: write kind and why")
            return
        judged = row.expect if self.update or exp_text == SKIP else exp_text
        cell = Cell(lab, row, transport)
        # killed past the time of what the client is held to (its record's line, or skip: the default),
        # not the reference's: --update judges the row's line, but a client recorded slower must finish
        problems, figs, run, reports = cell.run(judged, exp_text)
        if self.update and run is not None:
            self.observed[case_id] = observe(row.expect, run, reports, cell.expand,
                                             exp_text if diff is not None else None)
        if run is not None and unsupported(run):
            line = (run.stderr.strip().splitlines() or ["exit 89"])[-1]
            if exp_text == SKIP or self.update:
                gate.skip(case_id, f"{lab.profile.name if lab.profile else 'the client'} cannot: {line}")
            else:
                gate.check(case_id, False, f"exit 89 ({line}), expected {exp_text}")
            return
        if exp_text == SKIP and not self.update:
            gate.check(case_id, False, f"recorded as skip (exit 89), but the client ran it: "
                                       f"{named_outcomes(run.outcomes()) if run else problems}; re-record with --update")
            return
        verdict(gate, case_id, not problems, "; ".join(problems) + f"  ({row.why})")
        if problems:
            print(f"  reproduce: {rerun_line(*self.rerun, '--seed', lab.seed, '--only', case_id)}", flush=True)
        else:
            print(f"  {figs}", flush=True)

    def all(self, only: list[str]) -> None:
        for row in self.rows:
            for case_id, transport in row.crossed(self.lab.transports):
                if only and case_id not in only and row.case not in only:
                    continue
                self.cell(row, case_id, transport)
        if self.update and self.lab.record is not None:
            self.lab.record.write([c for r in self.rows for c, _ in r.crossed(self.lab.transports)], self.observed)


def run_cases(gate: Gate, lab: CaseLab, rows: list[CaseRow], only: list[str], rerun: list[str],
              update: bool = False) -> None:
    """Every selected cell of ROWS: one PASS/FAIL/SKIP line and its figures, or the rerun line."""
    CaseRunner(gate, lab, rows, rerun, update).all(only)


def observe(reference: str, run: Run, reports: dict, expand, recorded: Optional[str] = None) -> Optional[str]:
    """What a client showed, in the expect grammar, or None when it held the reference's line:
    `skip` for exit 89, else its outcome counts and signal, and every other term of the
    reference's line that held for it (the terms that did not hold are left out). EXPAND binds
    the placeholders as the run bound them. RECORDED, the line the client's record holds it to,
    is kept as written while the run still holds it: a race recorded as alternatives (A|B, each
    observed) is not undone by one run that showed one of them, nor by one that showed the
    reference's (the matrix's kept() rule)."""
    if unsupported(run):
        return SKIP
    if recorded and recorded != SKIP and not judge(parse(expand(recorded)), run, reports):
        return recorded
    if not judge(parse(expand(reference)), run, reports):
        return None
    terms = [outcome_term(k, n) for k, n in sorted(run.outcomes().items())]
    if run.signal:
        terms.append(f"signal={signal_name(run.signal)}")
    elif run.rc not in (0, 1) or any(t.startswith("exit=") for t in reference.split()):
        terms.append(f"exit={run.rc}")   # an exit the outcomes do not say (2: a refusal before any attempt)
    for term in reference.split():
        if OUTCOME_TERM.match(term) or term.startswith(("signal=", "exit=")):
            continue
        if not judge(parse(expand(term)), run, reports):
            terms.append(term)
    return " ".join(terms)


def signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return str(number)


def list_cases(rows: list[CaseRow]) -> None:
    for row in rows:
        for case_id, _ in row.crossed():
            print(case_id)


def case_names(rows: list[CaseRow]) -> list[str]:
    """Every name --only may give: each row's case, then its crossed cells, in file order."""
    return [n for r in rows for n in (r.case, *(c for c, _ in r.crossed()))]


def selected_unknown(rows: list[CaseRow], only: list[str]) -> list[str]:
    ids = set(case_names(rows))
    return [o for o in only if o not in ids]


def gate_main(name: str, doc: str, default_rows: Path, extra=None, before=None, draw=None) -> int:
    """The whole of a case gate's script: flags, rows, seed, the cases, the tally. With --client
    the rows are asked of a client under test (its profile, its record of differences). DRAW(rows,
    seed, client), given, adds the cases a sampled crossing draws beside its --sample (printed)."""
    from .args import gate_args
    from .gate import choose_seed
    from .rows import bad_input

    def flags(p) -> None:
        p.add_argument("--rows", type=Path, default=default_rows, help=f"the rows (default {default_rows.name})")
        p.add_argument("--seed", type=int, help="seed of bodies and random cuts (default: derived from the tree, printed)")
        p.add_argument("--io-shim", help="libtlslab_io.so (rows with a shim setting need it)")
        p.add_argument("--proxy", help="tlslab-proxy (rows with a proxy peer need it)")
        p.add_argument("--client", help="a client under test: a room of clients/ or a profile.toml (default: tlsnb)")
        p.add_argument("--build-dir", type=Path, help="the build tree a profile's {build} means "
                                                      "(default: the one --tlsnb was built in)")
        p.add_argument("--update", action="store_true", help="with --client: record where it differs")
        p.add_argument("--sample", nargs="+", metavar="CASE", default=[],
                       help="the default gate's sample: only these rows, unless the crossing's inputs changed "
                            "since its last green whole run (harness/crossings.py), then every row")
        if extra:
            extra(p)
    ns = gate_args(doc, flags)
    prog = Path(sys.argv[0]).name
    room = crossings.room_of(ns.client) if ns.rows.resolve() == default_rows.resolve() else None
    sampled = False
    if ns.sample and not ns.only:   # the digest of its inputs only where a sample may stand for the crossing
        tracked = room and name in crossings.GATE_INPUTS
        whole = crossings.whole_reason(name, room) if tracked else None
        print(f"{name} {room or ns.client or 'tlsnb'}: " + (f"whole: {whole}" if whole else
              f"sampled ({' '.join(ns.sample)}): " + ("its inputs are as at its last green whole run" if tracked else
                                                        "the default gate's sample (label full runs every row)")),
              flush=True)
        if not whole:
            crossings.skip_unless_drawn(name, room)
        ns.only, sampled = ([], False) if whole else (list(ns.sample), True)
    try:
        rows = load_cases(ns.rows)
    except RowError as e:
        bad_input(prog, e)
    if ns.list:
        list_cases(rows)
        return 0
    try:
        profile = gate_client(ns.client, ns.tlsnb, ns.build_dir)
        record = None if profile.reference else \
            case_record(profile, name, client_cells(rows, profile) if ns.rows.resolve() == default_rows.resolve() else None)
    except (ClientError, RowError) as e:
        bad_input(prog, e)
    if sampled and draw is not None:
        from .gate import tree_seed
        ns.only += [c for c in draw(rows, ns.seed if ns.seed is not None else tree_seed()[0], profile.name)
                    if c not in ns.only]
    if sampled and record is not None:
        ns.only += recorded_kinds(record, ns.seed, lambda case: case in ns.only or case.rsplit("/", 1)[0] in ns.only)
    ns.only, empty = expand_globs(ns.only, case_names(rows))
    if empty:
        bad_input(prog, f"--only {empty[0]}: the pattern matches no case in {ns.rows}")
    if unknown := selected_unknown(rows, ns.only):
        bad_input(prog, f"--only {unknown[0]}: no such case in {ns.rows}")
    chosen = [r for r in rows if not ns.only or r.case in ns.only or any(c in ns.only for c, _ in r.crossed())]
    if any(needs_shim(r) for r in chosen) and not ns.io_shim:
        bad_input(prog, f"{ns.rows} has rows with a shim or the loop's counts among those chosen: give --io-shim")
    if any(s[0] == "proxy" for r in chosen for s in peer_specs(r.peers)) and not ns.proxy:
        bad_input(prog, f"{ns.rows} has rows with a proxy peer among those chosen: give --proxy")
    if ns.update and not ns.client:
        bad_input(prog, "--update records a client under test's differences: give --client")
    if before:
        before(ns)
    seed = choose_seed(ns.seed)
    lab = CaseLab(client=[ns.tlsnb], certs=ns.certs, work=Path(ns.work), seed=seed,
                  data=ns.rows.resolve().parent / "data", io_shim=ns.io_shim, proxy=ns.proxy, label=name)
    rerun = [sys.argv[0], "--tlsnb", ns.tlsnb, "--certs", ns.certs, "--rows", ns.rows]
    if ns.io_shim:
        rerun += ["--io-shim", ns.io_shim]
    if ns.proxy:
        rerun += ["--proxy", ns.proxy]
    lab.client, lab.profile, lab.record, lab.program = profile.command, profile, record, profile.program
    lab.transports = ("bio", "fd") if profile.has("--transport") else None
    if ns.client:
        rerun += ["--client", ns.client]
    gate = Gate(name if profile.reference else f"{name} {profile.name}")
    run_cases(gate, lab, rows, ns.only, rerun, update=ns.update)
    rc = gate.finish()
    if rc == 0 and room and name in crossings.GATE_INPUTS and not ns.only and not ns.update:
        crossings.record_green(name, room, f"{gate.passed} passed, {gate.skipped} skipped, every row")
    return rc
